//! Formulas in progression normal form: what pending obligations are made of.
//!
//! A [`Formula`] is lowered once into a [`Term`]: negations pushed down to the predicates,
//! `implies` and `now` removed. Progression ([`crate::ltl::progress`]) then rewrites terms step by
//! step. Terms are kept normalised by the smart constructors [`and_of`] and [`or_of`] (flattened, no
//! constants inside, sorted, without duplicates, bounded obligations on the same argument reduced to
//! the one that decides), so that equal obligations compare equal and merge.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::formula::{Bound, Formula};

/// An absolute deadline of a started bounded obligation.
///
/// Serialised as `{"step": N}` (the last step index examined) or `{"ms": N}` (the first step whose
/// time is at or past `N` ms is the last one examined).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Deadline {
    /// A step index.
    Step(u64),
    /// A step time in milliseconds.
    Ms(u64),
}

impl Deadline {
    /// The deadline of an obligation with `bound` that starts at step `index`, time `time_ms`.
    pub fn start(bound: Bound, index: u64, time_ms: u64) -> Self {
        match bound {
            Bound::Steps(n) => Deadline::Step(index.saturating_add(n)),
            Bound::Ms(n) => Deadline::Ms(time_ms.saturating_add(n)),
        }
    }

    /// Whether the step at `index`, `time_ms` is at or past this deadline (it is then the last step
    /// the obligation examines).
    pub fn reached(self, index: u64, time_ms: u64) -> bool {
        match self {
            Deadline::Step(step) => index >= step,
            Deadline::Ms(ms) => time_ms >= ms,
        }
    }

    fn same_unit(self, other: Deadline) -> bool {
        matches!(
            (self, other),
            (Deadline::Step(_), Deadline::Step(_)) | (Deadline::Ms(_), Deadline::Ms(_))
        )
    }
}

/// A formula in progression normal form (negation only on predicates), possibly carrying the absolute
/// deadlines of bounded obligations that have started.
///
/// The JSON form (used for residuals in traces and the inspect UI) is tagged by `"op"`:
/// `const`, `pred`, `not_pred`, `and`, `or`, `next`, `always`, `eventually`,
/// `eventually_within` / `always_within` (bounded, not started: `"within"` is relative),
/// `eventually_by` / `always_until` (bounded, started: `"deadline"` is absolute).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(into = "TermJson", from = "TermJson")]
pub enum Term {
    /// A constant.
    Const(bool),
    /// Predicate `id` (or its negation) at the step the term is next progressed against.
    Lit {
        /// The predicate id.
        id: u32,
        /// `false` for the negated predicate.
        positive: bool,
    },
    /// Conjunction of at least two normalised terms, none of them a constant or a conjunction.
    And(Arc<[Term]>),
    /// Disjunction of at least two normalised terms, none of them a constant or a disjunction.
    Or(Arc<[Term]>),
    /// The argument at the step after the one this term is progressed against.
    Next(Arc<Term>),
    /// The argument from now on.
    Always(Arc<Term>),
    /// The argument now or later (unbounded).
    Eventually(Arc<Term>),
    /// A bounded `eventually` whose bound starts when it is first progressed.
    EventuallyWithin {
        /// The awaited term.
        arg: Arc<Term>,
        /// The relative bound.
        bound: Bound,
    },
    /// A started bounded `eventually`: the argument at some step up to the deadline.
    EventuallyBy {
        /// The awaited term.
        arg: Arc<Term>,
        /// The absolute deadline.
        deadline: Deadline,
    },
    /// The negation of a bounded `eventually`, not started: the argument at every step of the bound.
    AlwaysWithin {
        /// The required term.
        arg: Arc<Term>,
        /// The relative bound.
        bound: Bound,
    },
    /// A started [`Term::AlwaysWithin`]: the argument at every step up to the deadline.
    AlwaysUntil {
        /// The required term.
        arg: Arc<Term>,
        /// The absolute deadline.
        deadline: Deadline,
    },
}

/// What a pending term presumes about the run if the run stopped now, ordered from worst to best.
///
/// `and` takes the minimum, `or` the maximum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Presumption {
    /// Definitely false (an obligation failed).
    False,
    /// An unbounded `eventually` is still waiting: presumably false.
    PresumedFalse,
    /// Only bounded obligations (`next`, a bounded `eventually` before its bound) are open.
    Unknown,
    /// An `always` is open: nothing failed, and a finite run cannot prove more.
    PresumedTrue,
    /// Definitely true.
    True,
}

impl Term {
    /// Lowers a formula: negations pushed to the predicates, `implies` and `now` removed.
    pub fn lower(formula: &Formula) -> Term {
        lower(formula, false)
    }

