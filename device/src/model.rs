//! What a device shows and reports, independent of the transport that carried it.
//!
//! These types are also the JSON the trace records and the spec runtime reads
//! (field names as in `docs/trace-format.md`), so they change only together
//! with those documents.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A point on the screen, in device pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Point {
    /// Pixels from the screen's left edge.
    pub x: i32,
    /// Pixels from the screen's top edge.
    pub y: i32,
}

/// A rectangle on the screen, in device pixels; `right` and `bottom` are exclusive.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Bounds {
    /// The first column inside the rectangle.
    pub left: i32,
    /// The first row inside the rectangle.
    pub top: i32,
    /// The first column past the rectangle (exclusive).
    pub right: i32,
    /// The first row past the rectangle (exclusive).
    pub bottom: i32,
}

impl Bounds {
    /// The middle of the rectangle (rounded towards the top left): where a tap on it lands.
    pub fn centre(&self) -> Point {
        Point {
            x: self.left + (self.right - self.left) / 2,
            y: self.top + (self.bottom - self.top) / 2,
        }
    }

    /// Whether `point` lies inside, the exclusive right and bottom edges left out.
    pub fn contains(&self, point: Point) -> bool {
        point.x >= self.left && point.x < self.right && point.y >= self.top && point.y < self.bottom
    }

    /// Whether the rectangle covers no pixel (zero or negative width or height).
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
    /// The text the element shows (a label's text, a field's content).
    pub text: String,
    /// Content description (Android) or accessibility label (iOS).
    pub desc: String,
    /// The widget's class, e.g. `android.widget.Button`; `class` in JSON.
    #[serde(rename = "class")]
    pub class_name: String,
    /// The package (app) the element belongs to.
    pub package: String,
    /// Whether the element reacts to a tap.
    pub clickable: bool,
    /// Whether the element accepts input (false for a greyed-out control).
    pub enabled: bool,
    /// Whether a checkbox, switch or radio button is on.
    pub checked: bool,
    /// Whether the element has input focus (where typed text goes).
    pub focused: bool,
    /// Whether the element is selected (a tab, a list item).
    pub selected: bool,
    /// Whether the element's content can be scrolled.
    pub scrollable: bool,
    /// Where the element is on screen.
    pub bounds: Bounds,
    /// The element's accessibility role as the platform computes it (web: the ARIA role,
    /// e.g. `button`, `checkbox`); empty when the device reports none.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub role: String,
    /// Every other attribute the device reports, by the platform's own name: on the web
    /// every DOM attribute (`data-testid`, `href`, `aria-label`, `data-*` …), on Android
    /// the dump's or the SDK's attributes that no field above carries. Selectors read it
    /// (`docs/spec-reference.md`); omitted from JSON when empty.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub attrs: BTreeMap<String, String>,
    /// The element's children, in the platform's order; omitted from JSON when empty.
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
    /// The tree's root node (usually the window).
    pub root: Node,
    /// The screen the tree was laid out on.
    pub screen: ScreenSize,
}

/// The screen's size, in device pixels.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScreenSize {
    /// Width, in device pixels.
    pub width: u32,
    /// Height, in device pixels.
    pub height: u32,
}

/// A hardware or navigation key. JSON: its name in camelCase (`back`, `pageDown`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Key {
    /// Back: the system's back navigation.
    Back,
    /// The Home button: the app goes to the background.
    Home,
    /// Enter (submits a form or a search field).
    Enter,
    /// Tab: focus moves to the next element.
    Tab,
    /// The up arrow (D-pad up).
    Up,
    /// The down arrow (D-pad down).
    Down,
    /// The left arrow (D-pad left).
    Left,
    /// The right arrow (D-pad right).
    Right,
    /// Escape: dismisses an edit, a menu or a dialog (Android falls back to Back for it).
    Escape,
    /// Backspace: deletes the character before the cursor (Android's `DEL`).
    Backspace,
    /// Delete: deletes the character after the cursor (Android's `FORWARD_DEL`).
    Delete,
    /// The space bar.
    Space,
    /// Page up: the content moves up by a screenful.
    PageUp,
    /// Page down: the content moves down by a screenful.
    PageDown,
}

