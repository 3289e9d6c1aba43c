//! The command line: what each subcommand takes. Run settings are the library's
//! one settings layer ([`uatu::settings::Settings`]); `--help` shows their
//! defaults from the library's built-in defaults ([`with_defaults_in_help`]).

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use uatu::devices::DeviceOptions;
use uatu::plugin::Kind;
use uatu::settings::Settings;
use uatu_sim::SimConfig;

const EXIT_CODES: &str = "\
Exit codes:
  0  no property violated
  1  a property violated (or, with --strict, unmet)
  2  usage, configuration, spec or plugin error
  3  device or infrastructure failure";

/// Autonomous, property-based testing for mobile apps.
///
/// uatu explores an app on its own, checks a spec's LTL properties at every
/// step, and records a trace of every violation.
#[derive(Debug, Parser)]
#[command(name = "uatu", version, after_help = EXIT_CODES, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Explore an app, checking the spec's properties at every step.
    #[command(after_help = EXIT_CODES)]
    Run(Box<RunArgs>),
    /// Compile a spec (TypeScript or JavaScript) to a WebAssembly module.
    #[command(after_help = EXIT_CODES)]
    Build(BuildArgs),
    /// Re-evaluate a spec over a recorded run, offline.
    #[command(after_help = EXIT_CODES)]
    Check(CheckArgs),
    /// Serve the simulated Folio device (gRPC driver + SDK client).
    #[command(after_help = EXIT_CODES)]
    Sim(SimArgs),
    /// Re-execute a recorded run's actions (not the strategy) on a fresh device, recording a new run.
    ///
    /// The device, the simulator's seed, bugs and latency, the spec and the seed come from the
    /// run's meta.json (flags override them). On the simulator the replay is the run again, step for
    /// step; on a real device it is best effort, and a step whose screen differs from the recording
    /// says so (a `screen-diverged` event in the trace).
    #[command(after_help = EXIT_CODES)]
    Replay(Box<ReplayArgs>),
    /// Shrink a run's violation to a short reproducer: `<run>-shrunk/` with its trace, repro.json and repro.yaml (a Maestro flow).
    #[command(after_help = EXIT_CODES)]
    Shrink(Box<ShrinkArgs>),
    /// Browse recorded runs in a local web page (served on 127.0.0.1 only).
    #[command(after_help = EXIT_CODES)]
    Inspect(InspectArgs),
    /// Write one self-contained HTML file showing a run (for CI artifacts).
    #[command(after_help = EXIT_CODES)]
    Report(ReportArgs),
    /// Check that a device works end to end (without --device: what a real device needs on this machine).
    #[command(after_help = EXIT_CODES)]
    Doctor(DoctorArgs),
    /// List the built-in plugins; build and scaffold WebAssembly plugins.
    #[command(subcommand)]
    Plugin(PluginCommand),
    /// Print the versions of uatu, its spec ABI and its plugin contract.
    Version,
}

/// `uatu run`: every setting of `uatu.toml` as a flag, and the file to read.
#[derive(Debug, Clone, Args)]
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

/// `uatu replay`: a run (or a script) to replay, and the run settings as flags over the recorded ones.
#[derive(Debug, Clone, Args)]
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

/// `uatu shrink`: the run, the property, the limits.
#[derive(Debug, Clone, Args)]
pub struct ShrinkArgs {
    /// A run directory (`runs/<id>`) that violated a property.
    #[arg(value_name = "RUN_DIR")]
    pub run: PathBuf,
    /// The property to reproduce [default: the first one the run violated].
    #[arg(long, value_name = "NAME")]
    pub property: Option<String>,
    /// Wall time allowed; when it runs out (or at Ctrl-C) the best reproducer so far is kept.
    #[arg(long, value_name = "DURATION", default_value = "5m")]
    pub budget: String,
    /// Replays of each candidate before it is rejected, for flaky devices [default: 1 on the simulator, 3 elsewhere].
    #[arg(long, value_name = "N")]
    pub retries: Option<u32>,
    /// Where to write the result [default: <RUN_DIR>-shrunk].
    #[arg(long = "into", value_name = "DIR")]
    pub into: Option<PathBuf>,
    #[command(flatten)]
    pub settings: Settings,
    /// Read settings from this file [default: ./uatu.toml if present]; the recorded run's settings override it, flags override both.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

#[derive(Debug, Clone, Args)]
pub struct BuildArgs {
    /// The spec to compile (`.ts` or `.js`).
    pub spec: PathBuf,
    /// Where to write the module [default: the spec's path with `.wasm`].
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Clone, Args)]
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

