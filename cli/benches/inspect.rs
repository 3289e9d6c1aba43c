//! `uatu inspect` on a 20,000-step run: how long until the first screen (the run
//! view with step 0's record and screenshot) is visible in headless Chromium, and
//! until the step list and timelines (the index of every step) are drawn; and the
//! size of `uatu report` for a real 2,000-step Folio run with the bugs on.
//!
//! The 20,000-step run is a real 200-step Folio run (simulator, bugs on) whose
//! records are written again through the trace writer, renumbered, up to 20,000
//! steps; its screenshots are the 200 real ones, referred to cyclically.
//!
//! Run: `cargo bench -p uatu-cli --bench inspect`. Knobs (environment):
//! `INSPECT_STEPS` (default 20000), `INSPECT_LOADS` (page loads timed, default 5),
//! `INSPECT_REPORT_STEPS` (the report's run, default 2000; 0 skips it), `UATU_BIN`.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use chromiumoxide::Browser;
use futures::StreamExt;
use uatu::trace::{self, RunDir};
use uatu_web::chromium::{self, Chromium};

mod bench_common;
use bench_common::{env_u64, percentile, run_dir, uatu_bin, workspace};

fn folio_run(steps: u64, output: &Path) -> PathBuf {
    let status = Command::new(uatu_bin())
        .current_dir(workspace())
        .args([
            "run",
            "--spec",
            "examples/folio/spec.ts",
            "--seed",
            "7",
            "--sim-latency",
            "0",
        ])
        .args(["--max-steps", &steps.to_string(), "--output"])
        .arg(output)
        .stdout(Stdio::null())
        .status()
        .expect("runs uatu");
    assert!(matches!(status.code(), Some(0 | 1)), "uatu run failed: {status}");
    run_dir(output)
}

/// A run of `steps` steps made of the records of `base`, repeated and renumbered.
fn long_run(base: &Path, steps: u64, output: &Path) -> PathBuf {
    let records = trace::read_steps(base).expect("the base trace");
    let started = time::OffsetDateTime::now_utc();
    let mut run = RunDir::create(output, started, 7, trace::TraceFormat::Compact).expect("a run dir");
    for entry in std::fs::read_dir(base.join(trace::SCREENSHOTS_DIR)).expect("screenshots") {
        let entry = entry.expect("entry");
        std::fs::copy(
            entry.path(),
            run.path().join(trace::SCREENSHOTS_DIR).join(entry.file_name()),
        )
        .expect("copies");
    }
    let time_step = records.last().map(|r| r.time + 300).unwrap_or(1000);
    for step in 0..steps {
        let lap = step / records.len() as u64;
        let mut record = records[(step % records.len() as u64) as usize].clone();
        record.step = step;
        record.state.step = step;
        record.time += lap * time_step;
        record.state.time = record.time;
        run.append_step(&record).expect("writes a step");
    }
    let meta: trace::Meta<uatu::devices::DeviceOptions> =
        serde_json::from_slice(&std::fs::read(base.join(trace::META_FILE)).expect("meta"))
            .expect("meta JSON");
    run.write_meta(&meta).expect("writes meta");
    let mut summary: trace::Summary =
        serde_json::from_slice(&std::fs::read(base.join(trace::SUMMARY_FILE)).expect("summary"))
            .expect("summary JSON");
    summary.steps = steps;
    run.write_summary(&summary).expect("writes the summary");
    run.path().to_path_buf()
}

struct Server(Child, String);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn inspect(runs: &Path) -> Server {
    use std::io::BufRead;
    let mut child = Command::new(uatu_bin())
        .arg("inspect")
        .arg(runs)
        .args(["--port", "0", "--no-open"])
        .stdout(Stdio::piped())
        .spawn()
        .expect("starts uatu inspect");
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("the banner");
    let address = line
        .split("http://")
        .nth(1)
        .and_then(|r| r.split('/').next())
        .expect("an address")
        .to_owned();
    Server(child, address)
}

