//! `uatu plugin list|build|new`: the built-in plugins; building and scaffolding plugins.

use std::path::{Path, PathBuf};

use uatu::ExitStatus;
use uatu::plugin::Kind;

use crate::errors::CliError;
use crate::print;

/// `uatu plugin`: one of its subcommands.
#[derive(Debug, Clone, clap::Args)]
pub struct PluginArgs {
    #[command(subcommand)]
    pub command: PluginCommand,
}

/// What `uatu plugin` does.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum PluginCommand {
    /// List the plugins built into uatu (for `--plugin NAME`): kind, contract, configuration keys.
    List {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Build a plugin crate to a WebAssembly component.
    Build {
        /// The plugin crate's directory.
        crate_dir: PathBuf,
        /// Where to write the component [default: <crate dir>/<name>.wasm].
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Scaffold a new plugin crate.
    New {
        /// The plugin's name (also its directory).
        name: String,
        /// What kind of plugin to scaffold.
        #[arg(long, value_enum)]
        kind: Kind,
    },
}

impl PluginArgs {
    /// Runs the subcommand.
    pub fn execute(self) -> Result<ExitStatus, CliError> {
        match self.command {
            PluginCommand::List { json } => {
                let plugins = uatu::plugin::list_builtins(&uatu::plugin::LoadOptions::default())?;
                match json {
                    true => print::json(&plugins)?,
                    false => print::plugin_list(&plugins),
                }
            }
            PluginCommand::Build { crate_dir, output } => {
                let output = uatu::plugin::build_plugin(&crate_dir, output.as_deref())?;
                print::paths(&[output]);
            }
            PluginCommand::New { name, kind } => {
                let dir = uatu::plugin::scaffold(Path::new(&name), kind)?;
                print::plugin_scaffolded(&dir, kind);
            }
        }
        Ok(ExitStatus::Ok)
    }
}
