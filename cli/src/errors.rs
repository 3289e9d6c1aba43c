//! The binary's errors and their one exit status: the library's own mapping
//! ([`uatu::Error::exit_status`]) for its errors, usage for a bad command line.

use std::fmt::Display;

use uatu::ExitStatus;

/// Why a command failed.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The library failed (its error says what and where).
    #[error(transparent)]
    Uatu(#[from] uatu::Error),
    /// `uatu replay` was given neither a run directory nor a script.
    #[error("give a run directory or --script repro.json")]
    NothingToReplay,
    /// A flag's value cannot be used.
    #[error("--{flag}: {message}")]
    BadFlag {
        /// The flag, without its dashes.
        flag: &'static str,
        /// What is wrong with its value.
        message: String,
    },
    /// `uatu sim`'s simulator could not start, stop cleanly or write its screens.
    #[error("the simulator")]
    Simulator(#[from] uatu_sim::SimError),
    /// An answer to a question of `uatu init` could not be read from standard input.
    #[error("cannot read the answer from standard input")]
    Input(#[source] std::io::Error),
    /// What the command had to print could not be written (e.g. a closed stdout).
    #[error("cannot write the output")]
    Output(#[source] std::io::Error),
}

impl CliError {
    /// The exit status this failure earns: the only place the binary decides one.
    pub fn exit_status(&self) -> ExitStatus {
        match self {
            CliError::Uatu(error) => error.exit_status(),
            CliError::NothingToReplay | CliError::BadFlag { .. } => ExitStatus::Usage,
            CliError::Simulator(_) | CliError::Input(_) | CliError::Output(_) => ExitStatus::Infrastructure,
        }
    }

    /// `--flag`'s value is refused, for `why`.
    pub fn bad_flag(flag: &'static str, why: impl Display) -> CliError {
        CliError::BadFlag {
            flag,
            message: why.to_string(),
        }
    }
}

/// The library's typed errors reach the binary as [`uatu::Error`]s.
macro_rules! from_library {
    ($($error:ty),+ $(,)?) => {
        $(impl From<$error> for CliError {
            fn from(error: $error) -> CliError {
                CliError::Uatu(error.into())
            }
        })+
    };
}

from_library!(
    uatu::settings::ConfigError,
    uatu::spec::LoadError,
    uatu::init::InitError,
    uatu::plugin::PluginError,
    uatu::plugin::BuildError,
    uatu::inspect::InspectError,
    uatu::run::replay::ScriptError,
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_failure_has_its_exit_status() {
        let config = uatu::settings::parse_duration("budget", "soon").expect_err("not a duration");
        assert_eq!(CliError::from(config).exit_status(), ExitStatus::Usage);
        assert_eq!(CliError::NothingToReplay.exit_status(), ExitStatus::Usage);
        let closed = std::io::Error::from(std::io::ErrorKind::BrokenPipe);
        assert_eq!(CliError::Output(closed).exit_status(), ExitStatus::Infrastructure);
        let unreadable = std::io::Error::from(std::io::ErrorKind::InvalidData);
        assert_eq!(
            CliError::Input(unreadable).exit_status(),
            ExitStatus::Infrastructure
        );
        let device = uatu::Error::DeviceNotReady { device: "sim".into() };
        assert_eq!(CliError::from(device).exit_status(), ExitStatus::Infrastructure);
    }
}
