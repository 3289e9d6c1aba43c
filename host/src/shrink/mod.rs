//! Shrinking a violation: from the recorded run to a short action sequence that still
//! violates the same property.
//!
//! The recorded actions are cut at the violation, then minimised by delta debugging
//! (drop chunks of halving size, down to single actions), then what remains is
//! simplified (an element selector instead of a coordinate where one finds exactly that
//! element, shorter typed text). Every candidate is replayed on a fresh device
//! ([`crate::run::replay`]) for its verdicts only (no generators, no trace); it is accepted
//! when the property is violated again, and the actions the replay used up to the
//! violation become the new best. A candidate whose action targets something not on
//! screen fails; a flaky device gets `retries` replays per candidate. The best is replayed
//! once more with its full trace into `<run>-shrunk/` (with `repro.json`, `repro.yaml`)
//! after the first confirmation, where a phase reads the best's states, and at the end,
//! also when the budget runs out or Ctrl-C comes.

pub mod maestro;
mod settings;

use std::collections::{HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

pub use settings::ShrinkSettings;

use crate::Error;
use crate::action::{Action, Target};
use crate::devices::{DeviceChoice, DeviceOptions};
use crate::run::replay::{Origin, Replay, ReplayReport, Script, ScriptStep, replay_config, selector_for};
use crate::settings::{ConfigError, RunConfig, Settings, parse_duration};
use crate::trace::{Summary, TraceError, read_meta, read_steps, read_summary};

/// The reproducer files in a shrunk run directory.
pub const REPRO_JSON: &str = "repro.json";
/// The Maestro flow.
pub const REPRO_YAML: &str = "repro.yaml";

/// Why a run cannot be shrunk.
#[derive(Debug, thiserror::Error)]
pub enum ShrinkError {
    /// The run violated no property: there is nothing to shrink.
    #[error("{run_dir} violated no property: nothing to shrink")]
    NothingViolated {
        /// The run.
        run_dir: PathBuf,
    },
    /// The property asked for was not violated by the run (or does not exist).
    #[error("{run_dir} did not violate `{property}`; violated: {violated}")]
    NotViolated {
        /// The run.
        run_dir: PathBuf,
        /// The property asked for.
        property: String,
        /// The properties it did violate, comma-separated.
        violated: String,
    },
    /// Replaying the run's actions up to the violation did not violate the property again.
    #[error(
        "replaying {run_dir} up to step {step} did not violate `{property}` again ({tries} tries): the violation does not reproduce"
    )]
    DoesNotReproduce {
        /// The run.
        run_dir: PathBuf,
        /// The property.
        property: String,
        /// The step it was violated at in the run.
        step: u64,
        /// How many replays were tried.
        tries: u32,
    },
    /// The replays meant to confirm the violation could not run (the device could not be
    /// reached, or dropped): the violation's reproducibility is unknown.
    #[error("replaying {run_dir} to reproduce `{property}` failed")]
    ReplayFailed {
        /// The run.
        run_dir: PathBuf,
        /// The property.
        property: String,
        /// Why the last replay could not run.
        #[source]
        source: Box<Error>,
    },
    /// Interrupted or out of budget before the first replay confirmed the violation.
    #[error("stopped before the violation of `{property}` was reproduced once")]
    StoppedBeforeReproducing {
        /// The property.
        property: String,
    },
    /// The reproducer violated the property when replayed for its verdicts only, but not
    /// when replayed with its trace (a flaky device, or a spec whose predicates depend on
    /// its generators having run).
    #[error("the reproducer of `{property}` did not violate it again when replayed with its trace")]
    TracedReplayDiffers {
        /// The property.
        property: String,
    },
    /// The shrunk run directory could not be written.
    #[error("writing {path}")]
    Write {
        /// The file or directory.
        path: PathBuf,
        /// What the OS said.
        #[source]
        source: std::io::Error,
    },
}

