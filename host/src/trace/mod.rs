//! The run directory: `meta.json`, `trace.jsonl`, `screenshots/`, `summary.json`.
//!
//! Everything is written so that a run killed at any moment stays readable:
//! `trace.jsonl` is appended and flushed once per step, and the JSON documents
//! are replaced atomically (written beside, then renamed). The format is
//! documented in `docs/trace-format.md`.

mod reader;
mod record;
mod writer;

pub use reader::{TraceReader, read_meta, read_steps, read_summary};
pub use record::*;
pub use writer::{RunDir, write_json_atomically};

/// A failure reading or writing a run directory, naming the file.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The file could not be read, written or renamed (missing, permissions, a full disk).
    #[error("{path}")]
    Io {
        /// The file.
        path: std::path::PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A complete line of `trace.jsonl` is not a step record (a partially written
    /// last line is not an error: readers stop before it).
    #[error("{path}:{line}: not a step record")]
    BadRecord {
        /// The trace file.
        path: std::path::PathBuf,
        /// The line's number, from 1.
        line: u64,
        /// What the JSON parser said.
        #[source]
        source: serde_json::Error,
    },
    /// A JSON document of the run directory (`meta.json`, `summary.json`) does not parse.
    #[error("{path}: not valid JSON")]
    BadJson {
        /// The file.
        path: std::path::PathBuf,
        /// What the JSON parser said.
        #[source]
        source: serde_json::Error,
    },
}

impl TraceError {
    pub(crate) fn io(path: &std::path::Path, source: std::io::Error) -> TraceError {
        TraceError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

#[cfg(test)]
mod tests;
