//! Building a Rust crate for `wasm32-wasip1`: the spec provider (from
//! `build.rs`) and plugins (`uatu plugin build`).
//!
//! With rustup's `wasm32-wasip1` target installed this is a plain
//! `cargo build --target wasm32-wasip1`. Without it (the usual case on machines
//! that cannot download toolchains) it uses Debian's Rust with `-Zbuild-std`,
//! wasi-libc, clang and wasm-ld, as described in `docs/development.md`.
//!
//! This file is also compiled into `host/build.rs` (via `#[path]`), so it uses
//! nothing but `std`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The Rust target guests (the spec provider, plugins) are compiled for.
pub const TARGET: &str = "wasm32-wasip1";

/// Debian's Rust, which ships the standard library's source for `-Zbuild-std`.
const DEBIAN_RUSTC: &str = "/usr/bin/rustc";
const DEBIAN_CARGO: &str = "/usr/bin/cargo";
const WASI_SYSROOT_LIB: &str = "/usr/lib/wasm32-wasi";

/// The Debian packages the fallback needs (see `docs/development.md`).
pub const DEBIAN_PACKAGES: &str =
    "rustc-web cargo-web rust-web-src wasi-libc clang lld libclang-rt-14-dev-wasm32";

/// How this machine builds `wasm32-wasip1`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Toolchain {
    /// rustup's toolchain has the target's standard library.
    Rustup,
    /// Debian's Rust with `-Zbuild-std` against wasi-libc.
    DebianBuildStd,
}

impl Toolchain {
    /// Finds a way to build `wasm32-wasip1` here, or says what to install.
    pub fn detect() -> Result<Toolchain, String> {
        let rustup_has_target = Command::new("rustup")
            .args(["target", "list", "--installed"])
            .output()
            .ok()
            .filter(|output| output.status.success())
            .is_some_and(|output| {
                String::from_utf8_lossy(&output.stdout)
                    .lines()
                    .any(|line| line.trim() == TARGET)
            });
        if rustup_has_target {
            return Ok(Toolchain::Rustup);
        }
        let missing: Vec<&str> = [
            DEBIAN_RUSTC,
            DEBIAN_CARGO,
            WASI_SYSROOT_LIB,
            "/usr/bin/wasm-ld",
            "/usr/bin/clang",
        ]
        .into_iter()
        .filter(|path| !Path::new(path).exists())
        .collect();
        if missing.is_empty() {
            Ok(Toolchain::DebianBuildStd)
        } else {
            Err(format!(
                "cannot build for {TARGET}: rustup has no {TARGET} target and {} missing; \
                 run `./dev/setup` (or `apt-get install {DEBIAN_PACKAGES}`)",
                missing.join(", ")
            ))
        }
    }

    /// A `cargo build --release` of the crate at `manifest_path` for `wasm32-wasip1`,
    /// with artifacts under `target_dir/wasm32-wasip1/release/`.
    pub fn cargo_build(&self, manifest_path: &Path, target_dir: &Path) -> Command {
        let mut command = match self {
            Toolchain::Rustup => Command::new("cargo"),
            Toolchain::DebianBuildStd => Command::new(DEBIAN_CARGO),
        };
        // A build script runs with the outer cargo's variables; none of them
        // describe this build.
        for (name, _) in std::env::vars_os() {
            let name = name.to_string_lossy();
            if (name.starts_with("CARGO_") && name != "CARGO_HOME")
                || matches!(
                    name.as_ref(),
                    "RUSTC"
                        | "RUSTC_WRAPPER"
                        | "RUSTC_WORKSPACE_WRAPPER"
                        | "RUSTFLAGS"
                        | "RUSTDOC"
                        | "TARGET"
                        | "HOST"
                        | "OPT_LEVEL"
                        | "PROFILE"
                        | "DEBUG"
                        | "NUM_JOBS"
                        | "OUT_DIR"
                )
            {
                command.env_remove(name.as_ref());
            }
        }
        command
            .arg("build")
            .arg("--release")
            .arg("--manifest-path")
            .arg(manifest_path)
            .arg("--target")
            .arg(TARGET)
            .arg("--target-dir")
            .arg(target_dir);
        // QuickJS (rquickjs-sys) is C: compile it with clang against wasi-libc
        // rather than downloading the wasi-sdk, with either toolchain.
        command
            .env("RQUICKJS_SYS_NO_WASI_SDK", "1")
            .env("CC_wasm32_wasip1", "clang")
            .env("AR_wasm32_wasip1", "llvm-ar-14")
            .env("CFLAGS_wasm32_wasip1", "--target=wasm32-wasi")
            .env(
                "BINDGEN_EXTRA_CLANG_ARGS_wasm32_wasip1",
                "--target=wasm32-wasi --sysroot=/usr -isystem /usr/include/wasm32-wasi",
            );
        if *self == Toolchain::DebianBuildStd {
            command
                .arg("-Zbuild-std=std,panic_abort")
                .env("RUSTC", DEBIAN_RUSTC)
                .env("RUSTC_BOOTSTRAP", "1")
                .env(
                    "RUSTFLAGS",
                    format!("-C linker=wasm-ld -L {WASI_SYSROOT_LIB} -C link-self-contained=no"),
                );
        }
        command
    }
}

/// Where `cargo_build` leaves the cdylib of crate `lib_name` (dashes become underscores).
pub fn artifact_path(target_dir: &Path, lib_name: &str) -> PathBuf {
    target_dir
        .join(TARGET)
        .join("release")
        .join(format!("{}.wasm", lib_name.replace('-', "_")))
}
