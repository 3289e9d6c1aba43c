//! Writing a run directory.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Map, Value};
use uatu_device::model::{Bounds, Node};

use super::delta::{Patch, baseline, diff};
use super::record::{Meta, StepRecord, Summary};
use super::{TraceError, TraceFormat, sha256_hex};

/// What ran, against what (`Meta`).
pub const META_FILE: &str = "meta.json";
/// One step record per line (a version line first in the compact format).
pub const TRACE_FILE: &str = "trace.jsonl";
/// Each distinct subtree of the hierarchies once, numbered (compact format).
pub const HIERARCHIES_FILE: &str = "hierarchies.jsonl";
/// The verdicts, written when the run ends (`Summary`).
pub const SUMMARY_FILE: &str = "summary.json";
/// The steps' screenshots, one file per distinct image.
pub const SCREENSHOTS_DIR: &str = "screenshots";
pub const PLUGINS_DIR: &str = "plugins";

/// The version a compact `trace.jsonl` states in its first line (a full trace has
/// no such line: its first line is step 0's record). Version 2 stored each
/// distinct hierarchy whole, by sha256; version 3 stores each distinct subtree
/// once, by number. Readers read both.
pub const COMPACT_VERSION: u64 = 3;
/// A compact trace writes a whole record (a keyframe) every this many steps, so
/// a reader can start there instead of at step 0.
pub const KEYFRAME_EVERY: u64 = 100;

/// The first line of a compact `trace.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Header {
    pub uatu_trace: u64,
    pub keyframe_every: u64,
}

/// A compact trace's whole record: `state.hierarchy` is the number of its root node in `hierarchies.jsonl`.
#[derive(Serialize)]
struct KeyframeLine<'a> {
    key: u64,
    record: &'a Map<String, Value>,
}

/// A compact trace's step as the changes since the previous record.
#[derive(Serialize)]
struct DeltaLine<'a> {
    step: u64,
    #[serde(flatten)]
    patch: &'a Patch,
}

/// An open run directory, `<output>/<UTC timestamp>-<seed>/`.
#[derive(Debug)]
pub struct RunDir {
    path: PathBuf,
    trace: File,
    compact: Option<Compactor>,
    screenshots: HashSet<String>,
    /// The last screenshot's bytes and path.
    last_screenshot: Option<(Vec<u8>, String)>,
}

/// What the compact writer remembers between steps.
#[derive(Debug)]
struct Compactor {
    nodes: NodeStore,
    previous: Option<Map<String, Value>>,
    records: u64,
}

/// `hierarchies.jsonl` as it is written: every distinct subtree once, as a line
/// `{"n":<number>,<the node's fields>,"children":[<numbers>]}`, children before
/// their parents, numbered from 0 in the order written. A hierarchy is the
/// number of its root; one that differs from an earlier one by a text writes
/// that node and its ancestors, and a screen seen before writes nothing.
#[derive(Debug)]
struct NodeStore {
    file: File,
    /// A node's line after its number (`{"id":…`, children as numbers) → that number.
    numbers: HashMap<String, u64>,
    /// The lines of the hierarchy being stored, written at once.
    pending: Vec<u8>,
    /// The last hierarchy stored and its number: most steps show the same screen again.
    last: Option<(Node, u64)>,
}

/// A node's line in `hierarchies.jsonl`, but for its number: the fields of a
/// [`Node`] as it serialises, its children by number.
#[derive(Serialize)]
struct StoredNode<'a> {
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
    bounds: &'a Bounds,
    #[serde(skip_serializing_if = "str::is_empty")]
    role: &'a str,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    attrs: &'a BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    children: Vec<u64>,
}

impl NodeStore {
    /// The number of `hierarchy`'s root, its new subtrees appended to the file first.
    fn store(&mut self, hierarchy: &Node, path: &Path) -> Result<u64, TraceError> {
        if let Some((last, number)) = &self.last
            && last == hierarchy
        {
            return Ok(*number);
        }
        let number = self.number(hierarchy);
        let pending = std::mem::take(&mut self.pending);
        let number = number.map_err(|source| TraceError::BadJson {
            path: path.to_path_buf(),
            source,
        })?;
        self.file
            .write_all(&pending)
            .map_err(|e| TraceError::io(path, e))?;
        self.last = Some((hierarchy.clone(), number));
        Ok(number)
    }

