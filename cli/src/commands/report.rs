//! `uatu report`: one self-contained HTML file of a run.

use std::path::PathBuf;

use uatu::ExitStatus;

use crate::errors::CliError;
use crate::print;

/// `uatu report RUN_DIR [-o FILE]`.
#[derive(Debug, Clone, clap::Args)]
pub struct ReportArgs {
    /// The run directory (`runs/<id>`).
    pub run: PathBuf,
    /// The HTML file to write.
    #[arg(short, long, value_name = "FILE", default_value = "report.html")]
    pub output: PathBuf,
    /// Steps before and after each violation whose records and screenshots are included.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub around: u64,
}

impl ReportArgs {
    /// Writes the report and says how large it is.
    pub fn execute(self) -> Result<ExitStatus, CliError> {
        let options = uatu::inspect::ReportOptions { around: self.around };
        let stats = uatu::inspect::write_report(&self.run, &self.output, options)?;
        print::report_written(&stats, true);
        Ok(ExitStatus::Ok)
    }
}
