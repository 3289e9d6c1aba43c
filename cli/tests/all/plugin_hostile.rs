//! Hostile plugins (tests/plugins/): each is stopped or rejected with an error
//! that names the plugin and the cause, and the host goes on.

use crate::support::plugins as plugin_common;

use plugin_common::{candidates, component, spec, state};
use uatu::plugin::{Cause, LoadOptions, OnPluginError, PluginError, PluginEvent, PluginSet};

const HOSTILE: &str = "tests/plugins";

fn options() -> LoadOptions {
    LoadOptions {
        no_cache: true,
        ..LoadOptions::default()
    }
}

fn load(lib: &str, name: &str, config: &str, run_dir: &std::path::Path) -> Result<PluginSet, PluginError> {
    PluginSet::load(
        &[spec(component(HOSTILE, lib), name, config)],
        run_dir,
        &options(),
    )
}

#[test]
fn an_infinite_loop_is_stopped_at_its_deadline() {
    let run_dir = tempfile::tempdir().unwrap();
    let mut plugins = load("loop_forever", "spin", "deadline-ms = 50", run_dir.path()).unwrap();
    let started = std::time::Instant::now();
    let error = plugins
        .strategy_choose(&state(0, 3, None), &candidates())
        .unwrap_err();
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    assert_eq!(error.plugin, "spin");
    assert_eq!(error.cause, Cause::Deadline { deadline_ms: 50 });
    let message = error.to_string();
    assert!(
        message.contains("plugin `spin` in `choose`") && message.contains("deadline of 50 ms"),
        "{message}"
    );
    // A stopped plugin is not entered again.
    let again = plugins.strategy_choose(&state(1, 3, None), &candidates());
    assert!(matches!(again, Ok(None)), "{again:?}");
}

#[test]
fn a_sleep_ends_at_once_and_sleeping_forever_is_stopped_at_the_deadline() {
    // Time stands still in a plugin: an hour's sleep returns at once...
    let run_dir = tempfile::tempdir().unwrap();
    let mut plugins = load("sleep_forever", "sleeper", "deadline-ms = 5000", run_dir.path()).unwrap();
    let started = std::time::Instant::now();
    let chosen = plugins.strategy_choose(&state(0, 3, None), &candidates());
    assert!(matches!(chosen, Ok(Some(0))), "{chosen:?}");
    assert!(started.elapsed() < std::time::Duration::from_secs(60));

    // ... and sleeping without end is a loop like any other.
    let mut plugins = load(
        "sleep_forever",
        "insomniac",
        "forever = true\ndeadline-ms = 50",
        run_dir.path(),
    )
    .unwrap();
    let error = plugins
        .strategy_choose(&state(0, 3, None), &candidates())
        .unwrap_err();
    assert_eq!(error.plugin, "insomniac");
    assert_eq!(error.cause, Cause::Deadline { deadline_ms: 50 });
}

#[test]
fn a_plugin_may_print_without_bound_and_its_last_words_are_kept() {
    // 400 KiB of output, more than the 256 KiB kept: printing never fails the plugin.
    let run_dir = tempfile::tempdir().unwrap();
    let mut plugins = load("chatty", "chatty", "panic-at = 400", run_dir.path()).unwrap();
    for step in 0..399 {
        let chosen = plugins.strategy_choose(&state(step, 3, None), &candidates());
        assert!(matches!(chosen, Ok(Some(0))), "step {step}: {chosen:?}");
    }
    let error = plugins
        .strategy_choose(&state(399, 3, None), &candidates())
        .unwrap_err();
    let message = error.to_string();
    assert!(message.contains("boom after 400 calls"), "{message}");
    // The output shown is the failing call's, not an earlier one's.
    assert!(message.contains("call 400, line 7: chatter"), "{message}");
    assert!(!message.contains("call 399,"), "{message}");
}

#[test]
fn unbounded_allocation_hits_the_memory_cap() {
    let run_dir = tempfile::tempdir().unwrap();
    let mut plugins = load("allocate_forever", "hog", "memory-mib = 16", run_dir.path()).unwrap();
    let error = plugins
        .strategy_choose(&state(0, 3, None), &candidates())
        .unwrap_err();
    assert_eq!(error.plugin, "hog");
    assert!(
        matches!(error.cause, Cause::MemoryCap { memory_mib: 16, .. }),
        "{error}"
    );
    assert!(error.to_string().contains("memory cap of 16 MiB"), "{error}");
}

