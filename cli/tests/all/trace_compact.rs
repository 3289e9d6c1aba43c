//! The compact trace written by the real binary against the simulator: nothing
//! the device sent is lost, a page of steps reads from the nearest keyframe, and
//! a run killed mid-write leaves a trace that reads back and checks.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use std::hash::{Hash, Hasher};

use uatu::trace::{Event, StepMetrics, StepRecord, TraceIndex, TraceReader, read_step_range, read_steps};

use crate::support::folio::{SPEC, check, run_spec};

/// Runs the Folio spec with every bug on for `steps` steps; returns the run directory.
fn run(output: &Path, steps: &str, extra: &[&str]) -> PathBuf {
    let mut args = vec!["--seed", "5", "--sim-latency", "0", "--max-steps", steps];
    args.extend_from_slice(extra);
    run_spec(SPEC, output, &args).2
}

/// A record with what differs between two runs of the same seed set aside: the
/// time each phase took, the path of the process's own SDK socket in a
/// disconnection's reason, and where the screenshot was stored (a hash of its
/// bytes is compared instead).
fn comparable(run_dir: &Path, mut record: StepRecord) -> (StepRecord, Option<(usize, u64)>) {
    record.metrics = StepMetrics {
        device_cpu_percent: record.metrics.device_cpu_percent,
        device_memory_bytes: record.metrics.device_memory_bytes,
        ..StepMetrics::default()
    };
    for event in &mut record.events {
        if let Event::AppDisconnected { reason } = event
            && let Some(socket) = reason.find("/tmp/uatu-agent-")
        {
            reason.truncate(socket);
        }
    }
    let png = record.screenshot.take().map(|path| {
        let bytes = std::fs::read(run_dir.join(path)).expect("the screenshot a record names exists");
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        bytes.hash(&mut hasher);
        (bytes.len(), hasher.finish())
    });
    (record, png)
}

#[test]
fn a_compact_trace_rebuilds_every_step_a_full_trace_of_the_same_run_holds() {
    let output = tempfile::tempdir().expect("temp dir");
    let full_dir = run(&output.path().join("full"), "400", &["--trace-format", "full"]);
    let compact_dir = run(&output.path().join("compact"), "400", &[]);

    let full = read_steps(&full_dir).expect("the full trace reads");
    let compact = read_steps(&compact_dir).expect("the compact trace reads");
    assert_eq!(full.len(), 400);
    assert_eq!(compact.len(), full.len());
    for (whole, rebuilt) in full.iter().zip(&compact) {
        assert_eq!(
            comparable(&compact_dir, rebuilt.clone()),
            comparable(&full_dir, whole.clone()),
            "step {}",
            whole.step
        );
        let shot = rebuilt.screenshot.as_deref().expect("a screenshot");
        assert!(
            shot.starts_with("screenshots/") && shot.ends_with(".png"),
            "{shot}"
        );
    }

    // Each distinct screen is stored once, and the trace is a fraction of the full one.
    let count = |dir: &Path| {
        std::fs::read_dir(dir.join("screenshots"))
            .expect("screenshots")
            .count()
    };
    assert!(
        count(&compact_dir) < 400 / 2,
        "{} screenshots",
        count(&compact_dir)
    );
    let size = |dir: &Path, file: &str| std::fs::metadata(dir.join(file)).map_or(0, |m| m.len());
    let jsonl = |dir: &Path| size(dir, "trace.jsonl") + size(dir, "hierarchies.jsonl");
    assert_eq!(size(&full_dir, "hierarchies.jsonl"), 0);
    assert!(
        jsonl(&compact_dir) * 5 < jsonl(&full_dir),
        "{} B of JSONL against {} B",
        jsonl(&compact_dir),
        jsonl(&full_dir)
    );
    let first_line = std::fs::read_to_string(compact_dir.join("trace.jsonl")).expect("trace");
    let header: Value = serde_json::from_str(first_line.lines().next().expect("a line")).expect("json");
    assert_eq!(header["uatuTrace"], 3);

    // A page from the middle, across a keyframe, reads as the same steps.
    for dir in [&compact_dir, &full_dir] {
        let index = TraceIndex::build(dir).expect("indexes");
        assert_eq!(index.records(), 400);
        assert_eq!(index.last_step(), Some(399));
        let page = read_step_range(dir, &index, 195, 215).expect("a page reads");
        assert_eq!(page.len(), 20);
        for (record, rebuilt) in page.into_iter().zip(&compact[195..215]) {
            assert_eq!(
                comparable(dir, record).0,
                comparable(&compact_dir, rebuilt.clone()).0
            );
        }
    }

    // `uatu check` finds the same verdicts in both.
    let properties = |dir: &Path| check(dir).1["properties"].clone();
    assert_eq!(properties(&compact_dir), properties(&full_dir));
}

