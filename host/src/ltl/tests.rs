//! Tests of the LTL engine: hand-written cases per operator and nesting, merging, errors, JSON, and
//! a property-based comparison against the reference evaluator.

use proptest::prelude::*;

use super::reference::{self, RefStep, RefVerdict};
use super::*;

const P: u32 = 0;
const Q: u32 = 1;
const R: u32 = 2;

fn p() -> Formula {
    Formula::pred(P)
}
fn q() -> Formula {
    Formula::pred(Q)
}
fn r() -> Formula {
    Formula::pred(R)
}

/// Predicate values of a step written as the letters of the true predicates, e.g. `"pq"`.
fn values(letters: &str) -> Vec<PredicateValue> {
    ["p", "q", "r"]
        .iter()
        .map(|name| Ok(letters.contains(name)))
        .collect()
}

/// Runs `formula` over steps given as `(time_ms, letters)`.
fn run_timed(formula: Formula, steps: &[(u64, &str)]) -> PropertyMonitor {
    let mut monitor = PropertyMonitor::new("property", formula);
    for (index, (time_ms, letters)) in steps.iter().enumerate() {
        let predicates = values(letters);
        monitor.step(&StepInput {
            index: index as u64,
            time_ms: *time_ms,
            predicates: &predicates,
        });
    }
    monitor
}

/// Runs `formula` over steps one second apart.
fn run(formula: Formula, steps: &[&str]) -> PropertyMonitor {
    let timed: Vec<(u64, &str)> = steps
        .iter()
        .enumerate()
        .map(|(i, s)| (i as u64 * 1000, *s))
        .collect();
    run_timed(formula, &timed)
}

fn verdict(formula: Formula, steps: &[&str]) -> Verdict {
    run(formula, steps).verdict()
}

fn violated_at(step: u64) -> Verdict {
    Verdict::Violated {
        step,
        time_ms: step * 1000,
        errors: Vec::new(),
    }
}

#[test]
fn a_predicate_is_checked_at_every_step() {
    assert_eq!(verdict(p(), &["p", "p", "p"]), Verdict::Passed);
    assert_eq!(verdict(p(), &["p", "", "p", ""]), violated_at(1));
    assert_eq!(verdict(p(), &[]), Verdict::Passed);
}

#[test]
fn constants() {
    assert_eq!(verdict(Formula::constant(true), &["", ""]), Verdict::Passed);
    assert_eq!(verdict(Formula::constant(false), &["", ""]), violated_at(0));
    assert_eq!(verdict(Formula::constant(false), &[]), Verdict::Passed);
}

#[test]
fn not_and_or_implies_now() {
    assert_eq!(verdict(p().not(), &["q", "", "r"]), Verdict::Passed);
    assert_eq!(verdict(p().not(), &["q", "p"]), violated_at(1));
    assert_eq!(verdict(p().and(q()), &["pq", "pqr", "q"]), violated_at(2));
    assert_eq!(verdict(p().or(q()), &["p", "q", "pq"]), Verdict::Passed);
    assert_eq!(verdict(p().or(q()), &["p", "r"]), violated_at(1));
    assert_eq!(verdict(p().implies(q()), &["", "pq", "q", "r"]), Verdict::Passed);
    assert_eq!(verdict(p().implies(q()), &["", "pq", "p"]), violated_at(2));
    assert_eq!(verdict(p().now(), &["p", ""]), violated_at(1));
    assert_eq!(verdict(Formula::And { args: vec![] }, &["", ""]), Verdict::Passed);
    assert_eq!(verdict(Formula::Or { args: vec![] }, &["p"]), violated_at(0));
}

