//! Actions: what a spec proposes ([`Action`], with [`Target`]s that may be
//! selectors), the candidates its generator tree yields ([`Candidate`]), and
//! what the host actually dispatched ([`ResolvedAction`], with whether it was
//! [`Applied`]).

use serde::{Deserialize, Serialize};

pub use uatu_device::model::{Applied, ScrollDirection};
use uatu_device::model::{Bounds, Key, Point};
use uatu_device::selector::Selector;

/// An action as the spec wrote it. JSON: `{"type": "tap", "on": ...}` etc. (the
/// table in `docs/spec-reference.md`); read from a spec with [`Action::parse`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum Action {
    /// Taps a target.
    Tap {
        /// What to tap.
        on: Target,
    },
    /// Taps a target twice in quick succession, as one gesture (within the
    /// platform's double-tap timeout).
    DoubleTap {
        /// What to double-tap.
        on: Target,
    },
    /// Presses a target and holds it.
    LongPress {
        /// What to press.
        on: Target,
        /// How long the press is held, ms; [`LONG_PRESS_MILLIS`] when absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        duration_millis: Option<u32>,
    },
    /// Scrolls the content of a target (or of the screen) so that what lies in
    /// `direction` comes into view: `down` shows what is further down, as a mouse
    /// wheel turned towards the user does (a finger drags the other way).
    Scroll {
        /// The element whose content scrolls; the screen when absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        on: Option<Target>,
        /// Which way the view moves over the content.
        direction: ScrollDirection,
        /// How far, as a fraction of the scrolled area's height (`up`/`down`) or width
        /// (`left`/`right`), over 0 and at most 1; [`SCROLL_AMOUNT`] when absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        amount: Option<f64>,
    },
    /// Types into `into` (tapped first) or, without it, the focused element.
    InputText {
        /// The field to type into; the focused element when absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        into: Option<Target>,
        /// The text typed.
        text: String,
        /// Whether Enter is pressed after the text (submitting the field's form);
        /// false when absent, which leaves the text pending in the field.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        submit: bool,
    },
    /// Empties a text field: `into` (tapped first) or, without it, the focused element.
    ClearText {
        /// The field to clear; the focused element when absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        into: Option<Target>,
    },
    /// Swipes from one target to another.
    Swipe {
        /// Where the swipe starts.
        from: Target,
        /// Where it ends.
        to: Target,
        /// How long it takes, ms; [`SWIPE_MILLIS`] when absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        duration_millis: Option<u32>,
    },
    /// Presses a hardware or navigation key.
    PressKey {
        /// The key.
        key: Key,
    },
    /// Lets device time pass without input.
    Wait {
        /// How long, ms of device time.
        duration_millis: u32,
    },
    /// Opens a location of the app (web: the address bar). A path (`/active`,
    /// `#/completed`, `?q=1`) is taken on the app's origin; a URL must be on that
    /// origin, which the web device checks when it dispatches.
    Navigate {
        /// A path starting with `/`, `#` or `?`, or an `http(s)://` URL.
        to: String,
    },
    /// Reloads the page (web); on Android, see `docs/spec-reference.md`.
    Reload,
    /// Goes back: the browser's history on the web, the system back on Android.
    Back,
    /// Goes forward in the browser's history (web).
    Forward,
}

/// How long a [`Action::LongPress`] holds when the spec gives no duration, ms: past
/// Android's long-press timeout (400-500 ms) and any web app's press-and-hold timer.
pub const LONG_PRESS_MILLIS: u32 = 1000;
/// How long a [`Action::Swipe`] takes when the spec gives no duration, ms.
pub const SWIPE_MILLIS: u32 = 300;
/// How far a [`Action::Scroll`] moves when the spec gives no amount: half the area.
pub const SCROLL_AMOUNT: f64 = 0.5;

/// Why a spec's action cannot be used; the message names the action.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ActionError {
    /// Not a JSON object with a string `type`.
    #[error("{0} is not an action (an object with a `type`, as Tap, InputText, … build it)")]
    NotAnAction(String),
    /// A `type` no action has.
    #[error("`{0}` is not an action type; the types are {types}", types = ACTION_TYPES.join(", "))]
    UnknownType(String),
    /// The action's fields are missing, mistyped or out of range.
    #[error("{action}: {problem}")]
    Invalid {
        /// The action's type, e.g. `longPress`.
        action: String,
        /// What is wrong, e.g. `durationMillis must be a whole number of milliseconds`.
        problem: String,
    },
}

