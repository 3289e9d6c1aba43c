//! The simulated app's SDK: connects to the host's Unix socket, says HELLO,
//! answers PAUSE with STATE and holds input until RESUME, and says GOODBYE
//! when its process dies (then reconnects from the next process).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::UnixStream;
use tokio::net::unix::OwnedWriteHalf;
use tokio::sync::{mpsc, watch};

use super::device::Device;
use uatu_device::agent::frame::{self, FrameError};
use uatu_device::agent::{Message, PROTOCOL_VERSION};

/// How long the SDK waits between attempts to reach the host's socket.
const RETRY: Duration = Duration::from_millis(50);

pub(crate) struct SdkClient {
    pub device: Arc<Device>,
    pub socket: PathBuf,
    pub app_id: String,
    pub shutdown: watch::Receiver<bool>,
}

/// How one connection ended.
enum Ended {
    /// The process it belonged to died or was replaced.
    ProcessGone,
    /// The host closed or broke the connection: try again from the same process.
    HostClosed,
    /// The host said GOODBYE: stay away until the app restarts.
    HostRefused,
    Shutdown,
}

impl SdkClient {
    pub async fn run(mut self) {
        let mut refused_generation = None;
        loop {
            let Some(generation) = self.wait_for_process(refused_generation).await else {
                return;
            };
            let Some(stream) = self.connect(generation).await else {
                if *self.shutdown.borrow() {
                    return;
                }
                continue;
            };
            match self.serve(stream, generation).await {
                Ended::Shutdown => return,
                Ended::HostRefused => refused_generation = Some(generation),
                Ended::ProcessGone => {}
                Ended::HostClosed => tokio::time::sleep(RETRY).await,
            }
        }
    }

    /// Waits for a running app process other than `not`; None on shutdown.
    async fn wait_for_process(&mut self, not: Option<u64>) -> Option<u64> {
        let mut changes = self.device.subscribe();
        loop {
            {
                let state = self.device.lock();
                let generation = state.folio.generation();
                if state.folio.is_running() && Some(generation) != not {
                    return Some(generation);
                }
            }
            tokio::select! {
                _ = changes.changed() => {}
                _ = self.shutdown.changed() => return None,
            }
        }
    }

    fn alive(&self, generation: u64) -> bool {
        let state = self.device.lock();
        state.folio.is_running() && state.folio.generation() == generation
    }

    /// Connects, retrying while the socket is not there yet; None if the process died or on shutdown.
    async fn connect(&mut self, generation: u64) -> Option<UnixStream> {
        loop {
            if *self.shutdown.borrow() || !self.alive(generation) {
                return None;
            }
            if let Ok(stream) = UnixStream::connect(&self.socket).await {
                return Some(stream);
            }
            tokio::select! {
                _ = tokio::time::sleep(RETRY) => {}
                _ = self.shutdown.changed() => return None,
            }
        }
    }

    async fn serve(&mut self, stream: UnixStream, generation: u64) -> Ended {
        // Subscribed first and the process checked after: a death between
        // `wait_for_process` and here would otherwise go unseen, and the host would
        // wait for this connection to end. A process already gone says no HELLO.
        let mut changes = self.device.subscribe();
        if !self.alive(generation) {
            return Ended::ProcessGone;
        }
        let (mut reader, mut writer) = stream.into_split();
        let hello = Message::Hello {
            protocol_version: PROTOCOL_VERSION,
            sdk_version: format!("uatu-sim {}", env!("CARGO_PKG_VERSION")),
            platform: "sim".into(),
            app_id: self.app_id.clone(),
            token: None,
            capabilities: Vec::new(),
        };
        if frame::write_frame(&mut writer, &hello).await.is_err() {
            return Ended::HostClosed;
        }
        // Frames are read on their own task: a read cut short by select! would lose bytes.
        let (frames_tx, mut frames) = mpsc::channel(8);
        let reading = tokio::spawn(async move {
            loop {
                let result = frame::read_frame(&mut reader).await;
                let stop = result.is_err();
                if frames_tx.send(result).await.is_err() || stop {
                    return;
                }
            }
        });
        let ended = loop {
            tokio::select! {
                _ = self.shutdown.changed() => {
                    goodbye(&mut writer, "simulator shutting down").await;
                    break Ended::Shutdown;
                }
                _ = changes.changed() => {
                    if let Some(reason) = self.death(generation) {
                        goodbye(&mut writer, &reason).await;
                        break Ended::ProcessGone;
                    }
                }
                frame = frames.recv() => match frame {
                    Some(Ok(Message::Pause { id, .. })) => {
                        if let Some(reason) = self.death(generation) {
                            goodbye(&mut writer, &reason).await;
                            break Ended::ProcessGone;
                        }
                        let report = {
                            let mut state = self.device.lock();
                            state.paused = Some(id);
                            state.folio.take_state()
                        };
                        self.device.changed();
                        let answer = Message::State {
                            id,
                            snapshots: report.snapshots,
                            exceptions: report.exceptions,
                            logs: report.logs,
                            coverage: Some(report.coverage),
                            hierarchy: None,
                        };
                        if frame::write_frame(&mut writer, &answer).await.is_err() {
                            break Ended::HostClosed;
                        }
                    }
                    Some(Ok(Message::Resume { .. })) => self.device.set_paused(None),
                    Some(Ok(Message::Goodbye { .. })) => break Ended::HostRefused,
                    // HELLO and STATE only ever travel from the SDK to the host.
                    Some(Ok(Message::Hello { .. } | Message::State { .. })) => {}
                    Some(Err(FrameError::Closed)) | None => break Ended::HostClosed,
                    Some(Err(error)) => {
                        goodbye(&mut writer, &format!("unreadable frame from the host: {error}")).await;
                        break Ended::HostClosed;
                    }
                },
            }
        };
        reading.abort();
        // Whatever ended the connection, nobody is left to RESUME the app.
        if self.device.lock().paused.is_some() {
            self.device.set_paused(None);
        }
        ended
    }

    fn death(&self, generation: u64) -> Option<String> {
        self.device.lock().folio.death_reason(generation)
    }
}

async fn goodbye(writer: &mut OwnedWriteHalf, reason: &str) {
    // The connection is closing either way; a failed GOODBYE changes nothing.
    let _ = frame::write_frame(
        writer,
        &Message::Goodbye {
            reason: reason.to_owned(),
        },
    )
    .await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bugs::Bugs;
    use crate::folio::Folio;

    /// The process the client connected for was restarted before its HELLO: the client
    /// ends without announcing it, instead of waiting for PAUSEs meant for an app that
    /// no longer exists (which left the host waiting for this connection to end).
    #[tokio::test]
    async fn a_process_gone_before_its_hello_is_not_announced() {
        let device = Arc::new(Device::new(Folio::new(Bugs::none(), 1)));
        let generation = device.lock().folio.generation();
        device.lock().folio.launch(false);
        device.changed();
        let (_stop, shutdown) = watch::channel(false);
        let mut client = SdkClient {
            device,
            socket: PathBuf::new(),
            app_id: "app.folio".into(),
            shutdown,
        };
        let (app_side, mut host_side) = UnixStream::pair().expect("socket pair");
        let ended = tokio::time::timeout(Duration::from_secs(5), client.serve(app_side, generation))
            .await
            .expect("the client gives the connection up");
        assert!(matches!(ended, Ended::ProcessGone));
        let first = frame::read_frame(&mut host_side).await;
        assert!(matches!(first, Err(FrameError::Closed)), "{first:?}");
    }
}
