//! `uatu replay`: a recorded run's actions (or a script's) dispatched again on a fresh
//! device, recording a new run.

use std::path::PathBuf;

use uatu::ExitStatus;
use uatu::run::replay::{Replay, Script, replay_config};
use uatu::settings::Settings;
use uatu::trace::read_summary;

use super::{interrupted_by_ctrl_c, runtime};
use crate::errors::CliError;
use crate::{print, rerun};

/// `uatu replay`: a run (or a script) to replay, and the run settings as flags over the recorded ones.
#[derive(Debug, Clone, clap::Args)]
pub struct ReplayArgs {
    /// A run directory (`runs/<id>`, or a `-shrunk` one) whose actions to replay.
    #[arg(value_name = "RUN_DIR", required_unless_present = "script")]
    pub run: Option<PathBuf>,
    /// Replay up to this step: its screen is observed and checked, nothing after it is dispatched.
    #[arg(long, value_name = "STEP")]
    pub until: Option<u64>,
    /// Replay this action script (`repro.json`) instead of a run directory's actions.
    #[arg(long, value_name = "FILE")]
    pub script: Option<PathBuf>,
    #[command(flatten)]
    pub settings: Settings,
    /// Read settings from this file [default: ./uatu.toml if present]; the recorded run's settings override it, flags override both.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

impl ReplayArgs {
    /// `uatu replay` as it was asked for: the run or script, `--until`, the settings file
    /// and every setting given.
    fn rerun_line(&self) -> String {
        let mut words = vec!["uatu".to_string(), "replay".into()];
        words.extend(self.run.as_ref().map(|run| run.display().to_string()));
        if let Some(script) = &self.script {
            words.extend(["--script".into(), script.display().to_string()]);
        }
        if let Some(until) = self.until {
            words.extend(["--until".into(), until.to_string()]);
        }
        rerun::line::<ReplayArgs>(words, self.config.as_deref(), &self.settings)
    }

    /// Replays and prints the summary and how the screens compared with the recording.
    pub fn execute(self) -> Result<ExitStatus, CliError> {
        let file = Settings::from_file(self.config.as_deref())?;
        let rerun = self.rerun_line();
        let (mut script, recorded_steps) = match (&self.script, &self.run) {
            (Some(path), _) => (Script::read(path)?, None),
            (None, Some(run)) => (
                Script::from_run(run, self.until)?,
                // Without --until, as many steps as the run had: the same run again.
                read_summary(run).ok().map(|summary| summary.steps),
            ),
            (None, None) => return Err(CliError::NothingToReplay),
        };
        if let Some(until) = self.until {
            script.steps.truncate(until as usize);
        }
        let flags_max_steps = self.settings.max_steps;
        let mut config = replay_config(self.settings, &script.origin, file)?;
        config.max_steps = flags_max_steps
            .or(self.until.map(|until| until + 1))
            .or(recorded_steps);
        config.rerun = rerun;
        let json = config.json;
        let progress = print::StepProgress::new(config.max_steps, json);
        let replay = Replay {
            script,
            stop_at_violation_of: None,
            stop_at_missing_target: false,
            verdicts_only: false,
        };
        let runtime = runtime()?;
        let interrupted = interrupted_by_ctrl_c(&runtime);
        let outcome = runtime.block_on(uatu::run::replay(config, replay, interrupted, |step| {
            progress.show(step)
        }))?;
        progress.finish();
        print::replay_outcome(&outcome, json)?;
        Ok(outcome.status)
    }
}