/// Every action's `type`, as the JSON writes it.
pub const ACTION_TYPES: [&str; 13] = [
    "tap",
    "doubleTap",
    "longPress",
    "scroll",
    "inputText",
    "clearText",
    "swipe",
    "pressKey",
    "wait",
    "navigate",
    "reload",
    "back",
    "forward",
];

impl Action {
    /// Reads an action a spec built: its JSON checked field by field, with an error
    /// naming the action and the field at fault.
    pub fn parse(value: &serde_json::Value) -> Result<Action, ActionError> {
        let kind = match value.get("type") {
            Some(serde_json::Value::String(kind)) if value.is_object() => kind.as_str(),
            _ => return Err(ActionError::NotAnAction(shorten(value))),
        };
        if !ACTION_TYPES.contains(&kind) {
            return Err(ActionError::UnknownType(kind.to_string()));
        }
        let invalid = |problem: String| ActionError::Invalid {
            action: kind.to_string(),
            problem,
        };
        let action = Action::deserialize(value).map_err(|e| invalid(e.to_string()))?;
        action.check().map_err(invalid)?;
        Ok(action)
    }

    /// What serde cannot say: selectors' keys, ranges and the shape of a navigation target.
    fn check(&self) -> Result<(), String> {
        for target in self.targets() {
            if let Target::Selector(selector) = target {
                selector.compile().map_err(|e| e.to_string())?;
            }
        }
        match self {
            Action::Scroll {
                amount: Some(amount), ..
            } if !(amount.is_finite() && *amount > 0.0 && *amount <= 1.0) => Err(format!(
                "amount must be over 0 and at most 1 (a fraction of the scrolled area), got {amount}"
            )),
            Action::Navigate { to } if !is_app_location(to) => Err(format!(
                "to must be a path starting with /, # or ?, or an http(s):// URL on the app's origin, got {to:?}"
            )),
            _ => Ok(()),
        }
    }

    /// The action's `type` as the JSON writes it, e.g. `doubleTap`.
    pub fn type_name(&self) -> &'static str {
        match self {
            Action::Tap { .. } => "tap",
            Action::DoubleTap { .. } => "doubleTap",
            Action::LongPress { .. } => "longPress",
            Action::Scroll { .. } => "scroll",
            Action::InputText { .. } => "inputText",
            Action::ClearText { .. } => "clearText",
            Action::Swipe { .. } => "swipe",
            Action::PressKey { .. } => "pressKey",
            Action::Wait { .. } => "wait",
            Action::Navigate { .. } => "navigate",
            Action::Reload => "reload",
            Action::Back => "back",
            Action::Forward => "forward",
        }
    }

    /// Every target the action points at, in the order the JSON writes them.
    pub fn targets(&self) -> Vec<&Target> {
        match self {
            Action::Tap { on } | Action::DoubleTap { on } | Action::LongPress { on, .. } => vec![on],
            Action::Scroll { on, .. } => on.iter().collect(),
            Action::InputText { into, .. } | Action::ClearText { into } => into.iter().collect(),
            Action::Swipe { from, to, .. } => vec![from, to],
            Action::PressKey { .. }
            | Action::Wait { .. }
            | Action::Navigate { .. }
            | Action::Reload
            | Action::Back
            | Action::Forward => Vec::new(),
        }
    }

    /// [`Action::targets`], to change them (a shrink swaps an element for a selector).
    pub fn targets_mut(&mut self) -> Vec<&mut Target> {
        match self {
            Action::Tap { on } | Action::DoubleTap { on } | Action::LongPress { on, .. } => vec![on],
            Action::Scroll { on, .. } => on.iter_mut().collect(),
            Action::InputText { into, .. } | Action::ClearText { into } => into.iter_mut().collect(),
            Action::Swipe { from, to, .. } => vec![from, to],
            Action::PressKey { .. }
            | Action::Wait { .. }
            | Action::Navigate { .. }
            | Action::Reload
            | Action::Back
            | Action::Forward => Vec::new(),
        }
    }
}

/// Whether `to` is a location [`Action::Navigate`] may open: a path, query or
/// fragment of the app's origin, or an absolute http(s) URL (its origin is the
/// device's to check).
fn is_app_location(to: &str) -> bool {
    let has_host = |rest: &str| !rest.is_empty() && !rest.starts_with('/');
    to.starts_with(['/', '#', '?']) && !to.starts_with("//")
        || to.strip_prefix("https://").is_some_and(has_host)
        || to.strip_prefix("http://").is_some_and(has_host)
}

