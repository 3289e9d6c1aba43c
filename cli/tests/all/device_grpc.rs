//! `GrpcDriver` against a real tonic server implementing `proto/driver.proto`
//! (a small fake app that records what it was asked), over TCP.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio_stream::wrappers::TcpListenerStream;
use tonic::{Request, Response, Status};
use uatu_device::proto::driver_server::{Driver as DriverService, DriverServer};
use uatu_device::proto::{self, tap_selector_request::Selector};
use uatu_device::{
    Bounds, CallTimeouts, DeviceError, DeviceSelector, Driver, GrpcDriver, Key, LogLevel, Navigation, Point,
    ScrollDirection, Touch,
};

const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR-rest-of-a-png";

/// How the fake misbehaves, per server.
#[derive(Default, Clone)]
struct Quirks {
    health_delay: Duration,
    not_a_png: bool,
    unknown_log_level: bool,
    no_root: bool,
    /// Answers the calls added to driver.proto after its first drivers as an older
    /// driver does: unimplemented.
    older: bool,
}

#[derive(Default)]
struct FakeApp {
    quirks: Quirks,
    calls: Mutex<Vec<String>>,
}

impl FakeApp {
    fn record(&self, call: String) {
        self.calls.lock().expect("calls lock").push(call);
    }

    fn input(&self, call: String) -> Result<Response<proto::InputResponse>, Status> {
        // Says it saw taps land, and has no evidence of anything else.
        let confirmed = call.starts_with("tap") || call.starts_with("double_tap");
        self.record(call);
        Ok(Response::new(proto::InputResponse {
            delivered: true,
            confirmed,
            device_time_ms: 42,
            ..Default::default()
        }))
    }

    /// A call added to driver.proto later: an older driver does not know it.
    fn newer_input(&self, call: String) -> Result<Response<proto::InputResponse>, Status> {
        if self.quirks.older {
            return Err(Status::unimplemented(format!("{call} is not known here")));
        }
        self.input(call)
    }
}

fn bounds_text(bounds: Option<proto::Bounds>) -> String {
    bounds.map_or_else(
        || "-".to_string(),
        |b| format!("[{},{}][{},{}]", b.left, b.top, b.right, b.bottom),
    )
}

#[tonic::async_trait]
impl DriverService for FakeApp {
    async fn launch(
        &self,
        r: Request<proto::LaunchRequest>,
    ) -> Result<Response<proto::LaunchResponse>, Status> {
        let r = r.into_inner();
        self.record(format!(
            "launch {} {} {:?}",
            r.bundle_id, r.clear_state, r.launcher_activity
        ));
        Ok(Response::new(proto::LaunchResponse { device_time_ms: 7 }))
    }

    async fn terminate(
        &self,
        r: Request<proto::TerminateRequest>,
    ) -> Result<Response<proto::TerminateResponse>, Status> {
        let r = r.into_inner();
        if r.bundle_id != "app.folio" {
            return Err(Status::failed_precondition(format!(
                "{} is not installed",
                r.bundle_id
            )));
        }
        self.record(format!("terminate {}", r.bundle_id));
        Ok(Response::new(proto::TerminateResponse {}))
    }

    async fn tap(&self, r: Request<proto::TapRequest>) -> Result<Response<proto::InputResponse>, Status> {
        let r = r.into_inner();
        let point = r.point.unwrap_or_default();
        self.input(format!("tap {} {} {}", point.x, point.y, bounds_text(r.element)))
    }

    async fn double_tap(
        &self,
        r: Request<proto::DoubleTapRequest>,
    ) -> Result<Response<proto::InputResponse>, Status> {
        let r = r.into_inner();
        let point = r.point.unwrap_or_default();
        self.newer_input(format!(
            "double_tap {} {} {}",
            point.x,
            point.y,
            bounds_text(r.element)
        ))
    }

    async fn long_press(
        &self,
        r: Request<proto::LongPressRequest>,
    ) -> Result<Response<proto::InputResponse>, Status> {
        let r = r.into_inner();
        let point = r.point.unwrap_or_default();
        self.newer_input(format!(
            "long_press {} {} {} {}",
            point.x,
            point.y,
            bounds_text(r.element),
            r.duration_ms
        ))
    }