#[test]
fn next() {
    let p_then_q = p().implies(q().next()).always();
    assert_eq!(verdict(p_then_q.clone(), &["p", "q", ""]), Verdict::Passed);
    assert_eq!(verdict(p_then_q.clone(), &["p", "", ""]), violated_at(1));
    // The run stopped while a `next` was open.
    assert_eq!(verdict(p_then_q, &["", "p"]), Verdict::Inconclusive);
    // A bare `next` is open after the last step of every run.
    assert_eq!(verdict(q().next(), &["", "q", "q"]), Verdict::Inconclusive);
    assert_eq!(verdict(q().next().next(), &["", "", "q", ""]), violated_at(3));
}

#[test]
fn always_with_an_explicit_wrapper_means_the_same() {
    let traces: [&[&str]; 4] = [&["p", "p"], &["p", "", "p"], &["", "q"], &[]];
    for formula in [p(), p().implies(q().eventually()), p().implies(q().next())] {
        for trace in traces {
            assert_eq!(
                verdict(formula.clone(), trace),
                verdict(formula.clone().always(), trace)
            );
            assert_eq!(
                verdict(formula.clone(), trace),
                verdict(formula.clone().always().always(), trace)
            );
        }
    }
}

#[test]
fn unbounded_eventually() {
    let response = p().implies(q().eventually()).always();
    assert_eq!(verdict(response.clone(), &["p", "", "q", ""]), Verdict::Passed);
    assert_eq!(verdict(response.clone(), &["p", "", "q", "p"]), Verdict::Unmet);
    assert_eq!(verdict(response, &["", "r"]), Verdict::Passed);
    // Checked from every step: q must keep coming.
    assert_eq!(verdict(q().eventually(), &["q", "", "q"]), Verdict::Passed);
    assert_eq!(verdict(q().eventually(), &["q", ""]), Verdict::Unmet);
}

#[test]
fn not_eventually_is_always_not() {
    let never_p = p().eventually().not();
    assert_eq!(verdict(never_p.clone(), &["", "q", ""]), Verdict::Passed);
    assert_eq!(verdict(never_p, &["", "q", "p", ""]), violated_at(2));
}

#[test]
fn eventually_always_in_a_finite_run() {
    let settles = p().always().eventually();
    assert_eq!(verdict(settles.clone(), &["", "p", "p"]), Verdict::Passed);
    assert_eq!(verdict(settles.clone(), &["p", "p", ""]), Verdict::Unmet);
    assert_eq!(verdict(settles, &[]), Verdict::Passed);
}

#[test]
fn bounded_eventually_in_steps_examines_the_bound_step() {
    let within_two = p().implies(q().eventually_within(Bound::Steps(2))).always();
    assert_eq!(verdict(within_two.clone(), &["p", "", "q"]), Verdict::Passed);
    assert_eq!(verdict(within_two.clone(), &["p", "", "", "q"]), violated_at(2));
    assert_eq!(verdict(within_two.clone(), &["p", ""]), Verdict::Inconclusive);
    assert_eq!(verdict(within_two, &["p", "", "q"]), Verdict::Passed);
    // A bound of zero: the argument must hold at the starting step.
    let at_once = p().implies(q().eventually_within(Bound::Steps(0)));
    assert_eq!(verdict(at_once.clone(), &["pq", ""]), Verdict::Passed);
    assert_eq!(verdict(at_once, &["", "p"]), violated_at(1));
}

#[test]
fn bounded_eventually_in_milliseconds_uses_step_times() {
    let within = p().implies(q().eventually_within(Bound::Ms(500))).always();
    assert_eq!(
        run_timed(within.clone(), &[(0, "p"), (300, ""), (500, "q")]).verdict(),
        Verdict::Passed
    );
    // The first step at or past the deadline is the last one examined.
    assert_eq!(
        run_timed(within.clone(), &[(0, "p"), (300, ""), (700, "q")]).verdict(),
        Verdict::Passed
    );
    assert_eq!(
        run_timed(within.clone(), &[(0, "p"), (300, ""), (700, ""), (800, "q")]).verdict(),
        Verdict::Violated {
            step: 2,
            time_ms: 700,
            errors: vec![]
        }
    );
    assert_eq!(
        run_timed(within, &[(0, "p"), (499, "")]).verdict(),
        Verdict::Inconclusive
    );
}

