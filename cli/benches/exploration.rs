//! Exploration efficacy: how fast a strategy reaches the simulator's deepest planted bug,
//! `deep-ledger-duplication`, and how many distinct screens it reaches, the built-in
//! weighted-random walk against the `coverage-guided` plugin (built into uatu, loaded by name).
//!
//! Each run is the real `uatu` binary (release) on `examples/folio/spec.ts` against the
//! built-in simulator with only that bug on, read back from its run directory:
//! `summary.json` gives the first violating step of the properties that catch the bug
//! (`ledgerCountMatchesAccount`, `ledgerRowsAreUnique`), `trace.jsonl` the recorded
//! hierarchies (hashed with the host's own screen signature) and coverage probes.
//!
//! Run: `cargo bench -p uatu-cli --bench exploration`. Knobs (environment):
//! `EXPLORATION_SEEDS` (how many seeds, default 20), `EXPLORATION_FIRST_SEED` (default 1), `EXPLORATION_STEPS` (default 3000),
//! `EXPLORATION_JOBS` (runs at a time, default 2), `EXPLORATION_ONLY` (`builtin` or
//! `coverage-guided`), `EXPLORATION_PLUGIN_CONFIG` (extra TOML lines for
//! `[plugins.coverage-guided]`, `;` separates lines, e.g. `exploration = 0.5`),
//! `EXPLORATION_KEEP` (a directory to keep the runs in, as `<strategy>-<seed>/`),
//! `EXPLORATION_STOP_AT_DETECTION` (set: end each run at its detection, for quick comparisons
//! of steps to detection; the screen counts are then not comparable),
//! `UATU_BIN` (another binary).

mod bench_common;

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::Instant;

use bench_common::{env_u64, median, run_dir, uatu_bin, workspace};
use uatu::plugin::context::screen_signature;
use uatu::trace::{Summary, TraceReader};

const BUG: &str = "deep-ledger-duplication";
const CATCHING: [&str; 2] = ["ledgerCountMatchesAccount", "ledgerRowsAreUnique"];
const STRATEGIES: [&str; 2] = ["builtin", "coverage-guided"];

/// What one run reached.
#[derive(Clone, Debug)]
struct Outcome {
    /// The first step at which a catching property was violated.
    detected: Option<u64>,
    screens: usize,
    probes: usize,
    steps: u64,
    wall_ms: u64,
}

/// One `uatu run` of `strategy` with `seed`; the plugin gets the same seed in its config.
fn run(strategy: &str, plugin: Option<&Path>, seed: u64, steps: u64) -> Outcome {
    let scratch = tempfile::tempdir().expect("temp dir");
    // Always an explicit config, so that a ./uatu.toml never changes what is measured.
    let config = scratch.path().join("uatu.toml");
    let mut toml = String::new();
    if plugin.is_some() {
        // A generous deadline: this measures where the strategy goes, not how fast it
        // answers on a loaded machine (`plugin_call` measures that).
        toml.push_str(&format!(
            "[plugins.coverage-guided]\nseed = {seed}\ndeadline-ms = 2000\n"
        ));
        if let Ok(extra) = std::env::var("EXPLORATION_PLUGIN_CONFIG") {
            toml.push_str(&extra.replace(';', "\n"));
            toml.push('\n');
        }
    }
    fs::write(&config, toml).expect("write config");
    let output = match std::env::var_os("EXPLORATION_KEEP") {
        Some(keep) => PathBuf::from(keep).join(format!("{strategy}-{seed}")),
        None => scratch.path().join("runs"),
    };
    let _ = fs::remove_dir_all(&output);
    let mut command = Command::new(uatu_bin());
    command.current_dir(workspace()).args([
        "run",
        "--spec",
        "examples/folio/spec.ts",
        "--seed",
        &seed.to_string(),
        "--max-steps",
        &steps.to_string(),
        "--sim-bugs",
        BUG,
        "--sim-latency",
        "0",
        "--no-screenshots",
        "--config",
    ]);
    command.arg(&config).arg("--output").arg(&output);
    if std::env::var_os("EXPLORATION_STOP_AT_DETECTION").is_some() {
        // Only the one bug is on, so the first violation is its detection.
        command.arg("--exit-on-violation");
    }
    if let Some(plugin) = plugin {
        command.arg("--plugin").arg(plugin);
    }
    let result = command
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .expect("uatu runs");
    let code = result.status.code().unwrap_or(-1);
    assert!(
        code == 0 || code == 1,
        "{strategy} seed {seed}: uatu run failed ({code}): {}",
        String::from_utf8_lossy(&result.stderr)
    );
    let dir = run_dir(&output);
    let summary: Summary =
        serde_json::from_slice(&fs::read(dir.join("summary.json")).expect("summary")).expect("summary json");
    let detected = summary
        .properties
        .iter()
        .filter(|p| CATCHING.contains(&p.name.as_str()))
        .filter_map(|p| p.first_violation_step)
        .min();
    let mut screens = HashSet::new();
    let mut probes = HashSet::new();
    for record in TraceReader::open(&dir).expect("trace") {
        let record = record.expect("step record");
        screens.insert(screen_signature(&record.state.hierarchy));
        probes.extend(record.state.coverage.into_iter().flatten());
    }
    Outcome {
        detected,
        screens: screens.len(),
        probes: probes.len(),
        steps: summary.steps,
        wall_ms: summary.wall_ms,
    }
}

