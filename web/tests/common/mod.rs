//! A local static server for the test pages, and a web device on it.

#![allow(dead_code)]

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tower_http::services::ServeDir;
use uatu_web::{WebConfig, WebDevice};

/// Serves `dir` on 127.0.0.1 until the test's runtime ends; returns the address.
pub async fn serve(dir: impl AsRef<Path>) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("address");
    let app = axum::Router::new().fallback_service(ServeDir::new(dir.as_ref()));
    tokio::spawn(async move { axum::serve(listener, app).await });
    addr
}

pub fn pages() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/pages")
}

pub fn config(addr: SocketAddr, page: &str) -> WebConfig {
    let mut config = WebConfig::new(format!("http://{addr}/{page}").parse().expect("url"));
    config.viewport = (800, 600);
    config.idle_cap = Duration::from_secs(2);
    config
}

/// A device on `page` of the test pages, launched.
pub async fn launched(page: &str, agent: Option<PathBuf>) -> WebDevice {
    use uatu_device::Driver;
    let addr = serve(pages()).await;
    let device = WebDevice::start(config(addr, page), agent)
        .await
        .expect("start the web device");
    device.launch("web", true, None).await.expect("launch");
    device
}

/// The pids of live processes whose command line mentions `needle`.
pub fn processes_mentioning(needle: &str) -> Vec<u32> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in entries.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        if String::from_utf8_lossy(&cmdline).contains(needle) && !is_zombie(pid) {
            found.push(pid);
        }
    }
    found
}

fn is_zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z'))
    })
}

/// Polls until no process mentions `needle`, for at most `limit`; the pids left.
pub fn wait_until_none_mention(needle: &str, limit: Duration) -> Vec<u32> {
    let deadline = std::time::Instant::now() + limit;
    loop {
        let left = processes_mentioning(needle);
        if left.is_empty() || std::time::Instant::now() >= deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}