#[test]
fn steps_and_milliseconds_bounds_differ_on_the_same_trace() {
    let steps: &[(u64, &str)] = &[(0, "p"), (10, ""), (20, ""), (30, "q")];
    let by_steps = p().implies(q().eventually_within(Bound::Steps(3)));
    let by_ms = p().implies(q().eventually_within(Bound::Ms(15)));
    assert_eq!(run_timed(by_steps, steps).verdict(), Verdict::Passed);
    // The 20 ms step is the first at or past 0 + 15 ms: the last one examined.
    assert_eq!(
        run_timed(by_ms, steps).verdict(),
        Verdict::Violated {
            step: 2,
            time_ms: 20,
            errors: vec![]
        }
    );
}

#[test]
fn nested_bounds() {
    // After p, within 2 steps q, and within 1 step of that q, r.
    let nested = p().implies(
        q().and(r().eventually_within(Bound::Steps(1)))
            .eventually_within(Bound::Steps(2)),
    );
    assert_eq!(verdict(nested.clone(), &["p", "q", "r"]), Verdict::Passed);
    assert_eq!(verdict(nested.clone(), &["p", "", "q", "r"]), Verdict::Passed);
    assert_eq!(verdict(nested.clone(), &["p", "q", "", ""]), violated_at(2));
    assert_eq!(verdict(nested.clone(), &["p", "", "q", ""]), violated_at(3));
    assert_eq!(verdict(nested.clone(), &["p", "", "", ""]), violated_at(2));
    assert_eq!(verdict(nested, &["p", "", "q"]), Verdict::Inconclusive);
    // An unbounded eventually inside a bounded one, still open: unmet beats inconclusive.
    let mixed = p().implies(q().eventually().next());
    assert_eq!(verdict(mixed, &["p", "", ""]), Verdict::Unmet);
}

#[test]
fn bounded_and_unbounded_open_is_unmet() {
    let both = p()
        .implies(q().eventually())
        .and(r().implies(q().eventually_within(Bound::Steps(5))));
    assert_eq!(verdict(both.clone(), &["p", "r"]), Verdict::Unmet);
    assert_eq!(verdict(both, &["r", ""]), Verdict::Inconclusive);
}

#[test]
fn violation_is_the_first_failing_step_and_monitoring_goes_on() {
    let mut monitor = PropertyMonitor::new("no p", p().not());
    let steps = ["", "p", "", "p"];
    let mut statuses = Vec::new();
    for (index, letters) in steps.iter().enumerate() {
        let predicates = values(letters);
        statuses.push(monitor.step(&StepInput {
            index: index as u64,
            time_ms: 7 * index as u64,
            predicates: &predicates,
        }));
    }
    let violated = Status::Violated { step: 1, time_ms: 7 };
    assert_eq!(statuses, vec![Status::Ok, violated, violated, violated]);
    assert_eq!(
        monitor.verdict(),
        Verdict::Violated {
            step: 1,
            time_ms: 7,
            errors: vec![]
        }
    );
}

fn total_size(monitor: &PropertyMonitor) -> usize {
    monitor.pending().iter().map(Term::size).sum()
}

#[test]
fn identical_obligations_merge_over_a_long_run() {
    let formulas = [
        p().implies(q().eventually()).always(),
        p().implies(q().eventually_within(Bound::Steps(1_000_000))),
        p().implies(q().eventually_within(Bound::Ms(10_000_000))),
        p().implies(q().eventually_within(Bound::Steps(50)).eventually()),
        q().eventually_within(Bound::Steps(20)).not(),
    ];
    for formula in formulas {
        let mut monitor = PropertyMonitor::new("response", formula.clone());
        let predicates = values("p");
        let mut largest = 0;
        for index in 0..10_000 {
            monitor.step(&StepInput {
                index,
                time_ms: index * 3,
                predicates: &predicates,
            });
            largest = largest.max(monitor.pending().len());
        }
        assert!(largest <= 2, "{formula:?} kept {largest} obligations");
        assert!(
            total_size(&monitor) <= 12,
            "{formula:?} kept residual {:?}",
            monitor.pending()
        );
        assert_eq!(monitor.status(), Status::Ok);
    }
}

