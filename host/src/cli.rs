//! The command line: argument definitions and dispatch to the engine.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use anyhow::Context as _;

use crate::exit::{self, Status};

const EXIT_CODES: &str = "\
Exit codes:
  0  no property violated
  1  a property violated (or, with --strict, unmet)
  2  usage, configuration or spec error
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
    Run(RunArgs),
    /// Compile a spec (TypeScript or JavaScript) to a WebAssembly module.
    #[command(after_help = EXIT_CODES)]
    Build(BuildArgs),
    /// Re-evaluate a spec over a recorded run, offline.
    #[command(after_help = EXIT_CODES)]
    Check(CheckArgs),
    /// Serve the simulated Folio device (gRPC driver + SDK client).
    #[command(after_help = EXIT_CODES)]
    Sim(SimArgs),
    /// Serve a local web UI over a recorded run.
    #[command(after_help = EXIT_CODES)]
    Inspect(InspectArgs),
    /// Check that a device works end to end.
    #[command(after_help = EXIT_CODES)]
    Doctor(DoctorArgs),
    /// Build and scaffold WebAssembly plugins.
    #[command(subcommand)]
    Plugin(PluginCommand),
    /// Print the versions of uatu, its spec ABI and its plugin contract.
    Version,
}

/// Flags of `uatu run`. Every flag is optional here so that `uatu.toml` can
/// supply it; `config::RunConfig` merges the two and applies the defaults.
#[derive(Debug, Clone, Default, Args)]
pub struct RunArgs {
    /// The spec: a `.ts` or `.js` file (built on the fly and cached) or a `.wasm` module from `uatu build`.
    #[arg(long, value_name = "FILE")]
    pub spec: Option<PathBuf>,

    /// The device: `sim` (the built-in simulated Folio app) or `sidecar:<host:port>` (a Maestro sidecar).
    #[arg(
        long,
        value_name = "DEVICE",
        long_help = "The device to drive [default: sim]:\n  sim                 the built-in simulated Folio app\n  sidecar:<host:port> a Maestro sidecar serving proto/driver.proto"
    )]
    pub device: Option<String>,

    /// Simulator only: planted bugs to switch on, `all`, `none` or a comma-separated list [default: all].
    #[arg(long, value_name = "BUGS")]
    pub sim_bugs: Option<String>,

    /// Simulator only: latency per device call, e.g. `0`, `2ms` [default: 1ms].
    #[arg(long, value_name = "DURATION")]
    pub sim_latency: Option<String>,

    /// Simulator only: the simulator's own seed [default: the run's seed].
    #[arg(long, value_name = "N")]
    pub sim_seed: Option<u64>,

    /// The app's bundle id (Android package) [default: app.folio for the simulator].
    #[arg(long, value_name = "ID")]
    pub bundle_id: Option<String>,

    /// The seed of every random choice; 0 picks one at random (recorded in the trace) [default: 0].
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Stop after this many steps [default: 1000 unless --duration is given].
    #[arg(long, value_name = "N")]
    pub max_steps: Option<u64>,

    /// Stop after this much wall time, e.g. `30s`, `5m`, `2h`.
    #[arg(long, value_name = "DURATION")]
    pub duration: Option<String>,

    /// Where run directories are created [default: ./runs].
    #[arg(long, value_name = "DIR")]
    pub output: Option<PathBuf>,

    /// A plugin to load (`.wasm` component); repeat for several. Configured under `[plugins.<name>]` in uatu.toml.
    #[arg(long = "plugin", value_name = "FILE")]
    pub plugins: Vec<PathBuf>,

    /// Read settings from this file [default: ./uatu.toml if present]. Flags override it.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Stop at the first violated property.
    #[arg(long)]
    pub exit_on_violation: bool,

    /// Treat `unmet` (an unbounded `eventually` never satisfied) as a violation: exit code 1.
    #[arg(long)]
    pub strict: bool,

    /// Do not capture screenshots (faster; the trace has none).
    #[arg(long)]
    pub no_screenshots: bool,

    /// Print the summary as JSON on stdout.
    #[arg(long)]
    pub json: bool,

    /// Deadline for one call into the spec, e.g. `2s` [default: 2s].
    #[arg(long, value_name = "DURATION")]
    pub spec_timeout: Option<String>,

    /// Memory cap of the spec's sandbox, in MiB [default: 256].
    #[arg(long, value_name = "MIB")]
    pub spec_memory: Option<u64>,
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

#[derive(Debug, Clone, Args)]
pub struct SimArgs {
    /// Address of the gRPC driver server.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:50061")]
    pub listen: SocketAddr,
    /// The host's SDK socket to connect the simulated app's SDK to; without it the app runs without an SDK.
    #[arg(long, value_name = "PATH")]
    pub agent_socket: Option<PathBuf>,
    /// Planted bugs to switch on: `all`, `none` or a comma-separated list.
    #[arg(long, value_name = "BUGS", default_value = "all")]
    pub bugs: String,
    /// Latency per call, e.g. `0`, `1ms`, `20ms`.
    #[arg(long, value_name = "DURATION", default_value = "1ms")]
    pub latency: String,
    /// Seed of the simulator's own choices.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub seed: u64,
    /// Screenshot scale relative to the 1080x2400 screen.
    #[arg(long, value_name = "FACTOR", default_value_t = 0.5)]
    pub scale: f32,
    /// Write a screenshot of every Folio screen into DIR and exit.
    #[arg(long, value_name = "DIR")]
    pub render_screens: Option<PathBuf>,
}

