//! `examples/todomvc/spec.ts` against every TodoMVC implementation in
//! `../shared/apps/todomvc/examples`: the real `uatu` binary on the web device,
//! each implementation served by a local static server, N steps with a fixed seed.
//! Prints a Markdown table (implementation, steps/s, p50 step split into browser
//! and host time, properties violated, first violating step and its action).
//!
//! Run: `cargo bench -p uatu-cli --bench todomvc`. Knobs (environment):
//! `TODOMVC_STEPS` (default 300), `TODOMVC_SEED` (default 1), `TODOMVC_ONLY`
//! (comma-separated implementation names), `UATU_TODOMVC` (the todomvc folder),
//! `UATU_BIN` (another binary to measure).

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

/// The folder that holds an implementation's `index.html`.
fn app_root(example: &Path) -> PathBuf {
    let dist = example.join("dist");
    if dist.join("index.html").exists() {
        dist
    } else {
        example.to_path_buf()
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
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    println!(
        "| implementation | steps | steps/s | p50 step (browser + host) | violated properties (first step, action) |"
    );
    println!("|---|---|---|---|---|");
    for example in examples {
        let name = example
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let root = app_root(&example);
        let addr = runtime.block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
            let addr = listener.local_addr().expect("address");
            let app = axum::Router::new().fallback_service(tower_http::services::ServeDir::new(root));
            tokio::spawn(async move { axum::serve(listener, app).await });
            addr
        });
        let output = tempfile::tempdir().expect("temp dir");
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
            .args(["--url", &format!("http://{addr}/")])
            .args(["--max-steps", &steps.to_string(), "--seed", &seed.to_string()])
            .arg("--output")
            .arg(output.path())
            .output()
            .expect("run uatu");
        let Some(dir) = std::fs::read_dir(output.path())
            .ok()
            .and_then(|mut d| d.next())
            .map(|_| run_dir(output.path()))
        else {
            let stderr = String::from_utf8_lossy(&status.stderr);
            println!(
                "| {name} | 0 | – | – | did not run: {} |",
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
                println!("| {name} | – | – | – | no summary |");
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
        println!(
            "| {name} | {}{} | {:.1} | {:.1} ms ({:.1} + {:.1}) | {}{} |",
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