    /// The presumption of this term if the run stopped before it was progressed again.
    pub fn presumption(&self) -> Presumption {
        match self {
            Term::Const(true) => Presumption::True,
            Term::Const(false) => Presumption::False,
            // A literal in a residual waits for a step that never came: an open `next`.
            Term::Lit { .. }
            | Term::Next(_)
            | Term::EventuallyWithin { .. }
            | Term::EventuallyBy { .. }
            | Term::AlwaysWithin { .. }
            | Term::AlwaysUntil { .. } => Presumption::Unknown,
            Term::Always(_) => Presumption::PresumedTrue,
            Term::Eventually(_) => Presumption::PresumedFalse,
            Term::And(args) => args
                .iter()
                .map(Term::presumption)
                .min()
                .unwrap_or(Presumption::True),
            Term::Or(args) => args
                .iter()
                .map(Term::presumption)
                .max()
                .unwrap_or(Presumption::False),
        }
    }

    /// The number of nodes in this term (a measure of residual size).
    pub fn size(&self) -> usize {
        match self {
            Term::Const(_) | Term::Lit { .. } => 1,
            Term::And(args) | Term::Or(args) => 1 + args.iter().map(Term::size).sum::<usize>(),
            Term::Next(arg) | Term::Always(arg) | Term::Eventually(arg) => 1 + arg.size(),
            Term::EventuallyWithin { arg, .. }
            | Term::EventuallyBy { arg, .. }
            | Term::AlwaysWithin { arg, .. }
            | Term::AlwaysUntil { arg, .. } => 1 + arg.size(),
        }
    }
}

fn lower(formula: &Formula, negate: bool) -> Term {
    let lowered = |arg: &Formula, negate| Arc::new(lower(arg, negate));
    match formula {
        Formula::Pred { id } => Term::Lit {
            id: *id,
            positive: !negate,
        },
        Formula::Const { value } => Term::Const(*value != negate),
        Formula::Not { arg } => lower(arg, !negate),
        Formula::And { args } if negate => or_of(args.iter().map(|arg| lower(arg, true))),
        Formula::And { args } => and_of(args.iter().map(|arg| lower(arg, false))),
        Formula::Or { args } if negate => and_of(args.iter().map(|arg| lower(arg, true))),
        Formula::Or { args } => or_of(args.iter().map(|arg| lower(arg, false))),
        Formula::Implies { left, right } if negate => and_of([lower(left, false), lower(right, true)]),
        Formula::Implies { left, right } => or_of([lower(left, true), lower(right, false)]),
        Formula::Now { arg } => lower(arg, negate),
        Formula::Next { arg } => Term::Next(lowered(arg, negate)),
        Formula::Always { arg } if negate => Term::Eventually(lowered(arg, true)),
        Formula::Always { arg } => Term::Always(lowered(arg, false)),
        Formula::Eventually { arg, within: None } if negate => Term::Always(lowered(arg, true)),
        Formula::Eventually { arg, within: None } => Term::Eventually(lowered(arg, false)),
        Formula::Eventually {
            arg,
            within: Some(bound),
        } if negate => Term::AlwaysWithin {
            arg: lowered(arg, true),
            bound: *bound,
        },
        Formula::Eventually {
            arg,
            within: Some(bound),
        } => Term::EventuallyWithin {
            arg: lowered(arg, false),
            bound: *bound,
        },
    }
}

/// Which junction a list of terms forms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Junction {
    And,
    Or,
}

/// The normalised conjunction of `terms`.
pub fn and_of(terms: impl IntoIterator<Item = Term>) -> Term {
    junction_of(terms, Junction::And)
}

/// The normalised disjunction of `terms`.
pub fn or_of(terms: impl IntoIterator<Item = Term>) -> Term {
    junction_of(terms, Junction::Or)
}

fn junction_of(terms: impl IntoIterator<Item = Term>, junction: Junction) -> Term {
    let (unit, absorbing) = match junction {
        Junction::And => (true, false),
        Junction::Or => (false, true),
    };
    let mut parts = Vec::new();
    for term in terms {
        match term {
            Term::Const(value) if value == unit => {}
            Term::Const(_) => return Term::Const(absorbing),
            Term::And(args) if junction == Junction::And => parts.extend(args.iter().cloned()),
            Term::Or(args) if junction == Junction::Or => parts.extend(args.iter().cloned()),
            other => parts.push(other),
        }
    }
    normalise(&mut parts, junction);
    match parts.len() {
        0 => Term::Const(unit),
        1 => parts.pop().unwrap_or(Term::Const(unit)),
        _ if junction == Junction::And => Term::And(parts.into()),
        _ => Term::Or(parts.into()),
    }
}

