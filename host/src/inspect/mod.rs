//! `uatu inspect` and `uatu report`: a recorded run seen in the browser.
//!
//! [`Runs`] is the one way in from a URL to the disk: it resolves a run id and a
//! file inside a run, and refuses anything that would leave the runs directory
//! (`..`, absolute paths, symlinks pointing out). Over it sit the JSON views
//! ([`RunInfo`], [`StepIndex`], pages of [`StepRecord`]s), the HTTP server
//! ([`serve`], axum, bound to 127.0.0.1 only, with server-sent events for a run
//! still being written) and the self-contained HTML report ([`write_report`]).
//! The page itself is embedded in the binary ([`assets`]).

pub mod assets;
mod index;
mod report;
mod server;

use std::path::{Component, Path, PathBuf};

use serde::Serialize;

use crate::trace::{self, Meta, StepRange, StepRecord, Summary, TraceError};

pub use index::{StepIndex, StepMark, index_steps};
pub use report::{ReportOptions, ReportStats, write_report};
pub use server::{Server, serve};

/// The most steps one page may hold: a page is what the browser asks for at once.
pub const MAX_PAGE: u64 = 500;

/// A failure of `uatu inspect` or `uatu report`.
#[derive(Debug, thiserror::Error)]
pub enum InspectError {
    /// The directory given is neither a runs directory nor a run.
    #[error("{path} is not a directory of uatu runs nor a run")]
    NotRuns {
        /// The path given.
        path: PathBuf,
        /// What the OS said, if it said anything.
        #[source]
        source: Option<std::io::Error>,
    },
    /// A URL named a run or a file that is not there, or that lies outside the runs directory.
    #[error("no such run or file: {0}")]
    NotFound(String),
    /// A run's files could not be read.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// The server could not listen.
    #[error("cannot listen on 127.0.0.1:{port}")]
    Bind {
        /// The port asked for.
        port: u16,
        /// What the OS said.
        #[source]
        source: std::io::Error,
    },
    /// The server failed while serving.
    #[error("the inspect server failed")]
    Serve(#[source] std::io::Error),
    /// The report could not be written.
    #[error("writing {path}")]
    Write {
        /// The report file.
        path: PathBuf,
        /// What the OS said.
        #[source]
        source: std::io::Error,
    },
}

impl InspectError {
    /// True when the user can fix it by naming another directory or URL.
    pub fn is_usage(&self) -> bool {
        matches!(self, InspectError::NotRuns { .. } | InspectError::NotFound(_))
    }
}

/// Where runs are read from: a directory of runs, or one run alone.
#[derive(Debug, Clone)]
pub struct Runs {
    /// The directory that holds the runs, canonical (no symlinks, absolute).
    root: PathBuf,
    /// When one run was given: its directory name; only it is listed and served.
    only: Option<String>,
}

impl Runs {
    /// Opens `path`: a runs directory (`runs/`) or one run (`runs/<id>`, with a `meta.json` or `trace.jsonl`).
    pub fn open(path: &Path) -> Result<Runs, InspectError> {
        let canonical = path.canonicalize().map_err(|source| InspectError::NotRuns {
            path: path.to_path_buf(),
            source: Some(source),
        })?;
        if !canonical.is_dir() {
            return Err(InspectError::NotRuns {
                path: path.to_path_buf(),
                source: None,
            });
        }
        if is_run(&canonical) {
            let name = canonical.file_name().and_then(|n| n.to_str()).map(str::to_owned);
            let parent = canonical.parent().map(Path::to_path_buf);
            if let (Some(name), Some(parent)) = (name, parent) {
                return Ok(Runs {
                    root: parent,
                    only: Some(name),
                });
            }
        }
        Ok(Runs {
            root: canonical,
            only: None,
        })
    }

    /// The id of the one run given, when a run (not a runs directory) was opened.
    pub fn single(&self) -> Option<&str> {
        self.only.as_deref()
    }

    /// The directory of run `id`, refusing anything but a plain name of a run inside the root.
    pub fn run_dir(&self, id: &str) -> Result<PathBuf, InspectError> {
        let not_found = || InspectError::NotFound(id.to_owned());
        if let Some(only) = &self.only
            && only != id
        {
            return Err(not_found());
        }
        let mut components = Path::new(id).components();
        match (components.next(), components.next()) {
            (Some(Component::Normal(_)), None) => {}
            _ => return Err(not_found()),
        }
        let dir = self.contained(&self.root.join(id)).ok_or_else(not_found)?;
        if dir.is_dir() && is_run(&dir) {
            Ok(dir)
        } else {
            Err(not_found())
        }
    }

    /// A file inside run `id` named by a relative path (a record's `screenshot`),
    /// refusing `..`, absolute paths and symlinks that lead out of the run.
    pub fn run_file(&self, id: &str, relative: &str) -> Result<PathBuf, InspectError> {
        let dir = self.run_dir(id)?;
        let not_found = || InspectError::NotFound(format!("{id}/{relative}"));
        let path = Path::new(relative);
        if relative.is_empty() || !path.components().all(|c| matches!(c, Component::Normal(_))) {
            return Err(not_found());
        }
        let file = dir.join(path).canonicalize().map_err(|_| not_found())?;
        if file.starts_with(&dir) && file.is_file() {
            Ok(file)
        } else {
            Err(not_found())
        }
    }

