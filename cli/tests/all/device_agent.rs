//! The host side of the SDK socket over a real Unix socket, against an
//! in-test SDK client that speaks `proto/agent.md` through `agent::frame`.

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpStream, UnixStream};
use uatu_device::agent::frame::{self, FrameError};
use uatu_device::agent::{
    AgentError, AgentListener, DisconnectReason, ListenerConfig, Message, PROTOCOL_VERSION,
};
use uatu_device::model::{ExceptionInfo, LogEntry, LogLevel};

const WAIT: Duration = Duration::from_secs(5);

async fn listener(parent: &tempfile::TempDir) -> AgentListener {
    AgentListener::bind(ListenerConfig {
        parent: Some(parent.path().to_path_buf()),
        ..ListenerConfig::default()
    })
    .await
    .expect("listener binds")
}

fn hello(version: u32) -> Message {
    Message::Hello {
        protocol_version: version,
        sdk_version: "0.1.0-test".into(),
        platform: "test".into(),
        app_id: "app.folio".into(),
        token: None,
        capabilities: Vec::new(),
    }
}

/// An SDK that connected and said HELLO.
async fn sdk(listener: &AgentListener) -> UnixStream {
    let mut stream = UnixStream::connect(listener.socket_path())
        .await
        .expect("connects");
    frame::write_frame(&mut stream, &hello(PROTOCOL_VERSION))
        .await
        .expect("sends HELLO");
    stream
}

async fn read<S: AsyncRead + Unpin>(stream: &mut S) -> Result<Message, FrameError> {
    tokio::time::timeout(WAIT, frame::read_frame(stream))
        .await
        .expect("a frame or the end within 5 s")
}

async fn wait_until_disconnected(listener: &AgentListener) -> DisconnectReason {
    let mut status = listener.subscribe();
    let status = tokio::time::timeout(
        WAIT,
        status.wait_for(|s| !s.is_connected() && s.last_disconnect.is_some()),
    )
    .await
    .expect("disconnect seen within 5 s")
    .expect("listener alive");
    status.last_disconnect.clone().expect("a reason")
}

/// Answers the next PAUSE like an SDK at a safe point; returns its id.
async fn answer_pause<S: AsyncRead + AsyncWrite + Unpin>(stream: &mut S, snapshot: serde_json::Value) -> u64 {
    let Message::Pause { id, .. } = read(stream).await.expect("reads PAUSE") else {
        panic!("expected PAUSE");
    };
    let state = Message::State {
        id,
        snapshots: serde_json::from_value(serde_json::json!({ "route": snapshot })).expect("object"),
        exceptions: vec![],
        logs: vec![LogEntry {
            time: 10,
            level: LogLevel::Info,
            tag: "folio".into(),
            message: "paused".into(),
        }],
        coverage: Some(vec!["login.submit.ok".into()]),
        hierarchy: None,
    };
    frame::write_frame(stream, &state).await.expect("sends STATE");
    id
}

#[tokio::test]
async fn the_socket_is_private_and_removed_on_drop() {
    let parent = tempfile::tempdir().expect("temp dir");
    let listener = listener(&parent).await;
    let dir_mode = std::fs::metadata(listener.dir())
        .expect("dir exists")
        .permissions()
        .mode();
    let socket_mode = std::fs::metadata(listener.socket_path())
        .expect("socket exists")
        .permissions()
        .mode();
    assert_eq!(dir_mode & 0o777, 0o700, "dir mode {dir_mode:o}");
    assert_eq!(socket_mode & 0o777, 0o600, "socket mode {socket_mode:o}");
    assert!(listener.dir().starts_with(parent.path()));
    let dir = listener.dir().to_path_buf();
    drop(listener);
    assert!(!dir.exists(), "{} still exists", dir.display());
}

