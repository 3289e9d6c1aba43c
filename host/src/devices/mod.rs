//! The device kinds uatu can drive, and one [`connect`] for all of them.
//!
//! Adding a device kind: a variant of [`DeviceChoice`] (parsed from `--device`), one
//! arm in [`connect`] that starts it and returns its [`Driver`], and whatever it must
//! stop at the end as a [`DeviceHandle`]. The step loop, `doctor` and the trace see
//! only the [`Connected`] device. See `docs/development.md`, "Adding a device kind".

use std::path::PathBuf;
use std::time::Duration;

use async_trait::async_trait;
use uatu_device::agent::{AgentError, AgentListener, ListenerConfig, generate_token};
use uatu_device::sidecar::{self, SidecarCommand, SidecarError, SidecarProcess};
use uatu_device::{CallTimeouts, DeviceError, Driver, GrpcDriver};
use uatu_sim::{Bugs, SimConfig, SimError, SimHandle, Simulator};
use uatu_web::{BrowserSource, WebConfig, WebDevice, WebError};

use crate::settings::{ConfigError, parse_duration};

/// The device to drive, with its kind's own settings.
#[derive(Debug, Clone, PartialEq)]
pub enum DeviceChoice {
    /// The built-in simulated Folio app.
    Sim(SimChoice),
    /// A sidecar already serving `proto/driver.proto` at `host:port`.
    Sidecar(String),
    /// An Android device through the sidecar JAR, which uatu starts and stops.
    Android(AndroidChoice),
    /// A web app in headless Chromium (`uatu-web`).
    Web(WebChoice),
}

/// The web device's settings in a run.
#[derive(Debug, Clone, PartialEq)]
pub struct WebChoice {
    /// The app's start page.
    pub url: url::Url,
    /// A running browser's DevTools WebSocket; `None`: start Debian's `chromium`.
    pub cdp: Option<String>,
}

/// An Android device: which one, and the sidecar that drives it (docs/devices.md).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AndroidChoice {
    /// The device's serial (`android:SERIAL`); `None`: the only device attached.
    pub serial: Option<String>,
    /// The sidecar's settings.
    pub sidecar: SidecarOptions,
}

/// Where the Android sidecar is and what it drives (`--sidecar`, `--sidecar-fake-device`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SidecarOptions {
    /// The sidecar JAR; `None`: `sidecar-maestro.jar` next to the `uatu` binary.
    pub jar: Option<PathBuf>,
    /// The sidecar's scripted fake device (`builtin` or a directory) instead of a real one.
    pub fake_device: Option<String>,
}

/// The simulator's settings in a run.
#[derive(Debug, Clone, PartialEq)]
pub struct SimChoice {
    /// The planted bugs switched on.
    pub bugs: Bugs,
    /// Latency added to every device call.
    pub latency: Duration,
    /// The simulator's own seed; `None`: the run's seed.
    pub seed: Option<u64>,
}

