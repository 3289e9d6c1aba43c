//! A spec step over the states of a recorded Folio run, in process, with no device,
//! in two modes:
//!
//! - **check**: what `uatu check` does per step: read the record from the trace
//!   (compact format: the hierarchy rebuilt from its store), the spec's step
//!   (extractors, predicates; no generator, no extractor value sent back), the LTL
//!   update;
//! - **run**: the spec's part of a `uatu run` step without a strategy plugin: the
//!   same, with the extractors' values sent back for the record and the built-in
//!   draw (the generators of the branches it draws).
//!
//! The run is recorded once (`uatu run --spec examples/folio/spec.ts --seed 7
//! --sim-latency 0 --no-screenshots`, `REPLAY_STEPS` steps, default 2,000), then
//! each spec replays it on a fresh instance: the example spec, a trivial spec (one
//! extractor, one property, one generator) and the spec written from the reference
//! app's behaviour. Reported per step: p50, p90, mean, and the mean of each part.
//!
//! Run: `cargo bench -p uatu-cli --bench spec_replay` (release).
//! `REPLAY_RUN=<run dir>` replays an existing run instead of recording one;
//! `REPLAY_PASSES` (default 5) is how many passes each step keeps the fastest of;
//! `REPLAY_SPECS` (paths separated by `:`) replays other specs instead of the three.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

mod bench_common;
use bench_common::{env_u64, percentile, run_dir, uatu_bin, workspace};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use uatu::run::strategy::draw_on_demand;
use uatu::run::verify::{Verifier, predicate_values};
use uatu::spec::{SpecInstance, SpecLimits, SpecModule};
use uatu::trace::{TraceReader, read_meta};

/// The parts of a step, in the order they run.
const PARTS: [&str; 10] = [
    "record parsing",
    "state out (host)",
    "state in (runtime)",
    "extractors",
    "predicates",
    "generators (offered)",
    "results out (runtime)",
    "results in (host)",
    "LTL",
    "draw (without them)",
];

/// One spec over every evaluated step of `run`: each step's time and its parts.
struct Replay {
    /// Branches of the action tree the draws asked the spec for, over all steps.
    offers: usize,
    totals: Vec<Duration>,
    parts: Vec<[Duration; PARTS.len()]>,
}

/// What a replayed step does besides the spec's step and the LTL update.
#[derive(Clone, Copy, Debug)]
enum Mode {
    /// `uatu check`: nothing else.
    Check,
    /// `uatu run`'s spec part: the extractors' values back, and the built-in draw.
    Run,
}

fn replay(spec: &Path, run: &Path, mode: Mode) -> anyhow::Result<Replay> {
    let seed = read_meta::<uatu::devices::DeviceOptions>(run)?.seed;
    let module = SpecModule::load(spec)?;
    let mut instance = SpecInstance::new(&module, SpecLimits::default())?;
    instance.set_generators(false);
    instance.set_extractor_values(matches!(mode, Mode::Run));
    let description = instance.load(&module, seed)?;
    let mut verifier = Verifier::for_spec(spec, &description.properties)?;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut reader = TraceReader::open(run)?.states();
    let mut replay = Replay {
        offers: 0,
        totals: Vec::new(),
        parts: Vec::new(),
    };
    loop {
        let started = Instant::now();
        let Some(record) = reader.next() else { break };
        let record = record?;
        let parsed = Instant::now();
        if !record.evaluated {
            continue;
        }
        let step = instance.step(&record.state)?;
        let step_timings = instance.timings();
        let stepped = Instant::now();
        let (_, violations) = verifier.step(
            record.step,
            record.time,
            &predicate_values(&step),
            record.state.last_action.as_ref(),
        );
        verifier.skip_decided_predicates(&violations, &mut instance);
        let checked = Instant::now();
        // The generators run inside the draw: each branch it draws is offered by the spec.
        let mut offering = Duration::ZERO;
        if matches!(mode, Mode::Run) {
            let tree = instance.action_tree();
            let mut offer = |place| {
                let asked = Instant::now();
                let offered = instance.offer(place)?;
                offering += asked.elapsed();
                replay.offers += 1;
                Ok::<_, uatu::spec::SpecError>(offered.candidates)
            };
            std::hint::black_box(draw_on_demand(
                &tree,
                &record.state.hierarchy,
                &mut rng,
                &mut offer,
            )?);
        }
        let drawn = Instant::now();

        let timings = step_timings;
        let parts = [
            parsed - started,
            timings.send,
            timings.state,
            timings.extractors,
            timings.predicates,
            timings.generators + offering,
            timings.result,
            timings.receive,
            checked - stepped,
            (drawn - checked).saturating_sub(offering),
        ];
        replay.parts.push(parts);
        replay.totals.push(drawn - started);
    }
    Ok(replay)
}

