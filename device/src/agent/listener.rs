//! The host side of the SDK socket: a Unix socket in a private directory that
//! one app at a time connects to (`proto/agent.md`).
//!
//! The listener outlives connections: when the app process dies (a crash, a
//! relaunch) its connection ends, the reason is recorded in [`AgentStatus`],
//! and the next process to connect is accepted in its place, so a run can
//! record "app disconnected" and carry on once it reconnects.
//!
//! Besides the Unix socket it can listen on a loopback TCP port (what the
//! Android sidecar's reverse forward leads to); a HELLO must then carry the
//! run token the host passed to the app at launch (`proto/agent.md` §1a).

use std::net::{Ipv4Addr, SocketAddr};
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde::Serialize;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, UnixListener};
use tokio::sync::{mpsc, watch};
use tokio::task::{AbortHandle, JoinHandle};
use tokio::time::Instant;

use super::frame::{self, FrameError};
use super::message::{CAPABILITY_HIERARCHY, MAX_FRAME_BYTES, Message, PROTOCOL_VERSION};
use crate::model::{ExceptionInfo, Hierarchy, LogEntry};

/// The socket's file name inside the listener's private directory.
pub const SOCKET_FILE_NAME: &str = "agent.sock";

/// The GOODBYE reason a second app gets while another one is attached.
pub const ANOTHER_APP_ATTACHED: &str = "another app is attached";

/// A fresh run token (32 hex digits) for [`ListenerConfig::token`], to pass to the app at launch.
pub fn generate_token() -> String {
    format!("{:032x}", rand::random::<u128>())
}

/// How an [`AgentListener`] is set up and how patient it is with apps.
#[derive(Debug, Clone)]
pub struct ListenerConfig {
    /// Where the private socket directory is created; the system temp dir if `None`.
    /// Keep it short: a Unix socket path has a limit of about 100 bytes.
    pub parent: Option<PathBuf>,
    /// How long a new connection may take to send its HELLO.
    pub hello_timeout: Duration,
    /// How long writing one frame to the app may take.
    pub write_timeout: Duration,
    /// How long a connection that arrives while another one is attached waits
    /// for that one to end before it is turned away: a restarted app often
    /// connects before the host has read the old connection's end of file.
    pub reconnect_grace: Duration,
    /// The run token a HELLO must carry; `None` accepts any HELLO on the Unix socket.
    pub token: Option<String>,
    /// Also accept connections on this TCP port of 127.0.0.1 (0 picks a free one).
    /// Requires [`token`](Self::token): a loopback port is open to every local user.
    pub tcp_port: Option<u16>,
}

impl Default for ListenerConfig {
    fn default() -> Self {
        Self {
            parent: None,
            hello_timeout: Duration::from_secs(5),
            write_timeout: Duration::from_secs(5),
            reconnect_grace: Duration::from_millis(250),
            token: None,
            tcp_port: None,
        }
    }
}

/// What the app said about itself in HELLO.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Hello {
    /// The protocol version the SDK speaks (checked equal to [`PROTOCOL_VERSION`]).
    pub protocol_version: u32,
    /// The SDK's own version, e.g. `1.0.0`.
    pub sdk_version: String,
    /// `android`, `ios` or `sim`.
    pub platform: String,
    /// The app's bundle id / package name.
    pub app_id: String,
    /// What the SDK can do beyond the base protocol (`proto/agent.md` §3).
    pub capabilities: Vec<String>,
}

impl Hello {
    /// Whether the SDK reads its own windows, so a PAUSE may ask for the hierarchy.
    pub fn has_hierarchy(&self) -> bool {
        self.capabilities.iter().any(|c| c == CAPABILITY_HIERARCHY)
    }
}

/// The app's answer to one PAUSE: its state at a safe point of its main loop.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct AgentState {
    /// The id of the PAUSE this answers.
    pub id: u64,
    /// Every value the app registered with the SDK, by name.
    pub snapshots: serde_json::Map<String, serde_json::Value>,
    /// Uncaught exceptions since the previous STATE.
    pub exceptions: Vec<ExceptionInfo>,
    /// The app's log lines since the previous STATE.
    pub logs: Vec<LogEntry>,
    /// Probe ids hit since the previous STATE; `None` when the app has no coverage.
    pub coverage: Option<Vec<String>>,
    /// The app's windows, when the PAUSE asked for them and the SDK could read them.
    pub hierarchy: Option<Hierarchy>,
}