impl DeviceChoice {
    /// Reads `--device` and, for the simulator, its settings (each `None` takes the
    /// simulator's default); for the web, `url` (required) and `cdp`.
    pub fn parse(
        device: &str,
        sim_bugs: Option<&str>,
        sim_latency: Option<&str>,
        sim_seed: Option<u64>,
        sidecar: SidecarOptions,
        (url, cdp): (Option<&str>, Option<&str>),
    ) -> Result<DeviceChoice, ConfigError> {
        let defaults = SimConfig::default();
        match device.split_once(':') {
            _ if device == "sim" => Ok(DeviceChoice::Sim(SimChoice {
                bugs: match sim_bugs {
                    Some(text) => Bugs::parse(text)
                        .map_err(|error| ConfigError::invalid("sim-bugs", error.to_string()))?,
                    None => defaults.bugs,
                },
                latency: match sim_latency {
                    Some(text) => parse_duration("sim-latency", text)?,
                    None => defaults.latency,
                },
                seed: sim_seed,
            })),
            Some(("sidecar", addr)) if !addr.is_empty() => Ok(DeviceChoice::Sidecar(addr.to_string())),
            _ if device == "android" => Ok(DeviceChoice::Android(AndroidChoice {
                serial: None,
                sidecar,
            })),
            Some(("android", serial)) if !serial.is_empty() => Ok(DeviceChoice::Android(AndroidChoice {
                serial: Some(serial.to_string()),
                sidecar,
            })),
            _ if device == "web" => {
                let url = url.ok_or_else(|| {
                    ConfigError::invalid(
                        "url",
                        "`--device web` needs the app's address: --url http://127.0.0.1:PORT/",
                    )
                })?;
                let url = url::Url::parse(url)
                    .ok()
                    .filter(|url| matches!(url.scheme(), "http" | "https"))
                    .ok_or_else(|| {
                        ConfigError::invalid("url", format!("`{url}` is not an http:// or https:// address"))
                    })?;
                let cdp = cdp
                    .map(|ws| match ws.starts_with("ws://") || ws.starts_with("wss://") {
                        true => Ok(ws.to_string()),
                        false => Err(ConfigError::invalid(
                            "cdp",
                            format!("`{ws}` is not a ws:// DevTools address"),
                        )),
                    })
                    .transpose()?;
                Ok(DeviceChoice::Web(WebChoice { url, cdp }))
            }
            _ => Err(ConfigError::invalid(
                "device",
                format!(
                    "`{device}` is neither `sim`, `web`, `android`, `android:<serial>` nor `sidecar:<host:port>`"
                ),
            )),
        }
    }

    /// How `--device` spells this choice, e.g. `sim` or `sidecar:127.0.0.1:7001`.
    pub fn describe(&self) -> String {
        match self {
            DeviceChoice::Sim(_) => "sim".into(),
            DeviceChoice::Sidecar(addr) => format!("sidecar:{addr}"),
            DeviceChoice::Android(AndroidChoice { serial: None, .. }) => "android".into(),
            DeviceChoice::Android(AndroidChoice {
                serial: Some(serial), ..
            }) => format!("android:{serial}"),
            DeviceChoice::Web(_) => "web".into(),
        }
    }

    /// The app's start page, for a web app.
    pub fn url(&self) -> Option<&url::Url> {
        match self {
            DeviceChoice::Web(web) => Some(&web.url),
            _ => None,
        }
    }

    /// The flags that choose this device again, for a run's re-run command.
    pub fn rerun_flags(&self, run_seed: u64) -> Vec<String> {
        let mut flags = vec!["--device".to_string(), self.describe()];
        if let DeviceChoice::Sim(sim) = self {
            flags.extend(["--sim-bugs".into(), sim.bugs.to_string()]);
            flags.extend(["--sim-seed".into(), sim.seed.unwrap_or(run_seed).to_string()]);
        }
        if let DeviceChoice::Android(android) = self {
            if let Some(jar) = &android.sidecar.jar {
                flags.extend(["--sidecar".into(), jar.display().to_string()]);
            }
            if let Some(fake) = &android.sidecar.fake_device {
                flags.extend(["--sidecar-fake-device".into(), fake.clone()]);
            }
        }
        if let DeviceChoice::Web(web) = self {
            flags.extend(["--url".into(), web.url.to_string()]);
            if let Some(cdp) = &web.cdp {
                flags.extend(["--cdp".into(), cdp.clone()]);
            }
        }
        flags
    }
}

