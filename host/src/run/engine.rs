//! One run: set up the device, the spec and the trace, then step until a
//! limit, a violation (when asked), Ctrl-C or a failure, and sum it up.
//!
//! A step is five phases, each its own function:
//! [`Session::capture`] (idle, focused window, hierarchy, screenshot, logs, and the app paused) →
//! [`Session::evaluate`] (with the app paused: extractor plugins, spec, LTL) →
//! [`Session::choose`] (strategy) → [`Session::record`] (trace, sinks) →
//! [`Session::dispatch`] (the action, after the app is resumed).
//! The paused phases run inside [`Session::while_paused`], which resumes the app
//! on every exit path. Spec and plugin calls block (they run Wasm), so both run
//! in one place: [`blocking`].

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use uatu_device::agent::{AgentError, AgentListener, AgentState};
use uatu_device::{
    AppProcess, AppStatus, DeviceError, Driver, Hierarchy, InputOutcome, Key, LogLevel, Navigation,
    Screenshot, Touch, Window, WindowKind,
};

use crate::action::{Action, Applied, Candidate, LONG_PRESS_MILLIS, ResolvedAction, SWIPE_MILLIS};
use crate::devices::{self, Connected};
use crate::plugin::{LoadOptions, PluginEvent, PluginSet};
use crate::run::replay::{Replay, ReplayReport, resolve_scripted, screen_signature};
use crate::run::strategy::{draw_on_demand_from, draw_on_screen};
use crate::run::target::resolve_action;
use crate::run::verify::{Verifier, count_verdicts, predicate_values};
use crate::settings::{HierarchyMode, RunConfig};
use crate::spec::{GeneratorError, Setup, SpecError, SpecInstance, SpecLimits, SpecModule, SpecStep};
use crate::state::State;
use crate::trace::{
    Counts, DeviceMeta, Event, HierarchySource, Meta, RunDir, SpecMeta, StepMetrics, StepRecord, Summary,
    sha256_hex,
};
use crate::{Error, ExitStatus};

const IDLE_TIMEOUT: Duration = Duration::from_secs(5);
const PAUSE_TIMEOUT: Duration = Duration::from_secs(5);
const APP_CONNECT_TIMEOUT: Duration = Duration::from_secs(15);
/// How long a step with nothing to do lets the app run before looking again.
const NO_ACTION_WAIT: Duration = Duration::from_millis(250);
/// The generator label of an action the spec's `setup` gave (a setup generator's
/// own path follows it: `setup/0:login`).
const SETUP_LABEL: &str = "setup";

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
    TraceError,
    /// A replay dispatched its whole script (and observed the last action's effect).
    ScriptEnd,
    /// A replay met an action whose target was not on screen, and was asked to stop there.
    TargetMissing,
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
            Stop::TraceError => "trace-error",
            Stop::ScriptEnd => "script-end",
            Stop::TargetMissing => "target-missing",
        }
    }
}

/// Where a run is, told to the caller after every step (for a progress line).
#[derive(Debug, Clone)]
pub struct Progress {
    /// Steps done.
    pub steps: u64,
    /// The screen the last step saw: the app's `route` snapshot, else the package in front.
    pub screen: String,
    /// Properties violated so far.
    pub violated: usize,
}

/// The result of a run that got as far as its first step.
pub struct Outcome {
    /// What was found, kept in memory even when the run directory could not take it.
    pub summary: Summary,
    /// The exit status the run earned.
    pub status: ExitStatus,
    /// The failure that ended the run early, if any (reported after the summary).
    pub error: Option<Error>,
    /// Set when writing the run directory failed: the last step the trace holds
    /// (`None` inside: not even the first), and what failed.
    pub trace_incomplete: Option<TraceIncomplete>,
    /// For a replay: how far the script got and where the screens diverged.
    pub replay: Option<ReplayReport>,
}

/// The run directory is missing part of the run.
#[derive(Debug)]
pub struct TraceIncomplete {
    /// The last step `trace.jsonl` holds, if any.
    pub last_step: Option<u64>,
    /// Why the rest is missing.
    pub error: Error,
}

/// Runs `config` to its end, calling `on_step` after each step. Errors before the
/// first step (bad spec, no device, a plugin that cannot load) are returned as
/// errors; failures during the run end it with an [`Outcome`] that carries them.
pub async fn execute(
    config: RunConfig,
    interrupted: Arc<AtomicBool>,
    on_step: impl FnMut(&Progress),
) -> Result<Outcome, Error> {
    run(config, None, interrupted, on_step).await
}

/// Runs `config` with `replay`'s script as the action source instead of the strategy,
/// as [`execute`] does otherwise; the run ends when the script does (after observing
/// the last action's effect), at `replay`'s early stops, or at `config`'s limits.
pub async fn replay(
    config: RunConfig,
    replay: Replay,
    interrupted: Arc<AtomicBool>,
    on_step: impl FnMut(&Progress),
) -> Result<Outcome, Error> {
    run(config, Some(replay), interrupted, on_step).await
}