#[tokio::test]
async fn handshake_pause_state_resume() {
    let parent = tempfile::tempdir().expect("temp dir");
    let listener = listener(&parent).await;
    assert!(!listener.status().is_connected());
    let mut app = sdk(&listener).await;
    let hello = listener.wait_for_app(WAIT).await.expect("app attaches");
    assert_eq!(hello.app_id, "app.folio");
    assert_eq!(hello.protocol_version, PROTOCOL_VERSION);
    assert_eq!(listener.status().connected, Some(1));

    let app_task = tokio::spawn(async move {
        let id = answer_pause(&mut app, serde_json::json!("home")).await;
        let resume = read(&mut app).await.expect("reads RESUME");
        assert_eq!(resume, Message::Resume { id });
        let second = answer_pause(&mut app, serde_json::json!("ledger")).await;
        assert!(second > id, "ids increase: {second} after {id}");
        app
    });
    let state = listener.pause(WAIT).await.expect("STATE arrives");
    assert_eq!(state.snapshots["route"], "home");
    assert_eq!(
        state.coverage.as_deref(),
        Some(&["login.submit.ok".to_string()][..])
    );
    assert_eq!(state.logs.len(), 1);
    listener.resume().await.expect("RESUME sent");
    let next = listener.pause(WAIT).await.expect("second STATE");
    assert_eq!(next.snapshots["route"], "ledger");
    assert!(next.id > state.id);
    app_task.await.expect("app task");
}

#[tokio::test]
async fn a_stale_state_is_ignored() {
    let parent = tempfile::tempdir().expect("temp dir");
    let listener = listener(&parent).await;
    let mut app = sdk(&listener).await;
    listener.wait_for_app(WAIT).await.expect("app attaches");

    // The app is slow: the first PAUSE times out, its late STATE must not
    // answer the second PAUSE.
    let timed_out = listener.pause(Duration::from_millis(100)).await.unwrap_err();
    let AgentError::PauseTimeout { id: first, .. } = timed_out else {
        panic!("expected a timeout, got {timed_out}");
    };
    let app_task = tokio::spawn(async move {
        let Message::Pause { id, .. } = read(&mut app).await.expect("first PAUSE") else {
            panic!()
        };
        assert_eq!(id, first);
        let stale = Message::State {
            id,
            snapshots: serde_json::from_value(serde_json::json!({"route": "stale"})).expect("object"),
            exceptions: vec![],
            logs: vec![],
            coverage: None,
            hierarchy: None,
        };
        frame::write_frame(&mut app, &stale)
            .await
            .expect("sends stale STATE");
        answer_pause(&mut app, serde_json::json!("fresh")).await;
        app
    });
    let state = listener.pause(WAIT).await.expect("second PAUSE answered");
    assert_eq!(state.snapshots["route"], "fresh");
    assert!(state.id > first);
    app_task.await.expect("app task");
}

#[tokio::test]
async fn a_version_mismatch_is_answered_with_goodbye_naming_both_versions() {
    let parent = tempfile::tempdir().expect("temp dir");
    let listener = listener(&parent).await;
    let mut app = UnixStream::connect(listener.socket_path())
        .await
        .expect("connects");
    frame::write_frame(&mut app, &hello(PROTOCOL_VERSION + 1))
        .await
        .expect("sends HELLO");
    let Message::Goodbye { reason } = read(&mut app).await.expect("GOODBYE") else {
        panic!("expected GOODBYE");
    };
    assert!(
        reason.contains(&format!("version {PROTOCOL_VERSION}")),
        "{reason}"
    );
    assert!(
        reason.contains(&format!("version {}", PROTOCOL_VERSION + 1)),
        "{reason}"
    );
    assert!(matches!(read(&mut app).await, Err(FrameError::Closed)));
    let last = wait_until_disconnected(&listener).await;
    assert_eq!(
        last,
        DisconnectReason::VersionMismatch {
            host: PROTOCOL_VERSION,
            app: PROTOCOL_VERSION + 1
        }
    );
    let error = listener
        .wait_for_app(Duration::from_millis(50))
        .await
        .unwrap_err();
    assert!(error.to_string().contains("version mismatch"), "{error}");
    // A matching SDK is still welcome.
    let _app = sdk(&listener).await;
    listener.wait_for_app(WAIT).await.expect("next app attaches");
}