#[test]
fn predicate_errors_count_as_false_and_are_kept() {
    let error = PredicateError {
        message: "TypeError: cannot read property 'balance' of undefined".into(),
        stack: Some("at balanceIsPositive (spec.ts:12:5)".into()),
        location: Some("spec.ts:12:5".into()),
    };
    let mut monitor = PropertyMonitor::new("balance", p());
    let good = values("p");
    let bad = vec![Err(error.clone()), Ok(true), Ok(true)];
    monitor.step(&StepInput {
        index: 0,
        time_ms: 0,
        predicates: &good,
    });
    monitor.step(&StepInput {
        index: 1,
        time_ms: 40,
        predicates: &bad,
    });
    monitor.step(&StepInput {
        index: 2,
        time_ms: 80,
        predicates: &bad,
    });
    let failure = |step, time_ms| PredicateFailure {
        step,
        time_ms,
        predicate: P,
        error: error.clone(),
    };
    assert_eq!(
        monitor.verdict(),
        Verdict::Violated {
            step: 1,
            time_ms: 40,
            errors: vec![failure(1, 40)]
        }
    );
    let report = monitor.report();
    assert_eq!(report.predicate_errors, vec![failure(1, 40), failure(2, 80)]);
    assert_eq!(report.predicate_error_count, 2);

    // The failed predicate is false, so its negation holds; the error is still kept.
    let mut negated = PropertyMonitor::new("not balance", p().not());
    negated.step(&StepInput {
        index: 0,
        time_ms: 0,
        predicates: &bad,
    });
    assert_eq!(negated.verdict(), Verdict::Passed);
    assert_eq!(negated.predicate_errors().1, 1);

    // Errors of predicates the property does not read are not its concern.
    let mut other = PropertyMonitor::new("q", q());
    other.step(&StepInput {
        index: 0,
        time_ms: 0,
        predicates: &bad,
    });
    assert_eq!(other.predicate_errors().1, 0);
}

#[test]
fn kept_errors_are_capped() {
    let mut monitor = PropertyMonitor::new("p", p().or(q()));
    let bad = vec![
        Err(PredicateError {
            message: "boom".into(),
            stack: None,
            location: None,
        }),
        Ok(true),
    ];
    for index in 0..100 {
        monitor.step(&StepInput {
            index,
            time_ms: index,
            predicates: &bad,
        });
    }
    let (kept, count) = monitor.predicate_errors();
    assert_eq!((kept.len(), count), (MAX_KEPT_ERRORS, 100));
    assert_eq!(monitor.verdict(), Verdict::Passed);
}

#[test]
fn a_missing_predicate_value_is_an_error() {
    let mut monitor = PropertyMonitor::new("r", r().not().implies(q()));
    let short = vec![Ok(true)];
    monitor.step(&StepInput {
        index: 0,
        time_ms: 0,
        predicates: &short,
    });
    let Verdict::Violated { step: 0, errors, .. } = monitor.verdict() else {
        panic!("expected a violation at step 0, got {:?}", monitor.verdict());
    };
    assert_eq!(errors.len(), 2);
    assert!(
        errors[0].error.message.contains("predicate 1 has no value"),
        "{errors:?}"
    );
}

