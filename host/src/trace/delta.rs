//! Delta lines of a compact trace: what changed in a record since the previous
//! step, as paths into the record's JSON (RFC 6901 pointers) set, removed, or
//! copied from elsewhere in the record.
//!
//! A patch is taken against the previous record as the next one is expected to
//! start ([`baseline`]: the new step number, and `state.lastAction` the
//! previous step's `action`). It recurses into objects present on both sides
//! when that is shorter than writing the object whole, so a step that changes
//! one snapshot writes that snapshot alone; any other value (arrays included)
//! is replaced whole when it differs. A large value equal to one the record
//! holds elsewhere (an extractor that returns `lastAction`) is written as a
//! copy of it. Applying `diff(a, b)` to `a` gives `b` exactly: JSON `null` is
//! a value like any other, removal is said separately.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Values at least this long (as JSON) are worth writing as a copy of an equal value.
const COPY_AT_LEAST: usize = 40;
/// How deep into a record equal values are looked for (`/state/snapshots/x` is 3).
const COPY_DEPTH: usize = 3;

/// The changes from one record's JSON to the next.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Patch {
    /// Pointer → the value now there (added or changed).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub set: Map<String, Value>,
    /// Pointers to the keys that are gone.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub del: Vec<String>,
    /// Pointer → the pointer whose value (once `set` and `del` are applied) it equals.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub copy: BTreeMap<String, String>,
}

/// A patch that does not fit the record it is applied to (a damaged trace).
#[derive(Debug, thiserror::Error)]
#[error("the delta refers to `{pointer}`, which the previous record does not have")]
pub struct PatchError {
    /// The pointer that did not resolve.
    pub pointer: String,
}

/// The previous record as step `step`'s is expected to start: what a delta is taken against.
pub fn baseline(mut previous: Map<String, Value>, step: u64) -> Map<String, Value> {
    previous.insert("step".into(), step.into());
    let action = previous.get("action").cloned().unwrap_or(Value::Null);
    if let Some(Value::Object(state)) = previous.get_mut("state") {
        state.insert("step".into(), step.into());
        state.insert("lastAction".into(), action);
    }
    previous
}

/// What turns `before` into `after` (both objects; see the module's documentation).
pub fn diff(before: &Map<String, Value>, after: &Map<String, Value>) -> Patch {
    let mut patch = Patch::default();
    diff_into("", before, after, &mut patch);
    copy_repeated_values(after, &mut patch);
    patch
}

fn diff_into(prefix: &str, before: &Map<String, Value>, after: &Map<String, Value>, patch: &mut Patch) {
    for key in before.keys().filter(|key| !after.contains_key(*key)) {
        patch.del.push(pointer(prefix, key));
    }
    for (key, new) in after {
        let path = pointer(prefix, key);
        match (before.get(key), new) {
            (Some(old), new) if old == new => {}
            (Some(Value::Object(old)), Value::Object(fields)) => {
                let mut inner = Patch::default();
                diff_into(&path, old, fields, &mut inner);
                if inner.encoded_len() < path.len() + json_len(new) + 4 {
                    patch.set.extend(inner.set);
                    patch.del.extend(inner.del);
                } else {
                    patch.set.insert(path, new.clone());
                }
            }
            _ => {
                patch.set.insert(path, new.clone());
            }
        }
    }
}

/// Turns each large value of `patch.set` that `after` holds at another pointer
/// (one the patch leaves alone, or the first of several equal `set` values)
/// into a copy of it. Values are compared as values, not as JSON text: equal
/// values serialise the same, and most comparisons end at the first difference.
fn copy_repeated_values(after: &Map<String, Value>, patch: &mut Patch) {
    let large: Vec<(&String, &Value)> = patch
        .set
        .iter()
        .filter(|(_, value)| json_len(value) >= COPY_AT_LEAST)
        .collect();
    if large.is_empty() {
        return;
    }
    let touched: Vec<&String> = patch.set.keys().chain(&patch.del).collect();
    let untouched = |path: &str| !touched.iter().any(|t| is_within(path, t) || is_within(t, path));
    // The first pointer found holding each large value, by the value's position in `large`.
    let mut sources: Vec<Option<String>> = vec![None; large.len()];
    walk(after, "", COPY_DEPTH, &mut |path, value| {
        if untouched(path) {
            for (source, (_, wanted)) in sources.iter_mut().zip(&large) {
                if source.is_none() && *wanted == value {
                    *source = Some(path.to_string());
                }
            }
        }
    });
    let mut copies = Vec::new();
    for i in 0..large.len() {
        let (path, value) = large[i];
        match &sources[i] {
            Some(source) if source != path => copies.push((path.clone(), source.clone())),
            Some(_) => {}
            // The first of several equal values stays written out; the others copy it.
            None => {
                for j in i + 1..large.len() {
                    if sources[j].is_none() && large[j].1 == value {
                        sources[j] = Some(path.clone());
                    }
                }
            }
        }
    }
    for (path, source) in copies {
        patch.set.remove(&path);
        patch.copy.insert(path, source);
    }
}