/// How to shrink.
#[derive(Debug, Clone)]
pub struct ShrinkOptions {
    /// The property to reproduce; `None`: the first the run violated.
    pub property: Option<String>,
    /// Wall time allowed; the best so far is kept when it runs out.
    pub budget: Duration,
    /// Replays per candidate before it is rejected (1 on the simulator, which is deterministic).
    pub retries: u32,
    /// Where the result goes; `None`: `<run>-shrunk` beside the run.
    pub output: Option<PathBuf>,
}

impl ShrinkOptions {
    /// The options of a shrink on `device` from `chosen` (the command line over
    /// `uatu.toml`) over the built-in defaults: a deterministic device replays each
    /// candidate once unless `retries` is chosen.
    pub fn resolve(
        chosen: ShrinkSettings,
        device: &DeviceChoice,
        property: Option<String>,
        output: PathBuf,
    ) -> Result<ShrinkOptions, ConfigError> {
        let defaults = &Settings::defaults().shrink;
        let retries = match (chosen.retries, device.kind().deterministic()) {
            (Some(retries), _) => retries,
            (None, true) => 1,
            (None, false) => defaults.retries.unwrap_or(1),
        };
        let budget = chosen
            .budget
            .or_else(|| defaults.budget.clone())
            .ok_or_else(|| ConfigError::invalid("shrink.budget", "missing from the built-in defaults"))?;
        Ok(ShrinkOptions {
            property,
            budget: parse_duration("budget", &budget)?,
            retries: retries.max(1),
            output: Some(output),
        })
    }
}

/// `uatu run --shrink`: each property `summary`'s run violated, shrunk in turn into
/// `<run>-shrunk-<property>/`, replaying with `flags` over the recorded run's settings
/// over `file` (as `uatu shrink` does) and `file`'s `[shrink]` settings. `rerun` writes
/// the command that replays a reproducer's directory; `on_progress` is told which
/// property is being shrunk.
pub async fn shrink_each(
    summary: &Summary,
    flags: Settings,
    file: Settings,
    rerun: impl Fn(&Path) -> String,
    interrupted: Arc<AtomicBool>,
    mut on_progress: impl FnMut(&str, &ShrinkProgress),
) -> Vec<(String, Result<ShrinkReport, Error>)> {
    let run_dir = Path::new(&summary.run_dir);
    let shrunk_dir = default_output(run_dir);
    let mut shrunk = Vec::new();
    for property in summary.properties.iter().filter(|p| p.verdict == "violated") {
        let name = property.name.clone();
        let output = shrunk_dir.with_file_name(format!(
            "{}-{name}",
            shrunk_dir.file_name().unwrap_or_default().to_string_lossy()
        ));
        let prepared = (|| -> Result<(RunConfig, ShrinkOptions), Error> {
            let meta = read_meta::<DeviceOptions>(run_dir).map_err(not_a_run(run_dir))?;
            let mut config = replay_config(flags.clone(), &Origin::of(&meta), file.clone())?;
            config.rerun = rerun(&output);
            let options =
                ShrinkOptions::resolve(file.shrink.clone(), &config.device, Some(name.clone()), output)?;
            Ok((config, options))
        })();
        let report = match prepared {
            Ok((config, options)) => {
                shrink(run_dir, config, options, interrupted.clone(), |progress| {
                    on_progress(&name, progress)
                })
                .await
            }
            Err(error) => Err(error),
        };
        shrunk.push((name, report));
    }
    shrunk
}

/// Where a shrink is, for a progress line.
#[derive(Debug, Clone)]
pub struct ShrinkProgress {
    /// The phase: `confirm`, `cycles`, `ddmin`, `selectors`, `text`.
    pub phase: &'static str,
    /// Candidates replayed so far.
    pub tried: usize,
    /// The best reproducer's length (script steps).
    pub length: usize,
}