    async fn scroll(
        &self,
        r: Request<proto::ScrollRequest>,
    ) -> Result<Response<proto::InputResponse>, Status> {
        let r = r.into_inner();
        let point = r.point.unwrap_or_default();
        let direction = proto::ScrollDirection::try_from(r.direction)
            .map_err(|e| Status::invalid_argument(e.to_string()))?;
        self.newer_input(format!(
            "scroll {} {} {} {} {}",
            point.x,
            point.y,
            bounds_text(r.element),
            direction.as_str_name(),
            r.distance
        ))
    }

    async fn clear_text(
        &self,
        _: Request<proto::ClearTextRequest>,
    ) -> Result<Response<proto::InputResponse>, Status> {
        self.newer_input("clear_text".into())
    }

    async fn navigate(
        &self,
        r: Request<proto::NavigateRequest>,
    ) -> Result<Response<proto::InputResponse>, Status> {
        let to = match r.into_inner().to {
            Some(proto::navigate_request::To::Step(step)) => proto::NavigationStep::try_from(step)
                .map_err(|e| Status::invalid_argument(e.to_string()))?
                .as_str_name()
                .to_string(),
            Some(proto::navigate_request::To::Url(url)) => url,
            None => return Err(Status::invalid_argument("nowhere to go")),
        };
        self.newer_input(format!("navigate {to}"))
    }

    async fn tap_selector(
        &self,
        r: Request<proto::TapSelectorRequest>,
    ) -> Result<Response<proto::InputResponse>, Status> {
        match r.into_inner().selector {
            Some(Selector::ContentDescription(desc)) => self.input(format!("tap_selector desc {desc}")),
            Some(Selector::ResourceId(id)) => self.input(format!("tap_selector id {id}")),
            Some(Selector::Text(text)) => {
                self.record(format!("tap_selector text {text}"));
                Ok(Response::new(proto::InputResponse {
                    delivered: false,
                    detail: format!("no node with text {text:?}"),
                    device_time_ms: 43,
                    ..Default::default()
                }))
            }
            None => Err(Status::invalid_argument("no selector")),
        }
    }

    async fn input_text(
        &self,
        r: Request<proto::InputTextRequest>,
    ) -> Result<Response<proto::InputResponse>, Status> {
        self.input(format!("input_text {}", r.into_inner().text))
    }

    async fn swipe(&self, r: Request<proto::SwipeRequest>) -> Result<Response<proto::InputResponse>, Status> {
        let r = r.into_inner();
        let (from, to) = (r.from.unwrap_or_default(), r.to.unwrap_or_default());
        self.input(format!(
            "swipe {},{} {},{} {}",
            from.x, from.y, to.x, to.y, r.duration_ms
        ))
    }

    async fn press_key(
        &self,
        r: Request<proto::PressKeyRequest>,
    ) -> Result<Response<proto::InputResponse>, Status> {
        let key =
            proto::Key::try_from(r.into_inner().key).map_err(|e| Status::invalid_argument(e.to_string()))?;
        self.input(format!("press_key {}", key.as_str_name()))
    }

    async fn sleep(&self, r: Request<proto::SleepRequest>) -> Result<Response<proto::InputResponse>, Status> {
        let ms = r.into_inner().duration_ms;
        tokio::time::sleep(Duration::from_millis(ms.into())).await;
        self.input(format!("sleep {ms}"))
    }

    async fn screenshot(
        &self,
        _: Request<proto::ScreenshotRequest>,
    ) -> Result<Response<proto::ScreenshotResponse>, Status> {
        self.record("screenshot".into());
        let png = if self.quirks.not_a_png {
            b"GIF89a".to_vec()
        } else {
            PNG.to_vec()
        };
        Ok(Response::new(proto::ScreenshotResponse {
            png,
            width: 1080,
            height: 2400,
        }))
    }

