//! Devices: the [`Driver`] trait over `proto/driver.proto`, its gRPC client,
//! the host side of the in-app SDK socket (`agent`, `proto/agent.md`), and the
//! Android sidecar as a child process (`sidecar`).

pub mod agent;
pub mod grpc;
pub mod model;
pub mod selector;
pub mod sidecar;

use std::time::Duration;

use async_trait::async_trait;

pub use grpc::{CallTimeouts, GrpcDriver};
pub use model::*;

/// The generated `uatu.driver.v1` messages, client and server.
pub mod proto {
    #![allow(missing_docs)]
    tonic::include_proto!("uatu.driver.v1");
}

/// A device failure, naming the call and the device it was made to.
#[derive(Debug, thiserror::Error)]
pub enum DeviceError {
    /// The device did not answer within the call's deadline (see [`CallTimeouts`]).
    #[error("{call} on {device} timed out after {after:?}")]
    Timeout {
        /// The driver call, as named in `driver.proto` (e.g. `Screenshot`).
        call: &'static str,
        /// The device, as [`Driver::describe`] names it.
        device: String,
        /// The deadline that passed.
        after: Duration,
    },
    /// The driver answered with an error status (e.g. the app is not installed).
    #[error("{call} on {device} failed: {message}")]
    Call {
        /// The driver call, as named in `driver.proto`.
        call: &'static str,
        /// The device, as [`Driver::describe`] names it.
        device: String,
        /// The status and message the driver returned.
        message: String,
    },
    /// No connection could be made to the driver (nothing listening, refused, bad address).
    #[error("cannot reach device {device}: {message}")]
    Unreachable {
        /// The device, as [`Driver::describe`] names it.
        device: String,
        /// The transport's error.
        message: String,
    },
    /// The driver answered, but with something the host refuses (an unknown enum
    /// value, bytes that are not a PNG, a missing field): a driver bug.
    #[error("{call} on {device} returned an invalid answer: {message}")]
    InvalidAnswer {
        /// The driver call, as named in `driver.proto`.
        call: &'static str,
        /// The device, as [`Driver::describe`] names it.
        device: String,
        /// What was wrong with the answer.
        message: String,
    },
}

/// Everything the host asks of a device. Implemented by the gRPC client (the
/// Maestro sidecar, or the simulator's server) and usable as `dyn Driver`.
#[async_trait]
pub trait Driver: Send + Sync {
    /// How errors and the trace name this device, e.g. `sidecar 127.0.0.1:7001`.
    fn describe(&self) -> String;

    /// Starts (or restarts) the app; returns the device time.
    async fn launch(
        &self,
        bundle_id: &str,
        clear_state: bool,
        launcher_activity: Option<&str>,
    ) -> Result<u64, DeviceError>;
    /// Stops the app `bundle_id`.
    async fn terminate(&self, bundle_id: &str) -> Result<(), DeviceError>;

    /// Taps the screen at `touch.point`; with `touch.element`, only if that element is
    /// still there (a device that cannot look taps and says it has no evidence).
    async fn tap(&self, touch: Touch) -> Result<InputOutcome, DeviceError>;
    /// Taps twice at one point, within the platform's double-tap timeout (a web
    /// page sees a `dblclick`); the element is checked as [`Driver::tap`] does.
    async fn double_tap(&self, touch: Touch) -> Result<InputOutcome, DeviceError>;
    /// Holds a touch at one point for `duration`, then lifts it.
    async fn long_press(&self, touch: Touch, duration: Duration) -> Result<InputOutcome, DeviceError>;
    /// Moves the content of the scrollable element at `touch` (the screen's, without
    /// an element) `distance` pixels `direction`: a wheel on the web, a swipe inside
    /// the safe area on Android.
    async fn scroll(
        &self,
        touch: Touch,
        direction: ScrollDirection,
        distance: u32,
    ) -> Result<InputOutcome, DeviceError>;
    /// Empties the focused text field.
    async fn clear_text(&self) -> Result<InputOutcome, DeviceError>;
    /// Back, forward, reload or an address ([`Navigation`]); what each means per
    /// device is in `docs/devices.md`.
    async fn navigate(&self, to: &Navigation) -> Result<InputOutcome, DeviceError>;
    /// Taps the element the device itself finds for `selector`.
    async fn tap_selector(&self, selector: &DeviceSelector) -> Result<InputOutcome, DeviceError>;
    /// Types `text` into the focused element.
    async fn input_text(&self, text: &str) -> Result<InputOutcome, DeviceError>;
    /// Swipes from `from` to `to`, taking `duration`.
    async fn swipe(&self, from: Point, to: Point, duration: Duration) -> Result<InputOutcome, DeviceError>;
    /// Presses a hardware or navigation key.
    async fn press_key(&self, key: Key) -> Result<InputOutcome, DeviceError>;
    /// Lets `duration` of device time pass.
    async fn sleep(&self, duration: Duration) -> Result<InputOutcome, DeviceError>;

    /// Captures the screen as a PNG.
    async fn screenshot(&self) -> Result<Screenshot, DeviceError>;
    /// Captures the accessibility tree of the current screen.
    async fn hierarchy(&self) -> Result<Hierarchy, DeviceError>;
    /// Log entries strictly after `since_ms` (device time) at `min_level` or above.
    async fn recent_logs(&self, since_ms: u64, min_level: LogLevel) -> Result<Vec<LogEntry>, DeviceError>;
    /// Waits up to `timeout` for the UI to settle.
    async fn wait_for_idle(&self, timeout: Duration) -> Result<IdleOutcome, DeviceError>;
    /// Asks whether the driver is ready, and its version and platform.
    async fn health(&self) -> Result<Health, DeviceError>;
    /// The app's current CPU and memory use.
    async fn metrics(&self) -> Result<Metrics, DeviceError>;

    /// The window with the input focus, seen from the app `bundle_id`; `None` from a
    /// device that cannot tell (the simulator and the web have one app and no system
    /// windows over it).
    async fn focus(&self, bundle_id: &str) -> Result<Option<Window>, DeviceError> {
        let _ = bundle_id;
        Ok(None)
    }

    /// Whether the app `bundle_id`'s process is alive, in front, not responding or
    /// gone: asked when it did not answer a pause. `None` from a device that cannot tell.
    async fn app_status(&self, bundle_id: &str) -> Result<Option<AppStatus>, DeviceError> {
        let _ = bundle_id;
        Ok(None)
    }

    /// Whether the installed app `bundle_id` is a debug build and which of its runtime
    /// permissions are granted (`uatu doctor`); `None` from a device that has no such thing.
    async fn app_info(&self, bundle_id: &str) -> Result<Option<AppInfo>, DeviceError> {
        let _ = bundle_id;
        Ok(None)
    }
}
