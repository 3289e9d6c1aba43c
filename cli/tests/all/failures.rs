//! Failures get the right exit code and keep what was found: a full disk, a
//! device that never brings its app up, a plugin file that is not Wasm.

use std::path::Path;
use std::process::{Command, Stdio};

const SPEC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/folio/spec.ts");
const UATU: &str = env!("CARGO_BIN_EXE_uatu");

/// The run's output directory is a 3 MB tmpfs (in a private mount namespace, so
/// nothing is left mounted): the disk fills up part-way through the run.
#[test]
fn a_full_disk_ends_the_run_with_its_verdicts_exit_3_and_no_partial_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let output = dir.path().join("runs");
    std::fs::create_dir(&output).expect("output dir");
    let script = r#"
        mount -t tmpfs -o size=3m tmpfs "$1" || exit 99
        "$2" run --spec "$3" --output "$1" --seed 3 --max-steps 3000 --sim-latency 0
        echo "exit=$?"
        echo "partial files:"
        find "$1" -name '*.partial'
    "#;
    let out = Command::new("unshare")
        .args(["--user", "--map-root-user", "--mount", "sh", "-c", script, "sh"])
        .arg(&output)
        .args([UATU, SPEC])
        .stdin(Stdio::null())
        .output()
        .expect("unshare runs (util-linux)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stdout.is_empty() || out.status.code() != Some(99),
        "could not mount a tmpfs in a user namespace: {stderr}"
    );
    assert!(stdout.contains("exit=3\n"), "exit code:\n{stdout}\n{stderr}");
    assert!(
        stdout.contains("property") && stdout.contains("verdict"),
        "no verdict table:\n{stdout}"
    );
    assert!(stdout.contains("stopped by trace-error"), "{stdout}");
    assert!(
        stdout.contains("(incomplete: it ends at step"),
        "the summary does not say where the trace ends:\n{stdout}"
    );
    let partial = stdout
        .split("partial files:\n")
        .nth(1)
        .expect("the script's last part");
    assert!(partial.trim().is_empty(), "left behind: {partial}");
    assert_eq!(
        stderr.matches("No space left on device").count(),
        1,
        "the cause is said once:\n{stderr}"
    );
}

/// `uatu sim` serves the driver but its app has no SDK connection to this run's
/// socket: the run cannot bring its app up, a failure of the device raised inside
/// the step loop, which must exit 3 (not 2) with a summary.
#[test]
fn a_device_whose_app_never_connects_exits_3_with_a_summary() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    let addr = listener.local_addr().expect("address");
    drop(listener);
    let mut sim = Command::new(UATU)
        .args(["sim", "--listen", &addr.to_string(), "--latency", "0"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("uatu sim starts");
    let dir = tempfile::tempdir().expect("tempdir");
    let device = format!("sidecar:{addr}");
    let mut out = None;
    // The simulator needs a moment to listen; an unreachable device is another test.
    for _ in 0..50 {
        let run = Command::new(UATU)
            .args([
                "run",
                "--spec",
                SPEC,
                "--json",
                "--max-steps",
                "5",
                "--device",
                &device,
                "--output",
            ])
            .arg(dir.path())
            .output()
            .expect("uatu runs");
        if String::from_utf8_lossy(&run.stderr).contains("cannot reach") {
            std::thread::sleep(std::time::Duration::from_millis(100));
            continue;
        }
        out = Some(run);
        break;
    }
    let _ = sim.kill();
    let _ = sim.wait();
    let out = out.expect("the simulator came up");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a JSON summary");
    assert_eq!(summary["stopped"], "device-lost", "{summary}");
    assert_eq!(summary["exit_code"], 3);
    assert!(
        stderr.contains("no app"),
        "the error names what is missing: {stderr}"
    );
    assert!(
        Path::new(summary["run_dir"].as_str().expect("run_dir"))
            .join("summary.json")
            .is_file()
    );
}

#[test]
fn a_plugin_file_that_is_not_wasm_is_refused_in_one_readable_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plugin = dir.path().join("notes.wasm");
    std::fs::write(&plugin, "these are my notes, not a plugin\n".repeat(20)).expect("write");
    let out = Command::new(UATU)
        .args(["run", "--spec", SPEC, "--max-steps", "2", "--plugin"])
        .arg(&plugin)
        .arg("--output")
        .arg(dir.path().join("runs"))
        .output()
        .expect("uatu runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let lines: Vec<&str> = stderr.lines().filter(|line| !line.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "one line:\n{stderr}");
    assert!(
        lines[0].contains("plugin `notes`") && lines[0].contains("not WebAssembly"),
        "{stderr}"
    );
    assert!(
        !dir.path().join("runs").exists()
            || std::fs::read_dir(dir.path().join("runs"))
                .expect("list")
                .next()
                .is_none(),
        "no run directory is left behind"
    );
}
