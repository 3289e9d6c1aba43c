//! Shrinking against the simulator's planted bugs: each bug alone, one run per seed, then
//! `uatu shrink` of the run's first violated property.
//!
//! Each run is the real `uatu` binary on `examples/folio/spec.ts` against the built-in
//! simulator at zero latency, no screenshots, with only that bug on; the shrink is
//! `uatu shrink RUN_DIR --json` (default budget and retries), whose report gives the
//! reproducer's length, the steps up to the violation, the candidates replayed and the
//! wall time. The shrunk length is compared with the bug's shortest known reproducer
//! (`uatu_sim::Bug::shortest_reproducer`).
//!
//! Run: `nice -n 10 cargo bench --bench shrink` (release). Knobs (environment):
//! `SHRINK_BUGS` (comma-separated bug names, default all six), `SHRINK_SEEDS` (how many seeds,
//! default 10), `SHRINK_FIRST_SEED` (default 1), `SHRINK_STEPS` (steps per run, default 3000),
//! `UATU_BIN` (another binary). Runs and shrinks go one at a time: wall times are measured.

mod bench_common;

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Instant;

use bench_common::{env_u64, median, uatu_bin, workspace};
use serde::Deserialize;
use uatu_sim::Bug;

/// `uatu run --json`'s summary: where the run went.
#[derive(Deserialize)]
struct RunSummary {
    run_dir: String,
}

/// `uatu shrink --json`'s report (the fields used here).
#[derive(Deserialize, Clone)]
struct ShrinkReport {
    property: String,
    original_step: u64,
    original_length: usize,
    length: usize,
    tried: usize,
    wall_ms: u64,
    ended: String,
}

/// One bug and seed: the run's first violated property shrunk, or nothing violated.
struct Outcome {
    seed: u64,
    report: Option<ShrinkReport>,
}

fn uatu(args: &[&str]) -> std::process::Output {
    Command::new(uatu_bin())
        .current_dir(workspace())
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("uatu runs")
}

/// Runs `bug` alone for `steps` steps with `seed`, then shrinks what it violated first.
fn measure(bug: Bug, seed: u64, steps: u64, scratch: &std::path::Path) -> Outcome {
    let output = scratch.join(format!("{}-{seed}", bug.name()));
    let output = output.display().to_string();
    let run = uatu(&[
        "run",
        "--spec",
        "examples/folio/spec.ts",
        "--json",
        "--seed",
        &seed.to_string(),
        "--max-steps",
        &steps.to_string(),
        "--sim-bugs",
        bug.name(),
        "--sim-latency",
        "0",
        "--no-screenshots",
        "--output",
        &output,
    ]);
    // 0: nothing violated; 1: a violation, what is measured.
    match run.status.code() {
        Some(0) => return Outcome { seed, report: None },
        Some(1) => {}
        other => panic!(
            "{bug} seed {seed}: uatu run failed ({other:?}): {}",
            String::from_utf8_lossy(&run.stderr)
        ),
    }
    let summary: RunSummary = serde_json::from_slice(&run.stdout).expect("uatu run --json");
    let run_dir = PathBuf::from(summary.run_dir);
    let shrink = uatu(&["shrink", &run_dir.display().to_string(), "--json"]);
    assert_eq!(
        shrink.status.code(),
        Some(1),
        "{bug} seed {seed}: the reproducer should violate: {}",
        String::from_utf8_lossy(&shrink.stderr)
    );
    let report: ShrinkReport = serde_json::from_slice(&shrink.stdout).expect("uatu shrink --json");
    // The run and its shrunk copy are large; keep the scratch directory small.
    let _ = std::fs::remove_dir_all(&output);
    Outcome {
        seed,
        report: Some(report),
    }
}

