//! Specs: bundling TypeScript with esbuild, compiling it to a Wasm module, and
//! running it sandboxed at every step.

use crate::cli::{BuildArgs, CheckArgs};
use crate::exit::Status;

pub fn build_command(_args: BuildArgs) -> anyhow::Result<Status> {
    crate::cli::not_yet("build")
}

pub fn check_command(_args: CheckArgs) -> anyhow::Result<Status> {
    crate::cli::not_yet("check")
}
