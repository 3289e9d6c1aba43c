//! [`WebDevice`]: the [`Driver`] over one app page in headless Chromium.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use chromiumoxide::cdp::browser_protocol::browser::BrowserContextId;
use chromiumoxide::cdp::browser_protocol::emulation::SetDeviceMetricsOverrideParams;
use chromiumoxide::cdp::browser_protocol::inspector::{self, EventTargetCrashed};
use chromiumoxide::cdp::browser_protocol::network::{
    self, EventLoadingFailed, EventLoadingFinished, EventRequestWillBeSent,
};
use chromiumoxide::cdp::browser_protocol::page::{
    AddScriptToEvaluateOnNewDocumentParams, CaptureScreenshotFormat, EventFrameNavigated,
    GetNavigationHistoryParams, NavigateParams, NavigateToHistoryEntryParams, ReloadParams,
};
use chromiumoxide::cdp::browser_protocol::performance::{self, GetMetricsParams};
use chromiumoxide::cdp::browser_protocol::target::{CreateBrowserContextParams, CreateTargetParams};
use chromiumoxide::cdp::js_protocol::runtime::{
    self, ConsoleApiCalledType, EventConsoleApiCalled, EventExceptionThrown, ExceptionDetails, RemoteObject,
};
use chromiumoxide::page::ScreenshotParams;
use chromiumoxide::{Browser, Page};
use futures::StreamExt;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use uatu_device::model::*;
use uatu_device::{DeviceError, Driver};

use crate::chromium::{self, Chromium};
use crate::{BrowserSource, WebConfig, WebError, evidence, input, sdk};

/// Watches DOM mutations and scrolling from the first script of every
/// document: idle needs to know how long ago the page last changed. A heartbeat
/// says whether the page's event loop ran lately: on a busy machine the renderer
/// can be descheduled, and a gap in which the page could not run its timers is
/// no evidence that it is still.
const IDLE_OBSERVER: &str = r#"(() => {
  if (window.__uatuIdle) return;
  const state = { last: performance.now(), beat: performance.now() };
  window.__uatuIdle = state;
  const touch = () => { state.last = performance.now(); };
  new MutationObserver(touch)
    .observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
  document.addEventListener('scroll', touch, { capture: true, passive: true });
  // The heartbeat, every 10 ms of the page's time.
  setInterval(() => { state.beat = performance.now(); }, 10);
})()"#;

/// Milliseconds since the page's last DOM mutation; 0 when the heartbeat has
/// not run for 50 ms, five of its periods (the page was starved, so its own
/// timers may be about to change it).
const SINCE_MUTATION: &str = "(() => { const s = window.__uatuIdle; if (!s) return 1e9; \
  const now = performance.now(); return now - s.beat > 50 ? 0 : now - s.last; })()";

const HIERARCHY: &str = include_str!("hierarchy.js");

/// How often idle is polled.
const IDLE_POLL: Duration = Duration::from_millis(10);

/// How many console entries are kept for `recent_logs`.
const MAX_LOGS: usize = 10_000;

/// The web device. Dropping it closes the browser it started.
pub struct WebDevice {
    shared: Arc<Shared>,
    describe: String,
    websocket: String,
    handler: JoinHandle<()>,
    sdk: Option<JoinHandle<()>>,
    shutdown: watch::Sender<bool>,
    // Last: the browser dies after the connection to it is gone.
    chromium: Option<Chromium>,
}

/// What the driver calls, the CDP event tasks and the SDK client share.
pub(crate) struct Shared {
    pub browser: Browser,
    pub config: WebConfig,
    started: Instant,
    app: tokio::sync::Mutex<Option<AppPage>>,
    events: Mutex<PageEvents>,
    /// Bumped whenever the app page opens, closes or crashes.
    pub changes: watch::Sender<u64>,
    pub clicks: Mutex<input::ClickCounter>,
    cpu: Mutex<CpuMeter>,
}

/// The renderer's main-thread busy share between two metrics calls.
#[derive(Default)]
struct CpuMeter {
    last: Option<(f64, Instant)>,
}

impl CpuMeter {
    /// The share (0..1) of the time since the last call that `task_seconds`
    /// (a running total) grew by; 0 on the first call.
    fn share(&mut self, task_seconds: f64, now: Instant) -> f64 {
        let share = match self.last {
            Some((before, at)) if now > at => {
                ((task_seconds - before) / now.duration_since(at).as_secs_f64()).clamp(0.0, 1.0)
            }
            _ => 0.0,
        };
        self.last = Some((task_seconds, now));
        share
    }
}