impl Key {
    /// Every key, in the order of `driver.proto`'s `Key`.
    pub const ALL: [Key; 14] = [
        Key::Back,
        Key::Home,
        Key::Enter,
        Key::Tab,
        Key::Up,
        Key::Down,
        Key::Left,
        Key::Right,
        Key::Escape,
        Key::Backspace,
        Key::Delete,
        Key::Space,
        Key::PageUp,
        Key::PageDown,
    ];

    /// The key's name as specs and the trace write it (`back`, `pageDown`).
    pub fn name(self) -> &'static str {
        match self {
            Key::Back => "back",
            Key::Home => "home",
            Key::Enter => "enter",
            Key::Tab => "tab",
            Key::Up => "up",
            Key::Down => "down",
            Key::Left => "left",
            Key::Right => "right",
            Key::Escape => "escape",
            Key::Backspace => "backspace",
            Key::Delete => "delete",
            Key::Space => "space",
            Key::PageUp => "pageUp",
            Key::PageDown => "pageDown",
        }
    }
}

/// Which way a scroll moves the view over the content: `down` shows what is
/// below (the content moves up, as a wheel turned towards the user or a finger
/// swiping up does).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ScrollDirection {
    /// Shows what is above.
    Up,
    /// Shows what is below.
    Down,
    /// Shows what is to the left.
    Left,
    /// Shows what is to the right.
    Right,
}

impl ScrollDirection {
    /// How far the content moves on each axis when the view moves `distance`
    /// pixels this way (a wheel's deltas: positive is down and right).
    pub fn delta(self, distance: i32) -> (i32, i32) {
        match self {
            ScrollDirection::Up => (0, -distance),
            ScrollDirection::Down => (0, distance),
            ScrollDirection::Left => (-distance, 0),
            ScrollDirection::Right => (distance, 0),
        }
    }

    /// The direction's name as specs and the trace write it.
    pub fn name(self) -> &'static str {
        match self {
            ScrollDirection::Up => "up",
            ScrollDirection::Down => "down",
            ScrollDirection::Left => "left",
            ScrollDirection::Right => "right",
        }
    }
}

/// A move through the app's navigation rather than a touch: the browser's (or
/// the system's) back and forward, a reload, or an address typed in.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Navigation {
    /// Back: the browser's history on the web, the system back on Android.
    Back,
    /// Forward through the browser's history (the web only).
    Forward,
    /// The page loaded again (web); on Android and the simulator the app's process
    /// restarted with its data kept (see `docs/devices.md`).
    Reload,
    /// An address on the app's origin, absolute or a path (`/#/active`): the web only.
    To(String),
}

/// A log entry's severity, least severe first (so `>=` means "at least as severe").
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// Android's `V`: the most detailed.
    Verbose,
    /// Android's `D`.
    Debug,
    /// Android's `I`.
    Info,
    /// Android's `W`.
    Warn,
    /// Android's `E`.
    Error,
    /// Android's `F` (assert, `wtf`): the most severe.
    Fatal,
}

/// One log line from the device (logcat) or the app (SDK).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogEntry {
    /// Device time in milliseconds.
    pub time: u64,
    /// The entry's severity.
    pub level: LogLevel,
    /// The log tag (logcat's, or the one the app gave its SDK); empty if none.
    #[serde(default)]
    pub tag: String,
    /// The logged text.
    pub message: String,
}

/// An uncaught exception reported by the app.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExceptionInfo {
    /// The exception's class, e.g. `java.lang.IllegalStateException`.
    pub class: String,
    /// The exception's message.
    pub message: String,
    /// The stack trace as the app's runtime prints it; empty if not sent.
    #[serde(default)]
    pub stack: String,
    /// Device time in milliseconds.
    pub time: u64,
}

