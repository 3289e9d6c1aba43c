//! `uatu`: the command line over the `uatu` library. It parses arguments, calls
//! the library with plain values, prints what comes back, and maps errors to exit
//! codes through the library's one mapping ([`uatu::Error::exit_status`]).

mod args;
mod commands;
mod report;
mod rerun;

use std::process::ExitCode;

use clap::{CommandFactory as _, FromArgMatches as _};
use uatu::ExitStatus;

use args::Cli;

fn main() -> ExitCode {
    let matches = args::with_defaults_in_help(Cli::command()).get_matches();
    let status = match Cli::from_arg_matches(&matches) {
        Ok(cli) => match commands::dispatch(cli) {
            Ok(status) => status,
            Err(error) => {
                eprintln!("error: {error:#}");
                exit_status_of(&error)
            }
        },
        Err(error) => error.exit(),
    };
    ExitCode::from(status as u8)
}

/// The exit code an error earns: the library's mapping for its own errors; an error
/// of the command line itself (a bad flag value) is a usage error.
fn exit_status_of(error: &anyhow::Error) -> ExitStatus {
    error
        .chain()
        .find_map(|cause| cause.downcast_ref::<uatu::Error>())
        .map_or(ExitStatus::Usage, uatu::Error::exit_status)
}
