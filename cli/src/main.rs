//! `uatu`: the command line over the `uatu` library. It parses arguments, runs one
//! command ([`commands`], one file each), prints what the library returns ([`print`]),
//! and exits with the status the command earned ([`errors::CliError::exit_status`]).

mod args;
mod commands;
mod errors;
mod print;
mod rerun;

use std::process::ExitCode;

use clap::{CommandFactory as _, FromArgMatches as _};

use args::Cli;

fn main() -> ExitCode {
    let matches = args::with_defaults_in_help(Cli::command()).get_matches();
    let status = match Cli::from_arg_matches(&matches) {
        Ok(cli) => match cli.command.execute() {
            Ok(status) => status,
            Err(error) => {
                print::error(&error);
                error.exit_status()
            }
        },
        Err(error) => error.exit(),
    };
    ExitCode::from(status as u8)
}
