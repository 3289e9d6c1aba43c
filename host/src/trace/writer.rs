//! Writing a run directory.

use std::collections::HashSet;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Map, Value};

use super::delta::{Patch, baseline, diff};
use super::record::{Meta, StepRecord, Summary};
use super::{TraceError, TraceFormat, sha256_hex};

/// What ran, against what (`Meta`).
pub const META_FILE: &str = "meta.json";
/// One step record per line (a version line first in the compact format).
pub const TRACE_FILE: &str = "trace.jsonl";
/// Each distinct hierarchy once, by hash (compact format).
pub const HIERARCHIES_FILE: &str = "hierarchies.jsonl";
/// The verdicts, written when the run ends (`Summary`).
pub const SUMMARY_FILE: &str = "summary.json";
/// The steps' screenshots, one file per distinct image.
pub const SCREENSHOTS_DIR: &str = "screenshots";
pub const PLUGINS_DIR: &str = "plugins";

/// The version a compact `trace.jsonl` states in its first line (a full trace has
/// no such line: its first line is step 0's record).
pub const COMPACT_VERSION: u64 = 2;
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

/// A compact trace's whole record: `state.hierarchy` is the sha256 of a line of `hierarchies.jsonl`.
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
}

/// What the compact writer remembers between steps.
#[derive(Debug)]
struct Compactor {
    hierarchies: File,
    hierarchies_written: HashSet<String>,
    previous: Option<Map<String, Value>>,
    records: u64,
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
                    hierarchies: create(HIERARCHIES_FILE)?,
                    hierarchies_written: HashSet::new(),
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
    pub fn write_meta(&self, meta: &Meta) -> Result<(), TraceError> {
        write_json_atomically(&self.path.join(META_FILE), meta)
    }

    /// Writes `summary.json` atomically.
    pub fn write_summary(&self, summary: &Summary) -> Result<(), TraceError> {
        write_json_atomically(&self.path.join(SUMMARY_FILE), summary)
    }

    /// Appends one record as one line and hands it to the OS before returning,
    /// so a killed host loses at most the step it was writing. In a compact trace
    /// a hierarchy not seen before is appended to `hierarchies.jsonl` first, so a
    /// line never refers to a hierarchy that is not on disk yet.
    pub fn append_step(&mut self, record: &StepRecord) -> Result<(), TraceError> {
        let trace_path = self.path.join(TRACE_FILE);
        let bad_json = |source| TraceError::BadJson {
            path: trace_path.clone(),
            source,
        };
        let Some(compact) = self.compact.as_mut() else {
            return write_line(&mut self.trace, &trace_path, record);
        };
        let hierarchy = serde_json::to_string(&record.state.hierarchy).map_err(bad_json)?;
        let hash = sha256_hex(hierarchy.as_bytes());
        if !compact.hierarchies_written.contains(&hash) {
            // The hierarchy is already JSON: spliced in rather than parsed back.
            let line = format!("{{\"sha256\":\"{hash}\",\"hierarchy\":{hierarchy}}}\n");
            let path = self.path.join(HIERARCHIES_FILE);
            compact
                .hierarchies
                .write_all(line.as_bytes())
                .map_err(|e| TraceError::io(&path, e))?;
            compact.hierarchies_written.insert(hash.clone());
        }
        let mut current = match serde_json::to_value(record).map_err(bad_json)? {
            Value::Object(map) => map,
            _ => {
                return Err(bad_json(serde::ser::Error::custom(
                    "a step record is not a JSON object",
                )));
            }
        };
        if let Some(Value::Object(state)) = current.get_mut("state") {
            state.insert("hierarchy".into(), Value::String(hash));
        }
        match compact.previous.as_ref() {
            Some(previous) if compact.records % KEYFRAME_EVERY != 0 => {
                let patch = diff(&baseline(previous.clone(), record.step), &current);
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
        let relative = format!("{SCREENSHOTS_DIR}/{}.png", sha256_hex(png));
        if !self.screenshots.contains(&relative) {
            write_atomically(&self.path.join(&relative), png)?;
            self.screenshots.insert(relative.clone());
        }
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
