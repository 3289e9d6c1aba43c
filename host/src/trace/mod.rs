//! The run directory: `meta.json`, `trace.jsonl`, `hierarchies.jsonl`,
//! `screenshots/`, `summary.json`.
//!
//! Everything is written so that a run killed at any moment stays readable:
//! `trace.jsonl` is appended and flushed once per step (after any hierarchy or
//! screenshot it refers to), and the JSON documents are replaced atomically
//! (written beside, then renamed). The format is documented in
//! `docs/trace-format.md`; readers get whole [`StepRecord`]s whichever format
//! a run was written in.

mod delta;
mod reader;
mod record;
mod writer;

pub use reader::{
    StateReader, StepRange, TraceIndex, TraceReader, count_steps, read_meta, read_page, read_step_range,
    read_steps, read_summary,
};
pub use record::*;
pub use writer::{
    COMPACT_VERSION, HIERARCHIES_FILE, KEYFRAME_EVERY, META_FILE, RunDir, SCREENSHOTS_DIR, SUMMARY_FILE,
    TRACE_FILE, write_json_atomically,
};

/// How `trace.jsonl` is written (`trace-format` in uatu.toml, `--trace-format`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum TraceFormat {
    /// Each distinct subtree of the hierarchies once in `hierarchies.jsonl`, and per
    /// step only what changed since the previous step, with a whole record every 100 steps.
    #[default]
    Compact,
    /// Every step's whole record, hierarchy included, on its line (larger; each line
    /// stands alone, e.g. for `jq`).
    Full,
}

/// sha256 of `bytes`, in hex: the name of a stored hierarchy or screenshot.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    hex::encode(sha2::Sha256::digest(bytes))
}

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
    /// A compact trace's line does not fit the records before it (a damaged trace).
    #[error("{path}:{line}: {problem}")]
    Broken {
        /// The trace file.
        path: std::path::PathBuf,
        /// The line's number, from 1.
        line: u64,
        /// What does not fit.
        problem: String,
    },
    /// A version 2 compact trace's record refers to a hierarchy `hierarchies.jsonl` does not hold.
    #[error("{path}: no hierarchy {sha256}")]
    MissingHierarchy {
        /// The hierarchies file.
        path: std::path::PathBuf,
        /// The hash the record refers to.
        sha256: String,
    },
    /// A compact trace's hierarchy refers to a node `hierarchies.jsonl` does not hold.
    #[error("{path}: no node {number}")]
    MissingNode {
        /// The hierarchies file.
        path: std::path::PathBuf,
        /// The node's number (its line, from 0).
        number: u64,
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
