//! `uatu run --device web` end to end: the real binary, Debian's Chromium, and
//! TodoMVC implementations (tastejs/todomvc, `../shared/apps/todomvc`) served
//! by a local static server. The TodoMVC spec holds for 300 steps on correct
//! implementations, and catches a bug planted in a copy of one.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support::folio::violated;
use crate::support::http::serve;

const SPEC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/todomvc/spec.ts");

/// Implementations that follow the TodoMVC specification (see docs/benchmarks.md:
/// jquery leaves the route when "Clear completed" is used, react ignores Escape).
const CORRECT: &[&str] = &["preact", "backbone", "knockoutjs"];

pub(crate) fn todomvc_examples() -> PathBuf {
    let dir = std::env::var_os("UATU_TODOMVC")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/apps/todomvc"))
        .join("examples");
    assert!(
        dir.is_dir(),
        "the TodoMVC implementations are not at {} (set UATU_TODOMVC to the todomvc folder)",
        dir.display()
    );
    dir
}

/// The folder that holds an implementation's `index.html`.
pub(crate) fn app_root(example: &Path) -> PathBuf {
    let dist = example.join("dist");
    if dist.join("index.html").exists() {
        dist
    } else {
        example.to_path_buf()
    }
}

/// Runs the TodoMVC spec against `root` for `steps` steps; the exit code and the summary.
fn run(root: PathBuf, steps: u64) -> (i32, Value) {
    let addr = serve(root);
    let output = tempfile::tempdir().expect("temp dir");
    let out = Command::new(env!("CARGO_BIN_EXE_uatu"))
        .args([
            "run",
            "--spec",
            SPEC,
            "--device",
            "web",
            "--json",
            "--no-screenshots",
            "--seed",
            "1",
        ])
        .args([
            "--url",
            &format!("http://{addr}/"),
            "--max-steps",
            &steps.to_string(),
        ])
        .arg("--output")
        .arg(output.path())
        .output()
        .expect("runs uatu");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let summary: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "summary is not JSON ({e}):\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap_or(-1), summary)
}

#[test]
fn the_todomvc_spec_holds_for_300_steps_on_correct_implementations() {
    let examples = todomvc_examples();
    for name in CORRECT {
        let (code, summary) = run(app_root(&examples.join(name)), 300);
        assert_eq!(violated(&summary), BTreeSet::new(), "{name}: {summary:#}");
        assert_eq!(
            (code, summary["steps"].as_u64()),
            (0, Some(300)),
            "{name}: {summary:#}"
        );
        assert_eq!(summary["counts"]["app_crashes"], 0, "{name}: {summary:#}");
    }
}

#[test]
fn a_counter_off_by_one_after_toggle_all_is_caught() {
    let original = app_root(&todomvc_examples().join("jquery"));
    let copy = tempfile::tempdir().expect("temp dir");
    for entry in std::fs::read_dir(&original).expect("jquery").flatten() {
        std::fs::copy(entry.path(), copy.path().join(entry.file_name())).expect("copy");
    }
    // The planted bug: once "Mark all as complete" was used, the counter says one more.
    let app = copy.path().join("app.js");
    let source = std::fs::read_to_string(&app).expect("app.js");
    let planted = source
        .replacen(
            "var isChecked = $(e.target).prop('checked');",
            "var isChecked = $(e.target).prop('checked'); this.toggledAll = true;",
            1,
        )
        .replacen(
            "var activeTodoCount = this.getActiveTodos().length;",
            "var activeTodoCount = this.getActiveTodos().length + (this.toggledAll ? 1 : 0);",
            1,
        );
    assert_eq!(planted.matches("toggledAll").count(), 2, "the bug is planted");
    std::fs::write(&app, planted).expect("write app.js");

    let (code, summary) = run(copy.path().to_path_buf(), 300);
    assert_eq!(code, 1, "{summary:#}");
    let caught = violated(&summary);
    assert!(caught.contains("counterCountsActiveTodos"), "{caught:?}");
}
