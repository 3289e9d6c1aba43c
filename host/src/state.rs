//! The observed state of one step: what extractors and predicates read, and
//! what the trace keeps so that `uatu check` can re-evaluate a spec offline.

use serde::{Deserialize, Serialize};

use crate::action::ResolvedAction;
use uatu_device::model::{ExceptionInfo, LogEntry, Node, ScreenSize, Window};

/// One step's state. Its JSON form is the `state` of a trace record and the
/// input of a spec step (see `docs/trace-format.md`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct State {
    /// The step's index, from 0.
    pub step: u64,
    /// Milliseconds of device time since the run started.
    pub time: u64,
    /// The screen's size, device pixels.
    pub screen: ScreenSize,
    /// The accessibility tree's root.
    pub hierarchy: Node,
    /// Values the app registered with the SDK, plus extractor plugins' values
    /// under `"<plugin>.<name>"`.
    pub snapshots: serde_json::Map<String, serde_json::Value>,
    /// Log entries since the previous step.
    pub logs: Vec<LogEntry>,
    /// Uncaught exceptions since the previous step.
    pub exceptions: Vec<ExceptionInfo>,
    /// Coverage probes hit since the previous step; `None` when the app reports none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coverage: Option<Vec<String>>,
    /// The action dispatched at the end of the previous step.
    #[serde(default)]
    pub last_action: Option<ResolvedAction>,
    /// The window with the input focus, from a device that can tell (Android): the
    /// app's, a system dialog over it, its ANR dialog, or another app's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<Window>,
}
