//! Selectors over the accessibility tree, as specs write them: `id:`, `text:`,
//! `desc:`, `descPrefix:`, and for web pages `testid:` and `css:`. One
//! definition for the spec's `ax.find` (answered on the host) and for
//! resolving action targets.
//!
//! [`Selector`] is a selector as a spec writes it (its JSON: a string, an object
//! of keys, or a path of those); [`Matcher`] is a string selector parsed to match.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::model::Node;

/// A selector as a spec writes it, in an action's target or a query.
/// JSON: `"desc:login_submit"`, `{"testTag": "email", "enabled": true}`, or a path
/// `[outer, inner]` whose parts are either of those.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Selector {
    /// A string selector, e.g. `id:email`.
    Text(String),
    /// An object selector: every key must match (AND).
    Object(BTreeMap<String, SelectorValue>),
    /// A path: each part is looked for inside the element the part before matched.
    Path(Vec<Selector>),
}

/// The value of one key of an object selector.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SelectorValue {
    /// A state key's value (`clickable`, `enabled`, …).
    Flag(bool),
    /// Any other key's value.
    Text(String),
}

impl std::fmt::Display for Selector {
    /// A string selector as written; an object or a path as its JSON.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Selector::Text(text) => f.write_str(text),
            other => match serde_json::to_string(other) {
                Ok(json) => f.write_str(&json),
                Err(_) => f.write_str("(a selector)"),
            },
        }
    }
}

impl From<&str> for Selector {
    fn from(text: &str) -> Selector {
        Selector::Text(text.to_string())
    }
}

/// A parsed string selector: `id:`, `text:`, `desc:`, `descPrefix:`, `testid:` or `css:`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Matcher<'a> {
    /// An exact resource id, or the `<value>` of an Android `<package>:id/<value>`.
    Id(&'a str),
    /// Exactly this text ([`Node::text`]).
    Text(&'a str),
    /// Exactly this content description ([`Node::desc`]).
    Desc(&'a str),
    /// A content description starting with this.
    DescPrefix(&'a str),
    /// A web element's `data-testid`, which the web device reports as the
    /// node's id when the element has no `id` attribute.
    Testid(&'a str),
    /// One web element by tag, classes and id, e.g. `li.todo.completed` or
    /// `#new-todo`: matched against the web device's `class` (`tag.class1.class2`)
    /// and id. No combinators or attributes: the tree holds nothing more.
    Css(CompoundSelector<'a>),
}

/// `tag.class#id`, each part optional, as in CSS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompoundSelector<'a> {
    tag: Option<&'a str>,
    classes: Vec<&'a str>,
    id: Option<&'a str>,
}

impl<'a> CompoundSelector<'a> {
    fn parse(text: &'a str) -> Option<CompoundSelector<'a>> {
        let is_name =
            |s: &str| !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || c == '-' || c == '_');
        let mut selector = CompoundSelector {
            tag: None,
            classes: Vec::new(),
            id: None,
        };
        let head_end = text.find(['.', '#']).unwrap_or(text.len());
        let (head, mut rest) = text.split_at(head_end);
        if !head.is_empty() {
            if !is_name(head) {
                return None;
            }
            selector.tag = Some(head);
        }
        while let Some(sigil) = rest.chars().next() {
            let end = rest[1..].find(['.', '#']).map_or(rest.len(), |i| i + 1);
            let name = &rest[1..end];
            if !is_name(name) {
                return None;
            }
            if sigil == '.' {
                selector.classes.push(name);
            } else if selector.id.replace(name).is_some() {
                return None;
            }
            rest = &rest[end..];
        }
        (selector.tag.is_some() || !selector.classes.is_empty() || selector.id.is_some()).then_some(selector)
    }

    fn matches(&self, node: &Node) -> bool {
        let mut parts = node.class_name.split('.');
        let tag = parts.next().unwrap_or_default();
        let classes: Vec<&str> = parts.collect();
        self.tag.is_none_or(|wanted| wanted.eq_ignore_ascii_case(tag))
            && self.id.is_none_or(|id| node.id == id)
            && self.classes.iter().all(|class| classes.contains(class))
    }
}

impl<'a> Matcher<'a> {
    /// Reads `kind:value`; `None` when the kind is not one of the four.
    pub fn parse(text: &'a str) -> Option<Matcher<'a>> {
        let (kind, value) = text.split_once(':')?;
        Some(match kind {
            "id" => Matcher::Id(value),
            "text" => Matcher::Text(value),
            "desc" => Matcher::Desc(value),
            "descPrefix" => Matcher::DescPrefix(value),
            "testid" => Matcher::Testid(value),
            "css" => Matcher::Css(CompoundSelector::parse(value)?),
            _ => return None,
        })
    }

    /// Whether `node` (this node only, not its children) is selected.
    pub fn matches(&self, node: &Node) -> bool {
        match self {
            Matcher::Id(id) => {
                node.id == *id
                    || node
                        .id
                        .strip_suffix(id)
                        .is_some_and(|head| head.ends_with(":id/") && !id.is_empty())
            }
            Matcher::Text(text) => node.text == *text,
            Matcher::Desc(desc) => node.desc == *desc,
            Matcher::DescPrefix(prefix) => node.desc.starts_with(prefix),
            Matcher::Testid(testid) => node.id == *testid,
            Matcher::Css(compound) => compound.matches(node),
        }
    }

    /// The first matching node, in tree order (parents before children).
    pub fn find<'n>(&self, root: &'n Node) -> Option<&'n Node> {
        root.descendants().find(|node| self.matches(node))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn web_node(id: &str, class: &str) -> Node {
        Node {
            id: id.into(),
            class_name: class.into(),
            ..Node::default()
        }
    }

    #[test]
    fn css_matches_tag_classes_and_id_of_a_web_node() {
        let item = web_node("", "li.todo.completed");
        let input = web_node("new-todo", "input.new-todo");
        let css = |text| Matcher::parse(text).expect(text);
        assert!(css("css:li").matches(&item));
        assert!(css("css:li.completed").matches(&item));
        assert!(css("css:.todo.completed").matches(&item));
        assert!(!css("css:li.editing").matches(&item));
        assert!(!css("css:ul.todo").matches(&item));
        assert!(css("css:#new-todo").matches(&input));
        assert!(css("css:input#new-todo.new-todo").matches(&input));
        assert!(!css("css:#new-todo").matches(&item));
        assert!(css("testid:new-todo").matches(&input));
    }

    #[test]
    fn css_beyond_one_compound_selector_is_refused() {
        for text in [
            "css:",
            "css:ul li",
            "css:li > a",
            "css:[data-x]",
            "css:a:hover",
            "css:#a#b",
            "css:li.",
        ] {
            assert_eq!(Matcher::parse(text), None, "{text}");
        }
    }
}