/// What a shrink did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ShrinkReport {
    /// The property reproduced.
    pub property: String,
    /// The step of the original run at which it was violated.
    pub original_step: u64,
    /// The reproducer's length before shrinking (script steps up to the violation).
    pub original_length: usize,
    /// Its length after (script steps; waits included).
    pub length: usize,
    /// Of which actions dispatched.
    pub actions: usize,
    /// Candidates replayed.
    pub tried: usize,
    /// Wall time, ms.
    pub wall_ms: u64,
    /// Why it ended: `done`, `budget` or `interrupted`.
    pub ended: &'static str,
    /// The shrunk run directory (trace, `repro.json`, `repro.yaml`).
    pub output: PathBuf,
}

/// The first violated property of a run and its step, or `property`'s.
fn target_property(run_dir: &Path, property: Option<&str>) -> Result<(String, u64), Error> {
    let summary = read_summary(run_dir).map_err(not_a_run(run_dir));
    let violated: Vec<(String, u64)> = match summary {
        Ok(summary) => summary
            .properties
            .iter()
            .filter_map(|p| Some((p.name.clone(), p.first_violation_step?)))
            .collect(),
        // A killed run has no summary: its trace says where each property went wrong.
        Err(_) => {
            let mut found: Vec<(String, u64)> = Vec::new();
            for record in read_steps(run_dir).map_err(not_a_run(run_dir))? {
                for (name, standing) in &record.properties {
                    if standing.status == "violated" && !found.iter().any(|(n, _)| n == name) {
                        found.push((name.clone(), record.step));
                    }
                }
            }
            found
        }
    };
    match property {
        Some(property) => violated
            .iter()
            .find(|(name, _)| name == property)
            .cloned()
            .ok_or_else(|| {
                ShrinkError::NotViolated {
                    run_dir: run_dir.to_path_buf(),
                    property: property.to_owned(),
                    violated: violated
                        .iter()
                        .map(|(n, _)| n.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                }
                .into()
            }),
        None => violated
            .iter()
            .min_by_key(|(_, step)| *step)
            .cloned()
            .ok_or_else(|| {
                ShrinkError::NothingViolated {
                    run_dir: run_dir.to_path_buf(),
                }
                .into()
            }),
    }
}

fn not_a_run(run_dir: &Path) -> impl Fn(TraceError) -> Error + '_ {
    move |source| Error::NotARun {
        run_dir: run_dir.to_path_buf(),
        source,
    }
}

/// The shrunk directory for `run_dir`: `<run>-shrunk` beside it.
pub fn default_output(run_dir: &Path) -> PathBuf {
    let name = run_dir
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|| "run".into());
    run_dir.with_file_name(format!("{name}-shrunk"))
}

/// The candidates' scratch directory of a shrink into `output`: `<output>.work` beside it,
/// removed when the shrink ends.
pub fn scratch_dir(output: &Path) -> PathBuf {
    let name = output
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    output.with_file_name(format!("{name}.work"))
}