/// One app page: a target in the run's browser context.
struct AppPage {
    page: Page,
    context: BrowserContextId,
    listener: JoinHandle<()>,
}

/// What the page reported through CDP events.
#[derive(Default)]
pub(crate) struct PageEvents {
    logs: Vec<LogEntry>,
    /// Uncaught exceptions not yet delivered to the host in a STATE.
    exceptions: Vec<ExceptionInfo>,
    inflight: HashSet<String>,
    network_changed: Option<Instant>,
    /// When input was last sent: the page may not have reacted yet (a wheel
    /// scrolls a frame or two later), so idle waits a settle interval after it.
    last_input: Option<Instant>,
    /// Which page instance (1, 2, …) is current; 0 before the first launch.
    pub generation: u64,
    /// Why the current page is dead: it crashed or left the app's origin.
    pub dead: Option<String>,
}

impl WebDevice {
    /// Starts (or connects to) the browser. With `agent_socket`, an in-process
    /// SDK client reports the page's snapshots and exceptions to the host there.
    pub async fn start(config: WebConfig, agent_socket: Option<PathBuf>) -> Result<WebDevice, WebError> {
        if !matches!(config.url.scheme(), "http" | "https") {
            return Err(WebError::NotWeb {
                url: config.url.to_string(),
            });
        }
        let (chromium, websocket) = match &config.browser {
            BrowserSource::Launch { executable } => {
                let executable = chromium::executable(executable.as_deref());
                let chromium =
                    tokio::task::block_in_place(|| Chromium::launch(&executable, config.viewport))?;
                let websocket = chromium.websocket.clone();
                (Some(chromium), websocket)
            }
            BrowserSource::Connect { websocket } => (None, websocket.clone()),
        };
        let (browser, mut handler) =
            Browser::connect(websocket.clone())
                .await
                .map_err(|error| WebError::Connect {
                    websocket: websocket.clone(),
                    message: error.to_string(),
                })?;
        let handler = tokio::spawn(async move {
            // Each item is one processed message; the stream ends with the connection.
            while handler.next().await.is_some() {}
        });
        let describe = match &chromium {
            Some(chromium) => format!("web {} (chromium pid {})", config.url, chromium.pid()),
            None => format!("web {} (browser at {websocket})", config.url),
        };
        let shared = Arc::new(Shared {
            browser,
            config,
            started: Instant::now(),
            app: tokio::sync::Mutex::new(None),
            events: Mutex::new(PageEvents::default()),
            changes: watch::channel(0).0,
            clicks: Mutex::new(input::ClickCounter::default()),
            cpu: Mutex::new(CpuMeter::default()),
        });
        let (shutdown, shutdown_rx) = watch::channel(false);
        let sdk = agent_socket.map(|socket| {
            tokio::spawn(
                sdk::SdkClient {
                    shared: shared.clone(),
                    socket,
                    shutdown: shutdown_rx,
                }
                .run(),
            )
        });
        Ok(WebDevice {
            shared,
            describe,
            websocket,
            handler,
            sdk,
            shutdown,
            chromium,
        })
    }

    /// The profile directory of the browser this device started, if it started one.
    pub fn user_data_dir(&self) -> Option<&std::path::Path> {
        self.chromium.as_ref().map(Chromium::user_data_dir)
    }

    /// The browser's DevTools WebSocket, for tools that want to look at the same browser.
    pub fn devtools_websocket(&self) -> &str {
        &self.websocket
    }

    fn error(&self, call: &'static str, message: impl ToString) -> DeviceError {
        DeviceError::Call {
            call,
            device: self.describe.clone(),
            message: message.to_string(),
        }
    }

    /// The current app page, or an error naming `call` when none is open.
    async fn page(&self, call: &'static str) -> Result<Page, DeviceError> {
        match self.shared.app.lock().await.as_ref() {
            Some(app) => Ok(app.page.clone()),
            None => Err(self.error(call, "no app page is open: launch the app first")),
        }
    }