    /// The number of the subtree at `node`, giving it (and any new subtree below) one if new.
    fn number(&mut self, node: &Node) -> Result<u64, serde_json::Error> {
        // Destructured whole so that a field added to `Node` cannot be left out here.
        let Node {
            id,
            text,
            desc,
            class_name,
            package,
            clickable,
            enabled,
            checked,
            focused,
            selected,
            scrollable,
            bounds,
            role,
            attrs,
            children,
        } = node;
        let children = children
            .iter()
            .map(|child| self.number(child))
            .collect::<Result<Vec<u64>, _>>()?;
        let line = serde_json::to_string(&StoredNode {
            id,
            text,
            desc,
            class: class_name,
            package,
            clickable: *clickable,
            enabled: *enabled,
            checked: *checked,
            focused: *focused,
            selected: *selected,
            scrollable: *scrollable,
            bounds,
            role,
            attrs,
            children,
        })?;
        if let Some(&number) = self.numbers.get(&line) {
            return Ok(number);
        }
        let number = self.numbers.len() as u64;
        // `line` is `{"id":…}`: the number goes in front of its first field.
        self.pending
            .extend_from_slice(format!("{{\"n\":{number},").as_bytes());
        self.pending.extend_from_slice(&line.as_bytes()[1..]);
        self.pending.push(b'\n');
        self.numbers.insert(line, number);
        Ok(number)
    }
}

impl RunDir {
    /// Creates a fresh run directory under `output` (created if missing) whose
    /// trace is written in `format`.
    pub fn create(
        output: &Path,
        started: time::OffsetDateTime,
        seed: u64,
        format: TraceFormat,
    ) -> Result<RunDir, TraceError> {
        fs::create_dir_all(output).map_err(|e| TraceError::io(output, e))?;
        let stamp = started
            .to_offset(time::UtcOffset::UTC)
            .format(time::macros::format_description!(
                "[year][month][day]T[hour][minute][second]Z"
            ))
            .unwrap_or_else(|_| started.unix_timestamp().to_string());
        // Two runs in the same second with the same seed get distinct directories.
        let mut attempt = 0u32;
        let path = loop {
            let name = match attempt {
                0 => format!("{stamp}-{seed}"),
                n => format!("{stamp}-{seed}-{n}"),
            };
            let candidate = output.join(name);
            match fs::create_dir(&candidate) {
                Ok(()) => break candidate,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => attempt += 1,
                Err(e) => return Err(TraceError::io(&candidate, e)),
            }
        };
        for dir in [SCREENSHOTS_DIR, PLUGINS_DIR] {
            let dir = path.join(dir);
            fs::create_dir(&dir).map_err(|e| TraceError::io(&dir, e))?;
        }
        let create = |name: &str| {
            let file = path.join(name);
            OpenOptions::new()
                .create_new(true)
                .append(true)
                .open(&file)
                .map_err(|e| TraceError::io(&file, e))
        };
        let mut trace = create(TRACE_FILE)?;
        let compact = match format {
            TraceFormat::Full => None,
            TraceFormat::Compact => {
                let header = Header {
                    uatu_trace: COMPACT_VERSION,
                    keyframe_every: KEYFRAME_EVERY,
                };
                let trace_path = path.join(TRACE_FILE);
                write_line(&mut trace, &trace_path, &header)?;
                Some(Compactor {
                    nodes: NodeStore {
                        file: create(HIERARCHIES_FILE)?,
                        numbers: HashMap::new(),
                        pending: Vec::new(),
                        last: None,
                    },
                    previous: None,
                    records: 0,
                })
            }
        };
        Ok(RunDir {
            path,
            trace,
            compact,
            screenshots: HashSet::new(),
            last_screenshot: None,
        })
    }

    /// The run directory itself.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The directory a plugin may write into, created on demand.
    pub fn plugin_dir(&self, plugin: &str) -> Result<PathBuf, TraceError> {
        let dir = self.path.join(PLUGINS_DIR).join(plugin);
        fs::create_dir_all(&dir).map_err(|e| TraceError::io(&dir, e))?;
        Ok(dir)
    }

