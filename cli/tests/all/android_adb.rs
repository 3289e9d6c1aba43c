//! `--device android` through the real ADB server: the real `uatu` binary starts the
//! real sidecar JAR, which drives a fake device's adbd (`sidecar-maestro`'s
//! `FakeDeviceMainKt`, speaking the ADB transport protocol) attached to a real
//! `adb` server of this test's own on a free port (never the default 5037, which
//! other programs on the machine may use). The app's SDK reaches the host through
//! the server's reverse forward. Each test's device is a copy of the built-in fake
//! device with the events the test is about (docs/devices.md, "The fake device").

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::cli::uatu;
use crate::support::{built_sidecar_jar, builtin_fake_device_copy};

/// Appended to every non-empty text of the app's screens: two-, three- and four-byte
/// UTF-8 characters, which the fake adbd's packets cut at arbitrary bytes.
const NON_ASCII: &str = " — Zürich Ünïcödé 日本語の口座 🎉💷";

/// A copy of the built-in fake device in `dir`, with `extra` lines in its
/// device.properties and every non-empty text of the app's screens ending in [`NON_ASCII`].
fn device_dir(dir: &Path, extra: &str) -> PathBuf {
    let device = builtin_fake_device_copy(dir);
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
    let properties = device.join("device.properties");
    let mut text = std::fs::read_to_string(&properties).expect("reads device.properties");
    text.push_str(extra);
    std::fs::write(&properties, text).expect("writes device.properties");
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
            .arg(built_sidecar_jar())
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

/// What one `uatu run` on `device` left: its exit code, stderr and trace records.
struct RunResult {
    code: i32,
    stderr: String,
    steps: Vec<Value>,
}

/// Runs [`SPEC`] for `steps` steps on `device` with `extra` flags.
fn run(device: &AttachedDevice, dir: &Path, steps: u32, extra: &[&str]) -> RunResult {
    let spec = dir.join("spec.ts");
    std::fs::write(&spec, SPEC).expect("writes the spec");
    let runs = dir.join("runs");
    let jar = built_sidecar_jar().display().to_string();
    let target = format!("android:{}", device.serial);
    let steps = steps.to_string();
    let mut args = vec![
        "run",
        "--spec",
        spec.to_str().expect("utf-8 path"),
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
    let steps = std::fs::read_dir(&runs)
        .ok()
        .and_then(|mut entries| entries.next())
        .and_then(Result::ok)
        .and_then(|entry| uatu::trace::read_steps(&entry.path()).ok())
        .unwrap_or_default()
        .iter()
        .map(|record| serde_json::to_value(record).expect("a record is JSON"))
        .collect();
    RunResult { code, stderr, steps }
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
    let result = run(&device, dir.path(), 5, &["--hierarchy", "sidecar"]);
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
    let result = run(&device, dir.path(), 20, &[]);
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
    let result = run(&device, dir.path(), 5, &[]);
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
