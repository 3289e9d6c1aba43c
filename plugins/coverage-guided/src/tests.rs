use super::*;

fn settings() -> Settings {
    Settings {
        exploration: 1.0,
        novelty_weight: 1.0,
        state_weight: 0.5,
        discount: 0.9,
        learning_rate: 0.25,
        optimism: 1.0,
        rarity: 0.0,
        optimism_weighting: 0.0,
    }
}

fn candidate(id: u32, weight: f64, path: &str, action: &str) -> Candidate {
    Candidate {
        id,
        weight,
        path: path.into(),
        action: action.into(),
    }
}

/// An observation of screen `screen`, whose abstraction is the screen itself.
fn observe<'a>(screen: &'a str, coverage: Option<&'a [String]>, snapshots: &'a str) -> Observation<'a> {
    Observation {
        screen,
        state: fnv_hash(screen),
        coverage,
        snapshots,
    }
}

#[test]
fn priors_share_a_generators_weight_among_its_actions() {
    let candidates = [
        candidate(0, 3.0, "0:a", "{\"n\":0}"),
        candidate(1, 3.0, "0:a", "{\"n\":1}"),
        candidate(2, 2.0, "1:b", "{\"n\":2}"),
        candidate(3, 0.0, "2:c", "{\"n\":3}"),
    ];
    let p = priors(&candidates);
    assert!((p[0] - 0.3).abs() < 1e-9 && (p[1] - 0.3).abs() < 1e-9, "{p:?}");
    assert!((p[2] - 0.4).abs() < 1e-9, "{p:?}");
    assert_eq!(p[3], 0.0);
    let all_zero = [candidate(0, 0.0, "0:a", "a"), candidate(1, 0.0, "1:b", "b")];
    assert_eq!(priors(&all_zero), vec![0.5, 0.5]);
}

#[test]
fn untried_actions_go_first_in_the_order_of_their_weights() {
    let mut strategy = CoverageGuided::new(settings(), 3);
    let candidates = [
        candidate(0, 1.0, "0:a", "a"),
        candidate(1, 5.0, "1:b", "b"),
        candidate(2, 2.0, "2:c", "c"),
    ];
    let chosen: Vec<usize> = (0..3)
        .map(|_| strategy.decide(&observe("s", Some(&[]), "{}"), &candidates))
        .collect();
    assert_eq!(chosen, [1, 2, 0]);
}

#[test]
fn the_action_that_leads_to_new_coverage_is_preferred() {
    let mut strategy = CoverageGuided::new(
        Settings {
            exploration: 0.2,
            ..settings()
        },
        7,
    );
    let candidates = [
        candidate(0, 1.0, "0:a", "a"),
        candidate(1, 1.0, "1:b", "b"),
        candidate(2, 1.0, "2:c", "c"),
    ];
    let mut coverage: Vec<String> = Vec::new();
    let mut chosen = Vec::new();
    for step in 0..40 {
        let index = strategy.decide(&observe("s", Some(&coverage), "{}"), &candidates);
        chosen.push(index);
        coverage = if index == 1 {
            vec![format!("probe-{step}")]
        } else {
            vec![]
        };
    }
    let b = chosen[3..].iter().filter(|&&c| c == 1).count();
    assert!(b >= 30, "{chosen:?}");
}

#[test]
fn value_flows_back_to_the_action_that_leads_towards_novelty() {
    // On screen "start", `go` leads to screen "deep", where `dig` always finds new probes;
    // `stay` leads back to "start" and finds nothing. `go` must come to dominate at "start".
    let mut strategy = CoverageGuided::new(
        Settings {
            exploration: 0.3,
            ..settings()
        },
        1,
    );
    let start = [
        candidate(0, 1.0, "0:stay", "stay"),
        candidate(1, 1.0, "1:go", "go"),
    ];
    let deep = [candidate(0, 1.0, "2:dig", "dig")];
    let mut screen = "start";
    let mut coverage: Vec<String> = Vec::new();
    let mut at_start = Vec::new();
    for step in 0..200 {
        if screen == "start" {
            let index = strategy.decide(&observe(screen, Some(&coverage), "{}"), &start);
            at_start.push(index);
            coverage.clear();
            screen = if index == 1 { "deep" } else { "start" };
        } else {
            strategy.decide(&observe(screen, Some(&coverage), "{}"), &deep);
            coverage = vec![format!("probe-{step}")];
            screen = "start";
        }
    }
    let late = &at_start[at_start.len() / 2..];
    let go = late.iter().filter(|&&c| c == 1).count();
    assert!(
        go * 10 >= late.len() * 8,
        "`go` chosen {go} of {} times late: {at_start:?}",
        late.len()
    );
}

