//! The messages of the SDK socket protocol, as specified in `proto/agent.md`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::model::{Bounds, ExceptionInfo, Hierarchy, LogEntry, Node, ScreenSize};

/// The protocol version this host speaks; HELLO carries the SDK's.
pub const PROTOCOL_VERSION: u32 = 1;

/// The largest frame payload either side accepts (16 MiB).
pub const MAX_FRAME_BYTES: usize = 16 * 1024 * 1024;

/// The HELLO capability of an SDK that answers `PAUSE{"hierarchy":true}`.
pub const CAPABILITY_HIERARCHY: &str = "hierarchy";

/// One frame's payload. The JSON object's `type` field names the message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "SCREAMING_SNAKE_CASE", deny_unknown_fields)]
pub enum Message {
    /// SDK → host, first frame after connecting.
    Hello {
        /// The protocol version the SDK speaks; must equal [`PROTOCOL_VERSION`].
        protocol_version: u32,
        /// The SDK's own version, e.g. `1.0.0`.
        sdk_version: String,
        /// `android`, `ios` or `sim`.
        platform: String,
        /// The app's bundle id / package name.
        app_id: String,
        /// The run token the host passed to the app at launch (`proto/agent.md` §1a).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        token: Option<String>,
        /// What the SDK can do beyond the base messages, e.g. [`CAPABILITY_HIERARCHY`].
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        capabilities: Vec<String>,
    },
    /// Host → SDK: stop the main loop at the next safe point and report.
    Pause {
        /// Identifies this pause; ids increase over the host's lifetime, also across reconnections.
        id: u64,
        /// Also send the hierarchy of the app's windows.
        #[serde(default, skip_serializing_if = "is_false")]
        hierarchy: bool,
    },
    /// SDK → host: the answer to the PAUSE with the same id.
    State {
        /// The id of the PAUSE it answers.
        id: u64,
        /// Every value the app registered, by name.
        #[serde(default)]
        snapshots: serde_json::Map<String, serde_json::Value>,
        /// Uncaught exceptions since the previous STATE.
        #[serde(default)]
        exceptions: Vec<ExceptionInfo>,
        /// The app's log lines since the previous STATE.
        #[serde(default)]
        logs: Vec<LogEntry>,
        /// Probe ids hit since the previous STATE; absent when the app has no coverage.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        coverage: Option<Vec<String>>,
        /// The app's windows, when the PAUSE asked for them and the SDK could read them.
        /// Boxed: a whole window tree would otherwise make every message as large as it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        hierarchy: Option<Box<AppHierarchy>>,
    },
    /// Host → SDK: continue after the PAUSE with the same id.
    Resume {
        /// The id of the PAUSE to end.
        id: u64,
    },
    /// Either side, before closing.
    Goodbye {
        /// Why the connection ends, for the other side's log (e.g. `crash: <class>: <message>`).
        reason: String,
    },
}

fn is_false(value: &bool) -> bool {
    !*value
}

/// The hierarchy a STATE carries: `driver.proto`'s `HierarchyResponse` in its
/// JSON mapping with the proto field names, every field required.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AppHierarchy {
    /// The root of the app's window tree.
    pub root: AppNode,
    /// The screen's width, device pixels.
    pub screen_width: u32,
    /// The screen's height, device pixels.
    pub screen_height: u32,
}

/// `driver.proto`'s `Node` in its JSON mapping.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AppNode {
    /// Becomes [`Node::id`].
    pub resource_id: String,
    /// Becomes [`Node::text`].
    pub text: String,
    /// Becomes [`Node::desc`].
    pub content_description: String,
    /// Becomes [`Node::class_name`].
    pub class_name: String,
    /// Becomes [`Node::package`].
    pub package: String,
    /// Becomes [`Node::clickable`].
    pub clickable: bool,
    /// Becomes [`Node::enabled`].
    pub enabled: bool,
    /// Becomes [`Node::checked`].
    pub checked: bool,
    /// Becomes [`Node::focused`].
    pub focused: bool,
    /// Becomes [`Node::selected`].
    pub selected: bool,
    /// Becomes [`Node::scrollable`].
    pub scrollable: bool,
    /// Where the element is on screen (right and bottom exclusive).
    pub bounds: Bounds,
    /// The element's children, in the platform's order (always present, maybe empty).
    pub children: Vec<AppNode>,
    /// Becomes [`Node::role`]; optional (added after protocol version 1's first SDKs).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub role: String,
    /// Becomes [`Node::attrs`]; optional (added after protocol version 1's first SDKs).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub attributes: BTreeMap<String, String>,
}

impl From<AppHierarchy> for Hierarchy {
    fn from(wire: AppHierarchy) -> Self {
        Hierarchy {
            root: wire.root.into(),
            screen: ScreenSize {
                width: wire.screen_width,
                height: wire.screen_height,
            },
        }
    }
}

impl From<AppNode> for Node {
    fn from(wire: AppNode) -> Self {
        Node {
            id: wire.resource_id,
            text: wire.text,
            desc: wire.content_description,
            class_name: wire.class_name,
            package: wire.package,
            clickable: wire.clickable,
            enabled: wire.enabled,
            checked: wire.checked,
            focused: wire.focused,
            selected: wire.selected,
            scrollable: wire.scrollable,
            bounds: wire.bounds,
            role: wire.role,
            attrs: wire.attributes,
            children: wire.children.into_iter().map(Node::from).collect(),
        }
    }
}
