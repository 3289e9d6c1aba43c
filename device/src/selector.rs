//! Selectors over the accessibility tree, as specs write them, and the one matcher
//! behind the spec's `ax.find` / `findAll`, `Element.find` / `findAll` (answered on
//! the host) and action targets.
//!
//! A spec writes a [`Selector`]: a string (`"id:email"`, `"desc:row_1"`, or a path
//! `"id:list > text:Milk"`), an object of keys that must all match
//! (`{"testTag": "email", "enabled": true}`), or a path `[outer, inner]` of those.
//! [`Selector::compile`] checks it and makes it a [`Query`], which finds nodes.
//! The keys and string kinds are documented in `docs/spec-reference.md`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::model::Node;

/// A selector as a spec writes it, in an action's target or a query.
/// JSON: `"desc:login_submit"`, `{"testTag": "email", "enabled": true}`, or a path
/// `[outer, inner]` whose parts are either of those.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Selector {
    /// A string selector, e.g. `id:email`, or a path of them joined by ` > `.
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
    /// A state key's value (`clickable`, `enabled`, …), or an attribute's `"true"`/`"false"`.
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

/// Why a selector cannot be used; the message says what to write instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectorError {
    /// A string that is not `kind:value` with a known kind; the string.
    #[error("`{0}` is not a selector: use {kinds}, an object of keys or a path", kinds = STRING_KINDS.join(":, ") + ":")]
    NotASelector(String),
    /// A key of an object selector given a value of the wrong type.
    #[error("selector key `{key}` takes {wanted}, not {got}")]
    Mistyped {
        /// The key, e.g. `enabled`.
        key: String,
        /// What it takes, e.g. `true or false`.
        wanted: &'static str,
        /// The value given, as JSON.
        got: String,
    },
    /// An object with no keys, or a path with no parts.
    #[error("an empty {0} selects every element: give it at least one key")]
    Empty(&'static str),
    /// A path inside a path.
    #[error("a path's parts are string or object selectors, not paths")]
    NestedPath,
}

/// The kinds of a string selector (`kind:value`).
pub const STRING_KINDS: [&str; 10] = [
    "id",
    "idPrefix",
    "text",
    "textPrefix",
    "desc",
    "descPrefix",
    "testid",
    "testTag",
    "role",
    "css",
];

/// The state keys of an object selector, which take `true` or `false`.
pub const STATE_KEYS: [&str; 6] = [
    "clickable",
    "enabled",
    "checked",
    "focused",
    "selected",
    "scrollable",
];

/// The keys of an object selector that read a field of the element, which take a
/// string. Any other key (not a state key) names an attribute ([`Node::attrs`]).
pub const FIELD_KEYS: [&str; 9] = [
    "id",
    "idPrefix",
    "text",
    "textPrefix",
    "desc",
    "descPrefix",
    "testTag",
    "role",
    "class",
];

