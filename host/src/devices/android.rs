//! `--device android[:SERIAL]`: an Android device (or emulator) through the
//! `sidecar-maestro` JAR, which uatu starts, and the app's SDK reaching the host
//! through the sidecar's reverse forward (docs/devices.md).

use std::path::{Path, PathBuf};
use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use uatu_device::agent::{AgentListener, ListenerConfig, generate_token};
use uatu_device::sidecar::{self, SidecarCommand, SidecarError, SidecarProcess};
use uatu_device::{CallTimeouts, GrpcDriver};

use super::kind::{ConnectError, Device, DeviceHandle, DeviceKind, StopError, unknown_device};
use crate::settings::ConfigError;

/// The kind's name in `--device`.
pub const NAME: &str = "android";

/// How long the sidecar may take to remove its forward and exit.
const SIDECAR_STOP_GRACE: Duration = Duration::from_secs(5);

/// The Android device's options (flags and `uatu.toml` keys); each applies to `--device android` only.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(rename_all = "kebab-case")]
pub struct AndroidOptions {
    /// Android only: the sidecar JAR [default: sidecar-maestro.jar next to the uatu binary].
    #[cfg_attr(feature = "cli", arg(long, value_name = "JAR"))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sidecar: Option<PathBuf>,

    /// Android only: drive the sidecar's scripted fake device (`builtin` or a directory, docs/devices.md) instead of a real one.
    #[cfg_attr(feature = "cli", arg(long, value_name = "DEVICE"))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sidecar_fake_device: Option<String>,
}

impl AndroidOptions {
    /// This layer over `lower`: a value set here wins.
    pub fn over(self, lower: AndroidOptions) -> AndroidOptions {
        AndroidOptions {
            sidecar: self.sidecar.or(lower.sidecar),
            sidecar_fake_device: self.sidecar_fake_device.or(lower.sidecar_fake_device),
        }
    }

    /// Makes relative paths relative to `base`, the directory of the file they were read from.
    pub fn relative_to(&mut self, base: &Path) {
        if let Some(jar) = self.sidecar.as_mut().filter(|jar| jar.is_relative()) {
            *jar = base.join(&*jar);
        }
    }
}

/// An Android device: which one, and the sidecar that drives it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AndroidChoice {
    /// The device's serial (`android:SERIAL`); `None`: the only device attached.
    pub serial: Option<String>,
    /// The sidecar JAR; `None`: `sidecar-maestro.jar` next to the `uatu` binary.
    pub jar: Option<PathBuf>,
    /// The sidecar's scripted fake device (`builtin` or a directory) instead of a real one.
    pub fake_device: Option<String>,
}

/// `--device android` or `android:SERIAL`, with `options`.
pub fn resolve(argument: Option<&str>, options: &AndroidOptions) -> Result<AndroidChoice, ConfigError> {
    let serial = match argument {
        None => None,
        Some("") => return Err(unknown_device(&format!("{NAME}:"))),
        Some(serial) => Some(serial.to_owned()),
    };
    Ok(AndroidChoice {
        serial,
        jar: options.sidecar.clone(),
        fake_device: options.sidecar_fake_device.clone(),
    })
}

/// Why the Android device's sidecar could not be started.
#[derive(Debug, thiserror::Error)]
pub enum AndroidError {
    /// The sidecar could not be started.
    #[error(transparent)]
    Sidecar(#[from] SidecarError),
    /// No sidecar JAR was given and none is next to the `uatu` binary.
    #[error(
        "no Android sidecar: pass --sidecar <sidecar-maestro.jar> (or set `sidecar` in uatu.toml), or put {} next to the uatu binary; build it with `mvn -B -q package -DskipTests -pl sidecar-maestro -am` at the repository's root",
        sidecar::JAR_NAME
    )]
    NoSidecarJar,
    /// The sidecar JAR given does not exist.
    #[error("the Android sidecar {} does not exist; build it with `mvn -B -q package -DskipTests -pl sidecar-maestro -am` at the repository's root", .0.display())]
    SidecarJarMissing(PathBuf),
}

