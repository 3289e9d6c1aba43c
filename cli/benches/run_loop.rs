//! The step loop end to end: the real `uatu` binary against the in-process simulator at zero
//! latency, read back from the run's own `trace.jsonl` metrics and `summary.json`.
//!
//! Run: `cargo bench -p uatu-cli --bench run_loop` (release). Knobs (environment):
//! `RUN_LOOP_STEPS` (screenshots off, default 5000), `RUN_LOOP_SHOT_STEPS` (screenshots on,
//! default 1000), `RUN_LOOP_RSS_STEPS` (memory run, default 20000; 0 skips it),
//! `RUN_LOOP_ONLY` (`plain`, `shots` or `rss`), `UATU_BIN` (another binary to measure).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::Deserialize;

mod bench_common;
use bench_common::{Metrics, env_u64, run_dir, uatu_bin, workspace};

const PHASES: [&str; 6] = ["capture", "agent", "spec", "ltl", "plugins", "dispatch"];

#[derive(Deserialize)]
struct Record {
    #[serde(default)]
    metrics: Metrics,
    #[serde(default)]
    evaluated: bool,
    #[serde(default)]
    screenshot: Option<String>,
}

#[derive(Deserialize)]
struct Summary {
    steps: u64,
    wall_ms: u64,
}

fn run_command(steps: u64, screenshots: bool, output: &Path) -> Command {
    let mut command = Command::new(uatu_bin());
    command
        .current_dir(workspace())
        .args(["run", "--spec", "examples/folio/spec.ts", "--seed", "7"]);
    command.args([
        "--max-steps",
        &steps.to_string(),
        "--sim-latency",
        "0",
        "--output",
    ]);
    command.arg(output);
    if !screenshots {
        command.arg("--no-screenshots");
    }
    command.stdout(Stdio::null()).stderr(Stdio::piped());
    command
}

/// The one run directory under `output`.
fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

fn row(label: &str, values: &mut [u64]) {
    values.sort_unstable();
    let mean = values.iter().sum::<u64>() as f64 / values.len().max(1) as f64;
    println!(
        "| {label} | {} | {} | {} | {:.0} |",
        percentile(values, 50.0),
        percentile(values, 90.0),
        percentile(values, 99.0),
        mean
    );
}

/// Runs `uatu run` and reports steps/s and the per-step time split by phase.
fn loop_figures(steps: u64, screenshots: bool) {
    let output = tempfile::tempdir().expect("temp dir");
    let mut command = run_command(steps, screenshots, output.path());
    let started = Instant::now();
    let result = command.output().expect("uatu runs");
    let process_wall = started.elapsed();
    let code = result.status.code().unwrap_or(-1);
    assert!(
        code == 0 || code == 1,
        "uatu run failed ({code}): {}",
        String::from_utf8_lossy(&result.stderr)
    );
    let dir = run_dir(output.path());
    let summary: Summary =
        serde_json::from_slice(&fs::read(dir.join("summary.json")).expect("summary")).expect("summary json");
    // Through the trace reader: a compact trace's lines are deltas, not records.
    let records: Vec<Record> = uatu::trace::TraceReader::open(&dir)
        .expect("trace")
        .map(|record| {
            let value = serde_json::to_value(record.expect("record")).expect("json");
            serde_json::from_value(value).expect("record")
        })
        .collect();
    // A record carries the previous step's dispatch time: shift it back to its own step.
    let mut metrics: Vec<Metrics> = records.iter().map(|r| r.metrics).collect();
    for i in 0..metrics.len().saturating_sub(1) {
        metrics[i].dispatch_us = metrics[i + 1].dispatch_us;
    }
    metrics.pop(); // its dispatch is in no record
    let skipped = records.iter().filter(|r| !r.evaluated).count();

    println!(
        "\n### {} steps, screenshots {}\n",
        summary.steps,
        if screenshots { "on" } else { "off" }
    );
    println!(
        "wall {} ms in summary.json ({:.0} steps/s); whole process {:.0} ms; {} step(s) with the app gone",
        summary.wall_ms,
        summary.steps as f64 * 1000.0 / summary.wall_ms.max(1) as f64,
        process_wall.as_secs_f64() * 1000.0,
        skipped
    );
    println!("\n| per step, µs | p50 | p90 | p99 | mean |\n|---|---|---|---|---|");
    for (i, name) in PHASES.iter().enumerate() {
        row(name, &mut metrics.iter().map(|m| m.phase(i)).collect::<Vec<_>>());
    }
    let total: Vec<u64> = metrics.iter().map(|m| (0..6).map(|i| m.phase(i)).sum()).collect();
    let host: Vec<u64> = metrics
        .iter()
        .map(|m| m.spec_us + m.ltl_us + m.plugins_us)
        .collect();
    let device: Vec<u64> = metrics
        .iter()
        .map(|m| m.capture_us + m.agent_us + m.dispatch_us)
        .collect();
    row("device calls (capture+agent+dispatch)", &mut device.clone());
    row("host phases (spec+ltl+plugins)", &mut host.clone());
    row("all six phases", &mut total.clone());
    let mean_total = total.iter().sum::<u64>() as f64 / total.len().max(1) as f64;
    let mean_wall = summary.wall_ms as f64 * 1000.0 / summary.steps.max(1) as f64;
    println!(
        "\nwall per step (mean) {mean_wall:.0} µs; outside the six phases (record writing, choosing, \
         building the state, start-up): {:.0} µs",
        mean_wall - mean_total
    );

    if screenshots {
        let shots: Vec<PathBuf> = records
            .iter()
            .filter_map(|r| r.screenshot.as_ref())
            .map(|s| dir.join(s))
            .collect();
        let bytes: Vec<Vec<u8>> = shots.iter().filter_map(|p| fs::read(p).ok()).collect();
        let total_bytes: usize = bytes.iter().map(|b| b.len()).sum();
        let scratch = output.path().join("rewrite");
        fs::create_dir_all(&scratch).expect("scratch dir");
        let started = Instant::now();
        for (i, png) in bytes.iter().enumerate() {
            let path = scratch.join(format!("{i}.png"));
            let tmp = scratch.join(format!("{i}.png.tmp"));
            fs::write(&tmp, png).expect("write");
            fs::rename(&tmp, &path).expect("rename");
        }
        let write = started.elapsed();
        println!(
            "screenshots: {} files, mean {:.1} KB; writing them again (write + rename, as the trace \
             writer does): {:.0} µs each",
            bytes.len(),
            total_bytes as f64 / 1024.0 / bytes.len().max(1) as f64,
            write.as_secs_f64() * 1e6 / bytes.len().max(1) as f64
        );
    }
}

