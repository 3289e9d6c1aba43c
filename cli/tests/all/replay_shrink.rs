//! `uatu replay` and `uatu shrink` end to end: the real binary, the example Folio spec
//! and the simulator over real gRPC and a real SDK socket.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;
use uatu::trace::{StepRecord, read_steps};

use crate::run_folio::violated;

const SPEC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/folio/spec.ts");

fn uatu(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_uatu"))
        .args(args)
        .output()
        .expect("runs uatu")
}

fn json_of(out: &Output) -> Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}):\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// A zero-latency Folio run without screenshots; returns its summary and directory.
fn folio_run(output: &Path, seed: &str, steps: &str, bugs: &str) -> (Value, PathBuf) {
    let out = uatu(&[
        "run",
        "--spec",
        SPEC,
        "--json",
        "--output",
        &output.display().to_string(),
        "--seed",
        seed,
        "--max-steps",
        steps,
        "--sim-bugs",
        bugs,
        "--sim-latency",
        "0",
        "--no-screenshots",
    ]);
    let summary = json_of(&out);
    let run_dir = PathBuf::from(summary["run_dir"].as_str().expect("run_dir"));
    (summary, run_dir)
}

/// What must be the same in a replay: everything the step saw and decided (not its
/// timings, and not an event's message, which names the run's own socket).
fn comparable(record: &StepRecord) -> Value {
    let mut value = serde_json::to_value(record).expect("json");
    let object = value.as_object_mut().expect("object");
    object.remove("metrics");
    let kinds: Vec<Value> = record
        .events
        .iter()
        .map(|event| serde_json::to_value(event).expect("json")["kind"].clone())
        .collect();
    object.insert("events".into(), Value::Array(kinds));
    value
}

#[test]
fn a_replay_of_a_simulator_run_is_the_same_run_step_for_step() {
    let output = tempfile::tempdir().expect("temp dir");
    // Every bug on: violations, an app crash and its relaunch are all in 300 steps of seed 5.
    let (summary, run_dir) = folio_run(output.path(), "5", "300", "all");
    let out = uatu(&[
        "replay",
        &run_dir.display().to_string(),
        "--json",
        "--no-screenshots",
        "--output",
        &output.path().join("replays").display().to_string(),
    ]);
    let replayed = json_of(&out);
    assert_eq!(out.status.code(), Some(1), "{replayed}");
    let replay_dir = PathBuf::from(replayed["run_dir"].as_str().expect("run_dir"));

    let original = read_steps(&run_dir).expect("trace");
    let replay = read_steps(&replay_dir).expect("replay trace");
    assert_eq!(original.len(), 300);
    assert!(
        original.iter().any(|record| !record.evaluated),
        "the run should include an app crash"
    );
    assert_eq!(replay.len(), original.len());
    for (recorded, again) in original.iter().zip(&replay) {
        assert_eq!(comparable(recorded), comparable(again), "step {}", recorded.step);
    }
    assert_eq!(summary["properties"], replayed["properties"]);
    assert_eq!(replayed["stopped"], "max-steps");
    assert_eq!(replayed["rerun"], format!("uatu replay {}", run_dir.display()));
}

#[test]
fn replay_until_stops_after_observing_that_step() {
    let output = tempfile::tempdir().expect("temp dir");
    let (_, run_dir) = folio_run(output.path(), "5", "60", "none");
    let out = uatu(&[
        "replay",
        &run_dir.display().to_string(),
        "--until",
        "20",
        "--json",
        "--no-screenshots",
        "--output",
        &output.path().join("replays").display().to_string(),
    ]);
    let replayed = json_of(&out);
    let replay = read_steps(Path::new(replayed["run_dir"].as_str().expect("run_dir"))).expect("trace");
    assert_eq!(replay.len(), 21, "steps 0 to 20");
    assert_eq!(replay[20].action, None, "nothing dispatched after --until");
    let original = read_steps(&run_dir).expect("trace");
    assert_eq!(comparable(&original[19]), comparable(&replay[19]));
    assert_eq!(original[20].state, replay[20].state);
}