/// Why an app connection ended (or was refused during its handshake).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DisconnectReason {
    /// The app sent GOODBYE with this reason (`crash: …` when it crashed, see [`Self::crash`]).
    #[error("the app said goodbye: {0}")]
    Goodbye(String),
    /// The app closed the socket between frames without a GOODBYE (often a process death).
    #[error("the app closed the connection")]
    Closed,
    /// The app closed the socket in the middle of a frame.
    #[error("the app closed the connection in the middle of a frame ({got} of {expected} bytes)")]
    Truncated {
        /// Bytes the frame called for.
        expected: usize,
        /// Bytes that arrived.
        got: usize,
    },
    /// The app announced a frame over [`MAX_FRAME_BYTES`].
    #[error("the app sent a frame of {size} bytes, over the {MAX_FRAME_BYTES}-byte limit")]
    Oversize {
        /// The announced payload length.
        size: usize,
    },
    /// The app sent a frame that is not JSON or not a protocol message; says what was wrong.
    #[error("the app sent a malformed frame: {0}")]
    Malformed(String),
    /// The app sent a message only the host may send (PAUSE, RESUME) or a second HELLO; names it.
    #[error("the app sent {0}, which the host does not expect from an app")]
    Unexpected(String),
    /// The app's first frame was another message than HELLO; names it.
    #[error("the app's first frame was {0}, not HELLO")]
    NoHello(String),
    /// The app sent nothing within [`ListenerConfig::hello_timeout`] of connecting.
    #[error("the app sent no HELLO within {0:?}")]
    HelloTimeout(Duration),
    /// The app's SDK speaks another protocol version: update the SDK or the host.
    #[error("protocol version mismatch: the host speaks version {host}, the app's SDK speaks version {app}")]
    VersionMismatch {
        /// The version this host speaks ([`PROTOCOL_VERSION`]).
        host: u32,
        /// The version the app's HELLO named.
        app: u32,
    },
    /// The host requires a run token and the app's HELLO carried none (an app not
    /// launched by this run, or an SDK too old to send it).
    #[error("run token missing: this host requires the token it passed to the app at launch")]
    TokenMissing,
    /// The app's HELLO carried another token than this run's (an app launched by another run).
    #[error("run token mismatch: the app's token is not this run's")]
    TokenMismatch,
    /// Reading from or writing to the socket failed; the OS error's message.
    #[error("socket error: {0}")]
    Io(String),
}

impl DisconnectReason {
    /// The crash report of a GOODBYE `crash: <class>: <message>`, if this is one.
    pub fn crash(&self) -> Option<&str> {
        match self {
            Self::Goodbye(reason) => reason.strip_prefix("crash:").map(str::trim_start),
            _ => None,
        }
    }

    fn from_frame_error(error: FrameError) -> Self {
        match error {
            FrameError::Closed => Self::Closed,
            FrameError::Truncated { expected, got } => Self::Truncated { expected, got },
            FrameError::Oversize { size } => Self::Oversize { size },
            FrameError::BadJson(_) | FrameError::BadMessage(_) => Self::Malformed(error.to_string()),
            FrameError::Io(e) => Self::Io(e.to_string()),
        }
    }

    /// Whether the host tells the app why it closes the connection: not when
    /// the app left on its own.
    fn host_says_goodbye(&self) -> bool {
        !matches!(
            self,
            Self::Goodbye(_) | Self::Closed | Self::Truncated { .. } | Self::Io(_)
        )
    }
}

/// The connection as a run loop sees it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentStatus {
    /// The number of the attached connection (1 for the first app to complete
    /// its handshake), `None` while no app is attached.
    pub connected: Option<u64>,
    /// The HELLO of the attached app, or of the last one.
    pub last_hello: Option<Hello>,
    /// Connections that completed their handshake so far.
    pub connections: u64,
    /// Why the last connection ended or was refused.
    pub last_disconnect: Option<DisconnectReason>,
    /// Connections turned away because another app was attached.
    pub rejected_clients: u64,
}

