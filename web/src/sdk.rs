//! The web app's SDK, in-process: a page cannot open a Unix socket, so the web
//! device speaks for it. It connects to the host's agent socket when an app
//! page opens, says HELLO, answers each PAUSE with STATE (the page's
//! `window.__uatu.snapshots()` and the uncaught exceptions since the last
//! STATE), and says GOODBYE `crash: …` when the page crashes or leaves the
//! app's origin, so the host records the crash and relaunches as for any app.
//!
//! A page cannot be held at a safe point: STATE is read by one evaluation in
//! the page (JavaScript runs to completion, so it sees a consistent moment),
//! and RESUME releases nothing, since the host sends input only after it.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::UnixStream;
use tokio::net::unix::OwnedWriteHalf;
use tokio::sync::{mpsc, watch};
use uatu_device::agent::frame::{self, FrameError};
use uatu_device::agent::{Message, PROTOCOL_VERSION};
use uatu_device::model::ExceptionInfo;

use crate::device::Shared;

/// How long the client waits between attempts to reach the host's socket.
const RETRY: Duration = Duration::from_millis(50);

/// Reads the app's snapshots, or says why it could not.
const SNAPSHOTS: &str = r#"(() => {
  const uatu = window.__uatu;
  if (!uatu || typeof uatu.snapshots !== 'function') return { absent: true };
  try {
    const values = uatu.snapshots();
    if (values === null || typeof values !== 'object' || Array.isArray(values)) {
      return { error: 'window.__uatu.snapshots() returned ' + (Array.isArray(values) ? 'an array' : String(values)) + ', not an object' };
    }
    return { values: JSON.parse(JSON.stringify(values)) };
  } catch (e) {
    return { error: String(e && e.stack || e) };
  }
})()"#;

pub(crate) struct SdkClient {
    pub shared: Arc<Shared>,
    pub socket: PathBuf,
    pub shutdown: watch::Receiver<bool>,
}

enum Ended {
    /// The page it spoke for is gone (crashed, left, closed or replaced).
    PageGone,
    /// The host closed or broke the connection: try again for the same page.
    HostClosed,
    /// The host said GOODBYE: stay away until the next page.
    HostRefused,
    Shutdown,
}

impl SdkClient {
    pub async fn run(mut self) {
        let mut refused = None;
        loop {
            let Some(generation) = self.wait_for_page(refused).await else {
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
                Ended::HostRefused => refused = Some(generation),
                Ended::PageGone => {}
                Ended::HostClosed => tokio::time::sleep(RETRY).await,
            }
        }
    }

    /// The generation of the live app page, if there is one.
    fn live_page(&self) -> Option<u64> {
        let events = self.shared.lock_events();
        (events.generation > 0 && events.dead.is_none()).then_some(events.generation)
    }

    /// Why page `generation` can no longer be spoken for, if it cannot.
    fn gone(&self, generation: u64) -> Option<String> {
        let events = self.shared.lock_events();
        if let Some(dead) = &events.dead {
            return Some(format!("crash: {dead}"));
        }
        (events.generation != generation).then(|| "the page was closed".to_owned())
    }

    /// Waits for a live page other than `not`; None on shutdown.
    async fn wait_for_page(&mut self, not: Option<u64>) -> Option<u64> {
        let mut changes = self.shared.changes.subscribe();
        loop {
            if let Some(generation) = self.live_page().filter(|g| Some(*g) != not) {
                return Some(generation);
            }
            tokio::select! {
                _ = changes.changed() => {}
                _ = self.shutdown.changed() => return None,
            }
        }
    }

    async fn connect(&mut self, generation: u64) -> Option<UnixStream> {
        loop {
            if *self.shutdown.borrow() || self.gone(generation).is_some() {
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
        let (mut reader, mut writer) = stream.into_split();
        let hello = Message::Hello {
            protocol_version: PROTOCOL_VERSION,
            sdk_version: format!("uatu-web {}", env!("CARGO_PKG_VERSION")),
            platform: "web".into(),
            app_id: self.shared.config.app_id.clone(),
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
        let mut changes = self.shared.changes.subscribe();
        let ended = loop {
            tokio::select! {
                _ = self.shutdown.changed() => {
                    goodbye(&mut writer, "the web device is shutting down").await;
                    break Ended::Shutdown;
                }
                _ = changes.changed() => {
                    if let Some(reason) = self.gone(generation) {
                        goodbye(&mut writer, &reason).await;
                        break Ended::PageGone;
                    }
                }
                frame = frames.recv() => match frame {
                    Some(Ok(Message::Pause { id, .. })) => {
                        if let Some(reason) = self.gone(generation) {
                            goodbye(&mut writer, &reason).await;
                            break Ended::PageGone;
                        }
                        let answer = self.state(id).await;
                        if frame::write_frame(&mut writer, &answer).await.is_err() {
                            break Ended::HostClosed;
                        }
                    }
                    // Nothing is held between PAUSE and RESUME (see the module docs).
                    Some(Ok(Message::Resume { .. })) => {}
                    Some(Ok(Message::Goodbye { .. })) => break Ended::HostRefused,
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
        ended
    }

    /// STATE for PAUSE `id`: the page's snapshots and its exceptions since the last STATE.
    async fn state(&self, id: u64) -> Message {
        let mut snapshots = serde_json::Map::new();
        let mut problem = None;
        match self.shared.evaluate(SNAPSHOTS).await {
            Ok(serde_json::Value::Object(mut answer)) => {
                if let Some(serde_json::Value::Object(values)) = answer.remove("values") {
                    snapshots = values;
                } else if let Some(error) = answer.remove("error") {
                    problem = Some(error.as_str().unwrap_or_default().to_owned());
                }
            }
            Ok(other) => problem = Some(format!("the snapshot read answered {other}")),
            // The page is navigating or gone: its death, if any, is reported by GOODBYE.
            Err(_) => {}
        }
        let mut exceptions = self.shared.take_exceptions();
        if let Some(message) = problem {
            exceptions.push(ExceptionInfo {
                class: "UatuSnapshotsError".into(),
                message,
                stack: String::new(),
                time: self.shared.now_ms(),
            });
        }
        Message::State {
            id,
            snapshots,
            exceptions,
            logs: Vec::new(),
            coverage: None,
            hierarchy: None,
        }
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
