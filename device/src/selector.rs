//! Selectors over the accessibility tree, as specs write them: `id:`, `text:`,
//! `desc:`, `descPrefix:`. One definition for the spec's `ax.find` (answered
//! on the host) and for resolving action targets.

use crate::model::Node;

/// A parsed selector: `id:`, `text:`, `desc:` or `descPrefix:`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selector<'a> {
    /// An exact resource id, or the `<value>` of an Android `<package>:id/<value>`.
    Id(&'a str),
    /// Exactly this text ([`Node::text`]).
    Text(&'a str),
    /// Exactly this content description ([`Node::desc`]).
    Desc(&'a str),
    /// A content description starting with this.
    DescPrefix(&'a str),
}

impl<'a> Selector<'a> {
    /// Reads `kind:value`; `None` when the kind is not one of the four.
    pub fn parse(text: &'a str) -> Option<Selector<'a>> {
        let (kind, value) = text.split_once(':')?;
        Some(match kind {
            "id" => Selector::Id(value),
            "text" => Selector::Text(value),
            "desc" => Selector::Desc(value),
            "descPrefix" => Selector::DescPrefix(value),
            _ => return None,
        })
    }

    /// Whether `node` (this node only, not its children) is selected.
    pub fn matches(&self, node: &Node) -> bool {
        match self {
            Selector::Id(id) => {
                node.id == *id
                    || node
                        .id
                        .strip_suffix(id)
                        .is_some_and(|head| head.ends_with(":id/") && !id.is_empty())
            }
            Selector::Text(text) => node.text == *text,
            Selector::Desc(desc) => node.desc == *desc,
            Selector::DescPrefix(prefix) => node.desc.starts_with(prefix),
        }
    }

    /// The first matching node, in tree order (parents before children).
    pub fn find<'n>(&self, root: &'n Node) -> Option<&'n Node> {
        root.descendants().find(|node| self.matches(node))
    }
}
