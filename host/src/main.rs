use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = uatu::cli::Cli::parse();
    let status = match uatu::cli::dispatch(cli) {
        Ok(status) => status,
        Err(error) => {
            eprintln!("error: {error:#}");
            uatu::exit::Status::of_error(&error)
        }
    };
    ExitCode::from(status as u8)
}
