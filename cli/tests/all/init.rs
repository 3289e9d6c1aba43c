//! `uatu init` then `uatu run`, as a new user would: the real binary writes the project
//! into an empty repository, and `uatu run` in it (no flags but the run's length: it reads
//! the `uatu.toml` written) explores the simulator, or a TodoMVC app served from here in
//! Chromium. The project written type-checks against the packed `@uatu/spec`, and its CI
//! job passes actionlint.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use crate::run_todomvc::{app_root, todomvc_examples};
use crate::support::folio::violated;
use crate::support::http::serve;
use crate::support::typescript::{check_project, install_packed_spec_package};
use crate::support::{installed_tool, printed};

const WRITTEN: [&str; 6] = [
    "uatu.toml",
    "uatu/spec.ts",
    "uatu/package.json",
    "uatu/tsconfig.json",
    "uatu/.gitignore",
    ".github/workflows/uatu.yml",
];

fn uatu_in(dir: &Path, args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_uatu"))
        .args(args)
        .current_dir(dir)
        .env("UATU_CACHE_DIR", dir.join(".cache"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs uatu");
    use std::io::Write as _;
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("writes the answers");
    child.wait_with_output().expect("uatu ends")
}

/// `uatu run` in `project` (its `uatu.toml`) for `steps` steps; the exit code and summary.
fn run_in(project: &Path, steps: u64) -> (i32, Value) {
    let out = uatu_in(project, &["run", "--json", "--max-steps", &steps.to_string()], "");
    let summary: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("the summary is not JSON ({e}):\n{}", printed(&out)));
    (out.status.code().unwrap_or(-1), summary)
}

fn property_names(summary: &Value) -> BTreeSet<String> {
    summary["properties"]
        .as_array()
        .expect("properties")
        .iter()
        .filter_map(|property| property["name"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn init_then_run_on_the_simulator() {
    let project = tempfile::tempdir().unwrap();
    let out = uatu_in(project.path(), &["init", "--device", "sim"], "");
    assert!(out.status.success(), "{}", printed(&out));
    for file in WRITTEN {
        assert!(
            project.path().join(file).is_file(),
            "{file} written\n{}",
            printed(&out)
        );
        assert!(
            String::from_utf8_lossy(&out.stdout).contains(file),
            "{file} named\n{}",
            printed(&out)
        );
    }

    let (code, summary) = run_in(project.path(), 40);
    assert!(matches!(code, 0 | 1), "a run to its end: {summary:#}");
    assert_eq!(summary["steps"].as_u64(), Some(40), "{summary:#}");
    let names = property_names(&summary);
    for name in ["noUncaughtExceptions", "noLogcatErrors", "knowsItsScreen"] {
        assert!(names.contains(name), "{name} in {names:?}");
    }
    assert!(!violated(&summary).contains("knowsItsScreen"), "{summary:#}");
    let run_dir = summary["run_dir"].as_str().expect("run_dir");
    assert!(
        Path::new(run_dir).starts_with("uatu/runs")
            && project.path().join(run_dir).join("meta.json").is_file(),
        "the run is kept where uatu.toml says: {run_dir}"
    );
}

#[test]
fn init_then_run_on_a_web_app() {
    let app = app_root(&todomvc_examples().join("preact"));
    let url = format!("http://{}/", serve(app));
    let project = tempfile::tempdir().unwrap();
    let out = uatu_in(project.path(), &["init", "--device", "web", "--url", &url], "");
    assert!(out.status.success(), "{}", printed(&out));
    let settings = std::fs::read_to_string(project.path().join("uatu.toml")).unwrap();
    assert!(settings.contains(&format!("url = \"{url}\"")), "{settings}");

    let (code, summary) = run_in(project.path(), 30);
    assert_eq!(
        (code, summary["steps"].as_u64()),
        (0, Some(30)),
        "the starter spec holds on a correct TodoMVC: {summary:#}"
    );
    let names = property_names(&summary);
    assert!(names.contains("showsAHeading"), "{names:?}");
}

#[test]
fn init_asks_for_what_the_flags_do_not_say() {
    let project = tempfile::tempdir().unwrap();
    let out = uatu_in(project.path(), &["init"], "android\ncom.example.shop\n");
    assert!(out.status.success(), "{}", printed(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("The app runs on [sim, web, android]: "),
        "{stderr}"
    );
    assert!(stderr.contains("The app's package name"), "{stderr}");
    let settings = std::fs::read_to_string(project.path().join("uatu.toml")).unwrap();
    assert!(
        settings.contains("bundle-id = \"com.example.shop\""),
        "{settings}"
    );

    // No answer (no terminal, nothing piped): a usage error that names the flag.
    let empty = tempfile::tempdir().unwrap();
    let out = uatu_in(empty.path(), &["init", "--device", "web"], "");
    assert_eq!(out.status.code(), Some(2), "{}", printed(&out));
    assert!(printed(&out).contains("give --url"), "{}", printed(&out));
    let out = uatu_in(
        empty.path(),
        &["init", "--device", "web", "--url", "localhost:3000"],
        "",
    );
    assert_eq!(out.status.code(), Some(2), "{}", printed(&out));
    assert!(
        printed(&out).contains("`localhost:3000` is not an http:// or https:// URL"),
        "{}",
        printed(&out)
    );
    assert_eq!(
        std::fs::read_dir(empty.path()).unwrap().count(),
        0,
        "nothing written"
    );
}

#[test]
fn init_never_overwrites_without_force() {
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("uatu.toml"), "# mine\n").unwrap();
    let out = uatu_in(project.path(), &["init", "--device", "sim"], "");
    assert_eq!(out.status.code(), Some(2), "{}", printed(&out));
    assert!(
        printed(&out).contains("uatu.toml already exists: nothing was written; `--force` replaces it"),
        "{}",
        printed(&out)
    );
    assert_eq!(
        std::fs::read_to_string(project.path().join("uatu.toml")).unwrap(),
        "# mine\n"
    );
    assert!(!project.path().join("uatu").exists(), "nothing else was written");

    let out = uatu_in(project.path(), &["init", "--device", "sim", "--force"], "");
    assert!(out.status.success(), "{}", printed(&out));
    assert_ne!(
        std::fs::read_to_string(project.path().join("uatu.toml")).unwrap(),
        "# mine\n"
    );
}

/// A project written by `uatu init` for each device kind (with the flag naming its app).
fn initialised_for_each_device() -> Vec<(&'static str, tempfile::TempDir)> {
    [
        ("sim", None),
        ("web", Some("--url=http://127.0.0.1:8080/")),
        ("android", Some("--package=com.example.app")),
    ]
    .into_iter()
    .map(|(device, app)| {
        let project = tempfile::tempdir().expect("a temporary directory for the project");
        let mut args = vec!["init", "--device", device];
        args.extend(app);
        let out = uatu_in(project.path(), &args, "");
        assert!(out.status.success(), "{device}: {}", printed(&out));
        (device, project)
    })
    .collect()
}

#[test]
fn the_project_type_checks_against_the_packed_package_for_every_device() {
    for (device, project) in initialised_for_each_device() {
        let spec_dir = project.path().join("uatu");
        let manifest_path = spec_dir.join("package.json");
        let mut manifest: Value =
            serde_json::from_str(&std::fs::read_to_string(&manifest_path).unwrap()).unwrap();
        assert_eq!(
            manifest["devDependencies"]["@uatu/spec"].as_str(),
            Some(uatu::VERSION)
        );
        // TypeScript is the one dev/setup installed: the registry is not asked here.
        manifest["devDependencies"]
            .as_object_mut()
            .unwrap()
            .remove("typescript");
        std::fs::write(&manifest_path, manifest.to_string()).unwrap();
        install_packed_spec_package(&spec_dir);
        let checked = check_project(&spec_dir);
        assert!(
            checked.status.success(),
            "{device}: the starter spec against the packed types:\n{}",
            printed(&checked)
        );
    }
}

#[test]
fn the_ci_jobs_pass_actionlint() {
    for (device, project) in initialised_for_each_device() {
        let job = project.path().join(".github/workflows/uatu.yml");
        let output = Command::new(installed_tool("actionlint"))
            .arg("-shellcheck")
            .arg(installed_tool("shellcheck"))
            .arg(&job)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{device}: actionlint:\n{}\n{}",
            printed(&output),
            std::fs::read_to_string(&job).unwrap()
        );
    }
}
