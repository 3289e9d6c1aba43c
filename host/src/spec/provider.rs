//! The QuickJS provider embedded in this binary, the wasmtime engine that runs
//! it, and the cache of its compiled machine code.

use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

use sha2::{Digest, Sha256};
use wasmtime::{Config, Engine, Module};

/// The provider built from `spec-provider/` by `build.rs`.
pub static PROVIDER_WASM: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/uatu_spec_provider.wasm"));

/// How often the engine's epoch advances; per-call deadlines are counted in these ticks.
pub const EPOCH_TICK: Duration = Duration::from_millis(5);

pub fn sha256() -> &'static str {
    static HASH: OnceLock<String> = OnceLock::new();
    HASH.get_or_init(|| hex::encode(Sha256::digest(PROVIDER_WASM)))
}

/// The engine shared by every spec instance, with a thread advancing its epoch.
pub fn engine() -> anyhow::Result<&'static Engine> {
    static ENGINE: OnceLock<Result<Engine, String>> = OnceLock::new();
    ENGINE
        .get_or_init(|| {
            let mut config = Config::new();
            config.epoch_interruption(true);
            let engine = Engine::new(&config).map_err(|e| format!("creating the Wasm engine: {e}"))?;
            let ticker = engine.weak();
            std::thread::Builder::new()
                .name("uatu-spec-epoch".into())
                .spawn(move || {
                    while let Some(engine) = ticker.upgrade() {
                        engine.increment_epoch();
                        drop(engine);
                        std::thread::sleep(EPOCH_TICK);
                    }
                })
                .map_err(|e| format!("starting the spec deadline thread: {e}"))?;
            Ok(engine)
        })
        .as_ref()
        .map_err(|e| anyhow::anyhow!("{e}"))
}

/// The user's cache directory for uatu: `$XDG_CACHE_HOME/uatu` or `~/.cache/uatu`.
pub fn cache_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("UATU_CACHE_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir).join("uatu"));
    }
    std::env::var_os("HOME")
        .filter(|d| !d.is_empty())
        .map(|home| PathBuf::from(home).join(".cache").join("uatu"))
}

/// The provider compiled for this engine: from memory, the on-disk cache, or Cranelift.
pub fn module() -> anyhow::Result<&'static Module> {
    static MODULE: OnceLock<Result<Module, String>> = OnceLock::new();
    MODULE
        .get_or_init(|| load_module().map_err(|e| format!("{e:#}")))
        .as_ref()
        .map_err(|e| anyhow::anyhow!("{e}"))
}

fn load_module() -> anyhow::Result<Module> {
    let engine = engine()?;
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut hasher);
    let key = format!("provider-{}-{:016x}.cwasm", &sha256()[..16], hasher.finish());
    let cached = cache_dir().map(|dir| dir.join("compiled").join(key));
    if let Some(path) = &cached
        && path.exists()
    {
        // SAFETY: the file was written by `Module::serialize` of this very engine
        // configuration (the key includes its compatibility hash) and provider.
        if let Ok(module) = unsafe { Module::deserialize_file(engine, path) } {
            return Ok(module);
        }
    }
    let module = Module::new(engine, PROVIDER_WASM)
        .map_err(|e| anyhow::anyhow!("compiling the embedded spec provider: {e}"))?;
    if let Some(path) = &cached
        && let Ok(bytes) = module.serialize()
    {
        // A cache that cannot be written only costs start-up time.
        let _ = super::module::write_atomically(path, &bytes);
    }
    Ok(module)
}
