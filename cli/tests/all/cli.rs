//! The `uatu` binary's command line: help, exit codes, doctor.

use std::process::Command;

/// Runs the real `uatu` binary: its exit code, stdout and stderr.
pub(crate) fn uatu(args: &[&str]) -> (i32, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_uatu"))
        .args(args)
        .output()
        .expect("runs uatu");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn help_lists_every_subcommand_and_the_exit_codes() {
    let (code, help, _) = uatu(&["--help"]);
    assert_eq!(code, 0);
    for subcommand in [
        "run", "build", "check", "replay", "shrink", "sim", "inspect", "report", "doctor", "plugin",
        "version",
    ] {
        assert!(
            help.lines().any(|l| l.trim_start().starts_with(subcommand)),
            "--help lacks {subcommand}:\n{help}"
        );
    }
    assert!(help.contains("3  device or infrastructure failure"), "{help}");
}

#[test]
fn run_help_documents_its_final_flags() {
    let (code, help, _) = uatu(&["run", "--help"]);
    assert_eq!(code, 0);
    for flag in [
        "--spec",
        "--device",
        "--seed",
        "--max-steps",
        "--duration",
        "--output",
        "--plugin",
        "--config",
        "--exit-on-violation",
        "--strict",
        "--no-screenshots",
        "--sim-bugs",
        "--sim-latency",
        "--bundle-id",
        "--json",
        "--report",
    ] {
        assert!(help.contains(flag), "uatu run --help lacks {flag}");
    }
}

#[test]
fn usage_errors_exit_with_2() {
    let (code, _, stderr) = uatu(&["run", "--max-steps", "many"]);
    assert_eq!(code, 2, "{stderr}");
    let (code, _, stderr) = uatu(&["run", "--spec", "x.ts", "--config", "/nonexistent/uatu.toml"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("/nonexistent/uatu.toml"), "{stderr}");
}

#[test]
fn doctor_checks_the_simulator_end_to_end() {
    let (code, stdout, stderr) = uatu(&["doctor", "--device", "sim"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    for check in [
        "driver",
        "health",
        "hierarchy",
        "screenshot",
        "sdk hello",
        "sdk state",
    ] {
        assert!(
            stdout.lines().any(|l| l.starts_with('✓') && l.contains(check)),
            "no passing {check}:\n{stdout}"
        );
    }
    assert!(stdout.contains("protocol version 1"), "{stdout}");
    assert!(stdout.contains("nodes on a 1080x2400 screen"), "{stdout}");
}

#[test]
fn doctor_fails_with_3_when_the_sidecar_is_unreachable() {
    let (code, stdout, _) = uatu(&["doctor", "--device", "sidecar:127.0.0.1:9"]);
    assert_eq!(code, 3, "{stdout}");
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with('✗') && l.contains("127.0.0.1:9")),
        "{stdout}"
    );
}

#[test]
fn an_unreachable_device_is_an_infrastructure_failure_naming_it() {
    let spec = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/folio/spec.ts");
    let output = tempfile::tempdir().expect("temp dir");
    let out = output.path().display().to_string();
    let (code, _, stderr) = uatu(&[
        "run",
        "--spec",
        spec,
        "--device",
        "sidecar:127.0.0.1:9",
        "--output",
        &out,
    ]);
    assert_eq!(code, 3, "{stderr}");
    assert!(stderr.contains("127.0.0.1:9"), "{stderr}");
    assert!(
        std::fs::read_dir(output.path())
            .map(|d| d.count() == 0)
            .unwrap_or(true),
        "no run directory left"
    );
}
