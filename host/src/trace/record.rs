//! The records of a run directory, defined once for the writer, the reader,
//! `uatu check`, plugins and the inspect UI.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::action::ResolvedAction;
pub use crate::plugin::PluginMeta;
use crate::state::State;

/// `meta.json`: what ran, against what, with which seeds; rewritten at the end.
///
/// `O` is the device's options as the host records them (`uatu::devices::DeviceOptions`):
/// the trace's format does not depend on which device kinds exist, and a reader that
/// only shows a run can read them as any JSON (`Meta<serde_json::Value>`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(bound(deserialize = "O: Deserialize<'de> + Default"))]
pub struct Meta<O> {
    /// The version of the `uatu` host that wrote the run.
    pub uatu_version: String,
    /// The seed of every random choice of the run.
    pub seed: u64,
    /// The spec that ran.
    pub spec: SpecMeta,
    /// The device (and app) the run drove.
    pub device: DeviceMeta<O>,
    /// Every plugin loaded for the run, in load order.
    #[serde(default)]
    pub plugins: Vec<PluginMeta>,
    /// RFC 3339, UTC.
    pub started_at: String,
    /// RFC 3339, UTC; absent while the run is going (or if it was killed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<String>,
    /// The command line that reproduces this run.
    pub rerun: String,
}

/// `meta.json`'s `spec`: which spec ran, identified by its hashes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpecMeta {
    /// The spec as given (`.ts`, `.js` or `.wasm`).
    pub path: String,
    /// sha256 of that file's bytes, hex.
    pub sha256: String,
    /// sha256 of the compiled module that ran, hex.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub module_sha256: Option<String>,
}

/// `meta.json`'s `device`: which device and app the run drove, and its options.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(bound(deserialize = "O: Deserialize<'de> + Default"))]
pub struct DeviceMeta<O> {
    /// The device as `--device` names it: `sim`, `web`, `android[:SERIAL]` or `sidecar:<addr>`.
    pub kind: String,
    /// The app under test's bundle id (on Android, its package name).
    pub bundle_id: String,
    /// The platform the driver's Health call reported (e.g. `android`); empty if it said none.
    #[serde(default)]
    pub platform: String,
    /// The driver's version, as its Health call reported it.
    #[serde(default)]
    pub version: String,
    /// The device kind's options as resolved, spelled as in `uatu.toml` (e.g. `sim-bugs`,
    /// `url`): `uatu replay` and `uatu shrink` choose the device again with them, under
    /// whatever their command line says.
    #[serde(default)]
    pub options: O,
}

/// One line of `trace.jsonl`: everything about one step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepRecord {
    /// The step's index, from 0.
    pub step: u64,
    /// Device time since the run started, ms (same as `state.time`).
    pub time: u64,
    /// The full state the spec saw: `uatu check` re-evaluates from it.
    pub state: State,
    /// Where `state.hierarchy` came from, written when the app's SDK could have read it
    /// (its HELLO advertised `hierarchy`); absent: the driver's, the only source there was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hierarchy_source: Option<HierarchySource>,
    /// False for a step at which the app was gone (crashed, disconnected):
    /// the spec and the properties were not evaluated on it.
    #[serde(default = "evaluated_by_default")]
    pub evaluated: bool,
    /// The screenshot, relative to the run directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screenshot: Option<String>,
    /// Extractor values computed by the spec this step.
    #[serde(default)]
    pub extractors: std::sync::Arc<serde_json::Map<String, serde_json::Value>>,
    /// Each property's status after this step.
    #[serde(default)]
    pub properties: BTreeMap<String, PropertyStep>,
    /// How many actions the spec offered.
    pub candidates: usize,
    /// The action dispatched at the end of this step, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<ResolvedAction>,
    /// Anything noteworthy: app crash and relaunch, retries, spec errors.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<Event>,
    /// Where the time went (the previous step's dispatch included) and the device's load.
    #[serde(default)]
    pub metrics: StepMetrics,
}

/// Of a step record, what re-evaluating a spec over it needs (`uatu check`): the
/// other fields (extractor values, property statuses, metrics…) are not parsed.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct RecordedState {
    /// The step's index, from 0.
    pub step: u64,
    /// Device time since the run started, ms.
    pub time: u64,
    /// The full state the spec saw.
    pub state: State,
    /// False for a step at which the app was gone (the spec was not evaluated).
    #[serde(default = "evaluated_by_default")]
    pub evaluated: bool,
}

/// Where a step's hierarchy came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HierarchySource {
    /// The app's SDK read its own windows at the pause (`PAUSE{"hierarchy":true}`).
    App,
    /// The driver's dump (on Android the sidecar's `uiautomator dump`): asked for by
    /// `hierarchy = "sidecar"`, or the app sent none (no window of its own on screen).
    Driver,
}

fn evaluated_by_default() -> bool {
    true
}

/// A property's standing after one step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PropertyStep {
    /// `ok` or `violated` (from this step on, it stays `violated`).
    pub status: String,
    /// The obligations still pending, as the LTL engine serialises them.
    #[serde(default)]
    pub residual: serde_json::Value,
    /// Errors of predicates this property read this step.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
}