async fn run(
    config: RunConfig,
    replay: Option<Replay>,
    interrupted: Arc<AtomicBool>,
    mut on_step: impl FnMut(&Progress),
) -> Result<Outcome, Error> {
    let seed = config.seed;
    let started_wall = Instant::now();
    let started_at = time::OffsetDateTime::now_utc();

    let spec_bytes = std::fs::read(&config.spec).map_err(|source| crate::spec::LoadError::Read {
        path: config.spec.clone(),
        source,
    })?;
    let module = SpecModule::load(&config.spec)?;
    let limits = SpecLimits {
        deadline: config.spec_timeout,
        memory: (config.spec_memory_mib as usize) << 20,
    };
    let mut spec = SpecInstance::new(&module, limits)?;
    let description = spec.load(&module, seed)?;
    let mut verifier = Verifier::for_spec(&config.spec, &description.properties)?;
    let setup = description.setup.clone();

    let device = devices::connect(&config.device).await?;
    let health = device.driver.health().await?;
    if !health.ready {
        return Err(Error::DeviceNotReady {
            device: device.driver.describe(),
        });
    }

    let mut run_dir = RunDir::create(&config.output, started_at, seed, config.trace_format)?;
    let rerun = config.rerun.clone();
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
            options: config.device.recorded_options(),
        },
        plugins: Vec::new(),
        started_at: rfc3339(started_at),
        ended_at: None,
        rerun: rerun.clone(),
    };
    let load_options = LoadOptions {
        on_error: config.on_plugin_error,
        ..LoadOptions::default()
    };
    let mut plugins = match blocking(|| PluginSet::load(&config.plugins, run_dir.path(), &load_options)) {
        Ok(plugins) => plugins,
        Err(error) => {
            // Nothing ran: leave no half-made run directory behind.
            let _ = std::fs::remove_dir_all(run_dir.path());
            return Err(error.into());
        }
    };
    meta.plugins = plugins.plugins_meta();
    run_dir.write_meta(&meta)?;
    blocking(|| plugins.sink_run_start(&meta))?;

    let Connected { driver, agent, .. } = &device;
    let mut session = Session {
        config: &config,
        driver: driver.as_ref(),
        agent,
        rng: ChaCha8Rng::seed_from_u64(seed),
        spec: &mut spec,
        verifier: &mut verifier,
        run_dir: &mut run_dir,
        plugins: &mut plugins,
        counts: Counts::default(),
        device_start_ms: 0,
        last_log_ms: 0,
        last_action: None,
        previous_dispatch_us: 0,
        violated: 0,
        last_recorded: None,
        script: replay.map(ScriptCursor::new),
        setup,
        setup_run: None,
    };
    let (steps, stop, error) = session.drive(started_wall, &interrupted, &mut on_step).await;
    let mut counts = session.counts.clone();
    let last_recorded = session.last_recorded;
    let replay_report = session.script.take().map(|cursor| cursor.report);

    let properties = verifier.summaries();
    count_verdicts(&properties, &mut counts);
    let status = match &error {
        Some(error) => error.exit_status(),
        None if verifier.fails_run(config.strict) => ExitStatus::Violated,
        None => ExitStatus::Ok,
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
    // What the run found is in `summary` whatever happens to the disk from here on:
    // a failure of the trace itself makes the trace incomplete, any other is the run's.
    let (mut trace_error, run_error) = match stop {
        Stop::TraceError => (error, None),
        _ => (None, error),
    };
    if trace_error.is_none()
        && let Err(error) = run_dir.write_summary(&summary)
    {
        trace_error = Some(error.into());
    }
    let sink_error = blocking(|| plugins.sink_run_end(&summary)).err();
    meta.plugins = plugins.plugins_meta();
    meta.ended_at = Some(rfc3339(time::OffsetDateTime::now_utc()));
    if trace_error.is_none()
        && let Err(error) = run_dir.write_meta(&meta)
    {
        trace_error = Some(error.into());
    }
    // The run is recorded; a device that fails to stop cleanly changes nothing.
    let _ = device.stop().await;
    let status = match &trace_error {
        Some(error) => error.exit_status(),
        None => status,
    };
    let mut summary = summary;
    summary.exit_code = status as u8;
    Ok(Outcome {
        summary,
        status,
        error: run_error.or(sink_error.map(Error::from)),
        trace_incomplete: trace_error.map(|error| TraceIncomplete {
            last_step: last_recorded,
            error,
        }),
        replay: replay_report,
    })
}

/// Runs a call into Wasm (the spec, a plugin) off the async workers: both block.
fn blocking<R>(call: impl FnOnce() -> R) -> R {
    tokio::task::block_in_place(call)
}

struct Steps {
    count: u64,
    last_time: u64,
}

/// What the device showed at the start of a step.
struct Observation {
    time: u64,
    state: State,
    /// Where `state.hierarchy` came from, when the app could have read it.
    hierarchy_source: Option<HierarchySource>,
    screenshot: Option<Screenshot>,
    screenshot_path: Option<String>,
}

/// The hierarchy half of a capture: the driver's dump, or the app paused with its own windows.
enum Sighting {
    Dumped(Result<Hierarchy, DeviceError>),
    Paused(Result<AgentState, AgentError>, Duration),
}

/// Why the app gave no state at a step.
enum Unanswered {
    /// Its window was not in front (another app, its ANR dialog): it was not asked.
    NotAsked,
    /// It did not answer the pause.
    Silent(AgentError),
}

/// What the device says became of an app that gave no state.
enum AppFate {
    /// Alive with another app in front: the step goes on without the app's state.
    Left,
    /// Alive and not responding (an ANR), with what the device said.
    NotResponding(String),
    /// Gone, or it cannot be told otherwise: a crash, with why.
    Gone(String),
}

/// What a step decided while the app was paused.
struct Decision {
    action: Option<ResolvedAction>,
}

/// Why a step could not finish.
enum StepFailure {
    Device(Error),
    Spec(Error),
    Plugin(Error),
    Trace(Error),
}

impl StepFailure {
    fn stop(&self) -> Stop {
        match self {
            StepFailure::Device(_) => Stop::DeviceLost,
            StepFailure::Spec(_) => Stop::SpecError,
            StepFailure::Plugin(_) => Stop::PluginError,
            StepFailure::Trace(_) => Stop::TraceError,
        }
    }

