//! Everything the binary prints: what a person reads (tables, summaries, one line per
//! result), the JSON of `--json`, progress on a terminal, and errors. The commands hand
//! their results here and print nothing themselves.

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use uatu::action::ResolvedAction;
use uatu::doctor::{Check, Requirement};
use uatu::inspect::ReportStats;
use uatu::plugin::{BuiltInListing, Kind};
use uatu::run::{CheckReport, Outcome, Progress};
use uatu::shrink::{ShrinkProgress, ShrinkReport};
use uatu::trace::{PropertySummary, Summary};
use uatu_sim::SimConfig;

use crate::errors::CliError;

/// Each violated property shrunk by `uatu run --shrink`, or why it could not be.
pub type Shrunk = [(String, Result<ShrinkReport, uatu::Error>)];

/// `value` as pretty JSON on stdout.
pub fn json(value: &impl serde::Serialize) -> Result<(), CliError> {
    let text = serde_json::to_string_pretty(value).map_err(|error| CliError::Output(error.into()))?;
    println!("{text}");
    Ok(())
}

/// `error: ...`, the error with its chain, on stderr.
pub fn error(error: &CliError) {
    eprintln!("error: {}", uatu::errors::chain(error));
}

/// `error: <what>: ...` on stderr, for a failure that does not end the command.
pub fn error_about(what: &str, error: &uatu::Error) {
    eprintln!("error: {what}: {}", uatu::errors::chain(error));
}

/// `warning: ...` on stderr.
pub fn warning(text: &impl std::fmt::Display) {
    eprintln!("warning: {text}");
}

/// A question on stderr, the answer to be typed after it.
pub fn prompt(question: &str) {
    eprint!("{question}: ");
}

/// Ends a prompt's line that got no answer, so the error that follows starts on its own.
pub fn end_of_prompt() {
    eprintln!();
}

/// What `uatu init` wrote into `dir`, and what to do next.
pub fn initialized(dir: &Path, written: &[PathBuf], app: &uatu::init::App) {
    println!("uatu init: wrote");
    for path in written {
        println!("  {}", path.display());
    }
    println!();
    println!("Next, in {}:", dir.display());
    if let uatu::init::App::Web { url } = app {
        println!("  (serve the app at {url})");
    }
    println!(
        "  uatu run                                  explore the app with uatu/spec.ts (reads uatu.toml)"
    );
    println!(
        "  cd uatu && npm install && npx tsc         the spec's types, for your editor and a type-check"
    );
    println!(
        "  edit uatu/spec.ts                         a guide: {}/writing-specs.md",
        uatu::init::docs_url()
    );
}

/// `note: ...` on stderr.
pub fn note(text: &str) {
    eprintln!("note: {text}");
}

/// One path per line.
pub fn paths(paths: &[PathBuf]) {
    for path in paths {
        println!("{}", path.display());
    }
}

/// The progress line of a run or replay (on a terminal only, and not with `--json`).
pub struct StepProgress(indicatif::ProgressBar);

impl StepProgress {
    /// A bar of `max_steps`, or a counter when the run has no step limit.
    pub fn new(max_steps: Option<u64>, json: bool) -> StepProgress {
        let bar = match max_steps {
            Some(max) => indicatif::ProgressBar::new(max),
            None => indicatif::ProgressBar::no_length(),
        };
        if json {
            bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
        }
        bar.set_style(
            indicatif::ProgressStyle::with_template(match max_steps {
                Some(_) => "{spinner} step {pos}/{len} [{elapsed}] {msg}",
                None => "{spinner} step {pos} [{elapsed}] {msg}",
            })
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        StepProgress(bar)
    }

    /// After each step.
    pub fn show(&self, step: &Progress) {
        self.0.set_position(step.steps);
        self.0
            .set_message(format!("screen {} · {} violated", step.screen, step.violated));
    }

    /// Removes the line.
    pub fn finish(&self) {
        self.0.finish_and_clear();
    }
}

/// The spinner of a shrink (hidden with `--json`).
pub struct ShrinkSpinner(indicatif::ProgressBar);

impl ShrinkSpinner {
    /// A spinner, hidden with `--json`.
    pub fn new(json: bool) -> ShrinkSpinner {
        let bar = indicatif::ProgressBar::new_spinner();
        if json {
            bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
        }
        ShrinkSpinner(bar)
    }

