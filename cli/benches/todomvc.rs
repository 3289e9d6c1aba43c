//! `examples/todomvc/spec.ts` against every TodoMVC implementation in
//! `../shared/apps/todomvc/examples`: the real `uatu` binary on the web device,
//! each implementation served by a local static server, N steps with a fixed seed.
//! Prints a Markdown table (implementation, steps/s, p50 step split into browser
//! and host time, properties violated, first violating step and its action).
//!
//! The whole todomvc folder is served and each implementation opened at
//! `/examples/<name>/<entry>/`, as todomvc.com serves them: some reach outside
//! their entry folder (`../node_modules`) or use absolute paths (emberjs).
//!
//! Run: `cargo bench -p uatu-cli --bench todomvc`. Knobs (environment):
//! `TODOMVC_STEPS` (default 300), `TODOMVC_SEED` (default 1), `TODOMVC_ONLY`
//! (comma-separated implementation names), `UATU_TODOMVC` (the todomvc folder),
//! `UATU_BIN` (another binary to measure), `TODOMVC_RUNS` (keep the run
//! directories there instead of in a temporary one), `TODOMVC_SHRINK` (a
//! `uatu shrink --budget`, e.g. `60s`: shrink each implementation's first
//! violation and add the reproducer's length to the table).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde::Deserialize;

mod bench_common;
use bench_common::{env_u64, percentile, run_dir, uatu_bin, workspace};

#[derive(Deserialize)]
struct Property {
    name: String,
    verdict: String,
    #[serde(default)]
    first_violation_step: Option<u64>,
    #[serde(default)]
    led_by: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct Summary {
    steps: u64,
    wall_ms: u64,
    properties: Vec<Property>,
    stopped: String,
    #[serde(default)]
    counts: serde_json::Value,
}

fn todomvc() -> PathBuf {
    std::env::var_os("UATU_TODOMVC")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join("../shared/apps/todomvc"))
}

/// Where an implementation's built `index.html` is, relative to its folder: the
/// build output when it has one (angular's `dist/browser`, emberjs's
/// `todomvc/dist`, angular-dart's `web`, duel's `www`), else the folder itself.
fn app_entry(example: &Path) -> Option<&'static str> {
    ["dist/browser", "dist", "todomvc/dist", "web", "www", ""]
        .into_iter()
        .find(|entry| example.join(entry).join("index.html").is_file())
}

/// The first violated property's reproducer: `uatu shrink --budget <budget>`;
/// its length (script steps, of which actions) from the original's, or why there is none.
fn shrink(run: &Path, budget: &str) -> String {
    let output = Command::new(uatu_bin())
        .current_dir(workspace())
        .arg("shrink")
        .arg(run)
        .args(["--budget", budget, "--no-screenshots", "--json"])
        .output()
        .expect("run uatu shrink");
    let report: Option<serde_json::Value> = serde_json::from_slice(&output.stdout).ok();
    match report {
        Some(r) if r["length"].is_u64() => format!(
            "{} steps ({} actions) from {}{}",
            r["length"],
            r["actions"],
            r["original_length"],
            if r["ended"] == "done" {
                String::new()
            } else {
                format!(", {}", r["ended"].as_str().unwrap_or("?"))
            }
        ),
        _ => format!(
            "not shrunk: {}",
            String::from_utf8_lossy(&output.stderr)
                .lines()
                .last()
                .unwrap_or_default()
        ),
    }
}

