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
    #[error("{call} on {device} timed out after {after:?}")]
    Timeout {
        call: &'static str,
        device: String,
        after: Duration,
    },
    #[error("{call} on {device} failed: {message}")]
    Call {
        call: &'static str,
        device: String,
        message: String,
    },
    #[error("cannot reach device {device}: {message}")]
    Unreachable { device: String, message: String },
    #[error("{call} on {device} returned an invalid answer: {message}")]
    InvalidAnswer {
        call: &'static str,
        device: String,
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
    async fn terminate(&self, bundle_id: &str) -> Result<(), DeviceError>;

    async fn tap(&self, point: Point) -> Result<InputOutcome, DeviceError>;
    async fn tap_selector(&self, selector: &DeviceSelector) -> Result<InputOutcome, DeviceError>;
    async fn input_text(&self, text: &str) -> Result<InputOutcome, DeviceError>;
    async fn swipe(&self, from: Point, to: Point, duration: Duration) -> Result<InputOutcome, DeviceError>;
    async fn press_key(&self, key: Key) -> Result<InputOutcome, DeviceError>;
    /// Lets `duration` of device time pass.
    async fn sleep(&self, duration: Duration) -> Result<InputOutcome, DeviceError>;

    async fn screenshot(&self) -> Result<Screenshot, DeviceError>;
    async fn hierarchy(&self) -> Result<Hierarchy, DeviceError>;
    /// Log entries strictly after `since_ms` (device time) at `min_level` or above.
    async fn recent_logs(&self, since_ms: u64, min_level: LogLevel) -> Result<Vec<LogEntry>, DeviceError>;
    async fn wait_for_idle(&self, timeout: Duration) -> Result<IdleOutcome, DeviceError>;
    async fn health(&self) -> Result<Health, DeviceError>;
    async fn metrics(&self) -> Result<Metrics, DeviceError>;
}
