//! The step loop: `uatu run`.
//!
//! `engine` runs one exploration; `strategy` and `target` choose and resolve
//! actions; `verify` checks properties (shared with `uatu check`); `report`
//! prints what a person reads at the end.

pub mod check;
pub mod engine;
pub mod report;
pub mod strategy;
pub mod target;
pub mod verify;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::cli::RunArgs;
use crate::config::{FileConfig, RunConfig};
use crate::exit::{self, Status};
use crate::trace::Summary;

pub fn command(args: RunArgs) -> anyhow::Result<Status> {
    let file = FileConfig::load(args.config.as_deref()).map_err(exit::usage)?;
    let config = RunConfig::resolve(&args, file).map_err(exit::usage)?;
    let json = config.json;
    let runtime = tokio::runtime::Runtime::new().map_err(exit::infrastructure)?;
    let outcome = runtime.block_on(async {
        // Ctrl-C ends the run after the current step, with a complete trace.
        let interrupted = Arc::new(AtomicBool::new(false));
        let flag = interrupted.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                flag.store(true, Ordering::SeqCst);
            }
        });
        engine::execute(config, interrupted).await
    })?;
    if json {
        println!("{}", serde_json::to_string_pretty(&outcome.summary)?);
    } else {
        print_summary(&outcome.summary);
    }
    if let Some(error) = outcome.error {
        eprintln!("error: {error:#}");
    }
    Ok(outcome.status)
}

fn print_summary(summary: &Summary) {
    let seconds = summary.wall_ms as f64 / 1000.0;
    println!(
        "uatu: {} steps in {seconds:.1} s ({:.1} s of device time), stopped by {}",
        summary.steps,
        summary.device_ms as f64 / 1000.0,
        summary.stopped
    );
    println!();
    print!("{}", report::verdict_table(&summary.properties));
    println!();
    let counts = &summary.counts;
    println!(
        "{} violated, {} passed, {} inconclusive, {} unmet; {} app crashes, {} spec errors",
        counts.violated,
        counts.passed,
        counts.inconclusive,
        counts.unmet,
        counts.app_crashes,
        counts.spec_errors
    );
    if counts.unmet > 0 && summary.exit_code == 0 {
        println!(
            "warning: {} properties unmet (an `eventually` never came true); --strict fails the run on them",
            counts.unmet
        );
    }
    println!("trace:  {}", summary.run_dir);
    println!("re-run: {}", summary.rerun);
}