#[tokio::test]
async fn a_malformed_frame_closes_the_connection_and_the_next_one_works() {
    let parent = tempfile::tempdir().expect("temp dir");
    let listener = listener(&parent).await;
    let mut app = sdk(&listener).await;
    listener.wait_for_app(WAIT).await.expect("app attaches");
    let payload = br#"{"type":"STATE","id":"#;
    app.write_all(&(payload.len() as u32).to_be_bytes())
        .await
        .expect("writes");
    app.write_all(payload).await.expect("writes");
    let Message::Goodbye { reason } = read(&mut app).await.expect("GOODBYE") else {
        panic!("expected GOODBYE");
    };
    assert!(reason.contains("malformed"), "{reason}");
    let last = wait_until_disconnected(&listener).await;
    assert!(matches!(last, DisconnectReason::Malformed(_)), "{last}");
    drop(app);

    let mut app = sdk(&listener).await;
    listener.wait_for_app(WAIT).await.expect("next app attaches");
    assert_eq!(listener.status().connections, 2);
    let answer = tokio::spawn(async move { answer_pause(&mut app, serde_json::json!("login")).await });
    listener.pause(WAIT).await.expect("new connection answers");
    answer.await.expect("app task");
}

#[tokio::test]
async fn an_unknown_message_type_is_malformed() {
    let parent = tempfile::tempdir().expect("temp dir");
    let listener = listener(&parent).await;
    let mut app = sdk(&listener).await;
    listener.wait_for_app(WAIT).await.expect("app attaches");
    let payload = br#"{"type":"REBOOT"}"#;
    app.write_all(&(payload.len() as u32).to_be_bytes())
        .await
        .expect("writes");
    app.write_all(payload).await.expect("writes");
    let last = wait_until_disconnected(&listener).await;
    assert!(
        matches!(&last, DisconnectReason::Malformed(m) if m.contains("REBOOT")),
        "{last}"
    );
}

#[tokio::test]
async fn an_oversize_frame_is_rejected_before_its_payload_and_the_next_connection_works() {
    let parent = tempfile::tempdir().expect("temp dir");
    let listener = listener(&parent).await;
    let mut app = sdk(&listener).await;
    listener.wait_for_app(WAIT).await.expect("app attaches");
    // Only the prefix: the host must not wait for 16 MiB + 1 bytes.
    app.write_all(&0x0100_0001u32.to_be_bytes())
        .await
        .expect("writes");
    let Message::Goodbye { reason } = read(&mut app).await.expect("GOODBYE") else {
        panic!("expected GOODBYE");
    };
    assert!(reason.contains("16777217"), "{reason}");
    assert_eq!(
        wait_until_disconnected(&listener).await,
        DisconnectReason::Oversize { size: 0x0100_0001 }
    );
    drop(app);

    let _app = sdk(&listener).await;
    listener.wait_for_app(WAIT).await.expect("next app attaches");
    assert_eq!(listener.status().connections, 2);
}

#[tokio::test]
async fn a_second_client_is_turned_away_while_one_is_attached() {
    let parent = tempfile::tempdir().expect("temp dir");
    let listener = listener(&parent).await;
    let mut first = sdk(&listener).await;
    listener.wait_for_app(WAIT).await.expect("first attaches");

    let mut second = sdk(&listener).await;
    let Message::Goodbye { reason } = read(&mut second).await.expect("GOODBYE") else {
        panic!("expected GOODBYE");
    };
    assert_eq!(reason, "another app is attached");
    assert!(matches!(read(&mut second).await, Err(FrameError::Closed)));
    assert_eq!(listener.status().rejected_clients, 1);
    assert_eq!(
        listener.status().connected,
        Some(1),
        "the first app stays attached"
    );

    let answer = tokio::spawn(async move { answer_pause(&mut first, serde_json::json!("home")).await });
    let state = listener.pause(WAIT).await.expect("first app still answers");
    assert_eq!(state.snapshots["route"], "home");
    answer.await.expect("app task");
}

