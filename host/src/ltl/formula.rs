//! The formula AST as the spec runtime produces it and traces store it.

use serde::{Deserialize, Serialize};

/// A bound on an `eventually`: how long after the obligation started its argument may take.
///
/// Serialised as `{"steps": N}` or `{"ms": N}`. The spec API's `"seconds"` and `"milliseconds"`
/// units both become [`Bound::Ms`]; `"steps"` becomes [`Bound::Steps`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Bound {
    /// At most this many steps after the starting step (the step `start + N` is the last one examined).
    Steps(u64),
    /// At most this many milliseconds of step time after the starting step (the first step whose time
    /// is at or past `start time + N` is the last one examined).
    Ms(u64),
}

/// A `within(amount, unit)` of the spec API that is not a valid bound.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum InvalidBound {
    /// The unit is not one of `steps`, `seconds`, `milliseconds`.
    #[error(
        "unknown unit {0:?} for eventually(...).within: expected \"steps\", \"seconds\" or \"milliseconds\""
    )]
    Unit(String),
    /// The amount is negative, not finite, too large, or (for steps) not a whole number.
    #[error("invalid amount {amount} {unit} for eventually(...).within: expected a non-negative {expected}")]
    Amount {
        /// The amount given.
        amount: f64,
        /// The unit given.
        unit: String,
        /// What the unit accepts.
        expected: &'static str,
    },
}

impl Bound {
    /// The bound of the spec API's `eventually(f).within(amount, unit)`: `"steps"` becomes
    /// [`Bound::Steps`]; `"seconds"` and `"milliseconds"` become [`Bound::Ms`] (fractions of a
    /// millisecond are rounded up, so a bound is never shortened).
    pub fn from_spec(amount: f64, unit: &str) -> Result<Bound, InvalidBound> {
        let invalid = |expected| InvalidBound::Amount {
            amount,
            unit: unit.to_string(),
            expected,
        };
        // 2^53: beyond it an f64 no longer holds every integer.
        const LARGEST: f64 = 9_007_199_254_740_992.0;
        let whole = |value: f64, expected| {
            if value.is_finite() && (0.0..=LARGEST).contains(&value) {
                Ok(value as u64)
            } else {
                Err(invalid(expected))
            }
        };
        match unit {
            "steps" if amount.fract() != 0.0 => Err(invalid("whole number of steps")),
            "steps" => whole(amount, "whole number of steps").map(Bound::Steps),
            "seconds" => whole((amount * 1000.0).ceil(), "number of seconds").map(Bound::Ms),
            "milliseconds" => whole(amount.ceil(), "number of milliseconds").map(Bound::Ms),
            other => Err(InvalidBound::Unit(other.to_string())),
        }
    }
}

/// A linear temporal logic formula over the predicates of a spec.
///
/// Serialised tagged by `"op"`, e.g. `{"op":"eventually","arg":{"op":"pred","id":1},"within":{"ms":500}}`.
/// See `docs/ltl.md` for the semantics of each operator.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "lowercase")]
pub enum Formula {
    /// The value of predicate `id` (an index into a step's predicate values) at the current step.
    Pred {
        /// Index of the predicate in [`crate::ltl::StepInput::predicates`].
        id: u32,
    },
    /// A constant truth value.
    Const {
        /// The value.
        value: bool,
    },
    /// Negation.
    Not {
        /// The negated formula.
        arg: Box<Formula>,
    },
    /// Conjunction; an empty list is true.
    And {
        /// The conjuncts.
        args: Vec<Formula>,
    },
    /// Disjunction; an empty list is false.
    Or {
        /// The disjuncts.
        args: Vec<Formula>,
    },
    /// `left` implies `right`, i.e. `not(left) or right`, both at the current step.
    Implies {
        /// The premise.
        left: Box<Formula>,
        /// The conclusion.
        right: Box<Formula>,
    },
    /// `arg` at the current step (for a predicate: just its value).
    Now {
        /// The formula.
        arg: Box<Formula>,
    },
    /// `arg` at the next step.
    Next {
        /// The formula.
        arg: Box<Formula>,
    },
    /// `arg` at the current step and at every later step.
    Always {
        /// The formula.
        arg: Box<Formula>,
    },
    /// `arg` at the current step or at some later one, optionally within a bound.
    Eventually {
        /// The formula.
        arg: Box<Formula>,
        /// `None` for an unbounded `eventually`.
        #[serde(default)]
        within: Option<Bound>,
    },
}

impl Formula {
    /// Predicate `id`.
    pub fn pred(id: u32) -> Self {
        Formula::Pred { id }
    }

    /// The constant `value`.
    pub fn constant(value: bool) -> Self {
        Formula::Const { value }
    }

    /// `not(self)`.
    #[allow(clippy::should_implement_trait)]
    pub fn not(self) -> Self {
        Formula::Not { arg: Box::new(self) }
    }

    /// `self and other`.
    pub fn and(self, other: Formula) -> Self {
        Formula::And {
            args: vec![self, other],
        }
    }

    /// `self or other`.
    pub fn or(self, other: Formula) -> Self {
        Formula::Or {
            args: vec![self, other],
        }
    }

    /// `self implies other`.
    pub fn implies(self, other: Formula) -> Self {
        Formula::Implies {
            left: Box::new(self),
            right: Box::new(other),
        }
    }

    /// `now(self)`.
    pub fn now(self) -> Self {
        Formula::Now { arg: Box::new(self) }
    }

    /// `next(self)`.
    pub fn next(self) -> Self {
        Formula::Next { arg: Box::new(self) }
    }

    /// `always(self)`.
    pub fn always(self) -> Self {
        Formula::Always { arg: Box::new(self) }
    }

    /// Unbounded `eventually(self)`.
    pub fn eventually(self) -> Self {
        Formula::Eventually {
            arg: Box::new(self),
            within: None,
        }
    }

    /// `eventually(self).within(bound)`.
    pub fn eventually_within(self, bound: Bound) -> Self {
        Formula::Eventually {
            arg: Box::new(self),
            within: Some(bound),
        }
    }

    /// The predicate ids this formula reads, sorted and without duplicates.
    pub fn predicate_ids(&self) -> Vec<u32> {
        let mut ids = Vec::new();
        self.collect_predicates(&mut ids);
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    fn collect_predicates(&self, ids: &mut Vec<u32>) {
        match self {
            Formula::Pred { id } => ids.push(*id),
            Formula::Const { .. } => {}
            Formula::And { args } | Formula::Or { args } => {
                args.iter().for_each(|arg| arg.collect_predicates(ids))
            }
            Formula::Implies { left, right } => {
                left.collect_predicates(ids);
                right.collect_predicates(ids);
            }
            Formula::Not { arg }
            | Formula::Now { arg }
            | Formula::Next { arg }
            | Formula::Always { arg }
            | Formula::Eventually { arg, .. } => arg.collect_predicates(ids),
        }
    }
}
