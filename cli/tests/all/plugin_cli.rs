//! `uatu plugin new` and `uatu plugin build`, through the real binary.

use crate::support::plugins as plugin_common;

use std::process::Command;

use plugin_common::{candidates, record, repo_root, spec, state, target_dir};
use uatu::plugin::{Kind, LoadOptions, PluginSet};

fn uatu() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_uatu"));
    command
        .env("UATU_PLUGIN_SDK_PATH", repo_root().join("plugin-sdk"))
        .env("CARGO_TARGET_DIR", target_dir());
    command
}

#[test]
fn a_scaffolded_strategy_builds_and_loads() {
    scaffold_build_and_load(&[("my-strategy", "strategy", Kind::Strategy)]);
}

/// Each scaffold is a new workspace, so each costs a full wasm build (minutes on 2 cores).
#[test]
#[ignore = "slow: builds two more scaffolded crates; run with --ignored"]
fn scaffolded_extractors_and_sinks_build_and_load() {
    scaffold_build_and_load(&[
        ("my-extractor", "extractor", Kind::Extractor),
        ("my-sink", "sink", Kind::Sink),
    ]);
}

fn scaffold_build_and_load(kinds: &[(&str, &str, Kind)]) {
    let work = tempfile::tempdir().expect("creates a temporary directory");
    for &(name, kind, expected) in kinds {
        let dir = work.path().join(name);
        let new = uatu()
            .arg("plugin")
            .arg("new")
            .arg(&dir)
            .args(["--kind", kind])
            .output()
            .expect("runs uatu plugin new");
        assert!(
            new.status.success(),
            "plugin new: {}",
            String::from_utf8_lossy(&new.stderr)
        );
        let manifest =
            std::fs::read_to_string(dir.join("Cargo.toml")).expect("the scaffold has a Cargo.toml");
        assert!(manifest.contains("uatu-plugin-sdk = { path ="), "{manifest}");

        let out = work.path().join(format!("{name}.wasm"));
        let build = uatu()
            .arg("plugin")
            .arg("build")
            .arg(&dir)
            .arg("-o")
            .arg(&out)
            .output()
            .expect("runs uatu plugin build");
        assert!(
            build.status.success(),
            "plugin build: {}",
            String::from_utf8_lossy(&build.stderr)
        );
        assert_eq!(
            String::from_utf8_lossy(&build.stdout).trim(),
            out.display().to_string()
        );

        let run_dir = work.path().join("run");
        let options = LoadOptions {
            no_cache: true,
            ..LoadOptions::default()
        };
        let mut plugins =
            PluginSet::load(&[spec(out, name, "")], &run_dir, &options).expect("the scaffolded plugin loads");
        assert_eq!(plugins.plugins_meta()[0].kind, expected);
        match expected {
            Kind::Strategy => {
                let chosen = plugins
                    .strategy_choose(&state(0, 2, None), &candidates())
                    .expect("the strategy chooses");
                assert_eq!(chosen, Some(1), "round-robin starts at the second candidate");
            }
            Kind::Extractor => {
                let values = plugins
                    .extract(&state(0, 2, None), None)
                    .expect("the extractor extracts");
                assert_eq!(values["my-extractor.clickable"], 6);
            }
            Kind::Sink => {
                plugins
                    .sink_run_start(&serde_json::json!({}))
                    .expect("the sink takes the run start");
                let (record, line) = record(state(0, 2, None), None, &[]);
                plugins.sink_step(&record, line).expect("the sink takes a step");
                plugins
                    .sink_run_end(&serde_json::json!({}))
                    .expect("the sink takes the run end");
                let steps = std::fs::read_to_string(run_dir.join("plugins/my-sink/steps.txt"))
                    .expect("the sink wrote steps.txt");
                assert_eq!(steps.trim(), "1");
            }
        }
    }
}

#[test]
fn building_a_directory_without_a_crate_is_a_usage_error() {
    let empty = tempfile::tempdir().unwrap();
    let build = uatu()
        .arg("plugin")
        .arg("build")
        .arg(empty.path())
        .output()
        .unwrap();
    assert_eq!(build.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&build.stderr).contains("Cargo.toml"));
}
