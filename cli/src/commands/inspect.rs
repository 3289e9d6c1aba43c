//! `uatu inspect`: recorded runs in a local web page.

use std::path::PathBuf;

use uatu::ExitStatus;

use super::runtime;
use crate::errors::CliError;
use crate::print;

/// `uatu inspect [RUNS_DIR|RUN_DIR]`.
#[derive(Debug, Clone, clap::Args)]
pub struct InspectArgs {
    /// A directory of runs (lists them all) or one run directory (`runs/<id>`).
    #[arg(value_name = "RUNS_DIR|RUN_DIR", default_value = "runs")]
    pub path: PathBuf,
    /// Port on 127.0.0.1 to serve on; 0 picks a free one.
    #[arg(long, value_name = "N", default_value_t = 7878)]
    pub port: u16,
    /// Print the address without opening a browser.
    #[arg(long)]
    pub no_open: bool,
}

impl InspectArgs {
    /// Serves until Ctrl-C, after opening the page in the desktop's browser unless `--no-open`.
    pub fn execute(self) -> Result<ExitStatus, CliError> {
        let runs = uatu::inspect::Runs::open(&self.path)?;
        runtime()?.block_on(async {
            let server = uatu::inspect::serve(runs.clone(), self.port).await?;
            let url = match runs.single() {
                Some(id) => format!("http://{}/runs/{id}", server.address),
                None => format!("http://{}/", server.address),
            };
            print::inspect_serving(&self.path, &url);
            if !self.no_open {
                open_browser(&url);
            }
            tokio::select! {
                served = server.run() => served?,
                _ = tokio::signal::ctrl_c() => {}
            }
            Ok(ExitStatus::Ok)
        })
    }
}

/// Opens `url` in the desktop's browser, if there is one; the address is printed either way.
fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    let spawned = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if spawned.is_err() {
        print::note(&format!("could not start `{opener}`; open {url} yourself"));
    }
}
