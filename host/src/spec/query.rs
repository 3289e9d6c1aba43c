//! Selector queries over the accessibility tree, answered on the host so that
//! the hierarchy never has to cross into JavaScript as a whole.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::action::{Action, Candidate, PathStep, SWIPE_MILLIS, ScrollDirection, Target};
use uatu_device::model::{Bounds, Node};
use uatu_device::selector::Selector;

/// What a query asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueryKind {
    /// The first element matching a selector.
    Find,
    /// Every element matching a selector.
    FindAll,
    /// Every clickable, enabled, visible element (the `taps` generator).
    Clickable,
    /// Every scrollable, visible element (the `swipes` generator).
    Scrollable,
    /// The first element inside another one matching a selector (`Element.find`).
    FindInside,
    /// Every element inside another one matching a selector (`Element.findAll`).
    FindAllInside,
    /// Every text field a spec can type into (the `typing` generator; [`is_editable`]).
    Editable,
}

impl QueryKind {
    /// The query a provider's code stands for; `None` for an unknown code.
    pub fn from_code(code: u32) -> Option<QueryKind> {
        Some(match code {
            0 => QueryKind::Find,
            1 => QueryKind::FindAll,
            2 => QueryKind::Clickable,
            3 => QueryKind::Scrollable,
            4 => QueryKind::FindInside,
            5 => QueryKind::FindAllInside,
            6 => QueryKind::Editable,
            _ => return None,
        })
    }
}

/// An element as the spec sees it. `bounds` and `attrs` are its only nested objects:
/// the runtime freezes answers knowing that (`freezeElements` in `packages/spec`).
#[derive(Serialize)]
struct Element<'a> {
    id: &'a str,
    text: &'a str,
    desc: &'a str,
    class: &'a str,
    package: &'a str,
    clickable: bool,
    enabled: bool,
    checked: bool,
    focused: bool,
    selected: bool,
    scrollable: bool,
    role: &'a str,
    attrs: &'a BTreeMap<String, String>,
    bounds: Bounds,
    x: i32,
    y: i32,
}

impl<'a> Element<'a> {
    fn of(node: &'a Node) -> Element<'a> {
        let centre = node.bounds.centre();
        Element {
            id: &node.id,
            text: &node.text,
            desc: &node.desc,
            class: &node.class_name,
            package: &node.package,
            clickable: node.clickable,
            enabled: node.enabled,
            checked: node.checked,
            focused: node.focused,
            selected: node.selected,
            scrollable: node.scrollable,
            role: &node.role,
            attrs: &node.attrs,
            bounds: node.bounds,
            x: centre.x,
            y: centre.y,
        }
    }
}

/// The element an `Element.find` looks inside, as the spec holds it: found again in
/// the step's tree by these fields (the first node with all of them).
#[derive(Deserialize)]
struct Scope {
    #[serde(default)]
    id: String,
    #[serde(default)]
    class: String,
    bounds: Bounds,
}

/// What `Element.find` / `findAll` send: the element, and the selector.
#[derive(Deserialize)]
struct Inside {
    within: Scope,
    selector: Selector,
}

/// A selector as the runtime sends it: a string selector as is, an object or a
/// path as its JSON. `None` when it is neither.
fn read_selector(text: &str) -> Option<Selector> {
    if text.starts_with(['{', '[']) {
        serde_json::from_str(text).ok()
    } else {
        Some(Selector::Text(text.to_string()))
    }
}

/// The nodes answering `kind` with `selector` over `root`; none for a selector the
/// runtime should not have sent (it checks them first, with the spec's line).
fn select<'n>(root: &'n Node, kind: QueryKind, selector: &str) -> Vec<&'n Node> {
    match kind {
        QueryKind::Find | QueryKind::FindAll => {
            let Some(selector) = read_selector(selector) else {
                return Vec::new();
            };
            match selector.compile() {
                Ok(query) if kind == QueryKind::Find => query.find(root).into_iter().collect(),
                Ok(query) => query.find_all(root),
                Err(_) => Vec::new(),
            }
        }
        QueryKind::FindInside | QueryKind::FindAllInside => {
            let Ok(inside) = serde_json::from_str::<Inside>(selector) else {
                return Vec::new();
            };
            let (Ok(query), Some(scope)) = (
                inside.selector.compile(),
                root.descendants().find(|n| {
                    n.bounds == inside.within.bounds
                        && n.class_name == inside.within.class
                        && n.id == inside.within.id
                }),
            ) else {
                return Vec::new();
            };
            let mut found = query.find_all_inside(scope);
            if kind == QueryKind::FindInside {
                found.truncate(1);
            }
            found
        }
        QueryKind::Clickable => root
            .descendants()
            .filter(|n| n.clickable && n.enabled && !n.bounds.is_empty())
            .collect(),
        QueryKind::Scrollable => root
            .descendants()
            .filter(|n| n.scrollable && !n.bounds.is_empty())
            .collect(),
        QueryKind::Editable => root.descendants().filter(|n| is_editable(n)).collect(),
    }
}