    async fn open_page(&self, context: BrowserContextId) -> Result<AppPage, DeviceError> {
        let call = "Launch";
        let browser = &self.shared.browser;
        let mut target = CreateTargetParams::new("about:blank");
        target.browser_context_id = Some(context.clone());
        let page = browser.new_page(target).await.map_err(|e| self.error(call, e))?;
        let generation = {
            let mut events = self.shared.lock_events();
            events.generation += 1;
            events.dead = None;
            events.inflight.clear();
            events.generation
        };
        let listener = self.listen(&page, generation).await?;
        let (width, height) = self.shared.config.viewport;
        page.execute(SetDeviceMetricsOverrideParams::new(
            width as i64,
            height as i64,
            1.0,
            false,
        ))
        .await
        .map_err(|e| self.error(call, e))?;
        page.execute(AddScriptToEvaluateOnNewDocumentParams::new(IDLE_OBSERVER))
            .await
            .map_err(|e| self.error(call, e))?;
        page.goto(NavigateParams::new(self.shared.config.url.as_str()))
            .await
            .map_err(|e| self.error(call, format!("cannot open {}: {e}", self.shared.config.url)))?;
        self.shared.changes.send_modify(|n| *n += 1);
        Ok(AppPage {
            page,
            context,
            listener,
        })
    }

    /// Subscribes to the page's console, exceptions, network and crashes.
    async fn listen(&self, page: &Page, generation: u64) -> Result<JoinHandle<()>, DeviceError> {
        let call = "Launch";
        let err = |e: chromiumoxide::error::CdpError| self.error(call, e);
        let mut console = page
            .event_listener::<EventConsoleApiCalled>()
            .await
            .map_err(err)?;
        let mut exceptions = page.event_listener::<EventExceptionThrown>().await.map_err(err)?;
        let mut crashes = page.event_listener::<EventTargetCrashed>().await.map_err(err)?;
        let mut navigations = page.event_listener::<EventFrameNavigated>().await.map_err(err)?;
        let mut requests = page
            .event_listener::<EventRequestWillBeSent>()
            .await
            .map_err(err)?;
        let mut finished = page.event_listener::<EventLoadingFinished>().await.map_err(err)?;
        let mut failed = page.event_listener::<EventLoadingFailed>().await.map_err(err)?;
        for enabled in [
            page.execute(runtime::EnableParams::default()).await.map(|_| ()),
            page.execute(network::EnableParams::default()).await.map(|_| ()),
            page.execute(inspector::EnableParams::default()).await.map(|_| ()),
            page.execute(performance::EnableParams::default())
                .await
                .map(|_| ()),
        ] {
            enabled.map_err(err)?;
        }
        let shared = self.shared.clone();
        let origin = shared.config.url.origin();
        Ok(tokio::spawn(async move {
            loop {
                let now = shared.now_ms();
                tokio::select! {
                    Some(event) = console.next() => shared.push_log(console_entry(&event, now)),
                    Some(event) = exceptions.next() => {
                        shared.lock_events().exceptions.push(exception_info(&event.exception_details, now));
                    }
                    Some(_) = crashes.next() => shared.kill(generation, "WebPageCrashed: the page crashed".into()),
                    Some(event) = navigations.next() => {
                        let left = event.frame.parent_id.is_none()
                            && url::Url::parse(&event.frame.url).is_ok_and(|url| url.origin() != origin);
                        if left {
                            shared.kill(generation, format!(
                                "WebPageLeftApp: the page navigated off the app's origin to {}", event.frame.url));
                        }
                    }
                    Some(event) = requests.next() => if goes_over_the_network(&event.request.url) {
                        shared.network(|inflight| {
                            inflight.insert(event.request_id.inner().clone());
                        })
                    },
                    Some(event) = finished.next() => shared.network(|inflight| {
                        inflight.remove(event.request_id.inner());
                    }),
                    Some(event) = failed.next() => shared.network(|inflight| {
                        inflight.remove(event.request_id.inner());
                    }),
                    else => return,
                }
            }
        }))
    }

    /// Sends one input's events, in order.
    async fn dispatch<T: chromiumoxide::types::Command>(
        &self,
        call: &'static str,
        commands: Vec<T>,
    ) -> Result<(), DeviceError> {
        let page = self.page(call).await?;
        for command in commands {
            page.execute(command).await.map_err(|e| self.error(call, e))?;
        }
        self.shared.lock_events().last_input = Some(Instant::now());
        Ok(())
    }