/// Shrinks the violation of `options.property` (default: the first) in `run_dir`,
/// replaying with `config` (the recorded run's settings, see
/// [`crate::run::replay::replay_config`]; its `rerun` is what the reproducer's
/// `meta.json` says repeats it, e.g. `uatu replay <output>`).
pub async fn shrink(
    run_dir: &Path,
    config: RunConfig,
    options: ShrinkOptions,
    interrupted: Arc<AtomicBool>,
    mut on_progress: impl FnMut(&ShrinkProgress),
) -> Result<ShrinkReport, Error> {
    let started = Instant::now();
    let (property, step) = target_property(run_dir, options.property.as_deref())?;
    let mut script = Script::from_run(run_dir, Some(step))?;
    script.property = Some(property.clone());
    let output = options.output.clone().unwrap_or_else(|| default_output(run_dir));
    let work = scratch_dir(&output);
    let mut shrinker = Shrinker {
        config,
        property: property.clone(),
        template: script.clone(),
        retries: options.retries.max(1),
        budget: options.budget,
        started,
        interrupted,
        work,
        output: output.clone(),
        tried: 0,
        best: Vec::new(),
        written: None,
        stopped: None,
        failed: HashSet::new(),
        replay_error: None,
    };
    let original_length = script.steps.len();

    on_progress(&shrinker.progress("confirm", original_length));
    let accepted = shrinker.attempt(&script.steps).await?;
    if !accepted {
        let _ = std::fs::remove_dir_all(&shrinker.work);
        return Err(match (shrinker.stopped, shrinker.replay_error.take()) {
            (Some(_), _) => ShrinkError::StoppedBeforeReproducing { property },
            (None, Some(source)) => ShrinkError::ReplayFailed {
                run_dir: run_dir.to_path_buf(),
                property,
                source: Box::new(source),
            },
            (None, None) => ShrinkError::DoesNotReproduce {
                run_dir: run_dir.to_path_buf(),
                property,
                step,
                tries: shrinker.retries,
            },
        }
        .into());
    }
    let searched = shrinker.search(&mut on_progress).await;
    // The candidates' directories go whether the search ended well or not.
    let _ = std::fs::remove_dir_all(&shrinker.work);
    searched?;
    Ok(ShrinkReport {
        property,
        original_step: step,
        original_length,
        length: shrinker.best.len(),
        actions: shrinker.best.iter().filter(|s| s.action.is_some()).count(),
        tried: shrinker.tried,
        wall_ms: started.elapsed().as_millis() as u64,
        ended: shrinker.stopped.unwrap_or("done"),
        output,
    })
}

struct Shrinker {
    config: RunConfig,
    property: String,
    /// The script the candidates are made from (origin, property).
    template: Script,
    retries: u32,
    budget: Duration,
    started: Instant,
    interrupted: Arc<AtomicBool>,
    /// Candidates' run directories, removed as they are judged.
    work: PathBuf,
    output: PathBuf,
    tried: usize,
    /// The shortest script known to violate the property.
    best: Vec<ScriptStep>,
    /// The script of the output directory, the best as last written ([`Shrinker::write_best`]);
    /// `None` until the output exists (an empty script is a reproducer too: a violation
    /// right after launch).
    written: Option<Vec<ScriptStep>>,
    /// Set when the budget ran out (`budget`) or Ctrl-C came (`interrupted`).
    stopped: Option<&'static str>,
    /// The sequences replayed without violating the property: whether targets had to be
    /// on screen, and the sequence's [`fingerprint`].
    failed: HashSet<(bool, [u8; 32])>,
    /// Why the last replay failed to run, if it did: a candidate that fails to run counts as
    /// not violating, but when the original's confirming replay did not run, this is the news.
    replay_error: Option<Error>,
}

impl Shrinker {
    fn progress(&self, phase: &'static str, length: usize) -> ShrinkProgress {
        ShrinkProgress {
            phase,
            tried: self.tried,
            length,
        }
    }

    fn out_of_time(&mut self) -> bool {
        if self.stopped.is_none() {
            if self.interrupted.load(Ordering::SeqCst) {
                self.stopped = Some("interrupted");
            } else if self.started.elapsed() >= self.budget {
                self.stopped = Some("budget");
            }
        }
        self.stopped.is_some()
    }

    /// The search from an accepted original: cycles, delta debugging, selectors, shorter
    /// texts, each putting its best on disk as it goes.
    async fn search(&mut self, on_progress: &mut impl FnMut(&ShrinkProgress)) -> Result<(), Error> {
        self.write_best().await?;
        self.loops(on_progress).await?;
        self.ddmin(on_progress).await?;
        self.selectors(on_progress).await?;
        self.shorter_texts(on_progress).await?;
        // Also when the budget ran out or Ctrl-C came: the best so far, with its full trace.
        self.write_best().await
    }

