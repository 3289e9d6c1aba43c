//! The HTTP server of `uatu inspect`: the embedded page, the JSON API, and
//! server-sent events for a run still being written. Bound to 127.0.0.1 only.
//!
//! Routes (ids and paths are checked by [`Runs`], never joined blindly):
//! - `GET /`, `/runs/{id}`, `/runs/{id}/steps/{n}`: the page (deep links);
//! - `GET /assets/{name}`: its scripts and styles;
//! - `GET /api/runs`: every run with its summary;
//! - `GET /api/runs/{id}`: one run's meta and summary;
//! - `GET /api/runs/{id}/index`: every step's marks and the properties' timelines;
//! - `GET /api/runs/{id}/steps?from=N&count=M`: a page of complete records;
//! - `GET /api/runs/{id}/steps/{n}`: one record;
//! - `GET /api/runs/{id}/files/{*path}`: a file of the run (a record's `screenshot`);
//! - `GET /api/runs/{id}/events`: server-sent events `steps` (new marks) and `ended`.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Json;
use axum::Router;
use axum::extract::{Path as UrlPath, Query, State};
use axum::http::{StatusCode, header};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde::Deserialize;
use tokio_stream::wrappers::ReceiverStream;

use super::index::StepIndex;
use super::{InspectError, Runs, assets};
use crate::trace;

/// How often a run being written is looked at for new steps.
const POLL: Duration = Duration::from_millis(300);

/// The inspect server, listening.
pub struct Server {
    listener: tokio::net::TcpListener,
    router: Router,
    /// The address it listens on (127.0.0.1 and the port, chosen by the OS for port 0).
    pub address: SocketAddr,
}

impl Server {
    /// Serves until the process ends (or the future is dropped).
    pub async fn run(self) -> Result<(), InspectError> {
        axum::serve(self.listener, self.router)
            .await
            .map_err(InspectError::Serve)
    }
}

/// Binds 127.0.0.1:`port` (0: any free port) to serve `runs`.
pub async fn serve(runs: Runs, port: u16) -> Result<Server, InspectError> {
    let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, port))
        .await
        .map_err(|source| InspectError::Bind { port, source })?;
    let address = listener
        .local_addr()
        .map_err(|source| InspectError::Bind { port, source })?;
    let shared = Arc::new(Shared {
        runs,
        indexes: Mutex::new(HashMap::new()),
    });
    let router = Router::new()
        .route("/", get(page))
        .route("/runs/{id}", get(page))
        .route("/runs/{id}/steps/{n}", get(page))
        .route("/assets/{name}", get(asset))
        .route("/api/runs", get(list))
        .route("/api/runs/{id}", get(info))
        .route("/api/runs/{id}/index", get(index))
        .route("/api/runs/{id}/steps", get(steps))
        .route("/api/runs/{id}/steps/{n}", get(step))
        .route("/api/runs/{id}/files/{*path}", get(file))
        .route("/api/runs/{id}/events", get(events))
        .with_state(shared);
    Ok(Server {
        listener,
        router,
        address,
    })
}

struct Shared {
    runs: Runs,
    /// The index of each finished run, computed once (a running run's changes).
    indexes: Mutex<HashMap<String, Arc<StepIndex>>>,
}

type AppState = State<Arc<Shared>>;

impl IntoResponse for InspectError {
    fn into_response(self) -> Response {
        let status = if self.is_usage() {
            StatusCode::NOT_FOUND
        } else {
            StatusCode::INTERNAL_SERVER_ERROR
        };
        let body = serde_json::json!({ "error": crate::errors::chain(&self) });
        (status, Json(body)).into_response()
    }
}

/// Runs blocking file work off the async threads.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, InspectError> + Send + 'static,
) -> Result<T, InspectError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| InspectError::Serve(std::io::Error::other(e)))?
}

async fn page(State(shared): AppState) -> Response {
    let config = serde_json::json!({ "mode": "server", "single": shared.runs.single() });
    let html = assets::page(&config.to_string(), "");
    ([(header::CACHE_CONTROL, "no-store")], axum::response::Html(html)).into_response()
}

async fn asset(UrlPath(name): UrlPath<String>) -> Response {
    match assets::get(&name) {
        Some((mime, body)) => ([(header::CONTENT_TYPE, mime)], body).into_response(),
        None => InspectError::NotFound(name).into_response(),
    }
}

async fn list(State(shared): AppState) -> Result<Response, InspectError> {
    let runs = blocking(move || shared.runs.list()).await?;
    Ok(Json(runs).into_response())
}

async fn info(State(shared): AppState, UrlPath(id): UrlPath<String>) -> Result<Response, InspectError> {
    let info = blocking(move || shared.runs.info(&id)).await?;
    Ok(Json(info).into_response())
}