    /// Readies the page to see an input of `expect` arrive (at `touch`, when it has a
    /// point); the refusal to send when the element meant is gone, or (with
    /// `editable`) when no focused element takes text.
    async fn prepare(
        &self,
        call: &'static str,
        expect: evidence::Expect,
        touch: Option<&Touch>,
        editable: bool,
    ) -> Result<Option<InputOutcome>, DeviceError> {
        let answer = self
            .shared
            .evaluate(&evidence::prepare(expect, touch, editable))
            .await
            .map_err(|e| self.error(call, e))?;
        let check = serde_json::from_value(answer).map_err(|e| DeviceError::InvalidAnswer {
            call,
            device: self.describe.clone(),
            message: format!("the page's input check answered something else: {e}"),
        })?;
        let now = self.shared.now_ms();
        Ok(match check {
            evidence::Check::Ready => None,
            evidence::Check::Gone { found } => {
                let bounds = touch.and_then(|touch| touch.element).unwrap_or_default();
                Some(InputOutcome::refused(
                    format!(
                        "the element at [{},{}][{},{}] is no longer there: {found} is at the point",
                        bounds.left, bounds.top, bounds.right, bounds.bottom
                    ),
                    now,
                ))
            }
            evidence::Check::NotEditable { focused } => Some(InputOutcome::refused(
                format!("no focused text field ({focused} has the focus)"),
                now,
            )),
        })
    }

    /// The outcome of an input sent after [`WebDevice::prepare`]: confirmed when the
    /// expected events arrived where they were aimed.
    ///
    /// Events that all arrived outside the element meant say it was gone by the time
    /// they did: the input is reported as not delivered to it.
    async fn evidence(&self) -> InputOutcome {
        let seen = match self.shared.evaluate(evidence::READ).await {
            Ok(answer) => serde_json::from_value::<evidence::Seen>(answer).ok(),
            // The page navigated or closed under the input: no evidence either way.
            Err(_) => None,
        };
        let now = self.shared.now_ms();
        match seen {
            Some(seen) if seen.landed > 0 => InputOutcome::confirmed(now),
            Some(seen) if seen.missed > 0 => InputOutcome::refused(
                format!(
                    "the input arrived on {} instead: the element meant moved or vanished as it was touched",
                    seen.missed_on
                ),
                now,
            ),
            _ => InputOutcome::delivered(now),
        }
    }

    /// One input: prepared, sent, and read back.
    async fn checked<T: chromiumoxide::types::Command>(
        &self,
        call: &'static str,
        expect: evidence::Expect,
        touch: Option<&Touch>,
        commands: Vec<T>,
    ) -> Result<InputOutcome, DeviceError> {
        if let Some(refused) = self.prepare(call, expect, touch, false).await? {
            return Ok(refused);
        }
        self.dispatch(call, commands).await?;
        Ok(self.evidence().await)
    }

    /// The app's page at `url` (resolved against the app's address), unless it is
    /// on another origin.
    fn app_address(&self, url: &str) -> Result<url::Url, String> {
        let app = &self.shared.config.url;
        let address = app
            .join(url)
            .map_err(|e| format!("`{url}` is not an address: {e}"))?;
        if address.origin() != app.origin() {
            return Err(format!(
                "{address} is not on the app's origin {}: uatu navigates only within the app",
                app.origin().ascii_serialization()
            ));
        }
        Ok(address)
    }

    /// Back or forward through the page's history, to an entry of the app's origin.
    async fn through_history(&self, page: &Page, back: bool) -> Result<InputOutcome, DeviceError> {
        let call = "Navigate";
        let history = page
            .execute(GetNavigationHistoryParams::default())
            .await
            .map_err(|e| self.error(call, e))?;
        let current = history.result.current_index;
        let wanted = if back { current - 1 } else { current + 1 };
        let now = self.shared.now_ms();
        let Some(entry) = usize::try_from(wanted)
            .ok()
            .and_then(|index| history.result.entries.get(index))
        else {
            let which = if back { "earlier" } else { "later" };
            return Ok(InputOutcome::refused(
                format!("no {which} page in the history"),
                now,
            ));
        };
        if let Err(outside) = self.app_address(&entry.url) {
            let which = if back { "the page before" } else { "the page after" };
            return Ok(InputOutcome::refused(
                format!("{which} is not the app's: {outside}"),
                now,
            ));
        }
        page.execute(NavigateToHistoryEntryParams::new(entry.id))
            .await
            .map_err(|e| self.error(call, e))?;
        self.shared.lock_events().last_input = Some(Instant::now());
        Ok(InputOutcome::confirmed(self.shared.now_ms()))
    }

