//! The sandbox every plugin runs in: one wasmtime engine with epoch interruption,
//! a compiled-component cache keyed by content hash, and per-plugin stores with
//! WASI but no ambient authority.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use wasmtime::component::{Component, Linker, ResourceTable};
use wasmtime::{Engine, Store};

use crate::sandbox::{FixedClock, MemoryCap};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{DirPerms, FilePerms, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

/// How often the engine's epoch advances: the resolution of per-call deadlines.
pub const TICK: Duration = Duration::from_millis(1);

/// Bytes of a plugin's stdout and stderr kept for error messages.
const OUTPUT_CAPACITY: usize = 256 * 1024;

/// The engine shared by a run's plugins, and the thread that advances its epoch.
pub struct Sandbox {
    pub engine: Engine,
    pub linker: Linker<PluginState>,
    ticker_stop: Arc<AtomicBool>,
}

impl Sandbox {
    pub fn new() -> Result<Sandbox, String> {
        let mut config = wasmtime::Config::new();
        config.epoch_interruption(true);
        config.wasm_component_model(true);
        let engine =
            Engine::new(&config).map_err(|error| format!("cannot create the Wasm engine: {error:#}"))?;
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker)
            .map_err(|error| format!("cannot link WASI: {error:#}"))?;
        let ticker_stop = Arc::new(AtomicBool::new(false));
        let stop = Arc::clone(&ticker_stop);
        let ticking = engine.clone();
        std::thread::Builder::new()
            .name("uatu-plugin-epoch".into())
            .spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(TICK);
                    ticking.increment_epoch();
                }
            })
            .map_err(|error| format!("cannot start the plugin deadline thread: {error}"))?;
        Ok(Sandbox {
            engine,
            linker,
            ticker_stop,
        })
    }

    /// The compiled component for `bytes` (whose sha256 is `sha256`), from the cache
    /// when it holds one for this engine, else compiled and cached.
    pub fn component(&self, bytes: &[u8], sha256: &str, cache: Option<&Path>) -> Result<Component, String> {
        let cached = cache.map(|dir| dir.join(format!("{sha256}-{}.cwasm", self.engine_hash())));
        if let Some(path) = &cached
            && path.is_file()
        {
            // SAFETY: the file was written by `Component::serialize` of this same
            // engine configuration (its hash is in the name) into uatu's own cache,
            // atomically (written elsewhere, then renamed).
            if let Ok(component) = unsafe { Component::deserialize_file(&self.engine, path) } {
                return Ok(component);
            }
        }
        let component = Component::from_binary(&self.engine, bytes).map_err(|error| {
            let message = format!("{error:#}");
            if bytes.get(4..8) == Some(&[1, 0, 0, 0]) {
                format!(
                    "it is a core WebAssembly module, not a component; build it with `uatu plugin build` ({message})"
                )
            } else {
                format!("it is not a valid WebAssembly component: {message}")
            }
        })?;
        if let Some(path) = &cached {
            // A cache that cannot be written only costs a compile next time.
            let _ = write_atomically(path, &component);
        }
        Ok(component)
    }

    fn engine_hash(&self) -> String {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        self.engine.precompile_compatibility_hash().hash(&mut hasher);
        format!("{:016x}", hasher.finish())
    }

    /// A store with no ambient authority: no environment, arguments, network or
    /// files (except `dir`, preopened as `/`), deterministic clocks and randomness,
    /// stdout and stderr captured, and linear memory capped at `memory_bytes`.
    pub fn store(
        &self,
        memory_bytes: usize,
        dir: Option<&Path>,
    ) -> Result<(Store<PluginState>, MemoryOutputPipe), String> {
        let output = MemoryOutputPipe::new(OUTPUT_CAPACITY);
        let mut wasi = WasiCtxBuilder::new();
        wasi.stdout(output.clone())
            .stderr(output.clone())
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false)
            .wall_clock(FixedClock)
            .monotonic_clock(FixedClock)
            .secure_random(wasmtime_wasi::Deterministic::new(SEED.to_vec()))
            .insecure_random(wasmtime_wasi::Deterministic::new(SEED.to_vec()))
            .insecure_random_seed(0x7561_7475);
        if let Some(dir) = dir {
            wasi.preopened_dir(dir, "/", DirPerms::all(), FilePerms::all())
                .map_err(|error| format!("cannot open its directory {}: {error:#}", dir.display()))?;
        }
        let state = PluginState {
            wasi: wasi.build(),
            table: ResourceTable::new(),
            limiter: MemoryCap::new(memory_bytes),
        };
        let mut store = Store::new(&self.engine, state);
        store.limiter(|state| &mut state.limiter);
        store.epoch_deadline_trap();
        Ok((store, output))
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        self.ticker_stop.store(true, Ordering::Relaxed);
    }
}

const SEED: [u8; 16] = *b"uatu-plugin-seed";

fn write_atomically(path: &Path, component: &Component) -> Result<(), String> {
    let bytes = component.serialize().map_err(|error| error.to_string())?;
    let dir = path.parent().ok_or("no parent")?;
    std::fs::create_dir_all(dir).map_err(|error| error.to_string())?;
    let temporary: PathBuf = dir.join(format!(
        ".{}.{}.tmp",
        path.file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default(),
        std::process::id()
    ));
    std::fs::write(&temporary, bytes).map_err(|error| error.to_string())?;
    std::fs::rename(&temporary, path).map_err(|error| {
        let _ = std::fs::remove_file(&temporary);
        error.to_string()
    })
}

/// uatu's cache of compiled plugins: `$XDG_CACHE_HOME/uatu/plugins` or `~/.cache/uatu/plugins`.
pub fn default_cache_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|home| !home.is_empty())
                .map(|home| PathBuf::from(home).join(".cache"))
        })?;
    Some(base.join("uatu").join("plugins"))
}

/// What a plugin's store holds.
pub struct PluginState {
    wasi: WasiCtx,
    table: ResourceTable,
    pub limiter: MemoryCap,
}

impl WasiView for PluginState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}