/// Visits the values of `record` down to `depth` levels, parents first.
fn walk(record: &Map<String, Value>, prefix: &str, depth: usize, visit: &mut impl FnMut(&str, &Value)) {
    if depth == 0 {
        return;
    }
    for (key, value) in record {
        let path = pointer(prefix, key);
        visit(&path, value);
        if let Value::Object(fields) = value {
            walk(fields, &path, depth - 1, visit);
        }
    }
}

/// Whether `path` is `ancestor` or lies inside it.
fn is_within(path: &str, ancestor: &str) -> bool {
    path.strip_prefix(ancestor)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

impl Patch {
    /// About how many bytes the patch takes in a line.
    fn encoded_len(&self) -> usize {
        let set: usize = self
            .set
            .iter()
            .map(|(path, value)| path.len() + json_len(value) + 4)
            .sum();
        let del: usize = self.del.iter().map(|path| path.len() + 3).sum();
        set + del
    }
}

/// About how long `value` is as JSON (escapes in strings not counted), without
/// writing it out: only choices between two ways of writing a change depend on it.
fn json_len(value: &Value) -> usize {
    match value {
        Value::Null | Value::Bool(true) => 4,
        Value::Bool(false) => 5,
        Value::Number(number) => match (number.as_u64(), number.as_i64()) {
            (Some(n), _) => digits(n),
            (None, Some(n)) => digits(n.unsigned_abs()) + 1,
            // A float: as long as Rust's shortest round-trip form, roughly.
            (None, None) => 18,
        },
        Value::String(text) => text.len() + 2,
        Value::Array(items) => 1 + items.iter().map(|item| json_len(item) + 1).sum::<usize>().max(1),
        Value::Object(fields) => {
            1 + fields
                .iter()
                .map(|(key, value)| key.len() + 4 + json_len(value))
                .sum::<usize>()
                .max(1)
        }
    }
}

fn digits(mut n: u64) -> usize {
    let mut count = 1;
    while n >= 10 {
        n /= 10;
        count += 1;
    }
    count
}

/// Applies `patch` to `record` in place; returns the pointers it changed (those it
/// removed, set or copied to).
pub fn apply(record: &mut Map<String, Value>, patch: Patch) -> Result<Vec<String>, PatchError> {
    let mut changed = Vec::with_capacity(patch.del.len() + patch.set.len() + patch.copy.len());
    for pointer in patch.del {
        let (parent, key) = parent_of(record, &pointer)?;
        parent.remove(&key);
        changed.push(pointer);
    }
    for (pointer, value) in patch.set {
        let (parent, key) = parent_of(record, &pointer)?;
        parent.insert(key, value);
        changed.push(pointer);
    }
    let mut copies = Vec::with_capacity(patch.copy.len());
    for (target, source) in &patch.copy {
        let (parent, key) = parent_of(record, source)?;
        let value = parent.get(&key).cloned().ok_or_else(|| PatchError {
            pointer: source.clone(),
        })?;
        copies.push((target, value));
    }
    for (target, value) in copies {
        let (parent, key) = parent_of(record, target)?;
        parent.insert(key, value);
    }
    changed.extend(patch.copy.into_keys());
    Ok(changed)
}

/// The object holding the pointer's last key, and that key (unescaped).
fn parent_of<'a>(
    record: &'a mut Map<String, Value>,
    pointer: &str,
) -> Result<(&'a mut Map<String, Value>, String), PatchError> {
    let unresolved = || PatchError {
        pointer: pointer.to_string(),
    };
    let mut keys = pointer_keys(pointer).ok_or_else(unresolved)?;
    let mut last = keys.next().ok_or_else(unresolved)?;
    let mut parent = record;
    for key in keys {
        parent = match parent.get_mut(last.as_ref()) {
            Some(Value::Object(child)) => child,
            _ => return Err(unresolved()),
        };
        last = key;
    }
    Ok((parent, last.into_owned()))
}