#[test]
fn formula_json_has_the_documented_shape() {
    let json = r#"{"op":"always","arg":{"op":"implies",
        "left":{"op":"now","arg":{"op":"pred","id":0}},
        "right":{"op":"and","args":[
            {"op":"eventually","arg":{"op":"pred","id":1},"within":{"ms":1500}},
            {"op":"eventually","arg":{"op":"not","arg":{"op":"pred","id":2}},"within":null},
            {"op":"next","arg":{"op":"const","value":true}},
            {"op":"or","args":[{"op":"pred","id":2}]},
            {"op":"eventually","arg":{"op":"pred","id":1},"within":{"steps":3}}]}}}"#;
    let parsed: Formula = serde_json::from_str(json).expect("the documented JSON parses");
    let built = p().now().implies(Formula::And {
        args: vec![
            q().eventually_within(Bound::Ms(1500)),
            r().not().eventually(),
            Formula::constant(true).next(),
            Formula::Or { args: vec![r()] },
            q().eventually_within(Bound::Steps(3)),
        ],
    });
    assert_eq!(parsed, built.always());
    let again: Formula =
        serde_json::from_value(serde_json::to_value(&parsed).expect("serialises")).expect("parses");
    assert_eq!(again, parsed);
}

#[test]
fn residual_json_round_trips() {
    let formula = p()
        .implies(q().eventually_within(Bound::Ms(9000)).and(r().eventually()))
        .and(q().implies(p().next().next()))
        .and(r().eventually_within(Bound::Steps(4)).not())
        .and(q().always().eventually());
    let monitor = run(formula, &["p", "q", "p", ""]);
    assert!(monitor.pending().len() >= 3, "{:?}", monitor.pending());
    let json = monitor.residual_json();
    let text = serde_json::to_string(&json).expect("serialises");
    for op in [
        "eventually_by",
        "always_until",
        "not_pred",
        "eventually",
        "deadline",
    ] {
        assert!(text.contains(op), "{op} missing from {text}");
    }
    let parsed: Vec<Term> = serde_json::from_value(json).expect("residual parses back");
    assert_eq!(parsed, monitor.pending());
}