/// `uatu sim`: the simulator's own settings, with the simulator's defaults.
#[derive(Debug, Clone, Args)]
pub struct SimArgs {
    /// Address of the gRPC driver server.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:50061")]
    pub listen: SocketAddr,
    /// The host's SDK socket to connect the simulated app's SDK to; without it the app runs without an SDK.
    #[arg(long, value_name = "PATH")]
    pub agent_socket: Option<PathBuf>,
    /// Planted bugs to switch on: `all`, `none` or a comma-separated list.
    #[arg(long, value_name = "BUGS", default_value_t = SimConfig::default().bugs.to_string())]
    pub bugs: String,
    /// Latency per call, e.g. `0`, `1ms`, `20ms`.
    #[arg(long, value_name = "DURATION", default_value_t = format!("{:?}", SimConfig::default().latency))]
    pub latency: String,
    /// Seed of the simulator's own choices.
    #[arg(long, value_name = "N", default_value_t = SimConfig::default().seed)]
    pub seed: u64,
    /// Screenshot scale relative to the 1080x2400 screen.
    #[arg(long, value_name = "FACTOR", default_value_t = SimConfig::default().scale)]
    pub scale: f32,
    /// Write a screenshot of every Folio screen into DIR and exit.
    #[arg(long, value_name = "DIR")]
    pub render_screens: Option<PathBuf>,
}

#[derive(Debug, Clone, Args)]
pub struct InspectArgs {
    /// A directory of runs (lists them all) or one run directory (`runs/<id>`).
    #[arg(value_name = "RUNS_DIR|RUN_DIR", default_value = "runs")]
    pub path: PathBuf,
    /// Port on 127.0.0.1 to serve on; 0 picks a free one.
    #[arg(long, value_name = "N", default_value_t = 7878)]
    pub port: u16,
    /// Print the address without opening a browser.
    #[arg(long)]
    pub no_open: bool,
}

#[derive(Debug, Clone, Args)]
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

/// `uatu doctor`: the device as `uatu run` takes it, with its kind's options.
#[derive(Debug, Clone, Args)]
pub struct DoctorArgs {
    #[command(flatten)]
    pub device: DeviceOptions,
    /// The app to launch on the device [default: the run setting `bundle-id`].
    #[arg(long, value_name = "ID")]
    pub bundle_id: Option<String>,
}

#[derive(Debug, Clone, Subcommand)]
pub enum PluginCommand {
    /// List the plugins built into uatu (for `--plugin NAME`): kind, contract, configuration keys.
    List(PluginListArgs),
    /// Build a plugin crate to a WebAssembly component.
    Build(PluginBuildArgs),
    /// Scaffold a new plugin crate.
    New(PluginNewArgs),
}

#[derive(Debug, Clone, Args)]
pub struct PluginListArgs {
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Args)]
pub struct PluginBuildArgs {
    /// The plugin crate's directory.
    pub crate_dir: PathBuf,
    /// Where to write the component [default: <crate dir>/<name>.wasm].
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Clone, Args)]
pub struct PluginNewArgs {
    /// The plugin's name (also its directory).
    pub name: String,
    /// What kind of plugin to scaffold.
    #[arg(long, value_enum)]
    pub kind: Kind,
}

/// The command line's definition, with each run setting's help ending in its
/// built-in default (from the library, where the defaults are written once).
pub fn with_defaults_in_help(command: clap::Command) -> clap::Command {
    command.mut_subcommand("run", |run| {
        let ids: Vec<String> = run.get_arguments().map(|arg| arg.get_id().to_string()).collect();
        ids.into_iter().fold(run, |run, id| {
            match Settings::default_text(&id.replace('_', "-")) {
                Some(default) => run.mut_arg(id, |arg| {
                    let help = arg.get_help().map(ToString::to_string).unwrap_or_default();
                    arg.help(format!("{help} [default: {default}]"))
                }),
                None => run,
            }
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        with_defaults_in_help(Cli::command()).debug_assert();
    }

    #[test]
    fn run_help_shows_the_library_defaults() {
        let mut command = with_defaults_in_help(Cli::command());
        let help = command
            .find_subcommand_mut("run")
            .expect("run")
            .render_help()
            .to_string();
        assert!(help.contains("[default: 1000]"), "{help}");
        assert!(help.contains("[default: 2s]"), "{help}");
        assert!(help.contains("[default: all]"), "{help}");
        assert!(help.contains("--on-plugin-error"), "{help}");
    }
}
