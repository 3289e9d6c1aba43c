//! The simulated app's SDK client against a real Unix socket served by the test.

use crate::support::sim as sim_support;

use std::time::Duration;

use sim_support::*;
use tokio::net::{UnixListener, UnixStream};
use uatu_device::agent::frame::{self, FrameError};
use uatu_device::agent::{Message, PROTOCOL_VERSION};
use uatu_device::proto;
use uatu_sim::{Bug, Bugs};

/// Generous: only reached when the SDK misbehaves.
const PATIENCE: Duration = Duration::from_secs(10);

async fn read(stream: &mut UnixStream) -> Result<Message, FrameError> {
    tokio::time::timeout(PATIENCE, frame::read_frame(stream))
        .await
        .expect("the SDK answers in time")
}

async fn accept_hello(listener: &UnixListener) -> UnixStream {
    let (mut stream, _) = tokio::time::timeout(PATIENCE, listener.accept())
        .await
        .expect("the SDK connects in time")
        .expect("accept");
    match read(&mut stream).await.expect("a first frame") {
        Message::Hello {
            protocol_version,
            platform,
            app_id,
            ..
        } => {
            assert_eq!(protocol_version, PROTOCOL_VERSION);
            assert_eq!(platform, "sim");
            assert_eq!(app_id, "app.folio");
        }
        other => panic!("expected HELLO, got {other:?}"),
    }
    stream
}

/// PAUSE then STATE: returns the STATE's fields.
async fn pause(stream: &mut UnixStream, id: u64) -> (serde_json::Map<String, serde_json::Value>, Message) {
    frame::write_frame(stream, &Message::Pause { id, hierarchy: false })
        .await
        .expect("PAUSE");
    let state = read(stream).await.expect("STATE");
    match &state {
        Message::State {
            id: answered,
            snapshots,
            ..
        } => {
            assert_eq!(*answered, id);
            (snapshots.clone(), state.clone())
        }
        other => panic!("expected STATE, got {other:?}"),
    }
}

async fn resume(stream: &mut UnixStream, id: u64) {
    frame::write_frame(stream, &Message::Resume { id })
        .await
        .expect("RESUME");
}

#[tokio::test]
async fn hello_then_pause_state_resume_holds_input_until_resumed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let socket = dir.path().join("agent.sock");
    // The simulator starts before the host listens: its SDK must retry.
    let (sim, mut client) = start(Bugs::none(), Some(socket.clone())).await;
    tokio::time::sleep(Duration::from_millis(120)).await;
    let listener = UnixListener::bind(&socket).expect("bind");
    let mut stream = accept_hello(&listener).await;

    let (snapshots, state) = pause(&mut stream, 1).await;
    assert_eq!(snapshots["route"], "login");
    assert_eq!(snapshots["logged_in"], false);
    assert_eq!(snapshots["auth_status"], "logged-out");
    assert_eq!(snapshots["login_error"], "");
    assert_eq!(
        snapshots["accounts"],
        serde_json::json!([]),
        "a fresh install has no accounts"
    );
    let Message::State {
        coverage,
        logs,
        exceptions,
        ..
    } = state
    else {
        unreachable!()
    };
    assert!(
        coverage
            .unwrap_or_default()
            .contains(&"app.start.cold".to_owned())
    );
    assert!(!logs.is_empty() && exceptions.is_empty());

    // While paused, capture still answers but input waits for RESUME.
    let root = hierarchy(&mut client).await;
    let email = centre(find(&root, "login_email").expect("email field"));
    let mut input_client = client.clone();
    let tap = tokio::spawn(async move {
        input_client
            .tap(proto::TapRequest {
                point: Some(email),
                element: None,
            })
            .await
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!tap.is_finished(), "the tap must wait while the app is paused");
    let still = hierarchy(&mut client).await;
    assert!(!find(&still, "login_email").expect("email").focused);
    resume(&mut stream, 1).await;
    let tapped = tokio::time::timeout(PATIENCE, tap)
        .await
        .expect("tap completes")
        .expect("joins")
        .expect("Tap");
    assert!(tapped.into_inner().delivered);

    let (snapshots, state) = pause(&mut stream, 2).await;
    assert_eq!(snapshots["focused_input"], "login_email");
    let Message::State { coverage, .. } = state else {
        unreachable!()
    };
    assert_eq!(
        coverage,
        Some(vec!["field.focus".to_owned()]),
        "only probes hit since the last STATE"
    );
    resume(&mut stream, 2).await;

    sim.shutdown().await.expect("shuts down");
    match read(&mut stream).await {
        Ok(Message::Goodbye { reason }) => assert!(reason.contains("shutting down"), "{reason}"),
        other => panic!("expected GOODBYE on shutdown, got {other:?}"),
    }
}

