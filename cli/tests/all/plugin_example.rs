//! The example strategy in examples/plugins/, built from source and run through
//! the host's plugin API.

use crate::support::plugins as plugin_common;

use plugin_common::{candidates, component, spec, state};
use uatu::plugin::{Kind, LoadOptions, PluginSet};

#[test]
fn example_strategy_prefers_press_key_and_is_listed_in_meta() {
    let wasm = component("examples/plugins", "prefer_keys");
    let run_dir = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let options = LoadOptions {
        cache_dir: Some(cache.path().to_path_buf()),
        ..LoadOptions::default()
    };
    let specs = [spec(wasm.clone(), "prefer-keys", "mode = 'x'\ndeadline-ms = 500")];
    let mut plugins = PluginSet::load(&specs, run_dir.path(), &options).expect("loads");
    assert!(plugins.has_strategy());

    let offered = candidates();
    assert_eq!(
        plugins.strategy_choose(&state(0, 5, None), &offered).unwrap(),
        Some(1)
    );
    // Without a pressKey candidate it takes the last one.
    assert_eq!(
        plugins
            .strategy_choose(&state(1, 5, None), &[offered[0].clone(), offered[2].clone()])
            .unwrap(),
        Some(1)
    );
    assert_eq!(plugins.strategy_choose(&state(2, 5, None), &[]).unwrap(), None);

    let meta = plugins.plugins_meta();
    assert_eq!(meta.len(), 1);
    assert_eq!(meta[0].kind, Kind::Strategy);
    assert_eq!(meta[0].contract, "0.2.0");
    assert_eq!(meta[0].deadline_ms, 500);
    let bytes = std::fs::read(&wasm).unwrap();
    use sha2::Digest;
    assert_eq!(meta[0].sha256, hex::encode(sha2::Sha256::digest(&bytes)));
    assert_eq!(meta[0].config["mode"], "x");

    // The compiled component was cached under its hash, and a second load uses it.
    let cached: Vec<_> = std::fs::read_dir(cache.path())
        .unwrap()
        .filter_map(Result::ok)
        .collect();
    assert_eq!(cached.len(), 1, "one cached component");
    assert!(
        cached[0]
            .file_name()
            .to_string_lossy()
            .starts_with(&meta[0].sha256)
    );
    let mut again = PluginSet::load(&specs, run_dir.path(), &options).expect("loads from the cache");
    assert_eq!(
        again.strategy_choose(&state(0, 5, None), &offered).unwrap(),
        Some(1)
    );
}

#[test]
fn plugin_calls_work_from_inside_a_tokio_runtime() {
    let wasm = component("examples/plugins", "prefer_keys");
    let run_dir = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .build()
        .unwrap();
    let chosen = runtime.block_on(async move {
        tokio::task::spawn_blocking(move || {
            let options = LoadOptions {
                no_cache: true,
                ..LoadOptions::default()
            };
            let mut plugins = PluginSet::load(&[spec(wasm, "prefer-keys", "")], run_dir.path(), &options)?;
            plugins.strategy_choose(&state(0, 3, None), &candidates())
        })
        .await
        .unwrap()
    });
    assert_eq!(chosen.unwrap(), Some(1));
}