fn main() {
    let steps = env_u64("TODOMVC_STEPS", 300);
    let seed = env_u64("TODOMVC_SEED", 1);
    let only: Option<Vec<String>> = std::env::var("TODOMVC_ONLY")
        .ok()
        .map(|v| v.split(',').map(str::to_owned).collect());
    let mut examples: Vec<PathBuf> = std::fs::read_dir(todomvc().join("examples"))
        .expect("the TodoMVC examples (set UATU_TODOMVC)")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .filter(|p| only.as_ref().is_none_or(|o| o.iter().any(|n| p.ends_with(n))))
        .collect();
    examples.sort();
    let shrink_budget = std::env::var("TODOMVC_SHRINK").ok();
    let kept_runs = std::env::var_os("TODOMVC_RUNS").map(PathBuf::from);
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let addr = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("address");
        let app = axum::Router::new().fallback_service(tower_http::services::ServeDir::new(todomvc()));
        tokio::spawn(async move { axum::serve(listener, app).await });
        addr
    });
    println!(
        "| implementation | steps | steps/s | p50 step (browser + host) | violated properties (first step, action) | reproducer of the first |"
    );
    println!("|---|---|---|---|---|---|");
    for example in examples {
        let name = example
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let Some(entry) = app_entry(&example) else {
            println!("| {name} | 0 | – | – | no index.html (not built) | – |");
            continue;
        };
        let url = format!("http://{addr}/examples/{name}/{entry}");
        let url = if url.ends_with('/') {
            url
        } else {
            format!("{url}/")
        };
        let temporary = tempfile::tempdir().expect("temp dir");
        let output = match &kept_runs {
            Some(runs) => runs.join(&name),
            None => temporary.path().to_path_buf(),
        };
        if kept_runs.is_some() {
            // This implementation's runs of an earlier bench: the run read below must be this one.
            let _ = std::fs::remove_dir_all(&output);
        }
        std::fs::create_dir_all(&output).expect("the runs folder");
        let status = Command::new(uatu_bin())
            .current_dir(workspace())
            .args([
                "run",
                "--spec",
                "examples/todomvc/spec.ts",
                "--device",
                "web",
                "--no-screenshots",
                "--json",
            ])
            .args(["--url", &url])
            .args(["--max-steps", &steps.to_string(), "--seed", &seed.to_string()])
            .arg("--output")
            .arg(&output)
            .output()
            .expect("run uatu");
        let Some(dir) = std::fs::read_dir(&output)
            .ok()
            .and_then(|mut d| d.next())
            .map(|_| run_dir(&output))
        else {
            let stderr = String::from_utf8_lossy(&status.stderr);
            println!(
                "| {name} | 0 | – | – | did not run: {} | – |",
                stderr.lines().last().unwrap_or_default()
            );
            continue;
        };
        let summary: Summary = match std::fs::read(dir.join("summary.json"))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
        {
            Some(summary) => summary,
            None => {
                println!("| {name} | – | – | – | no summary | – |");
                continue;
            }
        };
        let Ok(trace) = uatu::trace::TraceReader::open(&dir) else {
            continue;
        };
        let mut browser = Vec::new();
        let mut host = Vec::new();
        let mut total = Vec::new();
        for record in trace.map_while(Result::ok).skip(1) {
            let m = &record.metrics;
            let b = Duration::from_micros(m.capture_us + m.agent_us + m.dispatch_us);
            let h = Duration::from_micros(m.spec_us + m.ltl_us + m.plugins_us);
            browser.push(b);
            host.push(h);
            total.push(b + h);
        }
        let p50 = |v: &mut Vec<Duration>| {
            if v.is_empty() {
                0.0
            } else {
                percentile(v, 0.5).as_secs_f64() * 1000.0
            }
        };
        let violated: Vec<String> = summary
            .properties
            .iter()
            .filter(|p| p.verdict == "violated")
            .map(|p| {
                let action = p
                    .led_by
                    .as_ref()
                    .and_then(|a| a.get("generator").and_then(|g| g.as_str()).map(str::to_owned))
                    .unwrap_or_default();
                format!(
                    "{} ({}, {action})",
                    p.name,
                    p.first_violation_step.map_or("–".into(), |s| s.to_string())
                )
            })
            .collect();
        let crashes = summary
            .counts
            .get("app_crashes")
            .and_then(|c| c.as_u64())
            .unwrap_or(0);
        let reproducer = match (&shrink_budget, violated.is_empty()) {
            (_, true) => "–".to_string(),
            (Some(budget), false) => shrink(&dir, budget),
            (None, false) => "not shrunk".to_string(),
        };
        println!(
            "| {name} | {}{} | {:.1} | {:.1} ms ({:.1} + {:.1}) | {}{} | {reproducer} |",
            summary.steps,
            if summary.stopped == "max-steps" {
                String::new()
            } else {
                format!(" ({})", summary.stopped)
            },
            summary.steps as f64 / (summary.wall_ms as f64 / 1000.0),
            p50(&mut total),
            p50(&mut browser),
            p50(&mut host),
            if violated.is_empty() {
                "none".to_string()
            } else {
                violated.join("; ")
            },
            if crashes > 0 {
                format!(" · {crashes} app crashes")
            } else {
                String::new()
            },
        );
    }
}