    fn into_error(self) -> Error {
        match self {
            StepFailure::Device(error)
            | StepFailure::Spec(error)
            | StepFailure::Plugin(error)
            | StepFailure::Trace(error) => error,
        }
    }

    fn device(error: impl Into<Error>) -> StepFailure {
        StepFailure::Device(error.into())
    }

    fn plugin(error: crate::plugin::PluginError) -> StepFailure {
        StepFailure::Plugin(error.into())
    }

    fn trace(error: crate::trace::TraceError) -> StepFailure {
        StepFailure::Trace(error.into())
    }
}

struct Session<'a> {
    config: &'a RunConfig,
    driver: &'a dyn Driver,
    agent: &'a AgentListener,
    rng: ChaCha8Rng,
    spec: &'a mut SpecInstance,
    verifier: &'a mut Verifier,
    run_dir: &'a mut RunDir,
    plugins: &'a mut PluginSet,
    counts: Counts,
    device_start_ms: u64,
    last_log_ms: u64,
    last_action: Option<ResolvedAction>,
    /// A step's record is written before its action is dispatched, so the dispatch time
    /// lands in the next step's record.
    previous_dispatch_us: u64,
    /// Properties violated so far, for the progress line.
    violated: usize,
    /// The last step `trace.jsonl` holds.
    last_recorded: Option<u64>,
    /// A replay's script, the action source instead of the strategy.
    script: Option<ScriptCursor>,
    /// The spec's `setup` export, run after every launch of the app.
    setup: Option<Setup>,
    /// Where the running `setup` is; `None` once it is done (or without one).
    setup_run: Option<SetupRun>,
}

/// A spec's `setup` while it runs: one action a step, before the root's (docs/running.md, "Setup steps").
enum SetupRun {
    /// The list's actions not yet dispatched, in order.
    Actions(VecDeque<Action>),
    /// The generator's root place in the action tree: drawn from until it offers nothing.
    Generator(usize),
}

/// Where a replay is in its script.
struct ScriptCursor {
    replay: Replay,
    report: ReplayReport,
    /// Why the replay is over, once it is (checked before the next step).
    finished: Option<Stop>,
    /// The last step skipped its action (target not on screen): nothing to wait for.
    skipped: bool,
}

impl ScriptCursor {
    fn new(replay: Replay) -> ScriptCursor {
        ScriptCursor {
            replay,
            report: ReplayReport::default(),
            finished: None,
            skipped: false,
        }
    }
}

