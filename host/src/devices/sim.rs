//! `--device sim`: the built-in simulated Folio app (`uatu-sim`), started in this
//! process behind a real gRPC driver server and a real SDK client.

use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use uatu_device::agent::AgentListener;
use uatu_device::{CallTimeouts, GrpcDriver};
use uatu_sim::{Bugs, SimConfig, SimHandle, Simulator};

use super::kind::{ConnectError, Device, DeviceHandle, DeviceKind, StopError, unknown_device};
use crate::settings::{ConfigError, parse_duration};

/// The kind's name in `--device`.
pub const NAME: &str = "sim";

/// How long the simulated app, in this process, may take to reach the SDK socket.
const APP_ATTACH_TIMEOUT: Duration = Duration::from_secs(15);

/// The simulator's options (flags and `uatu.toml` keys); each applies to `--device sim` only.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(rename_all = "kebab-case")]
pub struct SimOptions {
    /// Simulator only: planted bugs to switch on, `all`, `none` or a comma-separated list.
    #[cfg_attr(feature = "cli", arg(long, value_name = "BUGS"))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sim_bugs: Option<String>,

    /// Simulator only: latency added to every device call, e.g. `0`, `2ms`.
    #[cfg_attr(feature = "cli", arg(long, value_name = "DURATION"))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sim_latency: Option<String>,

    /// Simulator only: the simulator's own seed [default: the run's seed].
    #[cfg_attr(feature = "cli", arg(long, value_name = "N"))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sim_seed: Option<u64>,
}

impl SimOptions {
    /// This layer over `lower`: a value set here wins.
    pub fn over(self, lower: SimOptions) -> SimOptions {
        SimOptions {
            sim_bugs: self.sim_bugs.or(lower.sim_bugs),
            sim_latency: self.sim_latency.or(lower.sim_latency),
            sim_seed: self.sim_seed.or(lower.sim_seed),
        }
    }
}

/// The simulator a run starts.
#[derive(Debug, Clone, PartialEq)]
pub struct SimChoice {
    /// The planted bugs switched on.
    pub bugs: Bugs,
    /// Latency added to every device call.
    pub latency: Duration,
    /// The simulator's own seed.
    pub seed: u64,
}

/// `--device sim` with `options`; an unset option takes the simulator's default, an
/// unset seed the run's.
pub fn resolve(
    argument: Option<&str>,
    options: &SimOptions,
    run_seed: u64,
) -> Result<SimChoice, ConfigError> {
    if let Some(argument) = argument {
        return Err(unknown_device(&format!("{NAME}:{argument}")));
    }
    let defaults = SimConfig::default();
    Ok(SimChoice {
        bugs: match &options.sim_bugs {
            Some(text) => {
                Bugs::parse(text).map_err(|error| ConfigError::invalid("sim-bugs", error.to_string()))?
            }
            None => defaults.bugs,
        },
        latency: match &options.sim_latency {
            Some(text) => parse_duration("sim-latency", text)?,
            None => defaults.latency,
        },
        seed: options.sim_seed.unwrap_or(run_seed),
    })
}

impl SimChoice {
    /// The options that choose this simulator again, every one set.
    pub fn options(&self) -> SimOptions {
        SimOptions {
            sim_bugs: Some(self.bugs.to_string()),
            sim_latency: Some(humantime::format_duration(self.latency).to_string()),
            sim_seed: Some(self.seed),
        }
    }
}

#[async_trait]
impl DeviceKind for SimChoice {
    fn describe(&self) -> String {
        NAME.into()
    }

    async fn connect(&self, agent: &AgentListener, _token: Option<String>) -> Result<Device, ConnectError> {
        let config = SimConfig {
            bugs: self.bugs.clone(),
            latency: self.latency,
            seed: self.seed,
            ..SimConfig::default()
        };
        let handle = Simulator::start(
            config,
            std::net::SocketAddr::from(([127, 0, 0, 1], 0)),
            Some(agent.socket_path().to_path_buf()),
        )
        .await
        .map_err(|error| ConnectError::start(self, error))?;
        // The simulated app is already running: its connection attaches now, so the
        // run's first launch, which restarts the app, does not take it for the new one.
        agent.wait_for_app(APP_ATTACH_TIMEOUT).await?;
        let driver = GrpcDriver::connect(&handle.addr().to_string(), CallTimeouts::default()).await?;
        Ok(Device {
            driver: Box::new(driver),
            handle: Some(Box::new(handle)),
        })
    }

    fn deterministic(&self) -> bool {
        true
    }
}

#[async_trait]
impl DeviceHandle for SimHandle {
    async fn stop(self: Box<Self>) -> Result<(), StopError> {
        Ok(self.shutdown().await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recorded_options_choose_the_same_simulator_again() {
        let options = SimOptions {
            sim_bugs: Some("stale-total,float-cents".into()),
            sim_latency: Some("2ms".into()),
            sim_seed: None,
        };
        let choice = resolve(None, &options, 7).expect("resolves");
        assert_eq!(choice.seed, 7, "an unset seed is the run's");
        let recorded = choice.options();
        assert_eq!(recorded.sim_seed, Some(7));
        assert_eq!(resolve(None, &recorded, 99).expect("resolves"), choice);
    }

    #[test]
    fn bad_values_name_their_setting() {
        let bugs = SimOptions {
            sim_bugs: Some("no-such-bug".into()),
            ..SimOptions::default()
        };
        let error = resolve(None, &bugs, 1).expect_err("bad bugs").to_string();
        assert!(error.starts_with("sim-bugs"), "{error}");
        let error = resolve(Some("x"), &SimOptions::default(), 1)
            .expect_err("sim:x")
            .to_string();
        assert!(error.starts_with("device"), "{error}");
    }
}