#[tokio::test]
async fn an_app_restart_disconnects_and_reconnects_without_losing_the_listener() {
    let parent = tempfile::tempdir().expect("temp dir");
    let listener = listener(&parent).await;
    let mut app = sdk(&listener).await;
    listener.wait_for_app(WAIT).await.expect("app attaches");

    // The app crashes: it says why, dies, and its restarted process connects
    // at once and reports the persisted exception in its first STATE.
    frame::write_frame(
        &mut app,
        &Message::Goodbye {
            reason: "crash: java.lang.IllegalStateException: note too long".into(),
        },
    )
    .await
    .expect("sends GOODBYE");
    drop(app);
    let mut restarted = sdk(&listener).await;

    let mut status = listener.subscribe();
    tokio::time::timeout(WAIT, status.wait_for(|s| s.connected == Some(2)))
        .await
        .expect("restarted app attaches within 5 s")
        .expect("listener alive");
    let reason = listener.status().last_disconnect.expect("the crash was recorded");
    assert_eq!(
        reason.crash(),
        Some("java.lang.IllegalStateException: note too long")
    );
    let hello = listener.wait_for_app(WAIT).await.expect("restarted app attached");
    assert_eq!(hello.app_id, "app.folio");
    assert_eq!(
        listener.status().rejected_clients,
        0,
        "the restart was not turned away"
    );

    let answer = tokio::spawn(async move {
        let Message::Pause { id, .. } = read(&mut restarted).await.expect("PAUSE") else {
            panic!()
        };
        let state = Message::State {
            id,
            snapshots: Default::default(),
            exceptions: vec![ExceptionInfo {
                class: "java.lang.IllegalStateException".into(),
                message: "note too long".into(),
                stack: "at Folio.addTxn".into(),
                time: 1234,
            }],
            logs: vec![],
            coverage: None,
            hierarchy: None,
        };
        frame::write_frame(&mut restarted, &state).await.expect("STATE");
        restarted
    });
    let state = listener.pause(WAIT).await.expect("restarted app answers");
    assert_eq!(state.exceptions.len(), 1);
    assert_eq!(state.exceptions[0].message, "note too long");
    assert_eq!(state.coverage, None);
    let restarted = answer.await.expect("app task");

    // A plain end of file (a kill) is a disconnect too, and a pause then fails clearly.
    drop(restarted);
    assert_eq!(wait_until_disconnected(&listener).await, DisconnectReason::Closed);
    let error = listener.pause(WAIT).await.unwrap_err();
    assert!(matches!(error, AgentError::NotConnected { .. }), "{error}");
}

#[tokio::test]
async fn a_write_that_fails_detaches_the_app_at_once_and_its_successor_attaches() {
    let parent = tempfile::tempdir().expect("temp dir");
    // No grace: a new app is turned away unless the slot is already free when it arrives.
    let listener = AgentListener::bind(ListenerConfig {
        parent: Some(parent.path().to_path_buf()),
        reconnect_grace: Duration::ZERO,
        ..ListenerConfig::default()
    })
    .await
    .expect("listener binds");
    let app = sdk(&listener).await;
    listener.wait_for_app(WAIT).await.expect("app attaches");
    // The app stops reading but leaves its side open for writing: the host's writes
    // fail (EPIPE) while its reader sees no end of file, as when a dying app's socket
    // is closed between the host's reads.
    let app = app.into_std().expect("std stream");
    app.shutdown(std::net::Shutdown::Read)
        .expect("shuts down reading");

    let error = listener.pause(WAIT).await.unwrap_err();
    assert!(
        matches!(&error, AgentError::Send { what, .. } if what == "PAUSE"),
        "{error}"
    );
    let status = listener.status();
    assert!(!status.is_connected(), "still attached after a failed write");
    assert!(
        matches!(&status.last_disconnect, Some(DisconnectReason::Io(m)) if m.contains("cannot send PAUSE")),
        "{:?}",
        status.last_disconnect
    );

    let _successor = sdk(&listener).await;
    listener.wait_for_app(WAIT).await.expect("the next app attaches");
    let status = listener.status();
    assert_eq!(status.connected, Some(2));
    assert_eq!(status.rejected_clients, 0, "the next app was turned away");
    drop(app);
}

#[tokio::test]
async fn waiting_for_a_restarted_app_does_not_take_the_old_connection_for_it() {
    let parent = tempfile::tempdir().expect("temp dir");
    let listener = listener(&parent).await;
    let old = sdk(&listener).await;
    listener.wait_for_app(WAIT).await.expect("app attaches");
    let handshakes = listener.status().connections;

    // The old process still looks attached: that is not the app being waited for.
    let error = listener
        .wait_for_app_after(handshakes, Duration::from_millis(100))
        .await
        .unwrap_err();
    assert!(matches!(error, AgentError::NoApp { .. }), "{error}");

    drop(old);
    let _restarted = sdk(&listener).await;
    listener
        .wait_for_app_after(handshakes, WAIT)
        .await
        .expect("the restarted app attaches");
    assert_eq!(listener.status().connected, Some(2));
}