/// A PNG screenshot.
#[derive(Clone, PartialEq, Eq)]
pub struct Screenshot {
    /// The PNG file's bytes.
    pub png: Vec<u8>,
    /// Width, in pixels.
    pub width: u32,
    /// Height, in pixels.
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

/// What a driver's Health call answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Health {
    /// Whether the driver says it is ready to drive the device.
    pub ready: bool,
    /// The driver's own version (sidecar or simulator).
    pub version: String,
    /// `android`, `ios` or `sim`.
    pub platform: String,
}

/// The app's resource use, as the driver's Metrics call reported it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    /// CPU use, percent.
    pub cpu_percent: f64,
    /// Memory use, bytes.
    pub memory_bytes: u64,
}

/// What a device said about one input it was asked to deliver.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputOutcome {
    /// False when the device could not deliver it (nothing matched a selector, a
    /// point off screen, the element meant is gone): an answer, not an error.
    pub delivered: bool,
    /// True when the device saw the input arrive where it was aimed (the element
    /// meant received the touch, the focused field the text); false when it has no
    /// such evidence (see [`InputOutcome::applied`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub confirmed: bool,
    /// True when the input restarted the app's process (a reload on Android): its
    /// SDK connects again, and the host waits for that.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub app_restarted: bool,
    /// Why the input was not delivered, or what the device noticed; empty otherwise.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub detail: String,
    /// The device's monotonic clock after the input, ms.
    pub device_time_ms: u64,
}

impl InputOutcome {
    /// An input delivered without evidence either way, at `device_time_ms`.
    pub fn delivered(device_time_ms: u64) -> InputOutcome {
        InputOutcome {
            delivered: true,
            confirmed: false,
            app_restarted: false,
            detail: String::new(),
            device_time_ms,
        }
    }

    /// An input the device saw arrive where it was aimed, at `device_time_ms`.
    pub fn confirmed(device_time_ms: u64) -> InputOutcome {
        InputOutcome {
            confirmed: true,
            ..InputOutcome::delivered(device_time_ms)
        }
    }

    /// An input the device did not deliver, and why.
    pub fn refused(detail: impl Into<String>, device_time_ms: u64) -> InputOutcome {
        InputOutcome {
            delivered: false,
            detail: detail.into(),
            ..InputOutcome::delivered(device_time_ms)
        }
    }

    /// Whether the input was applied, as `lastAction.applied` says it.
    pub fn applied(&self) -> Applied {
        match (self.delivered, self.confirmed) {
            (false, _) => Applied::No,
            (true, true) => Applied::Yes,
            (true, false) => Applied::Unknown,
        }
    }
}

/// Whether an action reached the app: `true` (the device saw it arrive), `false`
/// (its target was missing or the device refused it) or `"unknown"` (dispatched,
/// with no evidence either way). JSON: `true`, `false` or `"unknown"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Applied {
    /// The device saw the input arrive where it was aimed.
    Yes,
    /// The target was missing, or the device refused the input.
    No,
    /// Dispatched, with no evidence that it landed.
    Unknown,
}

impl Applied {
    /// The weaker of two answers, for an action made of several inputs (a tap
    /// into a field, then the typing): no if either was not applied, yes only if both were.
    pub fn and(self, other: Applied) -> Applied {
        match (self, other) {
            (Applied::No, _) | (_, Applied::No) => Applied::No,
            (Applied::Yes, Applied::Yes) => Applied::Yes,
            _ => Applied::Unknown,
        }
    }
}

impl Serialize for Applied {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Applied::Yes => serializer.serialize_bool(true),
            Applied::No => serializer.serialize_bool(false),
            Applied::Unknown => serializer.serialize_str("unknown"),
        }
    }
}