async fn index(State(shared): AppState, UrlPath(id): UrlPath<String>) -> Result<Response, InspectError> {
    let index = blocking(move || {
        if let Some(index) = shared.indexes.lock().ok().and_then(|m| m.get(&id).cloned()) {
            return Ok(index);
        }
        let finished = !shared.runs.info(&id)?.running;
        let index = Arc::new(shared.runs.index(&id)?);
        if finished && let Ok(mut indexes) = shared.indexes.lock() {
            indexes.insert(id, index.clone());
        }
        Ok(index)
    })
    .await?;
    Ok(Json(&*index).into_response())
}

#[derive(Deserialize)]
struct PageQuery {
    #[serde(default)]
    from: u64,
    #[serde(default = "default_count")]
    count: u64,
}

fn default_count() -> u64 {
    50
}

async fn steps(
    State(shared): AppState,
    UrlPath(id): UrlPath<String>,
    Query(query): Query<PageQuery>,
) -> Result<Response, InspectError> {
    let page = blocking(move || shared.runs.page(&id, query.from, query.count)).await?;
    Ok(Json(page).into_response())
}

async fn step(
    State(shared): AppState,
    UrlPath((id, n)): UrlPath<(String, u64)>,
) -> Result<Response, InspectError> {
    let record = blocking(move || shared.runs.step(&id, n)).await?;
    Ok(Json(record).into_response())
}

async fn file(
    State(shared): AppState,
    UrlPath((id, path)): UrlPath<(String, String)>,
) -> Result<Response, InspectError> {
    let (path, bytes) = blocking(move || {
        let file = shared.runs.run_file(&id, &path)?;
        let bytes = std::fs::read(&file).map_err(|e| trace::TraceError::io(&file, e))?;
        Ok((file, bytes))
    })
    .await?;
    let mime = match path.extension().and_then(|e| e.to_str()) {
        Some("png") => "image/png",
        Some("json") | Some("jsonl") => "application/json",
        _ => "application/octet-stream",
    };
    // A file of a run never changes once written (screenshots are written before their record).
    Ok((
        [
            (header::CONTENT_TYPE, mime),
            (header::CACHE_CONTROL, "max-age=3600"),
        ],
        bytes,
    )
        .into_response())
}

#[derive(Deserialize)]
struct EventsQuery {
    /// How many steps the page already has.
    #[serde(default)]
    from: u64,
}

/// Server-sent events for a run: `steps` with the marks of each new complete
/// step as it is written, then `ended` with the run's info once `summary.json`
/// appears. A finished run gets `ended` at once.
async fn events(
    State(shared): AppState,
    UrlPath(id): UrlPath<String>,
    Query(query): Query<EventsQuery>,
) -> Result<Response, InspectError> {
    let runs = shared.runs.clone();
    let check = runs.clone();
    let id_check = id.clone();
    blocking(move || check.run_dir(&id_check).map(|_| ())).await?;
    let (sender, receiver) = tokio::sync::mpsc::channel::<Result<SseEvent, Infallible>>(16);
    tokio::spawn(async move {
        let mut known = query.from;
        loop {
            let runs = runs.clone();
            let id = id.clone();
            // Whether the run had ended is looked at before its steps are read, so
            // that no step written before `summary.json` is missed.
            let polled = blocking(move || {
                let ended = runs.ended(&id)?;
                let page = runs.page(&id, known, super::MAX_PAGE)?;
                let info = if ended && page.steps.is_empty() {
                    Some(runs.info(&id)?)
                } else {
                    None
                };
                Ok(((ended, info), page))
            })
            .await;
            let Ok(((ended, info), page)) = polled else { break };
            if !page.steps.is_empty() {
                known += page.steps.len() as u64;
                // The new steps' marks and timeline changes: the page merges them into its index.
                let mut index = StepIndex::default();
                for record in &page.steps {
                    index.push(record);
                }
                let data = serde_json::to_string(&index).unwrap_or_default();
                if sender
                    .send(Ok(SseEvent::default().event("steps").data(data)))
                    .await
                    .is_err()
                {
                    return;
                }
                // More may be waiting already: read on without sleeping.
                continue;
            }
            if let (true, Some(info)) = (ended, info) {
                let data = serde_json::to_string(&info).unwrap_or_default();
                let _ = sender
                    .send(Ok(SseEvent::default().event("ended").data(data)))
                    .await;
                return;
            }
            if sender.is_closed() {
                return;
            }
            tokio::time::sleep(POLL).await;
        }
    });
    Ok(Sse::new(ReceiverStream::new(receiver))
        .keep_alive(KeepAlive::default())
        .into_response())
}