    /// Keys, text and wheels between two taps keep them from being a double click.
    fn interrupt_clicks(&self) {
        if let Ok(mut clicks) = self.shared.clicks.lock() {
            clicks.interrupt();
        }
    }

    /// Settling and capturing between two taps is not the user's time: the
    /// double-click window restarts when they end (see [`input::ClickCounter`]).
    fn observed<T>(&self, result: T) -> T {
        if let Ok(mut clicks) = self.shared.clicks.lock() {
            clicks.observed();
        }
        result
    }

    async fn close_app(&self, dispose_context: bool) {
        let app = self.shared.app.lock().await.take();
        if let Some(app) = app {
            app.listener.abort();
            // A page or context that is already gone needs no closing.
            let _ = app.page.close().await;
            if dispose_context {
                let _ = self.shared.browser.dispose_browser_context(app.context).await;
            }
        }
        self.shared.changes.send_modify(|n| *n += 1);
    }
}

impl Drop for WebDevice {
    fn drop(&mut self) {
        let _ = self.shutdown.send(true);
        if let Some(sdk) = &self.sdk {
            sdk.abort();
        }
        self.handler.abort();
        // `chromium` drops after this body: the browser's process group is killed then.
    }
}

impl Shared {
    pub fn now_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    pub fn lock_events(&self) -> MutexGuard<'_, PageEvents> {
        // A poisoned lock only means a listener panicked mid-push; the data is still usable.
        self.events
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn push_log(&self, entry: LogEntry) {
        let mut events = self.lock_events();
        if events.logs.len() >= MAX_LOGS {
            events.logs.remove(0);
        }
        events.logs.push(entry);
    }

    fn network(&self, change: impl FnOnce(&mut HashSet<String>)) {
        let mut events = self.lock_events();
        change(&mut events.inflight);
        events.network_changed = Some(Instant::now());
    }

    /// Marks page `generation` dead (crashed, or left the app) and tells the SDK client.
    fn kill(&self, generation: u64, reason: String) {
        let mut events = self.lock_events();
        if events.generation == generation && events.dead.is_none() {
            events.dead = Some(reason);
            drop(events);
            self.changes.send_modify(|n| *n += 1);
        }
    }

    /// The uncaught exceptions since the last call.
    pub fn take_exceptions(&self) -> Vec<ExceptionInfo> {
        std::mem::take(&mut self.lock_events().exceptions)
    }

    /// Evaluates `expression` in the app page; the value is JSON.
    pub async fn evaluate(&self, expression: &str) -> Result<serde_json::Value, String> {
        let page = match self.app.lock().await.as_ref() {
            Some(app) => app.page.clone(),
            None => return Err("no app page is open".into()),
        };
        let result = page
            .evaluate_expression(expression)
            .await
            .map_err(|e| e.to_string())?;
        Ok(result.value().cloned().unwrap_or(serde_json::Value::Null))
    }
}

/// Whether a request the page makes can keep it busy. `data:` and `blob:` URLs are
/// read from memory; Chromium does not always follow their `requestWillBeSent` with
/// `loadingFinished` (seen with todomvc-app-css's checkbox SVGs), and one such request
/// counted as in flight kept every later step waiting for the idle cap.
fn goes_over_the_network(url: &str) -> bool {
    !(url.starts_with("data:") || url.starts_with("blob:"))
}

fn console_entry(event: &EventConsoleApiCalled, time: u64) -> LogEntry {
    let level = match event.r#type {
        ConsoleApiCalledType::Error | ConsoleApiCalledType::Assert => LogLevel::Error,
        ConsoleApiCalledType::Warning => LogLevel::Warn,
        ConsoleApiCalledType::Debug | ConsoleApiCalledType::Trace => LogLevel::Debug,
        _ => LogLevel::Info,
    };
    let message = event.args.iter().map(remote_text).collect::<Vec<_>>().join(" ");
    LogEntry {
        time,
        level,
        tag: "console".into(),
        message,
    }
}