    /// Writes (or replaces) `meta.json` atomically.
    pub fn write_meta<O: serde::Serialize>(&self, meta: &Meta<O>) -> Result<(), TraceError> {
        write_json_atomically(&self.path.join(META_FILE), meta)
    }

    /// Writes `summary.json` atomically.
    pub fn write_summary(&self, summary: &Summary) -> Result<(), TraceError> {
        write_json_atomically(&self.path.join(SUMMARY_FILE), summary)
    }

    /// Appends one record as one line and hands it to the OS before returning,
    /// so a killed host loses at most the step it was writing. In a compact trace
    /// the hierarchy's new nodes are appended to `hierarchies.jsonl` first, so a
    /// line never refers to a node that is not on disk yet.
    pub fn append_step(&mut self, record: &StepRecord) -> Result<(), TraceError> {
        let trace_path = self.path.join(TRACE_FILE);
        let bad_json = |source| TraceError::BadJson {
            path: trace_path.clone(),
            source,
        };
        let Some(compact) = self.compact.as_mut() else {
            return write_line(&mut self.trace, &trace_path, record);
        };
        let root = compact
            .nodes
            .store(&record.state.hierarchy, &self.path.join(HIERARCHIES_FILE))?;
        let mut current = match serde_json::to_value(record).map_err(bad_json)? {
            Value::Object(map) => map,
            _ => {
                return Err(bad_json(serde::ser::Error::custom(
                    "a step record is not a JSON object",
                )));
            }
        };
        if let Some(Value::Object(state)) = current.get_mut("state") {
            state.insert("hierarchy".into(), root.into());
        }
        match compact.previous.take() {
            Some(previous) if compact.records % KEYFRAME_EVERY != 0 => {
                let patch = diff(&baseline(previous, record.step), &current);
                let line = DeltaLine {
                    step: record.step,
                    patch: &patch,
                };
                write_line(&mut self.trace, &trace_path, &line)?;
            }
            _ => {
                let line = KeyframeLine {
                    key: record.step,
                    record: &current,
                };
                write_line(&mut self.trace, &trace_path, &line)?;
            }
        }
        compact.previous = Some(current);
        compact.records += 1;
        Ok(())
    }

    /// Writes a screenshot once per distinct image, as `screenshots/<sha256>.png`;
    /// returns its path relative to the run directory.
    pub fn write_screenshot(&mut self, png: &[u8]) -> Result<String, TraceError> {
        // Most steps show the screen of the step before: comparing is cheaper than hashing.
        if let Some((last, relative)) = &self.last_screenshot
            && last.as_slice() == png
        {
            return Ok(relative.clone());
        }
        let relative = format!("{SCREENSHOTS_DIR}/{}.png", sha256_hex(png));
        if !self.screenshots.contains(&relative) {
            write_atomically(&self.path.join(&relative), png)?;
            self.screenshots.insert(relative.clone());
        }
        self.last_screenshot = Some((png.to_vec(), relative.clone()));
        Ok(relative)
    }
}

/// Appends `value` as one JSON line with a single write.
fn write_line(file: &mut File, path: &Path, value: &impl Serialize) -> Result<(), TraceError> {
    let mut line = serde_json::to_vec(value).map_err(|source| TraceError::BadJson {
        path: path.to_path_buf(),
        source,
    })?;
    line.push(b'\n');
    file.write_all(&line).map_err(|e| TraceError::io(path, e))?;
    file.flush().map_err(|e| TraceError::io(path, e))
}

/// Serialises `value` as pretty JSON into `path` without ever leaving a
/// half-written file: it is written beside and renamed over.
pub fn write_json_atomically(path: &Path, value: &impl Serialize) -> Result<(), TraceError> {
    let mut bytes = serde_json::to_vec_pretty(value).map_err(|e| TraceError::BadJson {
        path: path.to_path_buf(),
        source: e,
    })?;
    bytes.push(b'\n');
    write_atomically(path, &bytes)
}

fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), TraceError> {
    crate::wasm::write_atomically(path, bytes).map_err(|e| TraceError::io(path, e))
}
