//! The real host agent listener against the real Kotlin SDK: the JVM harness
//! app of `sdk-android/` (`dev.uatu.sdk.harness.HarnessMain`, in the jars that
//! `mvn -B verify -f sdk-android/pom.xml` builds; `dev/test` builds them before
//! `cargo test`), run with `java` over the listener's Unix socket or loopback TCP.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::process::{Child, Command};
use uatu_device::agent::{AgentListener, AgentState, DisconnectReason, ListenerConfig, generate_token};

const JVM_START: Duration = Duration::from_secs(30);
const PAUSE: Duration = Duration::from_secs(5);
const CYCLES: u64 = 1_000;
const EXTRACTORS: usize = 20;

/// The harness's class path: the SDK jar, its tests jar and its runtime libraries.
fn harness_class_path() -> String {
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("../sdk-android/target");
    let jar = |suffix: &str| -> PathBuf {
        let found = std::fs::read_dir(&target).ok().and_then(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|entry| entry.path())
                .find(|path| {
                    let name = path
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    name.starts_with("uatu-sdk-android-")
                        && name.ends_with(suffix)
                        && (suffix != ".jar" || !name.ends_with("-tests.jar"))
                })
        });
        found.unwrap_or_else(|| {
            panic!(
                "the Kotlin SDK's harness jar (uatu-sdk-android-*{suffix}) is missing from {}: \
                 build it with `mvn -B verify -f sdk-android/pom.xml` (dev/test does before cargo test)",
                target.display()
            )
        })
    };
    let lib = target.join("harness-lib");
    assert!(
        lib.is_dir(),
        "{} is missing: run `mvn -B verify -f sdk-android/pom.xml`",
        lib.display()
    );
    format!(
        "{}:{}:{}/*",
        jar(".jar").display(),
        jar("-tests.jar").display(),
        lib.display()
    )
}

/// One harness process, killed when dropped; its stderr is kept for failure messages.
struct Harness {
    child: Child,
    stderr: Arc<Mutex<String>>,
}

impl Harness {
    fn start(args: &[&str]) -> Harness {
        let mut child = Command::new("java")
            .arg("-cp")
            .arg(harness_class_path())
            .arg("dev.uatu.sdk.harness.HarnessMain")
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("`java` starts (dev/setup installs a JDK)");
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut pipe = child.stderr.take().expect("stderr piped");
        let sink = stderr.clone();
        tokio::spawn(async move {
            let mut buffer = [0u8; 4096];
            while let Ok(n) = pipe.read(&mut buffer).await {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .expect("stderr lock")
                    .push_str(&String::from_utf8_lossy(&buffer[..n]));
            }
        });
        Harness { child, stderr }
    }

    fn stderr(&self) -> String {
        self.stderr.lock().expect("stderr lock").clone()
    }

    /// Waits for the process to end by itself; its exit code.
    async fn exit_code(&mut self) -> Option<i32> {
        let status = tokio::time::timeout(JVM_START, self.child.wait())
            .await
            .unwrap_or_else(|_| panic!("the harness did not exit; stderr:\n{}", self.stderr()))
            .expect("waits for the harness");
        status.code()
    }
}

async fn listener(parent: &Path, token: &str, tcp: bool) -> AgentListener {
    AgentListener::bind(ListenerConfig {
        parent: Some(parent.to_path_buf()),
        token: Some(token.to_string()),
        tcp_port: tcp.then_some(0),
        ..ListenerConfig::default()
    })
    .await
    .expect("the listener binds")
}

async fn cycle(listener: &AgentListener, harness: &Harness) -> AgentState {
    let state = listener
        .pause(PAUSE)
        .await
        .unwrap_or_else(|e| panic!("PAUSE failed: {e}; harness stderr:\n{}", harness.stderr()));
    listener.resume().await.expect("RESUME");
    state
}

async fn wait_for_disconnect(listener: &AgentListener) -> DisconnectReason {
    let mut status = listener.subscribe();
    let status = tokio::time::timeout(JVM_START, status.wait_for(|s| !s.is_connected()))
        .await
        .expect("the app disconnects")
        .expect("listener alive");
    status.last_disconnect.clone().expect("a reason")
}

