//! `uatu version`: the versions a bug report needs.

use uatu::ExitStatus;

use crate::errors::CliError;
use crate::print;

/// `uatu version` takes no arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct VersionArgs {}

impl VersionArgs {
    /// Prints uatu's version, its spec ABI and provider, its plugin contract and its SDK protocol.
    pub fn execute(self) -> Result<ExitStatus, CliError> {
        print::versions();
        Ok(ExitStatus::Ok)
    }
}
