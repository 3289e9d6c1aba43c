//! Debian's Chromium as a child process that never outlives its host.
//!
//! Chromium runs in a process group of its own, so that Ctrl-C in the host's
//! terminal reaches only the host (which then ends the run and drops this),
//! and so that one signal to the group stops the browser with its renderer,
//! GPU and utility processes. Three exits are covered:
//! - drop (the run's end, an error, Ctrl-C): the group is killed and reaped;
//! - the host killed outright (SIGKILL, a crash): a watchdog `sh` blocks
//!   reading a pipe only the host holds; the kernel closes it when the host
//!   dies, the read returns, and the watchdog kills the group;
//! - Chromium dying by itself: the CDP connection ends and calls fail.
//!
//! Nothing the browser wrote stays on disk either: its profile and its
//! temporary files (`TMPDIR`: Chromium's `org.chromium.Chromium.*` singleton
//! directories, which a killed browser leaves behind) are in one directory of
//! ours, removed on drop, and by the watchdog once the group is gone.

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

use crate::WebError;

/// Where Debian's `chromium` package puts the browser.
pub const DEFAULT_EXECUTABLE: &str = "/usr/bin/chromium";

/// How long Chromium may take to print its DevTools address.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// The flags for a headless browser on a closed network: nothing phones home,
/// nothing updates itself, and the profile is a fresh directory of our own.
/// `ComputedAccessibilityInfo` gives elements `computedRole`/`computedName`,
/// so the hierarchy carries Chromium's own accessible names.
const FLAGS: &[&str] = &[
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--disable-extensions",
    "--disable-default-apps",
    "--mute-audio",
    "--disable-smooth-scrolling",
    "--enable-blink-features=ComputedAccessibilityInfo",
    "--remote-debugging-address=127.0.0.1",
    "--remote-debugging-port=0",
];

/// A running Chromium; killed with its whole process group on drop.
pub struct Chromium {
    child: Child,
    watchdog: Option<Child>,
    /// Held open for the watchdog: its end of file means the host is gone.
    lifeline: Option<ChildStdin>,
    /// The DevTools WebSocket address of the browser.
    pub websocket: String,
    /// The browser's profile (`profile/`) and temporary files (`tmp/`).
    /// Dropped after the browser is dead, so nothing writes into it afterwards.
    directory: tempfile::TempDir,
    user_data_dir: PathBuf,
}

impl Chromium {
    /// Starts `executable` headless with a fresh profile and waits for its DevTools address.
    pub fn launch(executable: &Path, window: (u32, u32)) -> Result<Chromium, WebError> {
        let directory = tempfile::Builder::new()
            .prefix("uatu-web-browser-")
            .tempdir()
            .map_err(|source| WebError::Profile { source })?;
        let user_data_dir = directory.path().join("profile");
        let tmp = directory.path().join("tmp");
        for dir in [&user_data_dir, &tmp] {
            std::fs::create_dir(dir).map_err(|source| WebError::Profile { source })?;
        }
        let mut child = Command::new(executable)
            .args(FLAGS)
            .arg(format!("--window-size={},{}", window.0, window.1))
            .arg(format!("--user-data-dir={}", user_data_dir.display()))
            .env("TMPDIR", &tmp)
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .map_err(|source| WebError::Spawn {
                executable: executable.to_path_buf(),
                source,
            })?;
        let pid = child.id();
        let (watchdog, lifeline) = match spawn_watchdog(pid, directory.path()) {
            Ok((watchdog, lifeline)) => (Some(watchdog), Some(lifeline)),
            Err(source) => {
                kill_group(pid);
                let _ = child.wait();
                return Err(WebError::Watchdog { source });
            }
        };
        let mut chromium = Chromium {
            child,
            watchdog,
            lifeline,
            websocket: String::new(),
            directory,
            user_data_dir,
        };
        chromium.websocket = chromium.wait_for_devtools(executable)?;
        Ok(chromium)
    }

    /// The browser's profile directory (unique to this browser).
    pub fn user_data_dir(&self) -> &Path {
        &self.user_data_dir
    }