impl<'de> Deserialize<'de> for Applied {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Applied, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Wire {
            Bool(bool),
            Word(String),
        }
        match Wire::deserialize(deserializer)? {
            Wire::Bool(true) => Ok(Applied::Yes),
            Wire::Bool(false) => Ok(Applied::No),
            Wire::Word(word) if word == "unknown" => Ok(Applied::Unknown),
            Wire::Word(word) => Err(serde::de::Error::custom(format!(
                "applied is true, false or \"unknown\", not {word:?}"
            ))),
        }
    }
}

/// Where a touch lands: a point, and the element the host means there, as its
/// bounds were when the screen was captured. A device that can look checks that
/// the element is still there before touching it ([`crate::Driver::tap`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Touch {
    /// Where the touch lands.
    pub point: Point,
    /// The element meant; `None` for a bare point.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub element: Option<Bounds>,
}

impl Touch {
    /// A touch at a bare point.
    pub fn at(point: Point) -> Touch {
        Touch { point, element: None }
    }

    /// A touch at the centre of the element with these bounds.
    pub fn on(element: Bounds) -> Touch {
        Touch {
            point: element.centre(),
            element: Some(element),
        }
    }
}

/// A selector the device resolves itself (see `TapSelector` in driver.proto).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeviceSelector {
    /// The element with this resource id ([`Node::id`]).
    ResourceId(String),
    /// The element showing this text ([`Node::text`]), as the device matches it.
    Text(String),
    /// The element with this content description ([`Node::desc`]).
    ContentDescription(String),
}

/// What the driver's WaitForIdle call answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct IdleOutcome {
    /// False when the timeout passed before the UI settled.
    pub idle: bool,
    /// The device's monotonic clock when the wait ended, ms.
    pub device_time_ms: u64,
}

/// The window with the input focus, as a device that can tell says it (Android's
/// window manager); the state's `window`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Window {
    /// The focused window's package; empty when the window manager does not say.
    #[serde(default)]
    pub package: String,
    /// Its title as the window manager prints it, e.g. `app.folio/app.folio.MainActivity`.
    #[serde(default)]
    pub title: String,
    /// Whose window it is, seen from the app under test.
    pub kind: WindowKind,
    /// Whether the soft keyboard is up (over the app's lower part; it does not take the focus).
    #[serde(default)]
    pub keyboard: bool,
}

impl Window {
    /// Whether the app's own windows are all there is to see: its window has the
    /// focus and no keyboard covers part of it.
    pub fn app_alone(&self) -> bool {
        self.kind == WindowKind::App && !self.keyboard
    }
}

/// Whose window has the focus.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WindowKind {
    /// A window of the app under test.
    App,
    /// A system dialog over the app, such as a runtime permission prompt.
    SystemDialog,
    /// The system's "isn't responding" dialog for the app, or the system reported an ANR of it.
    NotResponding,
    /// Another app, the launcher included: the app was left.
    OtherApp,
}

/// The app's process as the device sees it: asked when the app did not answer a pause.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppStatus {
    /// Alive and in front, left, not responding, or gone.
    pub process: AppProcess,
    /// What told it apart: the ANR's reason, the window in front, the crash's first lines.
    pub detail: String,
    /// The app's last `FATAL EXCEPTION` since its launch, its stack included; empty when none.
    pub crash: String,
}

/// The state of the app's process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AppProcess {
    /// Alive, its window in front.
    Foreground,
    /// Alive, another window in front: the app was left (Android 14+ freezes it).
    Background,
    /// Alive, and the system reported that it is not responding (an ANR).
    NotResponding,
    /// No process: it crashed, or was killed.
    Gone,
}

/// What `uatu doctor` checks of the installed app (Android: `dumpsys package`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppInfo {
    /// A debug build (its package flags include `DEBUGGABLE`).
    pub debuggable: bool,
    /// The runtime permissions it requests.
    pub requested_permissions: Vec<String>,
    /// Those of them granted now.
    pub granted_permissions: Vec<String>,
    /// Whether the driver grants the requested ones at each launch (not `--no-grant-permissions`).
    pub grants_permissions: bool,
}