#[test]
fn new_snapshot_features_count_as_novelty_and_ignore_ids() {
    let one = r#"{"route":"home","items":[{"id":"x1","count":2}]}"#;
    let renamed = r#"{"route":"home","items":[{"id":"x9","count":2}]}"#;
    let more = r#"{"route":"home","items":[{"id":"x1","count":2},{"id":"x2","count":2}]}"#;
    let features = |s: &str| snapshot_features(s).into_iter().collect::<HashSet<_>>();
    assert_eq!(
        features(one),
        features(renamed),
        "ids of the same length are one feature"
    );
    assert!(features(one).contains("route=\"home\""), "{:?}", features(one));
    assert!(
        !features(more).is_subset(&features(one)),
        "two records with count 2 is new"
    );

    let mut strategy = CoverageGuided::new(settings(), 1);
    strategy.novelty(&observe("s", Some(&[]), one));
    assert_eq!(
        strategy.novelty(&observe("s2", Some(&[]), renamed)),
        1.0,
        "only the new screen"
    );
    assert!(strategy.novelty(&observe("s2", Some(&[]), more)) >= 0.5);
    let ignoring = CoverageGuided::new(
        Settings {
            state_weight: 0.0,
            ..settings()
        },
        1,
    );
    let mut ignoring = ignoring;
    assert_eq!(ignoring.novelty(&observe("s", Some(&[]), more)), 1.0);
    assert!(snapshot_features("not json").is_empty());
}

#[test]
fn the_same_seed_gives_the_same_choices_and_another_seed_may_not() {
    let candidates: Vec<Candidate> = (0..6)
        .map(|i| candidate(i, 1.0, &format!("{i}:g"), &format!("a{i}")))
        .collect();
    let run = |seed: u64| {
        let mut strategy = CoverageGuided::new(settings(), seed);
        (0..30)
            .map(|step| strategy.decide(&observe(&format!("s{}", step % 3), Some(&[]), "{}"), &candidates))
            .collect::<Vec<_>>()
    };
    assert_eq!(run(5), run(5));
    assert!(
        (1..20).any(|seed| run(seed) != run(5)),
        "ties are broken by the seed"
    );
}

#[test]
fn config_is_validated() {
    let parse = |json: &str| CoverageGuided::init(Config::parse(json).unwrap());
    assert!(parse("{}").is_ok());
    assert!(parse(r#"{"exploration": -1}"#).is_err());
    assert!(parse(r#"{"discount": 1.5}"#).is_err());
    assert!(parse(r#"{"state-weight": 0, "learning-rate": 1}"#).is_ok());
}

#[test]
fn a_probe_pays_less_each_time_it_is_hit_and_rarity_0_pays_only_the_first_time() {
    let probe = vec!["p".to_string()];
    let pays = |rarity: f64| {
        let mut strategy = CoverageGuided::new(
            Settings {
                rarity,
                novelty_weight: 0.0,
                ..settings()
            },
            1,
        );
        (0..4)
            .map(|_| strategy.novelty(&observe("s", Some(&probe), "{}")))
            .collect::<Vec<_>>()
    };
    let graded = pays(1.0);
    assert_eq!(graded[0], 1.0);
    assert!((graded[3] - 0.5).abs() < 1e-9, "4 hits pay 1/sqrt(4): {graded:?}");
    assert!(graded.windows(2).all(|w| w[1] < w[0]), "{graded:?}");
    assert_eq!(pays(0.0), vec![1.0, 0.0, 0.0, 0.0]);
}

#[test]
fn one_action_offered_by_several_generators_is_one_arm_with_their_weights_summed() {
    // `back` is offered by two generators: it is one action, tried once, and as likely a
    // priori as both generators together.
    let mut strategy = CoverageGuided::new(
        Settings {
            optimism_weighting: 1.0,
            exploration: 0.0,
            discount: 0.0,
            ..settings()
        },
        1,
    );
    let candidates = [
        candidate(0, 1.0, "0:tap", "tap"),
        candidate(1, 1.0, "1:back", "back"),
        candidate(2, 1.0, "2:nav", "back"),
    ];
    let chosen: Vec<usize> = (0..2)
        .map(|_| strategy.decide(&observe("s", Some(&[]), "{}"), &candidates))
        .collect();
    assert_eq!(
        chosen,
        [1, 0],
        "`back` first (weight 2 of 3), then `tap`; never index 2"
    );
    let screen = strategy.model.visit(observe("s", None, "{}").state);
    assert_eq!(strategy.model.screen_ref(screen).arms.len(), 2);
}

#[test]
fn optimism_weighting_orders_untried_actions_by_weight_or_not_at_all() {
    // Three untried actions, `b` weighted highest. With weighting 1 the weights order them
    // (`b` first); with weighting 0 every untried action is equally promising and the
    // seed breaks the tie, so some seed starts elsewhere.
    let candidates = [
        candidate(0, 1.0, "0:a", "a"),
        candidate(1, 4.0, "1:b", "b"),
        candidate(2, 1.0, "2:c", "c"),
    ];
    let first = |optimism_weighting: f64, seed: u64| {
        let mut strategy = CoverageGuided::new(
            Settings {
                optimism_weighting,
                exploration: 0.0,
                ..settings()
            },
            seed,
        );
        strategy.decide(&observe("s", Some(&[]), "{}"), &candidates)
    };
    assert!((1..20).all(|seed| first(1.0, seed) == 1));
    assert!((1..20).any(|seed| first(0.0, seed) != 1));
}
