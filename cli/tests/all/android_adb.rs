//! `--device android` through the real ADB server: the real `uatu` binary starts the
//! real sidecar JAR, which drives a fake device's adbd (`sidecar-maestro`'s
//! `FakeDeviceMainKt`, speaking the ADB transport protocol) attached to a real
//! `adb` server of this test's own on a free port (never the default 5037, which
//! other programs on the machine may use). The app's SDK reaches the host through
//! the server's reverse forward. Each test's device is a copy of the built-in fake
//! device with the events the test is about (docs/devices.md, "The fake device"):
//! each failure shape a real device has, asserted as the user sees it (exit status,
//! trace, summary), no false crash and no false violation.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::cli::uatu;
use crate::support::android::{built_jar, fake_device_copy, single_run_dir, steps_of};

/// Appended to every non-empty text of the app's screens: two-, three- and four-byte
/// UTF-8 characters, which the fake adbd's packets cut at arbitrary bytes.
const NON_ASCII: &str = " — Zürich Ünïcödé 日本語の口座 🎉💷";

/// A copy of the built-in fake device in `dir`, with `extra` lines in its
/// device.properties and every non-empty text of the app's screens ending in [`NON_ASCII`].
fn device_dir(dir: &Path, extra: &str) -> PathBuf {
    let device = fake_device_copy(dir, extra);
    for screen in ["folio-accounts.xml", "folio-account.xml"] {
        let path = device.join(screen);
        let xml = std::fs::read_to_string(&path).expect("reads a screen");
        let mut marked = String::new();
        let mut rest = xml.as_str();
        while let Some(at) = rest.find(" text=\"") {
            let (before, after) = rest.split_at(at + " text=\"".len());
            let end = after.find('"').expect("a closed attribute");
            marked.push_str(before);
            marked.push_str(&after[..end]);
            if end > 0 {
                marked.push_str(NON_ASCII);
            }
            rest = &after[end..];
        }
        marked.push_str(rest);
        std::fs::write(&path, marked).expect("writes a screen");
    }
    device
}

/// The fake device attached to its own real ADB server, as a child process; dropping
/// it closes its standard input, which stops the device and the server.
struct AttachedDevice {
    child: Child,
    stdin: Option<ChildStdin>,
    /// The ADB server's `127.0.0.1:PORT`.
    adb_server: String,
    /// The device's serial as the server lists it (`127.0.0.1:PORT`).
    serial: String,
}

