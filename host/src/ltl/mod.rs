//! Linear temporal logic: formulas and their progression over a run.
//!
//! A spec's properties arrive as [`Formula`]s (JSON from the spec runtime). Each is checked by a
//! [`PropertyMonitor`] from every step of the run: at each step the monitor instantiates a fresh
//! obligation and rewrites (progresses) every pending one against that step's predicate values and
//! time; identical residual obligations merge, so memory stays bounded. At the end of the run each
//! property gets a [`Verdict`]: `violated`, `passed`, `inconclusive` or `unmet`.
//! The semantics are documented in `docs/ltl.md`.

mod formula;
mod monitor;
mod progress;
mod term;
mod verdict;

#[cfg(test)]
mod reference;
#[cfg(test)]
mod tests;

pub use formula::{Bound, Formula, InvalidBound};
pub use monitor::{
    MAX_KEPT_ERRORS, PredicateError, PredicateValue, PropertyMonitor, PropertyReport, PropertySet, Status,
    StepInput,
};
pub use progress::progress;
pub use term::{Deadline, Presumption, Term, and_of, or_of};
pub use verdict::{PredicateFailure, Verdict};