    async fn hierarchy(
        &self,
        _: Request<proto::HierarchyRequest>,
    ) -> Result<Response<proto::HierarchyResponse>, Status> {
        self.record("hierarchy".into());
        let button = proto::Node {
            content_description: "login_submit".into(),
            text: "Sign in".into(),
            class_name: "android.widget.Button".into(),
            clickable: true,
            enabled: true,
            bounds: Some(proto::Bounds {
                left: 100,
                top: 1200,
                right: 980,
                bottom: 1340,
            }),
            ..Default::default()
        };
        // The root has no bounds: the client must default them.
        let root = proto::Node {
            class_name: "android.widget.FrameLayout".into(),
            package: "app.folio".into(),
            children: vec![button],
            ..Default::default()
        };
        Ok(Response::new(proto::HierarchyResponse {
            root: if self.quirks.no_root { None } else { Some(root) },
            screen_width: 1080,
            screen_height: 2400,
        }))
    }

    async fn recent_logs(
        &self,
        r: Request<proto::RecentLogsRequest>,
    ) -> Result<Response<proto::RecentLogsResponse>, Status> {
        let r = r.into_inner();
        self.record(format!("recent_logs {} {}", r.since_ms, r.min_level));
        let entry = |time_ms, level: i32, message: &str| proto::LogEntry {
            time_ms,
            level,
            tag: "folio".into(),
            message: message.into(),
        };
        let mut entries = vec![
            entry(5, proto::LogLevel::Info.into(), "login screen shown"),
            entry(9, proto::LogLevel::Error.into(), "ledger out of balance"),
        ];
        if self.quirks.unknown_log_level {
            entries.push(entry(11, 99, "from the future"));
        }
        entries.retain(|e| e.time_ms > r.since_ms && e.level >= r.min_level);
        Ok(Response::new(proto::RecentLogsResponse { entries }))
    }

    async fn wait_for_idle(
        &self,
        r: Request<proto::WaitForIdleRequest>,
    ) -> Result<Response<proto::WaitForIdleResponse>, Status> {
        // Never settles: answers when the device-side timeout is over.
        let ms = r.into_inner().timeout_ms;
        tokio::time::sleep(Duration::from_millis(ms.into())).await;
        self.record(format!("wait_for_idle {ms}"));
        Ok(Response::new(proto::WaitForIdleResponse {
            idle: false,
            device_time_ms: 99,
        }))
    }

    async fn health(
        &self,
        _: Request<proto::HealthRequest>,
    ) -> Result<Response<proto::HealthResponse>, Status> {
        tokio::time::sleep(self.quirks.health_delay).await;
        self.record("health".into());
        Ok(Response::new(proto::HealthResponse {
            ready: true,
            version: "fake-1".into(),
            platform: "sim".into(),
        }))
    }

    async fn metrics(
        &self,
        _: Request<proto::MetricsRequest>,
    ) -> Result<Response<proto::MetricsResponse>, Status> {
        self.record("metrics".into());
        Ok(Response::new(proto::MetricsResponse {
            cpu_percent: 12.5,
            memory_bytes: 64 << 20,
        }))
    }
}

async fn serve(quirks: Quirks) -> (SocketAddr, Arc<FakeApp>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("binds");
    let addr = listener.local_addr().expect("address");
    let app = Arc::new(FakeApp {
        quirks,
        calls: Mutex::default(),
    });
    let service = DriverServer::from_arc(app.clone());
    tokio::spawn(async move {
        tonic::transport::Server::builder()
            .add_service(service)
            .serve_with_incoming(TcpListenerStream::new(listener))
            .await
    });
    (addr, app)
}

fn calls(app: &FakeApp) -> Vec<String> {
    app.calls.lock().expect("calls lock").clone()
}

