//! Reading a long compact trace back: indexing it, the first page, a page at the
//! end, every record (`uatu inspect`, `uatu report`), and every record's state alone
//! (`uatu check`).
//!
//! Run: `cargo bench -p uatu-cli --bench trace_read`. Knobs (environment):
//! `TRACE_READ_DIR` (a run directory to read; otherwise a run of `TRACE_READ_STEPS`
//! steps, default 20000, is made with the Folio spec, seed 7, every bug on),
//! `UATU_BIN` (another binary to make the run with).

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use uatu::trace::{TraceIndex, TraceReader, read_step_range};

mod bench_common;
use bench_common::{env_u64, run_dir, uatu_bin, workspace};

fn main() {
    let output = tempfile::tempdir().expect("temp dir");
    let dir = match std::env::var_os("TRACE_READ_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => {
            let steps = env_u64("TRACE_READ_STEPS", 20_000).to_string();
            let spec = workspace().join("examples/folio/spec.ts");
            Command::new(uatu_bin())
                .arg("run")
                .arg("--spec")
                .arg(&spec)
                .args([
                    "--seed",
                    "7",
                    "--sim-latency",
                    "0",
                    "--max-steps",
                    &steps,
                    "--output",
                ])
                .arg(output.path())
                .output()
                .expect("uatu runs");
            run_dir(output.path())
        }
    };
    let started = Instant::now();
    let index = TraceIndex::build(&dir).expect("indexes");
    let indexed = started.elapsed();
    let records = index.records();
    let page = |first: u64| {
        let started = Instant::now();
        let steps = read_step_range(&dir, &index, first, first + 50).expect("a page");
        assert!(!steps.is_empty());
        started.elapsed()
    };
    let first_page = page(0);
    let last_page = page(records.saturating_sub(50));
    let started = Instant::now();
    let mut all = 0;
    for record in TraceReader::open(&dir).expect("opens") {
        record.expect("a whole record");
        all += 1;
    }
    let whole = started.elapsed();
    let started = Instant::now();
    let mut states = TraceReader::open(&dir).expect("opens").states();
    while let Some(state) = states.next() {
        std::hint::black_box(state.expect("a state"));
    }
    let states_only = started.elapsed();
    println!("\n### reading a trace of {records} steps ({})\n", dir.display());
    println!("| measure | time |\n|---|---|");
    println!(
        "| index (scan every line) | {:.1} ms |",
        indexed.as_secs_f64() * 1e3
    );
    println!("| steps 0..50 | {:.1} ms |", first_page.as_secs_f64() * 1e3);
    println!("| the last 50 steps | {:.1} ms |", last_page.as_secs_f64() * 1e3);
    println!("| every record ({all}) | {:.0} ms |", whole.as_secs_f64() * 1e3);
    println!(
        "| every record's state alone (`uatu check`) | {:.0} ms |",
        states_only.as_secs_f64() * 1e3
    );
}