fn main() {
    let steps = env_u64("INSPECT_STEPS", 20_000);
    let loads = env_u64("INSPECT_LOADS", 5).max(1);
    let report_steps = env_u64("INSPECT_REPORT_STEPS", 2000);
    let scratch = tempfile::tempdir().expect("tempdir");

    let base = folio_run(200, &scratch.path().join("base"));
    let runs = scratch.path().join("runs");
    let made = Instant::now();
    let long = long_run(&base, steps, &runs);
    let trace_bytes = std::fs::metadata(long.join(trace::TRACE_FILE))
        .map(|m| m.len())
        .unwrap_or(0);
    println!(
        "inspect: a {steps}-step run ({:.0} MB of trace.jsonl) written in {:.1} s",
        trace_bytes as f64 / 1e6,
        made.elapsed().as_secs_f64()
    );
    let id = long
        .file_name()
        .and_then(|n| n.to_str())
        .expect("an id")
        .to_owned();
    let server = inspect(&runs);

    let chromium = Chromium::launch(&chromium::executable(None), (1400, 900)).expect("launches Chromium");
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let (mut first, mut full) = (Vec::new(), Vec::new());
    runtime.block_on(async {
        let (browser, mut handler) = Browser::connect(chromium.websocket.clone()).await.expect("connects");
        let events = tokio::spawn(async move { while handler.next().await.is_some() {} });
        for load in 0..loads {
            let url = format!("http://{}/runs/{id}", server.1);
            let start = Instant::now();
            let page = browser.new_page(url).await.expect("opens the page");
            let mut shown = None;
            loop {
                let ready = page
                    .evaluate_expression(
                        "[document.body.dataset.ready === '0', document.querySelectorAll('.timeline').length > 0]",
                    )
                    .await
                    .ok()
                    .and_then(|r| r.value().cloned())
                    .unwrap_or_default();
                if shown.is_none() && ready[0] == true {
                    shown = Some(start.elapsed());
                }
                if ready[0] == true && ready[1] == true {
                    break;
                }
                assert!(start.elapsed() < Duration::from_secs(120), "the page never showed step 0");
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            let all = start.elapsed();
            let shown = shown.unwrap_or(all);
            println!(
                "  load {load}: first screen {:.0} ms, step list + timelines {:.0} ms{}",
                shown.as_secs_f64() * 1e3,
                all.as_secs_f64() * 1e3,
                if load == 0 { " (cold: the server indexes the run)" } else { "" }
            );
            first.push(shown);
            full.push(all);
            page.close().await.expect("closes the page");
        }
        drop(browser);
        events.abort();
    });
    drop(chromium);
    drop(server);
    println!(
        "inspect: {steps} steps, first screen median {:.0} ms (max {:.0} ms); step list + timelines median {:.0} ms, cold {:.0} ms",
        percentile(&mut first.clone(), 0.5).as_secs_f64() * 1e3,
        first.iter().max().copied().unwrap_or_default().as_secs_f64() * 1e3,
        percentile(&mut full.clone(), 0.5).as_secs_f64() * 1e3,
        full[0].as_secs_f64() * 1e3
    );

    if report_steps > 0 {
        let run = folio_run(report_steps, &scratch.path().join("report-run"));
        let summary: trace::Summary =
            serde_json::from_slice(&std::fs::read(run.join(trace::SUMMARY_FILE)).expect("summary"))
                .expect("summary JSON");
        let report = scratch.path().join("report.html");
        let stats = uatu::inspect::write_report(&run, &report, uatu::inspect::ReportOptions::default())
            .expect("the report");
        let trace_bytes = std::fs::metadata(run.join(trace::TRACE_FILE))
            .map(|m| m.len())
            .unwrap_or(0);
        println!(
            "report: {report_steps}-step Folio run, {} properties violated: {:.2} MB ({} steps, {} distinct screenshots inlined; the trace is {:.0} MB)",
            summary.counts.violated,
            stats.bytes as f64 / 1e6,
            stats.steps,
            stats.screenshots,
            trace_bytes as f64 / 1e6
        );
    }
}