impl AgentStatus {
    /// Whether an app is attached now.
    pub fn is_connected(&self) -> bool {
        self.connected.is_some()
    }
}

/// A failure of the SDK socket, as the host's run loop sees it.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// The private directory or the socket could not be created (permissions, a
    /// path over the Unix socket length limit, a full disk).
    #[error("cannot set up the SDK socket at {path}")]
    Setup {
        /// The socket (or directory) that could not be created.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The loopback TCP port for the SDK could not be bound (in use, not permitted).
    #[error("cannot listen for the SDK on {addr}: {source}")]
    TcpSetup {
        /// The address the host tried to listen on.
        addr: SocketAddr,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A TCP listener was asked for without a run token: refused, since any local
    /// user can reach a loopback port.
    #[error(
        "listening for the SDK on a TCP port needs a run token: any local user can reach a loopback port"
    )]
    TcpWithoutToken,
    /// A PAUSE or RESUME was attempted while no app is attached.
    #[error("no app is connected to the SDK socket {path}")]
    NotConnected {
        /// The socket apps should connect to.
        path: PathBuf,
    },
    /// No app completed its handshake in time: the app did not start, was not
    /// given the socket's path, or its SDK was refused (then `last` says why).
    #[error("no app connected to the SDK socket {path}{} within {after:?}{}", tcp_too(.tcp), last_attempt(.last))]
    NoApp {
        /// The socket apps should connect to.
        path: PathBuf,
        /// The loopback TCP address apps may connect to as well, if the listener has one.
        tcp: Option<SocketAddr>,
        /// How long the host waited.
        after: Duration,
        /// Why the last connection attempt ended, if there was one.
        last: Option<DisconnectReason>,
    },
    /// The attached app did not answer a PAUSE in time (its main loop is stuck or busy).
    #[error("the app did not answer PAUSE {id} within {after:?}")]
    PauseTimeout {
        /// The unanswered PAUSE's id.
        id: u64,
        /// How long the host waited.
        after: Duration,
    },
    /// The app's connection ended while the host needed it.
    #[error("the app disconnected: {0}")]
    Disconnected(DisconnectReason),
    /// Writing a message to the app failed or timed out.
    #[error("cannot send {what} to the app: {message}")]
    Send {
        /// The message that could not be sent (`PAUSE`, `RESUME`, `GOODBYE`).
        what: String,
        /// Why.
        message: String,
    },
    /// [`AgentListener::resume`] was called without an answered PAUSE to end (a host bug).
    #[error("RESUME without a PAUSE that the app answered")]
    NotPaused,
}

fn tcp_too(tcp: &Option<SocketAddr>) -> String {
    tcp.map(|addr| format!(" or {addr}")).unwrap_or_default()
}

fn last_attempt(last: &Option<DisconnectReason>) -> String {
    last.as_ref()
        .map(|reason| format!(" (last connection: {reason})"))
        .unwrap_or_default()
}

/// Checks the first frame of a connection: a HELLO of this protocol version,
/// carrying `required_token` when the listener requires one.
pub fn check_hello(message: &Message, required_token: Option<&str>) -> Result<Hello, DisconnectReason> {
    match message {
        Message::Hello {
            protocol_version,
            sdk_version,
            platform,
            app_id,
            token,
            capabilities,
        } => {
            if *protocol_version != PROTOCOL_VERSION {
                return Err(DisconnectReason::VersionMismatch {
                    host: PROTOCOL_VERSION,
                    app: *protocol_version,
                });
            }
            if let Some(required) = required_token {
                match token {
                    None => return Err(DisconnectReason::TokenMissing),
                    Some(token) if !constant_time_eq(token.as_bytes(), required.as_bytes()) => {
                        return Err(DisconnectReason::TokenMismatch);
                    }
                    Some(_) => {}
                }
            }
            Ok(Hello {
                protocol_version: *protocol_version,
                sdk_version: sdk_version.clone(),
                platform: platform.clone(),
                app_id: app_id.clone(),
                capabilities: capabilities.clone(),
            })
        }
        other => Err(DisconnectReason::NoHello(message_name(other).to_string())),
    }
}

