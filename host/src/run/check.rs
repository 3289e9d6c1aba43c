//! `uatu check`: re-evaluates a spec over a recorded run, offline, from the
//! states its trace kept — so a new property can be tried on old runs.

use std::path::Path;

use anyhow::Context as _;

use crate::cli::CheckArgs;
use crate::exit::{self, Status};
use crate::run::engine::{predicate_value, properties_of};
use crate::run::report::verdict_table;
use crate::run::verify::{Verifier, count_verdicts};
use crate::spec::{SpecInstance, SpecLimits, SpecModule};
use crate::trace::{Counts, Meta, PropertySummary, TraceReader};

/// What a check found.
#[derive(Debug, serde::Serialize)]
pub struct CheckReport {
    pub run_dir: String,
    pub steps: u64,
    /// Whether the trace ended in a partially written record (a killed run).
    pub torn: bool,
    pub properties: Vec<PropertySummary>,
    pub counts: Counts,
}

pub fn command(args: CheckArgs) -> anyhow::Result<Status> {
    let (report, status) = check(&args.spec, &args.run, args.strict)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "uatu check: {} over {} steps of {}",
            args.spec.display(),
            report.steps,
            report.run_dir
        );
        if report.torn {
            println!("(the run's last record was cut off: it was killed; every complete step was checked)");
        }
        println!();
        print!("{}", verdict_table(&report.properties));
    }
    Ok(status)
}

/// Evaluates `spec` over the run in `run_dir`, with the run's seed.
pub fn check(spec: &Path, run_dir: &Path, strict: bool) -> anyhow::Result<(CheckReport, Status)> {
    let meta_path = run_dir.join("meta.json");
    let meta: Meta = serde_json::from_slice(
        &std::fs::read(&meta_path)
            .with_context(|| format!("reading {}", meta_path.display()))
            .map_err(exit::usage)?,
    )
    .with_context(|| format!("{} is not a uatu run's meta.json", meta_path.display()))
    .map_err(exit::usage)?;
    let module = SpecModule::load(spec).map_err(exit::usage)?;
    let mut instance = SpecInstance::new(&module, SpecLimits::default()).map_err(exit::usage)?;
    let description = instance.load(&module, meta.seed).map_err(exit::usage)?;
    let mut verifier = Verifier::new(properties_of(spec, &description.properties)?);

    let mut reader = TraceReader::open(run_dir).map_err(exit::usage)?;
    let mut steps = 0;
    for record in reader.by_ref() {
        let record = record.map_err(exit::usage)?;
        steps += 1;
        if !record.evaluated {
            continue;
        }
        let step = instance.step(&record.state).map_err(exit::usage)?;
        let predicates: Vec<_> = step.predicates.iter().map(predicate_value).collect();
        verifier.step(
            record.step,
            record.time,
            &predicates,
            record.state.last_action.as_ref(),
        );
    }
    let properties = verifier.summaries();
    let mut counts = Counts::default();
    count_verdicts(&properties, &mut counts);
    let status = if verifier.fails_run(strict) {
        Status::Violated
    } else {
        Status::Ok
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
