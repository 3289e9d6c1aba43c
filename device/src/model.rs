//! What a device shows and reports, independent of the transport that carried it.
//!
//! These types are also the JSON the trace records and the spec runtime reads
//! (field names as in `docs/trace-format.md`), so they change only together
//! with those documents.

use serde::{Deserialize, Serialize};

/// A point on the screen, in device pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Point {
    pub x: i32,
    pub y: i32,
}

/// A rectangle on the screen, in device pixels; `right` and `bottom` are exclusive.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Bounds {
    pub left: i32,
    pub top: i32,
    pub right: i32,
    pub bottom: i32,
}

impl Bounds {
    pub fn centre(&self) -> Point {
        Point {
            x: self.left + (self.right - self.left) / 2,
            y: self.top + (self.bottom - self.top) / 2,
        }
    }

    pub fn contains(&self, point: Point) -> bool {
        point.x >= self.left && point.x < self.right && point.y >= self.top && point.y < self.bottom
    }

    pub fn is_empty(&self) -> bool {
        self.right <= self.left || self.bottom <= self.top
    }
}

/// One node of the accessibility tree. Strings are empty when absent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Node {
    /// Resource id (Android `com.example:id/name`, iOS accessibility identifier).
    pub id: String,
    pub text: String,
    /// Content description (Android) or accessibility label (iOS).
    pub desc: String,
    #[serde(rename = "class")]
    pub class_name: String,
    pub package: String,
    pub clickable: bool,
    pub enabled: bool,
    pub checked: bool,
    pub focused: bool,
    pub selected: bool,
    pub scrollable: bool,
    pub bounds: Bounds,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<Node>,
}

impl Node {
    /// Every node of the tree rooted here, parents before children.
    pub fn descendants(&self) -> impl Iterator<Item = &Node> {
        let mut stack = vec![self];
        std::iter::from_fn(move || {
            let node = stack.pop()?;
            stack.extend(node.children.iter().rev());
            Some(node)
        })
    }
}

/// The accessibility tree of the current screen.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hierarchy {
    pub root: Node,
    pub screen: ScreenSize,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScreenSize {
    pub width: u32,
    pub height: u32,
}

/// A hardware or navigation key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Key {
    Back,
    Home,
    Enter,
    Tab,
    Up,
    Down,
    Left,
    Right,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    Verbose,
    Debug,
    Info,
    Warn,
    Error,
    Fatal,
}

/// One log line from the device (logcat) or the app (SDK).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogEntry {
    /// Device time in milliseconds.
    pub time: u64,
    pub level: LogLevel,
    #[serde(default)]
    pub tag: String,
    pub message: String,
}

/// An uncaught exception reported by the app.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExceptionInfo {
    pub class: String,
    pub message: String,
    #[serde(default)]
    pub stack: String,
    /// Device time in milliseconds.
    pub time: u64,
}

/// A PNG screenshot.
#[derive(Clone, PartialEq, Eq)]
pub struct Screenshot {
    pub png: Vec<u8>,
    pub width: u32,
    pub height: u32,
}

impl std::fmt::Debug for Screenshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Screenshot({}x{}, {} bytes)",
            self.width,
            self.height,
            self.png.len()
        )
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Health {
    pub ready: bool,
    pub version: String,
    pub platform: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    pub cpu_percent: f64,
    pub memory_bytes: u64,
}

/// What a device said about one input it was asked to deliver.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputOutcome {
    pub delivered: bool,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub detail: String,
    pub device_time_ms: u64,
}

/// A selector the device resolves itself (see `TapSelector` in driver.proto).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeviceSelector {
    ResourceId(String),
    Text(String),
    ContentDescription(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct IdleOutcome {
    pub idle: bool,
    pub device_time_ms: u64,
}