/// The median of `values`, where `None` (not found within `cap` steps) sorts after every
/// number: returns the value, or `None` when the median itself falls among the not-found.
fn censored_median(values: &[Option<u64>]) -> Option<f64> {
    let mut sorted: Vec<Option<u64>> = values.to_vec();
    sorted.sort_by_key(|v| v.unwrap_or(u64::MAX));
    let n = sorted.len();
    if n == 0 {
        return None;
    }
    let (low, high) = (sorted[(n - 1) / 2], sorted[n / 2]);
    Some((low? as f64 + high? as f64) / 2.0)
}

fn show(detected: Option<u64>) -> String {
    detected.map_or("not found".to_string(), |s| s.to_string())
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else to parse.
    let seeds = env_u64("EXPLORATION_SEEDS", 20);
    let first = env_u64("EXPLORATION_FIRST_SEED", 1);
    let steps = env_u64("EXPLORATION_STEPS", 3000);
    let jobs = env_u64("EXPLORATION_JOBS", 2).max(1) as usize;
    let only = std::env::var("EXPLORATION_ONLY").unwrap_or_default();
    let strategies: Vec<&str> = STRATEGIES
        .into_iter()
        .filter(|s| only.is_empty() || only == *s)
        .collect();
    // The plugin built into uatu, by name.
    let plugin = strategies
        .contains(&"coverage-guided")
        .then(|| PathBuf::from("coverage-guided"));

    println!(
        "\n### exploration: seeds {first}..={} x {steps} steps, --sim-bugs {BUG}, {jobs} run(s) at a time\n",
        first + seeds - 1
    );
    let started = Instant::now();
    let work: Vec<(usize, u64)> = (0..strategies.len())
        .flat_map(|s| (first..first + seeds).map(move |seed| (s, seed)))
        .collect();
    let results: Mutex<Vec<Vec<Option<Outcome>>>> =
        Mutex::new(vec![vec![None; seeds as usize]; strategies.len()]);
    let next = Mutex::new(0usize);
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| {
                loop {
                    let index = {
                        let mut next = next.lock().expect("lock");
                        let index = *next;
                        *next += 1;
                        index
                    };
                    let Some(&(s, seed)) = work.get(index) else {
                        break;
                    };
                    let strategy = strategies[s];
                    let plugin = plugin.as_deref().filter(|_| strategy == "coverage-guided");
                    let outcome = run(strategy, plugin, seed, steps);
                    eprintln!(
                        "{strategy} seed {seed}: {} ({} screens, {} probes, {} ms)",
                        show(outcome.detected),
                        outcome.screens,
                        outcome.probes,
                        outcome.wall_ms
                    );
                    results.lock().expect("lock")[s][(seed - first) as usize] = Some(outcome);
                }
            });
        }
    });
    let results: Vec<Vec<Outcome>> = results
        .into_inner()
        .expect("lock")
        .into_iter()
        .map(|runs| runs.into_iter().map(|o| o.expect("every run finished")).collect())
        .collect();

    print!("| seed |");
    for strategy in &strategies {
        print!(" {strategy}: first step | screens | probes |");
    }
    println!();
    println!("|---|{}", "---|---|---|".repeat(strategies.len()));
    for seed in 0..seeds as usize {
        print!("| {} |", first + seed as u64);
        for runs in &results {
            let o = &runs[seed];
            print!(" {} | {} | {} |", show(o.detected), o.screens, o.probes);
        }
        println!();
    }
    println!(
        "\n| strategy | median steps to detection | found | median distinct screens | median probes | median wall ms |"
    );
    println!("|---|---|---|---|---|---|");
    let mut medians = Vec::new();
    for (strategy, runs) in strategies.iter().zip(&results) {
        let detected: Vec<Option<u64>> = runs.iter().map(|o| o.detected).collect();
        let found = detected.iter().filter(|d| d.is_some()).count();
        let step_median = censored_median(&detected);
        medians.push(step_median);
        let mut screens: Vec<f64> = runs.iter().map(|o| o.screens as f64).collect();
        let mut probes: Vec<f64> = runs.iter().map(|o| o.probes as f64).collect();
        let mut wall: Vec<f64> = runs.iter().map(|o| o.wall_ms as f64).collect();
        let recorded = runs.iter().map(|o| o.steps).min().unwrap_or(0);
        println!(
            "| {strategy} | {} | {found}/{} | {} | {} | {:.0} |",
            step_median.map_or(format!("> {steps} (censored)"), |m| format!("{m:.1}")),
            runs.len(),
            median(&mut screens),
            median(&mut probes),
            median(&mut wall),
        );
        assert!(recorded >= steps.min(1), "{strategy}: a run recorded no steps");
    }
    println!(
        "\nNot found within {steps} steps counts as more than {steps} steps (a censored value) \
         in the median; a median that falls among those is shown as `> {steps}`."
    );
    if let [Some(builtin), Some(guided)] = medians[..] {
        println!(
            "coverage-guided / builtin median steps: {:.2} (target <= 0.33: {})",
            guided / builtin,
            if guided * 3.0 <= builtin { "met" } else { "not met" }
        );
    } else if let [None, Some(guided)] = medians[..] {
        println!(
            "builtin median > {steps}; coverage-guided {guided:.1}: target {}",
            if guided * 3.0 <= steps as f64 {
                "met"
            } else {
                "undecided at this step budget"
            }
        );
    }
    println!("total wall {:.0} s", started.elapsed().as_secs_f64());
}
