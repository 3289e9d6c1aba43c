//! Actions: what a spec proposes ([`Action`], with [`Target`]s that may be
//! selectors), the candidates its generator tree yields ([`Candidate`]), and
//! what the host actually dispatched ([`ResolvedAction`]).

use serde::{Deserialize, Serialize};

use uatu_device::model::{Bounds, Key, Point};

/// An action as the spec wrote it. JSON: `{"type": "tap", "on": ...}` etc.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum Action {
    /// Taps a target.
    Tap {
        /// What to tap.
        on: Target,
    },
    /// Types into `into` (tapped first) or, without it, the focused element.
    InputText {
        /// The field to type into; the focused element when absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        into: Option<Target>,
        /// The text typed.
        text: String,
    },
    /// Swipes from one target to another.
    Swipe {
        /// Where the swipe starts.
        from: Target,
        /// Where it ends.
        to: Target,
        /// How long it takes, ms; 300 when absent.
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
}

/// Where an action points: a selector (`"desc:login_submit"`, `"id:…"`,
/// `"text:…"`, `"descPrefix:…"`), or an element or point with a centre.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Target {
    /// A selector the host resolves against the step's hierarchy, e.g. `desc:login_submit`.
    Selector(String),
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

/// What the host dispatched: the spec's action with its targets resolved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResolvedAction {
    /// The action as the spec wrote it.
    pub action: Action,
    /// The generator path that offered it (see [`Candidate::path_label`]).
    pub generator: String,
    /// The point tapped or swiped from, after resolving the target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub point: Option<Point>,
    /// The bounds of the element the target resolved to, if it was an element.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bounds: Option<Bounds>,
    /// A swipe's end point.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_point: Option<Point>,
}

impl ResolvedAction {
    /// A short description, e.g. `tap desc:login_submit (0:login)`: the verdict
    /// table's "led by" and the inspect page's step list.
    pub fn describe(&self) -> String {
        let target = |t: &Target| match t {
            Target::Selector(selector) => selector.clone(),
            Target::Element { x, y, .. } => format!("({x},{y})"),
        };
        let what = match &self.action {
            Action::Tap { on } => format!("tap {}", target(on)),
            Action::InputText { into, text } => match into {
                Some(into) => format!("type {text:?} into {}", target(into)),
                None => format!("type {text:?}"),
            },
            Action::Swipe { from, to, .. } => format!("swipe {} -> {}", target(from), target(to)),
            Action::PressKey { key } => format!(
                "press {}",
                serde_json::to_string(key).unwrap_or_default().trim_matches('"')
            ),
            Action::Wait { duration_millis } => format!("wait {duration_millis}ms"),
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
