//! What the bench binaries share: their knobs, the binary they run, and how they
//! read a run back.
#![allow(dead_code)] // each bench uses part of it

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

/// A step's `metrics` in `trace.jsonl`, in microseconds.
#[derive(Deserialize, Default, Clone, Copy)]
#[serde(rename_all = "camelCase", default)]
pub struct Metrics {
    pub capture_us: u64,
    pub agent_us: u64,
    pub spec_us: u64,
    pub ltl_us: u64,
    pub plugins_us: u64,
    pub dispatch_us: u64,
}

impl Metrics {
    /// Phase `i` of `capture, agent, spec, ltl, plugins, dispatch`.
    pub fn phase(&self, i: usize) -> u64 {
        [
            self.capture_us,
            self.agent_us,
            self.spec_us,
            self.ltl_us,
            self.plugins_us,
            self.dispatch_us,
        ][i]
    }
}

/// A numeric knob from the environment, `default` when unset or not a number.
pub fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The `uatu` binary to run: `UATU_BIN`, else the one Cargo built for this bench.
pub fn uatu_bin() -> PathBuf {
    std::env::var_os("UATU_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_uatu")))
}

pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The run directory `uatu run --output <output>` created.
pub fn run_dir(output: &Path) -> PathBuf {
    std::fs::read_dir(output)
        .expect("output directory")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .find(|p| p.join("trace.jsonl").exists())
        .expect("a run directory with trace.jsonl")
}

/// The `p` quantile (0..=1) of `samples`, which it sorts.
pub fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    samples[((samples.len() - 1) as f64 * p).round() as usize]
}

/// The median of `values` (the mean of the middle two for an even count; 0 when empty),
/// which it sorts.
pub fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n == 0 {
        return 0.0;
    }
    (values[(n - 1) / 2] + values[n / 2]) / 2.0
}
