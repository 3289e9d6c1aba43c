//! What every device kind provides ([`DeviceKind`]) and returns, whatever the kind; the
//! kinds' own files implement it, and `uatu doctor`'s line type ([`Check`]) is here so
//! that a kind can say what it checks before connecting.

use std::time::Duration;

use async_trait::async_trait;
use uatu_device::Driver;
use uatu_device::agent::{AgentError, AgentListener, ListenerConfig};

use crate::settings::ConfigError;

/// `--device` names no kind (or a kind without the part after `:` it needs).
pub(crate) fn unknown_device(device: &str) -> ConfigError {
    ConfigError::invalid(
        "device",
        format!(
            "`{device}` is neither `sim`, `web`, `android`, `android:<serial>` nor `sidecar:<host:port>`"
        ),
    )
}

/// What uatu does with a device kind, whatever the kind: implemented by each kind's
/// resolved choice in its own file.
#[async_trait]
pub trait DeviceKind: Send + Sync {
    /// How `--device` spells it, e.g. `sim` or `android:emulator-5554`.
    fn describe(&self) -> String;

    /// The SDK socket its app connects to.
    fn listener_config(&self) -> ListenerConfig {
        ListenerConfig::default()
    }

    /// Starts (or reaches) the device; its app's SDK connects to `agent`, whose run
    /// token, if it has one, is `token`.
    async fn connect(&self, agent: &AgentListener, token: Option<String>) -> Result<Device, ConnectError>;

    /// What `uatu doctor` checks before connecting (a browser installed, a tool on the PATH).
    fn preflight(&self) -> Vec<Check> {
        Vec::new()
    }

    /// Whether the same actions from the same seed always give the same run (the
    /// simulator); a shrink replays each candidate once on such a device.
    fn deterministic(&self) -> bool {
        false
    }
}

/// What a kind's [`DeviceKind::connect`] returns: its driver, and what to stop at the end.
pub struct Device {
    /// Input, capture and idle.
    pub driver: Box<dyn Driver>,
    /// What the kind must stop when the run ends, if anything.
    pub handle: Option<Box<dyn DeviceHandle>>,
}

/// Why a device could not be connected.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// The host's SDK socket could not be set up.
    #[error(transparent)]
    Agent(#[from] AgentError),
    /// The driver could not be reached.
    #[error(transparent)]
    Device(#[from] uatu_device::DeviceError),
    /// What the device kind starts (a simulator, a sidecar, a browser) could not start;
    /// the kind's own error says why (e.g. `uatu_sim::SimError`, `uatu_web::WebError`,
    /// [`super::android::AndroidError`]).
    #[error("cannot start {device}")]
    Start {
        /// The device, as `--device` spells it.
        device: String,
        /// The kind's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl ConnectError {
    /// `kind` could not start, for `source`.
    pub fn start(
        kind: &dyn DeviceKind,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> ConnectError {
        ConnectError::Start {
            device: kind.describe(),
            source: Box::new(source),
        }
    }
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
    Sim(#[from] uatu_sim::SimError),
    /// The Android sidecar exited with a failure status.
    #[error("the Android sidecar exited with {0}")]
    SidecarFailed(std::process::ExitStatus),
    /// The Android sidecar did not exit within the grace period and was killed.
    #[error("the Android sidecar did not stop within {0:?} and was killed")]
    SidecarKilled(Duration),
}

/// One line of `uatu doctor`'s report: what was checked and what was found.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Check {
    /// What was checked, e.g. `driver`, `sdk hello`.
    pub name: &'static str,
    /// Whether it works.
    pub passed: bool,
    /// What was found, or what is wrong and what to do.
    pub detail: String,
}

impl Check {
    /// A check named `name` that passed with `Ok(what was found)` or failed with `Err(what is wrong)`.
    pub fn of(name: &'static str, outcome: Result<String, String>) -> Check {
        let (passed, detail) = match outcome {
            Ok(detail) => (true, detail),
            Err(detail) => (false, detail),
        };
        Check { name, passed, detail }
    }
}
