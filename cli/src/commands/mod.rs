//! One file per command. Each defines its arguments (`clap::Args`) and `execute`, which
//! turns them into the library's plain values, calls the library and hands what comes
//! back to [`crate::print`]. Nothing here decides how uatu behaves: that is the library's
//! (run policy included, e.g. how a shrink retries on which device).
//!
//! Adding a command: a file here defining `pub struct <Name>Args` (`clap::Args`) with
//! `pub fn execute(self) -> Result<ExitStatus, CliError>`, and one entry in the
//! `commands!` list below (its help line, then `file::Variant(ArgsType)`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use uatu::ExitStatus;

use crate::errors::CliError;

/// What `uatu --help` and every command's `--help` end with.
pub const EXIT_CODES: &str = "\
Exit codes:
  0  no property violated
  1  a property violated (or, with --strict, unmet)
  2  usage, configuration, spec or plugin error
  3  device or infrastructure failure";

/// Declares each command's module, the `Command` enum clap parses (each variant's doc
/// comment its help, exit codes after it), and [`Command::execute`].
macro_rules! commands {
    ($($(#[doc = $help:literal])+ $module:ident::$variant:ident($args:ident),)+) => {
        $(mod $module;)+

        /// A subcommand of `uatu`.
        #[derive(Debug, clap::Subcommand)]
        pub enum Command {
            $(
                $(#[doc = $help])+
                #[command(after_help = EXIT_CODES)]
                $variant(Box<$module::$args>),
            )+
        }

        impl Command {
            /// Runs the command and returns the exit status it earned.
            pub fn execute(self) -> Result<ExitStatus, CliError> {
                match self {
                    $(Command::$variant(args) => args.execute(),)+
                }
            }
        }
    };
}

commands! {
    /// Explore an app, checking the spec's properties at every step.
    run::Run(RunArgs),
    /// Compile a spec (TypeScript or JavaScript) to a WebAssembly module.
    build::Build(BuildArgs),
    /// Re-evaluate a spec over a recorded run, offline.
    check::Check(CheckArgs),
    /// Serve the simulated Folio device (gRPC driver + SDK client).
    sim::Sim(SimArgs),
    /// Re-execute a recorded run's actions (not the strategy) on a fresh device, recording a new run.
    ///
    /// The device, its options (the simulator's seed, bugs and latency; a web app's page), the
    /// spec and the seed come from the run's meta.json (flags override them). On the simulator
    /// the replay is the run again, step for step; on a real device it is best effort, and a step
    /// whose screen differs from the recording says so (a `screen-diverged` event in the trace).
    replay::Replay(ReplayArgs),
    /// Shrink a run's violation to a short reproducer: `<run>-shrunk/` with its trace, repro.json and repro.yaml (a Maestro flow).
    shrink::Shrink(ShrinkArgs),
    /// Browse recorded runs in a local web page (served on 127.0.0.1 only).
    inspect::Inspect(InspectArgs),
    /// Write one self-contained HTML file showing a run (for CI artifacts).
    report::Report(ReportArgs),
    /// Check that a device works end to end (without --device: what a real device needs on this machine).
    doctor::Doctor(DoctorArgs),
    /// List the built-in plugins; build and scaffold WebAssembly plugins.
    plugin::Plugin(PluginArgs),
    /// Start uatu in an app's repository: a spec that runs as it is, uatu.toml, the spec's types, a CI job.
    ///
    /// Writes uatu.toml, uatu/spec.ts, uatu/package.json, uatu/tsconfig.json, uatu/.gitignore and
    /// .github/workflows/uatu.yml: all of them or none, and none over an existing file without
    /// --force. What is not given as a flag is asked on the terminal (read from standard input).
    init::Init(InitArgs),
    /// Print the versions of uatu, its spec ABI, its plugin contract and its SDK protocol.
    version::Version(VersionArgs),
}

/// The async runtime the library's async functions run on.
fn runtime() -> Result<tokio::runtime::Runtime, CliError> {
    tokio::runtime::Runtime::new().map_err(|source| CliError::from(uatu::Error::Runtime(source)))
}

/// A flag that Ctrl-C sets: a run, replay or shrink stops at its next step, with a
/// complete trace.
fn interrupted_by_ctrl_c(runtime: &tokio::runtime::Runtime) -> Arc<AtomicBool> {
    let interrupted = Arc::new(AtomicBool::new(false));
    let flag = interrupted.clone();
    runtime.spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            flag.store(true, Ordering::SeqCst);
        }
    });
    interrupted
}
