//! The first-party plugins in plugins/, as built into uatu (loaded by name), through the
//! host's plugin API.

use std::path::PathBuf;

use crate::support::plugins as plugin_common;

use plugin_common::{candidates, record, spec, state};
use uatu::plugin::{LoadOptions, PluginEvent, PluginSet};
use uatu::trace::{Counts, PropertySummary, Summary};

/// A built-in plugin, as `--plugin NAME` names it.
fn builtin(name: &str) -> PathBuf {
    PathBuf::from(name)
}

fn options() -> LoadOptions {
    LoadOptions {
        no_cache: true,
        ..LoadOptions::default()
    }
}

#[test]
fn coverage_guided_tries_everything_early_then_exploits_new_coverage() {
    let run_dir = tempfile::tempdir().unwrap();
    let wasm = builtin("coverage-guided");
    let specs = [spec(wasm, "coverage-guided", "exploration = 0.2\nseed = 7")];
    let mut plugins = PluginSet::load(&specs, run_dir.path(), &options()).unwrap();
    let offered = candidates();
    let mut chosen = Vec::new();
    let mut coverage = Some(vec![]);
    for step in 0..40 {
        let choice = plugins
            .strategy_choose(&state(step, 4, coverage.clone()), &offered)
            .unwrap()
            .unwrap();
        chosen.push(choice);
        // Only the back key ever reaches new code: a fresh probe each time.
        coverage = Some(if choice == 1 {
            vec![format!("probe-{step}")]
        } else {
            vec![]
        });
    }
    // Untried actions are worth their share of the spec's weight (3 : 1 : 1): `tapAdd`
    // first, then one of the others; once the back key pays, it can outbid the last
    // untried action, which the exploration bonus still gets to soon.
    assert_eq!(chosen[0], 0, "the most weighted untried action first: {chosen:?}");
    assert_ne!(chosen[1], 0, "then an untried one: {chosen:?}");
    assert!(
        chosen[..20].contains(&2),
        "every action is tried early: {chosen:?}"
    );
    let back = chosen[3..].iter().filter(|&&c| c == 1).count();
    assert!(
        back >= 30,
        "the rewarding action dominates afterwards: {chosen:?}"
    );
    assert!(
        plugins.take_events().is_empty(),
        "no fallback note when coverage is reported"
    );
}

#[test]
fn coverage_guided_falls_back_to_screen_novelty_and_says_so_once() {
    let run_dir = tempfile::tempdir().unwrap();
    let wasm = builtin("coverage-guided");
    let mut plugins =
        PluginSet::load(&[spec(wasm, "coverage-guided", "")], run_dir.path(), &options()).unwrap();
    for step in 0..5 {
        plugins
            .strategy_choose(&state(step, 2, None), &candidates())
            .unwrap();
    }
    let events = plugins.take_events();
    assert!(
        matches!(&events[..], [PluginEvent::Note { plugin, step: 0, message }]
            if plugin == "coverage-guided" && message.contains("no coverage")),
        "{events:?}"
    );
}

fn png(width: u32, height: u32, striped: bool) -> uatu_device::model::Screenshot {
    let image = image::RgbaImage::from_fn(width, height, |_, y| {
        if striped && (y / 10) % 2 == 0 {
            image::Rgba([20, 20, 200, 255])
        } else {
            image::Rgba([250, 250, 250, 255])
        }
    });
    let mut png = Vec::new();
    image
        .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .expect("encodes the PNG");
    uatu_device::model::Screenshot { png, width, height }
}

