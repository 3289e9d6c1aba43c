//! The records of a run directory, defined once for the writer, the reader,
//! `uatu check`, plugins and the inspect UI.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::action::ResolvedAction;
pub use crate::plugin::PluginMeta;
use crate::state::State;

/// `meta.json`: what ran, against what, with which seeds; rewritten at the end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Meta {
    pub uatu_version: String,
    /// The seed of every random choice of the run.
    pub seed: u64,
    pub spec: SpecMeta,
    pub device: DeviceMeta,
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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceMeta {
    /// `sim` or `sidecar:<addr>`.
    pub kind: String,
    pub bundle_id: String,
    /// What the driver's Health call said.
    #[serde(default)]
    pub platform: String,
    #[serde(default)]
    pub version: String,
    /// Simulator settings (bugs, latency, seed), when the device is the simulator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sim: Option<serde_json::Value>,
}

/// One line of `trace.jsonl`: everything about one step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepRecord {
    pub step: u64,
    /// Device time since the run started, ms (same as `state.time`).
    pub time: u64,
    /// The full state the spec saw: `uatu check` re-evaluates from it.
    pub state: State,
    /// False for a step at which the app was gone (crashed, disconnected):
    /// the spec and the properties were not evaluated on it.
    #[serde(default = "evaluated_by_default")]
    pub evaluated: bool,
    /// The screenshot, relative to the run directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screenshot: Option<String>,
    /// Extractor values computed by the spec this step.
    #[serde(default)]
    pub extractors: serde_json::Map<String, serde_json::Value>,
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
    #[serde(default)]
    pub metrics: StepMetrics,
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
    AppDisconnected { reason: String },
    /// The host relaunched the app.
    AppRelaunched,
    /// A device call failed and was retried or given up.
    DeviceRetry {
        call: String,
        error: String,
        gave_up: bool,
    },
    /// A predicate threw; it counted as false.
    PredicateError {
        predicate: u32,
        location: String,
        message: String,
        stack: String,
    },
    /// An extractor threw; its value is `null` this step.
    ExtractorError {
        extractor: String,
        message: String,
        stack: String,
    },
    /// A generator threw; its actions were skipped.
    GeneratorError {
        path: String,
        message: String,
        stack: String,
    },
    /// Nothing was eligible to dispatch this step.
    NoAction,
    /// A plugin reported something (a note, or its error under `on-plugin-error = "disable"`).
    Plugin { plugin: String, message: String },
    /// The first step at which a property was violated.
    Violation { property: String },
}

/// Where the step's time went, in microseconds, and the device's own metrics.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepMetrics {
    #[serde(default)]
    pub capture_us: u64,
    #[serde(default)]
    pub agent_us: u64,
    #[serde(default)]
    pub spec_us: u64,
    #[serde(default)]
    pub ltl_us: u64,
    #[serde(default)]
    pub plugins_us: u64,
    #[serde(default)]
    pub dispatch_us: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_cpu_percent: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_memory_bytes: Option<u64>,
}

/// `summary.json`, written when the run ends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub steps: u64,
    /// Wall time of the run, ms.
    pub wall_ms: u64,
    /// Device time of the last step, ms.
    pub device_ms: u64,
    pub properties: Vec<PropertySummary>,
    pub counts: Counts,
    /// Why the run stopped: `max-steps`, `duration`, `violation`, `interrupted`, `device-lost`, `spec-error`, `plugin-error`.
    pub stopped: String,
    pub exit_code: u8,
    pub run_dir: String,
    pub rerun: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PropertySummary {
    pub name: String,
    /// `violated`, `passed`, `inconclusive` or `unmet`.
    pub verdict: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_violation_step: Option<u64>,
    /// The action dispatched at the step before the violation: what led there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub led_by: Option<ResolvedAction>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Counts {
    pub violated: usize,
    pub passed: usize,
    pub inconclusive: usize,
    pub unmet: usize,
    pub app_crashes: usize,
    pub no_action_steps: u64,
    pub spec_errors: u64,
}