impl AttachedDevice {
    /// Starts the device of `device_dir`, its packets cut at arbitrary bytes, and waits
    /// until the server lists it as `device`.
    fn start(device_dir: &Path) -> AttachedDevice {
        let mut child = Command::new("java")
            .arg("-cp")
            .arg(built_jar())
            .arg("dev.uatu.sidecar.fakedevice.FakeDeviceMainKt")
            .arg("--device")
            .arg(device_dir)
            .args(["--chunking", "arbitrary:37"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("starts the fake device (java on the PATH)");
        let stdin = child.stdin.take();
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("piped stdout"))
            .read_line(&mut line)
            .expect("reads the fake device's first line");
        let mut adb_server = None;
        let mut serial = None;
        for word in line.split_whitespace() {
            match word.split_once('=') {
                Some(("adb-server", value)) => adb_server = Some(value.to_owned()),
                Some(("serial", value)) => serial = Some(value.to_owned()),
                _ => {}
            }
        }
        let mut device = AttachedDevice {
            child,
            stdin,
            adb_server: String::new(),
            serial: String::new(),
        };
        match (adb_server, serial) {
            (Some(adb_server), Some(serial)) => {
                device.adb_server = adb_server;
                device.serial = serial;
                device
            }
            _ => panic!("the fake device did not attach; it printed {line:?} (its errors are above)"),
        }
    }
}

impl Drop for AttachedDevice {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A spec that reads the fake app's snapshot and taps what is on screen.
const SPEC: &str = r#"import { always, extract, taps } from "@uatu/spec";
const screen = extract((s) => s.snapshots.screen as string | undefined, "screen");
export const properties = { appReports: always(() => typeof screen.current === "string") };
export const actionsRoot = taps;
"#;

/// The spec of the failure shapes: the app reports its screen whenever it can answer
/// (not while another app or its ANR dialog is in front), and the default `noAnr`.
const SHAPES_SPEC: &str = r#"import { always, extract, taps } from "@uatu/spec";
import { noAnr } from "@uatu/spec/defaults/properties";
const screen = extract((s) => s.snapshots.screen as string | undefined, "screen");
export const properties = {
  appReportsWhenItCan: always(
    (s) => s.window?.kind === "other-app" || s.window?.kind === "not-responding" || typeof screen.current === "string",
  ),
  noAnr,
};
export const actionsRoot = taps;
"#;

/// What one `uatu run` on `device` left: its exit code, stderr, trace records and summary.
struct RunResult {
    code: i32,
    stderr: String,
    steps: Vec<Value>,
    summary: Value,
}

/// Runs `spec` for `steps` steps on `device` with `extra` flags, its run under `dir/runs`.
fn run(device: &AttachedDevice, dir: &Path, spec: &str, steps: u32, extra: &[&str]) -> RunResult {
    let spec_file = dir.join("spec.ts");
    std::fs::write(&spec_file, spec).expect("writes the spec");
    let runs = dir.join("runs");
    let jar = built_jar().display().to_string();
    let target = format!("android:{}", device.serial);
    let steps = steps.to_string();
    let mut args = vec![
        "run",
        "--spec",
        spec_file.to_str().expect("utf-8 path"),
        "--device",
        &target,
        "--adb-server",
        &device.adb_server,
        "--sidecar",
        &jar,
        "--seed",
        "5",
        "--max-steps",
        &steps,
        "--output",
        runs.to_str().expect("utf-8 path"),
    ];
    args.extend_from_slice(extra);
    let (code, _stdout, stderr) = uatu(&args);
    let run_dir = single_run_dir(&runs);
    let summary = run_dir
        .as_ref()
        .and_then(|dir| std::fs::read_to_string(dir.join("summary.json")).ok())
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default();
    RunResult {
        code,
        stderr,
        steps: steps_of(run_dir.as_deref()),
        summary,
    }
}

/// The kinds of a step's events.
fn event_kinds(step: &Value) -> Vec<&str> {
    step["events"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|event| event["kind"].as_str())
        .collect()
}

/// Every step was evaluated and none saw a crash: the run's summary counts none.
fn assert_no_crash(result: &RunResult) {
    for step in &result.steps {
        assert_ne!(step["evaluated"], false, "{step}");
        assert!(!event_kinds(step).contains(&"app-disconnected"), "{step}");
    }
    assert_eq!(result.summary["counts"]["app_crashes"], 0, "{}", result.summary);
}

/// The packages of a hierarchy's nodes.
fn packages(node: &Value, into: &mut Vec<String>) {
    if let Some(package) = node["package"].as_str().filter(|p| !p.is_empty()) {
        into.push(package.to_owned());
    }
    for child in node["children"].as_array().into_iter().flatten() {
        packages(child, into);
    }
}

/// Every `text` in a hierarchy.
fn texts(node: &Value, into: &mut Vec<String>) {
    if let Some(text) = node["text"].as_str() {
        into.push(text.to_owned());
    }
    for child in node["children"].as_array().into_iter().flatten() {
        texts(child, into);
    }
}

#[test]
fn a_run_through_the_real_adb_server_reads_non_ascii_screens_cut_at_arbitrary_bytes_exactly() {
    let dir = tempfile::tempdir().expect("temp dir");
    let device = AttachedDevice::start(&device_dir(dir.path(), ""));
    let result = run(&device, dir.path(), SPEC, 5, &["--hierarchy", "sidecar"]);
    assert_eq!(result.code, 0, "{}", result.stderr);
    assert_eq!(result.steps.len(), 5, "{}", result.stderr);
    let mut marked = 0;
    for step in &result.steps {
        assert_eq!(step["hierarchySource"], "driver", "{step}");
        assert!(step["events"].as_array().is_none_or(Vec::is_empty), "{step}");
        let mut all = Vec::new();
        texts(&step["state"]["hierarchy"], &mut all);
        for text in all
            .iter()
            .filter(|text| text.contains("Zürich") || text.contains('\u{fffd}'))
        {
            assert!(
                text.ends_with(NON_ASCII) && !text.contains('\u{fffd}'),
                "{text:?}"
            );
            marked += 1;
        }
    }
    assert!(marked >= 5, "no screen text came back: {:?}", result.steps);
    // The app's SDK reached the host through the real server's reverse forward.
    assert!(
        result
            .steps
            .iter()
            .all(|step| step["state"]["snapshots"]["screen"]
                .as_str()
                .is_some_and(|s| s.starts_with("folio-"))),
        "{:?}",
        result.steps
    );
}

#[test]
fn a_device_going_offline_mid_run_ends_it_with_exit_3_naming_the_serial() {
    let dir = tempfile::tempdir().expect("temp dir");
    let device = AttachedDevice::start(&device_dir(dir.path(), "on.input.2=offline\n"));
    let result = run(&device, dir.path(), SPEC, 20, &[]);
    assert_eq!(result.code, 3, "{}", result.stderr);
    assert!(result.stderr.contains(&device.serial), "{}", result.stderr);
    assert!(
        (2..20).contains(&result.steps.len()),
        "{} steps: {}",
        result.steps.len(),
        result.stderr
    );
}

#[test]
fn a_crash_is_in_the_trace_with_its_stack_and_the_app_relaunched() {
    let dir = tempfile::tempdir().expect("temp dir");
    let device = AttachedDevice::start(&device_dir(dir.path(), "on.input.2=crash\n"));
    let result = run(&device, dir.path(), SPEC, 5, &[]);
    // A crash is recorded, not a failure of the run (no property is about it).
    assert_eq!(result.code, 0, "{}", result.stderr);
    assert_eq!(result.steps.len(), 5, "{}", result.stderr);
    let crashed = result
        .steps
        .iter()
        .position(|step| {
            step["events"]
                .as_array()
                .is_some_and(|events| events.iter().any(|event| event["kind"] == "app-disconnected"))
        })
        .unwrap_or_else(|| {
            let events: Vec<&Value> = result.steps.iter().map(|step| &step["events"]).collect();
            panic!("no step saw the app go: {events:?} {}", result.stderr)
        });
    let logs: String = result.steps[..=crashed]
        .iter()
        .map(|step| step["state"]["logs"].to_string())
        .collect();
    assert!(
        logs.contains("FATAL EXCEPTION"),
        "{logs}\n{}",
        result.steps[crashed]["events"]
    );
    assert!(
        logs.contains("ledger out of balance") && logs.contains("\\tat "),
        "{logs}"
    );
    // The run went on with the app relaunched.
    assert!(
        result.steps[crashed + 1..]
            .iter()
            .all(|step| step["state"]["snapshots"]["screen"].is_string()),
        "{:?}",
        result.steps
    );
}

#[test]
fn a_screen_that_never_settles_still_gives_steps_read_from_the_apps_own_tree() {
    let dir = tempfile::tempdir().expect("temp dir");
    let device = AttachedDevice::start(&device_dir(dir.path(), "never-idle=folio-account.xml\n"));
    let result = run(&device, dir.path(), SHAPES_SPEC, 4, &[]);
    assert_eq!(result.code, 0, "{}", result.stderr);
    assert_eq!(result.steps.len(), 4, "{}", result.stderr);
    assert_no_crash(&result);
    // After the first tap the app shows the screen whose dump never succeeds: the
    // steps go on, their hierarchy the app's SDK's.
    let never_settling: Vec<&Value> = result
        .steps
        .iter()
        .filter(|step| step["state"]["snapshots"]["screen"] == "folio-account")
        .collect();
    assert!(!never_settling.is_empty(), "{:?}", result.steps);
    for step in never_settling {
        assert_eq!(step["hierarchySource"], "app", "{step}");
        let mut all = Vec::new();
        texts(&step["state"]["hierarchy"], &mut all);
        assert!(!all.is_empty(), "{step}");
    }
}

#[test]
fn without_the_apps_tree_a_screen_that_never_settles_is_never_read_as_the_screen_before_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let device = AttachedDevice::start(&device_dir(dir.path(), "never-idle=folio-account.xml\n"));
    let result = run(&device, dir.path(), SHAPES_SPEC, 4, &["--hierarchy", "sidecar"]);
    // uiautomator exits 0 after its ERROR without writing the dump: the file of the
    // screen before (step 0's) must not pass for this one. The run ends in the
    // sidecar's words instead (a settled-state rule would skip the step, issue 38).
    assert_eq!(result.code, 3, "{}", result.stderr);
    assert!(
        result.stderr.contains("could not get idle state"),
        "{}",
        result.stderr
    );
    assert_eq!(result.steps.len(), 1, "{:?}", result.steps);
    assert_eq!(result.steps[0]["state"]["snapshots"]["screen"], "folio-accounts");
}

#[test]
fn after_a_rotation_the_state_has_the_landscape_screen_and_layout() {
    let dir = tempfile::tempdir().expect("temp dir");
    let device = AttachedDevice::start(&device_dir(dir.path(), "on.input.1=rotate\n"));
    let result = run(&device, dir.path(), SHAPES_SPEC, 4, &["--hierarchy", "sidecar"]);
    assert_eq!(result.code, 0, "{}", result.stderr);
    assert_eq!(result.steps.len(), 4, "{}", result.stderr);
    assert_no_crash(&result);
    let screen = |step: &Value| {
        (
            step["state"]["screen"]["width"].as_u64(),
            step["state"]["screen"]["height"].as_u64(),
        )
    };
    assert_eq!(screen(&result.steps[0]), (Some(1080), Some(2424)));
    for step in &result.steps[1..] {
        assert_eq!(screen(step), (Some(2424), Some(1080)), "{step}");
        assert_eq!(step["state"]["window"]["kind"], "app", "{step}");
        let right = step["state"]["hierarchy"]["bounds"]["right"].as_i64();
        assert!(
            right.is_some_and(|right| right > 1080),
            "laid out in portrait: {step}"
        );
    }
}

#[test]
fn a_permission_dialog_over_the_app_is_the_focused_window_and_in_the_hierarchy() {
    let dir = tempfile::tempdir().expect("temp dir");
    let device = AttachedDevice::start(&device_dir(dir.path(), ""));
    let result = run(&device, dir.path(), SHAPES_SPEC, 3, &["--no-grant-permissions"]);
    assert_eq!(result.code, 0, "{}", result.stderr);
    assert_no_crash(&result);
    // The app asks for its permission as it starts: the dialog is in front of it.
    let first = &result.steps[0];
    assert_eq!(first["state"]["window"]["kind"], "system-dialog", "{first}");
    assert_eq!(
        first["state"]["window"]["package"], "com.google.android.permissioncontroller",
        "{first}"
    );
    // What the user sees is the dump of every window, the dialog's text included,
    // and the app under it still answered its pause.
    assert_eq!(first["hierarchySource"], "driver", "{first}");
    let mut all = Vec::new();
    texts(&first["state"]["hierarchy"], &mut all);
    assert!(
        all.iter()
            .any(|text| text == "Allow Folio to send you notifications?"),
        "{all:?}"
    );
    assert!(first["state"]["snapshots"]["screen"].is_string(), "{first}");
}

#[test]
fn the_keyboard_up_is_in_the_window_and_the_hierarchy() {
    let dir = tempfile::tempdir().expect("temp dir");
    let device = AttachedDevice::start(&device_dir(dir.path(), "on.input.1=keyboard\n"));
    let result = run(&device, dir.path(), SHAPES_SPEC, 3, &[]);
    assert_eq!(result.code, 0, "{}", result.stderr);
    assert_no_crash(&result);
    assert_eq!(result.steps[0]["state"]["window"]["keyboard"], false);
    let typing = &result.steps[1];
    assert_eq!(typing["state"]["window"]["keyboard"], true, "{typing}");
    assert_eq!(
        typing["state"]["window"]["kind"], "app",
        "the keyboard takes no focus: {typing}"
    );
    // The app's own tree has no keyboard: the dump of every window has.
    assert_eq!(typing["hierarchySource"], "driver", "{typing}");
    let mut all = Vec::new();
    packages(&typing["state"]["hierarchy"], &mut all);
    assert!(
        all.iter().any(|p| p == "com.google.android.inputmethod.latin")
            && all.iter().any(|p| p == "app.folio"),
        "{all:?}"
    );
}

#[test]
fn an_anr_is_an_anr_not_a_crash_and_violates_no_anr() {
    let dir = tempfile::tempdir().expect("temp dir");
    let device = AttachedDevice::start(&device_dir(dir.path(), "on.input.1=anr\n"));
    let result = run(&device, dir.path(), SHAPES_SPEC, 4, &[]);
    assert_eq!(result.code, 1, "noAnr is violated: {}", result.stderr);
    assert_eq!(result.steps.len(), 4, "{}", result.stderr);
    assert_no_crash(&result);
    let counts = &result.summary["counts"];
    assert_eq!(counts["app_not_responding"], 1, "{}", result.summary);
    let stuck = &result.steps[1];
    assert_eq!(
        event_kinds(stuck),
        ["app-not-responding", "app-relaunched", "violation"],
        "{stuck}"
    );
    // The system's log line when the followed log has it by then, else its dialog's title.
    let detail = stuck["events"][0]["detail"].as_str().unwrap_or_default();
    assert!(
        detail.starts_with("ANR in app.folio") || detail == "Application Not Responding: app.folio",
        "{detail}"
    );
    assert_eq!(stuck["state"]["window"]["kind"], "not-responding", "{stuck}");
    assert!(
        stuck["action"].is_null(),
        "nothing is dispatched on a stuck app: {stuck}"
    );
    assert_eq!(stuck["properties"]["noAnr"]["status"], "violated", "{stuck}");
    assert_eq!(
        stuck["properties"]["appReportsWhenItCan"]["status"], "ok",
        "{stuck}"
    );
    // Relaunched, the app answers again.
    for step in &result.steps[2..] {
        assert_eq!(step["state"]["window"]["kind"], "app", "{step}");
        assert!(step["state"]["snapshots"]["screen"].is_string(), "{step}");
    }
}

#[test]
fn an_app_left_for_the_launcher_and_frozen_is_neither_crashed_nor_paused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let device = AttachedDevice::start(&device_dir(
        dir.path(),
        "on.input.1=background\non.input.3=foreground\n",
    ));
    let result = run(&device, dir.path(), SHAPES_SPEC, 5, &[]);
    assert_eq!(result.code, 0, "{}", result.stderr);
    assert_eq!(result.steps.len(), 5, "{}", result.stderr);
    assert_no_crash(&result);
    let kinds: Vec<&Value> = result
        .steps
        .iter()
        .map(|step| &step["state"]["window"]["kind"])
        .collect();
    assert_eq!(
        kinds,
        ["app", "other-app", "other-app", "app", "app"],
        "{:?}",
        result.steps
    );
    for step in &result.steps {
        assert!(!event_kinds(step).contains(&"app-not-responding"), "{step}");
    }
    // Left, the frozen app is not asked: no snapshot of its. Back, it answers again.
    for step in &result.steps[1..3] {
        assert!(step["state"]["snapshots"]["screen"].is_null(), "{step}");
    }
    assert!(
        result.steps[3]["state"]["snapshots"]["screen"].is_string(),
        "{:?}",
        result.steps
    );
}

