//! Reading `trace.jsonl`, tolerating a run that was killed mid-write.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use super::TraceError;
use super::record::StepRecord;
use super::writer::TRACE_FILE;

/// Streams the step records of a trace, one at a time.
///
/// A last line that is incomplete (no newline) and does not parse is the
/// record a killed writer was in the middle of: the reader stops there
/// cleanly and [`TraceReader::torn`] says so. A bad line anywhere else is an
/// error naming the line.
pub struct TraceReader {
    path: PathBuf,
    lines: BufReader<File>,
    line_number: u64,
    torn: bool,
    done: bool,
}

impl TraceReader {
    /// Opens `path`: a `trace.jsonl` file or a run directory containing one.
    pub fn open(path: &Path) -> Result<TraceReader, TraceError> {
        let path = if path.is_dir() {
            path.join(TRACE_FILE)
        } else {
            path.to_path_buf()
        };
        let file = File::open(&path).map_err(|e| TraceError::io(&path, e))?;
        Ok(TraceReader {
            path,
            lines: BufReader::new(file),
            line_number: 0,
            torn: false,
            done: false,
        })
    }

    /// Whether reading stopped at a torn (partially written) last record.
    pub fn torn(&self) -> bool {
        self.torn
    }
}

impl Iterator for TraceReader {
    type Item = Result<StepRecord, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let mut line = Vec::new();
        loop {
            line.clear();
            match self.lines.read_until(b'\n', &mut line) {
                Ok(0) => {
                    self.done = true;
                    return None;
                }
                Ok(_) => {}
                Err(e) => {
                    self.done = true;
                    return Some(Err(TraceError::io(&self.path, e)));
                }
            }
            self.line_number += 1;
            if !line.iter().all(u8::is_ascii_whitespace) {
                break;
            }
        }
        let complete = line.ends_with(b"\n");
        match serde_json::from_slice::<StepRecord>(&line) {
            Ok(record) => Some(Ok(record)),
            Err(_) if !complete => {
                self.torn = true;
                self.done = true;
                None
            }
            Err(source) => {
                self.done = true;
                Some(Err(TraceError::BadRecord {
                    path: self.path.clone(),
                    line: self.line_number,
                    source,
                }))
            }
        }
    }
}

/// Every complete step record of a trace (see [`TraceReader`]).
pub fn read_steps(path: &Path) -> Result<Vec<StepRecord>, TraceError> {
    TraceReader::open(path)?.collect()
}

/// Reads a run directory's `meta.json`.
pub fn read_meta(run_dir: &Path) -> Result<super::record::Meta, TraceError> {
    read_json(&run_dir.join(super::writer::META_FILE))
}

/// Reads a run directory's `summary.json` (written when the run ended).
pub fn read_summary(run_dir: &Path) -> Result<super::record::Summary, TraceError> {
    read_json(&run_dir.join(super::writer::SUMMARY_FILE))
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, TraceError> {
    let bytes = std::fs::read(path).map_err(|e| TraceError::io(path, e))?;
    serde_json::from_slice(&bytes).map_err(|source| TraceError::BadJson {
        path: path.to_path_buf(),
        source,
    })
}
