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

// ---------------------------------------------------------------------------
// Ranges of steps, for `uatu inspect` and `uatu report`: a 20,000-step run is
// served in pages, so these never hold more than the page asked for. They skip
// the lines before the range without parsing them; a trace format whose records
// refer to earlier ones must resolve those references here (one place).
// ---------------------------------------------------------------------------

/// A range of a trace's steps and what the reader saw at the end of the file.
#[derive(Debug, Clone, Default)]
pub struct StepRange {
    /// The complete records from the range's start, at most the count asked for.
    pub steps: Vec<StepRecord>,
    /// Whether reading stopped at a torn (partially written) last record.
    pub torn: bool,
}

/// The complete records `start..start + count` of the trace at `path` (a
/// `trace.jsonl` file or a run directory), tolerating a torn last line.
pub fn read_step_range(path: &Path, start: u64, count: u64) -> Result<StepRange, TraceError> {
    let mut reader = TraceReader::open(path)?;
    let mut skipped = 0u64;
    let mut line = Vec::new();
    while skipped < start {
        line.clear();
        match reader.lines.read_until(b'\n', &mut line) {
            Ok(0) => return Ok(StepRange::default()),
            Ok(_) if !line.ends_with(b"\n") => {
                // The last line, still being written (or torn): not a step yet.
                return Ok(StepRange {
                    steps: Vec::new(),
                    torn: true,
                });
            }
            Ok(_) => {
                reader.line_number += 1;
                if !line.iter().all(u8::is_ascii_whitespace) {
                    skipped += 1;
                }
            }
            Err(e) => return Err(TraceError::io(&reader.path, e)),
        }
    }
    let mut steps = Vec::new();
    for record in reader.by_ref() {
        steps.push(record?);
        if steps.len() as u64 >= count {
            break;
        }
    }
    Ok(StepRange {
        steps,
        torn: reader.torn(),
    })
}

/// How many complete step records the trace at `path` holds, without parsing them.
pub fn count_steps(path: &Path) -> Result<u64, TraceError> {
    let mut reader = TraceReader::open(path)?;
    let mut count = 0u64;
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.lines.read_until(b'\n', &mut line) {
            Ok(0) => return Ok(count),
            Ok(_) if !line.ends_with(b"\n") => return Ok(count),
            Ok(_) if line.iter().all(u8::is_ascii_whitespace) => {}
            Ok(_) => count += 1,
            Err(e) => return Err(TraceError::io(&reader.path, e)),
        }
    }
}
