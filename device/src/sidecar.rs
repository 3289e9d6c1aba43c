//! The Android sidecar (`sidecar-maestro`, docs/devices.md) as a child process
//! of the host: started with `java -jar`, its port read from the first line of
//! its standard output, and stopped when the run ends.
//!
//! The sidecar exits by itself when its standard input reaches end of file, so
//! it is started with a pipe on stdin that the host holds and never writes to:
//! whatever ends the host (the end of the run, Ctrl-C, a panic, a kill), the
//! pipe closes and the sidecar follows. [`SidecarProcess::stop`] closes it and
//! waits; dropping the process does the same without waiting, and kills it.

use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// The file name of the sidecar JAR, looked for next to the `uatu` binary.
pub const JAR_NAME: &str = "sidecar-maestro.jar";

/// How to start the sidecar.
#[derive(Debug, Clone)]
pub struct SidecarCommand {
    /// The `java` to run (a JDK or JRE 17 or newer).
    pub java: PathBuf,
    /// The sidecar JAR (see [`JAR_NAME`]).
    pub jar: PathBuf,
    /// The device's serial; `None` for the only device attached.
    pub serial: Option<String>,
    /// `--fake-device`: the sidecar's scripted device (`builtin` or a directory), for tests.
    pub fake_device: Option<String>,
    /// The host's agent port, forwarded from the device's `localabstract:uatu-agent`.
    pub agent_port: Option<u16>,
    /// The run's token for the app's SDK, passed in the environment (not shown by `ps`).
    pub agent_token: Option<String>,
    /// `--adb-server HOST:PORT`: the ADB server to use; `None`: where `adb` looks for it
    /// (`ADB_SERVER_SOCKET`, `ANDROID_ADB_SERVER_ADDRESS` / `_PORT`, else localhost:5037).
    pub adb_server: Option<String>,
    /// Whether a launch that asks to clear the app's data clears it (`--keep-data` when not).
    pub clear_data: bool,
    /// Whether the app's requested runtime permissions are granted at launch (`--no-grant-permissions` when not).
    pub grant_permissions: bool,
    /// How long the sidecar may take to print its port (the JVM starting).
    pub start_timeout: Duration,
}

impl SidecarCommand {
    /// Runs `jar` with the `java` on the PATH, on the only device attached, with no agent forward.
    pub fn new(jar: PathBuf) -> Self {
        Self {
            java: PathBuf::from("java"),
            jar,
            serial: None,
            fake_device: None,
            agent_port: None,
            agent_token: None,
            adb_server: None,
            clear_data: true,
            grant_permissions: true,
            start_timeout: Duration::from_secs(30),
        }
    }

    fn arguments(&self) -> Vec<String> {
        let mut args = vec![
            "-jar".into(),
            self.jar.display().to_string(),
            "--port".into(),
            "0".into(),
        ];
        if let Some(serial) = &self.serial {
            args.extend(["--device".into(), serial.clone()]);
        }
        if let Some(fake) = &self.fake_device {
            args.extend(["--fake-device".into(), fake.clone()]);
        }
        if let Some(port) = self.agent_port {
            args.extend(["--agent-port".into(), port.to_string()]);
        }
        if let Some(server) = &self.adb_server {
            args.extend(["--adb-server".into(), server.clone()]);
        }
        if !self.clear_data {
            args.push("--keep-data".into());
        }
        if !self.grant_permissions {
            args.push("--no-grant-permissions".into());
        }
        args
    }
}

/// Why the sidecar could not be started.
#[derive(Debug, thiserror::Error)]
pub enum SidecarError {
    /// `java` could not be started (missing, not executable).
    #[error(
        "cannot run `{java}` for the Android sidecar: {source} (install a JDK 17: `apt-get install openjdk-17-jdk-headless`)"
    )]
    Java {
        /// The `java` that was run.
        java: String,
        /// Why it could not be started.
        #[source]
        source: std::io::Error,
    },
    /// The sidecar exited before it printed the port it listens on.
    #[error("the Android sidecar {jar} exited ({status}) before printing its port{stderr}")]
    Exited {
        /// The sidecar JAR.
        jar: String,
        /// Its exit status.
        status: String,
        /// The end of its standard error, formatted for the message (empty if it wrote none).
        stderr: String,
    },
    /// The sidecar printed no port within the start timeout.
    #[error("the Android sidecar {jar} printed no port within {after:?}{stderr}")]
    NoPort {
        /// The sidecar JAR.
        jar: String,
        /// The start timeout that passed.
        after: Duration,
        /// The end of its standard error, formatted for the message (empty if it wrote none).
        stderr: String,
    },
    /// The sidecar's first line of output is not a port number.
    #[error("the Android sidecar {jar} printed {line:?} where its port was expected")]
    NotAPort {
        /// The sidecar JAR.
        jar: String,
        /// What it printed instead.
        line: String,
    },
}