/// Compares without stopping at the first difference, so the time taken says
/// nothing about how much of a guessed token was right.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn message_name(message: &Message) -> &'static str {
    match message {
        Message::Hello { .. } => "HELLO",
        Message::Pause { .. } => "PAUSE",
        Message::State { .. } => "STATE",
        Message::Resume { .. } => "RESUME",
        Message::Goodbye { .. } => "GOODBYE",
    }
}

type Reader = Box<dyn AsyncRead + Send + Unpin>;
type Writer = Arc<tokio::sync::Mutex<Box<dyn AsyncWrite + Send + Unpin>>>;

#[derive(Default)]
struct Slot {
    /// The connection holding the slot, from its accept until it closes.
    busy: Option<u64>,
    next_connection: u64,
    /// The attached (handshake completed) connection's writer.
    writer: Option<(u64, Writer)>,
}

struct Shared {
    socket_path: PathBuf,
    config: ListenerConfig,
    slot: Mutex<Slot>,
    status: watch::Sender<AgentStatus>,
    states: mpsc::UnboundedSender<(u64, AgentState)>,
    tasks: Mutex<Vec<AbortHandle>>,
}

impl Shared {
    fn slot(&self) -> MutexGuard<'_, Slot> {
        // A panic elsewhere cannot leave a Slot inconsistent: every update is one assignment.
        self.slot.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn claim(&self) -> Option<u64> {
        let mut slot = self.slot();
        if slot.busy.is_some() {
            return None;
        }
        slot.next_connection += 1;
        slot.busy = Some(slot.next_connection);
        slot.busy
    }

    fn attached_writer(&self) -> Option<(u64, Writer)> {
        self.slot().writer.clone()
    }

    /// Frees the slot `connection` holds and says why it ended. Idempotent, and
    /// harmless once another connection holds the slot: the connection's task
    /// calls it when it ends, and a failed write may have called it before.
    fn detach(&self, connection: u64, reason: DisconnectReason) {
        let mut slot = self.slot();
        if slot.busy == Some(connection) {
            slot.busy = None;
        }
        if slot
            .writer
            .as_ref()
            .is_some_and(|(attached, _)| *attached == connection)
        {
            slot.writer = None;
        }
        self.status.send_modify(|s| {
            if s.connected == Some(connection) {
                s.connected = None;
            }
            s.last_disconnect = Some(reason);
        });
    }

    fn track(&self, handle: AbortHandle) {
        let mut tasks = self.tasks.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        tasks.retain(|task| !task.is_finished());
        tasks.push(handle);
    }
}

struct PauseState {
    states: mpsc::UnboundedReceiver<(u64, AgentState)>,
    /// The connection and id of the last answered PAUSE not yet resumed.
    paused: Option<(u64, u64)>,
}

/// Listens on the SDK socket; see the module documentation.
pub struct AgentListener {
    shared: Arc<Shared>,
    dir: PathBuf,
    accept: Vec<JoinHandle<()>>,
    tcp_addr: Option<SocketAddr>,
    pauses: tokio::sync::Mutex<PauseState>,
    next_id: AtomicU64,
}

impl AgentListener {
    /// Creates the private directory and the socket, and starts accepting apps.
    pub async fn bind(config: ListenerConfig) -> Result<Self, AgentError> {
        if config.tcp_port.is_some() && config.token.is_none() {
            return Err(AgentError::TcpWithoutToken);
        }
        let parent = config.parent.clone().unwrap_or_else(std::env::temp_dir);
        let dir = create_private_dir(&parent)?;
        let socket_path = dir.join(SOCKET_FILE_NAME);
        let listener = match bind_socket(&socket_path) {
            Ok(listener) => listener,
            Err(source) => {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(AgentError::Setup {
                    path: socket_path,
                    source,
                });
            }
        };
        let tcp = match config.tcp_port {
            None => None,
            Some(port) => {
                let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
                match TcpListener::bind(addr)
                    .await
                    .and_then(|l| Ok((l.local_addr()?, l)))
                {
                    Ok(bound) => Some(bound),
                    Err(source) => {
                        let _ = std::fs::remove_dir_all(&dir);
                        return Err(AgentError::TcpSetup { addr, source });
                    }
                }
            }
        };
        let (states_tx, states_rx) = mpsc::unbounded_channel();
        let shared = Arc::new(Shared {
            socket_path,
            config,
            slot: Mutex::new(Slot::default()),
            status: watch::Sender::new(AgentStatus::default()),
            states: states_tx,
            tasks: Mutex::new(Vec::new()),
        });
        let mut accept = vec![tokio::spawn(accept_unix(listener, shared.clone()))];
        let tcp_addr = tcp.map(|(addr, listener)| {
            accept.push(tokio::spawn(accept_tcp(listener, shared.clone())));
            addr
        });
        Ok(Self {
            shared,
            dir,
            accept,
            tcp_addr,
            pauses: tokio::sync::Mutex::new(PauseState {
                states: states_rx,
                paused: None,
            }),
            next_id: AtomicU64::new(0),
        })
    }