#[tokio::test]
async fn a_disconnect_during_a_pause_fails_the_pause() {
    let parent = tempfile::tempdir().expect("temp dir");
    let listener = listener(&parent).await;
    let mut app = sdk(&listener).await;
    listener.wait_for_app(WAIT).await.expect("app attaches");
    let app_task = tokio::spawn(async move {
        let _pause = read(&mut app).await.expect("PAUSE");
        drop(app);
    });
    let error = listener.pause(WAIT).await.unwrap_err();
    assert!(
        matches!(error, AgentError::Disconnected(DisconnectReason::Closed)),
        "{error}"
    );
    app_task.await.expect("app task");
    assert!(matches!(listener.resume().await, Err(AgentError::NotPaused)));
}

#[tokio::test]
async fn a_client_that_never_says_hello_times_out() {
    let parent = tempfile::tempdir().expect("temp dir");
    let listener = AgentListener::bind(ListenerConfig {
        parent: Some(parent.path().to_path_buf()),
        hello_timeout: Duration::from_millis(100),
        ..ListenerConfig::default()
    })
    .await
    .expect("binds");
    let mut silent = UnixStream::connect(listener.socket_path())
        .await
        .expect("connects");
    let Message::Goodbye { reason } = read(&mut silent).await.expect("GOODBYE") else {
        panic!("expected GOODBYE");
    };
    assert!(reason.contains("no HELLO"), "{reason}");
    assert!(matches!(
        wait_until_disconnected(&listener).await,
        DisconnectReason::HelloTimeout(_)
    ));
}

#[tokio::test]
async fn a_socket_path_too_long_for_unix_sockets_is_a_setup_error_naming_it() {
    let parent = tempfile::tempdir().expect("temp dir");
    let deep = parent.path().join("d".repeat(120));
    std::fs::create_dir(&deep).expect("creates a deep dir");
    let error = AgentListener::bind(ListenerConfig {
        parent: Some(deep.clone()),
        ..ListenerConfig::default()
    })
    .await
    .err()
    .expect("the socket path is too long");
    assert!(matches!(error, AgentError::Setup { .. }), "{error}");
    assert!(error.to_string().contains(&"d".repeat(120)), "{error}");
    let leftovers: Vec<_> = std::fs::read_dir(&deep).expect("reads").collect();
    assert!(
        leftovers.is_empty(),
        "the private dir is cleaned up: {leftovers:?}"
    );
}

fn hello_with_token(token: Option<&str>) -> Message {
    let Message::Hello {
        protocol_version,
        sdk_version,
        platform,
        app_id,
        ..
    } = hello(PROTOCOL_VERSION)
    else {
        unreachable!()
    };
    Message::Hello {
        protocol_version,
        sdk_version,
        platform,
        app_id,
        token: token.map(str::to_string),
        capabilities: vec!["hierarchy".into()],
    }
}

