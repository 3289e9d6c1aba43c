//! The simulated device: the Folio model app behind a real gRPC driver server
//! and a real SDK client.

use crate::cli::SimArgs;
use crate::exit::Status;

pub fn command(_args: SimArgs) -> anyhow::Result<Status> {
    crate::cli::not_yet("sim")
}
