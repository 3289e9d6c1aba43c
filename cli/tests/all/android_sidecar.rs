//! `--device android`: the real `uatu` binary starts the real sidecar JAR
//! (`sidecar-maestro/`, built by `mvn verify` before `cargo test` in dev/test)
//! on its scripted fake device, uses it, and stops it.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::cli::uatu;
use crate::support::android::{built_jar, fake_device_copy, single_run_dir, steps_of};

/// Processes whose command line mentions `needle` (a path unique to one test).
fn processes_mentioning(needle: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| std::fs::read(entry.path().join("cmdline")).ok())
        .map(|cmdline| String::from_utf8_lossy(&cmdline).replace('\0', " "))
        .filter(|cmdline| cmdline.contains(needle))
        .collect()
}

#[test]
fn doctor_drives_the_fake_android_device_through_the_sidecar_jar_and_stops_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    // A copy at a path of this test's own, to find the sidecar process by.
    let jar = dir.path().join("sidecar-maestro.jar");
    std::fs::copy(built_jar(), &jar).expect("copies the JAR");
    let jar_text = jar.display().to_string();

    let (code, stdout, stderr) = uatu(&[
        "doctor",
        "--device",
        "android",
        "--sidecar",
        &jar_text,
        "--sidecar-fake-device",
        "builtin",
    ]);

    let passed = |check: &str, detail: &str| {
        stdout
            .lines()
            .any(|line| line.starts_with('✓') && line.contains(check) && line.contains(detail))
    };
    assert!(
        passed("driver", "connected to gRPC driver 127.0.0.1:"),
        "{stdout}\n{stderr}"
    );
    assert!(
        passed(
            "health",
            "android uatu-sidecar-maestro 0.1.0 (emulator-5554, Android SDK 34)"
        ),
        "{stdout}"
    );
    assert!(passed("launch", "started app.folio"), "{stdout}");
    // What the package manager says of the installed app, after the launch granted its permission.
    assert!(passed("debuggable", "app.folio is a debug build"), "{stdout}");
    assert!(
        passed(
            "permissions",
            "1 runtime permission(s) requested, all granted: android.permission.POST_NOTIFICATIONS"
        ),
        "{stdout}"
    );
    // The fake device's Folio accounts screen, parsed from its UIAutomator dump.
    assert!(passed("hierarchy", "16 nodes on a 1080x2424 screen"), "{stdout}");
    assert!(passed("screenshot", "270x606 PNG"), "{stdout}");
    // The fake device's Folio links the real SDK core: launched with the run token, it
    // reached the host through the sidecar's reverse forward.
    assert!(
        passed("sdk hello", "protocol version 1, android SDK 0.1.0 in app.folio"),
        "{stdout}"
    );
    assert!(passed("sdk state", "2 snapshots"), "{stdout}");
    assert_eq!(code, 0, "{stdout}\n{stderr}");

    // The sidecar was stopped before uatu exited.
    let deadline = Instant::now() + Duration::from_secs(3);
    while !processes_mentioning(&jar_text).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        processes_mentioning(&jar_text),
        Vec::<String>::new(),
        "the sidecar outlived uatu"
    );
}

/// `uatu doctor --device android` on the sidecar's fake device `fake_device`, with `extra` flags.
fn doctor_on(fake_device: &str, extra: &[&str]) -> (i32, String, String) {
    let jar = built_jar().display().to_string();
    let mut args = vec![
        "doctor",
        "--device",
        "android",
        "--sidecar",
        &jar,
        "--sidecar-fake-device",
        fake_device,
    ];
    args.extend_from_slice(extra);
    uatu(&args)
}

#[test]
fn doctor_fails_a_release_build_and_says_which_permissions_it_lacks() {
    let dir = tempfile::tempdir().expect("temp dir");
    let device = fake_device_copy(dir.path(), "release-builds=app.folio\n");
    let (code, stdout, stderr) = doctor_on(device.to_str().expect("utf-8 path"), &["--no-grant-permissions"]);
    assert_eq!(code, 3, "{stdout}\n{stderr}");
    let line = |name: &str| {
        stdout
            .lines()
            .find(|line| line.contains(name))
            .unwrap_or_else(|| panic!("no {name} line: {stdout}"))
            .to_owned()
    };
    let debuggable = line("debuggable");
    assert!(
        debuggable.starts_with('✗') && debuggable.contains("app.folio is not debuggable"),
        "{stdout}"
    );
    // Not granted, as asked: said, not a failure.
    let permissions = line("permissions");
    assert!(
        permissions.starts_with('✓')
            && permissions
                .contains("not granted (--no-grant-permissions): android.permission.POST_NOTIFICATIONS"),
        "{stdout}"
    );
}

#[test]
fn a_missing_sidecar_jar_says_how_to_build_it() {
    let (code, stdout, _) = uatu(&[
        "doctor",
        "--device",
        "android:emulator-5554",
        "--sidecar",
        "/nonexistent/sidecar-maestro.jar",
    ]);
    assert_eq!(code, 3, "{stdout}");
    assert!(
        stdout.lines().any(|line| line.starts_with('✗')
            && line.contains("/nonexistent/sidecar-maestro.jar does not exist")
            && line.contains("mvn -B -q package")),
        "{stdout}"
    );
}