    /// The path apps connect to (given to the app, e.g. in an environment variable).
    pub fn socket_path(&self) -> &Path {
        &self.shared.socket_path
    }

    /// The loopback TCP address apps may connect to (with the run token), when listening on one.
    pub fn tcp_addr(&self) -> Option<SocketAddr> {
        self.tcp_addr
    }

    /// The private directory holding the socket, removed when the listener is dropped.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The connection's status now.
    pub fn status(&self) -> AgentStatus {
        self.shared.status.borrow().clone()
    }

    /// Follows status changes (connects, disconnects, rejections).
    pub fn subscribe(&self) -> watch::Receiver<AgentStatus> {
        self.shared.status.subscribe()
    }

    /// Waits until an app is attached (returns at once if one is) and returns its HELLO.
    pub async fn wait_for_app(&self, timeout: Duration) -> Result<Hello, AgentError> {
        self.wait_for_app_after(0, timeout).await
    }

    /// Waits until an app is attached whose handshake came after the first
    /// `handshakes` ([`AgentStatus::connections`] read before the app was
    /// restarted) and returns its HELLO. The old process's connection is not taken
    /// for the new one, even while it still looks attached because the host has
    /// not read its end yet.
    pub async fn wait_for_app_after(&self, handshakes: u64, timeout: Duration) -> Result<Hello, AgentError> {
        let mut status = self.shared.status.subscribe();
        let attached_since = |s: &AgentStatus| s.is_connected() && s.connections > handshakes;
        let waited = tokio::time::timeout(timeout, status.wait_for(attached_since)).await;
        match waited {
            Ok(Ok(status)) => status.last_hello.clone().ok_or(AgentError::NotConnected {
                path: self.shared.socket_path.clone(),
            }),
            _ => Err(AgentError::NoApp {
                path: self.shared.socket_path.clone(),
                tcp: self.tcp_addr,
                after: timeout,
                last: self.status().last_disconnect,
            }),
        }
    }

    /// Sends PAUSE and waits for the app's STATE with the same id. The app then
    /// stays paused until [`resume`](Self::resume). STATEs answering earlier
    /// PAUSEs (that timed out) are ignored.
    pub async fn pause(&self, timeout: Duration) -> Result<AgentState, AgentError> {
        self.pause_asking(timeout, false).await
    }

    /// Like [`pause`](Self::pause), and asks the app for the hierarchy of its
    /// windows when its HELLO advertised it; the STATE's `hierarchy` is `None`
    /// otherwise, or when the SDK could not read it.
    pub async fn pause_with_hierarchy(&self, timeout: Duration) -> Result<AgentState, AgentError> {
        let can = self
            .status()
            .last_hello
            .is_some_and(|hello| hello.has_hierarchy());
        self.pause_asking(timeout, can).await
    }

