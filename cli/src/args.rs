//! The command line: `uatu` and its subcommands ([`crate::commands`], each in its own
//! file). Run settings are the library's one settings layer
//! ([`uatu::settings::Settings`]); `--help` shows their defaults from the library's
//! built-in defaults ([`with_defaults_in_help`]).

use clap::Parser;
use uatu::settings::Settings;

use crate::commands::{Command, EXIT_CODES};

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

/// The command line's definition, with the help of each setting that has a built-in
/// default ending in it (from the library, where the defaults are written once): every
/// run setting of `uatu run`, and `uatu shrink`'s `[shrink]` settings.
pub fn with_defaults_in_help(command: clap::Command) -> clap::Command {
    let with_defaults = |key_of: fn(&str) -> String| {
        move |subcommand: clap::Command| {
            let ids: Vec<String> = subcommand
                .get_arguments()
                .map(|arg| arg.get_id().to_string())
                .collect();
            ids.into_iter().fold(subcommand, |subcommand, id| {
                match Settings::default_text(&key_of(&id)) {
                    Some(default) => subcommand.mut_arg(id, |arg| {
                        let help = arg.get_help().map(ToString::to_string).unwrap_or_default();
                        arg.help(format!("{help} [default: {default}]"))
                    }),
                    None => subcommand,
                }
            })
        }
    };
    command
        .mut_subcommand("run", with_defaults(|id| id.replace('_', "-")))
        .mut_subcommand("shrink", with_defaults(|id| format!("shrink.{id}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn help_of(subcommand: &str) -> String {
        let mut command = with_defaults_in_help(Cli::command());
        command
            .find_subcommand_mut(subcommand)
            .expect("a subcommand")
            .render_help()
            .to_string()
    }

    #[test]
    fn cli_definition_is_consistent() {
        with_defaults_in_help(Cli::command()).debug_assert();
    }

    #[test]
    fn run_help_shows_the_library_defaults() {
        let help = help_of("run");
        assert!(help.contains("[default: 1000]"), "{help}");
        assert!(help.contains("[default: 2s]"), "{help}");
        assert!(help.contains("[default: all]"), "{help}");
        assert!(help.contains("--on-plugin-error"), "{help}");
        assert!(help.contains("Exit codes:"), "{help}");
    }

    #[test]
    fn shrink_help_shows_the_shrinks_defaults() {
        let help = help_of("shrink");
        assert!(help.contains("[default: 5m]"), "{help}");
        assert!(help.contains("[default: 3]"), "{help}");
    }
}
