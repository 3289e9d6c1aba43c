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

use super::kind::{Check, ConnectError, Device, DeviceHandle, DeviceKind, StopError, unknown_device};
use crate::settings::ConfigError;

mod emulator;

use emulator::{Emulator, EmulatorError};

/// The kind's name in `--device`.
pub const NAME: &str = "android";

/// How long the sidecar may take to remove its forward and exit.
const SIDECAR_STOP_GRACE: Duration = Duration::from_secs(5);

/// The host's bound on each call to the sidecar: above the sidecar's own bounds on the
/// device's commands (20 s; a dump 15 s, uiautomator's 10 s idle wait included) and
/// the JVM's first call, so that a slow device's failure arrives in the sidecar's words,
/// naming the command and the device, not as the host's timeout (the defaults, 5 s,
/// are sized for the simulator).
const SIDECAR_CALL_TIMEOUTS: CallTimeouts = CallTimeouts {
    connect: Duration::from_secs(5),
    default: Duration::from_secs(30),
    screenshot: Duration::from_secs(30),
    wait_margin: Duration::from_secs(20),
};

/// How long pushing and installing `--app-path`'s APK may take (a large APK over USB 2).
const INSTALL_TIMEOUT: Duration = Duration::from_secs(180);

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

    /// Android only: clear the app's data (`pm clear`) when the run starts; `--clear-data=false` starts it on the data it has.
    #[cfg_attr(feature = "cli", arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true"))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clear_data: Option<bool>,

    /// Android only: install (or reinstall, keeping its data) this APK on the device before the run.
    #[cfg_attr(feature = "cli", arg(long, value_name = "APK"))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub app_path: Option<PathBuf>,

    /// Android only: do not grant the app's requested runtime permissions at launch (by default they are, as Maestro does).
    #[cfg_attr(feature = "cli", arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true"))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_grant_permissions: Option<bool>,

    /// Android only: the ADB server, `host:port` [default: $ADB_SERVER_SOCKET (`tcp:host:port`), else $ANDROID_ADB_SERVER_ADDRESS / $ANDROID_ADB_SERVER_PORT, else localhost:5037]. A server on another machine forwards the app's SDK connection to that machine (docs/devices.md).
    #[cfg_attr(feature = "cli", arg(long, value_name = "HOST:PORT"))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adb_server: Option<String>,

    /// Android only: boot this Android Virtual Device (`emulator -avd NAME -no-window`, the Android SDK's emulator) for the run and shut it down after; unverified here (docs/devices.md).
    #[cfg_attr(feature = "cli", arg(long, value_name = "NAME"))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub avd: Option<String>,
}

impl AndroidOptions {
    /// This layer over `lower`: a value set here wins.
    pub fn over(self, lower: AndroidOptions) -> AndroidOptions {
        AndroidOptions {
            sidecar: self.sidecar.or(lower.sidecar),
            sidecar_fake_device: self.sidecar_fake_device.or(lower.sidecar_fake_device),
            clear_data: self.clear_data.or(lower.clear_data),
            app_path: self.app_path.or(lower.app_path),
            no_grant_permissions: self.no_grant_permissions.or(lower.no_grant_permissions),
            adb_server: self.adb_server.or(lower.adb_server),
            avd: self.avd.or(lower.avd),
        }
    }

