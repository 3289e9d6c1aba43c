//! The app's snapshots abstracted into features, so that reaching a new shape of the
//! app's data counts as novelty while ids and amounts that change with every record do not.

use std::collections::BTreeMap;

/// An abstraction of the app's snapshots as a set of features, the way fuzzers bucket hit
/// counts: top-level booleans, short strings and null exactly, numbers by sign and order of
/// magnitude, array lengths bucketed, and for arrays (of records) how many elements have
/// each field in each abstract value, bucketed — so "three records whose count is 2" is a
/// feature, while ids and balances that change with every record are not.
pub fn snapshot_features(snapshots: &str) -> Vec<String> {
    let Ok(serde_json::Value::Object(map)) = serde_json::from_str::<serde_json::Value>(snapshots) else {
        return Vec::new();
    };
    let mut features = Vec::new();
    for (key, value) in &map {
        top_level(key, value, &mut features);
    }
    features
}

fn top_level(path: &str, value: &serde_json::Value, out: &mut Vec<String>) {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            out.push(format!("{path}#keys={}", bucket(map.len() as u64)));
            for (key, value) in map {
                top_level(&format!("{path}.{key}"), value, out);
            }
        }
        Value::Array(items) => {
            out.push(format!("{path}#len={}", bucket(items.len() as u64)));
            let mut histogram: BTreeMap<String, u64> = BTreeMap::new();
            for item in items {
                element(path, item, &mut histogram);
            }
            out.extend(
                histogram
                    .into_iter()
                    .map(|(value, count)| format!("{value}x{}", bucket(count))),
            );
        }
        Value::String(text) if text.chars().count() <= 24 => out.push(format!("{path}={text:?}")),
        other => out.push(format!("{path}={}", scalar(other))),
    }
}

/// One array element's abstract fields, counted (an element's fields at most one level deep).
fn element(path: &str, item: &serde_json::Value, histogram: &mut BTreeMap<String, u64>) {
    match item {
        serde_json::Value::Object(fields) => {
            for (key, value) in fields {
                *histogram
                    .entry(format!("{path}[].{key}={}", scalar(value)))
                    .or_default() += 1;
            }
        }
        other => {
            *histogram
                .entry(format!("{path}[]={}", scalar(other)))
                .or_default() += 1
        }
    }
}

/// A value's abstraction inside a record: its kind and a coarse magnitude.
fn scalar(value: &serde_json::Value) -> String {
    use serde_json::Value;
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => {
            let n = n.as_f64().unwrap_or(0.0);
            let magnitude = n.abs();
            let sign = if n < 0.0 { "-" } else { "" };
            if magnitude < 4.0 {
                format!("{sign}{}", magnitude.floor() as u64)
            } else if n.fract() != 0.0 {
                format!("{sign}frac~{}", magnitude.log2().floor() as i64)
            } else {
                format!("{sign}~{}", (magnitude.log2() / 2.0).floor() as i64 * 2)
            }
        }
        Value::String(text) => format!("str~{}", bucket(text.chars().count() as u64)),
        Value::Array(items) => format!("list~{}", bucket(items.len() as u64)),
        Value::Object(map) => format!("obj~{}", bucket(map.len() as u64)),
    }
}

/// Hit-count buckets: 0, 1, 2, 3, 4-7, 8-15, 16-31, 32-127, 128+.
fn bucket(n: u64) -> &'static str {
    match n {
        0 => "0",
        1 => "1",
        2 => "2",
        3 => "3",
        4..=7 => "4-7",
        8..=15 => "8-15",
        16..=31 => "16-31",
        32..=127 => "32-127",
        _ => "128+",
    }
}