/// A value as an error shows it: its JSON, cut short.
fn shorten(value: &serde_json::Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(80) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// Where an action points: a selector (`"desc:login_submit"`, `{"testTag": "email"}`,
/// a path), or an element or point with a centre.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Target {
    /// An element the spec found (its centre `x`/`y`, and its bounds), or a bare point.
    Element {
        /// The point's x, device pixels.
        x: i32,
        /// The point's y, device pixels.
        y: i32,
        /// The element's bounds; absent for a bare point.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        bounds: Option<Bounds>,
    },
    /// A selector the host resolves against the step's hierarchy, e.g. `desc:login_submit`.
    Selector(Selector),
}

impl Target {
    /// A string selector, e.g. `Target::selector("desc:login_submit")`.
    pub fn selector(text: &str) -> Target {
        Target::Selector(Selector::Text(text.to_string()))
    }

    /// The target as the trace's descriptions show it: the selector, or `(x,y)`.
    pub fn describe(&self) -> String {
        match self {
            Target::Selector(selector) => selector.to_string(),
            Target::Element { x, y, .. } => format!("({x},{y})"),
        }
    }
}

/// One step of a candidate's path through the spec's generator tree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PathStep {
    /// The child's position among its siblings.
    pub index: u32,
    /// The weight the spec gave this child (1 where none was given).
    pub weight: f64,
    /// A name for the trace, e.g. the generator's variable or `weighted[2]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

/// One action a spec's generator tree offers this step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    /// From the root's child down to the generator that yielded the action.
    pub path: Vec<PathStep>,
    /// The action it offers.
    pub action: Action,
}

impl Candidate {
    /// The path as one readable string, e.g. `0:login/2:fillEmail`.
    pub fn path_label(&self) -> String {
        path_label(&self.path)
    }
}

