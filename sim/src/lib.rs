//! The simulated device: the Folio model app (`folio`) behind a real gRPC
//! driver server (`server`) and a real SDK client (`sdk`), in-process on tokio.
//!
//! See `docs/simulator.md` for the app, its snapshots, probes and planted bugs.

mod bugs;
mod device;
mod folio;
pub mod render;
mod screen;
mod sdk;
mod server;
mod testing;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_stream::StreamExt as _;
use tokio_stream::wrappers::TcpListenerStream;

pub use bugs::{Bug, Bugs, UnknownBug};
use folio::Folio;

use uatu_device::proto::driver_server::DriverServer;

/// How a simulator behaves.
#[derive(Debug, Clone, PartialEq)]
pub struct SimConfig {
    /// The planted bugs switched on; all of them by default, so a spec has something to find.
    pub bugs: Bugs,
    /// Added to every gRPC call, like a fast emulator; zero for benchmarks.
    pub latency: Duration,
    /// Seeds the simulator's own choices (which login is slow, which row duplicates).
    pub seed: u64,
    /// Screenshot scale relative to the 1080×2400 screen.
    pub scale: f32,
    /// The app id the simulator answers to: Launch and Terminate for any other are refused,
    /// and the SDK's HELLO carries it. Folio's own package by default.
    pub bundle_id: String,
}

impl Default for SimConfig {
    fn default() -> SimConfig {
        SimConfig {
            bugs: Bugs::all(),
            latency: Duration::from_millis(1),
            seed: 1,
            scale: 0.5,
            bundle_id: folio::PACKAGE.to_owned(),
        }
    }
}

/// Why a simulator could not start, stop cleanly or write its screens.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// The driver's TCP port could not be bound (in use, or an address not on this machine).
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address asked for in `listen`.
        addr: SocketAddr,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// The screenshot scale is out of range, or a screenshot could not be encoded.
    #[error(transparent)]
    Scale(#[from] render::RenderError),
    /// The gRPC server task ended in an error or panicked; the text is its message.
    #[error("the simulator's server failed: {0}")]
    Server(String),
    /// A rendered screen could not be written to disk.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The directory or PNG file that could not be written.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
}

/// Starts simulators: each is a Folio model served on its own port, independent of the others.
pub struct Simulator;

impl Simulator {
    /// Serves the driver on `listen` (port 0 picks one) and, with `agent_socket`,
    /// connects the app's SDK to the host's socket there (retrying until it exists).
    /// Must be called inside a tokio runtime; the simulator runs on it until shut down.
    pub async fn start(
        config: SimConfig,
        listen: SocketAddr,
        agent_socket: Option<PathBuf>,
    ) -> Result<SimHandle, SimError> {
        render::check_scale(config.scale)?;
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .map_err(|source| SimError::Bind { addr: listen, source })?;
        let addr = listener
            .local_addr()
            .map_err(|source| SimError::Bind { addr: listen, source })?;
        let device = Arc::new(device::Device::new(Folio::new(config.bugs.clone(), config.seed)));
        let (shutdown, shutdown_rx) = watch::channel(false);

        let driver = server::SimDriver {
            device: device.clone(),
            latency: config.latency,
            scale: config.scale,
            bundle_id: config.bundle_id.clone(),
        };
        let mut server_shutdown = shutdown_rx.clone();
        // Without TCP_NODELAY, multi-packet answers (hierarchies, screenshots)
        // stall ~40 ms on Nagle's algorithm meeting delayed ACKs.
        let incoming = TcpListenerStream::new(listener).map(|stream| {
            if let Ok(stream) = &stream {
                let _ = stream.set_nodelay(true);
            }
            stream
        });
        let server = tokio::spawn(async move {
            let stopped = async move {
                let _ = server_shutdown.wait_for(|stop| *stop).await;
            };
            tonic::transport::Server::builder()
                .add_service(DriverServer::new(driver))
                .serve_with_incoming_shutdown(incoming, stopped)
                .await
        });
        let sdk = agent_socket.map(|socket| {
            let client = sdk::SdkClient {
                device: device.clone(),
                socket,
                app_id: config.bundle_id.clone(),
                shutdown: shutdown_rx.clone(),
            };
            tokio::spawn(client.run())
        });
        Ok(SimHandle {
            addr,
            shutdown,
            server: Some(server),
            sdk,
            device,
        })
    }
}

/// A running simulator; dropping it stops it too.
pub struct SimHandle {
    addr: SocketAddr,
    shutdown: watch::Sender<bool>,
    server: Option<JoinHandle<Result<(), tonic::transport::Error>>>,
    sdk: Option<JoinHandle<()>>,
    device: Arc<device::Device>,
}

impl SimHandle {
    /// The address the gRPC driver listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The simulated device clock, in milliseconds.
    pub fn device_time_ms(&self) -> u64 {
        self.device.lock().folio.now()
    }

    /// Stops serving: the SDK says GOODBYE, the server drains its calls.
    pub async fn shutdown(mut self) -> Result<(), SimError> {
        let _ = self.shutdown.send(true);
        if let Some(sdk) = self.sdk.take() {
            let _ = sdk.await;
        }
        if let Some(server) = self.server.take() {
            server
                .await
                .map_err(|error| SimError::Server(error.to_string()))?
                .map_err(|error| SimError::Server(error.to_string()))?;
        }
        Ok(())
    }
}

impl Drop for SimHandle {
    fn drop(&mut self) {
        let _ = self.shutdown.send(true);
    }
}

/// Writes a PNG of every Folio screen into `dir`; returns the files written.
pub fn render_screens(config: &SimConfig, dir: &Path) -> Result<Vec<PathBuf>, SimError> {
    std::fs::create_dir_all(dir).map_err(|source| SimError::Write {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut written = Vec::new();
    for (name, folio) in testing::tour(config.bugs.clone(), config.seed) {
        let shot = render::screenshot(&screen::build(&folio), config.scale)?;
        let path = dir.join(format!("{name}.png"));
        std::fs::write(&path, &shot.png).map_err(|source| SimError::Write {
            path: path.clone(),
            source,
        })?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_screen_renders_to_a_distinct_png_at_the_configured_scale() {
        let dir = tempfile::tempdir().expect("tempdir");
        let config = SimConfig {
            scale: 0.25,
            ..SimConfig::default()
        };
        let written = render_screens(&config, dir.path()).expect("renders");
        assert_eq!(written.len(), 8);
        let mut seen = std::collections::BTreeSet::new();
        for path in &written {
            let bytes = std::fs::read(path).expect("written");
            let image = image::load_from_memory(&bytes).expect("a PNG").to_rgb8();
            assert_eq!((image.width(), image.height()), (270, 600), "{}", path.display());
            assert!(seen.insert(bytes), "{} looks like another screen", path.display());
        }
    }

    #[test]
    fn text_is_drawn_in_the_toolbar() {
        let folio = Folio::new(Bugs::none(), 1);
        let shot = render::screenshot(&screen::build(&folio), 1.0).expect("renders");
        let image = image::load_from_memory(&shot.png).expect("a PNG").to_rgb8();
        assert_eq!((image.width(), image.height()), (1080, 2400));
        // The toolbar title "Sign in" is white text on the accent colour.
        let white = (60..700)
            .flat_map(|x| (90..210).map(move |y| (x, y)))
            .filter(|&(x, y)| image.get_pixel(x, y).0 == [255, 255, 255])
            .count();
        assert!(white > 500, "only {white} white pixels in the title area");
        assert!(render::screenshot(&screen::build(&folio), 0.0).is_err());
    }
}