impl Session<'_> {
    async fn drive(
        &mut self,
        started: Instant,
        interrupted: &AtomicBool,
        on_step: &mut impl FnMut(&Progress),
    ) -> (Steps, Stop, Option<Error>) {
        let mut steps = Steps {
            count: 0,
            last_time: 0,
        };
        if let Err(error) = self.launch(true).await {
            return (steps, Stop::DeviceLost, Some(error));
        }
        loop {
            if let Some(stop) = self.limit_reached(steps.count, started, interrupted) {
                return (steps, stop, None);
            }
            match self.step(steps.count).await {
                Ok((time, screen)) => {
                    steps.last_time = time;
                    steps.count += 1;
                    on_step(&Progress {
                        steps: steps.count,
                        screen,
                        violated: self.violated,
                    });
                }
                Err(failure) => {
                    // The failed step counts, unless it is the one the trace could not take.
                    if !matches!(failure, StepFailure::Trace(_)) {
                        steps.count += 1;
                    }
                    return (steps, failure.stop(), Some(failure.into_error()));
                }
            }
        }
    }

    fn limit_reached(&self, steps: u64, started: Instant, interrupted: &AtomicBool) -> Option<Stop> {
        if interrupted.load(Ordering::SeqCst) {
            Some(Stop::Interrupted)
        } else if let Some(stop) = self.script.as_ref().and_then(|cursor| cursor.finished) {
            Some(stop)
        } else if self.config.max_steps.is_some_and(|max| steps >= max) {
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
        }
    }

    async fn launch(&mut self, clear_state: bool) -> Result<(), Error> {
        // Launching restarts the app: only a handshake after this point is the new process's.
        let handshakes = self.agent.status().connections;
        let device_time = self
            .driver
            .launch(&self.config.bundle_id, clear_state, None)
            .await?;
        if clear_state {
            self.device_start_ms = device_time;
            self.last_log_ms = device_time;
        }
        self.agent
            .wait_for_app_after(handshakes, APP_CONNECT_TIMEOUT)
            .await?;
        self.begin_setup();
        Ok(())
    }

    /// Starts the spec's `setup` over (after a launch, a relaunch, an input that
    /// restarted the app): its actions come before the root's from the next step on.
    fn begin_setup(&mut self) {
        self.setup_run = self.setup.as_ref().map(|setup| match setup {
            Setup::Actions(actions) => SetupRun::Actions(actions.iter().cloned().collect()),
            Setup::Generator { place } => SetupRun::Generator(*place),
        });
    }

    /// One step; returns its time and the screen it saw.
    async fn step(&mut self, index: u64) -> Result<(u64, String), StepFailure> {
        let mut events = Vec::new();
        let mut metrics = StepMetrics {
            dispatch_us: self.previous_dispatch_us,
            ..StepMetrics::default()
        };
        let (observed, paused) = match self.capture(index, &mut events, &mut metrics).await {
            Ok(captured) => captured,
            Err(failure) => {
                // A capture that failed after pausing the app must not leave it paused
                // (without a pause this sends nothing).
                let _ = self.agent.resume().await;
                return Err(failure);
            }
        };
        let time = observed.time;
        let app_state = match paused {
            Ok(app_state) => app_state,
            Err(unanswered) => match self.app_fate(unanswered, &mut events).await {
                // Nothing of the app's this step; the spec and the strategy see the window in front.
                AppFate::Left => AgentState::default(),
                AppFate::NotResponding(detail) => {
                    let screen = screen_name(&observed.state);
                    self.not_responding(index, observed, detail, events, metrics)
                        .await?;
                    return Ok((time, screen));
                }
                AppFate::Gone(reason) => {
                    let screen = screen_name(&observed.state);
                    self.app_gone(index, observed, reason, events, metrics).await?;
                    return Ok((time, screen));
                }
            },
        };

        let (decided, screen) = self
            .while_paused(index, observed, app_state, events, metrics, true)
            .await;
        let action = decided?.action;

        let mut action = action;
        let dispatch_started = Instant::now();
        match &mut action {
            Some(action) => {
                let handshakes = self.agent.status().connections;
                let outcome = self.dispatch(action).await.map_err(StepFailure::device)?;
                if outcome.app_restarted {
                    // The input restarted the app's process (a reload on Android): its SDK
                    // connects again before the next capture.
                    self.agent
                        .wait_for_app_after(handshakes, APP_CONNECT_TIMEOUT)
                        .await
                        .map_err(StepFailure::device)?;
                    self.begin_setup();
                }
                action.applied = outcome.applied();
                if action.applied != Applied::Yes {
                    action.detail = outcome.detail;
                }
            }
            // A replay that is over, or skipped an action, has nothing to wait for.
            None if self
                .script
                .as_ref()
                .is_some_and(|cursor| cursor.finished.is_some() || cursor.skipped) => {}
            None => {
                self.counts.no_action_steps += 1;
                self.driver
                    .sleep(NO_ACTION_WAIT)
                    .await
                    .map_err(StepFailure::device)?;
            }
        }
        self.previous_dispatch_us = dispatch_started.elapsed().as_micros() as u64;
        self.last_action = action;
        Ok((time, screen))
    }

    /// Capture: wait for idle, read the focused window, then read the hierarchy,
    /// a screenshot, the logs and the device's metrics together, and pause the app
    /// for its state (the pause's answer is returned beside the observation: an app
    /// that is gone is not a failed step).
    ///
    /// The hierarchy is the app's own, asked for with the pause, when its SDK
    /// advertised that it reads its windows, `hierarchy` is `auto`, and the app's
    /// window is all there is to see (the device says so, or cannot tell); the
    /// driver's dump otherwise (a system dialog or the keyboard over the app, another
    /// app in front; on Android the dump of all windows), and when the app sends none
    /// or no window of its own. Without the app's hierarchy the driver's dump is taken
    /// first and the app paused after it, as the simulator has always been. The app is
    /// not paused when another app or its ANR dialog is in front: it cannot answer.
    /// A timeout is retried once; a missing screenshot, window or log read is
    /// recorded and the step goes on.
    async fn capture(
        &mut self,
        index: u64,
        events: &mut Vec<Event>,
        metrics: &mut StepMetrics,
    ) -> Result<(Observation, Result<AgentState, Unanswered>), StepFailure> {
        let capture_started = Instant::now();
        let idle = retry_once(events, "WaitForIdle", || self.driver.wait_for_idle(IDLE_TIMEOUT))
            .await
            .map_err(StepFailure::device)?;
        // The window in front of the settled screen (a device runs one command at a time).
        let window = given_up_as_none(events, "Focus", self.driver.focus(&self.config.bundle_id).await);
        let time = idle.device_time_ms.saturating_sub(self.device_start_ms);
        // A system dialog or the keyboard over the app leaves the app running; another
        // app in front has frozen it (Android 14+), and its ANR dialog says it is stuck.
        let app_can_answer = window
            .as_ref()
            .is_none_or(|window| matches!(window.kind, WindowKind::App | WindowKind::SystemDialog));
        let app_reads_hierarchy = self.app_reads_hierarchy();
        let from_app = app_reads_hierarchy
            && self.config.hierarchy == HierarchyMode::Auto
            && window.as_ref().is_none_or(Window::app_alone);
        let (sighting, screenshot, logs, device_metrics) = tokio::join!(
            async {
                if from_app {
                    let started = Instant::now();
                    let paused = self.agent.pause_with_hierarchy(PAUSE_TIMEOUT).await;
                    Sighting::Paused(paused, started.elapsed())
                } else {
                    Sighting::Dumped(self.driver.hierarchy().await)
                }
            },
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
        let (hierarchy, hierarchy_source, paused) = match sighting {
            Sighting::Paused(mut paused, took) => {
                if paused.is_ok() {
                    metrics.agent_us = took.as_micros() as u64;
                }
                let own = paused
                    .as_mut()
                    .ok()
                    .and_then(|state| state.hierarchy.take())
                    .filter(|hierarchy| !hierarchy.root.children.is_empty());
                match own {
                    Some(hierarchy) => (hierarchy, HierarchySource::App, Some(paused)),
                    // Nothing of the app's on screen: its paused main thread cannot hold up the dump.
                    None => (
                        self.driver_hierarchy(events, None).await?,
                        HierarchySource::Driver,
                        Some(paused),
                    ),
                }
            }
            Sighting::Dumped(dumped) => (
                self.driver_hierarchy(events, Some(dumped)).await?,
                HierarchySource::Driver,
                None,
            ),
        };
        let logs = given_up_as_none(events, "RecentLogs", logs.map(Some)).unwrap_or_default();
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
                        .write_screenshot(&shot.png)
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
        let paused = match paused {
            Some(paused) => paused.map_err(Unanswered::Silent),
            None if !app_can_answer => Err(Unanswered::NotAsked),
            None => {
                let agent_started = Instant::now();
                let paused = self.agent.pause(PAUSE_TIMEOUT).await;
                if paused.is_ok() {
                    metrics.agent_us = agent_started.elapsed().as_micros() as u64;
                }
                paused.map_err(Unanswered::Silent)
            }
        };
        let observation = Observation {
            time,
            state: State {
                step: index,
                time,
                screen: hierarchy.screen,
                hierarchy: hierarchy.root,
                logs,
                window,
                ..State::default()
            },
            // Said only where there was a choice, so traces of apps without it stay as they were.
            hierarchy_source: app_reads_hierarchy.then_some(hierarchy_source),
            screenshot,
            screenshot_path,
        };
        Ok((observation, paused))
    }

    /// Whether the attached app's SDK said in its HELLO that it reads its own windows.
    fn app_reads_hierarchy(&self) -> bool {
        let status = self.agent.status();
        status.is_connected() && status.last_hello.is_some_and(|hello| hello.has_hierarchy())
    }

    /// The driver's hierarchy: `first`, the answer of a call already made, or a new
    /// call; a failure is retried once.
    async fn driver_hierarchy(
        &self,
        events: &mut Vec<Event>,
        first: Option<Result<Hierarchy, DeviceError>>,
    ) -> Result<Hierarchy, StepFailure> {
        let first = match first {
            Some(answer) => answer,
            None => self.driver.hierarchy().await,
        };
        match first {
            Ok(hierarchy) => Ok(hierarchy),
            Err(_) => retry_once(events, "Hierarchy", || self.driver.hierarchy())
                .await
                .map_err(StepFailure::device),
        }
    }

    /// Asks the device what became of an app that gave no state: alive with another
    /// app in front (left), alive and not responding (an ANR: the system said so, or
    /// the app's main thread did not reach the pause in [`PAUSE_TIMEOUT`], Android's own
    /// input ANR threshold, with its window in front), or gone (a crash). A device that
    /// cannot tell makes an unanswered pause a crash, as it always was.
    async fn app_fate(&self, unanswered: Unanswered, events: &mut Vec<Event>) -> AppFate {
        let status = given_up_as_none(
            events,
            "AppStatus",
            self.driver.app_status(&self.config.bundle_id).await,
        );
        match (unanswered, status) {
            (
                _,
                Some(AppStatus {
                    process: AppProcess::NotResponding,
                    detail,
                    ..
                }),
            ) => AppFate::NotResponding(detail),
            (
                _,
                Some(AppStatus {
                    process: AppProcess::Background,
                    ..
                }),
            ) => AppFate::Left,
            (
                Unanswered::Silent(error @ AgentError::PauseTimeout { .. }),
                Some(AppStatus {
                    process: AppProcess::Foreground,
                    detail,
                    ..
                }),
            ) => AppFate::NotResponding(format!(
                "{error} with its window in front ({detail}): its main thread is stuck"
            )),
            // Not asked since it was not in front; back in front by now, or unknown.
            (
                Unanswered::NotAsked,
                None
                | Some(AppStatus {
                    process: AppProcess::Foreground,
                    ..
                }),
            ) => AppFate::Left,
            (Unanswered::NotAsked, Some(status)) => AppFate::Gone(status.detail),
            (Unanswered::Silent(error), Some(status)) if !status.detail.is_empty() => {
                AppFate::Gone(format!("{error}; the device says: {}", status.detail))
            }
            (Unanswered::Silent(error), _) => AppFate::Gone(error.to_string()),
        }
    }

    /// The app is alive but not responding (an ANR): the step is evaluated with the
    /// window saying so (what `noAnr` reads), nothing is dispatched on it, and the app
    /// is relaunched so that the run goes on.
    async fn not_responding(
        &mut self,
        index: u64,
        mut observed: Observation,
        detail: String,
        mut events: Vec<Event>,
        metrics: StepMetrics,
    ) -> Result<(), StepFailure> {
        // Said by the system log before its dialog shows: the state says it too.
        if observed
            .state
            .window
            .as_ref()
            .is_none_or(|window| window.kind != WindowKind::NotResponding)
        {
            observed.state.window = Some(Window {
                package: self.config.bundle_id.clone(),
                title: detail.lines().next().unwrap_or_default().to_owned(),
                kind: WindowKind::NotResponding,
                keyboard: false,
            });
        }
        events.push(Event::AppNotResponding { detail });
        self.counts.app_not_responding += 1;
        self.launch(false).await.map_err(StepFailure::Device)?;
        events.push(Event::AppRelaunched);
        let (decided, _) = self
            .while_paused(index, observed, AgentState::default(), events, metrics, false)
            .await;
        decided.map(|_| ())
    }

    /// The app did not answer PAUSE and is gone (a crash, process death): record the
    /// step as observed, bring the app back, and go on.
    async fn app_gone(
        &mut self,
        index: u64,
        observed: Observation,
        reason: String,
        mut events: Vec<Event>,
        metrics: StepMetrics,
    ) -> Result<(), StepFailure> {
        let mut state = observed.state;
        // Kept for the next step too: it is what led to the crash.
        state.last_action = self.last_action.clone();
        events.push(Event::AppDisconnected { reason });
        self.counts.app_crashes += 1;
        self.launch(false).await.map_err(StepFailure::Device)?;
        events.push(Event::AppRelaunched);
        let record = StepRecord {
            step: index,
            time: observed.time,
            state,
            hierarchy_source: observed.hierarchy_source,
            evaluated: false,
            screenshot: observed.screenshot_path,
            extractors: Default::default(),
            properties: BTreeMap::new(),
            candidates: 0,
            action: None,
            events,
            metrics,
        };
        blocking(|| self.record(&record))
    }

    /// The phases that run while the app is paused: evaluate, choose (unless
    /// `choose` is false: nothing is to be dispatched on this screen), record.
    /// The app is resumed on every way out, the errors included.
    async fn while_paused(
        &mut self,
        index: u64,
        observed: Observation,
        app_state: AgentState,
        mut events: Vec<Event>,
        mut metrics: StepMetrics,
        choose: bool,
    ) -> (Result<Decision, StepFailure>, String) {
        let Observation {
            time,
            mut state,
            hierarchy_source,
            screenshot,
            screenshot_path,
        } = observed;
        state.logs.extend(app_state.logs);
        state.snapshots = app_state.snapshots;
        state.exceptions = app_state.exceptions;
        state.coverage = app_state.coverage;
        state.last_action = self.last_action.take();
        let screen = screen_name(&state);
        let decided = blocking(|| {
            let spec_step = self.evaluate(&mut state, screenshot.as_ref(), &mut events, &mut metrics)?;
            let plugins_started = Instant::now();
            let (action, candidates) = if choose {
                self.choose(spec_step.candidates, &state, &mut events)?
            } else {
                (None, 0)
            };
            metrics.plugins_us += plugins_started.elapsed().as_micros() as u64;
            let record = StepRecord {
                step: index,
                time,
                state,
                hierarchy_source,
                evaluated: true,
                screenshot: screenshot_path,
                extractors: spec_step.extractors,
                properties: spec_step.properties,
                candidates,
                action: action.clone(),
                events,
                metrics,
            };
            // Record before resuming: whatever happens next, this step is kept.
            self.record(&record)?;
            Ok(Decision { action })
        });
        let _ = self.agent.resume().await;
        (decided, screen)
    }

    /// Evaluate: extractor plugins add their values, the spec reads the state,
    /// and every property progresses over the predicates' results.
    fn evaluate(
        &mut self,
        state: &mut State,
        screenshot: Option<&Screenshot>,
        events: &mut Vec<Event>,
        metrics: &mut StepMetrics,
    ) -> Result<Evaluated, StepFailure> {
        let plugins_started = Instant::now();
        let values = self
            .plugins
            .extract(state, screenshot)
            .map_err(StepFailure::plugin)?;
        state.snapshots.extend(values);
        metrics.plugins_us = plugins_started.elapsed().as_micros() as u64;

        let spec_started = Instant::now();
        // Every generator runs only when the choice needs every candidate.
        self.spec.set_generators(self.needs_every_candidate());
        let spec_step = self
            .spec
            .step(state)
            .map_err(|error| StepFailure::Spec(error.into()))?;
        metrics.spec_us = spec_started.elapsed().as_micros() as u64;
        self.record_spec_errors(&spec_step, events);

        let ltl_started = Instant::now();
        let predicates = predicate_values(&spec_step);
        let (properties, violations) =
            self.verifier
                .step(state.step, state.time, &predicates, state.last_action.as_ref());
        metrics.ltl_us = ltl_started.elapsed().as_micros() as u64;
        self.verifier
            .skip_decided_predicates(&violations, &mut *self.spec);
        self.violated += violations.len();
        events.extend(violations);
        Ok(Evaluated {
            extractors: spec_step.extractors,
            candidates: spec_step.candidates,
            properties,
        })
    }

    /// The spec's own errors (a generator, an extractor or a predicate that threw)
    /// are events of the step, not the end of the run.
    fn record_spec_errors(&mut self, spec_step: &SpecStep, events: &mut Vec<Event>) {
        self.record_generator_errors(&spec_step.generator_errors, events);
        for error in &spec_step.extractor_errors {
            self.counts.spec_errors += 1;
            events.push(Event::ExtractorError {
                extractor: error.name.clone(),
                message: error.message.clone(),
                stack: error.stack.clone(),
            });
        }
        for (id, value) in spec_step.predicates.iter().enumerate() {
            if let crate::spec::PredicateValue::Error { error } = value {
                self.counts.spec_errors += 1;
                events.push(Event::PredicateError {
                    predicate: id as u32,
                    location: error.location.clone().unwrap_or_default(),
                    message: error.message.clone(),
                    stack: error.stack.clone(),
                });
            }
        }
    }

    fn record_generator_errors(&mut self, errors: &[GeneratorError], events: &mut Vec<Event>) {
        for error in errors {
            self.counts.spec_errors += 1;
            events.push(Event::GeneratorError {
                path: crate::action::path_label(&error.path),
                message: error.message.clone(),
                stack: error.stack.clone(),
            });
        }
    }

    /// Whether this step's choice needs every candidate: a strategy plugin is given
    /// them all. The built-in draw asks the spec for the branches it draws only.
    fn needs_every_candidate(&self) -> bool {
        self.plugins.has_strategy()
    }

    /// Choose: the strategy plugin's choice, else a weighted draw; a candidate
    /// whose target is not on screen is dropped and the draw repeated among the rest.
    /// Returns the action and how many candidates the spec offered for the choice
    /// (without a strategy plugin, those of the branches the draw visited).
    fn choose(
        &mut self,
        candidates: Vec<Candidate>,
        state: &State,
        events: &mut Vec<Event>,
    ) -> Result<(Option<ResolvedAction>, usize), StepFailure> {
        if let Some(cursor) = &self.script {
            // A replay that records its steps draws as the run did (the same seed, the
            // same branches run, the same generator errors and randomness in the spec)
            // and dispatches the recorded action instead.
            let offered = if cursor.replay.verdicts_only || self.plugins.has_strategy() {
                candidates.len()
            } else if let Some((_, offered)) = self.setup_draw(state, events)? {
                offered
            } else {
                self.draw_on_demand(0, state, events)?.1
            };
            return Ok((self.scripted(state, events), offered));
        }
        // The spec's `setup`, while it runs, chooses (no strategy is asked).
        if let Some((action, offered)) = self.setup_draw(state, events)? {
            return Ok((Some(action), offered));
        }
        let plugin_choice = self
            .plugins
            .has_strategy()
            .then(|| self.plugins.strategy_choose(state, &candidates));
        for event in self.plugins.take_events() {
            events.push(match event {
                PluginEvent::Note { plugin, message, .. } => Event::Plugin { plugin, message },
                PluginEvent::Disabled { plugin, error, .. } => Event::Plugin {
                    plugin,
                    message: format!("disabled: {error}"),
                },
            });
        }
        let Some(plugin_choice) = plugin_choice else {
            let (drawn, offered) = self.draw_on_demand(0, state, events)?;
            if drawn.is_none() {
                events.push(Event::NoAction);
            }
            return Ok((drawn, offered));
        };
        let offered = candidates.len();
        let mut remaining = candidates;
        // A strategy's choice whose target is not on screen falls back to the built-in draw.
        if let Some(index) = plugin_choice.map_err(StepFailure::plugin)? {
            let candidate = remaining.swap_remove(index);
            if let Ok(resolved) = resolve_action(&candidate.action, candidate.path_label(), &state.hierarchy)
            {
                return Ok((Some(resolved), offered));
            }
        }
        let drawn = draw_on_screen(remaining, &state.hierarchy, &mut self.rng);
        if drawn.is_none() {
            events.push(Event::NoAction);
        }
        Ok((drawn, offered))
    }

    /// The next action of the running `setup`, resolved on this screen, and how many
    /// candidates it offered; `None` once `setup` is done (exploring starts with
    /// this step). A listed action whose target is not on screen is skipped, said
    /// by a `TargetMissing` event.
    fn setup_draw(
        &mut self,
        state: &State,
        events: &mut Vec<Event>,
    ) -> Result<Option<(ResolvedAction, usize)>, StepFailure> {
        match self.setup_run.as_mut() {
            None => Ok(None),
            Some(SetupRun::Actions(actions)) => {
                while let Some(action) = actions.pop_front() {
                    match resolve_action(&action, SETUP_LABEL.into(), &state.hierarchy) {
                        Ok(resolved) => return Ok(Some((resolved, 1))),
                        Err(error) => events.push(Event::TargetMissing {
                            target: error.to_string(),
                        }),
                    }
                }
                self.setup_run = None;
                Ok(None)
            }
            Some(SetupRun::Generator(place)) => {
                let place = *place;
                match self.draw_on_demand(place, state, events)? {
                    (Some(mut resolved), offered) => {
                        resolved.generator = match resolved.generator.as_str() {
                            "" => SETUP_LABEL.to_string(),
                            path => format!("{SETUP_LABEL}/{path}"),
                        };
                        Ok(Some((resolved, offered)))
                    }
                    (None, _) => {
                        self.setup_run = None;
                        Ok(None)
                    }
                }
            }
        }
    }

    /// The built-in draw from the branch at `root` (0: the spec's actions; a `setup`
    /// generator's place), running only the generators of the branches it draws.
    fn draw_on_demand(
        &mut self,
        root: usize,
        state: &State,
        events: &mut Vec<Event>,
    ) -> Result<(Option<ResolvedAction>, usize), StepFailure> {
        let tree = self.spec.action_tree();
        let mut offered = 0;
        let mut errors = Vec::new();
        let spec = &mut *self.spec;
        let drawn = draw_on_demand_from(&tree, root, &state.hierarchy, &mut self.rng, |place| {
            let offer = spec.offer(place)?;
            offered += offer.candidates.len();
            errors.extend(offer.generator_errors);
            Ok::<_, SpecError>(offer.candidates)
        })
        .map_err(|error| StepFailure::Spec(error.into()))?;
        self.record_generator_errors(&errors, events);
        Ok((drawn, offered))
    }

    /// A replay's choice: the script's next action, resolved on this screen. The
    /// script is not advanced once the property a shrink looks for is violated.
    fn scripted(&mut self, state: &State, events: &mut Vec<Event>) -> Option<ResolvedAction> {
        let cursor = self.script.as_mut()?;
        cursor.skipped = false;
        let stop_at = cursor.replay.stop_at_violation_of.as_deref();
        if stop_at.is_some_and(|property| self.verifier.is_violated(property)) {
            cursor.finished = Some(Stop::Violation);
            return None;
        }
        let Some(entry) = cursor.replay.script.steps.get(cursor.report.consumed) else {
            cursor.finished = Some(Stop::ScriptEnd);
            return None;
        };
        cursor.report.consumed += 1;
        if let Some(expected) = &entry.screen {
            let actual = screen_signature(&state.hierarchy);
            if actual != *expected {
                cursor.report.diverged.push(state.step);
                events.push(Event::ScreenDiverged {
                    expected: expected.clone(),
                    actual,
                });
            }
        }
        let Some(action) = &entry.action else {
            events.push(Event::NoAction);
            return None;
        };
        match resolve_scripted(action, entry.generator.clone(), &state.hierarchy) {
            Ok(resolved) => Some(resolved),
            Err(error) => {
                cursor.report.target_missing.get_or_insert(state.step);
                cursor.report.skipped.push(cursor.report.consumed - 1);
                cursor.skipped = true;
                events.push(Event::TargetMissing {
                    target: error.to_string(),
                });
                if cursor.replay.stop_at_missing_target {
                    cursor.finished = Some(Stop::TargetMissing);
                }
                None
            }
        }
    }

    /// Record: one line of `trace.jsonl`, then every sink (neither for a replay
    /// that wants only the verdicts).
    fn record(&mut self, record: &StepRecord) -> Result<(), StepFailure> {
        if self
            .script
            .as_ref()
            .is_some_and(|cursor| cursor.replay.verdicts_only)
        {
            return Ok(());
        }
        self.run_dir.append_step(record).map_err(StepFailure::trace)?;
        self.last_recorded = Some(record.step);
        if !self.plugins.has_sinks() {
            return Ok(());
        }
        // Sinks get the whole record, whatever the trace keeps of it.
        let line = serde_json::to_string(record).map_err(|source| {
            StepFailure::trace(crate::trace::TraceError::BadJson {
                path: self.run_dir.path().join("trace.jsonl"),
                source,
            })
        })?;
        self.plugins.sink_step(record, line).map_err(StepFailure::plugin)
    }

    /// Dispatch: the chosen action through the device's real input, and what the
    /// device says of it (whether it was applied, `lastAction.applied`).
    async fn dispatch(&self, action: &ResolvedAction) -> Result<InputOutcome, DeviceError> {
        let driver = self.driver;
        // The element the target resolved to goes with the point: a device that can
        // look refuses a touch meant for an element that is gone.
        let touch = |point| Touch {
            point,
            element: action.bounds,
        };
        let millis = |ms: u32| Duration::from_millis(u64::from(ms));
        match (&action.action, action.point) {
            (Action::Tap { .. }, Some(point)) => driver.tap(touch(point)).await,
            (Action::DoubleTap { .. }, Some(point)) => driver.double_tap(touch(point)).await,
            (Action::LongPress { duration_millis, .. }, Some(point)) => {
                driver
                    .long_press(touch(point), millis(duration_millis.unwrap_or(LONG_PRESS_MILLIS)))
                    .await
            }
            (Action::Scroll { direction, .. }, Some(point)) => {
                let distance = action.scroll_distance().unwrap_or(0);
                driver.scroll(touch(point), *direction, distance).await
            }
            (Action::InputText { text, submit, .. }, point) => {
                let focused = match point {
                    Some(point) => driver.tap(touch(point)).await?,
                    None => InputOutcome::confirmed(0),
                };
                // Text typed after a tap that missed its field would go elsewhere.
                if !focused.delivered {
                    return Ok(focused);
                }
                let typed = both(focused, driver.input_text(text).await?);
                if *submit && typed.delivered {
                    Ok(both(typed, driver.press_key(Key::Enter).await?))
                } else {
                    Ok(typed)
                }
            }
            (Action::ClearText { .. }, point) => {
                let focused = match point {
                    Some(point) => driver.tap(touch(point)).await?,
                    None => InputOutcome::confirmed(0),
                };
                if !focused.delivered {
                    return Ok(focused);
                }
                Ok(both(focused, driver.clear_text().await?))
            }
            (Action::Swipe { duration_millis, .. }, Some(from)) => {
                let to = action.to_point.unwrap_or(from);
                driver
                    .swipe(from, to, millis(duration_millis.unwrap_or(SWIPE_MILLIS)))
                    .await
            }
            (Action::PressKey { key }, _) => driver.press_key(*key).await,
            (Action::Wait { duration_millis }, _) => driver.sleep(millis(*duration_millis)).await,
            (Action::Navigate { to }, _) => driver.navigate(&Navigation::To(to.clone())).await,
            (Action::Reload, _) => driver.navigate(&Navigation::Reload).await,
            (Action::Back, _) => driver.navigate(&Navigation::Back).await,
            (Action::Forward, _) => driver.navigate(&Navigation::Forward).await,
            // Resolving gives these a point; without one there is nothing to touch.
            (
                Action::Tap { .. }
                | Action::DoubleTap { .. }
                | Action::LongPress { .. }
                | Action::Scroll { .. }
                | Action::Swipe { .. },
                None,
            ) => Ok(InputOutcome::refused("the target resolved to no point", 0)),
        }
    }
}