#[test]
fn a_sink_cannot_reach_outside_its_directory() {
    let parent = tempfile::tempdir().unwrap();
    let run_dir = parent.path().join("runs").join("r1");
    std::fs::create_dir_all(&run_dir).unwrap();
    let mut plugins = load("escape_dir", "escape", "", &run_dir).unwrap();
    let error = plugins
        .sink_run_start(&serde_json::json!({"seed": 1}))
        .unwrap_err();
    assert_eq!(error.plugin, "escape");
    let Cause::Failed(report) = &error.cause else {
        panic!("expected the plugin's report, got {error}")
    };
    assert!(!report.contains("ESCAPED"), "{report}");
    assert!(report.contains("denied /etc/passwd"), "{report}");
    assert!(report.contains("denied ../../outside.txt"), "{report}");
    assert!(report.contains("denied env"), "{report}");
    assert!(report.contains("own dir: written"), "{report}");
    assert!(run_dir.join("plugins/escape/inside.txt").is_file());
    for outside in [
        run_dir.join("outside.txt"),
        run_dir.join("plugins/outside.txt"),
        parent.path().join("runs/outside.txt"),
    ] {
        assert!(!outside.exists(), "{} was written", outside.display());
    }
}

#[test]
fn a_panic_is_reported_with_its_message_and_can_disable_the_plugin() {
    let run_dir = tempfile::tempdir().unwrap();
    let specs = [spec(component(HOSTILE, "panics"), "panicky", "")];
    let mut plugins = PluginSet::load(&specs, run_dir.path(), &options()).unwrap();
    let first = plugins.extract(&state(0, 3, None), None).unwrap();
    assert_eq!(first["panicky.calls"], 1);
    let error = plugins.extract(&state(1, 3, None), None).unwrap_err();
    assert_eq!(error.plugin, "panicky");
    assert!(matches!(error.cause, Cause::Trap { .. }), "{error}");
    assert!(error.to_string().contains("boom at call 2"), "{error}");

    let disable = LoadOptions {
        on_error: OnPluginError::Disable,
        ..options()
    };
    let mut plugins = PluginSet::load(&specs, run_dir.path(), &disable).unwrap();
    plugins.extract(&state(0, 3, None), None).unwrap();
    let values = plugins
        .extract(&state(1, 3, None), None)
        .expect("disabled, not an error");
    assert!(values.is_empty());
    let events = plugins.take_events();
    assert!(
        matches!(&events[..], [PluginEvent::Disabled { plugin, step: Some(1), error }] if plugin == "panicky" && error.contains("boom")),
        "{events:?}"
    );
    assert!(plugins.plugins_meta()[0].disabled.is_some());
}

#[test]
fn a_wrong_contract_version_is_refused_naming_both_versions() {
    let run_dir = tempfile::tempdir().unwrap();
    let error = load("wrong_version", "future", "", run_dir.path())
        .err()
        .expect("refused");
    assert_eq!(error.plugin, "future");
    assert_eq!(
        error.cause,
        Cause::IncompatibleContract {
            found: "9.0.0".into(),
            supported: "0.2.0".into()
        }
    );
    let message = error.to_string();
    assert!(
        message.contains("uatu:plugin@9.0.0") && message.contains("uatu:plugin@0.2.0"),
        "{message}"
    );
}

#[test]
fn a_choice_out_of_range_is_refused() {
    let run_dir = tempfile::tempdir().unwrap();
    let mut plugins = load("bad_choice", "liar", "", run_dir.path()).unwrap();
    let error = plugins
        .strategy_choose(&state(0, 3, None), &candidates())
        .unwrap_err();
    assert_eq!(error.plugin, "liar");
    assert_eq!(error.cause, Cause::InvalidChoice { id: 8, count: 3 });
    assert!(
        error
            .to_string()
            .contains("chose candidate 8, but there are 3 candidates"),
        "{error}"
    );
}

#[test]
fn invalid_json_from_an_extractor_is_refused() {
    let run_dir = tempfile::tempdir().unwrap();
    let mut plugins = load("bad_json", "garbled", "", run_dir.path()).unwrap();
    let error = plugins.extract(&state(0, 3, None), None).unwrap_err();
    assert_eq!(error.plugin, "garbled");
    assert!(
        matches!(&error.cause, Cause::BadJson { name, .. } if name == "broken"),
        "{error}"
    );
}

#[test]
fn files_that_are_not_plugins_are_refused_at_load() {
    let run_dir = tempfile::tempdir().unwrap();
    let junk = run_dir.path().join("junk.wasm");
    std::fs::write(&junk, b"not wasm at all").unwrap();
    let error = PluginSet::load(&[spec(junk, "junk", "")], run_dir.path(), &options())
        .err()
        .unwrap();
    assert_eq!(error.plugin, "junk");
    assert!(matches!(error.cause, Cause::Load { .. }), "{error}");

    let missing = run_dir.path().join("missing.wasm");
    let error = PluginSet::load(&[spec(missing, "missing", "")], run_dir.path(), &options())
        .err()
        .unwrap();
    assert!(error.to_string().contains("plugin `missing`"), "{error}");

    let bad_limit = spec(component(HOSTILE, "bad_choice"), "limits", "memory-mib = 'lots'");
    let error = PluginSet::load(&[bad_limit], run_dir.path(), &options())
        .err()
        .unwrap();
    assert!(
        matches!(&error.cause, Cause::Config(message) if message.contains("memory-mib")),
        "{error}"
    );
}
