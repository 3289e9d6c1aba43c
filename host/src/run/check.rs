//! `uatu check`: re-evaluates a spec over a recorded run, offline, from the
//! states its trace kept — so a new property can be tried on old runs.

use std::path::Path;

use crate::run::verify::{Verifier, count_verdicts, predicate_values};
use crate::spec::{SpecInstance, SpecLimits, SpecModule};
use crate::trace::{Counts, PropertySummary, TraceError, TraceReader, read_meta};
use crate::{Error, ExitStatus};

/// What a check found.
#[derive(Debug, serde::Serialize)]
pub struct CheckReport {
    /// The run directory checked.
    pub run_dir: String,
    /// Steps read from its trace.
    pub steps: u64,
    /// Whether the trace ended in a partially written record (a killed run).
    pub torn: bool,
    /// Each property's verdict over the recorded steps.
    pub properties: Vec<PropertySummary>,
    /// The verdicts counted.
    pub counts: Counts,
}

/// Evaluates `spec` over the run in `run_dir`, with the run's seed; returns what
/// it found and the exit status that earns (`strict`: `unmet` fails too).
pub fn check(spec: &Path, run_dir: &Path, strict: bool) -> Result<(CheckReport, ExitStatus), Error> {
    let not_a_run = |source: TraceError| Error::NotARun {
        run_dir: run_dir.to_path_buf(),
        source,
    };
    let meta = read_meta::<crate::devices::DeviceOptions>(run_dir).map_err(not_a_run)?;
    let module = SpecModule::load(spec)?;
    let mut instance = SpecInstance::new(&module, SpecLimits::default())?;
    // A check chooses no action and records nothing: the generators need not run, and
    // the extractors' values need not come back.
    instance.set_generators(false);
    instance.set_extractor_values(false);
    let description = instance.load(&module, meta.seed)?;
    let mut verifier = Verifier::for_spec(spec, &description.properties)?;

    // Only the recorded states: the rest of each record is what this check recomputes.
    let mut reader = TraceReader::open(run_dir).map_err(not_a_run)?.states();
    let mut steps = 0;
    while let Some(record) = reader.next() {
        let record = record.map_err(not_a_run)?;
        steps += 1;
        if !record.evaluated {
            continue;
        }
        let step = instance.step(&record.state)?;
        let (_, violations) = verifier.step(
            record.step,
            record.time,
            &predicate_values(&step),
            record.state.last_action.as_ref(),
        );
        verifier.skip_decided_predicates(&violations, &mut instance);
    }
    let properties = verifier.summaries();
    let mut counts = Counts::default();
    count_verdicts(&properties, &mut counts);
    let status = if verifier.fails_run(strict) {
        ExitStatus::Violated
    } else {
        ExitStatus::Ok
    };
    let report = CheckReport {
        run_dir: run_dir.display().to_string(),
        steps,
        torn: reader.torn(),
        properties,
        counts,
    };
    Ok((report, status))
}
