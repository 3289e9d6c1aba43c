//! What a plugin sees of a step: the host's [`State`], [`Candidate`]s and
//! [`StepRecord`] in the contract's types, and the host's screen signature.

use std::hash::Hasher;

use fnv::FnvHasher;

use crate::action::Candidate;
use crate::state::State;
use crate::trace::{Event, StepRecord};
use uatu_device::model::{Node, Screenshot};

use super::bindings::types;

/// The contract's view of one step, built once per call and passed by reference to
/// every plugin of the call.
pub fn step_context(state: &State) -> types::StepContext {
    types::StepContext {
        step: state.step,
        time_ms: state.time,
        screen_signature: screen_signature(&state.hierarchy),
        coverage: state.coverage.clone(),
        snapshots: serde_json::to_string(&state.snapshots).unwrap_or_else(|_| "{}".into()),
        hierarchy: hierarchy(&state.hierarchy),
    }
}

/// The tree in pre-order, each node with its depth and its strings as spans of one
/// string table: one string and one list of flat records cross into the guest.
pub fn hierarchy(root: &Node) -> types::Hierarchy {
    let mut strings = String::with_capacity(4096);
    let mut nodes = Vec::with_capacity(64);
    let mut stack = vec![(root, 0u32)];
    while let Some((node, depth)) = stack.pop() {
        nodes.push(types::Node {
            depth,
            id: span(&mut strings, &node.id),
            desc: span(&mut strings, &node.desc),
            text: span(&mut strings, &node.text),
            class: span(&mut strings, &node.class_name),
            flags: flags(node),
            bounds: types::Bounds {
                left: node.bounds.left,
                top: node.bounds.top,
                right: node.bounds.right,
                bottom: node.bounds.bottom,
            },
        });
        stack.extend(node.children.iter().rev().map(|child| (child, depth + 1)));
    }
    types::Hierarchy { strings, nodes }
}

/// Appends `text` to the table and returns where it is.
fn span(strings: &mut String, text: &str) -> types::Span {
    let offset = strings.len();
    strings.push_str(text);
    // Past 4 GiB (beyond any plugin's memory) a span is empty rather than wrong.
    match (u32::try_from(offset), u32::try_from(text.len())) {
        (Ok(offset), Ok(len)) if offset.checked_add(len).is_some() => types::Span { offset, len },
        _ => types::Span { offset: 0, len: 0 },
    }
}

/// A string of the table, as plugins read it (for tests and tools on the host side).
pub fn span_str(hierarchy: &types::Hierarchy, span: types::Span) -> &str {
    let start = span.offset as usize;
    hierarchy
        .strings
        .get(start..start.saturating_add(span.len as usize))
        .unwrap_or_default()
}

fn flags(node: &Node) -> types::NodeFlags {
    let mut flags = types::NodeFlags::empty();
    for (set, flag) in [
        (node.clickable, types::NodeFlags::CLICKABLE),
        (node.enabled, types::NodeFlags::ENABLED),
        (node.checked, types::NodeFlags::CHECKED),
        (node.focused, types::NodeFlags::FOCUSED),
        (node.selected, types::NodeFlags::SELECTED),
        (node.scrollable, types::NodeFlags::SCROLLABLE),
    ] {
        if set {
            flags |= flag;
        }
    }
    flags
}

/// The candidates in the contract's form: `id` is the index, `weight` the product
/// of the spec's weights along the candidate's path.
pub fn candidates(candidates: &[Candidate]) -> Vec<types::Candidate> {
    candidates
        .iter()
        .enumerate()
        .map(|(index, candidate)| types::Candidate {
            id: u32::try_from(index).unwrap_or(u32::MAX),
            weight: candidate.path.iter().map(|step| step.weight).product(),
            path: candidate.path_label(),
            action: serde_json::to_string(&candidate.action).unwrap_or_else(|_| "null".into()),
        })
        .collect()
}