fn status_kb(pid: u32, field: &str) -> Option<u64> {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Peak RSS and the growth after the first 1,000 steps, sampling `/proc/<pid>/status`.
fn memory_figures(steps: u64) {
    let output = tempfile::tempdir().expect("temp dir");
    let mut command = run_command(steps, false, output.path());
    let mut child = command.spawn().expect("uatu runs");
    let pid = child.id();
    let mut samples: Vec<(u64, u64, u64)> = Vec::new(); // (trace bytes, VmRSS kB, VmHWM kB)
    let mut trace: Option<PathBuf> = None;
    loop {
        if let Ok(Some(_)) = child.try_wait() {
            break;
        }
        if trace.is_none() {
            trace = fs::read_dir(output.path())
                .ok()
                .and_then(|mut d| d.next())
                .and_then(|e| e.ok())
                .map(|e| e.path().join("trace.jsonl"));
        }
        let size = trace
            .as_ref()
            .and_then(|t| fs::metadata(t).ok())
            .map_or(0, |m| m.len());
        if let (Some(rss), Some(hwm)) = (status_kb(pid, "VmRSS:"), status_kb(pid, "VmHWM:")) {
            samples.push((size, rss, hwm));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let dir = run_dir(output.path());
    // The byte offset at which step 1,000 has been recorded (a compact trace's first line is its header).
    let text = fs::read(dir.join("trace.jsonl")).expect("trace");
    let header = usize::from(text.starts_with(b"{\"uatuTrace\""));
    let lines = text.iter().filter(|&&b| b == b'\n').count() - header;
    let mark = text
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .nth(999 + header)
        .map_or(0, |(i, _)| i as u64 + 1);
    let at_1000 = samples.iter().find(|s| s.0 >= mark).map_or(0, |s| s.1);
    let last = samples.last().copied().unwrap_or_default();
    let peak = samples.iter().map(|s| s.2).max().unwrap_or(0);
    println!("\n### memory, {lines} steps, screenshots off\n");
    println!("| measure | value |\n|---|---|");
    println!(
        "| peak RSS (VmHWM, last sample) | {:.1} MB |",
        peak as f64 / 1024.0
    );
    println!("| RSS after step 1,000 | {:.1} MB |", at_1000 as f64 / 1024.0);
    println!("| RSS at the end | {:.1} MB |", last.1 as f64 / 1024.0);
    println!(
        "| growth after step 1,000 | {:.1} MB |",
        (last.1 as f64 - at_1000 as f64) / 1024.0
    );
    println!(
        "| trace.jsonl | {:.1} MB ({} samples) |",
        text.len() as f64 / 1e6,
        samples.len()
    );
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else to parse.
    let only = std::env::var("RUN_LOOP_ONLY").unwrap_or_default();
    // Warm the compiled-provider cache so that no run pays the first Cranelift compile.
    if only.is_empty() || only == "plain" {
        loop_figures(50, false);
        loop_figures(env_u64("RUN_LOOP_STEPS", 5000), false);
    }
    if only.is_empty() || only == "shots" {
        loop_figures(env_u64("RUN_LOOP_SHOT_STEPS", 1000), true);
    }
    let rss_steps = env_u64("RUN_LOOP_RSS_STEPS", 20_000);
    if (only.is_empty() || only == "rss") && rss_steps > 0 {
        memory_figures(rss_steps);
    }
}