    /// Replays `steps`, skipping actions whose target is not on screen (removing one
    /// action often strands those that followed it); when the property is violated, the
    /// steps used up to the violation, less the skipped ones, are replayed again without
    /// any skip allowed, and become the best if that violates too. Returns whether it did.
    async fn attempt(&mut self, steps: &[ScriptStep]) -> Result<bool, Error> {
        match self.replay(steps, false).await? {
            Tried::Violated { consumed, skipped } if skipped.is_empty() => {
                self.best = steps[..consumed.min(steps.len())].to_vec();
                Ok(true)
            }
            Tried::Violated { consumed, skipped } => {
                let effective: Vec<ScriptStep> = steps[..consumed.min(steps.len())]
                    .iter()
                    .enumerate()
                    .filter(|(index, _)| !skipped.contains(index))
                    .map(|(_, step)| step.clone())
                    .collect();
                match self.replay(&effective, true).await? {
                    Tried::Violated { consumed, .. } => {
                        self.best = effective[..consumed.min(effective.len())].to_vec();
                        Ok(true)
                    }
                    Tried::Failed => Ok(false),
                }
            }
            Tried::Failed => Ok(false),
        }
    }

    /// Replays `steps` (up to `retries` times) for the verdicts only. A sequence that did
    /// not violate is remembered and not replayed again (one that did not when targets
    /// could be skipped will not when they cannot either).
    async fn replay(&mut self, steps: &[ScriptStep], strict_targets: bool) -> Result<Tried, Error> {
        let digest = fingerprint(steps);
        if self.failed.contains(&(false, digest)) || self.failed.contains(&(strict_targets, digest)) {
            return Ok(Tried::Failed);
        }
        let tried = self.replay_unremembered(steps, strict_targets).await?;
        if matches!(tried, Tried::Failed) && self.stopped.is_none() {
            self.failed.insert((strict_targets, digest));
        }
        Ok(tried)
    }

    async fn replay_unremembered(
        &mut self,
        steps: &[ScriptStep],
        strict_targets: bool,
    ) -> Result<Tried, Error> {
        for _ in 0..self.retries {
            if self.out_of_time() {
                return Ok(Tried::Failed);
            }
            self.tried += 1;
            let interrupted = self.interrupted.clone();
            if let Some((run_dir, report)) = self.replay_once(steps, strict_targets, false, interrupted).await
            {
                let _ = std::fs::remove_dir_all(&run_dir);
                return Ok(Tried::Violated {
                    consumed: report.consumed.min(steps.len()),
                    skipped: report.skipped,
                });
            }
        }
        Ok(Tried::Failed)
    }

    /// One replay of `steps` into the scratch directory: with `full_trace`, an ordinary
    /// replay whose run directory can become the output; otherwise only its verdicts
    /// count ([`Replay::verdicts_only`]: no generators, no steps written), which is what
    /// makes a candidate cheap. Returns the run directory and how far the script got when
    /// the property was violated; otherwise the directory is removed.
    async fn replay_once(
        &mut self,
        steps: &[ScriptStep],
        strict_targets: bool,
        full_trace: bool,
        interrupted: Arc<AtomicBool>,
    ) -> Option<(PathBuf, ReplayReport)> {
        let mut config = self.config.clone();
        config.output = self.work.clone();
        config.screenshots = false;
        let replay = Replay {
            script: Script {
                steps: steps.to_vec(),
                ..self.template.clone()
            },
            stop_at_violation_of: Some(self.property.clone()),
            stop_at_missing_target: strict_targets,
            verdicts_only: !full_trace,
        };
        // A replay that fails to run (a device that drops) did not violate; why is kept.
        let outcome = match crate::run::replay(config, replay, interrupted, |_| {}).await {
            Ok(outcome) => {
                self.replay_error = None;
                outcome
            }
            Err(error) => {
                self.replay_error = Some(error);
                return None;
            }
        };
        let run_dir = PathBuf::from(&outcome.summary.run_dir);
        let violated = outcome
            .summary
            .properties
            .iter()
            .any(|p| p.name == self.property && p.verdict == "violated");
        if violated && outcome.trace_incomplete.is_none() {
            return Some((run_dir, outcome.replay.unwrap_or_default()));
        }
        let _ = std::fs::remove_dir_all(&run_dir);
        None
    }