#[test]
fn a_sidecar_that_cannot_start_its_device_reports_the_sidecars_words() {
    let dir = tempfile::tempdir().expect("temp dir");
    let missing = dir.path().join("no-such-device").display().to_string();
    let (code, stdout, _) = doctor_on(&missing, &[]);
    assert_eq!(code, 3, "{stdout}");
    assert!(
        stdout
            .lines()
            .any(|line| line.starts_with('✗') && line.contains("exited") && line.contains("not a directory")),
        "{stdout}"
    );
}

/// A spec that reads the fake app's snapshot and taps what is on screen.
const FAKE_APP_SPEC: &str = r#"import { always, extract, taps } from "@uatu/spec";
const screen = extract((s) => s.snapshots.screen as string | undefined, "screen");
export const properties = { appReports: always(() => typeof screen.current === "string") };
export const actionsRoot = taps;
"#;

/// The root-node mark of the fake app's own hierarchy (sidecar's `FakeApp.HIERARCHY_MARK`).
const IN_APP_MARK: &str = "uatu fake app: in-app hierarchy";

/// Runs the spec above for 4 steps on the fake device with `extra` flags; the exit
/// code, stderr and the run directory's trace lines and meta.json as text.
fn run_on_fake_device(fake_device: &str, extra: &[&str]) -> (i32, String, Vec<Value>, String) {
    let dir = tempfile::tempdir().expect("temp dir");
    let spec = dir.path().join("spec.ts");
    std::fs::write(&spec, FAKE_APP_SPEC).expect("writes the spec");
    let runs = dir.path().join("runs");
    let jar = built_jar().display().to_string();
    let mut args = vec![
        "run",
        "--spec",
        spec.to_str().expect("utf-8 path"),
        "--device",
        "android",
        "--sidecar",
        &jar,
        "--sidecar-fake-device",
        fake_device,
        "--seed",
        "5",
        "--max-steps",
        "4",
        "--output",
        runs.to_str().expect("utf-8 path"),
    ];
    args.extend_from_slice(extra);
    let (code, _stdout, stderr) = uatu(&args);
    let run_dir = single_run_dir(&runs);
    let read = |name: &str| {
        run_dir
            .as_ref()
            .and_then(|dir| std::fs::read_to_string(dir.join(name)).ok())
            .unwrap_or_default()
    };
    let steps = steps_of(run_dir.as_deref());
    let written = format!(
        "{}\n{}\n{}",
        read("meta.json"),
        read("trace.jsonl"),
        read("hierarchies.jsonl")
    );
    (code, stderr, steps, written)
}

/// Words of exactly 32 hex digits: what a run token looks like (hashes are 64).
fn token_like_words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_ascii_hexdigit())
        .filter(|word| word.len() == 32)
        .map(str::to_string)
        .collect()
}

#[test]
fn the_fake_devices_app_reaches_the_host_with_the_run_token_and_its_hierarchy_is_used() {
    let (code, stderr, steps, written) = run_on_fake_device("builtin", &[]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(steps.len(), 4, "{stderr}");
    for step in &steps {
        // The real SDK core's snapshots, through the forward and the token check.
        let snapshots = &step["state"]["snapshots"];
        assert!(
            snapshots["screen"]
                .as_str()
                .is_some_and(|s| s.starts_with("folio-")),
            "{step}"
        );
        assert_eq!(snapshots["launches"], 1, "{step}");
        // The app's own windows, not the sidecar's dump.
        assert_eq!(step["hierarchySource"], "app", "{step}");
        let root = &step["state"]["hierarchy"];
        assert_eq!(root["desc"], IN_APP_MARK, "{step}");
        assert_eq!(
            root["children"][0]["class"], "android.widget.FrameLayout",
            "{step}"
        );
    }
    // The spec's taps reached the fake device: it moved on to its second screen.
    assert_eq!(steps[0]["state"]["snapshots"]["screen"], "folio-accounts");
    assert!(
        steps
            .iter()
            .any(|step| step["state"]["snapshots"]["screen"] == "folio-account"),
        "{steps:?}"
    );
    assert_eq!(
        token_like_words(&written),
        Vec::<String>::new(),
        "a run token was recorded"
    );
}

#[test]
fn hierarchy_sidecar_uses_the_uiautomator_dump_even_when_the_app_could_read_its_windows() {
    let (code, stderr, steps, _) = run_on_fake_device("builtin", &["--hierarchy", "sidecar"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(steps.len(), 4, "{stderr}");
    for step in &steps {
        assert_eq!(step["hierarchySource"], "driver", "{step}");
        let root = &step["state"]["hierarchy"];
        // The dump's single window is the root, as the sidecar reports it.
        assert_eq!(root["class"], "android.widget.FrameLayout", "{step}");
        assert_ne!(root["desc"], IN_APP_MARK, "{step}");
        // The app is there all the same: its snapshots arrive.
        assert!(step["state"]["snapshots"]["screen"].is_string(), "{step}");
    }
}

#[test]
fn an_app_presenting_another_token_is_refused_and_the_run_says_why() {
    let (code, stderr, steps, _) =
        run_on_fake_device("builtin?app-token=0123456789abcdef0123456789abcdef", &[]);
    assert_eq!(code, 3, "{stderr}");
    assert!(
        stderr.contains("run token mismatch: the app's token is not this run's"),
        "{stderr}"
    );
    assert!(steps.is_empty(), "no step ran: {steps:?}");
}
