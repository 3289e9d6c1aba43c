//! WebAssembly plugins: strategies, extractors and trace sinks.

use crate::cli::{PluginBuildArgs, PluginNewArgs};
use crate::exit::Status;

pub fn build_command(_args: PluginBuildArgs) -> anyhow::Result<Status> {
    crate::cli::not_yet("plugin build")
}

pub fn new_command(_args: PluginNewArgs) -> anyhow::Result<Status> {
    crate::cli::not_yet("plugin new")
}
