//! `uatu run`: explore an app, checking the spec's properties at every step.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use uatu::ExitStatus;
use uatu::settings::{RunConfig, Settings};

use super::{interrupted_by_ctrl_c, runtime};
use crate::errors::CliError;
use crate::{print, rerun};

/// `uatu run`: every setting of `uatu.toml` as a flag, and the file to read.
#[derive(Debug, Clone, clap::Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub settings: Settings,

    /// Read settings from this file [default: ./uatu.toml if present]. Flags override it.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// At the end of the run, write its self-contained HTML report (as `uatu report`) to FILE.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,

    /// At the end of the run, shrink each violated property to a short reproducer (`<run>-shrunk-<property>/`).
    #[arg(long)]
    pub shrink: bool,
}

impl RunArgs {
    /// Runs, prints the summary (and each shrunk violation), writes the report if asked.
    pub fn execute(self) -> Result<ExitStatus, CliError> {
        let file = Settings::from_file(self.config.as_deref())?;
        let flags = self.settings.clone();
        let mut config = RunConfig::resolve(self.settings, file.clone())?;
        if let Some(other) = uatu::spec::other_library_version(&config.spec) {
            print::warning(&other);
        }
        config.rerun = rerun_line(&flags, self.config.as_deref(), config.seed);
        let json = config.json;
        let progress = print::StepProgress::new(config.max_steps, json);
        let runtime = runtime()?;
        let interrupted = interrupted_by_ctrl_c(&runtime);
        let outcome = runtime.block_on(uatu::run::execute(config, interrupted.clone(), |step| {
            progress.show(step)
        }))?;
        progress.finish();

        let shrink = self.shrink && outcome.trace_incomplete.is_none() && !interrupted.load(Ordering::SeqCst);
        let shrunk = match shrink {
            true => {
                let spinner = print::ShrinkSpinner::new(json);
                let shrunk = runtime.block_on(uatu::shrink::shrink_each(
                    &outcome.summary,
                    flags,
                    file,
                    rerun::replay_line,
                    interrupted,
                    |property, progress| spinner.show(property, progress),
                ));
                spinner.finish();
                shrunk
            }
            false => Vec::new(),
        };
        print::run_outcome(&outcome, shrink.then_some(shrunk.as_slice()), json)?;
        match &self.report {
            Some(output) => Ok(write_report(Path::new(&outcome.summary.run_dir), output, outcome.status, json)),
            None => Ok(outcome.status),
        }
    }
}

/// `uatu run` with the flags `flags` gave, the settings file it read and the seed it used
/// (a `seed` of 0 picks one).
fn rerun_line(flags: &Settings, config: Option<&Path>, seed: u64) -> String {
    let layer = Settings {
        seed: Some(seed),
        ..flags.clone()
    };
    let file_read = Settings::file_to_read(config);
    rerun::line::<RunArgs>(vec!["uatu".into(), "run".into()], file_read.as_deref(), &layer)
}

/// `--report FILE`: the run's verdict stands; a report that could not be written is said,
/// and fails a run that had passed.
fn write_report(run_dir: &Path, output: &Path, status: ExitStatus, json: bool) -> ExitStatus {
    match uatu::inspect::write_report(run_dir, output, uatu::inspect::ReportOptions::default()) {
        Ok(stats) => {
            if !json {
                print::report_written(&stats, false);
            }
            status
        }
        Err(error) => {
            print::error_about("the report", &uatu::Error::from(error));
            match status {
                ExitStatus::Ok => ExitStatus::Infrastructure,
                status => status,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory as _, FromArgMatches as _, Parser};
    use uatu::devices::DeviceOptions;
    use uatu::devices::android::AndroidOptions;
    use uatu::devices::sim::SimOptions;
    use uatu::devices::web::WebOptions;
    use uatu::plugin::OnPluginError;
    use uatu::settings::HierarchyMode;
    use uatu::trace::TraceFormat;

    use super::*;

    /// `uatu run`'s arguments alone, as the line repeats them.
    #[derive(Parser)]
    struct Run {
        #[command(flatten)]
        args: RunArgs,
    }

    /// Every setting that has a flag, set.
    fn every_setting() -> Settings {
        Settings {
            spec: Some("specs/my spec.ts".into()),
            device: DeviceOptions {
                device: Some("android:emulator-5554".into()),
                sim: SimOptions {
                    sim_bugs: Some("stale-total,float-cents".into()),
                    sim_latency: Some("2ms".into()),
                    sim_seed: Some(11),
                },
                web: WebOptions {
                    url: Some("http://127.0.0.1:8080/?q=a&b=c".into()),
                    cdp: Some("ws://127.0.0.1:9222/devtools/browser/x".into()),
                },
                android: AndroidOptions {
                    sidecar: Some("/opt/uatu/sidecar-maestro.jar".into()),
                    sidecar_fake_device: Some("builtin".into()),
                    clear_data: Some(false),
                    app_path: Some("/apps/app debug.apk".into()),
                    no_grant_permissions: Some(true),
                    adb_server: Some("127.0.0.1:5037".into()),
                    avd: Some("Pixel_8_API_34".into()),
                },
            },
            hierarchy: Some(HierarchyMode::Sidecar),
            bundle_id: Some("app.folio".into()),
            seed: Some(3),
            max_steps: Some(500),
            duration: Some("10m".into()),
            output: Some("it's here".into()),
            plugin: vec!["junit".into(), PathBuf::from("plugins/my.wasm")],
            exit_on_violation: Some(true),
            strict: Some(false),
            no_screenshots: Some(true),
            trace_format: Some(TraceFormat::Full),
            json: Some(true),
            spec_timeout: Some("3s".into()),
            spec_memory: Some(128),
            on_plugin_error: Some(OnPluginError::Disable),
            ..Settings::default()
        }
    }

    #[test]
    fn the_rerun_line_gives_back_every_setting_the_file_and_the_seed() {
        let dir = tempfile::tempdir().expect("temp dir");
        let config = dir.path().join("uatu.toml");
        std::fs::write(&config, "").expect("writes");
        let line = rerun_line(&every_setting(), Some(&config), 42);
        let words = rerun::shell_split(&line);
        assert_eq!(words[..2], ["uatu", "run"], "{line}");
        let matches = Run::command()
            .try_get_matches_from(&words[1..])
            .unwrap_or_else(|error| panic!("{line}: {error}"));
        let parsed = Run::from_arg_matches(&matches).expect("parses").args;
        let expected = Settings {
            seed: Some(42),
            ..every_setting()
        };
        assert_eq!(parsed.settings, expected, "{line}");
        assert_eq!(parsed.config, Some(config));
    }

    #[test]
    fn only_what_was_given_is_repeated() {
        let flags = Settings {
            spec: Some("spec.ts".into()),
            ..Settings::default()
        };
        let config = Path::new("/no/such/uatu.toml");
        assert_eq!(
            rerun_line(&flags, Some(config), 7),
            "uatu run --config /no/such/uatu.toml --spec spec.ts --seed 7"
        );
    }
}
