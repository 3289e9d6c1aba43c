//! `uatu shrink`: a run's violation as a short reproducer.

use std::path::PathBuf;

use uatu::ExitStatus;
use uatu::run::replay::{Origin, replay_config};
use uatu::settings::Settings;
use uatu::shrink::{ShrinkOptions, ShrinkSettings, default_output};
use uatu::trace::read_meta;

use super::{interrupted_by_ctrl_c, runtime};
use crate::errors::CliError;
use crate::{print, rerun};

/// `uatu shrink`: the run, the property, the limits.
#[derive(Debug, Clone, clap::Args)]
pub struct ShrinkArgs {
    /// A run directory (`runs/<id>`) that violated a property.
    #[arg(value_name = "RUN_DIR")]
    pub run: PathBuf,
    /// The property to reproduce [default: the first one the run violated].
    #[arg(long, value_name = "NAME")]
    pub property: Option<String>,
    #[command(flatten)]
    pub shrink: ShrinkSettings,
    /// Where to write the result [default: <RUN_DIR>-shrunk].
    #[arg(long = "into", value_name = "DIR")]
    pub into: Option<PathBuf>,
    #[command(flatten)]
    pub settings: Settings,
    /// Read settings from this file [default: ./uatu.toml if present]; the recorded run's settings override it, flags override both.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

impl ShrinkArgs {
    /// Shrinks and prints where the reproducer is.
    pub fn execute(self) -> Result<ExitStatus, CliError> {
        let file = Settings::from_file(self.config.as_deref())?;
        let meta = read_meta(&self.run).map_err(|source| uatu::Error::NotARun {
            run_dir: self.run.clone(),
            source,
        })?;
        let shrink = self.shrink.over(file.shrink.clone());
        let mut config = replay_config(self.settings, &Origin::of(&meta), file)?;
        let output = self.into.unwrap_or_else(|| default_output(&self.run));
        config.rerun = rerun::replay_line(&output);
        let json = config.json;
        let options = ShrinkOptions::resolve(shrink, &config.device, self.property.clone(), output)?;
        let shown = self.property.unwrap_or_else(|| "the first violation".into());
        let spinner = print::ShrinkSpinner::new(json);
        let runtime = runtime()?;
        let interrupted = interrupted_by_ctrl_c(&runtime);
        let report = runtime.block_on(uatu::shrink::shrink(&self.run, config, options, interrupted, |p| {
            spinner.show(&shown, p)
        }));
        spinner.finish();
        print::shrink_report(&report?, json)?;
        Ok(ExitStatus::Violated)
    }
}