/// The JSON array of elements answering `kind` with `selector` over `root`.
pub fn answer(root: &Node, kind: QueryKind, selector: &str) -> Vec<u8> {
    let matched: Vec<Element<'_>> = select(root, kind, selector)
        .into_iter()
        .map(Element::of)
        .collect();
    serde_json::to_vec(&matched).unwrap_or_else(|_| b"[]".to_vec())
}

/// Whether `node` is a text field a spec can type into: an Android `EditText` (or
/// a subclass), a web `input` of a text-like type, a `textarea`, or an element
/// with `contenteditable`.
pub fn is_editable(node: &Node) -> bool {
    let tag = node.class_name.split('.').next().unwrap_or_default();
    let textual_input = || {
        const TEXT_TYPES: [&str; 7] = ["text", "search", "email", "url", "tel", "password", "number"];
        node.attrs
            .get("type")
            .is_none_or(|kind| TEXT_TYPES.contains(&kind.as_str()))
    };
    node.enabled
        && !node.bounds.is_empty()
        && (node.class_name.ends_with("EditText")
            || tag.eq_ignore_ascii_case("textarea")
            || (tag.eq_ignore_ascii_case("input") && textual_input())
            || node
                .attrs
                .get("contenteditable")
                .is_some_and(|value| value != "false"))
}

/// The built-in generators the host expands from the tree, by the name the runtime
/// sends: they depend on nothing but the tree, and building one JS object per
/// element is what made them the most expensive part of a step.
pub const HOST_GENERATORS: [&str; 5] = ["taps", "doubleTaps", "longPresses", "scrolls", "swipes"];