/// Why a device could not be connected.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// The host's SDK socket could not be set up.
    #[error(transparent)]
    Agent(#[from] AgentError),
    /// The simulator could not start.
    #[error("cannot start the simulator")]
    Sim(#[from] SimError),
    /// The driver could not be reached.
    #[error(transparent)]
    Device(#[from] DeviceError),
    /// The Android sidecar could not be started.
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
    /// The browser could not be started or reached.
    #[error(transparent)]
    Web(#[from] WebError),
}

/// What a device kind must stop when the run ends (a simulator, a sidecar process, a browser).
#[async_trait]
pub trait DeviceHandle: Send {
    /// Stops it; the caller decides whether a failure matters (the run is recorded by then).
    async fn stop(self: Box<Self>) -> Result<(), StopError>;
}

/// Why a device kind did not stop cleanly.
#[derive(Debug, thiserror::Error)]
pub enum StopError {
    /// The simulator's server failed while draining its calls.
    #[error(transparent)]
    Sim(#[from] SimError),
    /// The Android sidecar exited with a failure status.
    #[error("the Android sidecar exited with {0}")]
    SidecarFailed(std::process::ExitStatus),
    /// The Android sidecar did not exit within the grace period and was killed.
    #[error("the Android sidecar did not stop within {0:?} and was killed")]
    SidecarKilled(Duration),
}

#[async_trait]
impl DeviceHandle for SimHandle {
    async fn stop(self: Box<Self>) -> Result<(), StopError> {
        Ok(self.shutdown().await?)
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

/// How long the sidecar may take to remove its forward and exit.
const SIDECAR_STOP_GRACE: Duration = Duration::from_secs(5);

/// How long the simulated app, in this process, may take to reach the SDK socket.
const SIM_APP_ATTACH_TIMEOUT: Duration = Duration::from_secs(15);

/// A connected device: its driver, the host's SDK socket its app connects to, and what to stop.
pub struct Connected {
    /// Input, capture and idle.
    pub driver: Box<dyn Driver>,
    /// The SDK socket: pause, state, resume.
    pub agent: AgentListener,
    /// What the trace records about this device's own settings (the simulator's bugs and seed).
    pub settings: Option<serde_json::Value>,
    handle: Option<Box<dyn DeviceHandle>>,
}

impl Connected {
    /// Stops whatever the device kind started. Dropping a `Connected` stops it too, less gracefully.
    pub async fn stop(mut self) -> Result<(), StopError> {
        match self.handle.take() {
            Some(handle) => handle.stop().await,
            None => Ok(()),
        }
    }
}

/// The SDK socket for `choice`. An Android app reaches the host through the sidecar's
/// reverse forward to a loopback TCP port, which any local user can reach too: that
/// listener requires a fresh run token, returned to be passed to the app at launch
/// (`proto/agent.md` §1a). The token is never recorded (not in the trace, not in meta.json).
async fn agent_listener(choice: &DeviceChoice) -> Result<(AgentListener, Option<String>), AgentError> {
    let config = match choice {
        DeviceChoice::Android(_) => ListenerConfig {
            token: Some(generate_token()),
            tcp_port: Some(0),
            ..ListenerConfig::default()
        },
        _ => ListenerConfig::default(),
    };
    let token = config.token.clone();
    Ok((AgentListener::bind(config).await?, token))
}

/// Starts (or reaches) the chosen device and the SDK socket its app connects to.
/// `run_seed` seeds a simulated device whose own seed is not set.
pub async fn connect(choice: &DeviceChoice, run_seed: u64) -> Result<Connected, ConnectError> {
    let (agent, token) = agent_listener(choice).await?;
    match choice {
        DeviceChoice::Sim(sim) => {
            let config = SimConfig {
                bugs: sim.bugs.clone(),
                latency: sim.latency,
                seed: sim.seed.unwrap_or(run_seed),
                ..SimConfig::default()
            };
            let settings = serde_json::json!({
                "bugs": config.bugs.to_string(),
                "latency_ms": config.latency.as_millis() as u64,
                "seed": config.seed,
            });
            let handle = Simulator::start(
                config,
                std::net::SocketAddr::from(([127, 0, 0, 1], 0)),
                Some(agent.socket_path().to_path_buf()),
            )
            .await?;
            // The simulated app is already running: its connection attaches now, so the
            // run's first launch, which restarts the app, does not take it for the new one.
            agent.wait_for_app(SIM_APP_ATTACH_TIMEOUT).await?;
            let driver = GrpcDriver::connect(&handle.addr().to_string(), CallTimeouts::default()).await?;
            Ok(Connected {
                driver: Box::new(driver),
                agent,
                settings: Some(settings),
                handle: Some(Box::new(handle)),
            })
        }
        DeviceChoice::Web(web) => {
            let mut config = WebConfig::new(web.url.clone());
            if let Some(websocket) = &web.cdp {
                config.browser = BrowserSource::Connect {
                    websocket: websocket.clone(),
                };
            }
            let settings = serde_json::json!({ "url": web.url.as_str(), "cdp": web.cdp });
            // The browser stops when the driver is dropped with the `Connected`.
            let device = WebDevice::start(config, Some(agent.socket_path().to_path_buf())).await?;
            Ok(Connected {
                driver: Box::new(device),
                agent,
                settings: Some(settings),
                handle: None,
            })
        }
        DeviceChoice::Sidecar(addr) => {
            let driver = GrpcDriver::connect(addr, CallTimeouts::default()).await?;
            Ok(Connected {
                driver: Box::new(driver),
                agent,
                settings: None,
                handle: None,
            })
        }
        DeviceChoice::Android(android) => {
            let jar = match &android.sidecar.jar {
                Some(jar) if jar.is_file() => jar.clone(),
                Some(jar) => return Err(ConnectError::SidecarJarMissing(jar.clone())),
                None => sidecar::jar_beside_binary().ok_or(ConnectError::NoSidecarJar)?,
            };
            let mut command = SidecarCommand::new(jar);
            command.serial = android.serial.clone();
            command.fake_device = android.sidecar.fake_device.clone();
            // The app's SDK reaches the listener through the sidecar's `adb reverse` of
            // the device's abstract socket to this port, with the token the sidecar puts
            // in the launch intent (handed over in its environment, not its arguments).
            command.agent_port = agent.tcp_addr().map(|addr| addr.port());
            command.agent_token = token;
            let process = SidecarProcess::start(&command).await?;
            let settings = serde_json::json!({
                "serial": android.serial,
                "sidecar": command.jar.display().to_string(),
                "fake_device": android.sidecar.fake_device,
            });
            // Dropping `process` on an error below stops the sidecar.
            let driver = GrpcDriver::connect(&process.addr(), CallTimeouts::default()).await?;
            Ok(Connected {
                driver: Box::new(driver),
                agent,
                settings: Some(settings),
                handle: Some(Box::new(process)),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(device: &str) -> Result<DeviceChoice, ConfigError> {
        let sidecar = SidecarOptions {
            jar: Some(PathBuf::from("/opt/uatu/sidecar-maestro.jar")),
            fake_device: None,
        };
        DeviceChoice::parse(device, None, None, None, sidecar, (None, None))
    }

    #[test]
    fn android_with_and_without_a_serial_round_trips() {
        let any = parse("android").expect("parses");
        assert_eq!(any.describe(), "android");
        let DeviceChoice::Android(choice) = &any else {
            panic!("not android: {any:?}")
        };
        assert_eq!(choice.serial, None);
        assert_eq!(
            choice.sidecar.jar,
            Some(PathBuf::from("/opt/uatu/sidecar-maestro.jar"))
        );

        let one = parse("android:emulator-5554").expect("parses");
        assert_eq!(one.describe(), "android:emulator-5554");
        assert_eq!(
            one.rerun_flags(7),
            [
                "--device",
                "android:emulator-5554",
                "--sidecar",
                "/opt/uatu/sidecar-maestro.jar"
            ]
        );
    }

    #[test]
    fn an_empty_serial_or_unknown_kind_is_refused_naming_the_kinds() {
        for bad in ["android:", "ios", "adb:emulator-5554"] {
            let error = parse(bad).expect_err(bad).to_string();
            assert!(error.contains("android:<serial>"), "{bad}: {error}");
        }
    }
}
