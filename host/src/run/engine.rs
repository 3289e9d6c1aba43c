//! One run: set up the device, the spec and the trace, then step until a
//! limit, a violation (when asked) or Ctrl-C, and write the summary.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::action::{Action, Candidate, ResolvedAction};
use crate::config::{DeviceChoice, RunConfig};
use uatu_device::agent::{AgentListener, ListenerConfig};
use uatu_device::{CallTimeouts, DeviceError, Driver, GrpcDriver, LogLevel};
use crate::exit::{self, Status};
use crate::ltl::{Formula, PredicateError, PredicateValue};
use crate::plugin::{LoadOptions, PluginEvent, PluginSet, PluginSpec};
use crate::run::strategy::choose_weighted;
use crate::run::target::resolve_action;
use crate::run::verify::{Verifier, count_verdicts};
use uatu_sim::{SimConfig, SimHandle, Simulator};
use crate::spec::{SpecInstance, SpecLimits, SpecModule};
use crate::state::State;
use crate::trace::{Counts, DeviceMeta, Event, Meta, RunDir, SpecMeta, StepMetrics, StepRecord, Summary};

const IDLE_TIMEOUT: Duration = Duration::from_secs(5);
const PAUSE_TIMEOUT: Duration = Duration::from_secs(5);
const APP_CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

/// Why the loop stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    MaxSteps,
    Duration,
    Violation,
    Interrupted,
    DeviceLost,
    SpecError,
    PluginError,
}

impl Stop {
    fn name(self) -> &'static str {
        match self {
            Stop::MaxSteps => "max-steps",
            Stop::Duration => "duration",
            Stop::Violation => "violation",
            Stop::Interrupted => "interrupted",
            Stop::DeviceLost => "device-lost",
            Stop::SpecError => "spec-error",
            Stop::PluginError => "plugin-error",
        }
    }
}

/// The result of a run: its summary and the exit status it earned.
pub struct Outcome {
    pub summary: Summary,
    pub status: Status,
    /// The error that ended the run early, if any (reported after the summary).
    pub error: Option<anyhow::Error>,
}

