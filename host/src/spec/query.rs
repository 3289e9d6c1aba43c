//! Selector queries over the accessibility tree, answered on the host so that
//! the hierarchy never has to cross into JavaScript as a whole.

use serde::Serialize;

pub use uatu_device::selector::Matcher;

use crate::action::{Action, Candidate, PathStep, Target};
use uatu_device::model::{Bounds, Node};

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
}

impl QueryKind {
    /// The query a provider's code stands for; `None` for an unknown code.
    pub fn from_code(code: u32) -> Option<QueryKind> {
        Some(match code {
            0 => QueryKind::Find,
            1 => QueryKind::FindAll,
            2 => QueryKind::Clickable,
            3 => QueryKind::Scrollable,
            _ => return None,
        })
    }
}

/// An element as the spec sees it. `bounds` is its only nested object: the runtime
/// freezes answers knowing that (`freezeElements` in `packages/spec`).
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
            bounds: node.bounds,
            x: centre.x,
            y: centre.y,
        }
    }
}

/// The JSON array of elements answering `kind` with `selector` over `root`.
pub fn answer(root: &Node, kind: QueryKind, selector: &str) -> Vec<u8> {
    let nodes = root.descendants();
    let matched: Vec<Element<'_>> = match kind {
        QueryKind::Find | QueryKind::FindAll => match Matcher::parse(selector) {
            None => Vec::new(),
            Some(selector) => {
                let all = nodes.filter(|n| selector.matches(n)).map(Element::of);
                if kind == QueryKind::Find {
                    all.take(1).collect()
                } else {
                    all.collect()
                }
            }
        },
        QueryKind::Clickable => nodes
            .filter(|n| n.clickable && n.enabled && !n.bounds.is_empty())
            .map(Element::of)
            .collect(),
        QueryKind::Scrollable => nodes
            .filter(|n| n.scrollable && !n.bounds.is_empty())
            .map(Element::of)
            .collect(),
    };
    serde_json::to_vec(&matched).unwrap_or_else(|_| b"[]".to_vec())
}

/// Expands the built-in generators `taps` and `swipes` into candidates, on the
/// host: they depend on nothing but the tree, and building one JS object per
/// element is what made them the most expensive part of a step.
pub fn expand(root: &Node, kind: &str, path: &[PathStep], out: &mut Vec<Candidate>) {
    let element = |node: &Node| {
        let centre = node.bounds.centre();
        Target::Element {
            x: centre.x,
            y: centre.y,
            bounds: Some(node.bounds),
        }
    };
    match kind {
        "taps" => {
            for node in root
                .descendants()
                .filter(|n| n.clickable && n.enabled && !n.bounds.is_empty())
            {
                out.push(Candidate {
                    path: path.to_vec(),
                    action: Action::Tap { on: element(node) },
                });
            }
        }
        "swipes" => {
            for node in root
                .descendants()
                .filter(|n| n.scrollable && !n.bounds.is_empty())
            {
                let b = node.bounds;
                let x = b.centre().x;
                let height = b.bottom - b.top;
                let point = |y: i32| Target::Element { x, y, bounds: None };
                let (upper, lower) = (point(b.top + height / 4), point(b.top + height * 3 / 4));
                for (from, to) in [(lower.clone(), upper.clone()), (upper, lower)] {
                    out.push(Candidate {
                        path: path.to_vec(),
                        action: Action::Swipe {
                            from,
                            to,
                            duration_millis: Some(300),
                        },
                    });
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
