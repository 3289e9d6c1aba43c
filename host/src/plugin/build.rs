//! `uatu plugin build`: a plugin crate → a `wasm32-wasip1` cdylib (with
//! rustup's target or Debian's Rust and `-Zbuild-std`) → a component, made here
//! with `wit-component` and the WASI preview 1 reactor adapter.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use crate::wasm_toolchain::{Toolchain, artifact_path};

/// Why a plugin could not be built or scaffolded: the whole message, cargo's output included.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BuildError(pub String);

/// How to build: where cargo's artifacts go, and whether cargo's output is shown.
#[derive(Debug, Clone, Default)]
pub struct BuildOptions {
    /// `--target-dir` \[default: `$CARGO_TARGET_DIR`, else `<crate dir>/target`\].
    pub target_dir: Option<PathBuf>,
    /// Keep cargo's output for the error message instead of showing it.
    pub quiet: bool,
}

/// Builds the plugin crate at `crate_dir` into a component at `output`
/// \[default: `<crate dir>/<package name>.wasm`\] and returns its path.
pub fn build_plugin(crate_dir: &Path, output: Option<&Path>) -> Result<PathBuf, BuildError> {
    build_plugin_with(crate_dir, output, &BuildOptions::default())
}

/// [`build_plugin`] with explicit [`BuildOptions`].
pub fn build_plugin_with(
    crate_dir: &Path,
    output: Option<&Path>,
    options: &BuildOptions,
) -> Result<PathBuf, BuildError> {
    let manifest = crate_dir.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest)
        .map_err(|error| BuildError(format!("cannot read {}: {error}", manifest.display())))?;
    let parsed: toml::Table = toml::from_str(&text)
        .map_err(|error| BuildError(format!("{} is not valid TOML: {error}", manifest.display())))?;
    let package = parsed
        .get("package")
        .and_then(|package| package.get("name"))
        .and_then(|name| name.as_str())
        .ok_or_else(|| BuildError(format!("{} has no [package] name", manifest.display())))?
        .to_string();
    let lib_name = parsed
        .get("lib")
        .and_then(|lib| lib.get("name"))
        .and_then(|name| name.as_str())
        .unwrap_or(&package)
        .to_string();
    let toolchain = Toolchain::detect().map_err(BuildError)?;
    let target_dir = options
        .target_dir
        .clone()
        .unwrap_or_else(|| crate_dir.join("target"));
    let mut cargo = toolchain.cargo_build(&manifest, &target_dir);
    if options.quiet {
        cargo.arg("--quiet").stdout(Stdio::piped()).stderr(Stdio::piped());
    }
    let result = cargo
        .output()
        .map_err(|error| BuildError(format!("cannot run cargo: {error}")))?;
    if !result.status.success() {
        let log = String::from_utf8_lossy(&result.stderr);
        let tail: Vec<&str> = log
            .lines()
            .rev()
            .take(40)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        return Err(BuildError(format!(
            "cargo build of {} for wasm32-wasip1 failed ({}){}",
            crate_dir.display(),
            result.status,
            if tail.is_empty() {
                String::new()
            } else {
                format!(":\n{}", tail.join("\n"))
            }
        )));
    }
    let module_path = artifact_path(&target_dir, &lib_name);
    let module = std::fs::read(&module_path).map_err(|error| {
        BuildError(format!(
            "cannot read {} ({error}); is the crate a `crate-type = [\"cdylib\"]` library?",
            module_path.display()
        ))
    })?;
    let component = componentize(&module)?;
    let output = output
        .map(Path::to_path_buf)
        .unwrap_or_else(|| crate_dir.join(format!("{package}.wasm")));
    std::fs::write(&output, component)
        .map_err(|error| BuildError(format!("cannot write {}: {error}", output.display())))?;
    Ok(output)
}

/// A `wasm32-wasip1` core module built with wit-bindgen → a component.
pub fn componentize(module: &[u8]) -> Result<Vec<u8>, BuildError> {
    wit_component::ComponentEncoder::default()
        .validate(true)
        .module(module)
        .and_then(|encoder| {
            encoder.adapter(
                "wasi_snapshot_preview1",
                wasi_preview1_component_adapter_provider::WASI_SNAPSHOT_PREVIEW1_REACTOR_ADAPTER,
            )
        })
        .and_then(|mut encoder| encoder.encode())
        .map_err(|error| {
            BuildError(format!(
                "cannot make a component of the module (was it built with uatu-plugin-sdk?): {error:#}"
            ))
        })
}
