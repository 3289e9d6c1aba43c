//! Writing a run directory.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::TraceError;
use super::record::{Meta, StepRecord, Summary};

/// What ran, against what (`Meta`).
pub const META_FILE: &str = "meta.json";
/// One step record per line.
pub const TRACE_FILE: &str = "trace.jsonl";
/// The verdicts, written when the run ends (`Summary`).
pub const SUMMARY_FILE: &str = "summary.json";
/// The steps' screenshots.
pub const SCREENSHOTS_DIR: &str = "screenshots";
pub const PLUGINS_DIR: &str = "plugins";

/// An open run directory, `<output>/<UTC timestamp>-<seed>/`.
#[derive(Debug)]
pub struct RunDir {
    path: PathBuf,
    trace: File,
}

impl RunDir {
    /// Creates a fresh run directory under `output` (created if missing).
    pub fn create(output: &Path, started: time::OffsetDateTime, seed: u64) -> Result<RunDir, TraceError> {
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
        let trace_path = path.join(TRACE_FILE);
        let trace = OpenOptions::new()
            .create_new(true)
            .append(true)
            .open(&trace_path)
            .map_err(|e| TraceError::io(&trace_path, e))?;
        Ok(RunDir { path, trace })
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
    /// so a killed host loses at most the step it was writing. Returns the line
    /// (without its newline), which sinks receive as it is.
    pub fn append_step(&mut self, record: &StepRecord) -> Result<String, TraceError> {
        let trace_path = self.path.join(TRACE_FILE);
        let mut line = serde_json::to_string(record).map_err(|e| TraceError::BadJson {
            path: trace_path.clone(),
            source: e,
        })?;
        line.push('\n');
        self.trace
            .write_all(line.as_bytes())
            .map_err(|e| TraceError::io(&trace_path, e))?;
        self.trace.flush().map_err(|e| TraceError::io(&trace_path, e))?;
        line.pop();
        Ok(line)
    }

    /// Writes `screenshots/step-NNNNN.png`; returns its path relative to the run directory.
    pub fn write_screenshot(&self, step: u64, png: &[u8]) -> Result<String, TraceError> {
        let relative = format!("{SCREENSHOTS_DIR}/step-{step:05}.png");
        write_atomically(&self.path.join(&relative), png)?;
        Ok(relative)
    }
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