/// Puts the (constant-free, flattened) parts of a junction in canonical order, drops duplicates and
/// keeps, of bounded obligations on the same argument with deadlines in the same unit, only the one
/// that decides the junction.
pub(crate) fn normalise(parts: &mut Vec<Term>, junction: Junction) {
    if parts.len() < 2 {
        return;
    }
    parts.sort_unstable();
    parts.dedup();
    // Sorted by (argument, deadline), so comparable bounded obligations are adjacent, earliest first.
    parts.dedup_by(|later, kept| {
        let keep_later = match (&*kept, &*later) {
            (Term::EventuallyBy { arg: a, deadline: d }, Term::EventuallyBy { arg: b, deadline: e })
                if a == b && d.same_unit(*e) =>
            {
                // Eventually by an earlier deadline implies eventually by a later one.
                junction == Junction::Or
            }
            (Term::AlwaysUntil { arg: a, deadline: d }, Term::AlwaysUntil { arg: b, deadline: e })
                if a == b && d.same_unit(*e) =>
            {
                // Always until a later deadline implies always until an earlier one.
                junction == Junction::And
            }
            _ => return false,
        };
        if keep_later {
            std::mem::swap(later, kept);
        }
        true
    });
}

/// The JSON shape of a [`Term`].
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
enum TermJson {
    Const { value: bool },
    Pred { id: u32 },
    NotPred { id: u32 },
    And { args: Vec<TermJson> },
    Or { args: Vec<TermJson> },
    Next { arg: Box<TermJson> },
    Always { arg: Box<TermJson> },
    Eventually { arg: Box<TermJson> },
    EventuallyWithin { arg: Box<TermJson>, within: Bound },
    EventuallyBy { arg: Box<TermJson>, deadline: Deadline },
    AlwaysWithin { arg: Box<TermJson>, within: Bound },
    AlwaysUntil { arg: Box<TermJson>, deadline: Deadline },
}

impl From<Term> for TermJson {
    fn from(term: Term) -> Self {
        TermJson::from(&term)
    }
}

impl From<&Term> for TermJson {
    fn from(term: &Term) -> Self {
        let boxed = |arg: &Arc<Term>| Box::new(TermJson::from(&**arg));
        match term {
            Term::Const(value) => TermJson::Const { value: *value },
            Term::Lit { id, positive: true } => TermJson::Pred { id: *id },
            Term::Lit { id, positive: false } => TermJson::NotPred { id: *id },
            Term::And(args) => TermJson::And {
                args: args.iter().map(TermJson::from).collect(),
            },
            Term::Or(args) => TermJson::Or {
                args: args.iter().map(TermJson::from).collect(),
            },
            Term::Next(arg) => TermJson::Next { arg: boxed(arg) },
            Term::Always(arg) => TermJson::Always { arg: boxed(arg) },
            Term::Eventually(arg) => TermJson::Eventually { arg: boxed(arg) },
            Term::EventuallyWithin { arg, bound } => TermJson::EventuallyWithin {
                arg: boxed(arg),
                within: *bound,
            },
            Term::EventuallyBy { arg, deadline } => TermJson::EventuallyBy {
                arg: boxed(arg),
                deadline: *deadline,
            },
            Term::AlwaysWithin { arg, bound } => TermJson::AlwaysWithin {
                arg: boxed(arg),
                within: *bound,
            },
            Term::AlwaysUntil { arg, deadline } => TermJson::AlwaysUntil {
                arg: boxed(arg),
                deadline: *deadline,
            },
        }
    }
}

impl From<TermJson> for Term {
    fn from(json: TermJson) -> Self {
        let arc = |arg: Box<TermJson>| Arc::new(Term::from(*arg));
        match json {
            TermJson::Const { value } => Term::Const(value),
            TermJson::Pred { id } => Term::Lit { id, positive: true },
            TermJson::NotPred { id } => Term::Lit { id, positive: false },
            // Re-normalised, so a hand-edited residual still upholds the invariants.
            TermJson::And { args } => and_of(args.into_iter().map(Term::from)),
            TermJson::Or { args } => or_of(args.into_iter().map(Term::from)),
            TermJson::Next { arg } => Term::Next(arc(arg)),
            TermJson::Always { arg } => Term::Always(arc(arg)),
            TermJson::Eventually { arg } => Term::Eventually(arc(arg)),
            TermJson::EventuallyWithin { arg, within } => Term::EventuallyWithin {
                arg: arc(arg),
                bound: within,
            },
            TermJson::EventuallyBy { arg, deadline } => Term::EventuallyBy {
                arg: arc(arg),
                deadline,
            },
            TermJson::AlwaysWithin { arg, within } => Term::AlwaysWithin {
                arg: arc(arg),
                bound: within,
            },
            TermJson::AlwaysUntil { arg, deadline } => Term::AlwaysUntil {
                arg: arc(arg),
                deadline,
            },
        }
    }
}