    /// Puts the best on disk as the output directory, with the full trace of a replay of
    /// it (candidates are replayed without one). Not stopped by Ctrl-C or the budget: it
    /// is how they keep the best so far. Should that replay not violate (a flaky device,
    /// `retries` times), the best goes back to what the output already holds.
    async fn write_best(&mut self) -> Result<(), Error> {
        if self.written.as_ref() == Some(&self.best) {
            return Ok(());
        }
        let best = self.best.clone();
        for _ in 0..self.retries {
            let uninterrupted = Arc::new(AtomicBool::new(false));
            if let Some((run_dir, report)) = self.replay_once(&best, true, true, uninterrupted).await {
                let used = &best[..report.consumed.min(best.len())];
                self.keep(&run_dir, used)?;
                self.best = used.to_vec();
                self.written = Some(used.to_vec());
                return Ok(());
            }
        }
        let Some(written) = &self.written else {
            return Err(ShrinkError::TracedReplayDiffers {
                property: self.property.clone(),
            }
            .into());
        };
        self.best = written.clone();
        Ok(())
    }

    /// Makes `run_dir` the output: the reproducer files written into it, then moved over
    /// the previous best, which is removed only once the new one is in place.
    fn keep(&self, run_dir: &Path, steps: &[ScriptStep]) -> Result<(), Error> {
        let script = Script {
            steps: steps.to_vec(),
            ..self.template.clone()
        };
        script.write(&run_dir.join(REPRO_JSON))?;
        let yaml = run_dir.join(REPRO_YAML);
        crate::wasm::write_atomically(&yaml, maestro::flow(&script).as_bytes()).map_err(|source| {
            ShrinkError::Write {
                path: yaml.clone(),
                source,
            }
        })?;
        let write = |path: &Path| {
            let path = path.to_path_buf();
            move |source| ShrinkError::Write { path, source }
        };
        let old = self.work.join("previous-best");
        if self.output.exists() {
            std::fs::rename(&self.output, &old).map_err(write(&self.output))?;
        }
        std::fs::rename(run_dir, &self.output).map_err(write(&self.output))?;
        if old.exists() {
            std::fs::remove_dir_all(&old).map_err(write(&old))?;
        }
        Ok(())
    }

    /// Cycles first: where the app was in the same state (same snapshots, same hierarchy,
    /// text included) before step `i` and before step `j`, the steps between went round in
    /// a circle, and a random walk makes many. All of them are dropped at once; when that
    /// no longer violates, some cycle changed what cannot be seen (a logout and a login
    /// look like no change), and the cycles are split in halves, each half dropped on its
    /// own and split again while it fails: the few cycles a bug needs are found in a few
    /// replays, not one replay per cycle. Repeated while it shortens the best. Cheap, and
    /// it leaves delta debugging a much shorter sequence.
    async fn loops(&mut self, on_progress: &mut impl FnMut(&ShrinkProgress)) -> Result<(), Error> {
        loop {
            // The states are read from the best's trace: candidates are replayed without one.
            self.write_best().await?;
            let records = read_steps(&self.output).map_err(not_a_run(&self.output))?;
            let keys: Vec<String> = records
                .iter()
                .filter(|record| record.evaluated)
                .map(|record| {
                    let snapshots = serde_json::to_string(&record.state.snapshots).unwrap_or_default();
                    let hierarchy = serde_json::to_string(&record.state.hierarchy).unwrap_or_default();
                    format!("{snapshots}\u{1e}{hierarchy}")
                })
                .collect();
            // Greedy, left to right: from each state, jump to its last recurrence before the end.
            let length = self.best.len().min(keys.len().saturating_sub(1));
            let mut cycles: Vec<(usize, usize)> = Vec::new();
            let mut start = 0;
            while start < length {
                match (start + 1..length).rev().find(|&end| keys[end] == keys[start]) {
                    Some(end) => {
                        cycles.push((start, end));
                        start = end;
                    }
                    None => start += 1,
                }
            }
            if cycles.is_empty() {
                return Ok(());
            }
            let before = self.best.len();
            // Candidates are cut from this round's best; cycle indices are its indices.
            let base = self.best.clone();
            let without = |drop: &[(usize, usize)]| -> Vec<ScriptStep> {
                base.iter()
                    .enumerate()
                    .filter(|(index, _)| !drop.iter().any(|(from, to)| (*from..*to).contains(index)))
                    .map(|(_, step)| step.clone())
                    .collect()
            };
            let mut dropped: Vec<(usize, usize)> = Vec::new();
            let mut groups: VecDeque<Vec<(usize, usize)>> = VecDeque::from([cycles]);
            while let Some(group) = groups.pop_front() {
                on_progress(&self.progress("cycles", self.best.len()));
                let drop: Vec<(usize, usize)> = dropped.iter().chain(&group).copied().collect();
                if self.attempt(&without(&drop)).await? {
                    dropped.extend(group);
                } else if self.stopped.is_some() {
                    return Ok(());
                } else if group.len() > 1 {
                    let (first, second) = group.split_at(group.len() / 2);
                    groups.push_back(first.to_vec());
                    groups.push_back(second.to_vec());
                }
            }
            if self.best.len() >= before {
                return Ok(());
            }
        }
    }

