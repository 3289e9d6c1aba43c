//! A reference evaluator for tests: direct recursive finite-trace semantics over a whole trace,
//! written independently of progression, for the property-based comparison.
//!
//! Values are five-valued: definitely false/true, presumed false/true, unknown; `and` is the
//! minimum, `or` the maximum, `not` the mirror image. Past the end of the trace a formula's value is
//! what it presumes: a predicate awaited at a step that never came or an open `next` or bounded
//! `eventually` is unknown, an open `always` presumed true, an open `eventually` presumed false.

use super::formula::{Bound, Formula};
use super::monitor::PredicateValue;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Value {
    False,
    PresumedFalse,
    Unknown,
    PresumedTrue,
    True,
}

fn not(value: Value) -> Value {
    match value {
        Value::False => Value::True,
        Value::PresumedFalse => Value::PresumedTrue,
        Value::Unknown => Value::Unknown,
        Value::PresumedTrue => Value::PresumedFalse,
        Value::True => Value::False,
    }
}

fn truth(value: bool) -> Value {
    if value { Value::True } else { Value::False }
}

/// One step of a trace.
#[derive(Debug, Clone)]
pub struct RefStep {
    pub time_ms: u64,
    pub predicates: Vec<PredicateValue>,
}

/// The value of `formula` at position `i` of `trace` (`i == trace.len()` is "after the end").
pub fn eval(formula: &Formula, i: usize, trace: &[RefStep]) -> Value {
    if i >= trace.len() {
        return after_end(formula);
    }
    let at = |f: &Formula, j: usize| eval(f, j, trace);
    let n = trace.len();
    match formula {
        Formula::Pred { id } => truth(matches!(trace[i].predicates.get(*id as usize), Some(Ok(true)))),
        Formula::Const { value } => truth(*value),
        Formula::Not { arg } => not(at(arg, i)),
        Formula::And { args } => args.iter().map(|a| at(a, i)).min().unwrap_or(Value::True),
        Formula::Or { args } => args.iter().map(|a| at(a, i)).max().unwrap_or(Value::False),
        Formula::Implies { left, right } => not(at(left, i)).max(at(right, i)),
        Formula::Now { arg } => at(arg, i),
        Formula::Next { arg } => at(arg, i + 1),
        Formula::Always { arg } => (i..n)
            .map(|j| at(arg, j))
            .min()
            .unwrap_or(Value::True)
            .min(Value::PresumedTrue),
        Formula::Eventually { arg, within: None } => (i..n)
            .map(|j| at(arg, j))
            .max()
            .unwrap_or(Value::False)
            .max(Value::PresumedFalse),
        Formula::Eventually {
            arg,
            within: Some(bound),
        } => {
            let last = (i..n).find(|&j| match bound {
                Bound::Steps(k) => (j - i) as u64 >= *k,
                Bound::Ms(k) => trace[j].time_ms - trace[i].time_ms >= *k,
            });
            match last {
                Some(last) => (i..=last).map(|j| at(arg, j)).max().unwrap_or(Value::False),
                None => (i..n)
                    .map(|j| at(arg, j))
                    .max()
                    .unwrap_or(Value::False)
                    .max(Value::Unknown),
            }
        }
    }
}

fn after_end(formula: &Formula) -> Value {
    match formula {
        Formula::Pred { .. } => Value::Unknown,
        Formula::Const { value } => truth(*value),
        Formula::Not { arg } => not(after_end(arg)),
        Formula::And { args } => args.iter().map(after_end).min().unwrap_or(Value::True),
        Formula::Or { args } => args.iter().map(after_end).max().unwrap_or(Value::False),
        Formula::Implies { left, right } => not(after_end(left)).max(after_end(right)),
        Formula::Now { arg } => after_end(arg),
        Formula::Next { .. } => Value::Unknown,
        Formula::Always { .. } => Value::PresumedTrue,
        Formula::Eventually { within: None, .. } => Value::PresumedFalse,
        Formula::Eventually { within: Some(_), .. } => Value::Unknown,
    }
}

/// The reference verdict of a property (checked from every step) over a whole trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefVerdict {
    Violated { step: u64 },
    Passed,
    Inconclusive,
    Unmet,
}

/// The property's value over `trace` checked from every step.
fn property_value(formula: &Formula, trace: &[RefStep]) -> Value {
    (0..trace.len())
        .map(|i| eval(formula, i, trace))
        .min()
        .unwrap_or(Value::True)
}

pub fn verdict(formula: &Formula, trace: &[RefStep]) -> RefVerdict {
    // The first violating step: the end of the shortest prefix on which the property is false.
    if let Some(end) = (1..=trace.len()).find(|&len| property_value(formula, &trace[..len]) == Value::False) {
        return RefVerdict::Violated {
            step: (end - 1) as u64,
        };
    }
    match property_value(formula, trace) {
        Value::False => RefVerdict::Violated { step: 0 },
        Value::PresumedFalse => RefVerdict::Unmet,
        Value::Unknown => RefVerdict::Inconclusive,
        Value::PresumedTrue | Value::True => RefVerdict::Passed,
    }
}
