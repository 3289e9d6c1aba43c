//! Per-call cost of plugins on a 300-node hierarchy (target: p50 ≤ 100 µs per call).
//!
//!     cargo bench -p uatu-cli --bench plugin_call              # release profile
//!     cargo bench -p uatu-cli --bench plugin_call --profile dev  # quicker to build
//!
//! Builds the example plugin first (as the tests do); the first-party ones are built into uatu.

mod bench_common;
#[path = "../tests/all/support/plugins.rs"]
#[allow(dead_code)] // each bench uses part of it
mod plugin_common;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use bench_common::percentile;
use plugin_common::{candidates, component, record, spec, state};
use uatu::plugin::{LoadOptions, PluginSet};

/// 4 + 3 * 99 = 301 nodes; `UATU_BENCH_ROWS` changes it.
fn rows() -> usize {
    std::env::var("UATU_BENCH_ROWS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(99)
}
const WARMUP: usize = 200;
const CALLS: usize = 2000;

fn report(name: &str, mut samples: Vec<Duration>) {
    let p50 = percentile(&mut samples, 0.5);
    let p99 = percentile(&mut samples, 0.99);
    println!(
        "{name:<44} p50 {:>7.1} µs   p99 {:>7.1} µs",
        p50.as_secs_f64() * 1e6,
        p99.as_secs_f64() * 1e6
    );
}

fn time(mut call: impl FnMut(u64)) -> Vec<Duration> {
    for step in 0..WARMUP {
        call(step as u64);
    }
    (0..CALLS)
        .map(|step| {
            let started = Instant::now();
            call((WARMUP + step) as u64);
            started.elapsed()
        })
        .collect()
}

fn main() {
    let run_dir = tempfile::tempdir().expect("temp dir");
    let options = LoadOptions {
        no_cache: true,
        ..LoadOptions::default()
    };
    let states: Vec<_> = (0..8)
        .map(|i| state(i, rows(), Some(vec![format!("probe-{i}")])))
        .collect();
    let nodes = states[0].hierarchy.descendants().count();
    println!(
        "hierarchy: {nodes} nodes, {} candidates, {CALLS} calls each",
        candidates().len()
    );
    let offered = candidates();

    let context = time(|step| {
        std::hint::black_box(uatu::plugin::context::step_context(&states[step as usize % 8]));
    });
    report("host: step context (no plugin call)", context);

    // The example strategy from its file, the first-party one built into uatu.
    for (path, name) in [
        (component("examples/plugins", "prefer_keys"), "prefer-keys"),
        (PathBuf::from("coverage-guided"), "coverage-guided"),
    ] {
        let specs = [spec(path, name, "")];
        let mut plugins = PluginSet::load(&specs, run_dir.path(), &options).expect("loads");
        let samples = time(|step| {
            let chosen = plugins
                .strategy_choose(&states[step as usize % 8], &offered)
                .expect("chooses");
            std::hint::black_box(chosen);
        });
        report(&format!("strategy_choose ({name})"), samples);
    }

    let specs = [spec(
        PathBuf::from("screen-signature"),
        "screen",
        "blank-detection = false",
    )];
    let mut plugins = PluginSet::load(&specs, run_dir.path(), &options).expect("loads");
    let samples = time(|step| {
        std::hint::black_box(
            plugins
                .extract(&states[step as usize % 8], None)
                .expect("extracts"),
        );
    });
    report("extract (screen-signature, no screenshot)", samples);

    let specs = [spec(PathBuf::from("junit"), "junit", "")];
    let mut plugins = PluginSet::load(&specs, run_dir.path(), &options).expect("loads");
    plugins
        .sink_run_start(&serde_json::json!({"seed": 1}))
        .expect("starts");
    let records: Vec<_> = states.iter().map(|s| record(s.clone(), None, &[])).collect();
    println!("trace record: {} bytes of JSON", records[0].1.len());
    let samples = time(|step| {
        let (record, line) = &records[step as usize % 8];
        // The line is the trace writer's, handed over; its clone stands for that move.
        plugins.sink_step(record, line.clone()).expect("takes the step");
    });
    report("sink_step (junit, full record with hierarchy)", samples);
}