/// What a sink receives of one step: the typed fields and the trace line.
pub fn step_record(record: &StepRecord, line: String) -> types::StepRecord {
    types::StepRecord {
        step: record.step,
        time_ms: record.time,
        evaluated: record.evaluated,
        action: record
            .action
            .as_ref()
            .and_then(|action| serde_json::to_string(action).ok()),
        violations: record
            .events
            .iter()
            .filter_map(|event| match event {
                Event::Violation { property } => Some(property.clone()),
                _ => None,
            })
            .collect(),
        json: line,
    }
}

/// A screenshot decoded to RGBA, as extractors that ask for it receive it.
pub fn decode_screenshot(screenshot: &Screenshot) -> Result<types::Screenshot, String> {
    let image = image::load_from_memory_with_format(&screenshot.png, image::ImageFormat::Png)
        .map_err(|error| format!("cannot decode the screenshot: {error}"))?
        .into_rgba8();
    Ok(types::Screenshot {
        width: image.width(),
        height: image.height(),
        rgba: image.into_raw(),
    })
}

/// A stable abstraction of the screen: a 64-bit FNV-1a hash, in hex, of the tree's
/// shape, classes, resource ids and content descriptions. Text is left out (it
/// changes with data), and runs of identical siblings count once (a list of 3 or
/// 30 rows is the same screen).
pub fn screen_signature(root: &Node) -> String {
    format!("{:016x}", subtree_hash(root))
}

fn subtree_hash(node: &Node) -> u64 {
    let mut hash = FnvHasher::default();
    hash.write(node.class_name.as_bytes());
    hash.write(b"\x1f");
    hash.write(node.id.as_bytes());
    hash.write(b"\x1f");
    hash.write(node.desc.as_bytes());
    hash.write(b"\x1e");
    let mut previous = None;
    for child in &node.children {
        let child_hash = subtree_hash(child);
        if previous != Some(child_hash) {
            hash.write(&child_hash.to_le_bytes());
        }
        previous = Some(child_hash);
    }
    hash.write(b"\x1d");
    hash.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(id: &str, text: &str, children: Vec<Node>) -> Node {
        Node {
            id: id.into(),
            text: text.into(),
            class_name: "View".into(),
            children,
            ..Node::default()
        }
    }

    #[test]
    fn signature_ignores_text_and_list_length() {
        let short = node(
            "root",
            "",
            vec![node("row", "a", vec![]), node("row", "b", vec![])],
        );
        let long = node(
            "root",
            "",
            vec![
                node("row", "x", vec![]),
                node("row", "y", vec![]),
                node("row", "z", vec![]),
            ],
        );
        assert_eq!(screen_signature(&short), screen_signature(&long));
        let other = node(
            "root",
            "",
            vec![node("row", "a", vec![]), node("button", "", vec![])],
        );
        assert_ne!(screen_signature(&short), screen_signature(&other));
    }

    #[test]
    fn flattening_is_pre_order_with_depths() {
        let tree = node(
            "a",
            "",
            vec![node("b", "", vec![node("c", "", vec![])]), node("d", "", vec![])],
        );
        let flat = hierarchy(&tree);
        let order: Vec<(&str, u32)> = flat
            .nodes
            .iter()
            .map(|n| (span_str(&flat, n.id), n.depth))
            .collect();
        assert_eq!(order, [("a", 0), ("b", 1), ("c", 2), ("d", 1)]);
    }

    #[test]
    fn every_string_is_a_span_of_one_table() {
        let mut tree = node(
            "root",
            "",
            vec![node("row", "Crème brûlée", vec![]), node("", "", vec![])],
        );
        tree.desc = "ledger ✓".into();
        tree.children[0].class_name = "Text".into();
        let flat = hierarchy(&tree);
        let strings =
            |n: &types::Node| [n.id, n.desc, n.text, n.class].map(|span| span_str(&flat, span).to_string());
        assert_eq!(strings(&flat.nodes[0]), ["root", "ledger ✓", "", "View"]);
        assert_eq!(strings(&flat.nodes[1]), ["row", "", "Crème brûlée", "Text"]);
        assert_eq!(strings(&flat.nodes[2]), ["", "", "", "View"]);
        assert_eq!(flat.strings, "rootledger ✓ViewrowCrème brûléeTextView");
    }
}