impl AndroidChoice {
    /// The options that choose this device's sidecar again (the serial is in `--device`).
    pub fn options(&self) -> AndroidOptions {
        AndroidOptions {
            sidecar: self.jar.clone(),
            sidecar_fake_device: self.fake_device.clone(),
        }
    }

    /// The sidecar JAR to run: the one given, or the one next to the `uatu` binary.
    fn jar(&self) -> Result<PathBuf, AndroidError> {
        match &self.jar {
            Some(jar) if jar.is_file() => Ok(jar.clone()),
            Some(jar) => Err(AndroidError::SidecarJarMissing(jar.clone())),
            None => sidecar::jar_beside_binary().ok_or(AndroidError::NoSidecarJar),
        }
    }
}

#[async_trait]
impl DeviceKind for AndroidChoice {
    fn describe(&self) -> String {
        match &self.serial {
            None => NAME.into(),
            Some(serial) => format!("{NAME}:{serial}"),
        }
    }

    /// The app reaches the host through the sidecar's reverse forward to a loopback TCP
    /// port, which any local user can reach too: that listener requires a fresh run
    /// token, which the sidecar passes to the app at launch (`proto/agent.md` §1a).
    fn listener_config(&self) -> ListenerConfig {
        ListenerConfig {
            token: Some(generate_token()),
            tcp_port: Some(0),
            ..ListenerConfig::default()
        }
    }

    async fn connect(&self, agent: &AgentListener, token: Option<String>) -> Result<Device, ConnectError> {
        let jar = self.jar().map_err(|error| ConnectError::start(self, error))?;
        let mut command = SidecarCommand::new(jar);
        command.serial = self.serial.clone();
        command.fake_device = self.fake_device.clone();
        // The app's SDK reaches the listener through the sidecar's `adb reverse` of
        // the device's abstract socket to this port, with the token the sidecar puts
        // in the launch intent (handed over in its environment, not its arguments).
        command.agent_port = agent.tcp_addr().map(|addr| addr.port());
        command.agent_token = token;
        let process = SidecarProcess::start(&command)
            .await
            .map_err(|error| ConnectError::start(self, AndroidError::from(error)))?;
        // Dropping `process` on an error below stops the sidecar.
        let driver = GrpcDriver::connect(&process.addr(), CallTimeouts::default()).await?;
        Ok(Device {
            driver: Box::new(driver),
            handle: Some(Box::new(process)),
        })
    }
}

#[async_trait]
impl DeviceHandle for SidecarProcess {
    async fn stop(self: Box<Self>) -> Result<(), StopError> {
        match (*self).stop(SIDECAR_STOP_GRACE).await {
            Some(status) if status.success() => Ok(()),
            Some(status) => Err(StopError::SidecarFailed(status)),
            None => Err(StopError::SidecarKilled(SIDECAR_STOP_GRACE)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> AndroidOptions {
        AndroidOptions {
            sidecar: Some(PathBuf::from("/opt/uatu/sidecar-maestro.jar")),
            sidecar_fake_device: Some("builtin".into()),
        }
    }

    #[test]
    fn with_and_without_a_serial_it_is_chosen_again_by_what_it_records() {
        let any = resolve(None, &options()).expect("resolves");
        assert_eq!(any.describe(), "android");
        assert_eq!(any.serial, None);
        let one = resolve(Some("emulator-5554"), &options()).expect("resolves");
        assert_eq!(one.describe(), "android:emulator-5554");
        assert_eq!(
            resolve(Some("emulator-5554"), &one.options()).expect("again"),
            one
        );
    }

    #[test]
    fn a_relative_jar_in_a_file_is_relative_to_the_file() {
        let mut options = AndroidOptions {
            sidecar: Some(PathBuf::from("sidecar.jar")),
            sidecar_fake_device: None,
        };
        options.relative_to(Path::new("/project"));
        assert_eq!(options.sidecar, Some(PathBuf::from("/project/sidecar.jar")));
    }
}