    /// Delta debugging over the steps, in sweeps: the sequence cut into `n` chunks (2, 4,
    /// 8, … down to single steps), each chunk dropped in turn from the last to the first; a
    /// drop after which the property is still violated is kept and the sweep goes on with
    /// the chunk before it (no restart from the end: a restart re-tries every chunk that
    /// already failed, which made the search quadratic). Single steps are swept until a
    /// sweep drops nothing, so no single step can be dropped from the result.
    async fn ddmin(&mut self, on_progress: &mut impl FnMut(&ShrinkProgress)) -> Result<(), Error> {
        let mut chunks = 2usize;
        while self.best.len() >= 2 {
            let size = self.best.len().div_ceil(chunks).max(1);
            let mut reduced = false;
            // From the end: late actions are cheaper to replay without, and a prefix
            // is what a violation usually needs.
            let mut end = self.best.len();
            while end > 0 && self.best.len() >= 2 {
                // A flaky device may have violated earlier than the best's end.
                end = end.min(self.best.len());
                on_progress(&self.progress("ddmin", self.best.len()));
                let start = end.saturating_sub(size);
                let candidate: Vec<ScriptStep> = self.best[..start]
                    .iter()
                    .chain(&self.best[end.min(self.best.len())..])
                    .cloned()
                    .collect();
                // An accepted drop leaves the steps before `start` as they were (the best's
                // prefix replays as before and does not violate), so the sweep goes on there.
                if self.attempt(&candidate).await? {
                    reduced = true;
                } else if self.stopped.is_some() {
                    return Ok(());
                }
                end = start;
            }
            if size > 1 {
                chunks = chunks.saturating_mul(2);
            } else if !reduced {
                break;
            }
        }
        Ok(())
    }

    /// An element selector instead of each coordinate target where one finds exactly that
    /// element on the screen the best replay saw; tried all at once, kept if it still violates.
    async fn selectors(&mut self, on_progress: &mut impl FnMut(&ShrinkProgress)) -> Result<(), Error> {
        self.write_best().await?;
        let records = read_steps(&self.output).map_err(not_a_run(&self.output))?;
        let screens: Vec<_> = records
            .iter()
            .filter(|r| r.evaluated)
            .map(|r| &r.state.hierarchy)
            .collect();
        let mut changed = false;
        // The best replay's evaluated steps are the script's, one each (and one after the last).
        let candidate: Vec<ScriptStep> = self
            .best
            .iter()
            .zip(&screens)
            .map(|(step, screen)| {
                let mut step = step.clone();
                if let Some(action) = &mut step.action {
                    for target in element_targets_mut(action) {
                        if let Target::Element {
                            bounds: Some(bounds), ..
                        } = target
                            && let Some(selector) = selector_for(screen, bounds)
                        {
                            *target = Target::selector(&selector);
                            changed = true;
                        }
                    }
                }
                step
            })
            .collect();
        if changed {
            on_progress(&self.progress("selectors", self.best.len()));
            self.attempt(&candidate).await?;
        }
        Ok(())
    }