fn range(values: &[f64]) -> String {
    let low = values.iter().copied().fold(f64::INFINITY, f64::min);
    let high = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    format!("{low:.0}–{high:.0}")
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else to parse.
    let seeds = env_u64("SHRINK_SEEDS", 10);
    let first = env_u64("SHRINK_FIRST_SEED", 1);
    let steps = env_u64("SHRINK_STEPS", 3000);
    let bugs: Vec<Bug> = match std::env::var("SHRINK_BUGS") {
        Ok(names) if !names.trim().is_empty() => names
            .split(',')
            .map(|name| name.trim().parse().expect("SHRINK_BUGS: a planted bug's name"))
            .collect(),
        _ => Bug::ALL.to_vec(),
    };
    let scratch = tempfile::tempdir().expect("temp dir");
    println!(
        "\n### shrink: {} bug(s) × seeds {first}..={} × {steps} steps, zero latency\n",
        bugs.len(),
        first + seeds - 1
    );
    let started = Instant::now();
    let mut results: Vec<(Bug, Vec<Outcome>)> = Vec::new();
    for &bug in &bugs {
        let mut outcomes = Vec::new();
        for seed in first..first + seeds {
            let outcome = measure(bug, seed, steps, scratch.path());
            match &outcome.report {
                Some(r) => eprintln!(
                    "{bug} seed {seed}: {} violated at step {}, {} → {} steps, {} candidates, {} ms, {}",
                    r.property, r.original_step, r.original_length, r.length, r.tried, r.wall_ms, r.ended
                ),
                None => eprintln!("{bug} seed {seed}: no violation in {steps} steps"),
            }
            outcomes.push(outcome);
        }
        results.push((bug, outcomes));
    }

    println!(
        "| bug | shrunk / runs | violation step: median (range) | shrunk length: median (range) | shortest known | median / shortest | reduction, median | candidates, median | wall time: median (max) | ended by budget |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let mut late_reductions = Vec::new();
    let mut verdicts = Vec::new();
    for (bug, outcomes) in &results {
        let reports: Vec<&ShrinkReport> = outcomes.iter().filter_map(|o| o.report.as_ref()).collect();
        if reports.is_empty() {
            println!("| `{bug}` | 0/{} | | | | | | | | |", outcomes.len());
            verdicts.push(format!("{bug}: no run violated a property"));
            continue;
        }
        let mut violation: Vec<f64> = reports.iter().map(|r| r.original_step as f64).collect();
        let mut length: Vec<f64> = reports.iter().map(|r| r.length as f64).collect();
        let mut reduction: Vec<f64> = reports
            .iter()
            .map(|r| 1.0 - r.length as f64 / r.original_length.max(1) as f64)
            .collect();
        let mut tried: Vec<f64> = reports.iter().map(|r| r.tried as f64).collect();
        let mut wall: Vec<f64> = reports.iter().map(|r| r.wall_ms as f64 / 1000.0).collect();
        let budget = reports.iter().filter(|r| r.ended != "done").count();
        late_reductions.extend(
            reports
                .iter()
                .filter(|r| r.original_step > 500)
                .map(|r| 1.0 - r.length as f64 / r.original_length.max(1) as f64),
        );
        let shortest = bug.shortest_reproducer();
        let median_length = median(&mut length);
        let ratio = median_length / shortest as f64;
        let median_wall = median(&mut wall);
        println!(
            "| `{bug}` | {}/{} | {:.0} ({}) | {median_length} ({}) | {shortest} | {ratio:.2}× | {:.1} % | {:.0} | {median_wall:.1} s ({:.1} s) | {budget} |",
            reports.len(),
            outcomes.len(),
            median(&mut violation),
            range(&violation),
            range(&length),
            100.0 * median(&mut reduction),
            median(&mut tried),
            wall.iter().copied().fold(0.0, f64::max),
        );
        verdicts.push(format!(
            "{bug}: length {ratio:.2}× the shortest known (goal ≤ 1.5×: {}), median wall {median_wall:.1} s (goal ≤ 30 s: {})",
            if ratio <= 1.5 { "met" } else { "not met" },
            if median_wall <= 30.0 { "met" } else { "not met" },
        ));
        let seeds_without: Vec<u64> = outcomes
            .iter()
            .filter(|o| o.report.is_none())
            .map(|o| o.seed)
            .collect();
        if !seeds_without.is_empty() {
            verdicts.push(format!("{bug}: no violation with seeds {seeds_without:?}"));
        }
    }
    println!();
    for verdict in verdicts {
        println!("- {verdict}");
    }
    if late_reductions.is_empty() {
        println!("- no violation came after step 500: the reduction goal is not measured");
    } else {
        let count = late_reductions.len();
        let reduction = 100.0 * median(&mut late_reductions);
        println!(
            "- reduction over the {count} runs violated after step 500: median {reduction:.1} % (goal ≥ 95 %: {})",
            if reduction >= 95.0 { "met" } else { "not met" }
        );
    }
    println!("total wall {:.0} s", started.elapsed().as_secs_f64());
}
