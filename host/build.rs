//! Builds the spec provider (`spec-provider/`, QuickJS for `wasm32-wasip1`) that the host embeds.

#[path = "src/wasm_toolchain.rs"]
#[allow(dead_code)]
mod wasm_toolchain;

use std::path::{Path, PathBuf};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Read at run time, not with `env!`: a build script compiled in one checkout and
    // reused from a copied target directory must still look at this checkout.
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?);
    build_spec_provider(&manifest_dir)
}

fn build_spec_provider(manifest_dir: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let provider_dir = manifest_dir.join("../spec-provider");
    for watched in ["src", "Cargo.toml", "Cargo.lock"] {
        println!("cargo:rerun-if-changed={}", provider_dir.join(watched).display());
    }
    println!("cargo:rerun-if-env-changed=UATU_SPEC_PROVIDER");
    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);
    let destination = out_dir.join("uatu_spec_provider.wasm");

    // A prebuilt provider (e.g. from CI) may be supplied instead of building it here.
    if let Ok(prebuilt) = std::env::var("UATU_SPEC_PROVIDER") {
        std::fs::copy(&prebuilt, &destination)
            .map_err(|e| format!("copying UATU_SPEC_PROVIDER={prebuilt}: {e}"))?;
        return Ok(());
    }

    // Keep the provider's own target directory beside the host's (OUT_DIR is
    // <target>/<profile>/build/<pkg>/out), so its standard library and QuickJS
    // builds survive changes to this build script.
    let target_dir = out_dir
        .ancestors()
        .nth(4)
        .map(|target| target.join("wasm"))
        .unwrap_or_else(|| out_dir.join("wasm"));
    let toolchain =
        wasm_toolchain::Toolchain::detect().map_err(|e| format!("building the spec provider: {e}"))?;
    let status = toolchain
        .cargo_build(&provider_dir.join("Cargo.toml"), &target_dir)
        .status()
        .map_err(|e| format!("running cargo for the spec provider: {e}; run `./dev/setup`"))?;
    if !status.success() {
        return Err(format!(
            "building the spec provider (spec-provider/) for {} failed ({status}); run `./dev/setup`",
            wasm_toolchain::TARGET
        )
        .into());
    }
    let artifact = wasm_toolchain::artifact_path(&target_dir, "uatu_spec_provider");
    std::fs::copy(&artifact, &destination).map_err(|e| format!("copying {}: {e}", artifact.display()))?;
    Ok(())
}