#[tokio::test]
async fn a_crash_says_goodbye_and_the_relaunched_app_reports_the_exception() {
    let dir = tempfile::tempdir().expect("tempdir");
    let socket = dir.path().join("agent.sock");
    let listener = UnixListener::bind(&socket).expect("bind");
    let (sim, mut client) = start(Bugs::only(Bug::CrashOnLongNote), Some(socket)).await;
    let mut stream = accept_hello(&listener).await;

    sign_in(&mut client).await;
    add_account(&mut client, "Checking").await;
    tap_desc(&mut client, "account_card:a1").await;
    tap_desc(&mut client, "add_txn_button").await;
    type_into(&mut client, "txn_amount", "5").await;
    type_into(
        &mut client,
        "txn_note",
        "a note that is far longer than forty characters",
    )
    .await;
    tap_desc(&mut client, "txn_submit").await;

    match read(&mut stream).await.expect("GOODBYE") {
        Message::Goodbye { reason } => {
            assert!(
                reason.starts_with("crash: java.lang.StringIndexOutOfBoundsException: "),
                "{reason}"
            )
        }
        other => panic!("expected GOODBYE, got {other:?}"),
    }
    assert!(
        matches!(read(&mut stream).await, Err(FrameError::Closed)),
        "then the SDK closes"
    );
    let root = hierarchy(&mut client).await;
    assert!(
        all_nodes(&root).iter().all(|node| node.package != "app.folio"),
        "the launcher shows"
    );

    client
        .launch(proto::LaunchRequest {
            bundle_id: "app.folio".into(),
            clear_state: false,
            launcher_activity: None,
        })
        .await
        .expect("Launch");
    let mut stream = accept_hello(&listener).await;
    let (snapshots, state) = pause(&mut stream, 10).await;
    assert_eq!(
        snapshots["route"], "home",
        "the stored session survives the process death"
    );
    assert_eq!(
        snapshots["accounts"][0]["name"], "Checking",
        "persisted data survives"
    );
    assert_eq!(
        snapshots["accounts"][0]["txnCount"], 0,
        "the crashing transaction was not saved"
    );
    let Message::State { exceptions, .. } = state else {
        unreachable!()
    };
    assert_eq!(exceptions.len(), 1);
    assert_eq!(exceptions[0].class, "java.lang.StringIndexOutOfBoundsException");
    resume(&mut stream, 10).await;
    let (_, state) = pause(&mut stream, 11).await;
    let Message::State { exceptions, .. } = state else {
        unreachable!()
    };
    assert!(exceptions.is_empty(), "an exception is reported once");
    resume(&mut stream, 11).await;
    sim.shutdown().await.expect("shuts down");
}

#[tokio::test]
async fn the_sdk_reconnects_when_the_host_drops_the_connection() {
    let dir = tempfile::tempdir().expect("tempdir");
    let socket = dir.path().join("agent.sock");
    let listener = UnixListener::bind(&socket).expect("bind");
    let (sim, mut client) = start(Bugs::none(), Some(socket)).await;
    let mut stream = accept_hello(&listener).await;
    frame::write_frame(
        &mut stream,
        &Message::Pause {
            id: 1,
            hierarchy: false,
        },
    )
    .await
    .expect("PAUSE");
    read(&mut stream).await.expect("STATE");
    // The host goes away mid-pause: the SDK must not leave the app paused, and comes back.
    drop(stream);
    let tapped = tokio::time::timeout(PATIENCE, tap_desc(&mut client, "login_email")).await;
    assert!(
        tapped
            .expect("input is not held by a pause nobody can resume")
            .delivered
    );
    let mut stream = accept_hello(&listener).await;
    let (snapshots, _) = pause(&mut stream, 2).await;
    assert_eq!(snapshots["route"], "login");
    resume(&mut stream, 2).await;
    sim.shutdown().await.expect("shuts down");
}
