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
    let (out, run_dir) = run(
        output.path(),
        FOLIO_SPEC,
        &["--max-steps", "400", "--plugin", "junit"],
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

    let (out, guided) = run(
        &output.path().join("guided"),
        FOLIO_SPEC,
        &["--max-steps", "150", "--plugin", "coverage-guided"],
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
    let (out, run_dir) = run(
        output.path(),
        spec,
        &["--max-steps", "60", "--plugin", "screen-signature"],
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

#[test]
fn built_in_plugins_load_by_name_together() {
    // The README's command: nothing but the binary is needed.
    let output = tempfile::tempdir().expect("temp dir");
    let (out, run_dir) = run(
        output.path(),
        FOLIO_SPEC,
        &[
            "--max-steps",
            "60",
            "--plugin",
            "coverage-guided",
            "--plugin",
            "junit",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.code().is_some_and(|c| c <= 1), "{stderr}");
    let run_dir = run_dir.expect("run dir");
    let meta: Value =
        serde_json::from_slice(&std::fs::read(run_dir.join("meta.json")).expect("meta")).expect("json");
    let loaded: Vec<(&str, &str, &str)> = meta["plugins"]
        .as_array()
        .expect("plugins")
        .iter()
        .map(|p| {
            (
                p["name"].as_str().unwrap_or_default(),
                p["kind"].as_str().unwrap_or_default(),
                p["path"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        loaded,
        [
            ("coverage-guided", "strategy", "coverage-guided"),
            ("junit", "sink", "junit")
        ]
    );
    assert!(run_dir.join("plugins/junit/junit.xml").is_file());
    let summary: Value = serde_json::from_slice(&out.stdout).expect("summary");
    let rerun = summary["rerun"].as_str().expect("rerun");
    assert!(
        rerun.contains("--plugin coverage-guided --plugin junit"),
        "the re-run command names them the same way: {rerun}"
    );
}

#[test]
fn a_plugin_name_that_is_neither_a_file_nor_built_in_lists_the_built_ins() {
    let output = tempfile::tempdir().expect("temp dir");
    let (out, _) = run(
        output.path(),
        FOLIO_SPEC,
        &["--max-steps", "5", "--plugin", "coverage-guide"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("`coverage-guide` is neither a plugin file nor a built-in plugin")
            && stderr.contains("coverage-guided, junit, screen-signature"),
        "{stderr}"
    );
}

#[test]
fn a_file_named_like_a_built_in_plugin_is_loaded_as_the_file() {
    // A path wins over a built-in name: here `junit` is the example strategy's component.
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::copy(
        plugin("examples/plugins", "prefer_keys"),
        dir.path().join("junit"),
    )
    .expect("copy");
    let out = Command::new(env!("CARGO_BIN_EXE_uatu"))
        .current_dir(dir.path())
        .args([
            "run",
            "--spec",
            FOLIO_SPEC,
            "--sim-latency",
            "0",
            "--no-screenshots",
            "--json",
        ])
        .args(["--max-steps", "5", "--plugin", "junit", "--output", "runs"])
        .output()
        .expect("runs uatu");
    assert!(
        out.status.code().is_some_and(|c| c <= 1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run_dir = std::fs::read_dir(dir.path().join("runs"))
        .expect("runs")
        .next()
        .expect("a run")
        .expect("entry")
        .path();
    let meta: Value =
        serde_json::from_slice(&std::fs::read(run_dir.join("meta.json")).expect("meta")).expect("json");
    assert_eq!(meta["plugins"][0]["kind"], "strategy", "{meta}");
}

#[test]
fn plugin_list_shows_each_built_in_with_kind_contract_and_keys() {
    let out = Command::new(env!("CARGO_BIN_EXE_uatu"))
        .args(["plugin", "list", "--json"])
        .output()
        .expect("runs uatu plugin list");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let listed: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let entries: Vec<(&str, &str)> = listed
        .as_array()
        .expect("a list")
        .iter()
        .map(|p| {
            (
                p["name"].as_str().unwrap_or_default(),
                p["kind"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        entries,
        [
            ("coverage-guided", "strategy"),
            ("junit", "sink"),
            ("screen-signature", "extractor")
        ]
    );
    let contract = uatu::plugin::CONTRACT_VERSION.to_string();
    for plugin in listed.as_array().expect("a list") {
        assert_eq!(plugin["contract"], contract.as_str(), "{plugin}");
    }
    let keys = |name: &str| -> Vec<String> {
        listed
            .as_array()
            .into_iter()
            .flatten()
            .filter(|p| p["name"] == name)
            .flat_map(|p| p["config"].as_array().cloned().unwrap_or_default())
            .filter_map(|k| k["key"].as_str().map(str::to_owned))
            .collect()
    };
    assert_eq!(keys("junit"), ["suite", "unmet-is-failure"]);

    let table = Command::new(env!("CARGO_BIN_EXE_uatu"))
        .args(["plugin", "list"])
        .output()
        .expect("runs uatu plugin list");
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(
        text.contains(&format!("coverage-guided  strategy (uatu:plugin@{contract})")),
        "{text}"
    );
    assert!(
        text.contains("exploration") && text.contains("blank-threshold"),
        "{text}"
    );
}

#[test]
fn each_built_in_plugin_lists_the_configuration_keys_its_source_reads() {
    // `uatu plugin list` takes the keys from a table in the host; a key a plugin reads
    // (`config.method("key"`, `helper(&config, "key"`) must be in it, and only those.
    for plugin in uatu::plugin::builtin::all() {
        let dir = plugin_common::repo_root()
            .join("plugins")
            .join(plugin.name)
            .join("src");
        let mut read = std::collections::BTreeSet::new();
        for entry in std::fs::read_dir(&dir).expect("plugin sources") {
            let text = std::fs::read_to_string(entry.expect("entry").path()).expect("source");
            for line in text.lines().map(str::trim).filter(|l| !l.starts_with("//")) {
                read.extend(config_keys_read(line));
            }
        }
        let listed: std::collections::BTreeSet<String> =
            plugin.config.iter().map(|key| key.key.to_string()).collect();
        assert_eq!(listed, read, "{}", plugin.name);
    }
}

/// The keys a line of plugin source reads from its `Config`: `config.method("key"` or
/// `helper(&config, "key"`.
fn config_keys_read(line: &str) -> Vec<String> {
    let mut keys = Vec::new();
    for (at, _) in line.match_indices("config") {
        let rest = &line[at + "config".len()..];
        let after_call = match rest.strip_prefix('.') {
            Some(method) => method
                .split_once("(\"")
                .filter(|(name, _)| name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
                .map(|(_, after)| after),
            None => rest.strip_prefix(", \""),
        };
        if let Some((key, _)) = after_call.and_then(|after| after.split_once('"')) {
            keys.push(key.to_string());
        }
    }
    keys
}