/// How the console would print one argument.
fn remote_text(object: &RemoteObject) -> String {
    match &object.value {
        Some(serde_json::Value::String(text)) => text.clone(),
        Some(value) => value.to_string(),
        None => object.description.clone().unwrap_or_default(),
    }
}

fn exception_info(details: &ExceptionDetails, time: u64) -> ExceptionInfo {
    let description = details
        .exception
        .as_ref()
        .and_then(|e| {
            e.description
                .clone()
                .or_else(|| e.value.as_ref().map(|v| v.to_string()))
        })
        .unwrap_or_else(|| details.text.clone());
    let class = details
        .exception
        .as_ref()
        .and_then(|e| e.class_name.clone())
        .unwrap_or_else(|| "Error".into());
    let first_line = description.lines().next().unwrap_or_default();
    let message = first_line
        .strip_prefix(&format!("{class}: "))
        .unwrap_or(first_line)
        .to_owned();
    ExceptionInfo {
        class,
        message,
        stack: description,
        time,
    }
}

#[async_trait]
impl Driver for WebDevice {
    fn describe(&self) -> String {
        self.describe.clone()
    }

    /// Opens the app's URL in a new page; `clear_state` also starts a new
    /// browser context, so storage, cookies and caches start empty.
    async fn launch(
        &self,
        _bundle_id: &str,
        clear_state: bool,
        _launcher_activity: Option<&str>,
    ) -> Result<u64, DeviceError> {
        let kept_context = {
            let app = self.shared.app.lock().await;
            app.as_ref().map(|app| app.context.clone())
        };
        self.close_app(clear_state).await;
        let context = match (clear_state, kept_context) {
            (false, Some(context)) => context,
            _ => self
                .shared
                .browser
                .create_browser_context(CreateBrowserContextParams::default())
                .await
                .map_err(|e| self.error("Launch", e))?,
        };
        let app = self.open_page(context).await?;
        *self.shared.app.lock().await = Some(app);
        Ok(self.shared.now_ms())
    }

    async fn terminate(&self, _bundle_id: &str) -> Result<(), DeviceError> {
        self.close_app(false).await;
        Ok(())
    }

    async fn tap(&self, touch: Touch) -> Result<InputOutcome, DeviceError> {
        let clicks = self
            .shared
            .clicks
            .lock()
            .map_or(1, |mut c| c.click_at(touch.point));
        self.checked(
            "Tap",
            evidence::Expect::PointerDown,
            Some(&touch),
            input::mouse_click(touch.point, clicks),
        )
        .await
    }

    /// Two presses counted 1 and 2 (`dblclick`), a double tap on its own: a tap
    /// just before or after it does not make it a triple click.
    async fn double_tap(&self, touch: Touch) -> Result<InputOutcome, DeviceError> {
        self.interrupt_clicks();
        let outcome = self
            .checked(
                "DoubleTap",
                evidence::Expect::PointerDown,
                Some(&touch),
                input::double_click(touch.point),
            )
            .await;
        self.interrupt_clicks();
        outcome
    }

    /// The button held down at the point for `duration`, then released.
    async fn long_press(&self, touch: Touch, duration: Duration) -> Result<InputOutcome, DeviceError> {
        let call = "LongPress";
        self.interrupt_clicks();
        if let Some(refused) = self
            .prepare(call, evidence::Expect::PointerDown, Some(&touch), false)
            .await?
        {
            return Ok(refused);
        }
        let mut pressed = vec![input::mouse_move(touch.point)];
        pressed.extend(input::mouse_press(touch.point, 1));
        self.dispatch(call, pressed).await?;
        let held = self.evidence().await;
        tokio::time::sleep(duration).await;
        self.dispatch(call, vec![input::mouse_release(touch.point, 1)])
            .await?;
        self.interrupt_clicks();
        Ok(InputOutcome {
            device_time_ms: self.shared.now_ms(),
            ..held
        })
    }

    /// A wheel turned at the point by `distance` pixels.
    async fn scroll(
        &self,
        touch: Touch,
        direction: ScrollDirection,
        distance: u32,
    ) -> Result<InputOutcome, DeviceError> {
        self.interrupt_clicks();
        let (delta_x, delta_y) = direction.delta(i32::try_from(distance).unwrap_or(i32::MAX));
        self.checked(
            "Scroll",
            evidence::Expect::Wheel,
            Some(&touch),
            vec![input::wheel_by(touch.point, delta_x, delta_y)],
        )
        .await
    }