/// One action's outcome from two inputs in a row (a tap into a field, then the
/// typing): delivered if both were, confirmed only if both were, the later clock.
fn both(first: InputOutcome, second: InputOutcome) -> InputOutcome {
    let detail = [first.detail, second.detail]
        .into_iter()
        .filter(|detail| !detail.is_empty())
        .collect::<Vec<_>>()
        .join("; ");
    InputOutcome {
        delivered: first.delivered && second.delivered,
        confirmed: first.confirmed && second.confirmed,
        app_restarted: first.app_restarted || second.app_restarted,
        detail,
        device_time_ms: second.device_time_ms.max(first.device_time_ms),
    }
}

/// What [`Session::evaluate`] hands on to choosing and recording.
struct Evaluated {
    extractors: Arc<serde_json::Map<String, serde_json::Value>>,
    candidates: Vec<Candidate>,
    properties: BTreeMap<String, crate::trace::PropertyStep>,
}

/// Calls `call`; a timeout is recorded and retried once.
/// The answer of a device call the step can do without (it says what the device cannot
/// tell as `None` too): a failure is recorded as given up, and the step goes on without it.
fn given_up_as_none<T>(
    events: &mut Vec<Event>,
    call: &str,
    answer: Result<Option<T>, DeviceError>,
) -> Option<T> {
    answer.unwrap_or_else(|error| {
        events.push(Event::DeviceRetry {
            call: call.into(),
            error: error.to_string(),
            gave_up: true,
        });
        None
    })
}

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