/// Expands a built-in generator of [`HOST_GENERATORS`] into candidates, on the host.
pub fn expand(root: &Node, kind: &str, path: &[PathStep], out: &mut Vec<Candidate>) {
    let element = |node: &Node| {
        let centre = node.bounds.centre();
        Target::Element {
            x: centre.x,
            y: centre.y,
            bounds: Some(node.bounds),
        }
    };
    let mut offer = |action: Action| {
        out.push(Candidate {
            path: path.to_vec(),
            action,
        })
    };
    let tappable = root
        .descendants()
        .filter(|n| n.clickable && n.enabled && !n.bounds.is_empty());
    let scrollable = root
        .descendants()
        .filter(|n| n.scrollable && !n.bounds.is_empty());
    match kind {
        "taps" => tappable.for_each(|node| offer(Action::Tap { on: element(node) })),
        "doubleTaps" => tappable.for_each(|node| offer(Action::DoubleTap { on: element(node) })),
        "longPresses" => tappable.for_each(|node| {
            offer(Action::LongPress {
                on: element(node),
                duration_millis: None,
            })
        }),
        "scrolls" => scrollable.for_each(|node| {
            for direction in [ScrollDirection::Down, ScrollDirection::Up] {
                offer(Action::Scroll {
                    on: Some(element(node)),
                    direction,
                    amount: None,
                });
            }
        }),
        "swipes" => scrollable.for_each(|node| {
            let b = node.bounds;
            let x = b.centre().x;
            let height = b.bottom - b.top;
            let point = |y: i32| Target::Element { x, y, bounds: None };
            let (upper, lower) = (point(b.top + height / 4), point(b.top + height * 3 / 4));
            for (from, to) in [(lower.clone(), upper.clone()), (upper, lower)] {
                offer(Action::Swipe {
                    from,
                    to,
                    duration_millis: Some(SWIPE_MILLIS),
                });
            }
        }),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use uatu_device::selector::Matcher;

    fn node(id: &str, desc: &str) -> Node {
        Node {
            id: id.into(),
            desc: desc.into(),
            ..Node::default()
        }
    }

    #[test]
    fn id_selector_matches_exact_and_android_suffix() {
        let selector = Matcher::parse("id:amount").unwrap();
        assert!(selector.matches(&node("amount", "")));
        assert!(selector.matches(&node("app.folio:id/amount", "")));
        assert!(!selector.matches(&node("app.folio:id/total_amount", "")));
        assert!(!selector.matches(&node("xamount", "")));
    }

    #[test]
    fn desc_prefix_and_unknown_kinds() {
        assert!(
            Matcher::parse("descPrefix:row_")
                .unwrap()
                .matches(&node("", "row_3"))
        );
        assert_eq!(Matcher::parse("class:Button"), None);
    }

    fn list() -> Node {
        let row = |n: i32, text: &str, done: bool| Node {
            id: format!("row_{n}"),
            text: text.into(),
            class_name: "li.todo".into(),
            checked: done,
            role: "listitem".into(),
            attrs: [("data-testid".to_string(), format!("todo-{n}"))].into(),
            bounds: Bounds {
                left: 0,
                top: n * 100,
                right: 500,
                bottom: n * 100 + 100,
            },
            children: vec![Node {
                text: text.into(),
                role: "checkbox".into(),
                clickable: true,
                enabled: true,
                checked: done,
                ..Node::default()
            }],
            ..Node::default()
        };
        Node {
            id: "list".into(),
            role: "list".into(),
            children: vec![row(1, "Milk", false), row(2, "Bread", true)],
            ..Node::default()
        }
    }

    fn found(kind: QueryKind, selector: &str) -> Vec<serde_json::Value> {
        serde_json::from_slice(&answer(&list(), kind, selector)).expect("a JSON array")
    }

    #[test]
    fn object_and_path_selectors_are_answered_with_attrs_and_role() {
        let done = found(QueryKind::FindAll, r#"{"role": "listitem", "checked": true}"#);
        assert_eq!(done.len(), 1);
        assert_eq!(done[0]["text"], "Bread");
        assert_eq!(done[0]["attrs"]["data-testid"], "todo-2");
        assert_eq!(done[0]["role"], "listitem");
        let boxes = found(
            QueryKind::FindAll,
            r#"[{"testTag": "todo-1"}, {"role": "checkbox"}]"#,
        );
        assert_eq!(boxes.len(), 1);
        assert_eq!(boxes[0]["text"], "Milk");
        assert_eq!(found(QueryKind::FindAll, "id:list > role:checkbox").len(), 2);
        assert_eq!(found(QueryKind::Find, "id:list > role:checkbox").len(), 1);
        assert_eq!(
            found(QueryKind::FindAll, r#"{"enabled": "yes"}"#).len(),
            0,
            "refused, not guessed"
        );
    }

    #[test]
    fn an_elements_own_find_looks_inside_it_only() {
        let inside = |selector: &str| {
            found(
                QueryKind::FindAllInside,
                &format!(
                    r#"{{"within": {{"id": "row_2", "class": "li.todo", "bounds": {{"left": 0, "top": 200, "right": 500, "bottom": 300}}}}, "selector": {selector}}}"#
                ),
            )
        };
        let boxes = inside(r#"{"role": "checkbox"}"#);
        assert_eq!(boxes.len(), 1);
        assert_eq!(boxes[0]["text"], "Bread");
        assert!(
            inside(r#""id:row_2""#).is_empty(),
            "the element itself is not inside it"
        );
        assert!(inside(r#""text:Milk""#).is_empty());
    }
}