    /// The directory of everything the browser writes: its profile and its `TMPDIR`.
    pub fn directory(&self) -> &Path {
        self.directory.path()
    }

    /// The browser's process id (also its process group id).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Reads stderr until Chromium says where DevTools listens; keeps draining
    /// it afterwards on a thread so the browser never blocks on a full pipe.
    fn wait_for_devtools(&mut self, executable: &Path) -> Result<String, WebError> {
        let Some(stderr) = self.child.stderr.take() else {
            return Err(WebError::Spawn {
                executable: executable.to_path_buf(),
                source: std::io::Error::other("no stderr pipe"),
            });
        };
        let (found, address) = mpsc::channel();
        std::thread::spawn(move || {
            let mut tail = Vec::new();
            let mut found = Some(found);
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Some(ws) = line.strip_prefix("DevTools listening on ") {
                    if let Some(found) = found.take() {
                        let _ = found.send(Ok(ws.trim().to_owned()));
                    }
                } else if found.is_some() {
                    tail.push(line);
                    if tail.len() > 20 {
                        tail.remove(0);
                    }
                }
            }
            if let Some(found) = found {
                let _ = found.send(Err(tail.join("\n")));
            }
        });
        let deadline = Instant::now() + START_TIMEOUT;
        match address.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(Ok(ws)) => Ok(ws),
            Ok(Err(output)) => Err(WebError::BrowserExited {
                executable: executable.to_path_buf(),
                output,
            }),
            Err(_) => Err(WebError::BrowserStartTimeout {
                executable: executable.to_path_buf(),
                after: START_TIMEOUT,
            }),
        }
    }
}

impl Drop for Chromium {
    fn drop(&mut self) {
        kill_group(self.child.id());
        let _ = self.child.wait();
        // End of file for the watchdog: it finds the group gone and removes the
        // directory (as `directory` would after it; whichever is first).
        self.lifeline.take();
        if let Some(watchdog) = &mut self.watchdog {
            let _ = watchdog.wait();
        }
    }
}

/// A `sh` that, when its stdin (whose only writer is this process) reaches end
/// of file, kills Chromium's process group, waits until no process of it is
/// left, and removes `directory`. It is in a process group of its own, so the
/// kill does not stop it before the removal, and Ctrl-C in the terminal does
/// not reach it (it ignores the signals anyway).
fn spawn_watchdog(group: u32, directory: &Path) -> std::io::Result<(Child, ChildStdin)> {
    let mut watchdog = Command::new("/bin/sh")
        .args([
            "-c",
            "trap '' INT HUP TERM; read _ignored; kill -KILL -\"$1\" 2>/dev/null; \
             while kill -0 -\"$1\" 2>/dev/null; do sleep 0.05; done; rm -rf -- \"$2\"",
            "uatu-web-watchdog",
        ])
        .arg(group.to_string())
        .arg(directory)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()?;
    let lifeline = watchdog
        .stdin
        .take()
        .ok_or_else(|| std::io::Error::other("no stdin pipe for the watchdog"))?;
    Ok((watchdog, lifeline))
}

fn kill_group(group: u32) {
    // Already gone is fine: there is nothing left to stop.
    let _ = killpg(Pid::from_raw(group as i32), Signal::SIGKILL);
}

/// `chromium --version`, e.g. `Chromium 156.0.8078.114 built on Debian ...`.
pub fn version(executable: &Path) -> Result<String, WebError> {
    let output = Command::new(executable)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .map_err(|source| WebError::Spawn {
            executable: executable.to_path_buf(),
            source,
        })?;
    let text = String::from_utf8_lossy(&output.stdout);
    let version = text
        .lines()
        .find(|line| line.starts_with("Chromium") || line.starts_with("Google"));
    version
        .map(|line| line.trim().to_owned())
        .ok_or_else(|| WebError::BrowserExited {
            executable: executable.to_path_buf(),
            output: String::from_utf8_lossy(&output.stderr).into_owned(),
        })
}

/// The executable to use: the given one, or Debian's.
pub fn executable(given: Option<&Path>) -> PathBuf {
    given.map_or_else(|| PathBuf::from(DEFAULT_EXECUTABLE), Path::to_path_buf)
}
