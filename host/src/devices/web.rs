//! `--device web`: a web app in headless Chromium (`uatu-web`), driven over the
//! Chrome DevTools Protocol, its in-process SDK answering on the real SDK socket.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use uatu_device::agent::AgentListener;
use uatu_web::{BrowserSource, WebConfig, WebDevice};

use super::kind::{Check, ConnectError, Device, DeviceKind, unknown_device};
use crate::settings::ConfigError;

/// The kind's name in `--device`.
pub const NAME: &str = "web";

/// The web device's options (flags and `uatu.toml` keys); each applies to `--device web` only.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(rename_all = "kebab-case")]
pub struct WebOptions {
    /// Web only: the app's start page, e.g. `http://127.0.0.1:8080/`.
    #[cfg_attr(feature = "cli", arg(long, value_name = "URL"))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,

    /// Web only: drive an already running browser at this DevTools WebSocket (`ws://…`) instead of starting `chromium`.
    #[cfg_attr(feature = "cli", arg(long, value_name = "WS"))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cdp: Option<String>,
}

impl WebOptions {
    /// This layer over `lower`: a value set here wins.
    pub fn over(self, lower: WebOptions) -> WebOptions {
        WebOptions {
            url: self.url.or(lower.url),
            cdp: self.cdp.or(lower.cdp),
        }
    }
}

/// The web app a run drives, and the browser it runs in.
#[derive(Debug, Clone, PartialEq)]
pub struct WebChoice {
    /// The app's start page.
    pub url: url::Url,
    /// A running browser's DevTools WebSocket; `None`: start Debian's `chromium`.
    pub cdp: Option<String>,
}

/// `--device web` with `options`: `url` is required, `cdp` optional.
pub fn resolve(argument: Option<&str>, options: &WebOptions) -> Result<WebChoice, ConfigError> {
    if let Some(argument) = argument {
        return Err(unknown_device(&format!("{NAME}:{argument}")));
    }
    let url = options.url.as_deref().ok_or_else(|| {
        ConfigError::invalid(
            "url",
            "`--device web` needs the app's address: --url http://127.0.0.1:PORT/",
        )
    })?;
    let url = url::Url::parse(url)
        .ok()
        .filter(|url| matches!(url.scheme(), "http" | "https"))
        .ok_or_else(|| {
            ConfigError::invalid("url", format!("`{url}` is not an http:// or https:// address"))
        })?;
    let cdp = match options.cdp.as_deref() {
        Some(ws) if ws.starts_with("ws://") || ws.starts_with("wss://") => Some(ws.to_owned()),
        Some(ws) => {
            return Err(ConfigError::invalid(
                "cdp",
                format!("`{ws}` is not a ws:// DevTools address"),
            ));
        }
        None => None,
    };
    Ok(WebChoice { url, cdp })
}

impl WebChoice {
    /// The options that open this app again: its page. Not `cdp`: a running browser's
    /// DevTools address belongs to that run, not to the app, so a replay starts its own
    /// browser unless `--cdp` gives one again (a recorded address could not be taken
    /// back by a flag).
    pub fn options(&self) -> WebOptions {
        WebOptions {
            url: Some(self.url.to_string()),
            cdp: None,
        }
    }
}

#[async_trait]
impl DeviceKind for WebChoice {
    fn describe(&self) -> String {
        NAME.into()
    }

    async fn connect(&self, agent: &AgentListener, _token: Option<String>) -> Result<Device, ConnectError> {
        let mut config = WebConfig::new(self.url.clone());
        if let Some(websocket) = &self.cdp {
            config.browser = BrowserSource::Connect {
                websocket: websocket.clone(),
            };
        }
        // The browser stops when the driver is dropped.
        let device = WebDevice::start(config, Some(agent.socket_path().to_path_buf()))
            .await
            .map_err(|error| ConnectError::start(self, error))?;
        Ok(Device {
            driver: Box::new(device),
            handle: None,
        })
    }

    /// The browser a web run starts: its version, or what is missing.
    fn preflight(&self) -> Vec<Check> {
        if let Some(cdp) = &self.cdp {
            return vec![Check::of("browser", Ok(format!("a running browser at {cdp}")))];
        }
        let executable = uatu_web::chromium::executable(None);
        vec![Check::of(
            "browser",
            uatu_web::chromium::version(&executable)
                .map(|version| format!("{version} ({})", executable.display()))
                .map_err(|error| error.to_string()),
        )]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_is_required_and_must_be_http() {
        let error = resolve(None, &WebOptions::default())
            .expect_err("no url")
            .to_string();
        assert!(error.starts_with("url") && error.contains("--url"), "{error}");
        let ftp = WebOptions {
            url: Some("ftp://example.invalid/".into()),
            cdp: None,
        };
        assert!(
            resolve(None, &ftp)
                .expect_err("ftp")
                .to_string()
                .starts_with("url")
        );
        let http = WebOptions {
            url: Some("http://127.0.0.1:8080/".into()),
            cdp: Some("http://not-a-websocket".into()),
        };
        assert!(
            resolve(None, &http)
                .expect_err("cdp")
                .to_string()
                .starts_with("cdp")
        );
    }

    #[test]
    fn the_recorded_options_choose_the_same_page_again() {
        let options = WebOptions {
            url: Some("http://127.0.0.1:8080/app".into()),
            cdp: Some("ws://127.0.0.1:9222/devtools/browser/x".into()),
        };
        let choice = resolve(None, &options).expect("resolves");
        let again = resolve(None, &choice.options()).expect("again");
        assert_eq!(again.url, choice.url);
        assert_eq!(again.cdp, None, "a replay starts its own browser");
    }
}
