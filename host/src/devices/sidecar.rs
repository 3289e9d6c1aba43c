//! `--device sidecar:HOST:PORT`: a sidecar (or any server of `proto/driver.proto`)
//! that is already running; uatu connects to it and stops nothing.

use async_trait::async_trait;
use uatu_device::agent::AgentListener;
use uatu_device::{CallTimeouts, GrpcDriver};

use super::kind::{ConnectError, Device, DeviceKind, unknown_device};
use crate::settings::ConfigError;

/// The kind's name in `--device`.
pub const NAME: &str = "sidecar";

/// A running sidecar's address.
#[derive(Debug, Clone, PartialEq)]
pub struct SidecarChoice {
    /// `host:port` of its gRPC server.
    pub address: String,
}

/// `--device sidecar:HOST:PORT` (it has no options of its own).
pub fn resolve(argument: Option<&str>) -> Result<SidecarChoice, ConfigError> {
    match argument {
        Some(address) if !address.is_empty() => Ok(SidecarChoice {
            address: address.to_owned(),
        }),
        _ => Err(unknown_device(&format!(
            "{NAME}:{}",
            argument.unwrap_or_default()
        ))),
    }
}

#[async_trait]
impl DeviceKind for SidecarChoice {
    fn describe(&self) -> String {
        format!("{NAME}:{}", self.address)
    }

    async fn connect(&self, _agent: &AgentListener, _token: Option<String>) -> Result<Device, ConnectError> {
        let driver = GrpcDriver::connect(&self.address, CallTimeouts::default()).await?;
        Ok(Device {
            driver: Box::new(driver),
            handle: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_is_required() {
        assert_eq!(
            resolve(Some("127.0.0.1:7001")).expect("resolves").describe(),
            "sidecar:127.0.0.1:7001"
        );
        for bad in [None, Some("")] {
            let error = resolve(bad).expect_err("no address").to_string();
            assert!(error.contains("sidecar:<host:port>"), "{error}");
        }
    }
}
