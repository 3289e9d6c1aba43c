//! The gRPC implementation of [`Driver`]: a tonic client of `proto/driver.proto`,
//! served by the Maestro sidecar for real devices and by `uatu sim`.

use std::collections::BTreeSet;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use tonic::transport::{Channel, Endpoint};

use super::proto::android_device_client::AndroidDeviceClient;
use super::proto::driver_client::DriverClient;
use super::{DeviceError, Driver, proto};
use crate::model::*;

/// How long each call may take before it fails with [`DeviceError::Timeout`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallTimeouts {
    /// Establishing the connection in [`GrpcDriver::connect`].
    pub connect: Duration,
    /// Every call without a more specific limit below.
    pub default: Duration,
    /// Screenshots carry megabytes of PNG and are rendered on the device.
    pub screenshot: Duration,
    /// Added to the device-side duration of `WaitForIdle` and `Sleep`, which
    /// legitimately take that long.
    pub wait_margin: Duration,
}

impl Default for CallTimeouts {
    fn default() -> Self {
        Self {
            connect: Duration::from_secs(5),
            default: Duration::from_secs(5),
            screenshot: Duration::from_secs(15),
            wait_margin: Duration::from_secs(5),
        }
    }
}

/// A device reached over gRPC at one address.
#[derive(Debug, Clone)]
pub struct GrpcDriver {
    client: DriverClient<Channel>,
    /// The Android sidecar's own service on the same connection (`AndroidDevice`).
    android: AndroidDeviceClient<Channel>,
    address: String,
    timeouts: CallTimeouts,
    /// The `AndroidDevice` calls the server answered `UNIMPLEMENTED` (the simulator's
    /// server has no such service, an older sidecar lacks a call): not made again.
    unimplemented: Arc<Mutex<BTreeSet<&'static str>>>,
}

impl GrpcDriver {
    /// Connects to a driver server at `addr` (`host:port`, or a full
    /// `http://host:port` URI) and fails if it cannot be reached within
    /// `timeouts.connect`. A connection lost later is re-established on the next call.
    pub async fn connect(addr: &str, timeouts: CallTimeouts) -> Result<Self, DeviceError> {
        let uri = if addr.contains("://") {
            addr.to_string()
        } else {
            format!("http://{addr}")
        };
        let unreachable = |message: String| DeviceError::Unreachable {
            device: describe_address(addr),
            message,
        };
        let endpoint = Endpoint::from_shared(uri)
            .map_err(|e| unreachable(format!("invalid address {addr:?}: {e}")))?
            .connect_timeout(timeouts.connect);
        let channel = match tokio::time::timeout(timeouts.connect, endpoint.connect()).await {
            Ok(Ok(channel)) => channel,
            Ok(Err(e)) => return Err(unreachable(error_chain(&e))),
            Err(_) => return Err(unreachable(format!("no connection after {:?}", timeouts.connect))),
        };
        Ok(Self {
            client: DriverClient::new(channel.clone()).max_decoding_message_size(64 * 1024 * 1024),
            android: AndroidDeviceClient::new(channel),
            address: addr.to_string(),
            timeouts,
            unimplemented: Arc::default(),
        })
    }

