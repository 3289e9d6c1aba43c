//! Checking a spec's properties step by step, shared by `uatu run` and
//! `uatu check` so that both reach the same verdicts from the same states.

use std::collections::BTreeMap;
use std::path::Path;

use crate::Error;
use crate::action::ResolvedAction;
use crate::ltl::{Formula, PredicateError, PredicateValue, PropertySet, StepInput, Verdict};
use crate::spec::{SpecInstance, SpecStep};
use crate::trace::{Counts, Event, PropertyStep, PropertySummary};

/// The properties of one run, with the first step each was violated at.
pub struct Verifier {
    properties: PropertySet,
    /// The action dispatched just before each property's first violation.
    led_by: BTreeMap<String, Option<ResolvedAction>>,
}

impl Verifier {
    /// A verifier of `properties`, each a name and its formula.
    pub fn new(properties: impl IntoIterator<Item = (String, Formula)>) -> Verifier {
        Verifier {
            properties: PropertySet::new(properties),
            led_by: BTreeMap::new(),
        }
    }

    /// A verifier of the properties a loaded spec declared; one the host cannot
    /// read as a formula is a spec error naming the property.
    pub fn for_spec(spec: &Path, properties: &[(String, serde_json::Value)]) -> Result<Verifier, Error> {
        let formulas = properties
            .iter()
            .map(|(name, formula)| {
                serde_json::from_value(formula.clone())
                    .map(|formula| (name.clone(), formula))
                    .map_err(|source| Error::Property {
                        spec: spec.display().to_string(),
                        property: name.clone(),
                        source,
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Verifier::new(formulas))
    }

    /// Progresses every property over one evaluated step. `last_action` is the
    /// action that led to this step's state. Returns each property's standing
    /// for the trace, and an event per property first violated here.
    pub fn step(
        &mut self,
        index: u64,
        time_ms: u64,
        predicates: &[PredicateValue],
        last_action: Option<&ResolvedAction>,
    ) -> (BTreeMap<String, PropertyStep>, Vec<Event>) {
        let input = StepInput {
            index,
            time_ms,
            predicates,
        };
        let newly_violated: Vec<String> = self
            .properties
            .step(&input)
            .into_iter()
            .map(str::to_owned)
            .collect();
        let mut events = Vec::with_capacity(newly_violated.len());
        for property in newly_violated {
            self.led_by.insert(property.clone(), last_action.cloned());
            events.push(Event::Violation { property });
        }
        let standings = self
            .properties
            .monitors()
            .iter()
            .map(|monitor| {
                let errors = monitor
                    .formula()
                    .predicate_ids()
                    .into_iter()
                    .filter_map(|id| match predicates.get(id as usize) {
                        Some(Err(error)) => Some(error.to_string()),
                        _ => None,
                    })
                    .collect();
                let status = match monitor.status() {
                    crate::ltl::Status::Ok => "ok",
                    crate::ltl::Status::Violated { .. } => "violated",
                };
                let standing = PropertyStep {
                    status: status.into(),
                    residual: monitor.residual_json(),
                    errors,
                };
                (monitor.name().to_owned(), standing)
            })
            .collect();
        (standings, events)
    }

    /// After a step whose `violations` ([`Verifier::step`]'s events) are not empty:
    /// a violated property is decided, so `spec` stops running the predicates that
    /// only decided properties refer to. The set changes at no other step.
    pub fn skip_decided_predicates(&self, violations: &[Event], spec: &mut SpecInstance) {
        if !violations.is_empty() {
            spec.evaluate_only(&self.properties.needed_predicates());
        }
    }

    /// Whether any property has been violated so far.
    pub fn any_violated(&self) -> bool {
        self.properties
            .monitors()
            .iter()
            .any(|m| m.status() != crate::ltl::Status::Ok)
    }

    /// Whether the property `name` has been violated so far.
    pub fn is_violated(&self, name: &str) -> bool {
        self.properties
            .monitors()
            .iter()
            .any(|m| m.name() == name && m.status() != crate::ltl::Status::Ok)
    }

    /// Whether the run fails: some property violated, or (under `strict`) unmet.
    pub fn fails_run(&self, strict: bool) -> bool {
        self.properties.fails_run(strict)
    }

    /// Each property's end-of-run verdict, for `summary.json` and the report.
    pub fn summaries(&self) -> Vec<PropertySummary> {
        self.properties
            .reports()
            .into_iter()
            .map(|report| {
                let first_violation_step = match report.verdict {
                    Verdict::Violated { step, .. } => Some(step),
                    _ => None,
                };
                PropertySummary {
                    verdict: report.verdict.name().to_owned(),
                    first_violation_step,
                    led_by: self.led_by.get(&report.name).cloned().flatten(),
                    errors: report
                        .predicate_errors
                        .iter()
                        .map(|failure| format!("step {}: {}", failure.step, failure.error))
                        .collect(),
                    name: report.name,
                }
            })
            .collect()
    }
}

/// The spec's predicate results as the LTL engine reads them; a predicate that threw
/// is an error carrying its message, stack and source location.
pub fn predicate_values(step: &SpecStep) -> Vec<PredicateValue> {
    step.predicates
        .iter()
        .map(|value| match value {
            crate::spec::PredicateValue::Value(holds) => Ok(*holds),
            // Read by no property: every one that refers to it is decided.
            crate::spec::PredicateValue::Skipped => Ok(false),
            crate::spec::PredicateValue::Error { error } => Err(PredicateError {
                message: error.message.clone(),
                stack: Some(error.stack.clone()).filter(|s| !s.is_empty()),
                location: error.location.clone(),
            }),
        })
        .collect()
}

/// Verdict counts of `summaries`, to fill into [`Counts`].
pub fn count_verdicts(summaries: &[PropertySummary], counts: &mut Counts) {
    for summary in summaries {
        match summary.verdict.as_str() {
            "violated" => counts.violated += 1,
            "passed" => counts.passed += 1,
            "inconclusive" => counts.inconclusive += 1,
            _ => counts.unmet += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_violation_is_reported_once_with_the_action_that_led_to_it() {
        let mut verifier = Verifier::new([("positive".to_string(), Formula::pred(0))]);
        let action = ResolvedAction {
            action: crate::action::Action::Wait { duration_millis: 10 },
            generator: "0:wait".into(),
            point: None,
            bounds: None,
            to_point: None,
            applied: crate::action::Applied::Unknown,
            detail: String::new(),
        };
        let (_, events) = verifier.step(0, 0, &[Ok(true)], None);
        assert!(events.is_empty());
        let (standings, events) = verifier.step(1, 10, &[Ok(false)], Some(&action));
        assert_eq!(
            events,
            vec![Event::Violation {
                property: "positive".into()
            }]
        );
        assert_eq!(standings["positive"].status, "violated");
        let (_, events) = verifier.step(2, 20, &[Ok(false)], None);
        assert!(events.is_empty(), "only the first violation is an event");
        let summaries = verifier.summaries();
        assert_eq!(summaries[0].verdict, "violated");
        assert_eq!(summaries[0].first_violation_step, Some(1));
        assert_eq!(summaries[0].led_by.as_ref(), Some(&action));
    }

    #[test]
    fn predicate_errors_are_kept_with_the_property_that_read_them() {
        let mut verifier = Verifier::new([
            ("reads".to_string(), Formula::pred(1)),
            ("other".to_string(), Formula::pred(0)),
        ]);
        let error = PredicateError {
            message: "boom".into(),
            stack: None,
            location: Some("spec.ts:3:5".into()),
        };
        let (standings, _) = verifier.step(0, 0, &[Ok(true), Err(error)], None);
        assert_eq!(standings["reads"].errors, vec!["boom".to_string()]);
        assert!(standings["other"].errors.is_empty());
    }
}