    /// Makes relative paths relative to `base`, the directory of the file they were read from.
    pub fn relative_to(&mut self, base: &Path) {
        if let Some(jar) = self.sidecar.as_mut().filter(|jar| jar.is_relative()) {
            *jar = base.join(&*jar);
        }
        if let Some(apk) = self.app_path.as_mut().filter(|apk| apk.is_relative()) {
            *apk = base.join(&*apk);
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
    /// Whether the run's first launch clears the app's data.
    pub clear_data: bool,
    /// The APK installed before the run, if any.
    pub app_path: Option<PathBuf>,
    /// Whether the app's requested runtime permissions are granted at launch.
    pub grant_permissions: bool,
    /// The ADB server's `host:port`; `None`: where `adb` itself looks for it.
    pub adb_server: Option<String>,
    /// The Android Virtual Device booted for the run, if any.
    pub avd: Option<String>,
}

/// `--device android` or `android:SERIAL`, with `options`.
pub fn resolve(argument: Option<&str>, options: &AndroidOptions) -> Result<AndroidChoice, ConfigError> {
    let serial = match argument {
        None => None,
        Some("") => return Err(unknown_device(&format!("{NAME}:"))),
        Some(serial) => Some(serial.to_owned()),
    };
    if let Some(server) = &options.adb_server {
        check_server_address(server)?;
    }
    if let (Some(avd), Some(serial)) = (&options.avd, &serial) {
        return Err(ConfigError::invalid(
            "avd",
            format!("--avd {avd} boots an emulator of its own: drop `:{serial}` from --device"),
        ));
    }
    Ok(AndroidChoice {
        serial,
        jar: options.sidecar.clone(),
        fake_device: options.sidecar_fake_device.clone(),
        clear_data: options.clear_data.unwrap_or(true),
        app_path: options.app_path.clone(),
        grant_permissions: !options.no_grant_permissions.unwrap_or(false),
        adb_server: options.adb_server.clone(),
        avd: options.avd.clone(),
    })
}

/// `--adb-server` is `host:port` (a name or an address, and a port number).
fn check_server_address(server: &str) -> Result<(), ConfigError> {
    let port = server
        .rsplit_once(':')
        .filter(|(host, _)| !host.is_empty())
        .map(|(_, port)| port);
    match port.map(str::parse::<u16>) {
        Some(Ok(port)) if port > 0 => Ok(()),
        _ => Err(ConfigError::invalid(
            "adb-server",
            format!("`{server}` is not host:port (e.g. 127.0.0.1:5037)"),
        )),
    }
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
    /// `--avd`'s emulator could not be booted.
    #[error(transparent)]
    Emulator(#[from] EmulatorError),
    /// `--app-path`'s APK could not be installed.
    #[error("cannot install {}", .0.display())]
    Install(PathBuf, #[source] uatu_device::DeviceError),
}

impl AndroidChoice {
    /// The options that choose this device's sidecar again (the serial is in `--device`).
    pub fn options(&self) -> AndroidOptions {
        AndroidOptions {
            sidecar: self.jar.clone(),
            sidecar_fake_device: self.fake_device.clone(),
            clear_data: Some(self.clear_data),
            app_path: self.app_path.clone(),
            no_grant_permissions: Some(!self.grant_permissions),
            adb_server: self.adb_server.clone(),
            avd: self.avd.clone(),
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
        // Dropping `emulator` on an error below kills it.
        let emulator = match &self.avd {
            Some(avd) => Some(
                Emulator::boot(avd, self.adb_server.as_deref())
                    .await
                    .map_err(|error| ConnectError::start(self, AndroidError::from(error)))?,
            ),
            None => None,
        };
        let mut command = SidecarCommand::new(jar);
        command.serial = match &emulator {
            Some(emulator) => Some(emulator.serial().to_owned()),
            None => self.serial.clone(),
        };
        command.fake_device = self.fake_device.clone();
        command.adb_server = self.adb_server.clone();
        command.clear_data = self.clear_data;
        command.grant_permissions = self.grant_permissions;
        // The app's SDK reaches the listener through the sidecar's `adb reverse` of
        // the device's abstract socket to this port, with the token the sidecar puts
        // in the launch intent (handed over in its environment, not its arguments).
        command.agent_port = agent.tcp_addr().map(|addr| addr.port());
        command.agent_token = token;
        let process = SidecarProcess::start(&command)
            .await
            .map_err(|error| ConnectError::start(self, AndroidError::from(error)))?;
        // Dropping `process` on an error below stops the sidecar.
        let driver = GrpcDriver::connect(&process.addr(), SIDECAR_CALL_TIMEOUTS).await?;
        if let Some(apk) = &self.app_path {
            driver
                .install_apk(apk, INSTALL_TIMEOUT)
                .await
                .map_err(|error| ConnectError::start(self, AndroidError::Install(apk.clone(), error)))?;
        }
        Ok(Device {
            driver: Box::new(driver),
            handle: Some(Box::new(AndroidHandle {
                sidecar: process,
                emulator,
            })),
        })
    }

    /// With `--avd`, that the Android SDK's emulator is there.
    fn preflight(&self) -> Vec<Check> {
        match &self.avd {
            None => Vec::new(),
            Some(avd) => vec![Check::of(
                "emulator",
                emulator::executable()
                    .map(|program| format!("{} boots AVD {avd}", program.display()))
                    .ok_or_else(|| EmulatorError::NotFound.to_string()),
            )],
        }
    }
}

/// What an Android run stops at its end: the sidecar, then the emulator it booted.
struct AndroidHandle {
    sidecar: SidecarProcess,
    emulator: Option<Emulator>,
}

#[async_trait]
impl DeviceHandle for AndroidHandle {
    async fn stop(self: Box<Self>) -> Result<(), StopError> {
        let AndroidHandle { sidecar, emulator } = *self;
        let stopped = match sidecar.stop(SIDECAR_STOP_GRACE).await {
            Some(status) if status.success() => Ok(()),
            Some(status) => Err(StopError::SidecarFailed(status)),
            None => Err(StopError::SidecarKilled(SIDECAR_STOP_GRACE)),
        };
        // The emulator is shut down whatever the sidecar did; a kill is no failure of the run.
        if let Some(emulator) = emulator {
            emulator.shut_down().await;
        }
        stopped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> AndroidOptions {
        AndroidOptions {
            sidecar: Some(PathBuf::from("/opt/uatu/sidecar-maestro.jar")),
            sidecar_fake_device: Some("builtin".into()),
            clear_data: Some(false),
            app_path: Some(PathBuf::from("/apps/app-debug.apk")),
            no_grant_permissions: Some(true),
            adb_server: Some("adb-host:5037".into()),
            avd: Some("Pixel_8_API_34".into()),
        }
    }

    #[test]
    fn with_and_without_a_serial_it_is_chosen_again_by_what_it_records() {
        let any = resolve(None, &options()).expect("resolves");
        assert_eq!(any.describe(), "android");
        assert_eq!(any.serial, None);
        let no_avd = AndroidOptions {
            avd: None,
            ..options()
        };
        let one = resolve(Some("emulator-5554"), &no_avd).expect("resolves");
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
            app_path: Some(PathBuf::from("build/app.apk")),
            ..AndroidOptions::default()
        };
        options.relative_to(Path::new("/project"));
        assert_eq!(options.sidecar, Some(PathBuf::from("/project/sidecar.jar")));
        assert_eq!(options.app_path, Some(PathBuf::from("/project/build/app.apk")));
    }

    #[test]
    fn unset_it_clears_the_data_and_grants_permissions_and_the_sidecar_is_told_otherwise() {
        let plain = resolve(None, &AndroidOptions::default()).expect("resolves");
        assert!(plain.clear_data && plain.grant_permissions);
        assert_eq!(plain.adb_server, None);
        let chosen = resolve(None, &options()).expect("resolves");
        assert!(!chosen.clear_data && !chosen.grant_permissions);
        assert_eq!(chosen.adb_server.as_deref(), Some("adb-host:5037"));
        assert_eq!(chosen.options(), options());
    }

    #[test]
    fn an_avd_boots_its_own_emulator_so_no_serial_goes_with_it() {
        let error = resolve(Some("emulator-5554"), &options())
            .expect_err("a serial and an AVD")
            .to_string();
        assert!(
            error.starts_with("avd") && error.contains("emulator-5554"),
            "{error}"
        );
        let choice = resolve(None, &options()).expect("resolves");
        assert_eq!(choice.avd.as_deref(), Some("Pixel_8_API_34"));
        assert_eq!(choice.preflight().len(), 1);
    }

    #[test]
    fn an_adb_server_is_host_and_port() {
        for good in ["127.0.0.1:5037", "adb-host:15037", "[::1]:5037"] {
            let options = AndroidOptions {
                adb_server: Some(good.into()),
                ..AndroidOptions::default()
            };
            assert!(resolve(None, &options).is_ok(), "{good}");
        }
        for bad in ["5037", ":5037", "host:", "host:port", "host:70000", "host:0"] {
            let options = AndroidOptions {
                adb_server: Some(bad.into()),
                ..AndroidOptions::default()
            };
            let error = resolve(None, &options).expect_err(bad).to_string();
            assert!(error.contains("adb-server") && error.contains(bad), "{error}");
        }
    }
}
