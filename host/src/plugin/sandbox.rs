//! The sandbox every plugin runs in: one wasmtime engine with epoch interruption,
//! a compiled-component cache keyed by content hash, and per-plugin stores with
//! WASI but no ambient authority.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use wasmtime::component::{Component, Linker, Resource, ResourceTable};
use wasmtime::{Engine, Store};

use crate::wasm::{self, FixedClock, MemoryCap};
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{DynPollable, OutputStream, Pollable, StreamError, subscribe};
use wasmtime_wasi::{DirPerms, FilePerms, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

/// Bytes of a plugin's stdout and stderr kept for error messages (the newest).
const OUTPUT_CAPACITY: usize = 256 * 1024;

/// The host's engine (`crate::wasm`) with the WASI linker every plugin gets.
pub struct Sandbox {
    pub engine: Engine,
    pub linker: Linker<PluginState>,
}

impl Sandbox {
    pub fn new() -> Result<Sandbox, String> {
        let engine = wasm::engine().map_err(|error| error.to_string())?.clone();
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker)
            .and_then(|()| link_timeless_sleep(&mut linker))
            .map_err(|error| format!("cannot link WASI: {error:#}"))?;
        Ok(Sandbox { engine, linker })
    }

    /// The compiled component for `bytes` (whose sha256 is `sha256`), from the cache
    /// when it holds one for this engine, else compiled and cached.
    pub fn component(&self, bytes: &[u8], sha256: &str, cache: Option<&Path>) -> Result<Component, String> {
        let cached = cache
            .map(|dir| wasm::compiled_path(dir, sha256))
            .transpose()
            .map_err(|error| error.to_string())?;
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
        if !bytes.starts_with(b"\0asm") {
            return Err(
                "it is not WebAssembly (no `\\0asm` header); build plugins with `uatu plugin build`".into(),
            );
        }
        let component = Component::from_binary(&self.engine, bytes).map_err(|error| {
            // wasmtime's parse errors can span lines (byte dumps): keep one readable line.
            let message = format!("{error:#}").split_whitespace().collect::<Vec<_>>().join(" ");
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
            if let Ok(bytes) = component.serialize() {
                let _ = wasm::write_atomically(path, &bytes);
            }
        }
        Ok(component)
    }

    /// A store with no ambient authority: no environment, arguments, network or
    /// files (except `dir`, preopened as `/`), deterministic clocks and randomness,
    /// stdout and stderr captured, and linear memory capped at `memory_bytes`.
    pub fn store(
        &self,
        memory_bytes: usize,
        dir: Option<&Path>,
    ) -> Result<(Store<PluginState>, OutputTail), String> {
        let output = OutputTail::new(OUTPUT_CAPACITY);
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

const SEED: [u8; 16] = *b"uatu-plugin-seed";

/// The WASI clocks interface wasmtime-wasi links (a plugin importing any 0.2.x
/// version is linked to it); `tests/plugins/sleep-forever` fails if this drifts.
const MONOTONIC_CLOCK: &str = "wasi:clocks/monotonic-clock@0.2.6";

/// Time stands still inside a plugin (its clocks are fixed), so a sleep ends at once.
/// wasmtime-wasi's own sleep waits on the host's real clock inside the host call,
/// where the epoch deadline cannot interrupt it: one `sleep` would hold the run.
/// With this, a plugin that sleeps in a loop is an infinite loop, stopped at its deadline.
fn link_timeless_sleep(linker: &mut Linker<PluginState>) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    let mut clock = linker.instance(MONOTONIC_CLOCK)?;
    clock.func_wrap("subscribe-duration", |mut store, (_duration,): (u64,)| {
        Ok((elapsed(store.data_mut())?,))
    })?;
    clock.func_wrap("subscribe-instant", |mut store, (_instant,): (u64,)| {
        Ok((elapsed(store.data_mut())?,))
    })?;
    linker.allow_shadowing(false);
    Ok(())
}

/// A pollable that is ready at once.
fn elapsed(state: &mut PluginState) -> wasmtime::Result<Resource<DynPollable>> {
    let deadline = state.table.push(Elapsed)?;
    subscribe(&mut state.table, deadline)
}

struct Elapsed;

#[async_trait::async_trait]
impl Pollable for Elapsed {
    async fn ready(&mut self) {}
}

/// A plugin's stdout and stderr: every write is accepted (a plugin that logs a line
/// a step must not fail when some buffer fills), the newest `capacity` bytes are kept
/// for error messages, and the count of bytes written marks where a call began.
#[derive(Clone)]
pub struct OutputTail {
    tail: Arc<Mutex<Tail>>,
}

struct Tail {
    kept: VecDeque<u8>,
    capacity: usize,
    written: u64,
}

impl OutputTail {
    pub fn new(capacity: usize) -> OutputTail {
        OutputTail {
            tail: Arc::new(Mutex::new(Tail {
                kept: VecDeque::new(),
                capacity,
                written: 0,
            })),
        }
    }

    /// How many bytes were written so far: a mark for [`OutputTail::since`].
    pub fn written(&self) -> u64 {
        self.lock().written
    }

    /// What was written after `mark`, as far as it is still kept.
    pub fn since(&self, mark: u64) -> Vec<u8> {
        let tail = self.lock();
        let new = usize::try_from(tail.written.saturating_sub(mark)).unwrap_or(usize::MAX);
        let skip = tail.kept.len().saturating_sub(new);
        tail.kept.iter().skip(skip).copied().collect()
    }

    fn append(&self, bytes: &[u8]) {
        let mut tail = self.lock();
        tail.written += bytes.len() as u64;
        let bytes = &bytes[bytes.len().saturating_sub(tail.capacity)..];
        let overflow = (tail.kept.len() + bytes.len()).saturating_sub(tail.capacity);
        tail.kept.drain(..overflow);
        tail.kept.extend(bytes);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Tail> {
        // The tail is only appended to; a panic elsewhere leaves it consistent.
        self.tail.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl OutputStream for OutputTail {
    fn write(&mut self, bytes: bytes::Bytes) -> Result<(), StreamError> {
        self.append(&bytes);
        Ok(())
    }
    fn flush(&mut self) -> Result<(), StreamError> {
        Ok(())
    }
    fn check_write(&mut self) -> Result<usize, StreamError> {
        Ok(OUTPUT_CAPACITY)
    }
}

#[async_trait::async_trait]
impl Pollable for OutputTail {
    async fn ready(&mut self) {}
}

impl tokio::io::AsyncWrite for OutputTail {
    fn poll_write(self: Pin<&mut Self>, _: &mut Context<'_>, bytes: &[u8]) -> Poll<std::io::Result<usize>> {
        self.append(bytes);
        Poll::Ready(Ok(bytes.len()))
    }
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

impl IsTerminal for OutputTail {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for OutputTail {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }
    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

/// uatu's cache of compiled plugins: `$XDG_CACHE_HOME/uatu/plugins` or `~/.cache/uatu/plugins`.
pub fn default_cache_dir() -> Option<PathBuf> {
    wasm::cache_dir().map(|dir| dir.join("plugins"))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_output_tail_keeps_the_newest_bytes_and_never_refuses_a_write() {
        let mut output = OutputTail::new(8);
        for chunk in ["abc", "defg", "hijklmnopq"] {
            output
                .write(bytes::Bytes::from(chunk))
                .expect("every write is accepted");
        }
        assert_eq!(output.written(), 17);
        assert_eq!(output.since(0), b"jklmnopq");
        assert_eq!(output.since(14), b"opq");
        assert_eq!(output.since(17), b"");
        output.write(bytes::Bytes::from("rs")).unwrap();
        assert_eq!(output.since(14), b"opqrs");
        assert_eq!(output.since(0), b"lmnopqrs");
    }
}