/// The Android path: the sidecar forwards the app's socket to a loopback TCP
/// port, where only the HELLO carrying the run token is let in.
#[tokio::test]
async fn over_loopback_tcp_only_the_run_token_is_let_in() {
    let parent = tempfile::tempdir().expect("temp dir");
    let token = uatu_device::agent::generate_token();
    let listener = AgentListener::bind(ListenerConfig {
        parent: Some(parent.path().to_path_buf()),
        token: Some(token.clone()),
        tcp_port: Some(0),
        ..ListenerConfig::default()
    })
    .await
    .expect("binds");
    let addr = listener.tcp_addr().expect("a TCP address");
    assert!(addr.ip().is_loopback() && addr.port() != 0, "{addr}");

    for (sent, refusal, reason) in [
        (None, "run token missing", DisconnectReason::TokenMissing),
        (
            Some("not-the-token"),
            "run token mismatch",
            DisconnectReason::TokenMismatch,
        ),
    ] {
        let mut app = TcpStream::connect(addr).await.expect("connects");
        frame::write_frame(&mut app, &hello_with_token(sent))
            .await
            .expect("HELLO");
        let Message::Goodbye { reason: said } = read(&mut app).await.expect("GOODBYE") else {
            panic!("expected GOODBYE");
        };
        assert!(said.starts_with(refusal) && !said.contains(&token), "{said}");
        assert!(matches!(read(&mut app).await, Err(FrameError::Closed)));
        assert_eq!(wait_until_disconnected(&listener).await, reason);
    }
    assert_eq!(listener.status().connections, 0, "no refused app was attached");

    let mut app = TcpStream::connect(addr).await.expect("connects");
    frame::write_frame(&mut app, &hello_with_token(Some(&token)))
        .await
        .expect("HELLO");
    let hello = listener.wait_for_app(WAIT).await.expect("attached");
    assert!(hello.has_hierarchy());
    let answering = tokio::spawn(async move {
        let id = answer_pause(&mut app, serde_json::json!("over tcp")).await;
        (id, app)
    });
    let state = listener.pause_with_hierarchy(WAIT).await.expect("STATE over TCP");
    assert_eq!(state.snapshots["route"], "over tcp");
    let (id, _app) = answering.await.expect("app task");
    assert_eq!(state.id, id);
    listener.resume().await.expect("RESUME");
}

#[tokio::test]
async fn a_tcp_listener_without_a_token_is_refused_at_bind() {
    let error = AgentListener::bind(ListenerConfig {
        tcp_port: Some(0),
        ..ListenerConfig::default()
    })
    .await
    .err()
    .expect("refused");
    assert!(matches!(error, AgentError::TcpWithoutToken), "{error}");
}

/// A PAUSE asks for the hierarchy only from an SDK that advertised it, and the
/// STATE's hierarchy reaches the host as the device model.
#[tokio::test]
async fn the_in_app_hierarchy_is_asked_for_and_received() {
    let parent = tempfile::tempdir().expect("temp dir");
    let listener = listener(&parent).await;
    let mut app = UnixStream::connect(listener.socket_path())
        .await
        .expect("connects");
    frame::write_frame(&mut app, &hello_with_token(None))
        .await
        .expect("HELLO");
    listener.wait_for_app(WAIT).await.expect("attached");
    let answering = tokio::spawn(async move {
        let Message::Pause { id, hierarchy } = read(&mut app).await.expect("PAUSE") else {
            panic!("expected PAUSE");
        };
        assert!(hierarchy, "the PAUSE asks for the hierarchy");
        let wire: uatu_device::agent::AppHierarchy = serde_json::from_value(serde_json::json!({
            "root": {"resource_id": "", "text": "", "content_description": "", "class_name": "",
                     "package": "app.folio", "clickable": false, "enabled": true, "checked": false,
                     "focused": false, "selected": false, "scrollable": false,
                     "bounds": {"left": 0, "top": 0, "right": 320, "bottom": 470},
                     "children": [{"resource_id": "app.folio:id/submit", "text": "Submit",
                         "content_description": "", "class_name": "android.widget.Button",
                         "package": "app.folio", "clickable": true, "enabled": false, "checked": false,
                         "focused": false, "selected": false, "scrollable": false,
                         "bounds": {"left": 10, "top": 100, "right": 310, "bottom": 150}, "children": []}]},
            "screen_width": 320, "screen_height": 470
        }))
        .expect("a valid hierarchy");
        let state = Message::State {
            id,
            snapshots: Default::default(),
            exceptions: vec![],
            logs: vec![],
            coverage: None,
            hierarchy: Some(Box::new(wire)),
        };
        frame::write_frame(&mut app, &state).await.expect("STATE");
        app
    });
    let state = listener.pause_with_hierarchy(WAIT).await.expect("STATE");
    let hierarchy = state.hierarchy.expect("the hierarchy arrived");
    assert_eq!(hierarchy.screen.width, 320);
    let submit = uatu_device::selector::Matcher::parse("id:submit")
        .expect("selector")
        .find(&hierarchy.root)
        .expect("id:submit resolves");
    assert!(!submit.enabled);
    assert_eq!(submit.bounds.top, 100);
    let _app = answering.await.expect("app task");
}