/// Runs `config` to its end. Errors before the first step (bad spec, no
/// device) are returned as errors; failures during the run end it with a
/// complete trace and an [`Outcome`] that carries them.
pub async fn execute(config: RunConfig, interrupted: Arc<AtomicBool>) -> anyhow::Result<Outcome> {
    let seed = if config.seed == 0 {
        rand::random::<u64>() | 1
    } else {
        config.seed
    };
    let started_wall = Instant::now();
    let started_at = time::OffsetDateTime::now_utc();

    let spec_bytes = std::fs::read(&config.spec)
        .with_context(|| format!("reading spec {}", config.spec.display()))
        .map_err(exit::usage)?;
    let module = SpecModule::load(&config.spec).map_err(exit::usage)?;
    let limits = SpecLimits {
        deadline: config.spec_timeout,
        memory: (config.spec_memory_mib as usize) << 20,
    };
    let mut spec = SpecInstance::new(&module, limits).map_err(exit::usage)?;
    let description = spec.load(&module, seed).map_err(exit::usage)?;
    let properties = properties_of(&config.spec, &description.properties)?;
    let mut verifier = Verifier::new(properties);

    let agent = AgentListener::bind(ListenerConfig::default())
        .await
        .map_err(exit::infrastructure)?;
    let (driver, sim) = connect_device(&config, seed, agent.socket_path().to_path_buf()).await?;
    let health = driver.health().await.map_err(exit::infrastructure)?;
    if !health.ready {
        return Err(exit::infrastructure(anyhow::anyhow!(
            "{} is not ready",
            driver.describe()
        )));
    }

    let mut run_dir = RunDir::create(&config.output, started_at, seed)?;
    let rerun = rerun_command(&config, seed);
    let mut meta = Meta {
        uatu_version: crate::VERSION.into(),
        seed,
        spec: SpecMeta {
            path: config.spec.display().to_string(),
            sha256: sha256_hex(&spec_bytes),
            module_sha256: Some(sha256_hex(&module.to_bytes())),
        },
        device: DeviceMeta {
            kind: config.device.describe(),
            bundle_id: config.bundle_id.clone(),
            platform: health.platform.clone(),
            version: health.version.clone(),
            sim: sim.as_ref().map(|_| {
                serde_json::json!({
                    "bugs": config.sim.bugs,
                    "latency_ms": config.sim.latency.as_millis() as u64,
                    "seed": config.sim.seed.unwrap_or(seed),
                })
            }),
        },
        plugins: Vec::new(),
        started_at: rfc3339(started_at),
        ended_at: None,
        rerun: rerun.clone(),
    };
    let plugin_specs: Vec<PluginSpec> = config
        .plugins
        .iter()
        .map(|choice| PluginSpec {
            path: choice.path.clone(),
            name: choice.name.clone(),
            config: choice.config.clone(),
        })
        .collect();
    let load_options = LoadOptions {
        on_error: config.on_plugin_error,
        ..LoadOptions::default()
    };
    // Plugin calls block (WASI runs its own executor): keep them off the async workers.
    let mut plugins =
        match tokio::task::block_in_place(|| PluginSet::load(&plugin_specs, run_dir.path(), &load_options)) {
            Ok(plugins) => plugins,
            Err(error) => {
                // Nothing ran: leave no half-made run directory behind.
                let _ = std::fs::remove_dir_all(run_dir.path());
                return Err(exit::usage(error));
            }
        };
    meta.plugins = plugins.plugins_meta();
    run_dir.write_meta(&meta)?;
    tokio::task::block_in_place(|| plugins.sink_run_start(&meta)).map_err(exit::usage)?;

    let mut session = Session {
        config: &config,
        driver: driver.as_ref(),
        agent,
        rng: ChaCha8Rng::seed_from_u64(seed),
        spec: &mut spec,
        verifier: &mut verifier,
        run_dir: &mut run_dir,
        counts: Counts::default(),
        device_start_ms: 0,
        last_log_ms: 0,
        last_action: None,
        previous_dispatch_us: 0,
        progress: progress_bar(&config),
        violated: 0,
        plugins: &mut plugins,
    };
    let (steps, stop, error) = session.drive(started_wall, &interrupted).await;
    let counts = session.counts.clone();
    session.progress.finish_and_clear();

    let properties = verifier.summaries();
    let mut counts = counts;
    count_verdicts(&properties, &mut counts);
    let status = match stop {
        Stop::DeviceLost => Status::Infrastructure,
        Stop::SpecError | Stop::PluginError => Status::Usage,
        _ if verifier.fails_run(config.strict) => Status::Violated,
        _ => Status::Ok,
    };
    let summary = Summary {
        steps: steps.count,
        wall_ms: started_wall.elapsed().as_millis() as u64,
        device_ms: steps.last_time,
        properties,
        counts,
        stopped: stop.name().into(),
        exit_code: status as u8,
        run_dir: run_dir.path().display().to_string(),
        rerun,
    };
    run_dir.write_summary(&summary)?;
    let sink_error = tokio::task::block_in_place(|| plugins.sink_run_end(&summary)).err();
    meta.plugins = plugins.plugins_meta();
    meta.ended_at = Some(rfc3339(time::OffsetDateTime::now_utc()));
    run_dir.write_meta(&meta)?;
    let error = error.or(sink_error.map(exit::usage));
    if let Some(sim) = sim {
        // The run is recorded; a simulator that fails to stop cleanly changes nothing.
        let _ = sim.shutdown().await;
    }
    Ok(Outcome {
        summary,
        status,
        error,
    })
}

async fn connect_device(
    config: &RunConfig,
    seed: u64,
    agent_socket: PathBuf,
) -> anyhow::Result<(Box<dyn Driver>, Option<SimHandle>)> {
    match &config.device {
        DeviceChoice::Sim => {
            let sim_config = SimConfig {
                bugs: uatu_sim::Bugs::parse(&config.sim.bugs).map_err(exit::usage)?,
                latency: config.sim.latency,
                seed: config.sim.seed.unwrap_or(seed),
                ..SimConfig::default()
            };
            let handle = Simulator::start(sim_config, "127.0.0.1:0".parse()?, Some(agent_socket))
                .await
                .map_err(exit::infrastructure)?;
            let driver = GrpcDriver::connect(&handle.addr().to_string(), CallTimeouts::default())
                .await
                .map_err(exit::infrastructure)?;
            Ok((Box::new(driver), Some(handle)))
        }
        DeviceChoice::Sidecar(addr) => {
            let driver = GrpcDriver::connect(addr, CallTimeouts::default())
                .await
                .map_err(exit::infrastructure)?;
            Ok((Box::new(driver), None))
        }
    }
}

struct Steps {
    count: u64,
    last_time: u64,
}