    /// Each typed text cut to the shortest prefix that still violates (a binary search
    /// over its length: the text a bug needs is often a length, e.g. a note over 40 characters).
    async fn shorter_texts(&mut self, on_progress: &mut impl FnMut(&ShrinkProgress)) -> Result<(), Error> {
        let mut index = 0;
        while index < self.best.len() {
            let Some(Action::InputText { text, .. }) = &self.best[index].action else {
                index += 1;
                continue;
            };
            let original: Vec<char> = text.chars().collect();
            // `works` still violates; `fails` is known not to (or is untried: 0).
            let (mut fails, mut works) = (0usize, original.len());
            while works - fails > 1 && self.stopped.is_none() && index < self.best.len() {
                let middle = fails + (works - fails) / 2;
                let mut candidate = self.best.clone();
                if let Some(Action::InputText { text, .. }) = &mut candidate[index].action {
                    *text = original[..middle].iter().collect();
                }
                on_progress(&self.progress("text", self.best.len()));
                let length = self.best.len();
                if self.attempt(&candidate).await? {
                    works = middle;
                    // Steps were dropped too: `index` may no longer be this text's.
                    if self.best.len() != length {
                        break;
                    }
                } else {
                    fails = middle;
                }
            }
            index += 1;
        }
        Ok(())
    }
}

/// How a candidate's replay went.
enum Tried {
    /// The property was violated after `consumed` script steps, of which `skipped` were
    /// skipped (their target not on screen).
    Violated { consumed: usize, skipped: Vec<usize> },
    /// It was not (or the replay failed).
    Failed,
}

/// A digest of a sequence of steps, to remember the ones that failed.
fn fingerprint(steps: &[ScriptStep]) -> [u8; 32] {
    use sha2::Digest;
    let mut hasher = sha2::Sha256::new();
    for step in steps {
        // Serialising a step cannot fail (plain data); a failure would only miss the cache.
        hasher.update(serde_json::to_vec(step).unwrap_or_default());
        hasher.update([0x1e]);
    }
    hasher.finalize().into()
}

/// The targets that name an element, which a selector may stand for: not a swipe's
/// ends, which are points (a selector would move them to the element's centre).
fn element_targets_mut(action: &mut Action) -> Vec<&mut Target> {
    match action {
        Action::Swipe { .. } => Vec::new(),
        other => other.targets_mut(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn device(device: &str) -> DeviceChoice {
        let options = DeviceOptions {
            device: Some(device.into()),
            ..DeviceOptions::default()
        };
        DeviceChoice::resolve(&options, 1).expect("a device")
    }

    #[test]
    fn a_deterministic_device_replays_each_candidate_once_unless_told_otherwise() {
        let resolve = |chosen: ShrinkSettings, on: &str| {
            ShrinkOptions::resolve(chosen, &device(on), None, "out".into()).expect("resolves")
        };
        let sim = resolve(ShrinkSettings::default(), "sim");
        assert_eq!((sim.retries, sim.budget), (1, Duration::from_secs(300)));
        assert_eq!(resolve(ShrinkSettings::default(), "android").retries, 3);
        let chosen = ShrinkSettings {
            budget: Some("10s".into()),
            retries: Some(2),
        };
        let sim = resolve(chosen, "sim");
        assert_eq!((sim.retries, sim.budget), (2, Duration::from_secs(10)));
        let bad = ShrinkSettings {
            budget: Some("soon".into()),
            retries: None,
        };
        let error = ShrinkOptions::resolve(bad, &device("sim"), None, "out".into()).expect_err("soon");
        assert!(error.to_string().starts_with("budget"), "{error}");
    }
}
