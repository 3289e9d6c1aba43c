//! Monitoring properties over a run: one [`PropertyMonitor`] per property, or a [`PropertySet`].

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::formula::Formula;
use super::progress::progress;
use super::term::{Junction, Presumption, Term, normalise};
use super::verdict::{PredicateFailure, Verdict};

/// At most this many predicate errors are kept per property (the rest are only counted), so a
/// predicate that throws at every step of a long run does not grow the monitor.
pub const MAX_KEPT_ERRORS: usize = 16;

/// Why a predicate has no value at a step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{message}")]
pub struct PredicateError {
    /// The error message (e.g. the exception thrown by the spec's predicate).
    pub message: String,
    /// The spec's stack trace, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack: Option<String>,
    /// The spec source location of the predicate, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
}

/// The value of one predicate at one step: a failed predicate counts as false.
pub type PredicateValue = Result<bool, PredicateError>;

/// One step as the monitors see it.
#[derive(Debug, Clone, Copy)]
pub struct StepInput<'a> {
    /// The step index (0 for the first step).
    pub index: u64,
    /// The step's time in milliseconds since the run started (given by the run, never read from a
    /// clock here, so re-checking a trace gives the same verdicts).
    pub time_ms: u64,
    /// The predicate values, indexed by predicate id.
    pub predicates: &'a [PredicateValue],
}

impl StepInput<'_> {
    /// The truth of predicate `id` at this step: false if it failed or has no value.
    pub fn truth(&self, id: u32) -> bool {
        matches!(self.predicates.get(id as usize), Some(Ok(true)))
    }
}

/// A property's status so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "lowercase")]
pub enum Status {
    /// No obligation has failed yet.
    Ok,
    /// An obligation failed; this is the first step at which one did.
    Violated {
        /// Index of the first violating step.
        step: u64,
        /// Time of that step in ms.
        time_ms: u64,
    },
}

/// Everything known about one property at the end of a run (for the summary).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PropertyReport {
    /// The property's name.
    pub name: String,
    /// Its verdict.
    pub verdict: Verdict,
    /// The first [`MAX_KEPT_ERRORS`] predicate errors of the run.
    pub predicate_errors: Vec<PredicateFailure>,
    /// How many predicate errors the run had in total.
    pub predicate_error_count: u64,
}

/// Checks one property over a run, step by step.
///
/// The property's formula is checked from every step (as if wrapped in `always`): each step
/// instantiates a fresh obligation, every pending obligation is progressed against the step, and
/// identical residuals are merged.
#[derive(Debug, Clone)]
pub struct PropertyMonitor {
    name: String,
    formula: Formula,
    fresh: Term,
    predicate_ids: Vec<u32>,
    /// The pending obligations: a normalised conjunction (sorted, no duplicates, no constants).
    pending: Vec<Term>,
    scratch: Vec<Term>,
    first_violation: Option<(u64, u64)>,
    errors: Vec<PredicateFailure>,
    error_count: u64,
}

impl PropertyMonitor {
    /// A monitor for the property `name` with `formula`, before the first step.
    pub fn new(name: impl Into<String>, formula: Formula) -> Self {
        PropertyMonitor {
            name: name.into(),
            fresh: checked_from_every_step(Term::lower(&formula)),
            predicate_ids: formula.predicate_ids(),
            formula,
            pending: Vec::new(),
            scratch: Vec::new(),
            first_violation: None,
            errors: Vec::new(),
            error_count: 0,
        }
    }

    /// The property's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The property's formula.
    pub fn formula(&self) -> &Formula {
        &self.formula
    }

    /// Progresses every pending obligation, and a fresh one, against `step`; returns the status after it.
    ///
    /// Steps must be given in order with non-decreasing times.
    pub fn step(&mut self, step: &StepInput<'_>) -> Status {
        self.record_errors(step);
        self.scratch.clear();
        let mut failed = false;
        for obligation in self.pending.iter().chain(std::iter::once(&self.fresh)) {
            match progress(obligation, step) {
                Term::Const(true) => {}
                Term::Const(false) => failed = true,
                Term::And(parts) => self.scratch.extend(parts.iter().cloned()),
                other => self.scratch.push(other),
            }
        }
        normalise(&mut self.scratch, Junction::And);
        std::mem::swap(&mut self.pending, &mut self.scratch);
        if failed {
            self.first_violation.get_or_insert((step.index, step.time_ms));
        }
        self.status()
    }

    fn record_errors(&mut self, step: &StepInput<'_>) {
        for &id in &self.predicate_ids {
            let error = match step.predicates.get(id as usize) {
                Some(Ok(_)) => continue,
                Some(Err(error)) => error.clone(),
                None => PredicateError {
                    message: format!(
                        "predicate {id} has no value at this step (the step has {} predicates)",
                        step.predicates.len()
                    ),
                    stack: None,
                    location: None,
                },
            };
            self.error_count += 1;
            if self.errors.len() < MAX_KEPT_ERRORS {
                self.errors.push(PredicateFailure {
                    step: step.index,
                    time_ms: step.time_ms,
                    predicate: id,
                    error,
                });
            }
        }
    }

