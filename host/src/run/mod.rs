//! The step loop: `uatu run`.

use crate::cli::RunArgs;
use crate::exit::Status;

pub fn command(_args: RunArgs) -> anyhow::Result<Status> {
    crate::cli::not_yet("run")
}