/// Something that happened during a step besides the step itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Event {
    /// The app's SDK connection dropped (a crash or process death).
    AppDisconnected {
        /// Why the connection ended, as the device layer saw it.
        reason: String,
    },
    /// The app's process was alive but the system reported it not responding (an
    /// ANR: its ANR dialog in front, or `ANR in <package>` in the system log); the step
    /// was evaluated (`noAnr` sees it) and the app relaunched.
    AppNotResponding {
        /// What the device said: the ANR's reason, or its dialog's title.
        detail: String,
    },
    /// The host relaunched the app.
    AppRelaunched,
    /// A device call failed and was retried or given up.
    DeviceRetry {
        /// The device call that failed (e.g. `Hierarchy`, `Screenshot`, `RecentLogs`).
        call: String,
        /// The failure's message.
        error: String,
        /// True when the host stopped retrying: the call failed for good.
        gave_up: bool,
    },
    /// A predicate threw; it counted as false.
    PredicateError {
        /// The predicate's id (its index among the spec's predicates).
        predicate: u32,
        /// Where in the user's spec it threw, e.g. `spec.ts:12:5`; empty if unknown.
        location: String,
        /// The error's message.
        message: String,
        /// The JavaScript stack, mapped to the spec's sources.
        stack: String,
    },
    /// An extractor threw; its value is `null` this step.
    ExtractorError {
        /// The extractor's name in the spec.
        extractor: String,
        /// The error's message.
        message: String,
        /// The JavaScript stack, mapped to the spec's sources.
        stack: String,
    },
    /// A generator threw; its actions were skipped.
    GeneratorError {
        /// The generator's tree path, e.g. `0:login/1:fillEmail`.
        path: String,
        /// The error's message.
        message: String,
        /// The JavaScript stack, mapped to the spec's sources.
        stack: String,
    },
    /// Nothing was eligible to dispatch this step.
    NoAction,
    /// A plugin reported something (a note, or its error under `on-plugin-error = "disable"`).
    Plugin {
        /// The plugin's name.
        plugin: String,
        /// What it reported.
        message: String,
    },
    /// Replay: the screen differs from the one recorded where the script's action was chosen.
    ScreenDiverged {
        /// The recorded screen's signature.
        expected: String,
        /// This screen's.
        actual: String,
    },
    /// A replay's script action, or a `setup` list's action, targets something not on
    /// screen; it was not dispatched.
    TargetMissing {
        /// Why the target could not be found.
        target: String,
    },
    /// The first step at which a property was violated.
    Violation {
        /// The violated property's name.
        property: String,
    },
}

/// Where the step's time went, in microseconds, and the device's own metrics.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepMetrics {
    /// Capturing the device's state (hierarchy, screenshot).
    #[serde(default)]
    pub capture_us: u64,
    /// Collecting what the app's SDK agent reported (snapshots, logs, exceptions, coverage).
    #[serde(default)]
    pub agent_us: u64,
    /// Running the spec: extractors, predicates and generators.
    #[serde(default)]
    pub spec_us: u64,
    /// Advancing the properties' LTL formulas.
    #[serde(default)]
    pub ltl_us: u64,
    /// Running the plugins (extractors, strategy, sinks).
    #[serde(default)]
    pub plugins_us: u64,
    /// Dispatching the previous step's action (a step is recorded before its own action).
    #[serde(default)]
    pub dispatch_us: u64,
    /// The app's CPU use, percent, if the device reports it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_cpu_percent: Option<f64>,
    /// The app's memory use, bytes, if the device reports it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_memory_bytes: Option<u64>,
}

/// `summary.json`, written when the run ends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// How many steps were recorded in `trace.jsonl`.
    pub steps: u64,
    /// Wall time of the run, ms.
    pub wall_ms: u64,
    /// Device time of the last step, ms.
    pub device_ms: u64,
    /// Each property's verdict, in the spec's order.
    pub properties: Vec<PropertySummary>,
    /// Verdicts and notable happenings, counted.
    pub counts: Counts,
    /// Why the run stopped: `max-steps`, `duration`, `violation`, `interrupted`, `device-lost`, `spec-error`, `plugin-error`, `trace-error`, or for a replay `script-end` and `target-missing`.
    pub stopped: String,
    /// The exit code the `uatu` process ended with.
    pub exit_code: u8,
    /// The run directory, as a path.
    pub run_dir: String,
    /// The command line that re-runs this run with the same seeds.
    pub rerun: String,
}

/// One property's outcome in `summary.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PropertySummary {
    /// The property's name in the spec.
    pub name: String,
    /// `violated`, `passed`, `inconclusive` or `unmet`.
    pub verdict: String,
    /// The step at which the property was first violated; absent unless `violated`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_violation_step: Option<u64>,
    /// The action dispatched at the step before the violation: what led there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub led_by: Option<ResolvedAction>,
    /// Errors of the predicates this property read during the run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
}

/// `summary.json`'s `counts`: how many properties got each verdict, and how often
/// the run hit trouble.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Counts {
    /// Properties violated.
    pub violated: usize,
    /// Properties passed: nothing failed, only `always` obligations were open.
    pub passed: usize,
    /// Properties inconclusive: bounded obligations (`next`, bounded `eventually`) were open.
    pub inconclusive: usize,
    /// Properties unmet: an unbounded `eventually` never came true.
    pub unmet: usize,
    /// Times the app crashed or its SDK connection dropped.
    pub app_crashes: usize,
    /// Times the system reported the app not responding (ANRs).
    #[serde(default)]
    pub app_not_responding: usize,
    /// Steps at which no action was eligible to dispatch.
    pub no_action_steps: u64,
    /// Spec errors (predicate, extractor and generator errors) over the run.
    pub spec_errors: u64,
}
