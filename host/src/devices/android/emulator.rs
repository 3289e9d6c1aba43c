//! `--avd NAME`: an Android emulator booted for the run and shut down after it.
//!
//! Built from the emulator's documented command line (`emulator -avd NAME -port N
//! -no-window`, the serial `emulator-N`, `sys.boot_completed`, `adb emu kill`) and
//! **not run here**: the machines this was built on have no Android SDK and no KVM
//! (docs/devices.md says so).

use std::net::{Ipv4Addr, TcpListener};
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};

use tokio::process::{Child, Command};

/// How long a cold emulator may take to boot (minutes without KVM's help).
const BOOT_TIMEOUT: Duration = Duration::from_secs(300);
/// How often the boot is asked about.
const BOOT_POLL: Duration = Duration::from_secs(2);
/// How long the emulator may take to exit after `adb emu kill`.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);
/// The console ports the emulator may take: even ones, its ADB port the next odd one.
const CONSOLE_PORTS: std::ops::RangeInclusive<u16> = 5554..=5682;

/// Why the emulator could not be booted.
#[derive(Debug, thiserror::Error)]
pub enum EmulatorError {
    /// No `emulator` program was found.
    #[error(
        "no Android emulator: set ANDROID_HOME (or ANDROID_SDK_ROOT) to the Android SDK with the emulator package, or put `emulator` on the PATH"
    )]
    NotFound,
    /// Every console port is taken.
    #[error("no free emulator console port between 5554 and 5682 (are 64 emulators running?)")]
    NoPort,
    /// The emulator or `adb` could not be started.
    #[error("cannot run {program}: {source}")]
    Spawn {
        /// The program.
        program: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The emulator exited while booting.
    #[error(
        "the emulator of AVD `{avd}` exited ({status}) before it booted: does `emulator -list-avds` list it?"
    )]
    Exited {
        /// The AVD.
        avd: String,
        /// Its exit status.
        status: ExitStatus,
    },
    /// The emulator did not finish booting in time.
    #[error(
        "the emulator of AVD `{avd}` ({serial}) did not finish booting (sys.boot_completed) within {after:?}"
    )]
    NotBooted {
        /// The AVD.
        avd: String,
        /// Its serial.
        serial: String,
        /// The time waited.
        after: Duration,
    },
}

/// A booted emulator, killed when dropped.
#[derive(Debug)]
pub struct Emulator {
    child: Child,
    serial: String,
    adb: Vec<String>,
}

impl Emulator {
    /// Boots AVD `avd` headless on a free console port, registered with the ADB server
    /// at `adb_server` (`host:port`; `None`: the default one), and waits until it has booted.
    pub async fn boot(avd: &str, adb_server: Option<&str>) -> Result<Emulator, EmulatorError> {
        let program = executable().ok_or(EmulatorError::NotFound)?;
        let port = free_console_port().ok_or(EmulatorError::NoPort)?;
        let serial = format!("emulator-{port}");
        let mut command = Command::new(&program);
        command
            .args(boot_arguments(avd, port))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        if let Some((_, server_port)) = adb_server.and_then(|server| server.rsplit_once(':')) {
            command.env("ANDROID_ADB_SERVER_PORT", server_port);
        }
        let child = command.spawn().map_err(|source| EmulatorError::Spawn {
            program: program.display().to_string(),
            source,
        })?;
        let mut emulator = Emulator {
            child,
            adb: adb_arguments(adb_server, &serial),
            serial,
        };
        emulator.await_boot(avd).await?;
        Ok(emulator)
    }

    /// The emulator's serial, `emulator-PORT`.
    pub fn serial(&self) -> &str {
        &self.serial
    }

