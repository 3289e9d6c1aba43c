//! `uatu doctor`: checks a device end to end, or says what a real device needs.

use uatu::ExitStatus;
use uatu::devices::{DeviceChoice, DeviceOptions};
use uatu::settings::Settings;

use super::runtime;
use crate::errors::CliError;
use crate::print;

/// `uatu doctor`: the device as `uatu run` takes it, with its kind's options.
#[derive(Debug, Clone, clap::Args)]
pub struct DoctorArgs {
    #[command(flatten)]
    pub device: DeviceOptions,
    /// The app to launch on the device [default: the run setting `bundle-id`].
    #[arg(long, value_name = "ID")]
    pub bundle_id: Option<String>,
}

impl DoctorArgs {
    /// Checks and prints each check; any failure is an infrastructure failure (3).
    pub fn execute(self) -> Result<ExitStatus, CliError> {
        if self.device.device.is_none() {
            print::real_device_requirements(&uatu::doctor::real_device_requirements());
            return Ok(ExitStatus::Infrastructure);
        }
        let defaults = Settings::defaults();
        let device = DeviceChoice::resolve(&self.device.over(defaults.device.clone()), 1)?;
        let bundle_id = self
            .bundle_id
            .or_else(|| defaults.bundle_id.clone())
            .unwrap_or_default();
        let checks = runtime()?.block_on(uatu::doctor::check_device(&device, &bundle_id));
        print::doctor_checks(&checks);
        Ok(match checks.iter().all(|check| check.passed) {
            true => ExitStatus::Ok,
            false => ExitStatus::Infrastructure,
        })
    }
}