    async fn pause_asking(&self, timeout: Duration, hierarchy: bool) -> Result<AgentState, AgentError> {
        let mut pauses = self.pauses.lock().await;
        let mut status = self.shared.status.subscribe();
        let (connection, writer) = self.attached()?;
        let id = self.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        self.send(connection, &writer, &Message::Pause { id, hierarchy })
            .await?;
        let deadline = Instant::now() + timeout;
        loop {
            if status.borrow_and_update().connected != Some(connection) {
                // A STATE sent just before the app left still counts.
                while let Ok((from, state)) = pauses.states.try_recv() {
                    if from == connection && state.id == id {
                        pauses.paused = Some((connection, id));
                        return Ok(state);
                    }
                }
                return Err(self.disconnected());
            }
            tokio::select! {
                biased;
                Some((from, state)) = pauses.states.recv() => {
                    if from == connection && state.id == id {
                        pauses.paused = Some((connection, id));
                        return Ok(state);
                    }
                }
                changed = status.changed() => {
                    if changed.is_err() {
                        return Err(self.disconnected());
                    }
                }
                () = tokio::time::sleep_until(deadline) => {
                    return Err(AgentError::PauseTimeout { id, after: timeout });
                }
            }
        }
    }

    /// Sends RESUME for the last answered PAUSE.
    pub async fn resume(&self) -> Result<(), AgentError> {
        let mut pauses = self.pauses.lock().await;
        let (connection, id) = pauses.paused.take().ok_or(AgentError::NotPaused)?;
        match self.shared.attached_writer() {
            Some((attached, writer)) if attached == connection => {
                self.send(connection, &writer, &Message::Resume { id }).await
            }
            _ => Err(self.disconnected()),
        }
    }

    /// Says GOODBYE to the attached app and closes the host's side of its
    /// connection; the app (which treats it as the end of the connection) may
    /// connect again.
    pub async fn disconnect(&self, reason: &str) -> Result<(), AgentError> {
        let (connection, writer) = self.attached()?;
        self.send(
            connection,
            &writer,
            &Message::Goodbye {
                reason: reason.to_string(),
            },
        )
        .await?;
        let _ = writer.lock().await.shutdown().await;
        Ok(())
    }

    /// The attached connection and its writer.
    fn attached(&self) -> Result<(u64, Writer), AgentError> {
        self.shared
            .attached_writer()
            .ok_or_else(|| AgentError::NotConnected {
                path: self.shared.socket_path.clone(),
            })
    }

    fn disconnected(&self) -> AgentError {
        AgentError::Disconnected(self.status().last_disconnect.unwrap_or(DisconnectReason::Closed))
    }

    /// Writes `message` to `connection`. A connection that cannot be written to is
    /// of no more use: it is detached at once, so the app's next process can
    /// attach without waiting for this one's end to be read.
    async fn send(&self, connection: u64, writer: &Writer, message: &Message) -> Result<(), AgentError> {
        let mut writer = writer.lock().await;
        let sent = tokio::time::timeout(
            self.shared.config.write_timeout,
            frame::write_frame(&mut *writer, message),
        )
        .await;
        let failure = match sent {
            Ok(Ok(())) => return Ok(()),
            Ok(Err(e)) => e.to_string(),
            Err(_) => format!("timed out after {:?}", self.shared.config.write_timeout),
        };
        let what = message_name(message).to_string();
        // A frame cut off by the timeout leaves the stream unreadable: end it.
        let _ = writer.shutdown().await;
        self.shared.detach(
            connection,
            DisconnectReason::Io(format!("cannot send {what}: {failure}")),
        );
        Err(AgentError::Send {
            what,
            message: failure,
        })
    }
}

