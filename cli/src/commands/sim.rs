//! `uatu sim`: serve the simulated Folio device (or draw its screens).

use std::net::SocketAddr;
use std::path::PathBuf;

use uatu::ExitStatus;
use uatu::settings::parse_duration;
use uatu_sim::{Bugs, SimConfig, Simulator};

use super::runtime;
use crate::errors::CliError;
use crate::print;

/// `uatu sim`: the simulator's own settings, with the simulator's defaults.
#[derive(Debug, Clone, clap::Args)]
pub struct SimArgs {
    /// Address of the gRPC driver server.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:50061")]
    pub listen: SocketAddr,
    /// The host's SDK socket to connect the simulated app's SDK to; without it the app runs without an SDK.
    #[arg(long, value_name = "PATH")]
    pub agent_socket: Option<PathBuf>,
    /// Planted bugs to switch on: `all`, `none` or a comma-separated list.
    #[arg(long, value_name = "BUGS", default_value_t = SimConfig::default().bugs.to_string())]
    pub bugs: String,
    /// Latency per call, e.g. `0`, `1ms`, `20ms`.
    #[arg(long, value_name = "DURATION", default_value_t = format!("{:?}", SimConfig::default().latency))]
    pub latency: String,
    /// Seed of the simulator's own choices.
    #[arg(long, value_name = "N", default_value_t = SimConfig::default().seed)]
    pub seed: u64,
    /// Screenshot scale relative to the 1080x2400 screen.
    #[arg(long, value_name = "FACTOR", default_value_t = SimConfig::default().scale)]
    pub scale: f32,
    /// Write a screenshot of every Folio screen into DIR and exit.
    #[arg(long, value_name = "DIR")]
    pub render_screens: Option<PathBuf>,
}

impl SimArgs {
    /// Serves until Ctrl-C (or writes the screens and returns).
    pub fn execute(self) -> Result<ExitStatus, CliError> {
        let bugs = Bugs::parse(&self.bugs).map_err(|error| CliError::bad_flag("bugs", error))?;
        let latency = parse_duration("latency", &self.latency)?;
        uatu_sim::render::check_scale(self.scale).map_err(|error| CliError::bad_flag("scale", error))?;
        let config = SimConfig {
            bugs,
            latency,
            seed: self.seed,
            scale: self.scale,
            ..SimConfig::default()
        };
        if let Some(dir) = &self.render_screens {
            let written = uatu_sim::render_screens(&config, dir)?;
            print::paths(&written);
            return Ok(ExitStatus::Ok);
        }
        runtime()?.block_on(async {
            let handle = Simulator::start(config.clone(), self.listen, self.agent_socket.clone()).await?;
            print::sim_serving(handle.addr(), &config, self.agent_socket.as_deref());
            tokio::signal::ctrl_c().await.map_err(uatu::Error::Runtime)?;
            handle.shutdown().await?;
            Ok(ExitStatus::Ok)
        })
    }
}
