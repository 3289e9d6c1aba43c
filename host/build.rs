//! Builds the guests the host embeds: the spec provider (`spec-provider/`, QuickJS)
//! and the first-party plugins (`plugins/`), all for `wasm32-wasip1`, into one target
//! directory so that they share its standard-library build.

#[path = "src/wasm_toolchain.rs"]
#[allow(dead_code)]
mod wasm_toolchain;

use std::path::{Path, PathBuf};

type BuildResult = Result<(), Box<dyn std::error::Error>>;

fn main() -> BuildResult {
    // Read at run time, not with `env!`: a build script compiled in one checkout and
    // reused from a copied target directory must still look at this checkout.
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?);
    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);
    // Keep the guests' own target directory beside the host's (OUT_DIR is
    // <target>/<profile>/build/<pkg>/out), so their standard library and QuickJS
    // builds survive changes to this build script, and a debug and a release build
    // of the host share them.
    let guest_target = out_dir
        .ancestors()
        .nth(4)
        .map(|target| target.join("wasm"))
        .unwrap_or_else(|| out_dir.join("wasm"));
    println!("cargo:rerun-if-env-changed={PREBUILT_GUESTS}");
    if let Some(prebuilt) = std::env::var_os(PREBUILT_GUESTS) {
        return copy_prebuilt_guests(Path::new(&prebuilt), &out_dir);
    }
    let mut toolchain = None;
    build_spec_provider(&manifest_dir, &out_dir, &guest_target, &mut toolchain)?;
    build_first_party_plugins(&manifest_dir, &out_dir, &guest_target, &mut toolchain)
}

/// A directory of guests built elsewhere, laid out as this script leaves them in `OUT_DIR`
/// (`uatu_spec_provider.wasm`, `builtin-plugins/*.wasm.deflate`). The release workflow
/// builds the guests once, on Debian, and every platform's binary embeds those same bytes
/// (a spec module records its provider's hash: one built on Linux then loads on macOS).
const PREBUILT_GUESTS: &str = "UATU_PREBUILT_GUESTS";

fn copy_prebuilt_guests(prebuilt: &Path, out_dir: &Path) -> BuildResult {
    println!("cargo:rerun-if-changed={}", prebuilt.display());
    let copy = |from: &Path, to: &Path| {
        std::fs::copy(from, to)
            .map(drop)
            .map_err(|e| format!("{PREBUILT_GUESTS}: copying {}: {e}", from.display()))
    };
    copy(
        &prebuilt.join("uatu_spec_provider.wasm"),
        &out_dir.join("uatu_spec_provider.wasm"),
    )?;
    let plugins = prebuilt.join("builtin-plugins");
    let destination = out_dir.join("builtin-plugins");
    std::fs::create_dir_all(&destination)?;
    let entries = std::fs::read_dir(&plugins)
        .map_err(|e| format!("{PREBUILT_GUESTS}: reading {}: {e}", plugins.display()))?;
    for entry in entries {
        let file = entry?.path();
        if let Some(name) = file.file_name() {
            copy(&file, &destination.join(name))?;
        }
    }
    Ok(())
}

/// The toolchain, detected once and only when something has to be built.
fn detected(toolchain: &mut Option<wasm_toolchain::Toolchain>) -> Result<wasm_toolchain::Toolchain, String> {
    if let Some(found) = toolchain {
        return Ok(found.clone());
    }
    let found = wasm_toolchain::Toolchain::detect()?;
    *toolchain = Some(found.clone());
    Ok(found)
}

/// `cargo build` of the guest workspace `manifest` into `guest_target`.
fn cargo_build(
    what: &str,
    manifest: &Path,
    guest_target: &Path,
    toolchain: &mut Option<wasm_toolchain::Toolchain>,
) -> BuildResult {
    let toolchain = detected(toolchain).map_err(|e| format!("building {what}: {e}"))?;
    let status = toolchain
        .cargo_build(manifest, guest_target)
        .status()
        .map_err(|e| format!("running cargo for {what}: {e}; run `./dev/setup`"))?;
    if !status.success() {
        return Err(format!(
            "building {what} for {} failed ({status}); run `./dev/setup`",
            wasm_toolchain::TARGET
        )
        .into());
    }
    Ok(())
}

fn build_spec_provider(
    manifest_dir: &Path,
    out_dir: &Path,
    guest_target: &Path,
    toolchain: &mut Option<wasm_toolchain::Toolchain>,
) -> BuildResult {
    let provider_dir = manifest_dir.join("../spec-provider");
    for watched in ["src", "Cargo.toml", "Cargo.lock"] {
        println!("cargo:rerun-if-changed={}", provider_dir.join(watched).display());
    }
    let destination = out_dir.join("uatu_spec_provider.wasm");
    cargo_build(
        "the spec provider (spec-provider/)",
        &provider_dir.join("Cargo.toml"),
        guest_target,
        toolchain,
    )?;
    let artifact = wasm_toolchain::artifact_path(guest_target, "uatu_spec_provider");
    std::fs::copy(&artifact, &destination).map_err(|e| format!("copying {}: {e}", artifact.display()))?;
    Ok(())
}

/// Builds the `plugins/` workspace (every member at once) and leaves each member's
/// core module, deflate-compressed, at `OUT_DIR/builtin-plugins/<package>.wasm.deflate`
/// for `host/src/plugin/builtin.rs` to embed. The host makes the component at run time
/// (`wit-component` is a dependency of the host, not of this script).
fn build_first_party_plugins(
    manifest_dir: &Path,
    out_dir: &Path,
    guest_target: &Path,
    toolchain: &mut Option<wasm_toolchain::Toolchain>,
) -> BuildResult {
    let plugins_dir = manifest_dir.join("../plugins");
    let sdk_dir = manifest_dir.join("../plugin-sdk");
    for watched in [
        plugins_dir.join("Cargo.toml"),
        plugins_dir.join("Cargo.lock"),
        sdk_dir.join("src"),
        sdk_dir.join("wit"),
        sdk_dir.join("Cargo.toml"),
    ] {
        println!("cargo:rerun-if-changed={}", watched.display());
    }
    let mut members = Vec::new();
    for entry in
        std::fs::read_dir(&plugins_dir).map_err(|e| format!("reading {}: {e}", plugins_dir.display()))?
    {
        let dir = entry?.path();
        if dir.join("Cargo.toml").is_file() {
            println!("cargo:rerun-if-changed={}", dir.join("src").display());
            println!("cargo:rerun-if-changed={}", dir.join("Cargo.toml").display());
            let name = dir
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
                .ok_or_else(|| format!("{} has no name", dir.display()))?;
            members.push(name);
        }
    }
    cargo_build(
        "the first-party plugins (plugins/)",
        &plugins_dir.join("Cargo.toml"),
        guest_target,
        toolchain,
    )?;
    let destination = out_dir.join("builtin-plugins");
    std::fs::create_dir_all(&destination)?;
    for name in members {
        let artifact = wasm_toolchain::artifact_path(guest_target, &name);
        let module = std::fs::read(&artifact).map_err(|e| format!("reading {}: {e}", artifact.display()))?;
        let compressed = miniz_oxide::deflate::compress_to_vec(&module, 9);
        std::fs::write(destination.join(format!("{name}.wasm.deflate")), compressed)?;
    }
    Ok(())
}