    /// After each candidate.
    pub fn show(&self, property: &str, progress: &ShrinkProgress) {
        self.0.set_message(format!(
            "shrinking {property}: {} · {} candidates tried · best {} steps",
            progress.phase, progress.tried, progress.length
        ));
        self.0.tick();
    }

    /// Removes the line.
    pub fn finish(&self) {
        self.0.finish_and_clear();
    }
}

/// `uatu run`'s result: the summary (JSON or text), each shrunk violation when
/// `--shrink` was asked, then the errors that ended the run early.
pub fn run_outcome(outcome: &Outcome, shrunk: Option<&Shrunk>, json: bool) -> Result<(), CliError> {
    if json {
        let mut summary = serde_json::to_value(&outcome.summary).map_err(|e| CliError::Output(e.into()))?;
        if let Some(shrunk) = shrunk {
            let shrunk: Vec<serde_json::Value> = shrunk
                .iter()
                .map(|(property, result)| match result {
                    Ok(report) => serde_json::to_value(report).unwrap_or_default(),
                    Err(error) => serde_json::json!({
                        "property": property,
                        "error": uatu::errors::chain(error),
                    }),
                })
                .collect();
            summary["shrunk"] = serde_json::Value::Array(shrunk);
        }
        self::json(&summary)?;
    } else {
        run_summary(outcome);
        for (property, result) in shrunk.unwrap_or_default() {
            match result {
                Ok(report) => println!(
                    "shrunk: {} from step {} to {} steps ({} actions) → {}",
                    report.property,
                    report.original_step,
                    report.length,
                    report.actions,
                    report.output.display()
                ),
                Err(error) => println!(
                    "shrunk: {property} could not be shrunk: {}",
                    uatu::errors::chain(error)
                ),
            }
        }
    }
    run_errors(outcome);
    Ok(())
}

/// `uatu replay`'s result: the summary, how the screens compared, the errors.
pub fn replay_outcome(outcome: &Outcome, json: bool) -> Result<(), CliError> {
    if json {
        self::json(&outcome.summary)?;
    } else {
        run_summary(outcome);
        if let Some(report) = &outcome.replay {
            let screens = match report.diverged.first() {
                None => "every screen matched the recording".to_string(),
                Some(first) => format!(
                    "{} screens differed from the recording (first at step {first})",
                    report.diverged.len()
                ),
            };
            let targets = match report.target_missing {
                None => "every target was on screen".to_string(),
                Some(step) => format!("a target was missing at step {step} (skipped)"),
            };
            println!(
                "replay: {} script steps used; {screens}; {targets}",
                report.consumed
            );
        }
    }
    run_errors(outcome);
    Ok(())
}

fn run_errors(outcome: &Outcome) {
    if let Some(error) = &outcome.error {
        eprintln!("error: {}", uatu::errors::chain(error));
    }
    if let Some(incomplete) = &outcome.trace_incomplete {
        error_about("the trace is incomplete", &incomplete.error);
    }
}

fn run_summary(outcome: &Outcome) {
    let summary: &Summary = &outcome.summary;
    println!(
        "uatu: {} steps in {:.1} s ({:.1} s of device time), stopped by {}",
        summary.steps,
        summary.wall_ms as f64 / 1000.0,
        summary.device_ms as f64 / 1000.0,
        summary.stopped
    );
    println!();
    print!("{}", verdict_table(&summary.properties));
    println!();
    let counts = &summary.counts;
    let not_responding = match counts.app_not_responding {
        0 => String::new(),
        anrs => format!(", {anrs} app not responding (ANR)"),
    };
    println!(
        "{} violated, {} passed, {} inconclusive, {} unmet; {} app crashes{not_responding}, {} spec errors",
        counts.violated,
        counts.passed,
        counts.inconclusive,
        counts.unmet,
        counts.app_crashes,
        counts.spec_errors
    );
    if counts.unmet > 0 && summary.exit_code == 0 {
        println!(
            "warning: {} properties unmet (an `eventually` never came true); --strict fails the run on them",
            counts.unmet
        );
    }
    let incomplete = outcome
        .trace_incomplete
        .as_ref()
        .map(|incomplete| match incomplete.last_step {
            Some(step) => {
                format!(" (incomplete: it ends at step {step}; the verdicts above cover every step)")
            }
            None => " (incomplete: it holds no step; the verdicts above cover every step)".to_string(),
        });
    println!("trace:  {}{}", summary.run_dir, incomplete.unwrap_or_default());
    println!("re-run: {}", summary.rerun);
}

/// The verdict table, one row per property, violations first.
pub fn verdict_table(properties: &[PropertySummary]) -> String {
    let mut rows: Vec<[String; 4]> = properties
        .iter()
        .map(|p| {
            [
                p.name.clone(),
                p.verdict.clone(),
                p.first_violation_step
                    .map(|s| s.to_string())
                    .unwrap_or_else(|| "-".into()),
                p.led_by
                    .as_ref()
                    .map(ResolvedAction::describe)
                    .unwrap_or_else(|| "-".into()),
            ]
        })
        .collect();
    let rank = |verdict: &str| match verdict {
        "violated" => 0,
        "unmet" => 1,
        "inconclusive" => 2,
        _ => 3,
    };
    rows.sort_by_key(|row| rank(&row[1]));
    let header = ["property", "verdict", "first step", "led by"].map(String::from);
    let widths: Vec<usize> = (0..3)
        .map(|column| {
            rows.iter()
                .chain(std::iter::once(&header))
                .map(|row| row[column].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut table = String::new();
    for row in std::iter::once(&header).chain(&rows) {
        let _ = writeln!(
            table,
            "  {:<w0$}  {:<w1$}  {:>w2$}  {}",
            row[0],
            row[1],
            row[2],
            row[3],
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2]
        );
    }
    table
}

/// `uatu shrink`'s result: the reproducer and where its files are.
pub fn shrink_report(report: &ShrinkReport, json: bool) -> Result<(), CliError> {
    if json {
        return self::json(report);
    }
    let ended = match report.ended {
        "budget" => " (the budget ran out: the best so far)",
        "interrupted" => " (interrupted: the best so far)",
        _ => "",
    };
    println!(
        "uatu shrink: `{}` (violated at step {}) reproduced in {} steps ({} actions), from {}; {} candidates in {:.1} s{ended}",
        report.property,
        report.original_step,
        report.length,
        report.actions,
        report.original_length,
        report.tried,
        report.wall_ms as f64 / 1000.0,
    );
    println!("trace:   {}", report.output.display());
    println!(
        "script:  {}",
        report.output.join(uatu::shrink::REPRO_JSON).display()
    );
    println!(
        "maestro: {}",
        report.output.join(uatu::shrink::REPRO_YAML).display()
    );
    println!("replay:  uatu replay {}", report.output.display());
    Ok(())
}

/// `uatu check`'s verdicts.
pub fn check_report(spec: &Path, report: &CheckReport) {
    println!(
        "uatu check: {} over {} steps of {}",
        spec.display(),
        report.steps,
        report.run_dir
    );
    if report.torn {
        println!("(the run's last record was cut off: it was killed; every complete step was checked)");
    }
    println!();
    print!("{}", verdict_table(&report.properties));
}

/// `uatu build`'s line (on stderr: stdout stays free for the module's path in scripts).
pub fn built(spec: &Path, output: &Path, bytecode: usize) {
    eprintln!(
        "built {} → {} ({bytecode} bytes of bytecode)",
        spec.display(),
        output.display()
    );
}

/// The report `uatu report` (detailed) or `uatu run --report` wrote.
pub fn report_written(stats: &ReportStats, detailed: bool) {
    match detailed {
        true => println!(
            "report: {} ({} KB: {} steps, {} screenshots inlined)",
            stats.path.display(),
            stats.bytes / 1024,
            stats.steps,
            stats.screenshots
        ),
        false => println!("report: {} ({} KB)", stats.path.display(), stats.bytes / 1024),
    }
}

/// `uatu doctor`'s checks, one per line, and the count.
pub fn doctor_checks(checks: &[Check]) {
    for check in checks {
        let mark = if check.passed { "✓" } else { "✗" };
        println!("{mark} {:<12} {}", check.name, check.detail);
    }
    match checks.iter().filter(|check| !check.passed).count() {
        0 => println!("all {} checks passed", checks.len()),
        failed => println!("{failed} of {} checks failed", checks.len()),
    }
}

/// `uatu doctor` without a device: how to check one, and what a real device needs.
pub fn real_device_requirements(requirements: &[Requirement]) {
    println!("No device given. To check one:");
    println!("  uatu doctor --device sim                   the built-in simulated Folio app");
    println!("  uatu doctor --device sidecar:<host:port>   a sidecar driving a real device");
    println!("  uatu doctor --device web --url <URL>       a web app in headless Chromium");
    println!();
    println!("A real Android device needs:");
    for requirement in requirements {
        let mark = if requirement.found { "✓" } else { "✗" };
        println!("  {mark} {:<9} {}", requirement.tool, requirement.why);
    }
    println!("  and the app's debug build linked with the uatu SDK.");
}

/// `uatu plugin list`: each built-in plugin and its configuration keys.
pub fn plugin_list(plugins: &[BuiltInListing]) {
    for plugin in plugins {
        println!(
            "{}  {} (uatu:plugin@{}): {}",
            plugin.name, plugin.kind, plugin.contract, plugin.summary
        );
        for config in plugin.config {
            println!("    {:<20} default {}", config.key, config.default);
        }
    }
    println!();
    println!("Load one with `--plugin NAME`; configure it under [plugins.NAME] in uatu.toml.");
}

/// `uatu plugin new`'s line.
pub fn plugin_scaffolded(dir: &Path, kind: Kind) {
    println!(
        "created {} ({kind} plugin); build it with `uatu plugin build {}`",
        dir.display(),
        dir.display()
    );
}

/// `uatu sim`'s banner.
pub fn sim_serving(address: SocketAddr, config: &SimConfig, agent_socket: Option<&Path>) {
    println!("uatu sim: serving driver.proto on {address}");
    println!(
        "  app {} · bugs: {} · latency {:?} · seed {} · screenshot scale {}",
        config.bundle_id, config.bugs, config.latency, config.seed, config.scale
    );
    match agent_socket {
        Some(path) => println!("  SDK connects to {}", path.display()),
        None => println!("  no --agent-socket: the app runs without an SDK connection"),
    }
    println!("Press Ctrl-C to stop.");
}

/// `uatu inspect`'s line.
pub fn inspect_serving(path: &Path, url: &str) {
    println!("uatu inspect: serving {} on {url} (Ctrl-C stops)", path.display());
}

/// `uatu version`.
pub fn versions() {
    println!("uatu {}", uatu::VERSION);
    println!(
        "spec ABI {} (provider sha256 {})",
        uatu::spec::SPEC_ABI,
        uatu::spec::provider::sha256()
    );
    println!("plugin contract uatu:plugin@{}", uatu::plugin::CONTRACT_VERSION);
    println!("SDK socket protocol {}", uatu_device::agent::PROTOCOL_VERSION);
}

#[cfg(test)]
mod tests {
    use super::*;
    use uatu::action::{Action, Target};

    #[test]
    fn violations_come_first_with_the_action_that_led_there() {
        let led_by = ResolvedAction {
            action: Action::Tap {
                on: Target::Selector("desc:txn_submit".into()),
            },
            generator: "1:forms".into(),
            point: None,
            bounds: None,
            to_point: None,
            applied: uatu::action::Applied::Unknown,
            detail: String::new(),
        };
        let table = verdict_table(&[
            PropertySummary {
                name: "noCrash".into(),
                verdict: "passed".into(),
                first_violation_step: None,
                led_by: None,
                errors: vec![],
            },
            PropertySummary {
                name: "totalMatches".into(),
                verdict: "violated".into(),
                first_violation_step: Some(41),
                led_by: Some(led_by),
                errors: vec![],
            },
        ]);
        let lines: Vec<&str> = table.lines().collect();
        assert!(lines[0].contains("property") && lines[0].contains("led by"));
        assert!(lines[1].contains("totalMatches") && lines[1].contains("41"));
        assert!(lines[1].contains("tap desc:txn_submit (1:forms)"), "{table}");
        assert!(lines[2].contains("noCrash") && lines[2].contains("passed"));
    }
}
