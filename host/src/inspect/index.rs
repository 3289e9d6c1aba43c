//! What each step holds at a glance: the step list's marks and one timeline per
//! property, small enough to send whole for a 20,000-step run (the records
//! themselves go in pages).

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use crate::trace::{Event, StepRecord, TraceError, TraceReader};

/// One step in the step list.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct StepMark {
    /// The step's index.
    pub step: u64,
    /// Device time, ms.
    pub time: u64,
    /// The action dispatched at the end of the step, described; empty if none.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub action: String,
    /// Properties first violated at this step.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub violations: Vec<String>,
    /// Uncaught exceptions the app reported since the previous step.
    #[serde(skip_serializing_if = "is_zero")]
    pub exceptions: usize,
    /// The app crashed or its SDK connection dropped.
    #[serde(skip_serializing_if = "is_false")]
    pub crash: bool,
    /// The system reported the app not responding (an ANR).
    #[serde(skip_serializing_if = "is_false")]
    pub anr: bool,
    /// The host relaunched the app.
    #[serde(skip_serializing_if = "is_false")]
    pub relaunch: bool,
    /// Spec errors (predicates, extractors, generators) and plugin reports.
    #[serde(skip_serializing_if = "is_zero")]
    pub errors: usize,
    /// A replay's screen differed from the recording, or its action's target was missing.
    #[serde(skip_serializing_if = "is_false")]
    pub diverged: bool,
    /// False when the app was gone and nothing was evaluated.
    pub evaluated: bool,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl StepMark {
    /// The marks of one record.
    pub fn of(record: &StepRecord) -> StepMark {
        let mut mark = StepMark {
            step: record.step,
            time: record.time,
            action: record.action.as_ref().map(|a| a.describe()).unwrap_or_default(),
            violations: Vec::new(),
            exceptions: record.state.exceptions.len(),
            crash: false,
            anr: false,
            relaunch: false,
            errors: 0,
            diverged: false,
            evaluated: record.evaluated,
        };
        for event in &record.events {
            match event {
                Event::Violation { property } => mark.violations.push(property.clone()),
                Event::AppDisconnected { .. } => mark.crash = true,
                Event::AppNotResponding { .. } => mark.anr = true,
                Event::AppRelaunched => mark.relaunch = true,
                Event::PredicateError { .. }
                | Event::ExtractorError { .. }
                | Event::GeneratorError { .. }
                | Event::Plugin { .. } => mark.errors += 1,
                Event::ScreenDiverged { .. } | Event::TargetMissing { .. } => mark.diverged = true,
                Event::DeviceRetry { .. } | Event::NoAction => {}
            }
        }
        mark
    }
}

/// Every step's marks and each property's timeline.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct StepIndex {
    /// One mark per complete step, in order.
    pub steps: Vec<StepMark>,
    /// Per property, the steps at which its status changed, with the new status
    /// (`ok`, `violated`, `pending`: obligations outstanding, `error`: a predicate threw).
    pub timelines: BTreeMap<String, Vec<(u64, String)>>,
    /// The trace ends in a torn (or still being written) line.
    pub torn: bool,
}

impl StepIndex {
    /// Adds one record (the next step) to the index.
    pub fn push(&mut self, record: &StepRecord) {
        self.steps.push(StepMark::of(record));
        for (name, property) in &record.properties {
            let status = if property.status == "violated" {
                "violated"
            } else if !property.errors.is_empty() {
                "error"
            } else if property.residual.as_array().is_some_and(|a| !a.is_empty()) {
                "pending"
            } else {
                "ok"
            };
            let timeline = self.timelines.entry(name.clone()).or_default();
            if timeline.last().is_none_or(|(_, last)| last != status) {
                timeline.push((record.step, status.to_owned()));
            }
        }
    }
}

/// The index of every complete step of the run at `dir`, read as a stream.
pub fn index_steps(dir: &Path) -> Result<StepIndex, TraceError> {
    let mut index = StepIndex::default();
    let mut reader = TraceReader::open(dir)?;
    for record in reader.by_ref() {
        index.push(&record?);
    }
    index.torn = reader.torn();
    Ok(index)
}
