//! `uatu doctor`: checks a device end to end.

use crate::cli::DoctorArgs;
use crate::exit::Status;

pub fn command(_args: DoctorArgs) -> anyhow::Result<Status> {
    crate::cli::not_yet("doctor")
}