#[tokio::test]
async fn every_rpc_reaches_the_device_and_its_answer_is_converted() {
    let (addr, app) = serve(Quirks::default()).await;
    let driver = GrpcDriver::connect(&addr.to_string(), CallTimeouts::default())
        .await
        .expect("connects");
    assert_eq!(driver.describe(), format!("gRPC driver {addr}"));

    assert_eq!(
        driver
            .launch("app.folio", true, Some(".Main"))
            .await
            .expect("launch"),
        7
    );
    driver.terminate("app.folio").await.expect("terminate");
    let tapped = driver
        .tap(Touch::at(Point { x: 540, y: 1270 }))
        .await
        .expect("tap");
    assert!(tapped.delivered && tapped.confirmed);
    assert_eq!(tapped.device_time_ms, 42);
    let button = Bounds {
        left: 100,
        top: 1200,
        right: 980,
        bottom: 1340,
    };
    driver.tap(Touch::on(button)).await.expect("tap an element");
    let twice = driver.double_tap(Touch::on(button)).await.expect("double_tap");
    assert!(twice.delivered && twice.confirmed);
    driver
        .long_press(Touch::at(Point { x: 5, y: 6 }), Duration::from_millis(800))
        .await
        .expect("long_press");
    let scrolled = driver
        .scroll(Touch::on(button), ScrollDirection::Down, 400)
        .await
        .expect("scroll");
    assert!(scrolled.delivered && !scrolled.confirmed);
    driver.clear_text().await.expect("clear_text");
    driver.navigate(&Navigation::Back).await.expect("back");
    driver.navigate(&Navigation::Reload).await.expect("reload");
    driver
        .navigate(&Navigation::To("/#/active".into()))
        .await
        .expect("navigate to");
    driver
        .tap_selector(&DeviceSelector::ContentDescription("login_submit".into()))
        .await
        .expect("tap_selector");
    let missed = driver
        .tap_selector(&DeviceSelector::Text("Nope".into()))
        .await
        .expect("tap_selector");
    assert!(!missed.delivered);
    assert!(missed.detail.contains("Nope"), "{}", missed.detail);
    driver
        .tap_selector(&DeviceSelector::ResourceId("app:id/x".into()))
        .await
        .expect("tap_selector");
    driver.input_text("demo@folio.app").await.expect("input_text");
    driver
        .swipe(
            Point { x: 500, y: 2000 },
            Point { x: 500, y: 400 },
            Duration::from_millis(300),
        )
        .await
        .expect("swipe");
    driver.press_key(Key::Back).await.expect("press_key");
    driver.press_key(Key::Enter).await.expect("press_key");
    driver.sleep(Duration::from_millis(20)).await.expect("sleep");

    let screenshot = driver.screenshot().await.expect("screenshot");
    assert_eq!((screenshot.width, screenshot.height), (1080, 2400));
    assert_eq!(screenshot.png, PNG);

    let hierarchy = driver.hierarchy().await.expect("hierarchy");
    assert_eq!(hierarchy.screen.width, 1080);
    assert_eq!(hierarchy.root.bounds, Bounds::default(), "missing bounds default");
    assert_eq!(hierarchy.root.package, "app.folio");
    let button = &hierarchy.root.children[0];
    assert_eq!(button.desc, "login_submit");
    assert_eq!(button.class_name, "android.widget.Button");
    assert!(button.clickable && button.enabled && !button.checked);
    assert!(button.bounds.contains(Point { x: 540, y: 1270 }));

    let logs = driver.recent_logs(0, LogLevel::Warn).await.expect("recent_logs");
    assert_eq!(logs.len(), 1);
    assert_eq!(logs[0].level, LogLevel::Error);
    assert_eq!(logs[0].time, 9);
    assert_eq!(logs[0].message, "ledger out of balance");

    let idle = driver
        .wait_for_idle(Duration::from_millis(10))
        .await
        .expect("wait_for_idle");
    assert!(!idle.idle);
    assert_eq!(idle.device_time_ms, 99);

    let health = driver.health().await.expect("health");
    assert!(health.ready);
    assert_eq!(health.platform, "sim");
    let metrics = driver.metrics().await.expect("metrics");
    assert_eq!(metrics.memory_bytes, 64 << 20);
    assert!((metrics.cpu_percent - 12.5).abs() < f64::EPSILON);

    assert_eq!(
        calls(&app),
        [
            "launch app.folio true Some(\".Main\")",
            "terminate app.folio",
            "tap 540 1270 -",
            "tap 540 1270 [100,1200][980,1340]",
            "double_tap 540 1270 [100,1200][980,1340]",
            "long_press 5 6 - 800",
            "scroll 540 1270 [100,1200][980,1340] SCROLL_DIRECTION_DOWN 400",
            "clear_text",
            "navigate NAVIGATION_STEP_BACK",
            "navigate NAVIGATION_STEP_RELOAD",
            "navigate /#/active",
            "tap_selector desc login_submit",
            "tap_selector text Nope",
            "tap_selector id app:id/x",
            "input_text demo@folio.app",
            "swipe 500,2000 500,400 300",
            "press_key KEY_BACK",
            "press_key KEY_ENTER",
            "sleep 20",
            "screenshot",
            "hierarchy",
            "recent_logs 0 4",
            "wait_for_idle 10",
            "health",
            "metrics",
        ]
    );
}