    /// The driver's address as given to [`GrpcDriver::connect`], e.g. `127.0.0.1:7001`.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// Runs one call with its timeout and turns transport failures into
    /// errors naming the call and this device.
    async fn call<T, F, Fut>(&self, call: &'static str, limit: Duration, f: F) -> Result<T, DeviceError>
    where
        F: FnOnce(DriverClient<Channel>) -> Fut,
        Fut: Future<Output = Result<tonic::Response<T>, tonic::Status>>,
    {
        self.bounded(call, limit, f(self.client.clone())).await
    }

    /// Awaits one call's `response` within `limit`, its failure named by `call` and this device.
    async fn bounded<T>(
        &self,
        call: &'static str,
        limit: Duration,
        response: impl Future<Output = Result<tonic::Response<T>, tonic::Status>>,
    ) -> Result<T, DeviceError> {
        self.answered(call, limit, tokio::time::timeout(limit, response).await)
    }

    /// A call's answer (or its timeout, `Err(_)`), its failure named by `call` and this device.
    fn answered<T>(
        &self,
        call: &'static str,
        limit: Duration,
        answer: Result<Result<tonic::Response<T>, tonic::Status>, tokio::time::error::Elapsed>,
    ) -> Result<T, DeviceError> {
        match answer {
            Ok(Ok(response)) => Ok(response.into_inner()),
            Ok(Err(status)) => Err(DeviceError::Call {
                call,
                device: self.describe(),
                message: describe_status(&status),
            }),
            Err(_) => Err(DeviceError::Timeout {
                call,
                device: self.describe(),
                after: limit,
            }),
        }
    }

    /// Installs (or reinstalls, keeping its data) the APK at `apk`, a path on the
    /// sidecar's machine, through the Android sidecar's `AndroidDevice.Install`;
    /// returns what the package manager answered. `limit` bounds the push and the install.
    pub async fn install_apk(&self, apk: &std::path::Path, limit: Duration) -> Result<String, DeviceError> {
        let request = proto::InstallRequest {
            apk_path: apk.display().to_string(),
        };
        let mut android = self.android.clone();
        let response = self.bounded("Install", limit, android.install(request)).await?;
        Ok(response.detail)
    }

    /// One call of the Android sidecar's own service (`AndroidDevice`), bounded by the
    /// default limit; `None` when the server does not have that call.
    async fn android_call<T, F, Fut>(&self, call: &'static str, f: F) -> Result<Option<T>, DeviceError>
    where
        F: FnOnce(AndroidDeviceClient<Channel>) -> Fut,
        Fut: Future<Output = Result<tonic::Response<T>, tonic::Status>>,
    {
        if self.unimplemented_calls().contains(call) {
            return Ok(None);
        }
        let limit = self.timeouts.default;
        match tokio::time::timeout(limit, f(self.android.clone())).await {
            Ok(Err(status)) if status.code() == tonic::Code::Unimplemented => {
                self.unimplemented_calls().insert(call);
                Ok(None)
            }
            answer => self.answered(call, limit, answer).map(Some),
        }
    }

    fn unimplemented_calls(&self) -> MutexGuard<'_, BTreeSet<&'static str>> {
        self.unimplemented.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn invalid(&self, call: &'static str, message: impl Into<String>) -> DeviceError {
        DeviceError::InvalidAnswer {
            call,
            device: self.describe(),
            message: message.into(),
        }
    }

    fn input_outcome(response: proto::InputResponse) -> InputOutcome {
        InputOutcome {
            delivered: response.delivered,
            confirmed: response.confirmed,
            app_restarted: response.app_restarted,
            detail: response.detail,
            device_time_ms: response.device_time_ms,
        }
    }

    /// An input call added to driver.proto after its first drivers: one that does not
    /// implement it (an older sidecar) did not deliver the input, and says so.
    async fn newer_input<F, Fut>(
        &self,
        call: &'static str,
        limit: Duration,
        f: F,
    ) -> Result<InputOutcome, DeviceError>
    where
        F: FnOnce(DriverClient<Channel>) -> Fut,
        Fut: Future<Output = Result<tonic::Response<proto::InputResponse>, tonic::Status>>,
    {
        let answer = tokio::time::timeout(limit, f(self.client.clone())).await;
        match answer {
            Ok(Err(status)) if status.code() == tonic::Code::Unimplemented => Ok(InputOutcome::refused(
                format!(
                    "{} does not implement {call} (a driver older than this uatu)",
                    self.describe()
                ),
                0,
            )),
            Ok(Ok(response)) => Ok(Self::input_outcome(response.into_inner())),
            Ok(Err(status)) => Err(DeviceError::Call {
                call,
                device: self.describe(),
                message: describe_status(&status),
            }),
            Err(_) => Err(DeviceError::Timeout {
                call,
                device: self.describe(),
                after: limit,
            }),
        }
    }
}

fn describe_address(addr: &str) -> String {
    format!("gRPC driver {addr}")
}

fn describe_status(status: &tonic::Status) -> String {
    let mut text = format!("{:?}", status.code());
    if !status.message().is_empty() {
        text.push_str(": ");
        text.push_str(status.message());
    }
    if let Some(source) = std::error::Error::source(status) {
        text.push_str(" (");
        text.push_str(&error_chain(source));
        text.push(')');
    }
    text
}

/// An error and its causes on one line; tonic's own message is often just "transport error".
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

fn millis(duration: Duration) -> u32 {
    u32::try_from(duration.as_millis()).unwrap_or(u32::MAX)
}

fn to_proto_point(point: Point) -> proto::Point {
    proto::Point {
        x: point.x,
        y: point.y,
    }
}

fn to_proto_bounds(bounds: Bounds) -> proto::Bounds {
    proto::Bounds {
        left: bounds.left,
        top: bounds.top,
        right: bounds.right,
        bottom: bounds.bottom,
    }
}

fn from_proto_bounds(bounds: proto::Bounds) -> Bounds {
    Bounds {
        left: bounds.left,
        top: bounds.top,
        right: bounds.right,
        bottom: bounds.bottom,
    }
}

/// The touch a driver server was asked for: `None` when the request has no point.
pub fn from_proto_touch(point: Option<proto::Point>, element: Option<proto::Bounds>) -> Option<Touch> {
    let point = point?;
    Some(Touch {
        point: Point {
            x: point.x,
            y: point.y,
        },
        element: element.map(from_proto_bounds),
    })
}

/// The wire value of a scroll direction.
pub fn to_proto_direction(direction: ScrollDirection) -> proto::ScrollDirection {
    match direction {
        ScrollDirection::Up => proto::ScrollDirection::Up,
        ScrollDirection::Down => proto::ScrollDirection::Down,
        ScrollDirection::Left => proto::ScrollDirection::Left,
        ScrollDirection::Right => proto::ScrollDirection::Right,
    }
}

/// The scroll direction of a wire value, as a driver server reads it; `None`
/// for unspecified or unknown values.
pub fn from_proto_direction(value: i32) -> Option<ScrollDirection> {
    match proto::ScrollDirection::try_from(value).ok()? {
        proto::ScrollDirection::Unspecified => None,
        proto::ScrollDirection::Up => Some(ScrollDirection::Up),
        proto::ScrollDirection::Down => Some(ScrollDirection::Down),
        proto::ScrollDirection::Left => Some(ScrollDirection::Left),
        proto::ScrollDirection::Right => Some(ScrollDirection::Right),
    }
}

/// The wire form of a navigation.
pub fn to_proto_navigation(to: &Navigation) -> proto::NavigateRequest {
    use proto::navigate_request::To;
    let to = match to {
        Navigation::Back => To::Step(proto::NavigationStep::Back.into()),
        Navigation::Forward => To::Step(proto::NavigationStep::Forward.into()),
        Navigation::Reload => To::Step(proto::NavigationStep::Reload.into()),
        Navigation::To(url) => To::Url(url.clone()),
    };
    proto::NavigateRequest { to: Some(to) }
}

/// The navigation a driver server was asked for; `None` when the request names none.
pub fn from_proto_navigation(request: proto::NavigateRequest) -> Option<Navigation> {
    use proto::navigate_request::To;
    match request.to? {
        To::Url(url) => Some(Navigation::To(url)),
        To::Step(step) => match proto::NavigationStep::try_from(step).ok()? {
            proto::NavigationStep::Unspecified => None,
            proto::NavigationStep::Back => Some(Navigation::Back),
            proto::NavigationStep::Forward => Some(Navigation::Forward),
            proto::NavigationStep::Reload => Some(Navigation::Reload),
        },
    }
}

/// The wire value of a model key.
pub fn to_proto_key(key: Key) -> proto::Key {
    match key {
        Key::Back => proto::Key::Back,
        Key::Home => proto::Key::Home,
        Key::Enter => proto::Key::Enter,
        Key::Tab => proto::Key::Tab,
        Key::Up => proto::Key::Up,
        Key::Down => proto::Key::Down,
        Key::Left => proto::Key::Left,
        Key::Right => proto::Key::Right,
        Key::Escape => proto::Key::Escape,
        Key::Backspace => proto::Key::Backspace,
        Key::Delete => proto::Key::Delete,
        Key::Space => proto::Key::Space,
        Key::PageUp => proto::Key::PageUp,
        Key::PageDown => proto::Key::PageDown,
    }
}

/// The model key of a wire value, as a driver server reads it; `None` for
/// unspecified or unknown values.
pub fn from_proto_key(value: i32) -> Option<Key> {
    match proto::Key::try_from(value).ok()? {
        proto::Key::Unspecified => None,
        proto::Key::Back => Some(Key::Back),
        proto::Key::Home => Some(Key::Home),
        proto::Key::Enter => Some(Key::Enter),
        proto::Key::Tab => Some(Key::Tab),
        proto::Key::Up => Some(Key::Up),
        proto::Key::Down => Some(Key::Down),
        proto::Key::Left => Some(Key::Left),
        proto::Key::Right => Some(Key::Right),
        proto::Key::Escape => Some(Key::Escape),
        proto::Key::Backspace => Some(Key::Backspace),
        proto::Key::Delete => Some(Key::Delete),
        proto::Key::Space => Some(Key::Space),
        proto::Key::PageUp => Some(Key::PageUp),
        proto::Key::PageDown => Some(Key::PageDown),
    }
}

/// The wire value of a model log level (a driver server sends it; the host asks with it).
pub fn to_proto_level(level: LogLevel) -> proto::LogLevel {
    match level {
        LogLevel::Verbose => proto::LogLevel::Verbose,
        LogLevel::Debug => proto::LogLevel::Debug,
        LogLevel::Info => proto::LogLevel::Info,
        LogLevel::Warn => proto::LogLevel::Warn,
        LogLevel::Error => proto::LogLevel::Error,
        LogLevel::Fatal => proto::LogLevel::Fatal,
    }
}

/// The model level of a wire value; `None` for unspecified or unknown values.
pub fn from_proto_level(value: i32) -> Option<LogLevel> {
    match proto::LogLevel::try_from(value).ok()? {
        proto::LogLevel::Unspecified => None,
        proto::LogLevel::Verbose => Some(LogLevel::Verbose),
        proto::LogLevel::Debug => Some(LogLevel::Debug),
        proto::LogLevel::Info => Some(LogLevel::Info),
        proto::LogLevel::Warn => Some(LogLevel::Warn),
        proto::LogLevel::Error => Some(LogLevel::Error),
        proto::LogLevel::Fatal => Some(LogLevel::Fatal),
    }
}

/// A node of the tree; missing bounds become empty bounds at the origin.
pub fn from_proto_node(node: proto::Node) -> Node {
    let bounds = node.bounds.map_or_else(Bounds::default, from_proto_bounds);
    Node {
        id: node.resource_id,
        text: node.text,
        desc: node.content_description,
        class_name: node.class_name,
        package: node.package,
        clickable: node.clickable,
        enabled: node.enabled,
        checked: node.checked,
        focused: node.focused,
        selected: node.selected,
        scrollable: node.scrollable,
        bounds,
        role: node.role,
        attrs: node.attributes.into_iter().collect(),
        children: node.children.into_iter().map(from_proto_node).collect(),
    }
}

/// The wire form of a node, as a driver server sends it.
pub fn to_proto_node(node: &Node) -> proto::Node {
    proto::Node {
        resource_id: node.id.clone(),
        text: node.text.clone(),
        content_description: node.desc.clone(),
        class_name: node.class_name.clone(),
        package: node.package.clone(),
        clickable: node.clickable,
        enabled: node.enabled,
        checked: node.checked,
        focused: node.focused,
        selected: node.selected,
        scrollable: node.scrollable,
        bounds: Some(to_proto_bounds(node.bounds)),
        role: node.role.clone(),
        attributes: node.attrs.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        children: node.children.iter().map(to_proto_node).collect(),
    }
}

const PNG_SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";

#[async_trait]
impl Driver for GrpcDriver {
    fn describe(&self) -> String {
        describe_address(&self.address)
    }

    async fn launch(
        &self,
        bundle_id: &str,
        clear_state: bool,
        launcher_activity: Option<&str>,
    ) -> Result<u64, DeviceError> {
        let request = proto::LaunchRequest {
            bundle_id: bundle_id.to_string(),
            clear_state,
            launcher_activity: launcher_activity.map(str::to_string),
        };
        let response = self
            .call("Launch", self.timeouts.default, |mut c| async move {
                c.launch(request).await
            })
            .await?;
        Ok(response.device_time_ms)
    }

    async fn terminate(&self, bundle_id: &str) -> Result<(), DeviceError> {
        let request = proto::TerminateRequest {
            bundle_id: bundle_id.to_string(),
        };
        self.call("Terminate", self.timeouts.default, |mut c| async move {
            c.terminate(request).await
        })
        .await?;
        Ok(())
    }

    async fn tap(&self, touch: Touch) -> Result<InputOutcome, DeviceError> {
        let request = proto::TapRequest {
            point: Some(to_proto_point(touch.point)),
            element: touch.element.map(to_proto_bounds),
        };
        let response = self
            .call("Tap", self.timeouts.default, |mut c| async move {
                c.tap(request).await
            })
            .await?;
        Ok(Self::input_outcome(response))
    }

    async fn double_tap(&self, touch: Touch) -> Result<InputOutcome, DeviceError> {
        let request = proto::DoubleTapRequest {
            point: Some(to_proto_point(touch.point)),
            element: touch.element.map(to_proto_bounds),
        };
        self.newer_input("DoubleTap", self.timeouts.default, |mut c| async move {
            c.double_tap(request).await
        })
        .await
    }

    async fn long_press(&self, touch: Touch, duration: Duration) -> Result<InputOutcome, DeviceError> {
        let request = proto::LongPressRequest {
            point: Some(to_proto_point(touch.point)),
            element: touch.element.map(to_proto_bounds),
            duration_ms: millis(duration),
        };
        self.newer_input(
            "LongPress",
            self.timeouts.default + duration,
            |mut c| async move { c.long_press(request).await },
        )
        .await
    }

    async fn scroll(
        &self,
        touch: Touch,
        direction: ScrollDirection,
        distance: u32,
    ) -> Result<InputOutcome, DeviceError> {
        let request = proto::ScrollRequest {
            point: Some(to_proto_point(touch.point)),
            element: touch.element.map(to_proto_bounds),
            direction: to_proto_direction(direction).into(),
            distance,
        };
        self.newer_input("Scroll", self.timeouts.default, |mut c| async move {
            c.scroll(request).await
        })
        .await
    }

    async fn clear_text(&self) -> Result<InputOutcome, DeviceError> {
        self.newer_input("ClearText", self.timeouts.default, |mut c| async move {
            c.clear_text(proto::ClearTextRequest {}).await
        })
        .await
    }

    async fn navigate(&self, to: &Navigation) -> Result<InputOutcome, DeviceError> {
        let request = to_proto_navigation(to);
        // A reload on Android restarts the app as Launch does, within the same limit.
        self.newer_input("Navigate", self.timeouts.default, |mut c| async move {
            c.navigate(request).await
        })
        .await
    }

    async fn tap_selector(&self, selector: &DeviceSelector) -> Result<InputOutcome, DeviceError> {
        use proto::tap_selector_request::Selector;
        let selector = match selector {
            DeviceSelector::ResourceId(id) => Selector::ResourceId(id.clone()),
            DeviceSelector::Text(text) => Selector::Text(text.clone()),
            DeviceSelector::ContentDescription(desc) => Selector::ContentDescription(desc.clone()),
        };
        let request = proto::TapSelectorRequest {
            selector: Some(selector),
        };
        let response = self
            .call("TapSelector", self.timeouts.default, |mut c| async move {
                c.tap_selector(request).await
            })
            .await?;
        Ok(Self::input_outcome(response))
    }

    async fn input_text(&self, text: &str) -> Result<InputOutcome, DeviceError> {
        let request = proto::InputTextRequest {
            text: text.to_string(),
        };
        let response = self
            .call("InputText", self.timeouts.default, |mut c| async move {
                c.input_text(request).await
            })
            .await?;
        Ok(Self::input_outcome(response))
    }

    async fn swipe(&self, from: Point, to: Point, duration: Duration) -> Result<InputOutcome, DeviceError> {
        let request = proto::SwipeRequest {
            from: Some(to_proto_point(from)),
            to: Some(to_proto_point(to)),
            duration_ms: millis(duration),
        };
        let limit = self.timeouts.default + duration;
        let response = self
            .call("Swipe", limit, |mut c| async move { c.swipe(request).await })
            .await?;
        Ok(Self::input_outcome(response))
    }

    async fn press_key(&self, key: Key) -> Result<InputOutcome, DeviceError> {
        let request = proto::PressKeyRequest {
            key: to_proto_key(key).into(),
        };
        let response = self
            .call("PressKey", self.timeouts.default, |mut c| async move {
                c.press_key(request).await
            })
            .await?;
        Ok(Self::input_outcome(response))
    }

    async fn sleep(&self, duration: Duration) -> Result<InputOutcome, DeviceError> {
        let request = proto::SleepRequest {
            duration_ms: millis(duration),
        };
        let limit = duration + self.timeouts.wait_margin;
        let response = self
            .call("Sleep", limit, |mut c| async move { c.sleep(request).await })
            .await?;
        Ok(Self::input_outcome(response))
    }

    async fn screenshot(&self) -> Result<Screenshot, DeviceError> {
        let response = self
            .call("Screenshot", self.timeouts.screenshot, |mut c| async move {
                c.screenshot(proto::ScreenshotRequest {}).await
            })
            .await?;
        if !response.png.starts_with(PNG_SIGNATURE) {
            return Err(self.invalid(
                "Screenshot",
                format!("{} bytes that are not a PNG image", response.png.len()),
            ));
        }
        if response.width == 0 || response.height == 0 {
            return Err(self.invalid(
                "Screenshot",
                format!("empty size {}x{}", response.width, response.height),
            ));
        }
        Ok(Screenshot {
            png: response.png,
            width: response.width,
            height: response.height,
        })
    }

    async fn hierarchy(&self) -> Result<Hierarchy, DeviceError> {
        let response = self
            .call("Hierarchy", self.timeouts.default, |mut c| async move {
                c.hierarchy(proto::HierarchyRequest {}).await
            })
            .await?;
        let root = response
            .root
            .ok_or_else(|| self.invalid("Hierarchy", "no root node"))?;
        Ok(Hierarchy {
            root: from_proto_node(root),
            screen: ScreenSize {
                width: response.screen_width,
                height: response.screen_height,
            },
        })
    }

    async fn recent_logs(&self, since_ms: u64, min_level: LogLevel) -> Result<Vec<LogEntry>, DeviceError> {
        let request = proto::RecentLogsRequest {
            since_ms,
            min_level: to_proto_level(min_level).into(),
        };
        let response = self
            .call("RecentLogs", self.timeouts.default, |mut c| async move {
                c.recent_logs(request).await
            })
            .await?;
        response
            .entries
            .into_iter()
            .map(|entry| {
                let level = from_proto_level(entry.level).ok_or_else(|| {
                    self.invalid(
                        "RecentLogs",
                        format!(
                            "log entry at {} ms has unknown level {}",
                            entry.time_ms, entry.level
                        ),
                    )
                })?;
                Ok(LogEntry {
                    time: entry.time_ms,
                    level,
                    tag: entry.tag,
                    message: entry.message,
                })
            })
            .collect()
    }

    async fn wait_for_idle(&self, timeout: Duration) -> Result<IdleOutcome, DeviceError> {
        let request = proto::WaitForIdleRequest {
            timeout_ms: millis(timeout),
        };
        let limit = timeout + self.timeouts.wait_margin;
        let response = self
            .call("WaitForIdle", limit, |mut c| async move {
                c.wait_for_idle(request).await
            })
            .await?;
        Ok(IdleOutcome {
            idle: response.idle,
            device_time_ms: response.device_time_ms,
        })
    }

    async fn health(&self) -> Result<Health, DeviceError> {
        let response = self
            .call("Health", self.timeouts.default, |mut c| async move {
                c.health(proto::HealthRequest {}).await
            })
            .await?;
        Ok(Health {
            ready: response.ready,
            version: response.version,
            platform: response.platform,
        })
    }

    async fn metrics(&self) -> Result<Metrics, DeviceError> {
        let response = self
            .call("Metrics", self.timeouts.default, |mut c| async move {
                c.metrics(proto::MetricsRequest {}).await
            })
            .await?;
        if !response.cpu_percent.is_finite() || response.cpu_percent < 0.0 {
            return Err(self.invalid("Metrics", format!("cpu_percent is {}", response.cpu_percent)));
        }
        Ok(Metrics {
            cpu_percent: response.cpu_percent,
            memory_bytes: response.memory_bytes,
        })
    }

    async fn focus(&self, bundle_id: &str) -> Result<Option<Window>, DeviceError> {
        let request = proto::FocusRequest {
            bundle_id: bundle_id.to_string(),
        };
        let Some(response) = self
            .android_call("Focus", |mut c| async move { c.focus(request).await })
            .await?
        else {
            return Ok(None);
        };
        let kind = match proto::WindowKind::try_from(response.kind) {
            Ok(proto::WindowKind::App) => WindowKind::App,
            Ok(proto::WindowKind::SystemDialog) => WindowKind::SystemDialog,
            Ok(proto::WindowKind::NotResponding) => WindowKind::NotResponding,
            Ok(proto::WindowKind::OtherApp) => WindowKind::OtherApp,
            Ok(proto::WindowKind::Unspecified) | Err(_) => {
                return Err(self.invalid("Focus", format!("window kind {}", response.kind)));
            }
        };
        Ok(Some(Window {
            package: response.package,
            title: response.title,
            kind,
            keyboard: response.keyboard_shown,
        }))
    }

    async fn app_status(&self, bundle_id: &str) -> Result<Option<AppStatus>, DeviceError> {
        let request = proto::AppStatusRequest {
            bundle_id: bundle_id.to_string(),
        };
        let Some(response) = self
            .android_call("AppStatus", |mut c| async move { c.app_status(request).await })
            .await?
        else {
            return Ok(None);
        };
        let process = match proto::AppProcessState::try_from(response.state) {
            Ok(proto::AppProcessState::Foreground) => AppProcess::Foreground,
            Ok(proto::AppProcessState::Background) => AppProcess::Background,
            Ok(proto::AppProcessState::NotResponding) => AppProcess::NotResponding,
            Ok(proto::AppProcessState::Gone) => AppProcess::Gone,
            Ok(proto::AppProcessState::Unspecified) | Err(_) => {
                return Err(self.invalid("AppStatus", format!("process state {}", response.state)));
            }
        };
        Ok(Some(AppStatus {
            process,
            detail: response.detail,
            crash: response.crash,
        }))
    }

    async fn app_info(&self, bundle_id: &str) -> Result<Option<AppInfo>, DeviceError> {
        let request = proto::AppInfoRequest {
            bundle_id: bundle_id.to_string(),
        };
        let response = self
            .android_call("AppInfo", |mut c| async move { c.app_info(request).await })
            .await?;
        Ok(response.map(|response| AppInfo {
            debuggable: response.debuggable,
            requested_permissions: response.requested_permissions,
            granted_permissions: response.granted_permissions,
            grants_permissions: response.grants_permissions,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_without_bounds_gets_default_bounds() {
        let node = from_proto_node(proto::Node {
            content_description: "login_submit".into(),
            children: vec![proto::Node::default()],
            ..Default::default()
        });
        assert_eq!(node.bounds, Bounds::default());
        assert_eq!(node.desc, "login_submit");
        assert_eq!(node.children.len(), 1);
    }

    #[test]
    fn nodes_survive_the_wire_form() {
        let node = Node {
            id: "app:id/x".into(),
            text: "Sign in".into(),
            clickable: true,
            bounds: Bounds {
                left: 1,
                top: 2,
                right: 30,
                bottom: 40,
            },
            role: "button".into(),
            attrs: [("data-testid".to_string(), "submit".to_string())].into(),
            children: vec![Node {
                desc: "child".into(),
                ..Default::default()
            }],
            ..Default::default()
        };
        assert_eq!(from_proto_node(to_proto_node(&node)), node);
    }

    #[test]
    fn keys_survive_the_wire_form() {
        for (position, key) in Key::ALL.into_iter().enumerate() {
            let wire: i32 = to_proto_key(key).into();
            assert_eq!(wire, position as i32 + 1, "{key:?} is in driver.proto's order");
            assert_eq!(from_proto_key(wire), Some(key));
        }
        assert_eq!(from_proto_key(0), None);
        assert_eq!(from_proto_key(77), None);
    }

    #[test]
    fn keys_are_written_in_camel_case() {
        for key in Key::ALL {
            let json = serde_json::to_string(&key).expect("serialises");
            assert_eq!(json, format!("\"{}\"", key.name()));
            assert_eq!(serde_json::from_str::<Key>(&json).expect("reads back"), key);
        }
        assert_eq!(Key::PageDown.name(), "pageDown");
    }

    #[test]
    fn scroll_directions_and_navigations_survive_the_wire_form() {
        for direction in [
            ScrollDirection::Up,
            ScrollDirection::Down,
            ScrollDirection::Left,
            ScrollDirection::Right,
        ] {
            assert_eq!(
                from_proto_direction(to_proto_direction(direction).into()),
                Some(direction)
            );
        }
        assert_eq!(from_proto_direction(0), None);
        for to in [
            Navigation::Back,
            Navigation::Forward,
            Navigation::Reload,
            Navigation::To("/#/active".into()),
        ] {
            assert_eq!(from_proto_navigation(to_proto_navigation(&to)), Some(to.clone()));
        }
        assert_eq!(from_proto_navigation(proto::NavigateRequest { to: None }), None);
    }

    #[test]
    fn a_touch_keeps_its_element() {
        let element = Bounds {
            left: 10,
            top: 20,
            right: 110,
            bottom: 60,
        };
        let touch = Touch::on(element);
        assert_eq!(touch.point, Point { x: 60, y: 40 });
        let wire = from_proto_touch(
            Some(to_proto_point(touch.point)),
            touch.element.map(to_proto_bounds),
        );
        assert_eq!(wire, Some(touch));
        assert_eq!(from_proto_touch(None, None), None);
    }

    #[test]
    fn applied_is_said_from_delivered_and_confirmed() {
        assert_eq!(InputOutcome::refused("gone", 1).applied(), Applied::No);
        assert_eq!(InputOutcome::delivered(1).applied(), Applied::Unknown);
        assert_eq!(InputOutcome::confirmed(1).applied(), Applied::Yes);
        for (applied, json) in [
            (Applied::Yes, "true"),
            (Applied::No, "false"),
            (Applied::Unknown, "\"unknown\""),
        ] {
            assert_eq!(serde_json::to_string(&applied).expect("serialises"), json);
            assert_eq!(serde_json::from_str::<Applied>(json).expect("reads"), applied);
        }
        assert!(serde_json::from_str::<Applied>("\"maybe\"").is_err());
        assert_eq!(Applied::Yes.and(Applied::Unknown), Applied::Unknown);
        assert_eq!(Applied::Unknown.and(Applied::No), Applied::No);
        assert_eq!(Applied::Yes.and(Applied::Yes), Applied::Yes);
    }

    #[test]
    fn unknown_and_unspecified_levels_are_rejected() {
        assert_eq!(from_proto_level(0), None);
        assert_eq!(from_proto_level(42), None);
        assert_eq!(from_proto_level(5), Some(LogLevel::Error));
        for level in [LogLevel::Verbose, LogLevel::Info, LogLevel::Fatal] {
            assert_eq!(from_proto_level(to_proto_level(level).into()), Some(level));
        }
    }
}