#[derive(Debug, Clone, Args)]
pub struct InspectArgs {
    /// A run directory (`runs/<id>`).
    pub run: PathBuf,
    /// Address to serve the UI on.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:7878")]
    pub listen: SocketAddr,
}

#[derive(Debug, Clone, Args)]
pub struct DoctorArgs {
    /// The device to check: `sim` or `sidecar:<host:port>`; without it, what real devices need is checked.
    #[arg(long, value_name = "DEVICE")]
    pub device: Option<String>,
}

#[derive(Debug, Clone, Subcommand)]
pub enum PluginCommand {
    /// Build a plugin crate to a WebAssembly component.
    Build(PluginBuildArgs),
    /// Scaffold a new plugin crate.
    New(PluginNewArgs),
}

#[derive(Debug, Clone, Args)]
pub struct PluginBuildArgs {
    /// The plugin crate's directory.
    pub crate_dir: PathBuf,
    /// Where to write the component [default: <crate dir>/<name>.wasm].
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PluginKind {
    Strategy,
    Extractor,
    Sink,
}

#[derive(Debug, Clone, Args)]
pub struct PluginNewArgs {
    /// The plugin's name (also its directory).
    pub name: String,
    /// What kind of plugin to scaffold.
    #[arg(long, value_enum)]
    pub kind: PluginKind,
}

/// Runs one command and returns the exit status it earned.
pub fn dispatch(cli: Cli) -> anyhow::Result<Status> {
    match cli.command {
        Command::Run(args) => crate::run::command(args),
        Command::Build(args) => crate::spec::build_command(args),
        Command::Check(args) => crate::run::check::command(args),
        Command::Sim(args) => sim_command(args),
        Command::Inspect(args) => crate::inspect::command(args),
        Command::Doctor(args) => crate::doctor::command(args),
        Command::Plugin(PluginCommand::Build(args)) => crate::plugin::build_command(args),
        Command::Plugin(PluginCommand::New(args)) => crate::plugin::new_command(args),
        Command::Version => {
            println!("uatu {}", crate::VERSION);
            println!(
                "spec ABI {} (provider sha256 {})",
                crate::spec::SPEC_ABI,
                crate::spec::provider::sha256()
            );
            println!("SDK socket protocol {}", uatu_device::agent::PROTOCOL_VERSION);
            Ok(Status::Ok)
        }
    }
}

/// `uatu sim`.
fn sim_command(args: SimArgs) -> anyhow::Result<Status> {
    let bugs = uatu_sim::Bugs::parse(&args.bugs).map_err(|error| exit::usage(anyhow::anyhow!("--bugs: {error}")))?;
    let latency = crate::config::parse_duration("latency", &args.latency).map_err(exit::usage)?;
    uatu_sim::render::check_scale(args.scale).map_err(|error| exit::usage(anyhow::anyhow!("--scale: {error}")))?;
    let config = uatu_sim::SimConfig {
        bugs,
        latency,
        seed: args.seed,
        scale: args.scale,
        ..uatu_sim::SimConfig::default()
    };
    if let Some(dir) = &args.render_screens {
        let written = uatu_sim::render_screens(&config, dir).map_err(exit::infrastructure)?;
        for path in written {
            println!("{}", path.display());
        }
        return Ok(Status::Ok);
    }
    let runtime = tokio::runtime::Runtime::new()
        .context("cannot start the async runtime")
        .map_err(exit::infrastructure)?;
    runtime.block_on(async {
        let handle = uatu_sim::Simulator::start(config.clone(), args.listen, args.agent_socket.clone())
            .await
            .map_err(exit::infrastructure)?;
        println!("uatu sim: serving driver.proto on {}", handle.addr());
        println!(
            "  app {} · bugs: {} · latency {:?} · seed {} · screenshot scale {}",
            config.bundle_id, config.bugs, config.latency, config.seed, config.scale
        );
        match &args.agent_socket {
            Some(path) => println!("  SDK connects to {}", path.display()),
            None => println!("  no --agent-socket: the app runs without an SDK connection"),
        }
        println!("Press Ctrl-C to stop.");
        tokio::signal::ctrl_c()
            .await
            .context("cannot wait for Ctrl-C")
            .map_err(exit::infrastructure)?;
        handle.shutdown().await.map_err(exit::infrastructure)?;
        Ok(Status::Ok)
    })
}


/// The error of a subcommand that a later part of the work implements.
pub fn not_yet(what: &str) -> anyhow::Result<Status> {
    Err(crate::exit::usage(anyhow::anyhow!(
        "`uatu {what}` is not implemented yet"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
