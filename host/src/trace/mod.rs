//! The run directory: `meta.json`, `trace.jsonl`, `screenshots/`, `summary.json`.
//!
//! Everything is written so that a run killed at any moment stays readable:
//! `trace.jsonl` is appended and flushed once per step, and the JSON documents
//! are replaced atomically (written beside, then renamed). The format is
//! documented in `docs/trace-format.md`.

mod reader;
mod record;
mod writer;

pub use reader::{TraceReader, read_steps};
pub use record::*;
pub use writer::{RunDir, write_json_atomically};

/// A failure reading or writing a run directory, naming the file.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error("{path}")]
    Io {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}:{line}: not a step record")]
    BadRecord {
        path: std::path::PathBuf,
        line: u64,
        #[source]
        source: serde_json::Error,
    },
    #[error("{path}: not valid JSON")]
    BadJson {
        path: std::path::PathBuf,
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