#[test]
fn screen_signature_matches_the_host_and_counts_screens_and_blank_frames() {
    let run_dir = tempfile::tempdir().unwrap();
    let wasm = builtin("screen-signature");
    let mut plugins = PluginSet::load(&[spec(wasm, "screen", "")], run_dir.path(), &options()).unwrap();
    assert!(plugins.needs_screenshot());

    let ledger = state(0, 5, None);
    let values = plugins.extract(&ledger, Some(&png(60, 120, false))).unwrap();
    let host_signature = uatu::plugin::context::screen_signature(&ledger.hierarchy);
    assert_eq!(values["screen.signature"], host_signature.as_str());
    assert_eq!(values["screen.distinct_screens"], 1);
    assert_eq!(values["screen.blank_screen"], true);

    // More rows, other text: the same screen.
    let longer = plugins
        .extract(&state(1, 9, None), Some(&png(60, 120, true)))
        .unwrap();
    assert_eq!(longer["screen.signature"], host_signature.as_str());
    assert_eq!(longer["screen.distinct_screens"], 1);
    assert_eq!(longer["screen.blank_screen"], false);

    let mut other = state(2, 0, None);
    other.hierarchy.children.pop();
    let values = plugins.extract(&other, None).unwrap();
    assert_ne!(values["screen.signature"], host_signature.as_str());
    assert_eq!(values["screen.distinct_screens"], 2);
    assert_eq!(values["screen.blank_screen"], serde_json::Value::Null);
}

#[test]
fn junit_writes_one_test_case_per_property_into_its_own_directory() {
    let run_dir = tempfile::tempdir().unwrap();
    let wasm = builtin("junit");
    let mut plugins = PluginSet::load(&[spec(wasm, "junit", "")], run_dir.path(), &options()).unwrap();
    plugins
        .sink_run_start(&serde_json::json!({"seed": 42, "spec": {"path": "specs/folio.ts"}}))
        .unwrap();
    for step in 0..3 {
        let (record, line) = record(state(step, 2, None), None, &[]);
        plugins.sink_step(&record, line).unwrap();
    }
    let property = |name: &str, verdict: &str| PropertySummary {
        name: name.into(),
        verdict: verdict.into(),
        first_violation_step: None,
        led_by: None,
        errors: Vec::new(),
    };
    let summary = Summary {
        steps: 3,
        wall_ms: 1500,
        device_ms: 300,
        properties: vec![
            property("balance-never-negative", "passed"),
            PropertySummary {
                first_violation_step: Some(2),
                errors: vec!["entry \"rent\" twice".into()],
                ..property("no-duplicate-<entries>", "violated")
            },
            property("eventually-synced", "unmet"),
        ],
        counts: Counts::default(),
        stopped: "max-steps".into(),
        exit_code: 1,
        run_dir: "runs/x".into(),
        rerun: "uatu run --spec specs/folio.ts --seed 42 --max-steps 3".into(),
    };
    plugins.sink_run_end(&summary).unwrap();

    let xml = std::fs::read_to_string(run_dir.path().join("plugins/junit/junit.xml")).unwrap();
    let document = roxmltree::Document::parse(&xml).expect("junit.xml is well-formed XML");
    let suite = document
        .descendants()
        .find(|n| n.has_tag_name("testsuite"))
        .unwrap();
    assert_eq!(suite.attribute("name"), Some("folio.ts"));
    assert_eq!(suite.attribute("tests"), Some("3"));
    assert_eq!(suite.attribute("failures"), Some("1"));
    assert_eq!(suite.attribute("time"), Some("1.500"), "summary.json's wall_ms");
    let steps = suite
        .descendants()
        .find(|n| n.has_tag_name("property") && n.attribute("name") == Some("steps"));
    assert_eq!(steps.and_then(|n| n.attribute("value")), Some("3"));
    let cases: Vec<_> = suite.children().filter(|n| n.has_tag_name("testcase")).collect();
    let names: Vec<_> = cases.iter().filter_map(|c| c.attribute("name")).collect();
    assert_eq!(
        names,
        [
            "balance-never-negative",
            "no-duplicate-<entries>",
            "eventually-synced"
        ]
    );
    let failure = cases[1]
        .children()
        .find(|n| n.has_tag_name("failure"))
        .expect("a failure");
    assert!(failure.attribute("message").unwrap().contains("at step 2"));
    let body = failure.text().unwrap();
    assert!(
        body.contains("re-run: uatu run --spec specs/folio.ts --seed 42"),
        "{body}"
    );
    assert!(body.contains("entry \"rent\" twice"), "{body}");
    assert!(cases[2].children().any(|n| n.has_tag_name("skipped")));
}