    /// Control+A and Backspace in the focused field; refused when the focus is not
    /// on an element that takes text.
    async fn clear_text(&self) -> Result<InputOutcome, DeviceError> {
        let call = "ClearText";
        self.interrupt_clicks();
        if let Some(refused) = self.prepare(call, evidence::Expect::Input, None, true).await? {
            return Ok(refused);
        }
        self.dispatch(call, input::clear_field()).await?;
        Ok(self.evidence().await)
    }

    /// The page's own history (back and forward to pages of the app's origin only),
    /// a reload, or an address on the app's origin.
    async fn navigate(&self, to: &Navigation) -> Result<InputOutcome, DeviceError> {
        let call = "Navigate";
        self.interrupt_clicks();
        let page = self.page(call).await?;
        match to {
            Navigation::Back => self.through_history(&page, true).await,
            Navigation::Forward => self.through_history(&page, false).await,
            Navigation::Reload => {
                page.execute(ReloadParams::default())
                    .await
                    .map_err(|e| self.error(call, e))?;
                self.shared.lock_events().last_input = Some(Instant::now());
                Ok(InputOutcome::confirmed(self.shared.now_ms()))
            }
            Navigation::To(url) => {
                let address = match self.app_address(url) {
                    Ok(address) => address,
                    Err(refusal) => return Ok(InputOutcome::refused(refusal, self.shared.now_ms())),
                };
                // Through the page's own `location`, not CDP's Page.navigate: chromiumoxide
                // waits for a load event after Page.navigate, and a change of the fragment
                // alone (`#/active`, how most single-page apps route) never loads anything.
                let assign = format!("location.assign({})", serde_json::Value::from(address.as_str()));
                let assigned = self.shared.evaluate(&assign).await;
                self.shared.lock_events().last_input = Some(Instant::now());
                Ok(match assigned {
                    Ok(_) => InputOutcome::confirmed(self.shared.now_ms()),
                    // The old document went away under the evaluation: sent, no answer.
                    Err(error) => InputOutcome {
                        detail: format!("no answer from the page as it navigated to {address}: {error}"),
                        ..InputOutcome::delivered(self.shared.now_ms())
                    },
                })
            }
        }
    }

    async fn tap_selector(&self, selector: &DeviceSelector) -> Result<InputOutcome, DeviceError> {
        let hierarchy = self.hierarchy().await?;
        let found = hierarchy.root.descendants().find(|node| match selector {
            DeviceSelector::ResourceId(id) => node.id == *id,
            DeviceSelector::Text(text) => node.text == *text,
            DeviceSelector::ContentDescription(desc) => node.desc == *desc,
        });
        match found {
            Some(node) => self.tap(Touch::on(node.bounds)).await,
            None => Ok(InputOutcome::refused(
                format!("nothing on the page matches {selector:?}"),
                self.shared.now_ms(),
            )),
        }
    }

    async fn input_text(&self, text: &str) -> Result<InputOutcome, DeviceError> {
        self.interrupt_clicks();
        self.checked("InputText", evidence::Expect::Input, None, input::typing(text))
            .await
    }

    async fn swipe(&self, from: Point, to: Point, _duration: Duration) -> Result<InputOutcome, DeviceError> {
        self.interrupt_clicks();
        self.checked(
            "Swipe",
            evidence::Expect::Wheel,
            Some(&Touch::at(from)),
            vec![input::wheel(from, to)],
        )
        .await
    }

    async fn press_key(&self, key: Key) -> Result<InputOutcome, DeviceError> {
        self.interrupt_clicks();
        self.checked(
            "PressKey",
            evidence::Expect::KeyDown,
            None,
            input::key_press(input::web_key(key)),
        )
        .await
    }

    async fn sleep(&self, duration: Duration) -> Result<InputOutcome, DeviceError> {
        tokio::time::sleep(duration).await;
        Ok(InputOutcome::confirmed(self.shared.now_ms()))
    }