    /// The status so far: ok, or violated at the first step where an obligation failed.
    pub fn status(&self) -> Status {
        match self.first_violation {
            None => Status::Ok,
            Some((step, time_ms)) => Status::Violated { step, time_ms },
        }
    }

    /// The pending obligations (a conjunction, in canonical order).
    pub fn pending(&self) -> &[Term] {
        &self.pending
    }

    /// The pending obligations as a JSON array of terms (see [`Term`] for the shape).
    pub fn residual_json(&self) -> serde_json::Value {
        serde_json::Value::Array(
            self.pending
                .iter()
                .map(|term| serde_json::to_value(term).unwrap_or(serde_json::Value::Null))
                .collect(),
        )
    }

    /// The verdict if the run stopped now.
    pub fn verdict(&self) -> Verdict {
        if let Some((step, time_ms)) = self.first_violation {
            let errors = self
                .errors
                .iter()
                .filter(|failure| failure.step <= step)
                .cloned()
                .collect();
            return Verdict::Violated {
                step,
                time_ms,
                errors,
            };
        }
        let presumption = self
            .pending
            .iter()
            .map(Term::presumption)
            .min()
            .unwrap_or(Presumption::True);
        match presumption {
            Presumption::True | Presumption::PresumedTrue => Verdict::Passed,
            Presumption::Unknown => Verdict::Inconclusive,
            Presumption::PresumedFalse => Verdict::Unmet,
            // Unreachable: `step` drops constant results and normalised terms hold no constants. Were it
            // reached, reporting a violation is the safe side.
            Presumption::False => Verdict::Violated {
                step: 0,
                time_ms: 0,
                errors: Vec::new(),
            },
        }
    }

    /// The predicate errors kept so far (at most [`MAX_KEPT_ERRORS`]) and the total count.
    pub fn predicate_errors(&self) -> (&[PredicateFailure], u64) {
        (&self.errors, self.error_count)
    }

    /// The end-of-run report of this property.
    pub fn report(&self) -> PropertyReport {
        PropertyReport {
            name: self.name.clone(),
            verdict: self.verdict(),
            predicate_errors: self.errors.clone(),
            predicate_error_count: self.error_count,
        }
    }

    /// Ends the run: the verdict.
    pub fn finish(self) -> Verdict {
        self.verdict()
    }
}

/// The obligation a property instantiates at each step: its formula without outer `always`s, which
/// checking from every step already implies (so residuals do not carry a redundant copy).
fn checked_from_every_step(mut term: Term) -> Term {
    while let Term::Always(inner) = term {
        term = Term::clone(&inner);
    }
    term
}

/// The monitors of all the properties of a spec, in the order given.
#[derive(Debug, Clone, Default)]
pub struct PropertySet {
    monitors: Vec<PropertyMonitor>,
}

impl PropertySet {
    /// One monitor per `(name, formula)`.
    pub fn new(properties: impl IntoIterator<Item = (String, Formula)>) -> Self {
        PropertySet {
            monitors: properties
                .into_iter()
                .map(|(name, formula)| PropertyMonitor::new(name, formula))
                .collect(),
        }
    }

    /// Progresses every property not yet violated against `step`; returns the names of the
    /// properties first violated at this step. A violated property is decided for the run: its
    /// verdict cannot change, so it is not progressed any more and its predicates are not needed
    /// (see [`PropertySet::needed_predicates`]).
    pub fn step(&mut self, step: &StepInput<'_>) -> Vec<&str> {
        let mut newly_violated = Vec::new();
        for monitor in &mut self.monitors {
            if monitor.status() == Status::Ok && monitor.step(step) != Status::Ok {
                newly_violated.push(monitor.name());
            }
        }
        newly_violated
    }

    /// The predicates the next step must evaluate: those of the properties not yet violated.
    /// It changes only when a property is first violated.
    pub fn needed_predicates(&self) -> BTreeSet<u32> {
        self.monitors
            .iter()
            .filter(|monitor| monitor.status() == Status::Ok)
            .flat_map(|monitor| monitor.predicate_ids.iter().copied())
            .collect()
    }

    /// The monitors.
    pub fn monitors(&self) -> &[PropertyMonitor] {
        &self.monitors
    }

    /// The residual of every property: a JSON object from property name to its [`PropertyMonitor::residual_json`].
    pub fn residual_json(&self) -> serde_json::Value {
        serde_json::Value::Object(
            self.monitors
                .iter()
                .map(|monitor| (monitor.name.clone(), monitor.residual_json()))
                .collect(),
        )
    }

    /// The end-of-run report of every property.
    pub fn reports(&self) -> Vec<PropertyReport> {
        self.monitors.iter().map(PropertyMonitor::report).collect()
    }

    /// Whether the run fails: some property violated, or (under `strict`) unmet.
    pub fn fails_run(&self, strict: bool) -> bool {
        self.monitors
            .iter()
            .any(|monitor| monitor.verdict().fails_run(strict))
    }
}