#[test]
fn verdict_json_and_failing_the_run() {
    let violated = Verdict::Violated {
        step: 4,
        time_ms: 1200,
        errors: vec![],
    };
    assert_eq!(
        serde_json::to_value(&violated).expect("serialises"),
        serde_json::json!({"verdict": "violated", "step": 4, "time_ms": 1200})
    );
    assert_eq!(
        serde_json::to_value(Verdict::Unmet).expect("serialises"),
        serde_json::json!({"verdict": "unmet"})
    );
    let parsed: Verdict = serde_json::from_str(r#"{"verdict":"inconclusive"}"#).expect("parses");
    assert_eq!(parsed, Verdict::Inconclusive);
    assert!(violated.fails_run(false) && violated.fails_run(true));
    assert!(!Verdict::Unmet.fails_run(false) && Verdict::Unmet.fails_run(true));
    assert!(!Verdict::Passed.fails_run(true) && !Verdict::Inconclusive.fails_run(true));
    assert_eq!(violated.to_string(), "violated at step 4 (1200 ms)");
}

#[test]
fn a_property_set_reports_new_violations_once() {
    let mut set = PropertySet::new([
        ("always p".to_string(), p()),
        ("q answers p".to_string(), p().implies(q().eventually())),
    ]);
    let mut newly = Vec::new();
    for (index, letters) in ["p", "", "", "p"].iter().enumerate() {
        let predicates = values(letters);
        let names: Vec<String> = set
            .step(&StepInput {
                index: index as u64,
                time_ms: 0,
                predicates: &predicates,
            })
            .iter()
            .map(|s| s.to_string())
            .collect();
        newly.push(names);
    }
    assert_eq!(newly, vec![vec![], vec!["always p".to_string()], vec![], vec![]]);
    let verdicts: Vec<&str> = set.reports().iter().map(|report| report.verdict.name()).collect();
    assert_eq!(verdicts, ["violated", "unmet"]);
    assert!(set.fails_run(false));
    let residuals = set.residual_json();
    assert_eq!(
        residuals["q answers p"],
        serde_json::json!([{"op": "eventually", "arg": {"op": "pred", "id": 1}}])
    );
}

#[test]
fn a_violated_property_is_decided_and_needs_no_more_predicates() {
    let mut set = PropertySet::new([
        ("always p".to_string(), p()),
        ("never r".to_string(), r().not()),
        ("q answers p".to_string(), p().implies(q().eventually())),
    ]);
    let mut step = |index: u64, predicates: &[PredicateValue]| {
        let names: Vec<String> = set
            .step(&StepInput {
                index,
                time_ms: 0,
                predicates,
            })
            .iter()
            .map(|s| s.to_string())
            .collect();
        (names, set.needed_predicates().into_iter().collect::<Vec<u32>>())
    };
    assert_eq!(step(0, &values("p")), (vec![], vec![P, Q, R]));
    // p is still needed by "q answers p" after "always p" is violated.
    assert_eq!(
        step(1, &values("")),
        (vec!["always p".to_string()], vec![P, Q, R])
    );
    assert_eq!(step(2, &values("r")), (vec!["never r".to_string()], vec![P, Q]));
    // A step without r's value: "never r" is decided, so it is neither stepped nor
    // charged with a missing predicate.
    assert_eq!(step(3, &[Ok(true), Ok(false)]), (vec![], vec![P, Q]));
    let reports = set.reports();
    assert_eq!(reports[1].predicate_errors, vec![]);
    assert_eq!(
        reports
            .iter()
            .map(|report| report.verdict.name())
            .collect::<Vec<_>>(),
        ["violated", "violated", "unmet"]
    );
    assert_eq!(
        reports[1].verdict,
        Verdict::Violated {
            step: 2,
            time_ms: 0,
            errors: vec![]
        }
    );
}

// ---- property-based comparison with the reference evaluator ----

fn bound() -> impl Strategy<Value = Option<Bound>> {
    prop_oneof![
        Just(None),
        (0u64..4).prop_map(|n| Some(Bound::Steps(n))),
        (0u64..12).prop_map(|n| Some(Bound::Ms(n)))
    ]
}

fn formula(predicates: u32) -> impl Strategy<Value = Formula> {
    let leaf = prop_oneof![4 => (0..predicates).prop_map(Formula::pred), 1 => any::<bool>().prop_map(Formula::constant)];
    leaf.prop_recursive(4, 24, 3, |inner| {
        prop_oneof![
            inner.clone().prop_map(Formula::not),
            prop::collection::vec(inner.clone(), 0..3).prop_map(|args| Formula::And { args }),
            prop::collection::vec(inner.clone(), 0..3).prop_map(|args| Formula::Or { args }),
            (inner.clone(), inner.clone()).prop_map(|(left, right)| left.implies(right)),
            inner.clone().prop_map(Formula::now),
            inner.clone().prop_map(Formula::next),
            inner.clone().prop_map(Formula::always),
            (inner, bound()).prop_map(|(arg, within)| Formula::Eventually {
                arg: Box::new(arg),
                within
            }),
        ]
    })
}

fn predicate_value() -> impl Strategy<Value = PredicateValue> {
    prop_oneof![
        4 => Just(Ok(true)),
        4 => Just(Ok(false)),
        1 => Just(Err(PredicateError { message: "thrown".into(), stack: None, location: None })),
    ]
}

fn trace(predicates: usize) -> impl Strategy<Value = Vec<RefStep>> {
    (
        0u64..10,
        prop::collection::vec(
            (0u64..6, prop::collection::vec(predicate_value(), predicates)),
            0..=12,
        ),
    )
        .prop_map(|(start, steps)| {
            let mut time_ms = start;
            steps
                .into_iter()
                .map(|(delta, predicates)| {
                    time_ms += delta;
                    RefStep { time_ms, predicates }
                })
                .collect()
        })
}

fn case() -> impl Strategy<Value = (Formula, Vec<RefStep>)> {
    (2u32..=3).prop_flat_map(|n| (formula(n), trace(n as usize)))
}

fn monitor_verdict(formula: &Formula, trace: &[RefStep]) -> (RefVerdict, Vec<Status>) {
    let mut monitor = PropertyMonitor::new("random", formula.clone());
    let statuses = trace
        .iter()
        .enumerate()
        .map(|(index, step)| {
            monitor.step(&StepInput {
                index: index as u64,
                time_ms: step.time_ms,
                predicates: &step.predicates,
            })
        })
        .collect();
    let verdict = match monitor.verdict() {
        Verdict::Violated { step, time_ms, .. } => {
            assert_eq!(time_ms, trace[step as usize].time_ms);
            RefVerdict::Violated { step }
        }
        Verdict::Passed => RefVerdict::Passed,
        Verdict::Inconclusive => RefVerdict::Inconclusive,
        Verdict::Unmet => RefVerdict::Unmet,
    };
    (verdict, statuses)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn progression_agrees_with_the_reference((formula, trace) in case()) {
        let (verdict, statuses) = monitor_verdict(&formula, &trace);
        prop_assert_eq!(verdict, reference::verdict(&formula, &trace), "formula {}", serde_json::to_string(&formula).unwrap_or_default());
        // Every prefix agrees too: the status after each step is the verdict of that prefix.
        for (index, status) in statuses.iter().enumerate() {
            let expected = match reference::verdict(&formula, &trace[..=index]) {
                RefVerdict::Violated { step } => Status::Violated { step, time_ms: trace[step as usize].time_ms },
                _ => Status::Ok,
            };
            prop_assert_eq!(*status, expected);
        }
    }

    #[test]
    fn residuals_round_trip_through_json((formula, trace) in case()) {
        let mut monitor = PropertyMonitor::new("random", formula);
        for (index, step) in trace.iter().enumerate() {
            monitor.step(&StepInput { index: index as u64, time_ms: step.time_ms, predicates: &step.predicates });
            let parsed: Vec<Term> = serde_json::from_value(monitor.residual_json()).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(parsed.as_slice(), monitor.pending());
        }
    }
}

#[test]
fn the_documented_residual_example() {
    let monitor = run(
        p().implies(q().eventually_within(Bound::Steps(3))).always(),
        &["", "", "", "", "p"],
    );
    assert_eq!(
        monitor.residual_json(),
        serde_json::json!([{"op":"eventually_by","arg":{"op":"pred","id":1},"deadline":{"step":7}}])
    );
    // Later p steps add later deadlines, which the earliest one subsumes.
    let monitor = run(
        p().implies(q().eventually_within(Bound::Steps(3))).always(),
        &["", "", "", "", "p", "p"],
    );
    assert_eq!(
        monitor.residual_json()[0]["deadline"],
        serde_json::json!({"step": 7})
    );
    assert_eq!(monitor.pending().len(), 1);
}

#[test]
fn spec_units_become_steps_or_milliseconds() {
    assert_eq!(Bound::from_spec(3.0, "steps"), Ok(Bound::Steps(3)));
    assert_eq!(Bound::from_spec(1.5, "seconds"), Ok(Bound::Ms(1500)));
    assert_eq!(Bound::from_spec(0.0004, "seconds"), Ok(Bound::Ms(1)));
    assert_eq!(Bound::from_spec(250.0, "milliseconds"), Ok(Bound::Ms(250)));
    assert!(matches!(
        Bound::from_spec(2.5, "steps"),
        Err(InvalidBound::Amount { .. })
    ));
    assert!(matches!(
        Bound::from_spec(-1.0, "milliseconds"),
        Err(InvalidBound::Amount { .. })
    ));
    assert!(matches!(
        Bound::from_spec(f64::NAN, "seconds"),
        Err(InvalidBound::Amount { .. })
    ));
    let unit = Bound::from_spec(1.0, "minutes").expect_err("minutes are not a unit");
    assert!(unit.to_string().contains("\"minutes\""), "{unit}");
}
