//! Builds plugin workspaces once per test binary (cargo itself skips what is up to
//! date) and turns their modules into components under `target/plugin-wasm/components`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use uatu::state::State;
use uatu::wasm_toolchain::{Toolchain, artifact_path};

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the crate has a parent")
        .to_path_buf()
}

pub fn target_dir() -> PathBuf {
    repo_root().join("target").join("plugin-wasm")
}

static BUILT: OnceLock<Mutex<HashMap<String, ()>>> = OnceLock::new();

/// The component of crate `lib` in the plugin workspace `workspace` (relative to the repo root).
pub fn component(workspace: &str, lib: &str) -> PathBuf {
    let built = BUILT.get_or_init(Default::default);
    let mut built = built.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if !built.contains_key(workspace) {
        let toolchain = Toolchain::detect().expect("a wasm32-wasip1 toolchain (see docs/development.md)");
        let output = toolchain
            .cargo_build(&repo_root().join(workspace).join("Cargo.toml"), &target_dir())
            .arg("--quiet")
            .output()
            .expect("cargo runs");
        assert!(
            output.status.success(),
            "building {workspace} failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        built.insert(workspace.to_string(), ());
    }
    let module_path = artifact_path(&target_dir(), lib);
    let out_dir = target_dir().join("components");
    std::fs::create_dir_all(&out_dir).expect("components dir");
    let out = out_dir.join(format!("{lib}.wasm"));
    let stale = match (std::fs::metadata(&out), std::fs::metadata(&module_path)) {
        (Ok(out_meta), Ok(module_meta)) => out_meta.modified().ok() < module_meta.modified().ok(),
        _ => true,
    };
    if stale {
        let module = std::fs::read(&module_path).expect("the built module");
        let component = uatu::plugin::componentize(&module).expect("componentize");
        let temporary = out.with_extension("wasm.tmp");
        std::fs::write(&temporary, component).expect("write component");
        std::fs::rename(&temporary, &out).expect("rename component");
    }
    out
}

/// A plugin spec for a built component, named `name`, with a TOML config table.
pub fn spec(path: PathBuf, name: &str, config: &str) -> uatu::plugin::PluginChoice {
    uatu::plugin::PluginChoice {
        path,
        name: name.to_string(),
        config: toml::from_str(config).expect("test config is TOML"),
    }
}

/// A Folio-like state: a header, a list of `rows` rows and a couple of buttons.
pub fn state(step: u64, rows: usize, coverage: Option<Vec<String>>) -> State {
    use uatu_device::model::{Bounds, Node};
    let leaf = |id: &str, desc: &str, text: &str, class: &str| Node {
        id: id.into(),
        desc: desc.into(),
        text: text.into(),
        class_name: class.into(),
        clickable: true,
        enabled: true,
        bounds: Bounds {
            left: 0,
            top: 0,
            right: 100,
            bottom: 50,
        },
        ..Node::default()
    };
    let rows: Vec<Node> = (0..rows)
        .map(|i| Node {
            id: "ledger_row".into(),
            class_name: "Row".into(),
            children: vec![
                leaf("row_title", "", &format!("Entry {i}"), "Text"),
                leaf("row_amount", "", &format!("{}.00", i * 3), "Text"),
            ],
            ..Node::default()
        })
        .collect();
    let root = Node {
        id: "root".into(),
        class_name: "Screen".into(),
        children: vec![
            leaf("title", "ledger_title", "Ledger", "Text"),
            Node {
                id: "list".into(),
                class_name: "List".into(),
                scrollable: true,
                children: rows,
                ..Node::default()
            },
            leaf("add", "ledger_add", "Add", "Button"),
        ],
        ..Node::default()
    };
    let mut snapshots = serde_json::Map::new();
    snapshots.insert("balance".into(), serde_json::json!(120));
    State {
        step,
        time: step * 100,
        hierarchy: root,
        snapshots,
        coverage,
        ..State::default()
    }
}

/// The trace record of a step at `state`, with the given action and violations,
/// and its line as the trace writer serialises it (what sinks receive).
pub fn record(
    state: State,
    action: Option<uatu::action::ResolvedAction>,
    violations: &[&str],
) -> (uatu::trace::StepRecord, String) {
    let record = uatu::trace::StepRecord {
        step: state.step,
        time: state.time,
        state,
        hierarchy_source: None,
        evaluated: true,
        screenshot: None,
        extractors: Default::default(),
        properties: Default::default(),
        candidates: 3,
        action,
        events: violations
            .iter()
            .map(|property| uatu::trace::Event::Violation {
                property: property.to_string(),
            })
            .collect(),
        metrics: Default::default(),
    };
    let line = serde_json::to_string(&record).expect("a record serialises");
    (record, line)
}

pub fn candidates() -> Vec<uatu::action::Candidate> {
    use uatu::action::{Action, Candidate, PathStep, Target};
    use uatu_device::model::Key;
    let step = |index: u32, weight: f64, label: &str| PathStep {
        index,
        weight,
        label: Some(label.into()),
    };
    vec![
        Candidate {
            path: vec![step(0, 3.0, "tapAdd")],
            action: Action::Tap {
                on: Target::Selector("desc:ledger_add".into()),
            },
        },
        Candidate {
            path: vec![step(1, 1.0, "back")],
            action: Action::PressKey { key: Key::Back },
        },
        Candidate {
            path: vec![step(2, 1.0, "wait")],
            action: Action::Wait { duration_millis: 100 },
        },
    ]
}