/// Records the run the specs replay, into `output`.
fn record(output: &Path, steps: u64) -> anyhow::Result<PathBuf> {
    let spec = workspace().join("examples/folio/spec.ts");
    let status = Command::new(uatu_bin())
        .args(["run", "--spec"])
        .arg(&spec)
        .args(["--seed", "7", "--sim-latency", "0", "--no-screenshots", "--json"])
        .args(["--max-steps", &steps.to_string(), "--output"])
        .arg(output)
        .stdout(std::process::Stdio::null())
        .status()?;
    // 1: a property was violated (the planted bugs are on); anything else is a failure.
    anyhow::ensure!(
        matches!(status.code(), Some(0 | 1)),
        "recording the run: uatu run {status}"
    );
    Ok(run_dir(output))
}

fn millis(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

fn main() -> anyhow::Result<()> {
    let output = tempfile::tempdir()?;
    let run = match std::env::var_os("REPLAY_RUN") {
        Some(run) => PathBuf::from(run),
        None => record(output.path(), env_u64("REPLAY_STEPS", 2000))?,
    };
    let mut specs = vec![
        workspace().join("examples/folio/spec.ts"),
        workspace().join("cli/tests/specs/trivial.ts"),
        workspace().join("examples/folio/reference-spec.ts"),
    ];
    if let Some(list) = std::env::var_os("REPLAY_SPECS") {
        specs = std::env::split_paths(&list).collect();
    }
    let load_average = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "load average: {}",
        load_average
            .split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    let passes = env_u64("REPLAY_PASSES", 5).max(1);
    for (spec, mode) in specs
        .iter()
        .flat_map(|spec| [(spec, Mode::Check), (spec, Mode::Run)])
    {
        // A first pass warms the caches (the compiled provider, the built spec). Of the
        // passes after it, each step keeps its fastest: on a shared machine the others
        // mostly measure the time the bench was not running.
        replay(spec, &run, mode)?;
        let mut best = replay(spec, &run, mode)?;
        for _ in 1..passes {
            let pass = replay(spec, &run, mode)?;
            for (i, total) in pass.totals.iter().enumerate() {
                if *total < best.totals[i] {
                    best.totals[i] = *total;
                    best.parts[i] = pass.parts[i];
                }
            }
        }
        let steps = best.totals.len().max(1) as u32;
        let mean = best.totals.iter().sum::<Duration>() / steps;
        let name = spec.strip_prefix(workspace()).unwrap_or(spec);
        println!(
            "{} ({mode:?}): {} steps, per step (fastest of {passes} passes) p50 {}  p90 {}  mean {}",
            name.display(),
            best.totals.len(),
            millis(percentile(&mut best.totals, 0.5)),
            millis(percentile(&mut best.totals, 0.9)),
            millis(mean),
        );
        for (i, part) in PARTS.iter().enumerate() {
            let sum: Duration = best.parts.iter().map(|parts| parts[i]).sum();
            println!("  {part:<22} {}", millis(sum / steps));
            if i == 5 && matches!(mode, Mode::Run) {
                println!(
                    "    ({:.2} branches offered per step)",
                    best.offers as f64 / f64::from(steps)
                );
            }
        }
    }
    Ok(())
}
