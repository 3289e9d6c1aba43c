//! The real `uatu` binary run on the simulated Folio app, as the end-to-end tests
//! run it: a run with a JSON summary, `uatu check` over a run, the properties a
//! summary says were violated.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// The example Folio spec.
pub const SPEC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/folio/spec.ts");

/// Runs the real binary with `args`.
pub fn uatu(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_uatu"))
        .args(args)
        .output()
        .expect("runs uatu")
}

/// What a `--json` command printed, parsed; a panic shows its output otherwise.
pub fn json_of(out: &Output) -> Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}):\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// `uatu run --spec SPEC --json` into `output` with `extra` flags (the simulator
/// unless they say otherwise); the exit code, the JSON summary and the run directory.
pub fn run_spec(spec: &str, output: &Path, extra: &[&str]) -> (i32, Value, PathBuf) {
    let output = output.display().to_string();
    let mut args = vec!["run", "--spec", spec, "--json", "--output", &output];
    args.extend_from_slice(extra);
    let out = uatu(&args);
    let summary = json_of(&out);
    let run_dir = PathBuf::from(summary["run_dir"].as_str().expect("run_dir"));
    (out.status.code().unwrap_or(-1), summary, run_dir)
}

/// `uatu check --json` of the example spec over `run_dir`: its exit code and report.
pub fn check(run_dir: &Path) -> (i32, Value) {
    let out = uatu(&["check", "--json", "--spec", SPEC, &run_dir.display().to_string()]);
    (out.status.code().unwrap_or(-1), json_of(&out))
}

/// The names of the properties a run's summary says were violated.
pub fn violated(summary: &Value) -> BTreeSet<String> {
    summary["properties"]
        .as_array()
        .expect("properties")
        .iter()
        .filter(|p| p["verdict"] == "violated")
        .map(|p| p["name"].as_str().expect("name").to_owned())
        .collect()
}