    async fn await_boot(&mut self, avd: &str) -> Result<(), EmulatorError> {
        let started = Instant::now();
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(EmulatorError::Exited {
                    avd: avd.to_owned(),
                    status,
                });
            }
            if self
                .adb(&["shell", "getprop", "sys.boot_completed"])
                .await?
                .trim()
                == "1"
            {
                return Ok(());
            }
            if started.elapsed() >= BOOT_TIMEOUT {
                return Err(EmulatorError::NotBooted {
                    avd: avd.to_owned(),
                    serial: self.serial.clone(),
                    after: BOOT_TIMEOUT,
                });
            }
            tokio::time::sleep(BOOT_POLL).await;
        }
    }

    /// `adb … -s SERIAL ARGS`'s standard output (empty when it fails: not yet attached).
    async fn adb(&self, args: &[&str]) -> Result<String, EmulatorError> {
        let output = Command::new("adb")
            .args(&self.adb)
            .args(args)
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .output()
            .await
            .map_err(|source| EmulatorError::Spawn {
                program: "adb".into(),
                source,
            })?;
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    }

    /// Asks the emulator to exit (`adb emu kill`) and waits; kills it if it does not.
    pub async fn shut_down(mut self) -> Option<ExitStatus> {
        let _ = self.adb(&["emu", "kill"]).await;
        match tokio::time::timeout(SHUTDOWN_GRACE, self.child.wait()).await {
            Ok(Ok(status)) => Some(status),
            _ => {
                let _ = self.child.kill().await;
                None
            }
        }
    }
}

/// The emulator's command line: headless, on console `port`, its data discarded at exit.
fn boot_arguments(avd: &str, port: u16) -> Vec<String> {
    [
        "-avd",
        avd,
        "-port",
        &port.to_string(),
        "-no-window",
        "-no-audio",
        "-no-boot-anim",
        "-no-snapshot-save",
    ]
    .map(str::to_owned)
    .to_vec()
}

/// `adb`'s arguments to reach `serial` through `adb_server` (`host:port`).
fn adb_arguments(adb_server: Option<&str>, serial: &str) -> Vec<String> {
    let mut args = Vec::new();
    if let Some((host, port)) = adb_server.and_then(|server| server.rsplit_once(':')) {
        args.extend(["-H".to_owned(), host.to_owned(), "-P".to_owned(), port.to_owned()]);
    }
    args.extend(["-s".to_owned(), serial.to_owned()]);
    args
}

/// `$ANDROID_HOME/emulator/emulator` (or `$ANDROID_SDK_ROOT`'s), else `emulator` on the PATH.
pub fn executable() -> Option<PathBuf> {
    let sdk_roots = ["ANDROID_HOME", "ANDROID_SDK_ROOT"]
        .into_iter()
        .filter_map(std::env::var_os)
        .map(|root| PathBuf::from(root).join("emulator"));
    let path = std::env::var_os("PATH").unwrap_or_default();
    sdk_roots
        .chain(std::env::split_paths(&path))
        .map(|dir| dir.join("emulator"))
        .find(|program| program.is_file())
}

/// The first even console port whose ADB port (the next one) is free too.
fn free_console_port() -> Option<u16> {
    let free = |port: u16| TcpListener::bind((Ipv4Addr::LOCALHOST, port)).is_ok();
    CONSOLE_PORTS
        .step_by(2)
        .find(|&port| free(port) && free(port + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_boots_headless_on_the_port_its_serial_names_through_the_chosen_server() {
        let args = boot_arguments("Pixel_8_API_34", 5556);
        assert_eq!(&args[..4], ["-avd", "Pixel_8_API_34", "-port", "5556"]);
        assert!(args.contains(&"-no-window".to_owned()));
        assert_eq!(adb_arguments(None, "emulator-5556"), ["-s", "emulator-5556"]);
        assert_eq!(
            adb_arguments(Some("127.0.0.1:15037"), "emulator-5556"),
            ["-H", "127.0.0.1", "-P", "15037", "-s", "emulator-5556"]
        );
    }

    #[test]
    fn a_console_port_taken_is_skipped() {
        let port = free_console_port().expect("a free console port");
        assert!(CONSOLE_PORTS.contains(&port) && port.is_multiple_of(2));
        let _taken = TcpListener::bind((Ipv4Addr::LOCALHOST, port)).expect("takes it");
        assert_ne!(free_console_port(), Some(port));
    }
}
