//! End-of-run verdicts and the predicate errors kept with them.

use serde::{Deserialize, Serialize};

use super::monitor::PredicateError;

/// A predicate that failed to evaluate at a step (it counted as false there).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PredicateFailure {
    /// The step index.
    pub step: u64,
    /// The step time in milliseconds since the run started.
    pub time_ms: u64,
    /// The predicate id.
    pub predicate: u32,
    /// What the spec reported.
    pub error: PredicateError,
}

/// The verdict of one property at the end of a run.
///
/// Serialised tagged by `"verdict"`, e.g. `{"verdict":"violated","step":12,"time_ms":3400,"errors":[]}`
/// or `{"verdict":"unmet"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "lowercase")]
pub enum Verdict {
    /// An obligation failed; `step`/`time_ms` name the first step at which one did.
    Violated {
        /// Index of the first violating step.
        step: u64,
        /// Time of the first violating step (ms since the run started).
        time_ms: u64,
        /// Predicate errors seen up to and including that step (each counted as false).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        errors: Vec<PredicateFailure>,
    },
    /// Nothing failed and nothing is outstanding (presumably true: `always` cannot be proven on a
    /// finite run).
    Passed,
    /// Nothing failed, but bounded obligations (a `next`, a bounded `eventually` before its bound)
    /// were open when the run stopped.
    Inconclusive,
    /// Nothing failed, but an unbounded `eventually` never came true (presumably false).
    Unmet,
}

impl Verdict {
    /// Whether this verdict fails the run: `violated` always, `unmet` only under `--strict`.
    pub fn fails_run(&self, strict: bool) -> bool {
        match self {
            Verdict::Violated { .. } => true,
            Verdict::Unmet => strict,
            Verdict::Passed | Verdict::Inconclusive => false,
        }
    }

    /// The verdict's name as serialised: `violated`, `passed`, `inconclusive` or `unmet`.
    pub fn name(&self) -> &'static str {
        match self {
            Verdict::Violated { .. } => "violated",
            Verdict::Passed => "passed",
            Verdict::Inconclusive => "inconclusive",
            Verdict::Unmet => "unmet",
        }
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Verdict::Violated { step, time_ms, .. } => write!(f, "violated at step {step} ({time_ms} ms)"),
            other => f.write_str(other.name()),
        }
    }
}