    /// The canonical form of `path` if it lies inside the root.
    fn contained(&self, path: &Path) -> Option<PathBuf> {
        let canonical = path.canonicalize().ok()?;
        canonical.starts_with(&self.root).then_some(canonical)
    }

    /// Every run, newest first, with what its `meta.json` and `summary.json` say.
    pub fn list(&self) -> Result<Vec<RunInfo>, InspectError> {
        let mut ids = Vec::new();
        match &self.only {
            Some(only) => ids.push(only.clone()),
            None => {
                let entries = std::fs::read_dir(&self.root).map_err(|e| TraceError::io(&self.root, e))?;
                for entry in entries.flatten() {
                    if let Some(name) = entry.file_name().to_str()
                        && self.run_dir(name).is_ok()
                    {
                        ids.push(name.to_owned());
                    }
                }
            }
        }
        // Run directories are named `<UTC timestamp>-<seed>`: by name is by date.
        ids.sort_by(|a, b| b.cmp(a));
        ids.iter().map(|id| self.info(id)).collect()
    }

    /// One run's meta, summary and state.
    pub fn info(&self, id: &str) -> Result<RunInfo, InspectError> {
        let dir = self.run_dir(id)?;
        let meta = unless_missing(trace::read_meta(&dir))?;
        let summary = unless_missing(trace::read_summary(&dir))?;
        let steps = match &summary {
            Some(summary) => summary.steps,
            None => trace::count_steps(&dir)?,
        };
        let violated = summary
            .iter()
            .flat_map(|s| &s.properties)
            .filter(|p| p.verdict == "violated")
            .map(|p| p.name.clone())
            .collect();
        Ok(RunInfo {
            id: id.to_owned(),
            seed: meta.as_ref().map(|m| m.seed.to_string()),
            running: summary.is_none(),
            steps,
            violated,
            meta,
            summary,
        })
    }

    /// Whether run `id` has ended (its `summary.json` is written).
    pub fn ended(&self, id: &str) -> Result<bool, InspectError> {
        Ok(self.run_dir(id)?.join(trace::SUMMARY_FILE).is_file())
    }

    /// The complete steps `from..from + count` of run `id` (count capped at [`MAX_PAGE`]).
    pub fn page(&self, id: &str, from: u64, count: u64) -> Result<Page, InspectError> {
        let dir = self.run_dir(id)?;
        let StepRange { steps, torn } = trace::read_page(&dir, from, count.min(MAX_PAGE))?;
        Ok(Page { from, steps, torn })
    }

    /// Step `n` of run `id`.
    pub fn step(&self, id: &str, n: u64) -> Result<StepRecord, InspectError> {
        let dir = self.run_dir(id)?;
        trace::read_page(&dir, n, 1)?
            .steps
            .into_iter()
            .next()
            .ok_or_else(|| InspectError::NotFound(format!("{id}/steps/{n}")))
    }

    /// What each step of run `id` holds at a glance: the step list and the timelines.
    pub fn index(&self, id: &str) -> Result<StepIndex, InspectError> {
        let dir = self.run_dir(id)?;
        Ok(index_steps(&dir)?)
    }
}

/// A run as the run list shows it.
#[derive(Debug, Clone, Serialize)]
pub struct RunInfo {
    /// The run directory's name.
    pub id: String,
    /// The run's seed as a string (JavaScript numbers lose a u64's last digits).
    pub seed: Option<String>,
    /// No `summary.json` yet: the run is being written (or was killed).
    pub running: bool,
    /// Complete steps recorded.
    pub steps: u64,
    /// The properties violated, by name.
    pub violated: Vec<String>,
    /// `meta.json`, if written yet.
    /// (The device's options as any JSON: the page shows a run whatever device it drove.)
    pub meta: Option<Meta<serde_json::Value>>,
    /// `summary.json`, once the run ended.
    pub summary: Option<Summary>,
}

/// A page of steps.
#[derive(Debug, Clone, Serialize)]
pub struct Page {
    /// The first step's index.
    pub from: u64,
    /// The complete records.
    pub steps: Vec<StepRecord>,
    /// The trace ends in a torn (or still being written) line.
    pub torn: bool,
}

/// Whether `dir` looks like a run directory.
fn is_run(dir: &Path) -> bool {
    dir.join(trace::META_FILE).is_file() || dir.join(trace::TRACE_FILE).is_file()
}

/// A JSON document of the run as read, or `None` when it is not written yet.
fn unless_missing<T>(read: Result<T, TraceError>) -> Result<Option<T>, TraceError> {
    match read {
        Ok(document) => Ok(Some(document)),
        Err(TraceError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(error),
    }
}

#[cfg(test)]
mod tests;
