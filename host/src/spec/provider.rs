//! The QuickJS provider embedded in this binary, compiled once for the host's
//! engine (`crate::wasm`) and cached.

use std::sync::OnceLock;

use sha2::{Digest, Sha256};
use wasmtime::Module;

use crate::wasm::{self, RuntimeError};

/// The provider built from `spec-provider/` by `build.rs`.
pub static PROVIDER_WASM: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/uatu_spec_provider.wasm"));

/// Hex sha256 of [`PROVIDER_WASM`]: the provider a spec module must have been built with.
pub fn sha256() -> &'static str {
    static HASH: OnceLock<String> = OnceLock::new();
    HASH.get_or_init(|| hex::encode(Sha256::digest(PROVIDER_WASM)))
}

/// The provider compiled for this engine: from memory, the on-disk cache, or Cranelift.
pub fn module() -> Result<&'static Module, RuntimeError> {
    static MODULE: OnceLock<Result<Module, RuntimeError>> = OnceLock::new();
    MODULE.get_or_init(load_module).as_ref().map_err(Clone::clone)
}

fn load_module() -> Result<Module, RuntimeError> {
    let engine = wasm::engine()?;
    let cached = match wasm::cache_dir() {
        Some(dir) => Some(wasm::compiled_path(
            &dir.join("compiled"),
            &format!("provider-{}", &sha256()[..16]),
        )?),
        None => None,
    };
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
        .map_err(|e| RuntimeError::new(format!("compiling the embedded spec provider: {e:#}")))?;
    if let Some(path) = &cached
        && let Ok(bytes) = module.serialize()
    {
        // A cache that cannot be written only costs start-up time.
        let _ = wasm::write_atomically(path, &bytes);
    }
    Ok(module)
}
