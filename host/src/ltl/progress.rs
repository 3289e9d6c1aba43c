//! Progression: rewriting a term against one step.
//!
//! `progress(t, s)` is the term that must hold from the step after `s` for `t` to hold from `s`.

use std::sync::Arc;

use super::monitor::StepInput;
use super::term::{Deadline, Term, and_of, or_of};

/// Rewrites `term` against the predicate values and the index/time of `step`.
pub fn progress(term: &Term, step: &StepInput<'_>) -> Term {
    match term {
        Term::Const(value) => Term::Const(*value),
        Term::Lit { id, positive } => Term::Const(step.truth(*id) == *positive),
        // Lazy: a conjunction stops progressing its parts at the first that fails.
        Term::And(args) => and_of(args.iter().map(|arg| progress(arg, step))),
        Term::Or(args) => or_of(args.iter().map(|arg| progress(arg, step))),
        Term::Next(arg) => Term::clone(arg),
        Term::Always(arg) => and_of([progress(arg, step), term.clone()]),
        Term::Eventually(arg) => or_of([progress(arg, step), term.clone()]),
        Term::EventuallyWithin { arg, bound } => {
            eventually_by(arg, Deadline::start(*bound, step.index, step.time_ms), step)
        }
        Term::EventuallyBy { arg, deadline } => eventually_by(arg, *deadline, step),
        Term::AlwaysWithin { arg, bound } => {
            always_until(arg, Deadline::start(*bound, step.index, step.time_ms), step)
        }
        Term::AlwaysUntil { arg, deadline } => always_until(arg, *deadline, step),
    }
}

fn eventually_by(arg: &Arc<Term>, deadline: Deadline, step: &StepInput<'_>) -> Term {
    let here = progress(arg, step);
    if deadline.reached(step.index, step.time_ms) {
        here
    } else {
        or_of([
            here,
            Term::EventuallyBy {
                arg: Arc::clone(arg),
                deadline,
            },
        ])
    }
}

fn always_until(arg: &Arc<Term>, deadline: Deadline, step: &StepInput<'_>) -> Term {
    let here = progress(arg, step);
    if deadline.reached(step.index, step.time_ms) {
        here
    } else {
        and_of([
            here,
            Term::AlwaysUntil {
                arg: Arc::clone(arg),
                deadline,
            },
        ])
    }
}
