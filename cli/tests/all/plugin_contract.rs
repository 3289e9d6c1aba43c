//! The contract `uatu:plugin@0.2.0` through real components: the hierarchy's string
//! table as the SDK reads it, the step record sinks receive, and a component built
//! for 0.1.0 refused.

use crate::support::plugins as plugin_common;

use plugin_common::{component, record, spec, state};
use serde_json::{Value, json};
use uatu::plugin::{Cause, LoadOptions, PluginSet};
use uatu_device::model::{Bounds, Node};

const TEST_PLUGINS: &str = "tests/plugins";

fn options() -> LoadOptions {
    LoadOptions {
        no_cache: true,
        ..LoadOptions::default()
    }
}

/// What echo-hierarchy answers for a node, computed from the host's own tree.
fn expected(node: &Node, depth: u32, parent: Option<usize>, out: &mut Vec<Value>) {
    let b = node.bounds;
    let index = out.len();
    out.push(json!([
        depth,
        node.id,
        node.desc,
        node.text,
        node.class_name,
        [node.clickable, node.enabled, node.scrollable],
        [b.left, b.top, b.right, b.bottom],
        parent,
        node.children.len(),
    ]));
    for child in &node.children {
        expected(child, depth + 1, Some(index), out);
    }
}

#[test]
fn the_hierarchy_round_trips_through_the_string_table() {
    let run_dir = tempfile::tempdir().unwrap();
    let wasm = component(TEST_PLUGINS, "echo_hierarchy");
    let mut plugins = PluginSet::load(&[spec(wasm, "echo", "")], run_dir.path(), &options()).unwrap();

    let mut ledger = state(0, 3, None);
    // Multi-byte text, empty strings and a deeper branch, at odd positions in the table.
    ledger.hierarchy.children[0].text = "Crème brûlée — 12 €".into();
    ledger.hierarchy.children[0].desc = String::new();
    ledger.hierarchy.children[1].children[1].children.push(Node {
        id: "日本語".into(),
        text: "🙂".into(),
        class_name: "Badge".into(),
        bounds: Bounds {
            left: -5,
            top: 7,
            right: 1080,
            bottom: 2400,
        },
        ..Node::default()
    });
    let values = plugins.extract(&ledger, None).unwrap();
    let mut want = Vec::new();
    expected(&ledger.hierarchy, 0, None, &mut want);
    assert_eq!(want.len(), 4 + 3 * 3 + 1);
    assert_eq!(values["echo.nodes"], Value::Array(want));

    // An empty tree (a root with nothing set) passes too.
    let values = plugins
        .extract(
            &uatu::state::State {
                step: 1,
                ..Default::default()
            },
            None,
        )
        .unwrap();
    assert_eq!(
        values["echo.nodes"],
        json!([[0, "", "", "", "", [false, false, false], [0, 0, 0, 0], null, 0]])
    );
}

#[test]
fn a_sink_gets_the_typed_fields_and_the_trace_line() {
    let run_dir = tempfile::tempdir().unwrap();
    let wasm = component(TEST_PLUGINS, "echo_steps");
    let mut plugins = PluginSet::load(&[spec(wasm, "echo", "")], run_dir.path(), &options()).unwrap();
    plugins.sink_run_start(&json!({"seed": 1})).unwrap();
    let action = uatu::action::ResolvedAction {
        action: uatu::action::Action::PressKey {
            key: uatu_device::model::Key::Back,
        },
        generator: "1:back".into(),
        point: None,
        bounds: None,
        to_point: None,
        applied: uatu::action::Applied::Unknown,
        detail: String::new(),
    };
    let (first, first_line) = record(state(4, 2, None), None, &[]);
    let (second, second_line) = record(state(5, 2, None), Some(action), &["no-duplicates", "balance"]);
    let lengths = [first_line.len(), second_line.len()];
    plugins.sink_step(&first, first_line).unwrap();
    plugins.sink_step(&second, second_line).unwrap();
    plugins.sink_run_end(&json!({})).unwrap();

    let text = std::fs::read_to_string(run_dir.path().join("plugins/echo/steps.jsonl")).unwrap();
    let lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(
        lines,
        [
            json!({"step": 4, "time_ms": 400, "evaluated": true, "action": null, "violations": [],
                   "json_step": 4, "json_bytes": lengths[0]}),
            json!({"step": 5, "time_ms": 500, "evaluated": true,
                   "action": {"action": {"type": "pressKey", "key": "back"}, "generator": "1:back"},
                   "violations": ["no-duplicates", "balance"], "json_step": 5, "json_bytes": lengths[1]}),
        ]
    );
}

#[test]
fn a_plugin_built_for_contract_0_1_is_refused_naming_both_versions() {
    let run_dir = tempfile::tempdir().unwrap();
    let wasm = component(TEST_PLUGINS, "contract_0_1");
    let error = PluginSet::load(&[spec(wasm, "old", "")], run_dir.path(), &options())
        .err()
        .expect("refused");
    assert_eq!(error.plugin, "old");
    assert_eq!(
        error.cause,
        Cause::IncompatibleContract {
            found: "0.1.0".into(),
            supported: "0.2.0".into()
        }
    );
    let message = error.to_string();
    assert!(
        message.contains("uatu:plugin@0.1.0")
            && message.contains("uatu:plugin@0.2.0")
            && message.contains("uatu-plugin-sdk 0.2.0"),
        "{message}"
    );
}
