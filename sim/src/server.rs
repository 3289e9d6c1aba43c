//! The gRPC driver server (`proto/driver.proto`) over the Folio model.

use std::sync::Arc;
use std::time::Duration;

use tonic::{Request, Response, Status};

use super::device::{self, Device};
use super::folio::{Folio, InputResult};
use super::render;
use super::screen;
use uatu_device::grpc;
use uatu_device::model::{LogLevel, Navigation, Node, Point, Touch};
use uatu_device::proto::{self, driver_server::Driver, tap_selector_request::Selector};

pub(crate) struct SimDriver {
    pub device: Arc<Device>,
    pub latency: Duration,
    pub scale: f32,
    pub bundle_id: String,
}

type Reply<T> = Result<Response<T>, Status>;

impl SimDriver {
    async fn delay(&self) {
        if !self.latency.is_zero() {
            tokio::time::sleep(self.latency).await;
        }
    }

    async fn input(&self, apply: impl FnOnce(&mut Folio) -> InputResult) -> Reply<proto::InputResponse> {
        self.delay().await;
        let (result, now) = self
            .device
            .input(|folio| {
                let result = apply(folio);
                (result, folio.now())
            })
            .await;
        Ok(Response::new(proto::InputResponse {
            delivered: result.delivered,
            confirmed: result.confirmed,
            app_restarted: false,
            detail: result.detail,
            device_time_ms: now,
        }))
    }

    fn check_bundle(&self, bundle_id: &str) -> Result<(), Status> {
        if bundle_id == self.bundle_id {
            Ok(())
        } else {
            Err(Status::not_found(format!(
                "no app `{bundle_id}` is installed on the simulator (it has `{}`)",
                self.bundle_id
            )))
        }
    }
}

fn touch(point: Option<proto::Point>, element: Option<proto::Bounds>, what: &str) -> Result<Touch, Status> {
    grpc::from_proto_touch(point, element)
        .ok_or_else(|| Status::invalid_argument(format!("{what} has no point")))
}

fn point(point: Option<proto::Point>, what: &str) -> Result<Point, Status> {
    let point = point.ok_or_else(|| Status::invalid_argument(format!("{what} has no point")))?;
    Ok(Point {
        x: point.x,
        y: point.y,
    })
}

#[tonic::async_trait]
impl Driver for SimDriver {
    async fn launch(&self, request: Request<proto::LaunchRequest>) -> Reply<proto::LaunchResponse> {
        self.delay().await;
        let request = request.into_inner();
        self.check_bundle(&request.bundle_id)?;
        let now = self
            .device
            .input(|folio| {
                folio.launch(request.clear_state);
                folio.now()
            })
            .await;
        Ok(Response::new(proto::LaunchResponse { device_time_ms: now }))
    }

    async fn terminate(&self, request: Request<proto::TerminateRequest>) -> Reply<proto::TerminateResponse> {
        self.delay().await;
        self.check_bundle(&request.into_inner().bundle_id)?;
        self.device.input(Folio::terminate).await;
        Ok(Response::new(proto::TerminateResponse {}))
    }

    async fn tap(&self, request: Request<proto::TapRequest>) -> Reply<proto::InputResponse> {
        let request = request.into_inner();
        let at = touch(request.point, request.element, "Tap")?;
        self.input(|folio| device::tap(folio, at)).await
    }

    async fn double_tap(&self, request: Request<proto::DoubleTapRequest>) -> Reply<proto::InputResponse> {
        let request = request.into_inner();
        let at = touch(request.point, request.element, "DoubleTap")?;
        self.input(|folio| device::double_tap(folio, at)).await
    }

    async fn long_press(&self, request: Request<proto::LongPressRequest>) -> Reply<proto::InputResponse> {
        let request = request.into_inner();
        let at = touch(request.point, request.element, "LongPress")?;
        let hold = u64::from(request.duration_ms);
        self.input(move |folio| device::long_press(folio, at, hold)).await
    }

    async fn scroll(&self, request: Request<proto::ScrollRequest>) -> Reply<proto::InputResponse> {
        let request = request.into_inner();
        let at = touch(request.point, request.element, "Scroll")?;
        let direction = grpc::from_proto_direction(request.direction)
            .ok_or_else(|| Status::invalid_argument("Scroll needs a direction"))?;
        self.input(move |folio| device::scroll(folio, at, direction, request.distance))
            .await
    }

    async fn clear_text(&self, _request: Request<proto::ClearTextRequest>) -> Reply<proto::InputResponse> {
        self.input(Folio::clear_text).await
    }

    async fn navigate(&self, request: Request<proto::NavigateRequest>) -> Reply<proto::InputResponse> {
        let to = grpc::from_proto_navigation(request.into_inner())
            .ok_or_else(|| Status::invalid_argument("Navigate needs a step or an address"))?;
        let restarts = to == Navigation::Reload;
        let mut response = self
            .input(move |folio| match to {
                Navigation::Back => folio.system_back(),
                Navigation::Reload => folio.reload(),
                Navigation::Forward => InputResult::refused("Folio is an Android app: Android has no forward navigation"),
                Navigation::To(url) => InputResult::refused(format!(
                    "Folio is an Android app with no addresses: cannot navigate to {url:?} (Navigate to an address is for the web device)"
                )),
            })
            .await?;
        response.get_mut().app_restarted = restarts && response.get_ref().delivered;
        Ok(response)
    }