/// The keys `pointer` leads through, unescaped; `None` when it is not a pointer.
pub fn pointer_keys(pointer: &str) -> Option<impl Iterator<Item = Cow<'_, str>>> {
    let keys = pointer.strip_prefix('/')?.split('/');
    Some(keys.map(|key| match key.contains('~') {
        true => Cow::Owned(key.replace("~1", "/").replace("~0", "~")),
        false => Cow::Borrowed(key),
    }))
}

fn pointer(prefix: &str, key: &str) -> String {
    format!("{prefix}/{}", key.replace('~', "~0").replace('/', "~1"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => panic!("an object"),
        }
    }

    #[test]
    fn applying_a_diff_rebuilds_the_later_record_exactly() {
        let cases = [
            (json!({}), json!({"a": 1})),
            (
                json!({"a": 1, "b": {"c": [1, 2], "d": null}}),
                json!({"a": 1, "b": {"c": [1, 3], "e": null}}),
            ),
            (json!({"x": {"y": {"z": 1}}}), json!({"x": {"y": 2}})),
            (json!({"x": 2}), json!({"x": {"y": {}}})),
            (json!({"x": {"y": 1}}), json!({"x": {}})),
            (
                json!({"a/b": {"~c": 1}, "": 0}),
                json!({"a/b": {"~c": 2}, "": null}),
            ),
            (json!({"n": null}), json!({})),
            // Equal large values: copies of one written out or left alone.
            (
                json!({"a": {"long": "x".repeat(50)}, "b": null, "c": null}),
                json!({"a": {"long": "x".repeat(50)}, "b": {"long": "x".repeat(50)}, "c": {"long": "x".repeat(50)}}),
            ),
            (
                json!({"a": null, "b": null, "z": [1]}),
                json!({"a": ["y".repeat(50)], "b": ["y".repeat(50)], "z": ["y".repeat(50)]}),
            ),
            (
                json!({"a": {"in": {"deep": "v".repeat(60)}}, "b": 1}),
                json!({"a": {"in": {"deep": "v".repeat(60)}, "more": 1}, "b": {"deep": "v".repeat(60)}}),
            ),
        ];
        for (before, after) in cases {
            let (before, after) = (object(before), object(after));
            let patch = diff(&before, &after);
            let line = serde_json::to_string(&patch).expect("serialises");
            let patch: Patch = serde_json::from_str(&line).expect("parses");
            let mut rebuilt = before.clone();
            apply(&mut rebuilt, patch).expect("applies");
            assert_eq!(rebuilt, after, "{line}");
        }
    }

    #[test]
    fn an_unchanged_record_needs_no_patch_and_a_changed_leaf_is_written_alone() {
        let record = object(json!({"state": {"snapshots": {"route": "home", "rows": [1, 2]}}, "step": 1}));
        assert_eq!(diff(&record, &record), Patch::default());
        let mut next = record.clone();
        next["state"]["snapshots"]["route"] = json!("ledger");
        let patch = diff(&record, &next);
        assert_eq!(
            serde_json::to_string(&patch).expect("json"),
            r#"{"set":{"/state/snapshots/route":"ledger"}}"#
        );
        let mut rebuilt = record.clone();
        let changed = apply(&mut rebuilt, patch).expect("applies");
        assert_eq!(changed, ["/state/snapshots/route"]);
        assert_eq!(rebuilt, next);
    }

    #[test]
    fn the_next_record_is_expected_to_repeat_the_previous_action_as_its_last_action() {
        let action = json!({"action": {"type": "tap", "on": "desc:submit"}, "point": {"x": 1, "y": 2}});
        let previous = object(json!({"step": 4, "action": action, "state": {"step": 4, "lastAction": null}}));
        let next = object(json!({"step": 5, "action": null, "state": {"step": 5, "lastAction": action}}));
        let patch = diff(&baseline(previous.clone(), 5), &next);
        assert_eq!(
            serde_json::to_string(&patch).expect("json"),
            r#"{"set":{"/action":null}}"#
        );
        let mut rebuilt = baseline(previous, 5);
        apply(&mut rebuilt, patch).expect("applies");
        assert_eq!(rebuilt, next);
    }

    #[test]
    fn a_patch_that_does_not_fit_is_an_error() {
        let mut record = object(json!({"a": 1}));
        let patch = Patch {
            set: object(json!({"/missing/child": 1})),
            ..Patch::default()
        };
        assert!(apply(&mut record, patch).is_err());
        let patch = Patch {
            del: vec!["no-slash".into()],
            ..Patch::default()
        };
        assert!(apply(&mut record, patch).is_err());
        let patch = Patch {
            copy: [("/b".to_string(), "/nowhere".to_string())].into(),
            ..Patch::default()
        };
        assert!(apply(&mut record, patch).is_err());
    }
}
