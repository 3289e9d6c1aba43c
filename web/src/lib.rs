//! The web device: a web app in headless Chromium, driven over the Chrome
//! DevTools Protocol (with `chromiumoxide`) behind uatu-device's [`Driver`].
//!
//! - `chromium`: the browser process, stopped on drop and when the host dies;
//! - `device`: the driver over one app page in an isolated browser context,
//!   with its console, exceptions, network activity and crash state;
//! - `input`: mouse, wheel and key events;
//! - `sdk`: an in-process SDK client that answers the host's PAUSE over the
//!   real agent socket with the page's `window.__uatu.snapshots()` and its
//!   uncaught exceptions, as an app's SDK would.
//!
//! `docs/devices.md` ("## Web") says what each `Node` field carries.

#![forbid(unsafe_code)]

pub mod chromium;
mod device;
mod evidence;
mod input;
mod sdk;

use std::path::PathBuf;
use std::time::Duration;

pub use device::WebDevice;

/// How to reach a browser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BrowserSource {
    /// Start this Chromium executable (Debian's `/usr/bin/chromium` when `None`).
    Launch { executable: Option<PathBuf> },
    /// Use an already running browser's DevTools WebSocket (`ws://…/devtools/browser/…`).
    Connect { websocket: String },
}

/// What the web device drives and how it decides the page is idle.
#[derive(Debug, Clone, PartialEq)]
pub struct WebConfig {
    /// The app's start page; its origin is the app (navigating elsewhere is a crash).
    pub url: url::Url,
    pub browser: BrowserSource,
    /// The viewport in CSS pixels (the screen size the hierarchy reports).
    pub viewport: (u32, u32),
    /// Idle means no request in flight and no DOM mutation for this long.
    pub settle: Duration,
    /// The longest any wait for idle lasts, whatever the host allows.
    pub idle_cap: Duration,
    /// The app id the in-process SDK says in HELLO.
    pub app_id: String,
}

impl WebConfig {
    pub fn new(url: url::Url) -> WebConfig {
        WebConfig {
            app_id: url.origin().ascii_serialization(),
            url,
            browser: BrowserSource::Launch { executable: None },
            viewport: (1024, 1400),
            settle: Duration::from_millis(50),
            idle_cap: Duration::from_secs(3),
        }
    }
}

/// A web device failure outside a [`Driver`] call (those are `DeviceError`s).
#[derive(Debug, thiserror::Error)]
pub enum WebError {
    #[error(
        "cannot start the browser {executable}: {source} (install Debian's `chromium`, or pass --cdp ws://…)"
    )]
    Spawn {
        executable: PathBuf,
        source: std::io::Error,
    },
    #[error("the browser {executable} exited before it opened DevTools; its last output:\n{output}")]
    BrowserExited { executable: PathBuf, output: String },
    #[error("the browser {executable} did not open DevTools within {after:?}")]
    BrowserStartTimeout { executable: PathBuf, after: Duration },
    #[error("cannot create a browser profile directory: {source}")]
    Profile { source: std::io::Error },
    #[error("cannot start the browser's watchdog: {source}")]
    Watchdog { source: std::io::Error },
    #[error("cannot connect to the browser's DevTools at {websocket}: {message}")]
    Connect { websocket: String, message: String },
    #[error("`{url}` is not a web app address: use http:// or https://")]
    NotWeb { url: String },
}
