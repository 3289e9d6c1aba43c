//! `uatu inspect`: a local web UI over a recorded run.

use crate::cli::InspectArgs;
use crate::exit::Status;

pub fn command(_args: InspectArgs) -> anyhow::Result<Status> {
    crate::cli::not_yet("inspect")
}
