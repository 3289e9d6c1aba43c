//! Specs: bundling TypeScript (in process, with oxc), compiling it to a Wasm module, and
//! running it sandboxed at every step.
//!
//! - [`build`] turns a `.ts`/`.js` spec into a [`SpecModule`] (`uatu build`);
//! - [`SpecModule::load`] reads any spec (`.ts`/`.js` built on the fly and cached, or `.wasm`);
//! - [`SpecInstance`] runs it: [`SpecInstance::load`] once, then [`SpecInstance::step`] per step.

mod bundle;
mod installed;
mod instance;
mod module;
pub mod provider;
pub mod query;
pub mod sourcemap;

use std::path::Path;

use sha2::{Digest, Sha256};

pub use bundle::BundleError;
pub use installed::{LIBRARY_VERSION, OtherLibraryVersion, other_library_version, typescript_version};
pub use instance::{
    ExtractorError, GeneratorError, JsError, Offer, Phase, PredicateValue, Setup, SpecDescription, SpecError,
    SpecInstance, SpecLimits, SpecStep, StepTimings,
};
pub use module::{ModuleError, SPEC_ABI, SpecModule};

/// The name the bundle has inside QuickJS (and in unmapped stacks).
pub(crate) const SCRIPT_NAME: &str = "spec.js";

/// Why a spec could not be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// Bundling failed (a syntax error, an import that cannot be resolved, an import cycle).
    #[error(transparent)]
    Bundle(#[from] BundleError),
    /// The bundle did not compile to QuickJS bytecode.
    #[error(transparent)]
    Compile(#[from] SpecError),
}

/// Why a spec could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file cannot be read.
    #[error("cannot read spec {path}")]
    Read {
        /// The spec file.
        path: std::path::PathBuf,
        /// What the OS said.
        #[source]
        source: std::io::Error,
    },
    /// A `.wasm` module that is not a spec module, or one built for another uatu.
    #[error(transparent)]
    Module(#[from] ModuleError),
    /// A `.ts`/`.js` spec that did not build.
    #[error(transparent)]
    Build(#[from] BuildError),
}

/// Bundles and compiles the spec at `path` (`.ts` or `.js`) into a module.
pub fn build(path: &Path) -> Result<SpecModule, BuildError> {
    let shown = path.display().to_string();
    let bundle = bundle::bundle(path, &shown)?;
    let bytecode = SpecInstance::compile_script(&shown, &bundle.script, &bundle.source_map)?;
    Ok(SpecModule {
        source: shown,
        abi: SPEC_ABI,
        provider_sha256: provider::sha256().to_string(),
        bytecode,
        source_map: bundle.source_map,
    })
}

impl SpecModule {
    /// Any spec: a `.wasm` module from `uatu build`, or a `.ts`/`.js` file built
    /// here and cached under the user's cache directory by content and provider.
    pub fn load(path: &Path) -> Result<SpecModule, LoadError> {
        let is_wasm = path.extension().is_some_and(|e| e == "wasm");
        if is_wasm {
            return SpecModule::read(path);
        }
        let source = std::fs::read(path).map_err(|source| LoadError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let cache_path = crate::wasm::cache_dir().map(|dir| {
            dir.join("specs")
                .join(format!("{}.wasm", cache_key(path, &source)))
        });
        if let Some(cached) = &cache_path
            && let Ok(bytes) = std::fs::read(cached)
            && let Ok(module) = SpecModule::from_bytes(&bytes, &cached.display().to_string())
            && module.check_compatible(&path.display().to_string()).is_ok()
        {
            return Ok(module);
        }
        let module = build(path)?;
        if let Some(cached) = &cache_path {
            // The cache only saves time; a failure to write it is not an error.
            let _ = crate::wasm::write_atomically(cached, &module.to_bytes());
        }
        Ok(module)
    }
}

/// A built spec depends on its source, every file it imports, the library and
/// the provider. Imports are not known before bundling, so the key covers the
/// spec's whole directory tree of `.ts`/`.js`/`.json` files (small in practice).
fn cache_key(path: &Path, source: &[u8]) -> String {
    let mut hasher = Sha256::new();
    hasher.update(provider::sha256().as_bytes());
    hasher.update(bundle::library_hash().as_bytes());
    hasher.update(SPEC_ABI.to_le_bytes());
    hasher.update(path.display().to_string().as_bytes());
    hasher.update(source);
    if let Some(dir) = path.parent() {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        let mut files = Vec::new();
        collect_sources(dir, 0, &mut files);
        files.sort();
        for file in files {
            if let Ok(bytes) = std::fs::read(&file) {
                hasher.update(file.display().to_string().as_bytes());
                hasher.update(&bytes);
            }
        }
    }
    hex::encode(hasher.finalize())
}

fn collect_sources(dir: &Path, depth: usize, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if name.to_string_lossy().starts_with('.') || name == "node_modules" {
            continue;
        }
        if path.is_dir() && depth < 4 {
            collect_sources(&path, depth + 1, out);
        } else if path
            .extension()
            .is_some_and(|e| matches!(e.to_str(), Some("ts" | "js" | "mjs" | "mts" | "json")))
        {
            out.push(path);
        }
    }
}