#[tokio::test]
async fn a_slow_call_times_out_naming_the_call_and_the_address() {
    let (addr, _app) = serve(Quirks {
        health_delay: Duration::from_secs(3),
        ..Quirks::default()
    })
    .await;
    let timeouts = CallTimeouts {
        default: Duration::from_millis(200),
        ..CallTimeouts::default()
    };
    let driver = GrpcDriver::connect(&addr.to_string(), timeouts)
        .await
        .expect("connects");
    let error = driver.health().await.unwrap_err();
    assert!(
        matches!(error, DeviceError::Timeout { call: "Health", .. }),
        "{error}"
    );
    let text = error.to_string();
    assert!(
        text.contains("Health") && text.contains(&addr.to_string()),
        "{text}"
    );
    // The driver is still usable after a timeout.
    driver.metrics().await.expect("metrics after a timeout");
}

#[tokio::test]
async fn waiting_for_idle_may_take_its_own_timeout_beyond_the_default() {
    let (addr, app) = serve(Quirks::default()).await;
    let timeouts = CallTimeouts {
        default: Duration::from_millis(100),
        wait_margin: Duration::from_secs(2),
        ..CallTimeouts::default()
    };
    let driver = GrpcDriver::connect(&addr.to_string(), timeouts)
        .await
        .expect("connects");
    let idle = driver
        .wait_for_idle(Duration::from_millis(400))
        .await
        .expect("answer after 400 ms");
    assert!(!idle.idle);
    driver
        .sleep(Duration::from_millis(300))
        .await
        .expect("sleep longer than the default timeout");
    assert_eq!(calls(&app), ["wait_for_idle 400", "sleep 300"]);
}

#[tokio::test]
async fn an_unreachable_address_is_named_in_the_error() {
    let free = std::net::TcpListener::bind("127.0.0.1:0").expect("binds");
    let addr = free.local_addr().expect("address").to_string();
    drop(free);
    let error = GrpcDriver::connect(&addr, CallTimeouts::default())
        .await
        .unwrap_err();
    assert!(matches!(error, DeviceError::Unreachable { .. }), "{error}");
    let text = error.to_string();
    assert!(text.contains(&addr), "{text}");
    assert!(text.to_lowercase().contains("refused"), "says why: {text}");

    let error = GrpcDriver::connect("not an address", CallTimeouts::default())
        .await
        .unwrap_err();
    assert!(error.to_string().contains("not an address"), "{error}");
}

#[tokio::test]
async fn a_device_error_status_names_the_call() {
    let (addr, _app) = serve(Quirks::default()).await;
    let driver = GrpcDriver::connect(&addr.to_string(), CallTimeouts::default())
        .await
        .expect("connects");
    let error = driver.terminate("app.other").await.unwrap_err();
    assert!(
        matches!(
            error,
            DeviceError::Call {
                call: "Terminate",
                ..
            }
        ),
        "{error}"
    );
    let text = error.to_string();
    assert!(
        text.contains("app.other is not installed") && text.contains(&addr.to_string()),
        "{text}"
    );
}