/// One test of one node: a string selector's kind, or an object selector's key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Matcher<'a> {
    /// An exact resource id, or the `<value>` of an Android `<package>:id/<value>`.
    Id(&'a str),
    /// A resource id starting with this, whole or after an Android `:id/`.
    IdPrefix(&'a str),
    /// Exactly this text ([`Node::text`]).
    Text(&'a str),
    /// A text starting with this.
    TextPrefix(&'a str),
    /// Exactly this content description ([`Node::desc`]).
    Desc(&'a str),
    /// A content description starting with this.
    DescPrefix(&'a str),
    /// A test tag: a web element's `data-testid` (also reported as the node's id
    /// when it has no `id`), an Android resource id or Compose test tag (as
    /// [`Matcher::Id`] matches it).
    TestTag(&'a str),
    /// Exactly this accessibility role ([`Node::role`]; web: the ARIA role).
    Role(&'a str),
    /// Exactly this class ([`Node::class_name`], as `Element.class` shows it).
    Class(&'a str),
    /// One web element by tag, classes and id, e.g. `li.todo.completed` or
    /// `#new-todo`: matched against the web device's `class` (`tag.class1.class2`)
    /// and id. No combinators or attributes: use a path and object keys.
    Css(CompoundSelector<'a>),
    /// A boolean state has this value.
    State(StateKey, bool),
    /// The attribute of this name ([`Node::attrs`]) has exactly this value.
    Attr(&'a str, &'a str),
}

/// A boolean state of a node, as an object selector's key names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StateKey {
    /// [`Node::clickable`].
    Clickable,
    /// [`Node::enabled`].
    Enabled,
    /// [`Node::checked`].
    Checked,
    /// [`Node::focused`].
    Focused,
    /// [`Node::selected`].
    Selected,
    /// [`Node::scrollable`].
    Scrollable,
}

impl StateKey {
    fn named(key: &str) -> Option<StateKey> {
        Some(match key {
            "clickable" => StateKey::Clickable,
            "enabled" => StateKey::Enabled,
            "checked" => StateKey::Checked,
            "focused" => StateKey::Focused,
            "selected" => StateKey::Selected,
            "scrollable" => StateKey::Scrollable,
            _ => return None,
        })
    }

    fn of(self, node: &Node) -> bool {
        match self {
            StateKey::Clickable => node.clickable,
            StateKey::Enabled => node.enabled,
            StateKey::Checked => node.checked,
            StateKey::Focused => node.focused,
            StateKey::Selected => node.selected,
            StateKey::Scrollable => node.scrollable,
        }
    }
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

/// The part of an Android resource id after `:id/`, if it has one.
fn local_id(id: &str) -> Option<&str> {
    id.split_once(":id/").map(|(_, local)| local)
}

impl<'a> Matcher<'a> {
    /// Reads one `kind:value`; `None` when the kind is not one of [`STRING_KINDS`]
    /// (or `css:` holds more than one compound selector).
    pub fn parse(text: &'a str) -> Option<Matcher<'a>> {
        let (kind, value) = text.split_once(':')?;
        Some(match kind {
            "id" => Matcher::Id(value),
            "idPrefix" => Matcher::IdPrefix(value),
            "text" => Matcher::Text(value),
            "textPrefix" => Matcher::TextPrefix(value),
            "desc" => Matcher::Desc(value),
            "descPrefix" => Matcher::DescPrefix(value),
            "testid" | "testTag" => Matcher::TestTag(value),
            "role" => Matcher::Role(value),
            "css" => Matcher::Css(CompoundSelector::parse(value)?),
            _ => return None,
        })
    }

    /// The test an object selector's `key: value` stands for.
    fn of_key(key: &'a str, value: &'a SelectorValue) -> Result<Matcher<'a>, SelectorError> {
        let mistyped = |wanted: &'static str| SelectorError::Mistyped {
            key: key.to_string(),
            wanted,
            got: serde_json::to_string(value).unwrap_or_default(),
        };
        if let Some(state) = StateKey::named(key) {
            return match value {
                SelectorValue::Flag(flag) => Ok(Matcher::State(state, *flag)),
                SelectorValue::Text(_) => Err(mistyped("true or false")),
            };
        }
        let text = match value {
            SelectorValue::Text(text) => text.as_str(),
            SelectorValue::Flag(_) if FIELD_KEYS.contains(&key) => return Err(mistyped("a string")),
            SelectorValue::Flag(flag) => return Ok(Matcher::Attr(key, if *flag { "true" } else { "false" })),
        };
        Ok(match key {
            "id" => Matcher::Id(text),
            "idPrefix" => Matcher::IdPrefix(text),
            "text" => Matcher::Text(text),
            "textPrefix" => Matcher::TextPrefix(text),
            "desc" => Matcher::Desc(text),
            "descPrefix" => Matcher::DescPrefix(text),
            "testTag" => Matcher::TestTag(text),
            "role" => Matcher::Role(text),
            "class" => Matcher::Class(text),
            attribute => Matcher::Attr(attribute, text),
        })
    }

    /// Whether `node` (this node only, not its children) is selected.
    pub fn matches(&self, node: &Node) -> bool {
        match self {
            Matcher::Id(id) => node.id == *id || (!id.is_empty() && local_id(&node.id) == Some(id)),
            Matcher::IdPrefix(prefix) => {
                node.id.starts_with(prefix)
                    || local_id(&node.id).is_some_and(|local| local.starts_with(prefix))
            }
            Matcher::Text(text) => node.text == *text,
            Matcher::TextPrefix(prefix) => node.text.starts_with(prefix),
            Matcher::Desc(desc) => node.desc == *desc,
            Matcher::DescPrefix(prefix) => node.desc.starts_with(prefix),
            Matcher::TestTag(tag) => {
                node.attrs.get("data-testid").is_some_and(|value| value == tag)
                    || Matcher::Id(tag).matches(node)
            }
            Matcher::Role(role) => node.role == *role,
            Matcher::Class(class) => node.class_name == *class,
            Matcher::Css(compound) => compound.matches(node),
            Matcher::State(state, value) => state.of(node) == *value,
            Matcher::Attr(name, value) => node.attrs.get(*name).is_some_and(|have| have == value),
        }
    }

    /// The first matching node, in tree order (parents before children).
    pub fn find<'n>(&self, root: &'n Node) -> Option<&'n Node> {
        root.descendants().find(|node| self.matches(node))
    }
}

/// A checked selector, ready to match: a path of parts, each a list of tests that
/// must all pass. A node is found when it passes the last part and its ancestors,
/// outermost first, pass the parts before it in order (not necessarily adjacent).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query<'a> {
    parts: Vec<Vec<Matcher<'a>>>,
}

impl Selector {
    /// Checks the selector and makes it a [`Query`]. A string with ` > ` is a path
    /// when each side is a selector (`"id:list > text:Milk"`); otherwise the whole
    /// string is one (`"text:a > b"` is the text `a > b`).
    pub fn compile(&self) -> Result<Query<'_>, SelectorError> {
        let mut parts = Vec::new();
        match self {
            Selector::Path(path) => {
                if path.is_empty() {
                    return Err(SelectorError::Empty("path"));
                }
                for part in path {
                    match part {
                        Selector::Path(_) => return Err(SelectorError::NestedPath),
                        part => part.push_parts(&mut parts)?,
                    }
                }
            }
            single => single.push_parts(&mut parts)?,
        }
        Ok(Query { parts })
    }

    fn push_parts<'s>(&'s self, parts: &mut Vec<Vec<Matcher<'s>>>) -> Result<(), SelectorError> {
        match self {
            Selector::Text(text) => {
                let chain: Option<Vec<Matcher<'s>>> = text
                    .split(" > ")
                    .map(|part| Matcher::parse(part.trim()))
                    .collect();
                match chain {
                    Some(chain) if chain.len() > 1 => parts.extend(chain.into_iter().map(|m| vec![m])),
                    _ => parts.push(vec![
                        Matcher::parse(text).ok_or_else(|| SelectorError::NotASelector(text.clone()))?,
                    ]),
                }
            }
            Selector::Object(keys) => {
                if keys.is_empty() {
                    return Err(SelectorError::Empty("object selector"));
                }
                let tests = keys
                    .iter()
                    .map(|(key, value)| Matcher::of_key(key, value))
                    .collect::<Result<Vec<_>, _>>()?;
                parts.push(tests);
            }
            Selector::Path(_) => return Err(SelectorError::NestedPath),
        }
        Ok(())
    }
}

impl<'a> Query<'a> {
    fn passes(&self, part: usize, node: &Node) -> bool {
        self.parts[part].iter().all(|test| test.matches(node))
    }

    /// Every node found under `roots` (each root included), in tree order.
    fn search<'n>(&self, roots: &'n [Node], first_only: bool) -> Vec<&'n Node> {
        let last = self.parts.len() - 1;
        let mut found = Vec::new();
        // Each node with how many parts its ancestors passed (at most `last`).
        let mut stack: Vec<(&Node, usize)> = roots.iter().rev().map(|root| (root, 0)).collect();
        while let Some((node, passed)) = stack.pop() {
            let here = self.passes(passed, node);
            if here && passed == last {
                found.push(node);
                if first_only {
                    break;
                }
            }
            let below = if here && passed < last { passed + 1 } else { passed };
            stack.extend(node.children.iter().rev().map(|child| (child, below)));
        }
        found
    }

    /// Every node of the tree rooted at `root` (itself included) the selector finds,
    /// parents before children.
    pub fn find_all<'n>(&self, root: &'n Node) -> Vec<&'n Node> {
        self.search(std::slice::from_ref(root), false)
    }

    /// The first node [`Query::find_all`] would give.
    pub fn find<'n>(&self, root: &'n Node) -> Option<&'n Node> {
        self.search(std::slice::from_ref(root), true).into_iter().next()
    }

    /// Every node strictly inside `scope` the selector finds (an element's own
    /// `find`/`findAll`).
    pub fn find_all_inside<'n>(&self, scope: &'n Node) -> Vec<&'n Node> {
        self.search(&scope.children, false)
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

    fn selector(json: serde_json::Value) -> Selector {
        serde_json::from_value(json).expect("a selector's JSON")
    }

    #[test]
    fn mistyped_and_empty_selectors_are_refused_saying_what_to_write() {
        let error = |json: serde_json::Value| selector(json).compile().expect_err("refused").to_string();
        assert_eq!(
            error(serde_json::json!({"enabled": "yes"})),
            "selector key `enabled` takes true or false, not \"yes\""
        );
        assert_eq!(
            error(serde_json::json!({"text": true})),
            "selector key `text` takes a string, not true"
        );
        assert!(error(serde_json::json!({})).starts_with("an empty object selector"));
        assert!(error(serde_json::json!([])).starts_with("an empty path"));
        assert!(error(serde_json::json!([["id:a"]])).contains("not paths"));
        assert!(
            error(serde_json::json!("name:x")).starts_with("`name:x` is not a selector: use id:, idPrefix:")
        );
        assert!(serde_json::from_value::<Selector>(serde_json::json!({"id": 3})).is_err());
    }

    #[test]
    fn a_string_path_splits_on_arrows_only_between_selectors() {
        let parts = |text: &str| Selector::from(text).compile().expect(text).parts.len();
        assert_eq!(parts("id:list > text:Milk"), 2);
        assert_eq!(parts("id:a > desc:b > role:button"), 3);
        assert_eq!(parts("text:a > b"), 1);
    }
}