struct Session<'a> {
    config: &'a RunConfig,
    driver: &'a dyn Driver,
    agent: AgentListener,
    rng: ChaCha8Rng,
    spec: &'a mut SpecInstance,
    verifier: &'a mut Verifier,
    run_dir: &'a mut RunDir,
    counts: Counts,
    device_start_ms: u64,
    last_log_ms: u64,
    last_action: Option<ResolvedAction>,
    /// A step's record is written before its action is dispatched, so the dispatch time
    /// lands in the next step's record.
    previous_dispatch_us: u64,
    progress: indicatif::ProgressBar,
    /// Properties violated so far, for the progress line.
    violated: usize,
    plugins: &'a mut PluginSet,
}

impl Session<'_> {
    async fn drive(
        &mut self,
        started: Instant,
        interrupted: &AtomicBool,
    ) -> (Steps, Stop, Option<anyhow::Error>) {
        let mut steps = Steps {
            count: 0,
            last_time: 0,
        };
        if let Err(error) = self.launch(true).await {
            return (steps, Stop::DeviceLost, Some(error));
        }
        loop {
            let stop = if interrupted.load(Ordering::SeqCst) {
                Some(Stop::Interrupted)
            } else if self.config.max_steps.is_some_and(|max| steps.count >= max) {
                Some(Stop::MaxSteps)
            } else if self
                .config
                .duration
                .is_some_and(|limit| started.elapsed() >= limit)
            {
                Some(Stop::Duration)
            } else if self.config.exit_on_violation && self.verifier.any_violated() {
                Some(Stop::Violation)
            } else {
                None
            };
            if let Some(stop) = stop {
                return (steps, stop, None);
            }
            match self.step(steps.count).await {
                Ok(time) => {
                    steps.last_time = time;
                    steps.count += 1;
                    self.progress.set_position(steps.count);
                }
                Err(StepFailure::DeviceLost(error)) => {
                    steps.count += 1;
                    return (steps, Stop::DeviceLost, Some(error));
                }
                Err(StepFailure::Spec(error)) => {
                    steps.count += 1;
                    return (steps, Stop::SpecError, Some(error));
                }
                Err(StepFailure::Plugin(error)) => {
                    steps.count += 1;
                    return (steps, Stop::PluginError, Some(error));
                }
                Err(StepFailure::Trace(error)) => return (steps, Stop::DeviceLost, Some(error)),
            }
        }
    }

    async fn launch(&mut self, clear_state: bool) -> anyhow::Result<()> {
        let device_time = self
            .driver
            .launch(&self.config.bundle_id, clear_state, None)
            .await
            .map_err(exit::infrastructure)?;
        if clear_state {
            self.device_start_ms = device_time;
            self.last_log_ms = device_time;
        }
        self.agent
            .wait_for_app(APP_CONNECT_TIMEOUT)
            .await
            .map_err(exit::infrastructure)?;
        Ok(())
    }

    /// One step; returns its time.
    async fn step(&mut self, index: u64) -> Result<u64, StepFailure> {
        let mut events = Vec::new();
        let mut metrics = StepMetrics {
            dispatch_us: self.previous_dispatch_us,
            ..StepMetrics::default()
        };
        let capture_started = Instant::now();
        let idle = retry_once(&mut events, "WaitForIdle", || {
            self.driver.wait_for_idle(IDLE_TIMEOUT)
        })
        .await
        .map_err(StepFailure::device)?;
        let time = idle.device_time_ms.saturating_sub(self.device_start_ms);
        let (hierarchy, screenshot, logs, device_metrics) = tokio::join!(
            self.driver.hierarchy(),
            async {
                if self.config.screenshots {
                    Some(self.driver.screenshot().await)
                } else {
                    None
                }
            },
            self.driver.recent_logs(self.last_log_ms, LogLevel::Verbose),
            self.driver.metrics(),
        );
        let hierarchy = match hierarchy {
            Ok(hierarchy) => hierarchy,
            Err(_) => retry_once(&mut events, "Hierarchy", || self.driver.hierarchy())
                .await
                .map_err(StepFailure::device)?,
        };
        let mut logs = logs.unwrap_or_else(|error| {
            events.push(Event::DeviceRetry {
                call: "RecentLogs".into(),
                error: error.to_string(),
                gave_up: true,
            });
            Vec::new()
        });
        if let Some(last) = logs.iter().map(|entry| entry.time).max() {
            self.last_log_ms = self.last_log_ms.max(last);
        }
        if let Ok(m) = device_metrics {
            metrics.device_cpu_percent = Some(m.cpu_percent);
            metrics.device_memory_bytes = Some(m.memory_bytes);
        }
        let (screenshot_path, screenshot) = match screenshot {
            Some(Ok(shot)) => (
                Some(
                    self.run_dir
                        .write_screenshot(index, &shot.png)
                        .map_err(StepFailure::trace)?,
                ),
                Some(shot),
            ),
            Some(Err(error)) => {
                events.push(Event::DeviceRetry {
                    call: "Screenshot".into(),
                    error: error.to_string(),
                    gave_up: true,
                });
                (None, None)
            }
            None => (None, None),
        };
        metrics.capture_us = capture_started.elapsed().as_micros() as u64;

        let agent_started = Instant::now();
        let app_state = match self.agent.pause(PAUSE_TIMEOUT).await {
            Ok(app_state) => app_state,
            Err(error) => {
                // The app is gone (crash, process death): record the step as
                // observed, bring the app back, and go on.
                let mut state = State {
                    step: index,
                    time,
                    screen: hierarchy.screen,
                    hierarchy: hierarchy.root,
                    logs,
                    // Kept for the next step too: it is what led to the crash.
                    last_action: self.last_action.clone(),
                    ..State::default()
                };
                state.snapshots = Default::default();
                events.push(Event::AppDisconnected {
                    reason: error.to_string(),
                });
                self.counts.app_crashes += 1;
                self.launch(false).await.map_err(StepFailure::DeviceLost)?;
                events.push(Event::AppRelaunched);
                let record = StepRecord {
                    step: index,
                    time,
                    state,
                    evaluated: false,
                    screenshot: screenshot_path,
                    extractors: Default::default(),
                    properties: BTreeMap::new(),
                    candidates: 0,
                    action: None,
                    events,
                    metrics,
                };
                let line = self.run_dir.append_step(&record).map_err(StepFailure::trace)?;
                let plugins = &mut *self.plugins;
                tokio::task::block_in_place(|| plugins.sink_step(&record, line))
                    .map_err(|error| StepFailure::Plugin(exit::usage(error)))?;
                return Ok(time);
            }
        };
        metrics.agent_us = agent_started.elapsed().as_micros() as u64;
        logs.extend(app_state.logs);
        let mut state = State {
            step: index,
            time,
            screen: hierarchy.screen,
            hierarchy: hierarchy.root,
            snapshots: app_state.snapshots,
            logs,
            exceptions: app_state.exceptions,
            coverage: app_state.coverage,
            last_action: self.last_action.take(),
        };
        let plugins_started = Instant::now();
        let plugins = &mut *self.plugins;
        let extracted = tokio::task::block_in_place(|| plugins.extract(&state, screenshot.as_ref()));
        match extracted {
            Ok(values) => state.snapshots.extend(values),
            Err(error) => {
                let _ = self.agent.resume().await;
                return Err(StepFailure::Plugin(exit::usage(error)));
            }
        }
        metrics.plugins_us = plugins_started.elapsed().as_micros() as u64;

        let spec_started = Instant::now();
        let spec_step = match self.spec.step(&state) {
            Ok(step) => step,
            Err(error) => {
                let _ = self.agent.resume().await;
                return Err(StepFailure::Spec(exit::usage(error)));
            }
        };
        metrics.spec_us = spec_started.elapsed().as_micros() as u64;
        for error in &spec_step.generator_errors {
            self.counts.spec_errors += 1;
            let path = Candidate {
                path: error.path.clone(),
                action: Action::Wait { duration_millis: 0 },
            }
            .path_label();
            events.push(Event::GeneratorError {
                path,
                message: error.message.clone(),
                stack: error.stack.clone(),
            });
        }
        for error in &spec_step.extractor_errors {
            self.counts.spec_errors += 1;
            events.push(Event::ExtractorError {
                extractor: error.name.clone(),
                message: error.message.clone(),
                stack: error.stack.clone(),
            });
        }
        let predicates: Vec<PredicateValue> = spec_step.predicates.iter().map(predicate_value).collect();
        for (id, value) in predicates.iter().enumerate() {
            if let Err(error) = value {
                self.counts.spec_errors += 1;
                events.push(Event::PredicateError {
                    predicate: id as u32,
                    location: error.location.clone().unwrap_or_default(),
                    message: error.message.clone(),
                    stack: error.stack.clone().unwrap_or_default(),
                });
            }
        }

        let ltl_started = Instant::now();
        let (properties, violations) =
            self.verifier
                .step(index, time, &predicates, state.last_action.as_ref());
        metrics.ltl_us = ltl_started.elapsed().as_micros() as u64;
        self.violated += violations.len();
        self.progress.set_message(format!(
            "screen {} · {} violated",
            screen_name(&state),
            self.violated
        ));
        events.extend(violations);

        let plugins_started = Instant::now();
        let action = match self.choose(&spec_step.candidates, &state, &mut events) {
            Ok(action) => action,
            Err(error) => {
                let _ = self.agent.resume().await;
                return Err(StepFailure::Plugin(exit::usage(error)));
            }
        };
        metrics.plugins_us += plugins_started.elapsed().as_micros() as u64;
        let record = StepRecord {
            step: index,
            time,
            state,
            evaluated: true,
            screenshot: screenshot_path,
            extractors: spec_step.extractors,
            properties,
            candidates: spec_step.candidates.len(),
            action: action.clone(),
            events,
            metrics,
        };
        // Record before resuming: whatever happens next, this step is kept.
        let line = self.run_dir.append_step(&record).map_err(StepFailure::trace)?;
        let plugins = &mut *self.plugins;
        if let Err(error) = tokio::task::block_in_place(|| plugins.sink_step(&record, line)) {
            let _ = self.agent.resume().await;
            return Err(StepFailure::Plugin(exit::usage(error)));
        }

        let dispatch_started = Instant::now();
        let _ = self.agent.resume().await;
        if let Some(action) = &action {
            self.dispatch(action).await.map_err(StepFailure::device)?;
        } else {
            self.counts.no_action_steps += 1;
            self.driver
                .sleep(Duration::from_millis(250))
                .await
                .map_err(StepFailure::device)?;
        }
        self.previous_dispatch_us = dispatch_started.elapsed().as_micros() as u64;
        self.last_action = action;
        Ok(time)
    }

    /// Draws a candidate with the built-in strategy; one whose target is not
    /// on screen is dropped and the draw repeated among the rest.
    fn choose(
        &mut self,
        candidates: &[Candidate],
        state: &State,
        events: &mut Vec<Event>,
    ) -> Result<Option<ResolvedAction>, crate::plugin::PluginError> {
        let mut remaining: Vec<Candidate> = candidates.to_vec();
        let plugins = &mut *self.plugins;
        let plugin_choice = tokio::task::block_in_place(|| plugins.strategy_choose(state, candidates));
        for event in self.plugins.take_events() {
            events.push(match event {
                PluginEvent::Note { plugin, message, .. } => Event::Plugin { plugin, message },
                PluginEvent::Disabled { plugin, error, .. } => Event::Plugin {
                    plugin,
                    message: format!("disabled: {error}"),
                },
            });
        }
        // A strategy's choice whose target is not on screen falls back to the built-in draw.
        if let Some(index) = plugin_choice? {
            let candidate = remaining.swap_remove(index);
            if let Ok(resolved) = resolve_action(&candidate.action, candidate.path_label(), &state.hierarchy)
            {
                return Ok(Some(resolved));
            }
        }
        while let Some(index) = choose_weighted(&remaining, &mut self.rng) {
            let candidate = remaining.swap_remove(index);
            if let Ok(resolved) = resolve_action(&candidate.action, candidate.path_label(), &state.hierarchy)
            {
                return Ok(Some(resolved));
            }
        }
        events.push(Event::NoAction);
        Ok(None)
    }

    async fn dispatch(&self, action: &ResolvedAction) -> anyhow::Result<()> {
        let driver = self.driver;
        let outcome = match (&action.action, action.point) {
            (Action::Tap { .. }, Some(point)) => driver.tap(point).await,
            (Action::InputText { text, .. }, point) => {
                if let Some(point) = point {
                    driver.tap(point).await.map_err(exit::infrastructure)?;
                }
                driver.input_text(text).await
            }
            (Action::Swipe { duration_millis, .. }, Some(from)) => {
                let to = action.to_point.unwrap_or(from);
                driver
                    .swipe(
                        from,
                        to,
                        Duration::from_millis(duration_millis.unwrap_or(300) as u64),
                    )
                    .await
            }
            (Action::PressKey { key }, _) => driver.press_key(*key).await,
            (Action::Wait { duration_millis }, _) => {
                driver.sleep(Duration::from_millis(*duration_millis as u64)).await
            }
            (_, None) => return Ok(()),
        };
        outcome.map(|_| ()).map_err(exit::infrastructure)
    }
}