#[test]
fn an_app_stuck_before_the_system_says_anr_is_an_anr_not_a_crash() {
    let dir = tempfile::tempdir().expect("temp dir");
    // The main thread blocks; no dialog and no `ANR in` line yet, as in the seconds
    // before a device's system notices.
    let device = AttachedDevice::start(&device_dir(dir.path(), "on.input.1=stall\n"));
    let result = run(&device, dir.path(), SHAPES_SPEC, 3, &[]);
    assert_eq!(result.code, 1, "noAnr is violated: {}", result.stderr);
    assert_eq!(result.steps.len(), 3, "{}", result.stderr);
    assert_no_crash(&result);
    let stuck = &result.steps[1];
    assert_eq!(
        event_kinds(stuck),
        ["app-not-responding", "app-relaunched", "violation"],
        "{stuck}"
    );
    let detail = stuck["events"][0]["detail"].as_str().unwrap_or_default();
    assert!(
        detail.contains("did not answer PAUSE") && detail.contains("its main thread is stuck"),
        "{detail}"
    );
    assert_eq!(stuck["state"]["window"]["kind"], "not-responding", "{stuck}");
    assert_eq!(result.steps[2]["state"]["window"]["kind"], "app");
    assert!(result.steps[2]["state"]["snapshots"]["screen"].is_string());
}
