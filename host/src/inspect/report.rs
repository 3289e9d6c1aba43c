//! `uatu report`: the inspect page as one self-contained HTML file, the thing a
//! CI job attaches. It holds the run's info, every step's marks and timelines,
//! the full records of the steps around each violation (and the first and last
//! step) and their screenshots, each distinct image once, as data URLs.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde::Serialize;
use sha2::{Digest, Sha256};

use super::{InspectError, Runs, assets};
use crate::trace::{self, StepRecord};

/// What goes into a report.
#[derive(Debug, Clone, Copy)]
pub struct ReportOptions {
    /// Steps inlined before and after each violating step.
    pub around: u64,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions { around: 3 }
    }
}

/// What a written report holds.
#[derive(Debug, Clone, Serialize)]
pub struct ReportStats {
    /// The report file.
    pub path: PathBuf,
    /// Its size, bytes.
    pub bytes: u64,
    /// Steps whose full records are inlined.
    pub steps: usize,
    /// Distinct screenshots inlined.
    pub screenshots: usize,
}

#[derive(Serialize)]
struct ReportData<'a> {
    run: super::RunInfo,
    index: &'a super::StepIndex,
    steps: BTreeMap<u64, StepRecord>,
    /// A record's `screenshot` path → the key of its image in `images`.
    files: BTreeMap<String, String>,
    /// Content hash → data URL; an image shown at many steps is stored once.
    images: BTreeMap<String, String>,
}

/// Writes the report of the run at `run_dir` to `output`, atomically.
pub fn write_report(
    run_dir: &Path,
    output: &Path,
    options: ReportOptions,
) -> Result<ReportStats, InspectError> {
    let runs = Runs::open(run_dir)?;
    let id = runs
        .single()
        .ok_or_else(|| InspectError::NotFound(format!("{}: not a run directory", run_dir.display())))?
        .to_owned();
    let dir = runs.run_dir(&id)?;
    let run = runs.info(&id)?;
    let index = runs.index(&id)?;
    let last = index.steps.len() as u64;
    let mut wanted = BTreeSet::new();
    if last > 0 {
        wanted.insert(0);
        wanted.insert(last - 1);
    }
    for mark in index.steps.iter().filter(|m| !m.violations.is_empty() || m.crash) {
        let from = mark.step.saturating_sub(options.around);
        let to = (mark.step + options.around).min(last.saturating_sub(1));
        wanted.extend(from..=to);
    }
    let mut steps = BTreeMap::new();
    for range in contiguous(&wanted) {
        let page = trace::read_page(&dir, range.0, range.1 - range.0 + 1)?;
        for record in page.steps {
            steps.insert(record.step, record);
        }
    }
    let mut files = BTreeMap::new();
    let mut images = BTreeMap::new();
    for record in steps.values() {
        let Some(path) = &record.screenshot else { continue };
        // A screenshot that is missing or outside the run is simply not shown.
        let Ok(file) = runs.run_file(&id, path) else {
            continue;
        };
        let Ok(bytes) = std::fs::read(&file) else { continue };
        let key = hex::encode(&Sha256::digest(&bytes)[..12]);
        images.entry(key.clone()).or_insert_with(|| {
            format!(
                "data:image/png;base64,{}",
                base64::engine::general_purpose::STANDARD.encode(&bytes)
            )
        });
        files.insert(path.clone(), key);
    }
    let screenshots = images.len();
    let inlined = steps.len();
    let data = ReportData {
        run,
        index: &index,
        steps,
        files,
        images,
    };
    let data = serde_json::to_string(&data).map_err(|e| InspectError::Write {
        path: output.to_path_buf(),
        source: std::io::Error::other(e),
    })?;
    let config = serde_json::json!({ "mode": "report", "single": id });
    let html = assets::standalone(&config.to_string(), &data);
    crate::wasm::write_atomically(output, html.as_bytes()).map_err(|source| InspectError::Write {
        path: output.to_path_buf(),
        source,
    })?;
    Ok(ReportStats {
        path: output.to_path_buf(),
        bytes: html.len() as u64,
        steps: inlined,
        screenshots,
    })
}

/// The set's runs of consecutive numbers, as inclusive ranges.
fn contiguous(set: &BTreeSet<u64>) -> Vec<(u64, u64)> {
    let mut ranges: Vec<(u64, u64)> = Vec::new();
    for &n in set {
        match ranges.last_mut() {
            Some(last) if last.1 + 1 == n => last.1 = n,
            _ => ranges.push((n, n)),
        }
    }
    ranges
}