enum StepFailure {
    DeviceLost(anyhow::Error),
    Spec(anyhow::Error),
    Plugin(anyhow::Error),
    Trace(anyhow::Error),
}

impl StepFailure {
    fn device(error: impl Into<anyhow::Error>) -> StepFailure {
        StepFailure::DeviceLost(exit::infrastructure(error))
    }

    fn trace(error: crate::trace::TraceError) -> StepFailure {
        StepFailure::Trace(exit::infrastructure(error))
    }
}

/// Calls `call`; a timeout is recorded and retried once.
async fn retry_once<T, F, Fut>(events: &mut Vec<Event>, name: &str, call: F) -> Result<T, DeviceError>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<T, DeviceError>>,
{
    match call().await {
        Ok(value) => Ok(value),
        Err(error @ DeviceError::Timeout { .. }) => {
            events.push(Event::DeviceRetry {
                call: name.into(),
                error: error.to_string(),
                gave_up: false,
            });
            call().await.inspect_err(|error| {
                events.push(Event::DeviceRetry {
                    call: name.into(),
                    error: error.to_string(),
                    gave_up: true,
                });
            })
        }
        Err(error) => Err(error),
    }
}

fn progress_bar(config: &RunConfig) -> indicatif::ProgressBar {
    let bar = match config.max_steps {
        Some(max) => indicatif::ProgressBar::new(max),
        None => indicatif::ProgressBar::no_length(),
    };
    if config.json {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    bar.set_style(
        indicatif::ProgressStyle::with_template(match config.max_steps {
            Some(_) => "{spinner} step {pos}/{len} [{elapsed}] {msg}",
            None => "{spinner} step {pos} [{elapsed}] {msg}",
        })
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar
}

/// What the progress line calls the current screen: the app's `route`
/// snapshot when it registers one, else the package in front.
fn screen_name(state: &State) -> String {
    match state.snapshots.get("route").and_then(serde_json::Value::as_str) {
        Some(route) => route.to_owned(),
        None => state
            .hierarchy
            .descendants()
            .map(|node| node.package.as_str())
            .find(|package| !package.is_empty())
            .unwrap_or("?")
            .to_owned(),
    }
}

fn rfc3339(at: time::OffsetDateTime) -> String {
    at.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

/// The command line that repeats a run: same spec, device, seeds and limits.
pub fn rerun_command(config: &RunConfig, seed: u64) -> String {
    let mut command = vec![
        "uatu".to_string(),
        "run".into(),
        "--spec".into(),
        config.spec.display().to_string(),
    ];
    command.extend(["--seed".into(), seed.to_string()]);
    command.extend(["--device".into(), config.device.describe()]);
    if config.device == DeviceChoice::Sim {
        command.extend(["--sim-bugs".into(), config.sim.bugs.clone()]);
        command.extend(["--sim-seed".into(), config.sim.seed.unwrap_or(seed).to_string()]);
    }
    if let Some(max) = config.max_steps {
        command.extend(["--max-steps".into(), max.to_string()]);
    }
    for plugin in &config.plugins {
        command.extend(["--plugin".into(), plugin.path.display().to_string()]);
    }
    if config.strict {
        command.push("--strict".into());
    }
    command.join(" ")
}

/// The spec's properties as LTL formulas; a formula the host cannot read is a spec error.
pub(crate) fn properties_of(
    spec: &std::path::Path,
    properties: &[(String, serde_json::Value)],
) -> anyhow::Result<Vec<(String, Formula)>> {
    properties
        .iter()
        .map(|(name, formula)| {
            serde_json::from_value(formula.clone())
                .map(|formula| (name.clone(), formula))
                .map_err(|e| {
                    exit::usage(anyhow::anyhow!(
                        "spec {}: property `{name}` is not a formula: {e}",
                        spec.display()
                    ))
                })
        })
        .collect()
}

pub(crate) fn predicate_value(value: &crate::spec::PredicateValue) -> PredicateValue {
    match value {
        crate::spec::PredicateValue::Value(holds) => Ok(*holds),
        crate::spec::PredicateValue::Error { error } => Err(PredicateError {
            message: error.message.clone(),
            stack: Some(error.stack.clone()).filter(|s| !s.is_empty()),
            location: error.location.clone(),
        }),
    }
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    hex::encode(sha2::Sha256::digest(bytes))
}
