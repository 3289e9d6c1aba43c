//! End-to-end runs of the real binary with WebAssembly plugins: the
//! first-party plugins, the example strategy, and a hostile plugin.

use crate::support::plugins as plugin_common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use plugin_common::component;
use serde_json::Value;
use uatu::trace::read_steps;

const FOLIO_SPEC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/folio/spec.ts");

fn run(output: &Path, spec: &str, extra: &[&str]) -> (Output, Option<PathBuf>) {
    let out = Command::new(env!("CARGO_BIN_EXE_uatu"))
        .args([
            "run",
            "--spec",
            spec,
            "--seed",
            "7",
            "--sim-latency",
            "0",
            "--no-screenshots",
            "--json",
            "--output",
        ])
        .arg(output)
        .args(extra)
        .output()
        .expect("runs uatu");
    let run_dir = std::fs::read_dir(output)
        .ok()
        .and_then(|mut entries| entries.next())
        .and_then(Result::ok)
        .map(|entry| entry.path());
    (out, run_dir)
}

fn plugin(workspace: &str, lib: &str) -> String {
    component(workspace, lib).display().to_string()
}

fn actions(run_dir: &Path) -> Vec<Value> {
    read_steps(run_dir)
        .expect("trace")
        .iter()
        .map(|r| serde_json::to_value(&r.action).expect("json"))
        .collect()
}

#[test]
fn junit_sink_writes_a_report_naming_every_property() {
    let output = tempfile::tempdir().expect("temp dir");
    let junit = plugin("plugins", "junit");
    let (out, run_dir) = run(
        output.path(),
        FOLIO_SPEC,
        &["--max-steps", "400", "--plugin", &junit],
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: Value = serde_json::from_slice(&out.stdout).expect("summary");
    let run_dir = run_dir.expect("run dir");
    let xml = std::fs::read_to_string(run_dir.join("plugins/junit/junit.xml")).expect("junit.xml written");
    let document = roxmltree::Document::parse(&xml).expect("junit.xml is XML");
    let cases: Vec<_> = document
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .collect();
    for property in summary["properties"].as_array().expect("properties") {
        let name = property["name"].as_str().expect("name");
        let case = cases
            .iter()
            .find(|c| c.attribute("name") == Some(name))
            .unwrap_or_else(|| panic!("no testcase {name}"));
        let failure = case.children().find(|c| c.has_tag_name("failure"));
        assert_eq!(failure.is_some(), property["verdict"] == "violated", "{name}");
        if let Some(step) = property["first_violation_step"].as_u64() {
            let message = failure.and_then(|f| f.attribute("message")).unwrap_or_default();
            assert!(message.contains(&format!("at step {step}")), "{name}: {message}");
        }
    }
    let steps = document
        .descendants()
        .find(|n| n.has_tag_name("property") && n.attribute("name") == Some("steps"))
        .and_then(|n| n.attribute("value"));
    assert_eq!(steps, Some(summary["steps"].to_string().as_str()));
    let meta: Value =
        serde_json::from_slice(&std::fs::read(run_dir.join("meta.json")).expect("meta")).expect("json");
    assert_eq!(meta["plugins"][0]["kind"], "sink");
    assert_eq!(meta["plugins"][0]["sha256"].as_str().map(str::len), Some(64));
}

#[test]
fn strategies_change_the_actions_chosen() {
    let output = tempfile::tempdir().expect("temp dir");
    let (_, builtin) = run(
        &output.path().join("builtin"),
        FOLIO_SPEC,
        &["--max-steps", "150"],
    );
    let prefer_keys = plugin("examples/plugins", "prefer_keys");
    let (out, custom) = run(
        &output.path().join("custom"),
        FOLIO_SPEC,
        &["--max-steps", "150", "--plugin", &prefer_keys],
    );
    assert!(
        out.status.code().is_some_and(|c| c <= 1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let builtin = actions(&builtin.expect("run dir"));
    let custom = actions(&custom.expect("run dir"));
    assert_ne!(builtin, custom);
    let presses = |actions: &[Value]| {
        actions
            .iter()
            .filter(|a| a["action"]["type"] == "pressKey")
            .count()
    };
    assert!(
        presses(&custom) > presses(&builtin),
        "the example strategy prefers key presses"
    );

    let coverage_guided = plugin("plugins", "coverage_guided");
    let (out, guided) = run(
        &output.path().join("guided"),
        FOLIO_SPEC,
        &["--max-steps", "150", "--plugin", &coverage_guided],
    );
    assert!(
        out.status.code().is_some_and(|c| c <= 1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_ne!(builtin, actions(&guided.expect("run dir")));
}

#[test]
fn an_extractor_value_is_readable_from_a_spec() {
    let output = tempfile::tempdir().expect("temp dir");
    let spec = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/specs/reads-plugin.ts");
    let extractor = plugin("plugins", "screen_signature");
    let (out, run_dir) = run(
        output.path(),
        spec,
        &["--max-steps", "60", "--plugin", &extractor],
    );
    let summary: Value = serde_json::from_slice(&out.stdout).expect("summary");
    assert_eq!(out.status.code(), Some(0), "{summary}");
    let records = read_steps(&run_dir.expect("run dir")).expect("trace");
    let signatures: std::collections::BTreeSet<_> = records
        .iter()
        .filter_map(|r| {
            r.extractors
                .get("signature")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .collect();
    assert!(
        signatures.len() >= 2,
        "the spec saw the signature change between screens: {signatures:?}"
    );
    // Without the plugin the same spec's property fails: the value really comes from it.
    let (out, _) = run(&output.path().join("without"), spec, &["--max-steps", "5"]);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn a_hostile_strategy_stops_the_run_with_a_complete_trace() {
    let output = tempfile::tempdir().expect("temp dir");
    let bad_choice = plugin("tests/plugins", "bad_choice");
    let (out, run_dir) = run(
        output.path(),
        FOLIO_SPEC,
        &["--max-steps", "50", "--plugin", &bad_choice],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("bad_choice") && stderr.contains("candidate"),
        "{stderr}"
    );
    let run_dir = run_dir.expect("run dir");
    let summary: Value =
        serde_json::from_slice(&std::fs::read(run_dir.join("summary.json")).expect("summary")).expect("json");
    assert_eq!(summary["stopped"], "plugin-error");
    assert_eq!(
        read_steps(&run_dir).expect("readable trace").len() as u64,
        summary["steps"].as_u64().expect("steps") - 1
    );
}
