//! The messages of the SDK socket protocol, as specified in `proto/agent.md`.

use serde::{Deserialize, Serialize};

use crate::model::{ExceptionInfo, LogEntry};

/// The protocol version this host speaks; HELLO carries the SDK's.
pub const PROTOCOL_VERSION: u32 = 1;

/// The largest frame payload either side accepts (16 MiB).
pub const MAX_FRAME_BYTES: usize = 16 * 1024 * 1024;

/// One frame's payload. The JSON object's `type` field names the message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "SCREAMING_SNAKE_CASE", deny_unknown_fields)]
pub enum Message {
    /// SDK → host, first frame after connecting.
    Hello {
        protocol_version: u32,
        sdk_version: String,
        platform: String,
        app_id: String,
    },
    /// Host → SDK: stop the main loop at the next safe point and report.
    Pause { id: u64 },
    /// SDK → host: the answer to the PAUSE with the same id.
    State {
        id: u64,
        #[serde(default)]
        snapshots: serde_json::Map<String, serde_json::Value>,
        #[serde(default)]
        exceptions: Vec<ExceptionInfo>,
        #[serde(default)]
        logs: Vec<LogEntry>,
        /// Probe ids hit since the previous STATE; absent when the app has no coverage.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        coverage: Option<Vec<String>>,
    },
    /// Host → SDK: continue after the PAUSE with the same id.
    Resume { id: u64 },
    /// Either side, before closing.
    Goodbye { reason: String },
}