#[tokio::test]
async fn invalid_answers_are_rejected() {
    let (addr, _app) = serve(Quirks {
        not_a_png: true,
        unknown_log_level: true,
        no_root: true,
        ..Quirks::default()
    })
    .await;
    let driver = GrpcDriver::connect(&addr.to_string(), CallTimeouts::default())
        .await
        .expect("connects");
    let error = driver.screenshot().await.unwrap_err();
    assert!(
        matches!(
            error,
            DeviceError::InvalidAnswer {
                call: "Screenshot",
                ..
            }
        ),
        "{error}"
    );
    let error = driver.recent_logs(0, LogLevel::Verbose).await.unwrap_err();
    assert!(
        matches!(
            error,
            DeviceError::InvalidAnswer {
                call: "RecentLogs",
                ..
            }
        ),
        "{error}"
    );
    assert!(error.to_string().contains("99"), "{error}");
    let error = driver.hierarchy().await.unwrap_err();
    assert!(
        matches!(
            error,
            DeviceError::InvalidAnswer {
                call: "Hierarchy",
                ..
            }
        ),
        "{error}"
    );
}

#[tokio::test]
async fn an_older_driver_without_the_newer_calls_says_it_did_not_deliver_them() {
    let (addr, app) = serve(Quirks {
        older: true,
        ..Quirks::default()
    })
    .await;
    let driver = GrpcDriver::connect(&addr.to_string(), CallTimeouts::default())
        .await
        .expect("connects");
    let at = Touch::at(Point { x: 1, y: 2 });
    let refusals = [
        driver.double_tap(at).await,
        driver.long_press(at, Duration::from_millis(10)).await,
        driver.scroll(at, ScrollDirection::Up, 10).await,
        driver.clear_text().await,
        driver.navigate(&Navigation::Forward).await,
    ];
    for (outcome, call) in
        refusals
            .into_iter()
            .zip(["DoubleTap", "LongPress", "Scroll", "ClearText", "Navigate"])
    {
        let outcome = outcome.expect("an answer, not an error");
        assert!(!outcome.delivered, "{call}");
        assert!(
            outcome.detail.contains(call) && outcome.detail.contains(&addr.to_string()),
            "{}",
            outcome.detail
        );
    }
    // The calls every driver has still work.
    assert!(driver.tap(at).await.expect("tap").delivered);
    assert_eq!(calls(&app), ["tap 1 2 -"]);
}

#[tokio::test]
async fn a_server_that_goes_away_fails_calls_with_the_call_named() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("binds");
    let addr = listener.local_addr().expect("address");
    let app = Arc::new(FakeApp::default());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(DriverServer::from_arc(app))
            .serve_with_incoming_shutdown(TcpListenerStream::new(listener), async {
                let _ = stopped.await;
            }),
    );
    let driver = GrpcDriver::connect(&addr.to_string(), CallTimeouts::default())
        .await
        .expect("connects");
    driver.health().await.expect("health while up");
    let _ = stop.send(());
    server.await.expect("server task").expect("server stops");
    let error = driver.health().await.unwrap_err();
    let text = error.to_string();
    assert!(
        text.contains("Health") && text.contains(&addr.to_string()),
        "{text}"
    );
}

#[tokio::test]
async fn a_server_without_the_android_service_cannot_tell_the_window_the_process_or_the_app() {
    // The simulator's server, like this one, serves `Driver` only: the `AndroidDevice`
    // calls answer UNIMPLEMENTED, which the client takes as "this device cannot tell".
    let (addr, _app) = serve(Quirks::default()).await;
    let driver = GrpcDriver::connect(&addr.to_string(), CallTimeouts::default())
        .await
        .expect("connects");
    for _ in 0..2 {
        assert_eq!(driver.focus("app.folio").await.expect("focus"), None);
        assert_eq!(driver.app_status("app.folio").await.expect("app_status"), None);
        assert_eq!(driver.app_info("app.folio").await.expect("app_info"), None);
    }
}
