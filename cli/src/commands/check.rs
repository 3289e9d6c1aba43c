//! `uatu check`: re-evaluate a spec over a recorded run, offline.

use std::path::PathBuf;

use uatu::ExitStatus;

use crate::errors::CliError;
use crate::print;

/// `uatu check --spec SPEC RUN_DIR`.
#[derive(Debug, Clone, clap::Args)]
pub struct CheckArgs {
    /// The spec to evaluate (`.ts`, `.js` or `.wasm`).
    #[arg(long, value_name = "FILE")]
    pub spec: PathBuf,
    /// A run directory (`runs/<id>`) written by `uatu run`.
    pub run: PathBuf,
    /// Treat `unmet` as a violation: exit code 1.
    #[arg(long)]
    pub strict: bool,
    /// Print the verdicts as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

impl CheckArgs {
    /// Checks and prints the verdicts.
    pub fn execute(self) -> Result<ExitStatus, CliError> {
        let (report, status) = uatu::run::check(&self.spec, &self.run, self.strict)?;
        match self.json {
            true => print::json(&report)?,
            false => print::check_report(&self.spec, &report),
        }
        Ok(status)
    }
}