/// Waits until the listener has recorded `expected` as the last connection's end.
async fn wait_for_reason(listener: &AgentListener, expected: DisconnectReason) {
    let mut status = listener.subscribe();
    let seen = tokio::time::timeout(
        PAUSE,
        status.wait_for(|s| s.last_disconnect.as_ref() == Some(&expected)),
    )
    .await;
    assert!(
        seen.is_ok(),
        "expected the listener to record {expected:?}, it has {:?}",
        listener.status().last_disconnect
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_pauses_a_host_disconnect_and_a_crash_with_restart() {
    let dir = tempfile::tempdir().expect("temp dir");
    let token = generate_token();
    let listener = listener(dir.path(), &token, false).await;
    let socket = listener.socket_path().to_string_lossy().into_owned();
    let crash_file = dir.path().join("crash.json").to_string_lossy().into_owned();
    let crash_after = (CYCLES + 3).to_string();
    let process = [
        "--socket",
        &socket,
        "--token",
        &token,
        "--crash-file",
        &crash_file,
    ];
    let harness = Harness::start(&[&process[..], &["--crash-after-pauses", &crash_after]].concat());

    let hello = listener
        .wait_for_app(JVM_START)
        .await
        .unwrap_or_else(|e| panic!("{e}; harness stderr:\n{}", harness.stderr()));
    assert_eq!(
        (hello.platform.as_str(), hello.app_id.as_str()),
        ("jvm", "dev.uatu.harness")
    );
    assert_eq!(hello.protocol_version, uatu_device::agent::PROTOCOL_VERSION);

    for n in 1..=CYCLES {
        let state = cycle(&listener, &harness).await;
        assert_eq!(
            state.snapshots.len(),
            EXTRACTORS,
            "pause {n}: {:?}",
            state.snapshots.keys()
        );
        assert_eq!(
            state.snapshots["pauses"], n,
            "pause {n} read the app's state afresh"
        );
        assert_eq!(state.snapshots["value_01"], "screen-1");
        assert!(state.exceptions.is_empty(), "pause {n}: {:?}", state.exceptions);
    }

    // The host hangs up; the SDK comes back by itself and pauses go on.
    listener
        .disconnect("host-side disconnect (test)")
        .await
        .expect("GOODBYE sent");
    wait_for_disconnect(&listener).await;
    listener
        .wait_for_app(JVM_START)
        .await
        .expect("the SDK reconnects");
    assert_eq!(listener.status().connections, 2);
    for n in CYCLES + 1..=CYCLES + 3 {
        assert_eq!(cycle(&listener, &harness).await.snapshots["pauses"], n);
    }

    // After that many pauses the harness throws on its main loop and dies.
    let reason = wait_for_disconnect(&listener).await;
    let crash = format!("java.lang.IllegalStateException: harness crash after {crash_after} pauses");
    assert_eq!(reason.crash(), Some(crash.as_str()), "{reason}");
    let mut dead = harness;
    assert_eq!(dead.exit_code().await, Some(70), "stderr:\n{}", dead.stderr());

    // The next process delivers the exception of the one that died, once.
    let restarted = Harness::start(&process);
    listener
        .wait_for_app(JVM_START)
        .await
        .expect("the restarted harness connects");
    let first = cycle(&listener, &restarted).await;
    let delivered = first
        .exceptions
        .first()
        .unwrap_or_else(|| panic!("no exception in {first:?}"));
    assert_eq!(delivered.class, "java.lang.IllegalStateException");
    assert_eq!(
        delivered.message,
        format!("harness crash after {crash_after} pauses")
    );
    assert!(delivered.stack.contains("HarnessApp"), "{}", delivered.stack);
    assert_eq!(first.snapshots["pauses"], 1, "a new process");
    assert!(
        cycle(&listener, &restarted).await.exceptions.is_empty(),
        "delivered twice"
    );
}

/// Starts a harness the listener must refuse; checks the recorded reason, the
/// harness giving up (exit 2) and what it reported.
async fn refused(listener: &AgentListener, args: &[&str], expected: DisconnectReason, reported: &str) {
    let mut harness = Harness::start(args);
    assert_eq!(
        harness.exit_code().await,
        Some(2),
        "stderr:\n{}",
        harness.stderr()
    );
    wait_for_reason(listener, expected).await;
    let said = harness.stderr();
    assert!(said.contains(reported), "the SDK reports {reported:?}:\n{said}");
}

#[tokio::test]
async fn a_wrong_protocol_version_or_token_is_refused_with_the_documented_goodbye() {
    let dir = tempfile::tempdir().expect("temp dir");
    let token = generate_token();
    let listener = listener(dir.path(), &token, false).await;
    let socket = listener.socket_path().to_string_lossy().into_owned();
    refused(
        &listener,
        &["--socket", &socket, "--token", &token, "--protocol-version", "2"],
        DisconnectReason::VersionMismatch { host: 1, app: 2 },
        "protocol version mismatch: the host speaks version 1, the app's SDK speaks version 2",
    )
    .await;
    refused(
        &listener,
        &["--socket", &socket, "--token", "not-this-run"],
        DisconnectReason::TokenMismatch,
        "run token mismatch: the app's token is not this run's",
    )
    .await;
    refused(
        &listener,
        &["--socket", &socket],
        DisconnectReason::TokenMissing,
        "run token missing: this host requires the token it passed to the app at launch",
    )
    .await;
    assert_eq!(
        listener.status().connections,
        0,
        "no refused harness was attached"
    );
}

#[tokio::test]
async fn over_loopback_tcp_with_the_run_token() {
    let dir = tempfile::tempdir().expect("temp dir");
    let token = generate_token();
    let listener = listener(dir.path(), &token, true).await;
    let port = listener.tcp_addr().expect("TCP").port().to_string();
    let harness = Harness::start(&["--tcp", &port, "--token", &token]);
    listener
        .wait_for_app(JVM_START)
        .await
        .unwrap_or_else(|e| panic!("{e}; harness stderr:\n{}", harness.stderr()));
    for n in 1..=10u64 {
        assert_eq!(cycle(&listener, &harness).await.snapshots["pauses"], n);
    }
}