    async fn tap_selector(&self, request: Request<proto::TapSelectorRequest>) -> Reply<proto::InputResponse> {
        let selector = request
            .into_inner()
            .selector
            .ok_or_else(|| Status::invalid_argument("TapSelector has no selector"))?;
        self.input(move |folio| {
            let root = screen::build(folio).to_node();
            let matches = |node: &&Node| match &selector {
                Selector::ResourceId(id) => node.id == *id,
                Selector::Text(text) => node.text == *text,
                Selector::ContentDescription(desc) => node.desc == *desc,
            };
            match root.descendants().find(matches) {
                Some(node) => device::tap(folio, Touch::on(node.bounds)),
                None => InputResult::refused(format!("no element matches {selector:?}")),
            }
        })
        .await
    }

    async fn input_text(&self, request: Request<proto::InputTextRequest>) -> Reply<proto::InputResponse> {
        let text = request.into_inner().text;
        self.input(move |folio| folio.input_text(&text)).await
    }

    async fn swipe(&self, request: Request<proto::SwipeRequest>) -> Reply<proto::InputResponse> {
        let request = request.into_inner();
        let (from, to) = (point(request.from, "Swipe")?, point(request.to, "Swipe")?);
        self.input(move |folio| device::swipe(folio, from, to, u64::from(request.duration_ms)))
            .await
    }

    async fn press_key(&self, request: Request<proto::PressKeyRequest>) -> Reply<proto::InputResponse> {
        let key = grpc::from_proto_key(request.into_inner().key)
            .ok_or_else(|| Status::invalid_argument("PressKey needs a key"))?;
        self.input(move |folio| device::press_key(folio, key)).await
    }

    async fn sleep(&self, request: Request<proto::SleepRequest>) -> Reply<proto::InputResponse> {
        let duration = u64::from(request.into_inner().duration_ms);
        self.input(move |folio| folio.sleep(duration)).await
    }

    async fn screenshot(
        &self,
        _request: Request<proto::ScreenshotRequest>,
    ) -> Reply<proto::ScreenshotResponse> {
        self.delay().await;
        let root = screen::build(&self.device.lock().folio);
        let shot =
            render::screenshot(&root, self.scale).map_err(|error| Status::internal(error.to_string()))?;
        Ok(Response::new(proto::ScreenshotResponse {
            png: shot.png,
            width: shot.width,
            height: shot.height,
        }))
    }

    async fn hierarchy(&self, _request: Request<proto::HierarchyRequest>) -> Reply<proto::HierarchyResponse> {
        self.delay().await;
        let hierarchy = screen::hierarchy(&self.device.lock().folio);
        Ok(Response::new(proto::HierarchyResponse {
            root: Some(grpc::to_proto_node(&hierarchy.root)),
            screen_width: hierarchy.screen.width,
            screen_height: hierarchy.screen.height,
        }))
    }

    async fn recent_logs(
        &self,
        request: Request<proto::RecentLogsRequest>,
    ) -> Reply<proto::RecentLogsResponse> {
        self.delay().await;
        let request = request.into_inner();
        // Unspecified (or unknown) means every level.
        let min_level = grpc::from_proto_level(request.min_level).unwrap_or(LogLevel::Verbose);
        let entries = self
            .device
            .lock()
            .folio
            .logs_after(request.since_ms, min_level)
            .into_iter()
            .map(|entry| proto::LogEntry {
                time_ms: entry.time,
                level: grpc::to_proto_level(entry.level) as i32,
                tag: entry.tag,
                message: entry.message,
            })
            .collect();
        Ok(Response::new(proto::RecentLogsResponse { entries }))
    }

    async fn wait_for_idle(
        &self,
        _request: Request<proto::WaitForIdleRequest>,
    ) -> Reply<proto::WaitForIdleResponse> {
        self.delay().await;
        let (idle, now) = self
            .device
            .input(|folio| {
                let idle = folio.wait_for_idle();
                (idle, folio.now())
            })
            .await;
        Ok(Response::new(proto::WaitForIdleResponse {
            idle,
            device_time_ms: now,
        }))
    }

    async fn health(&self, _request: Request<proto::HealthRequest>) -> Reply<proto::HealthResponse> {
        self.delay().await;
        Ok(Response::new(proto::HealthResponse {
            ready: true,
            version: format!("uatu-sim {}", env!("CARGO_PKG_VERSION")),
            platform: "sim".into(),
        }))
    }

    async fn metrics(&self, _request: Request<proto::MetricsRequest>) -> Reply<proto::MetricsResponse> {
        self.delay().await;
        let state = self.device.lock();
        let (cpu_percent, memory_bytes) = metrics(&state.folio);
        Ok(Response::new(proto::MetricsResponse {
            cpu_percent,
            memory_bytes,
        }))
    }
}

/// Plausible, deterministic metrics: a busy-ish CPU and a heap that grows with the data.
pub(crate) fn metrics(folio: &Folio) -> (f64, u64) {
    if !folio.is_running() {
        return (0.0, 0);
    }
    // A cheap integer hash of the clock and input count, so the numbers vary but replay identically.
    let mut mix = folio.now().wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ folio.input_count().rotate_left(17);
    mix ^= mix >> 29;
    let cpu = 4.0 + (mix % 1_800) as f64 / 100.0;
    let txns: usize = folio
        .persisted
        .accounts
        .iter()
        .map(|account| account.txns.len())
        .sum();
    let memory = 96 * 1024 * 1024
        + folio.persisted.accounts.len() as u64 * 24 * 1024
        + txns as u64 * 2 * 1024
        + (mix >> 40) % (4 * 1024 * 1024);
    (cpu, memory)
}
