//! The step loop: `uatu run`.

pub mod report;
pub mod strategy;
pub mod target;
pub mod verify;

use crate::cli::RunArgs;
use crate::exit::Status;

pub fn command(_args: RunArgs) -> anyhow::Result<Status> {
    crate::cli::not_yet("run")
}
