//! No Chromium outlives the device that started it: not after a drop, not
//! after its host process is killed (SIGKILL) or interrupted (SIGINT, as by
//! Ctrl-C without a handler), and nothing it wrote stays on disk. Each browser
//! is recognised by its own profile directory on the command line of every one
//! of its processes.

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use uatu_web::WebDevice;

use common::*;

/// Set in the child process that owns a browser for the killed-host tests.
const CHILD: &str = "UATU_WEB_CLEANUP_CHILD";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_device_stops_every_browser_process() {
    let device = launched("widgets.html", None).await;
    let profile = device
        .user_data_dir()
        .expect("a launched browser")
        .display()
        .to_string();
    assert!(!processes_mentioning(&profile).is_empty(), "the browser runs");
    let directory = browser_directory(&profile);
    assert!(
        has_chromium_temporary_files(&directory),
        "Chromium's temporary files are in the browser's directory, not in /tmp"
    );
    drop(device);
    let left = wait_until_none_mention(&profile, Duration::from_secs(10));
    assert!(left.is_empty(), "browser processes left after drop: {left:?}");
    assert!(
        !directory.exists(),
        "the browser's directory (profile and temporary files) is removed"
    );
}

/// The directory of everything a browser writes: its profile's parent.
fn browser_directory(profile: &str) -> PathBuf {
    Path::new(profile)
        .parent()
        .expect("the profile is in the browser's directory")
        .to_path_buf()
}

/// Whether Chromium's singleton directory (`org.chromium.Chromium.*`, made in
/// `TMPDIR`) is in the browser's own `tmp/`.
fn has_chromium_temporary_files(directory: &Path) -> bool {
    std::fs::read_dir(directory.join("tmp"))
        .map(|entries| {
            entries.map_while(Result::ok).any(|entry| {
                entry
                    .file_name()
                    .to_string_lossy()
                    .starts_with("org.chromium.Chromium.")
            })
        })
        .unwrap_or(false)
}

/// Waits up to `timeout` for `path` to be gone; whether it is.
fn removed_within(path: &Path, timeout: Duration) -> bool {
    let deadline = std::time::Instant::now() + timeout;
    while path.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    !path.exists()
}

/// Not a test by itself: the process the killed-host tests start and kill.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "run by the killed-host tests as their child process"]
async fn child_owns_a_browser() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let addr = serve(pages()).await;
    let device = WebDevice::start(config(addr, "widgets.html"), None)
        .await
        .expect("start");
    let profile = device.user_data_dir().expect("launched").display().to_string();
    println!("PROFILE {profile}");
    tokio::time::sleep(Duration::from_secs(120)).await;
}

/// Starts the child, returns it with its browser's profile directory.
fn child_with_browser() -> (std::process::Child, String) {
    let mut child = Command::new(std::env::current_exe().expect("test binary"))
        .args([
            "--exact",
            "child_owns_a_browser",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn the child");
    let stdout = child.stdout.take().expect("stdout");
    let profile = BufReader::new(stdout)
        .lines()
        .map_while(Result::ok)
        // The harness prints `test child_owns_a_browser ... ` on the same line first.
        .find_map(|line| {
            line.split_once("PROFILE ")
                .map(|(_, profile)| profile.trim().to_owned())
        })
        .expect("the child reports its browser");
    (child, profile)
}

fn killed_host_leaves_no_browser(signal: Signal) {
    let (mut child, profile) = child_with_browser();
    assert!(
        !processes_mentioning(&profile).is_empty(),
        "the child's browser runs"
    );
    let directory = browser_directory(&profile);
    assert!(has_chromium_temporary_files(&directory));
    kill(Pid::from_raw(child.id() as i32), signal).expect("signal the child");
    let _ = child.wait();
    let left = wait_until_none_mention(&profile, Duration::from_secs(10));
    assert!(left.is_empty(), "browser processes left after {signal}: {left:?}");
    assert!(
        removed_within(&directory, Duration::from_secs(10)),
        "the browser's directory {} is left after {signal}",
        directory.display()
    );
}

#[test]
fn a_host_killed_with_sigkill_leaves_no_browser() {
    killed_host_leaves_no_browser(Signal::SIGKILL);
}

#[test]
fn a_host_interrupted_with_sigint_leaves_no_browser() {
    killed_host_leaves_no_browser(Signal::SIGINT);
}