impl Drop for AgentListener {
    fn drop(&mut self) {
        for accept in &self.accept {
            accept.abort();
        }
        let tasks = std::mem::take(&mut *self.shared.tasks.lock().unwrap_or_else(|p| p.into_inner()));
        for task in tasks {
            task.abort();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn create_private_dir(parent: &Path) -> Result<PathBuf, AgentError> {
    let mut last_error = None;
    for _ in 0..16 {
        let dir = parent.join(format!(
            "uatu-agent-{}-{:08x}",
            std::process::id(),
            rand::random::<u32>()
        ));
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => {
                // The umask can only remove bits from 0700; set it anyway so
                // the directory is private whatever created it.
                std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).map_err(|source| {
                    AgentError::Setup {
                        path: dir.clone(),
                        source,
                    }
                })?;
                return Ok(dir);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last_error = Some(e),
            Err(source) => {
                return Err(AgentError::Setup {
                    path: parent.to_path_buf(),
                    source,
                });
            }
        }
    }
    Err(AgentError::Setup {
        path: parent.to_path_buf(),
        source: last_error.unwrap_or_else(|| std::io::Error::other("no free directory name")),
    })
}

fn bind_socket(path: &Path) -> std::io::Result<UnixListener> {
    let listener = UnixListener::bind(path)?;
    // The directory (0700) already keeps other users out; 0600 on the socket
    // keeps them out even if the directory is later opened up.
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    Ok(listener)
}

async fn accept_unix(listener: UnixListener, shared: Arc<Shared>) {
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                let (reader, writer) = stream.into_split();
                spawn_client(&shared, Box::new(reader), Box::new(writer));
            }
            // Out of file descriptors and the like: wait rather than spin.
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
}

async fn accept_tcp(listener: TcpListener, shared: Arc<Shared>) {
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                let _ = stream.set_nodelay(true);
                let (reader, writer) = stream.into_split();
                spawn_client(&shared, Box::new(reader), Box::new(writer));
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
}

fn spawn_client(shared: &Arc<Shared>, reader: Reader, writer: Box<dyn AsyncWrite + Send + Unpin>) {
    let task = tokio::spawn(handle_client(shared.clone(), reader, writer));
    shared.track(task.abort_handle());
}

async fn handle_client(shared: Arc<Shared>, reader: Reader, writer: Box<dyn AsyncWrite + Send + Unpin>) {
    let connection = match shared.claim() {
        Some(connection) => Some(connection),
        None => wait_for_free_slot(&shared).await,
    };
    let writer: Writer = Arc::new(tokio::sync::Mutex::new(writer));
    let Some(connection) = connection else {
        shared.status.send_modify(|s| s.rejected_clients += 1);
        say_goodbye(&shared, &writer, ANOTHER_APP_ATTACHED).await;
        let _ = writer.lock().await.shutdown().await;
        drain(reader).await;
        return;
    };
    let mut reader = reader;
    let reason = serve(&shared, connection, &mut reader, &writer).await;
    if reason.host_says_goodbye() {
        say_goodbye(&shared, &writer, &reason.to_string()).await;
    }
    let _ = writer.lock().await.shutdown().await;
    shared.detach(connection, reason);
    drain(reader).await;
}

async fn wait_for_free_slot(shared: &Shared) -> Option<u64> {
    let mut status = shared.status.subscribe();
    let deadline = Instant::now() + shared.config.reconnect_grace;
    loop {
        status.borrow_and_update();
        if let Some(connection) = shared.claim() {
            return Some(connection);
        }
        tokio::select! {
            changed = status.changed() => if changed.is_err() { return None },
            () = tokio::time::sleep_until(deadline) => return shared.claim(),
        }
    }
}

/// Runs one connection from its HELLO to its end; returns why it ended.
async fn serve(shared: &Shared, connection: u64, reader: &mut Reader, writer: &Writer) -> DisconnectReason {
    let first = match tokio::time::timeout(shared.config.hello_timeout, frame::read_frame(reader)).await {
        Err(_) => return DisconnectReason::HelloTimeout(shared.config.hello_timeout),
        Ok(Err(error)) => return DisconnectReason::from_frame_error(error),
        Ok(Ok(message)) => message,
    };
    let hello = match check_hello(&first, shared.config.token.as_deref()) {
        Ok(hello) => hello,
        Err(reason) => return reason,
    };
    {
        // Under the slot lock, so whoever sees the writer also sees the status saying attached.
        let mut slot = shared.slot();
        slot.writer = Some((connection, writer.clone()));
        shared.status.send_modify(|s| {
            s.connected = Some(connection);
            s.last_hello = Some(hello);
            s.connections += 1;
        });
    }
    loop {
        match frame::read_frame(reader).await {
            Ok(Message::State {
                id,
                snapshots,
                exceptions,
                logs,
                coverage,
                hierarchy,
            }) => {
                let state = AgentState {
                    id,
                    snapshots,
                    exceptions,
                    logs,
                    coverage,
                    hierarchy: hierarchy.map(|wire| Hierarchy::from(*wire)),
                };
                // Only fails once the listener is gone.
                let _ = shared.states.send((connection, state));
            }
            Ok(Message::Goodbye { reason }) => return DisconnectReason::Goodbye(reason),
            Ok(other) => return DisconnectReason::Unexpected(message_name(&other).to_string()),
            Err(error) => return DisconnectReason::from_frame_error(error),
        }
    }
}

async fn say_goodbye(shared: &Shared, writer: &Writer, reason: &str) {
    let message = Message::Goodbye {
        reason: reason.to_string(),
    };
    let mut writer = writer.lock().await;
    // Best effort: the app may already be gone.
    let _ = tokio::time::timeout(
        shared.config.write_timeout,
        frame::write_frame(&mut *writer, &message),
    )
    .await;
}

/// Discards what the app still sends for a moment after our side is shut
/// down: closing a Unix socket with unread data resets it, and the app could
/// lose the GOODBYE it has not read yet.
async fn drain(mut reader: Reader) {
    let drain = async {
        let mut buffer = [0u8; 8192];
        let mut discarded = 0;
        while discarded < 64 * 1024 {
            match reader.read(&mut buffer).await {
                Ok(0) | Err(_) => break,
                Ok(n) => discarded += n,
            }
        }
    };
    let _ = tokio::time::timeout(Duration::from_millis(200), drain).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hello(version: u32) -> Message {
        hello_with_token(version, None)
    }

    fn hello_with_token(version: u32, token: Option<&str>) -> Message {
        Message::Hello {
            protocol_version: version,
            sdk_version: "1.0.0".into(),
            platform: "sim".into(),
            app_id: "app.folio".into(),
            token: token.map(str::to_string),
            capabilities: vec![CAPABILITY_HIERARCHY.into()],
        }
    }

    #[test]
    fn a_hello_of_this_version_is_accepted() {
        let hello = check_hello(&hello(PROTOCOL_VERSION), None).expect("accepted");
        assert_eq!(hello.app_id, "app.folio");
        assert!(hello.has_hierarchy());
    }

    #[test]
    fn a_version_mismatch_names_both_versions() {
        let reason = check_hello(&hello(PROTOCOL_VERSION + 1), None).unwrap_err();
        let text = reason.to_string();
        assert!(
            text.contains(&format!("host speaks version {PROTOCOL_VERSION}")),
            "{text}"
        );
        assert!(
            text.contains(&format!("SDK speaks version {}", PROTOCOL_VERSION + 1)),
            "{text}"
        );
    }

    #[test]
    fn a_first_frame_other_than_hello_is_refused() {
        let reason = check_hello(
            &Message::Pause {
                id: 1,
                hierarchy: false,
            },
            None,
        )
        .unwrap_err();
        assert_eq!(reason, DisconnectReason::NoHello("PAUSE".into()));
    }

    #[test]
    fn a_required_token_must_be_there_and_equal() {
        let token = generate_token();
        assert_eq!(token.len(), 32);
        assert_ne!(token, generate_token(), "tokens are fresh");
        let with = |t: Option<&str>| check_hello(&hello_with_token(PROTOCOL_VERSION, t), Some(&token));
        assert!(with(Some(&token)).is_ok());
        assert_eq!(with(None).unwrap_err(), DisconnectReason::TokenMissing);
        assert_eq!(with(Some("guess")).unwrap_err(), DisconnectReason::TokenMismatch);
        // One digit off at the end (a fixed `0` would equal a token ending in `0`).
        let last = if token.ends_with('0') { '1' } else { '0' };
        let near = format!("{}{last}", &token[..31]);
        assert_eq!(with(Some(&near)).unwrap_err(), DisconnectReason::TokenMismatch);
        let refusal = DisconnectReason::TokenMismatch.to_string();
        assert!(
            refusal.starts_with("run token") && !refusal.contains(&token),
            "{refusal}"
        );
        // A token sent to a listener that requires none is fine.
        assert!(check_hello(&hello_with_token(PROTOCOL_VERSION, Some("x")), None).is_ok());
    }

    #[test]
    fn a_crash_goodbye_is_recognised() {
        let crash = DisconnectReason::Goodbye("crash: java.lang.Error: boom".into());
        assert_eq!(crash.crash(), Some("java.lang.Error: boom"));
        assert_eq!(DisconnectReason::Goodbye("finishing".into()).crash(), None);
        assert_eq!(DisconnectReason::Closed.crash(), None);
    }
}