    async fn screenshot(&self) -> Result<Screenshot, DeviceError> {
        let page = self.page("Screenshot").await?;
        let png = page
            .screenshot(
                ScreenshotParams::builder()
                    .format(CaptureScreenshotFormat::Png)
                    .build(),
            )
            .await
            .map_err(|e| self.error("Screenshot", e))?;
        let (width, height) =
            image::ImageReader::with_format(std::io::Cursor::new(&png), image::ImageFormat::Png)
                .into_dimensions()
                .map_err(|e| self.error("Screenshot", format!("the browser sent an unreadable PNG: {e}")))?;
        Ok(self.observed(Screenshot { png, width, height }))
    }

    async fn hierarchy(&self) -> Result<Hierarchy, DeviceError> {
        let page = self.page("Hierarchy").await?;
        let result = page
            .evaluate_expression(HIERARCHY)
            .await
            .map_err(|e| self.error("Hierarchy", e))?;
        let hierarchy = result
            .into_value::<Hierarchy>()
            .map_err(|e| DeviceError::InvalidAnswer {
                call: "Hierarchy",
                device: self.describe.clone(),
                message: e.to_string(),
            });
        self.observed(hierarchy)
    }

    async fn recent_logs(&self, since_ms: u64, min_level: LogLevel) -> Result<Vec<LogEntry>, DeviceError> {
        let events = self.shared.lock_events();
        Ok(events
            .logs
            .iter()
            .filter(|entry| entry.time > since_ms && entry.level >= min_level)
            .cloned()
            .collect())
    }

    /// Waits until no request is in flight and neither input, network nor the
    /// DOM (or scrolling) has changed for the settle interval, for at most
    /// `timeout` (and the configured cap).
    async fn wait_for_idle(&self, timeout: Duration) -> Result<IdleOutcome, DeviceError> {
        let page = self.page("WaitForIdle").await?;
        let settle = self.shared.config.settle;
        let deadline = Instant::now() + timeout.min(self.shared.config.idle_cap);
        loop {
            let quiet = {
                let events = self.shared.lock_events();
                let settled = |at: Option<Instant>| at.is_none_or(|at| at.elapsed() >= settle);
                events.dead.is_some()
                    || (events.inflight.is_empty()
                        && settled(events.network_changed)
                        && settled(events.last_input))
            };
            let since_mutation = match page.evaluate_expression(SINCE_MUTATION).await {
                Ok(result) => result.into_value::<f64>().unwrap_or(f64::MAX),
                // A page that is navigating or gone has nothing left to settle.
                Err(_) => f64::MAX,
            };
            let idle = quiet && since_mutation >= settle.as_millis() as f64;
            if idle || Instant::now() >= deadline {
                return Ok(self.observed(IdleOutcome {
                    idle,
                    device_time_ms: self.shared.now_ms(),
                }));
            }
            tokio::time::sleep(IDLE_POLL).await;
        }
    }

    async fn health(&self) -> Result<Health, DeviceError> {
        let version = self
            .shared
            .browser
            .version()
            .await
            .map_err(|e| DeviceError::Unreachable {
                device: self.describe.clone(),
                message: e.to_string(),
            })?;
        Ok(Health {
            ready: true,
            version: version.product,
            platform: "web".into(),
        })
    }

    /// The page's JavaScript heap in use, and the share of the last second the
    /// renderer's main thread spent on tasks.
    async fn metrics(&self) -> Result<Metrics, DeviceError> {
        let page = self.page("Metrics").await?;
        let metrics = page
            .execute(GetMetricsParams::default())
            .await
            .map_err(|e| self.error("Metrics", e))?;
        let value = |name: &str| {
            metrics
                .result
                .metrics
                .iter()
                .find(|m| m.name == name)
                .map_or(0.0, |m| m.value)
        };
        let task_seconds = value("TaskDuration");
        let cpu_percent = self
            .shared
            .cpu
            .lock()
            .map_or(0.0, |mut cpu| cpu.share(task_seconds, Instant::now()) * 100.0);
        Ok(self.observed(Metrics {
            cpu_percent,
            memory_bytes: value("JSHeapUsedSize") as u64,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::goes_over_the_network;

    #[test]
    fn data_and_blob_urls_never_count_as_network_requests() {
        assert!(!goes_over_the_network("data:image/svg+xml;utf8,%3Csvg%3E"));
        assert!(!goes_over_the_network("blob:http://127.0.0.1:8080/1b2c"));
        assert!(goes_over_the_network("http://127.0.0.1:8080/learn.json"));
        assert!(goes_over_the_network("https://example.invalid/app.js"));
    }
}