/// A path through the generator tree as one readable string, e.g. `0:login/2:fillEmail`.
pub fn path_label(path: &[PathStep]) -> String {
    path.iter()
        .map(|step| match &step.label {
            Some(label) => format!("{}:{label}", step.index),
            None => step.index.to_string(),
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// What the host dispatched: the spec's action with its targets resolved, and
/// whether it landed. Its JSON is the trace's `action` and, at the next step,
/// `state.lastAction` (what a spec reads).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResolvedAction {
    /// The action as the spec wrote it.
    pub action: Action,
    /// The generator path that offered it (see [`Candidate::path_label`]).
    pub generator: String,
    /// Where the action acts, after resolving its target: the point tapped, pressed or
    /// typed into; where a swipe starts; where a scroll turns the wheel (the centre
    /// of the area scrolled, or the point the spec gave).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub point: Option<Point>,
    /// The bounds of the element the target resolved to, if it was an element (a
    /// scroll's: the element scrolled; absent when the screen scrolls).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bounds: Option<Bounds>,
    /// Where a swipe ends; for a scroll, `point` moved by the scroll's distance in its
    /// direction (down: below it), so the distance is their gap
    /// ([`ResolvedAction::scroll_distance`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_point: Option<Point>,
    /// Whether it landed; [`Applied::Unknown`] until the dispatch says (and in
    /// traces written before uatu recorded it). Left out of the JSON while unknown:
    /// a step's `action` is recorded before it is dispatched (the spec's runtime
    /// reads a missing `applied` as `"unknown"`).
    #[serde(default = "unknown", skip_serializing_if = "is_unknown")]
    pub applied: Applied,
    /// Why it did not land (the device's words), when it did not.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub detail: String,
}

fn unknown() -> Applied {
    Applied::Unknown
}

fn is_unknown(applied: &Applied) -> bool {
    *applied == Applied::Unknown
}

impl ResolvedAction {
    /// A resolved scroll's distance, device pixels: how far the content moves (the
    /// gap from `point` to `to_point`). `None` for other actions.
    pub fn scroll_distance(&self) -> Option<u32> {
        match (&self.action, self.point, self.to_point) {
            (Action::Scroll { .. }, Some(from), Some(to)) => {
                Some(from.x.abs_diff(to.x).max(from.y.abs_diff(to.y)))
            }
            _ => None,
        }
    }

    /// A short description, e.g. `tap desc:login_submit (0:login)`: the verdict
    /// table's "led by" and the inspect page's step list.
    pub fn describe(&self) -> String {
        let what = match &self.action {
            Action::Tap { on } => format!("tap {}", on.describe()),
            Action::DoubleTap { on } => format!("double-tap {}", on.describe()),
            Action::LongPress { on, duration_millis } => format!(
                "long-press {} {}ms",
                on.describe(),
                duration_millis.unwrap_or(LONG_PRESS_MILLIS)
            ),
            Action::Scroll { on, direction, .. } => match on {
                Some(on) => format!("scroll {} {}", direction.name(), on.describe()),
                None => format!("scroll {}", direction.name()),
            },
            Action::InputText { into, text, submit } => {
                let submitted = if *submit { " and submit" } else { "" };
                match into {
                    Some(into) => format!("type {text:?} into {}{submitted}", into.describe()),
                    None => format!("type {text:?}{submitted}"),
                }
            }
            Action::ClearText { into } => match into {
                Some(into) => format!("clear {}", into.describe()),
                None => "clear the focused field".to_string(),
            },
            Action::Swipe { from, to, .. } => format!("swipe {} -> {}", from.describe(), to.describe()),
            Action::PressKey { key } => format!("press {}", key.name()),
            Action::Wait { duration_millis } => format!("wait {duration_millis}ms"),
            Action::Navigate { to } => format!("navigate to {to}"),
            Action::Reload => "reload".to_string(),
            Action::Back => "back".to_string(),
            Action::Forward => "forward".to_string(),
        };
        if self.generator.is_empty() {
            what
        } else {
            format!("{what} ({})", self.generator)
        }
    }
}

/// The spec's action tree as places numbered at load (depth first, the root is 0):
/// each place's path from the root and its children. The host draws a branch of
/// it and asks the spec for that branch's candidates only.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ActionTree {
    places: Vec<TreePlace>,
}

/// One place of an [`ActionTree`]: a `weighted` node (with children) or a leaf.
#[derive(Debug, Clone, PartialEq)]
pub struct TreePlace {
    /// The path from the root (empty for the root).
    pub path: Vec<PathStep>,
    /// The places of its children, in the spec's order.
    pub children: Vec<usize>,
}

impl ActionTree {
    /// The tree whose places, numbered depth first, have these paths. A path that
    /// extends no earlier path is a child of the root.
    pub fn from_paths(paths: Vec<Vec<PathStep>>) -> ActionTree {
        let mut places: Vec<TreePlace> = Vec::with_capacity(paths.len());
        for (id, path) in paths.into_iter().enumerate() {
            // Depth first: the parent is the last place before this one one step shallower.
            let parent = places
                .iter()
                .rposition(|place| place.path.len() + 1 == path.len() && path.starts_with(&place.path));
            if let Some(parent) = parent {
                places[parent].children.push(id);
            }
            places.push(TreePlace {
                path,
                children: Vec::new(),
            });
        }
        ActionTree { places }
    }

    /// The place numbered `id`.
    pub fn place(&self, id: usize) -> Option<&TreePlace> {
        self.places.get(id)
    }

    /// How many places the tree has (0: the spec has no tree yet).
    pub fn len(&self) -> usize {
        self.places.len()
    }

    /// Whether the tree has no place.
    pub fn is_empty(&self) -> bool {
        self.places.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Every action's JSON as a spec writes it, and what the host reads it as.
    fn examples() -> Vec<(serde_json::Value, Action)> {
        let field = || Some(Target::selector("id:title"));
        vec![
            (
                json!({"type": "tap", "on": "desc:ok"}),
                Action::Tap {
                    on: Target::selector("desc:ok"),
                },
            ),
            (
                json!({"type": "doubleTap", "on": {"x": 3, "y": 4}}),
                Action::DoubleTap {
                    on: Target::Element {
                        x: 3,
                        y: 4,
                        bounds: None,
                    },
                },
            ),
            (
                json!({"type": "longPress", "on": "id:row", "durationMillis": 800}),
                Action::LongPress {
                    on: Target::selector("id:row"),
                    duration_millis: Some(800),
                },
            ),
            (
                json!({"type": "scroll", "direction": "down"}),
                Action::Scroll {
                    on: None,
                    direction: ScrollDirection::Down,
                    amount: None,
                },
            ),
            (
                json!({"type": "scroll", "on": "id:list", "direction": "left", "amount": 1.0}),
                Action::Scroll {
                    on: field().map(|_| Target::selector("id:list")),
                    direction: ScrollDirection::Left,
                    amount: Some(1.0),
                },
            ),
            (
                json!({"type": "inputText", "into": "id:title", "text": "milk"}),
                Action::InputText {
                    into: field(),
                    text: "milk".into(),
                    submit: false,
                },
            ),
            (
                json!({"type": "inputText", "text": "milk", "submit": true}),
                Action::InputText {
                    into: None,
                    text: "milk".into(),
                    submit: true,
                },
            ),
            (
                json!({"type": "clearText", "into": "id:title"}),
                Action::ClearText { into: field() },
            ),
            (json!({"type": "clearText"}), Action::ClearText { into: None }),
            (
                json!({"type": "pressKey", "key": "pageDown"}),
                Action::PressKey { key: Key::PageDown },
            ),
            (
                json!({"type": "pressKey", "key": "escape"}),
                Action::PressKey { key: Key::Escape },
            ),
            (
                json!({"type": "navigate", "to": "#/active"}),
                Action::Navigate {
                    to: "#/active".into(),
                },
            ),
            (
                json!({"type": "navigate", "to": "http://127.0.0.1:8080/x"}),
                Action::Navigate {
                    to: "http://127.0.0.1:8080/x".into(),
                },
            ),
            (json!({"type": "reload"}), Action::Reload),
            (json!({"type": "back"}), Action::Back),
            (json!({"type": "forward"}), Action::Forward),
            (
                json!({"type": "tap", "on": {"testTag": "add", "enabled": true}}),
                Action::Tap {
                    on: Target::Selector(Selector::Object(
                        [
                            (
                                "enabled".to_string(),
                                uatu_device::selector::SelectorValue::Flag(true),
                            ),
                            (
                                "testTag".to_string(),
                                uatu_device::selector::SelectorValue::Text("add".into()),
                            ),
                        ]
                        .into(),
                    )),
                },
            ),
        ]
    }

    #[test]
    fn every_action_reads_from_its_json_and_writes_the_same_json_back() {
        for (json, action) in examples() {
            assert_eq!(Action::parse(&json).as_ref(), Ok(&action), "{json}");
            assert_eq!(serde_json::to_value(&action).expect("writes"), json, "{json}");
            assert!(ACTION_TYPES.contains(&action.type_name()), "{json}");
            assert_eq!(json["type"], action.type_name(), "{json}");
        }
    }

    #[test]
    fn a_bad_action_is_refused_naming_the_action_and_what_is_wrong() {
        let error = |json: serde_json::Value| Action::parse(&json).expect_err(&json.to_string()).to_string();
        assert_eq!(
            error(json!({"type": "dubleTap", "on": "id:x"})),
            "`dubleTap` is not an action type; the types are tap, doubleTap, longPress, scroll, inputText, \
             clearText, swipe, pressKey, wait, navigate, reload, back, forward"
        );
        assert!(error(json!("tap")).contains("\"tap\" is not an action"));
        assert!(error(json!({"on": "id:x"})).contains("is not an action"));
        assert_eq!(
            error(json!({"type": "doubleTap"})),
            "doubleTap: missing field `on`"
        );
        assert!(
            error(json!({"type": "longPress", "on": "id:x", "durationMillis": -1}))
                .starts_with("longPress: "),
            "a negative duration"
        );
        assert!(
            error(json!({"type": "scroll", "direction": "sideways"}))
                .starts_with("scroll: unknown variant `sideways`")
        );
        assert!(
            error(json!({"type": "scroll", "direction": "up", "amount": 0}))
                .contains("amount must be over 0")
        );
        assert!(error(json!({"type": "scroll", "direction": "up", "amount": 1.5})).contains("at most 1"));
        assert!(
            error(json!({"type": "pressKey", "key": "page_down"})).starts_with("pressKey: unknown variant")
        );
        assert!(error(json!({"type": "inputText", "text": "x", "submit": "yes"})).starts_with("inputText: "));
        assert_eq!(
            error(json!({"type": "tap", "on": {"enabled": "yes"}})),
            "tap: selector key `enabled` takes true or false, not \"yes\""
        );
        assert!(
            error(json!({"type": "longPress", "on": "label:x"}))
                .starts_with("longPress: `label:x` is not a selector")
        );
        for to in [
            "javascript:alert(1)",
            "file:///etc/passwd",
            "active",
            "//evil.example/",
            "https://",
            "",
        ] {
            assert!(
                error(json!({"type": "navigate", "to": to})).starts_with("navigate: to must be a path"),
                "{to}"
            );
        }
    }

    #[test]
    fn applied_is_true_false_or_unknown_and_unknown_when_not_recorded() {
        for (applied, json) in [
            (Applied::Yes, json!(true)),
            (Applied::No, json!(false)),
            (Applied::Unknown, json!("unknown")),
        ] {
            assert_eq!(serde_json::to_value(applied).expect("writes"), json);
            assert_eq!(serde_json::from_value::<Applied>(json).expect("reads"), applied);
        }
        assert!(serde_json::from_value::<Applied>(json!("maybe")).is_err());
        let old: ResolvedAction =
            serde_json::from_value(json!({"action": {"type": "back"}, "generator": ""}))
                .expect("an old record");
        assert_eq!(old.applied, Applied::Unknown);
    }

    #[test]
    fn key_names_are_the_json_names() {
        for key in Key::ALL {
            assert_eq!(serde_json::to_value(key).expect("writes"), json!(key.name()));
        }
    }
}
