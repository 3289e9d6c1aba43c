//! The host's one WebAssembly runtime, shared by specs and plugins: the engine and
//! the thread that advances its epoch (per-call deadlines), the cache directory and
//! the compiled-code cache, memory limits and fixed clocks for the sandboxes, and
//! the atomic file write everything on disk goes through.

mod fs;
mod limits;

use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

use wasmtime::{Config, Engine};

pub use fs::write_atomically;
pub use limits::{FixedClock, MemoryCap};

/// How often the engine's epoch advances: the resolution of every per-call deadline.
pub const EPOCH_TICK: Duration = Duration::from_millis(1);

/// The runtime could not be set up (an engine, or its deadline thread).
#[derive(Debug, Clone, thiserror::Error)]
#[error("cannot set up the WebAssembly runtime: {0}")]
pub struct RuntimeError(String);

impl RuntimeError {
    pub(crate) fn new(message: String) -> RuntimeError {
        RuntimeError(message)
    }
}

/// The engine every spec and plugin runs on (core modules and components), with
/// epoch interruption driven by one thread that lives as long as the process.
pub fn engine() -> Result<&'static Engine, RuntimeError> {
    static ENGINE: OnceLock<Result<Engine, RuntimeError>> = OnceLock::new();
    ENGINE
        .get_or_init(|| {
            let mut config = Config::new();
            config.epoch_interruption(true);
            config.wasm_component_model(true);
            // For profiling with `perf` (docs/benchmarks.md): names the compiled Wasm
            // functions in /tmp/perf-<pid>.map.
            if std::env::var_os("UATU_PERFMAP").is_some() {
                config.profiler(wasmtime::ProfilingStrategy::PerfMap);
            }
            let engine = Engine::new(&config).map_err(|e| RuntimeError(format!("{e:#}")))?;
            let ticking = engine.weak();
            std::thread::Builder::new()
                .name("uatu-wasm-epoch".into())
                .spawn(move || {
                    while let Some(engine) = ticking.upgrade() {
                        engine.increment_epoch();
                        drop(engine);
                        std::thread::sleep(EPOCH_TICK);
                    }
                })
                .map_err(|e| RuntimeError(format!("cannot start the deadline thread: {e}")))?;
            Ok(engine)
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// The epoch deadline, in ticks, that lets a call run for `deadline` (at least one tick).
pub fn deadline_ticks(deadline: Duration) -> u64 {
    (deadline.as_micros() / EPOCH_TICK.as_micros()).max(1) as u64 + 1
}

/// uatu's cache directory: `$UATU_CACHE_DIR`, else `$XDG_CACHE_HOME/uatu`, else
/// `~/.cache/uatu`; `None` when none is set (nothing is cached then).
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

/// Where the machine code compiled from the Wasm named `name` (a content hash) is
/// cached under `cache` for this engine's configuration.
pub fn compiled_path(cache: &std::path::Path, name: &str) -> Result<PathBuf, RuntimeError> {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    engine()?.precompile_compatibility_hash().hash(&mut hasher);
    Ok(cache.join(format!("{name}-{:016x}.cwasm", hasher.finish())))
}
