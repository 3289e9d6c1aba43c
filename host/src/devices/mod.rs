//! The device kinds uatu can drive, each in its own file, and one [`connect`] for all.
//!
//! A kind's file owns everything about it: its options (one all-`Option` layer of
//! the settings, a `uatu.toml` key and a flag per field), how `--device` and those
//! options resolve to a [`DeviceChoice`], how it starts and connects, what it must
//! stop, what `uatu doctor` checks before connecting, and the options that choose it
//! again (recorded in `meta.json`). This file only gathers them: the kinds' option
//! layers in [`DeviceOptions`], their resolved forms in [`DeviceChoice`], and the
//! [`DeviceKind`] behaviour the step loop, `doctor` and the trace use through
//! [`DeviceChoice::kind`]. See `docs/development.md`, "Adding a device kind".

pub mod android;
mod kind;
pub mod sidecar;
pub mod sim;
pub mod web;

use std::path::Path;

use serde::{Deserialize, Serialize};
use uatu_device::Driver;
use uatu_device::agent::AgentListener;

pub use kind::{Check, ConnectError, Device, DeviceHandle, DeviceKind, StopError};

use crate::settings::ConfigError;

/// `--device` and every device kind's own options: one layer of the settings (a flag
/// and a `uatu.toml` key each), every field optional.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(rename_all = "kebab-case")]
pub struct DeviceOptions {
    /// The device: `sim` (the built-in simulated Folio app), `web` (a web app in headless Chromium, with --url), `android` or `android:<serial>` (an Android device through the sidecar JAR), or `sidecar:<host:port>` (a sidecar already serving proto/driver.proto).
    #[cfg_attr(feature = "cli", arg(long, value_name = "DEVICE"))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,

    /// The simulator's options.
    #[cfg_attr(feature = "cli", command(flatten))]
    #[serde(flatten)]
    pub sim: sim::SimOptions,

    /// The web device's options.
    #[cfg_attr(feature = "cli", command(flatten))]
    #[serde(flatten)]
    pub web: web::WebOptions,

    /// The Android device's options.
    #[cfg_attr(feature = "cli", command(flatten))]
    #[serde(flatten)]
    pub android: android::AndroidOptions,
}

impl DeviceOptions {
    /// This layer over `lower`: a value set here wins.
    pub fn over(self, lower: DeviceOptions) -> DeviceOptions {
        DeviceOptions {
            device: self.device.or(lower.device),
            sim: self.sim.over(lower.sim),
            web: self.web.over(lower.web),
            android: self.android.over(lower.android),
        }
    }

    /// Makes relative paths relative to `base`, the directory of the file they were read from.
    pub fn relative_to(&mut self, base: &Path) {
        self.android.relative_to(base);
    }
}

/// The device a run drives, resolved from `--device` and its kind's options.
#[derive(Debug, Clone, PartialEq)]
pub enum DeviceChoice {
    /// The built-in simulated Folio app.
    Sim(sim::SimChoice),
    /// A sidecar already serving `proto/driver.proto` at `host:port`.
    Sidecar(sidecar::SidecarChoice),
    /// An Android device through the sidecar JAR, which uatu starts and stops.
    Android(android::AndroidChoice),
    /// A web app in headless Chromium (`uatu-web`).
    Web(web::WebChoice),
}

impl DeviceChoice {
    /// Reads `options.device` (`sim`, `web`, `android[:SERIAL]`, `sidecar:ADDR`) and the
    /// chosen kind's options; `run_seed` seeds a simulated device whose own seed is not set.
    pub fn resolve(options: &DeviceOptions, run_seed: u64) -> Result<DeviceChoice, ConfigError> {
        let device = options
            .device
            .as_deref()
            .ok_or_else(|| ConfigError::invalid("device", "no device given: pass --device"))?;
        let (name, argument) = match device.split_once(':') {
            Some((name, argument)) => (name, Some(argument)),
            None => (device, None),
        };
        match name {
            sim::NAME => sim::resolve(argument, &options.sim, run_seed).map(DeviceChoice::Sim),
            web::NAME => web::resolve(argument, &options.web).map(DeviceChoice::Web),
            android::NAME => android::resolve(argument, &options.android).map(DeviceChoice::Android),
            sidecar::NAME => sidecar::resolve(argument).map(DeviceChoice::Sidecar),
            _ => Err(kind::unknown_device(device)),
        }
    }

    /// The kind's behaviour.
    pub fn kind(&self) -> &dyn DeviceKind {
        match self {
            DeviceChoice::Sim(choice) => choice,
            DeviceChoice::Sidecar(choice) => choice,
            DeviceChoice::Android(choice) => choice,
            DeviceChoice::Web(choice) => choice,
        }
    }

    /// The kind's options as resolved (its defaults and the run's seed filled in): what
    /// `meta.json` records, and what `uatu replay` and `uatu shrink` choose it again
    /// with. `device` is left out: `meta.json` says it as the device's `kind`.
    pub fn recorded_options(&self) -> DeviceOptions {
        let mut options = DeviceOptions::default();
        match self {
            DeviceChoice::Sim(choice) => options.sim = choice.options(),
            DeviceChoice::Sidecar(_) => {}
            DeviceChoice::Android(choice) => options.android = choice.options(),
            DeviceChoice::Web(choice) => options.web = choice.options(),
        }
        options
    }

    /// How `--device` spells this choice, e.g. `sim` or `sidecar:127.0.0.1:7001`.
    pub fn describe(&self) -> String {
        self.kind().describe()
    }
}

/// A connected device: its driver, the host's SDK socket its app connects to, and what to stop.
pub struct Connected {
    /// Input, capture and idle.
    pub driver: Box<dyn Driver>,
    /// The SDK socket: pause, state, resume.
    pub agent: AgentListener,
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

/// Starts (or reaches) the chosen device and the SDK socket its app connects to.
pub async fn connect(choice: &DeviceChoice) -> Result<Connected, ConnectError> {
    let kind = choice.kind();
    let config = kind.listener_config();
    // The token is never recorded (not in the trace, not in meta.json).
    let token = config.token.clone();
    let agent = AgentListener::bind(config).await?;
    let Device { driver, handle } = kind.connect(&agent, token).await?;
    Ok(Connected {
        driver,
        agent,
        handle,
    })
}