/// A running sidecar.
#[derive(Debug)]
pub struct SidecarProcess {
    child: Child,
    /// Held open for the sidecar's lifetime: its end of file tells the sidecar to stop.
    stdin: Option<ChildStdin>,
    /// Held so the sidecar never writes into a closed pipe.
    _stdout: Lines<BufReader<ChildStdout>>,
    port: u16,
    stderr_tail: Arc<Mutex<Vec<String>>>,
}

impl SidecarProcess {
    /// Starts the sidecar and waits for its port.
    pub async fn start(command: &SidecarCommand) -> Result<Self, SidecarError> {
        let jar = command.jar.display().to_string();
        let mut process = Command::new(&command.java);
        process
            .args(command.arguments())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        match &command.agent_token {
            Some(token) => process.env("UATU_AGENT_TOKEN", token),
            None => process.env_remove("UATU_AGENT_TOKEN"),
        };
        let mut child = process.spawn().map_err(|source| SidecarError::Java {
            java: command.java.display().to_string(),
            source,
        })?;
        let stderr_tail = Arc::new(Mutex::new(Vec::new()));
        let stderr_reader = child
            .stderr
            .take()
            .map(|stderr| tokio::spawn(keep_tail(stderr, Arc::clone(&stderr_tail))));
        let stdin = child.stdin.take();
        let Some(stdout) = child.stdout.take() else {
            return Err(SidecarError::NotAPort {
                jar,
                line: "(no standard output to read)".into(),
            });
        };
        let mut stdout = BufReader::new(stdout).lines();
        let first = tokio::time::timeout(command.start_timeout, stdout.next_line()).await;
        let line = match first {
            Ok(Ok(Some(line))) => line,
            Ok(_) => {
                let status = child
                    .wait()
                    .await
                    .map_or_else(|e| e.to_string(), |s| s.to_string());
                // Its standard error ends with it: read to the end for the reason it gave.
                if let Some(reader) = stderr_reader {
                    let _ = tokio::time::timeout(Duration::from_secs(1), reader).await;
                }
                return Err(SidecarError::Exited {
                    jar,
                    status,
                    stderr: tail(&stderr_tail),
                });
            }
            Err(_) => {
                return Err(SidecarError::NoPort {
                    jar,
                    after: command.start_timeout,
                    stderr: tail(&stderr_tail),
                });
            }
        };
        let port = line.trim().parse::<u16>().map_err(|_| SidecarError::NotAPort {
            jar,
            line: line.clone(),
        })?;
        Ok(Self {
            child,
            stdin,
            _stdout: stdout,
            port,
            stderr_tail,
        })
    }

    /// The sidecar's gRPC address (it listens on 127.0.0.1 only).
    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// The last lines the sidecar wrote to its standard error, for error messages.
    pub fn stderr_tail(&self) -> String {
        tail(&self.stderr_tail)
    }

    /// Stops the sidecar: closes its stdin, waits up to `grace` for it to
    /// remove its forward and exit, then kills it.
    pub async fn stop(mut self, grace: Duration) -> Option<ExitStatus> {
        drop(self.stdin.take());
        match tokio::time::timeout(grace, self.child.wait()).await {
            Ok(status) => status.ok(),
            Err(_) => {
                let _ = self.child.kill().await;
                None
            }
        }
    }
}

/// `sidecar-maestro.jar` next to the running `uatu` binary, if it is there.
pub fn jar_beside_binary() -> Option<PathBuf> {
    let beside = std::env::current_exe().ok()?.parent()?.join(JAR_NAME);
    beside.is_file().then_some(beside)
}

async fn keep_tail(stream: impl AsyncRead + Unpin, tail: Arc<Mutex<Vec<String>>>) {
    let mut lines = BufReader::new(stream).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        if let Ok(mut tail) = tail.lock() {
            if tail.len() == 20 {
                tail.remove(0);
            }
            tail.push(line);
        }
    }
}

/// The sidecar's last words on one line, for an error message.
fn tail(lines: &Arc<Mutex<Vec<String>>>) -> String {
    let lines = lines.lock().map(|l| l.join(" / ")).unwrap_or_default();
    if lines.is_empty() {
        String::new()
    } else {
        format!(": {lines}")
    }
}
