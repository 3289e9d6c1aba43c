//! The step loop: `uatu run`.

pub mod strategy;
pub mod target;

use crate::cli::RunArgs;
use crate::exit::Status;

pub fn command(_args: RunArgs) -> anyhow::Result<Status> {
    crate::cli::not_yet("run")
}