#[test]
fn a_compact_run_killed_mid_write_reads_back_whole_and_checks() {
    let output = tempfile::tempdir().expect("temp dir");
    let mut child = Command::new(env!("CARGO_BIN_EXE_uatu"))
        .args(["run", "--spec", SPEC, "--seed", "6", "--max-steps", "100000"])
        .args(["--sim-latency", "0", "--output"])
        .arg(output.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("starts uatu");
    // Past a few keyframes, then SIGKILL wherever the writer happens to be.
    let run_dir = loop {
        let found = std::fs::read_dir(output.path())
            .ok()
            .and_then(|mut dirs| dirs.next())
            .and_then(Result::ok)
            .map(|dir| dir.path());
        if let Some(dir) = found.filter(|d| TraceIndex::build(d).is_ok_and(|index| index.records() > 250)) {
            break dir;
        }
        assert!(child.try_wait().expect("status").is_none(), "uatu ended early");
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    child.kill().expect("SIGKILL");
    child.wait().expect("reaped");

    let index = TraceIndex::build(&run_dir).expect("indexes");
    let mut reader = TraceReader::open(&run_dir).expect("opens");
    let steps: Vec<u64> = reader
        .by_ref()
        .map(|r| r.expect("every complete record resolves").step)
        .collect();
    assert_eq!(
        steps.len() as u64,
        index.records(),
        "every complete line is a step"
    );
    assert!(
        steps.iter().enumerate().all(|(i, &s)| s == i as u64),
        "whole steps in order"
    );
    assert!(
        !run_dir.join("summary.json").exists(),
        "a killed run has no summary"
    );
    let (_, report) = check(&run_dir);
    assert_eq!(report["steps"].as_u64(), Some(steps.len() as u64));
}

#[test]
fn a_compact_trace_of_version_2_reads_as_the_full_trace_of_the_same_run() {
    // Both written by uatu at a0301e9 (compact version 2: each hierarchy whole, by
    // sha256): `uatu run --spec examples/folio/spec.ts --seed 5 --max-steps 3
    // --sim-latency 0 --no-screenshots`, once with `--trace-format full`.
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/trace-v2");
    let (compact_dir, full_dir) = (fixtures.join("compact"), fixtures.join("full"));
    let header = std::fs::read_to_string(compact_dir.join("trace.jsonl")).expect("the fixture");
    assert!(header.starts_with("{\"uatuTrace\":2,"));
    let full = read_steps(&full_dir).expect("the full trace reads");
    let compact = read_steps(&compact_dir).expect("the version 2 trace reads");
    assert_eq!(full.len(), 3);
    assert_eq!(compact.len(), full.len());
    for (whole, rebuilt) in full.into_iter().zip(compact) {
        assert_eq!(comparable(&compact_dir, rebuilt), comparable(&full_dir, whole));
    }
    let index = TraceIndex::build(&compact_dir).expect("indexes");
    assert_eq!(
        read_step_range(&compact_dir, &index, 1, 3).expect("a page").len(),
        2
    );
}
