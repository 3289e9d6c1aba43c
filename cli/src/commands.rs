//! One function per subcommand: turn arguments into the library's plain values,
//! call it, print what it returns. Nothing here decides how uatu behaves.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context as _;
use uatu::devices::DeviceChoice;
use uatu::run::replay::{Origin, Replay, Script, replay_config};
use uatu::run::{Outcome, Progress};
use uatu::settings::{RunConfig, Settings, parse_duration};
use uatu::shrink::{ShrinkOptions, ShrinkProgress, default_output};
use uatu::trace::Summary;
use uatu::trace::{read_meta, read_summary};
use uatu::{Error, ExitStatus};
use uatu_sim::{Bugs, SimConfig, Simulator};

use crate::args::{
    BuildArgs, CheckArgs, Cli, Command, DoctorArgs, InspectArgs, PluginBuildArgs, PluginCommand,
    PluginListArgs, PluginNewArgs, ReplayArgs, ReportArgs, RunArgs, ShrinkArgs, SimArgs,
};
use crate::report::verdict_table;

/// Runs one command and returns the exit status it earned.
pub fn dispatch(cli: Cli) -> anyhow::Result<ExitStatus> {
    match cli.command {
        Command::Run(args) => run(*args),
        Command::Build(args) => build(args),
        Command::Check(args) => check(args),
        Command::Replay(args) => replay(*args),
        Command::Shrink(args) => shrink(*args),
        Command::Sim(args) => sim(args),
        Command::Inspect(args) => inspect(args),
        Command::Report(args) => report(args),
        Command::Doctor(args) => doctor(args),
        Command::Plugin(PluginCommand::List(args)) => plugin_list(args),
        Command::Plugin(PluginCommand::Build(args)) => plugin_build(args),
        Command::Plugin(PluginCommand::New(args)) => plugin_new(args),
        Command::Version => {
            println!("uatu {}", uatu::VERSION);
            println!(
                "spec ABI {} (provider sha256 {})",
                uatu::spec::SPEC_ABI,
                uatu::spec::provider::sha256()
            );
            println!("plugin contract uatu:plugin@{}", uatu::plugin::CONTRACT_VERSION);
            println!("SDK socket protocol {}", uatu_device::agent::PROTOCOL_VERSION);
            Ok(ExitStatus::Ok)
        }
    }
}

fn runtime() -> Result<tokio::runtime::Runtime, Error> {
    tokio::runtime::Runtime::new().map_err(Error::Runtime)
}

/// `uatu run`.
fn run(args: RunArgs) -> anyhow::Result<ExitStatus> {
    let file = Settings::from_file(args.config.as_deref()).map_err(Error::from)?;
    let flags = args.settings.clone();
    let mut config = RunConfig::resolve(args.settings, file.clone()).map_err(Error::from)?;
    let file_read = Settings::file_to_read(args.config.as_deref());
    config.rerun = crate::rerun::run_line(&flags, file_read.as_deref(), config.seed);
    let json = config.json;
    let progress = progress_bar(&config);
    let runtime = runtime()?;
    let interrupted = Arc::new(AtomicBool::new(false));
    let outcome = runtime.block_on(async {
        // Ctrl-C ends the run after the current step, with a complete trace.
        interrupt_on_ctrl_c(&interrupted);
        uatu::run::execute(config, interrupted.clone(), |step: &Progress| {
            progress.set_position(step.steps);
            progress.set_message(format!("screen {} · {} violated", step.screen, step.violated));
        })
        .await
    })?;
    progress.finish_and_clear();
    let shrunk =
        match args.shrink && outcome.trace_incomplete.is_none() && !interrupted.load(Ordering::SeqCst) {
            true => shrink_violations(&runtime, &outcome.summary, flags, file, json, &interrupted),
            false => Vec::new(),
        };
    if json {
        let mut summary = serde_json::to_value(&outcome.summary)?;
        if args.shrink {
            summary["shrunk"] = serde_json::to_value(&shrunk)?;
        }
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        print_summary(&outcome);
        for line in &shrunk {
            println!("{line}");
        }
    }
    report_errors(&outcome);
    if let Some(output) = &args.report {
        let run_dir = Path::new(&outcome.summary.run_dir);
        match uatu::inspect::write_report(run_dir, output, uatu::inspect::ReportOptions::default()) {
            Ok(stats) if !json => println!("report: {} ({} KB)", stats.path.display(), stats.bytes / 1024),
            Ok(_) => {}
            // The run's verdict stands; a report that could not be written is said, and fails the run.
            Err(error) => {
                eprintln!("error: the report: {}", uatu::errors::chain(&error));
                return Ok(match outcome.status {
                    ExitStatus::Ok => ExitStatus::Infrastructure,
                    status => status,
                });
            }
        }
    }
    Ok(outcome.status)
}

fn report_errors(outcome: &Outcome) {
    if let Some(error) = &outcome.error {
        eprintln!("error: {}", uatu::errors::chain(error));
    }
    if let Some(incomplete) = &outcome.trace_incomplete {
        eprintln!(
            "error: the trace is incomplete: {}",
            uatu::errors::chain(&incomplete.error)
        );
    }
}

/// Sets `interrupted` at Ctrl-C (the run, replay or shrink stops at its next step).
fn interrupt_on_ctrl_c(interrupted: &Arc<AtomicBool>) {
    let flag = interrupted.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            flag.store(true, Ordering::SeqCst);
        }
    });
}

/// `uatu run --shrink`: each violated property shrunk, one line (or JSON report) each.
fn shrink_violations(
    runtime: &tokio::runtime::Runtime,
    summary: &Summary,
    flags: Settings,
    file: Settings,
    json: bool,
    interrupted: &Arc<AtomicBool>,
) -> Vec<serde_json::Value> {
    let run_dir = Path::new(&summary.run_dir);
    let violated = summary.properties.iter().filter(|p| p.verdict == "violated");
    let mut lines = Vec::new();
    for property in violated {
        let shrunk = (|| -> Result<uatu::shrink::ShrinkReport, Error> {
            let origin = Origin::of(&read_meta(run_dir).map_err(|source| Error::NotARun {
                run_dir: run_dir.to_path_buf(),
                source,
            })?);
            let mut config = replay_config(flags.clone(), &origin, file.clone())?;
            let output = default_output(run_dir).with_file_name(format!(
                "{}-{}",
                default_output(run_dir)
                    .file_name()
                    .unwrap_or_default()
                    .to_string_lossy(),
                property.name
            ));
            config.rerun = crate::rerun::replay_line(&output);
            let options = ShrinkOptions {
                property: Some(property.name.clone()),
                budget: parse_duration("budget", "5m")?,
                retries: default_retries(&config),
                output: Some(output),
            };
            let progress = shrink_progress(json);
            let report = runtime.block_on(uatu::shrink::shrink(
                run_dir,
                config,
                options,
                interrupted.clone(),
                |p: &ShrinkProgress| show_shrink_progress(&progress, &property.name, p),
            ));
            progress.finish_and_clear();
            report
        })();
        lines.push(match (shrunk, json) {
            (Ok(report), true) => serde_json::to_value(&report).unwrap_or_default(),
            (Ok(report), false) => serde_json::Value::String(format!(
                "shrunk: {} from step {} to {} steps ({} actions) → {}",
                report.property,
                report.original_step,
                report.length,
                report.actions,
                report.output.display()
            )),
            (Err(error), true) => serde_json::json!({
                "property": property.name,
                "error": uatu::errors::chain(&error),
            }),
            (Err(error), false) => serde_json::Value::String(format!(
                "shrunk: {} could not be shrunk: {}",
                property.name,
                uatu::errors::chain(&error)
            )),
        });
    }
    lines
}

/// One replay per candidate on a deterministic device (the simulator), three elsewhere.
fn default_retries(config: &RunConfig) -> u32 {
    match config.device.kind().deterministic() {
        true => 1,
        false => 3,
    }
}

fn shrink_progress(json: bool) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new_spinner();
    if json {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    bar
}

fn show_shrink_progress(bar: &indicatif::ProgressBar, property: &str, progress: &ShrinkProgress) {
    bar.set_message(format!(
        "shrinking {property}: {} · {} candidates tried · best {} steps",
        progress.phase, progress.tried, progress.length
    ));
    bar.tick();
}

/// `uatu replay RUN_DIR` or `uatu replay --script repro.json`.
fn replay(args: ReplayArgs) -> anyhow::Result<ExitStatus> {
    let file = Settings::from_file(args.config.as_deref()).map_err(Error::from)?;
    let (mut script, recorded_steps) = match (&args.script, &args.run) {
        (Some(path), _) => (Script::read(path).map_err(Error::from)?, None),
        (None, Some(run)) => (
            Script::from_run(run, args.until).map_err(Error::from)?,
            // Without --until, as many steps as the run had: the same run again.
            read_summary(run).ok().map(|summary| summary.steps),
        ),
        (None, None) => anyhow::bail!("give a run directory or --script repro.json"),
    };
    let rerun = crate::rerun::replay_args_line(&args);
    if let Some(until) = args.until {
        script.steps.truncate(until as usize);
    }
    let flags_max_steps = args.settings.max_steps;
    let mut config = replay_config(args.settings, &script.origin, file).map_err(Error::from)?;
    config.max_steps = flags_max_steps
        .or(args.until.map(|until| until + 1))
        .or(recorded_steps);
    config.rerun = rerun;
    let json = config.json;
    let progress = progress_bar(&config);
    let replay = Replay {
        script,
        stop_at_violation_of: None,
        stop_at_missing_target: false,
        verdicts_only: false,
    };
    let outcome = runtime()?.block_on(async {
        let interrupted = Arc::new(AtomicBool::new(false));
        interrupt_on_ctrl_c(&interrupted);
        uatu::run::replay(config, replay, interrupted, |step: &Progress| {
            progress.set_position(step.steps);
            progress.set_message(format!("screen {} · {} violated", step.screen, step.violated));
        })
        .await
    })?;
    progress.finish_and_clear();
    if json {
        println!("{}", serde_json::to_string_pretty(&outcome.summary)?);
    } else {
        print_summary(&outcome);
        if let Some(report) = &outcome.replay {
            println!(
                "replay: {} script steps used; {}; {}",
                report.consumed,
                match report.diverged.first() {
                    None => "every screen matched the recording".to_string(),
                    Some(first) => format!(
                        "{} screens differed from the recording (first at step {first})",
                        report.diverged.len()
                    ),
                },
                match report.target_missing {
                    None => "every target was on screen".to_string(),
                    Some(step) => format!("a target was missing at step {step} (skipped)"),
                }
            );
        }
    }
    report_errors(&outcome);
    Ok(outcome.status)
}

/// `uatu inspect`.
fn inspect(args: InspectArgs) -> anyhow::Result<ExitStatus> {
    let runs = uatu::inspect::Runs::open(&args.path).map_err(Error::from)?;
    runtime()?.block_on(async {
        let server = uatu::inspect::serve(runs.clone(), args.port)
            .await
            .map_err(Error::from)?;
        let url = match runs.single() {
            Some(id) => format!("http://{}/runs/{id}", server.address),
            None => format!("http://{}/", server.address),
        };
        println!(
            "uatu inspect: serving {} on {url} (Ctrl-C stops)",
            args.path.display()
        );
        if !args.no_open {
            open_browser(&url);
        }
        tokio::select! {
            served = server.run() => served.map_err(Error::from)?,
            _ = tokio::signal::ctrl_c() => {}
        }
        Ok(ExitStatus::Ok)
    })
}

/// Opens `url` in the desktop's browser, if there is one; the address is printed either way.
fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    let spawned = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if spawned.is_err() {
        eprintln!("note: could not start `{opener}`; open {url} yourself");
    }
}

/// `uatu report`.
fn report(args: ReportArgs) -> anyhow::Result<ExitStatus> {
    let options = uatu::inspect::ReportOptions { around: args.around };
    let stats = uatu::inspect::write_report(&args.run, &args.output, options).map_err(Error::from)?;
    println!(
        "report: {} ({} KB: {} steps, {} screenshots inlined)",
        stats.path.display(),
        stats.bytes / 1024,
        stats.steps,
        stats.screenshots
    );
    Ok(ExitStatus::Ok)
}

/// `uatu shrink RUN_DIR`.
fn shrink(args: ShrinkArgs) -> anyhow::Result<ExitStatus> {
    let file = Settings::from_file(args.config.as_deref()).map_err(Error::from)?;
    let meta = read_meta(&args.run).map_err(|source| Error::NotARun {
        run_dir: args.run.clone(),
        source,
    })?;
    let mut config = replay_config(args.settings, &Origin::of(&meta), file).map_err(Error::from)?;
    let output = args.into.clone().unwrap_or_else(|| default_output(&args.run));
    config.rerun = crate::rerun::replay_line(&output);
    let json = config.json;
    let options = ShrinkOptions {
        property: args.property.clone(),
        budget: parse_duration("budget", &args.budget).map_err(Error::from)?,
        retries: args.retries.unwrap_or_else(|| default_retries(&config)),
        output: Some(output),
    };
    let progress = shrink_progress(json);
    let name = args
        .property
        .clone()
        .unwrap_or_else(|| "the first violation".into());
    let report = runtime()?.block_on(async {
        let interrupted = Arc::new(AtomicBool::new(false));
        interrupt_on_ctrl_c(&interrupted);
        uatu::shrink::shrink(&args.run, config, options, interrupted, |p: &ShrinkProgress| {
            show_shrink_progress(&progress, &name, p)
        })
        .await
    });
    progress.finish_and_clear();
    let report = report?;
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "uatu shrink: `{}` (violated at step {}) reproduced in {} steps ({} actions), from {}; {} candidates in {:.1} s{}",
            report.property,
            report.original_step,
            report.length,
            report.actions,
            report.original_length,
            report.tried,
            report.wall_ms as f64 / 1000.0,
            match report.ended {
                "budget" => " (the budget ran out: the best so far)",
                "interrupted" => " (interrupted: the best so far)",
                _ => "",
            }
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
    }
    Ok(ExitStatus::Violated)
}

fn progress_bar(config: &RunConfig) -> indicatif::ProgressBar {
    let bar = match config.max_steps {
        Some(max) => indicatif::ProgressBar::new(max),
        None => indicatif::ProgressBar::no_length(),
    };
    if config.json {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    bar.set_style(
        indicatif::ProgressStyle::with_template(match config.max_steps {
            Some(_) => "{spinner} step {pos}/{len} [{elapsed}] {msg}",
            None => "{spinner} step {pos} [{elapsed}] {msg}",
        })
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar
}

fn print_summary(outcome: &Outcome) {
    let summary: &Summary = &outcome.summary;
    let seconds = summary.wall_ms as f64 / 1000.0;
    println!(
        "uatu: {} steps in {seconds:.1} s ({:.1} s of device time), stopped by {}",
        summary.steps,
        summary.device_ms as f64 / 1000.0,
        summary.stopped
    );
    println!();
    print!("{}", verdict_table(&summary.properties));
    println!();
    let counts = &summary.counts;
    println!(
        "{} violated, {} passed, {} inconclusive, {} unmet; {} app crashes, {} spec errors",
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
    match &outcome.trace_incomplete {
        Some(incomplete) => match incomplete.last_step {
            Some(step) => println!(
                "trace:  {} (incomplete: it ends at step {step}; the verdicts above cover every step)",
                summary.run_dir
            ),
            None => println!(
                "trace:  {} (incomplete: it holds no step; the verdicts above cover every step)",
                summary.run_dir
            ),
        },
        None => println!("trace:  {}", summary.run_dir),
    }
    println!("re-run: {}", summary.rerun);
}

/// `uatu build spec.ts -o spec.wasm`.
fn build(args: BuildArgs) -> anyhow::Result<ExitStatus> {
    let output = args
        .output
        .clone()
        .unwrap_or_else(|| args.spec.with_extension("wasm"));
    let module =
        uatu::spec::build(&args.spec).map_err(|error| Error::from(uatu::spec::LoadError::from(error)))?;
    uatu::wasm::write_atomically(&output, &module.to_bytes())
        .map_err(|source| Error::io("writing", &output, source))?;
    eprintln!(
        "built {} → {} ({} bytes of bytecode)",
        args.spec.display(),
        output.display(),
        module.bytecode.len()
    );
    Ok(ExitStatus::Ok)
}

/// `uatu check --spec spec.ts runs/<id>`.
fn check(args: CheckArgs) -> anyhow::Result<ExitStatus> {
    let (report, status) = uatu::run::check(&args.spec, &args.run, args.strict)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "uatu check: {} over {} steps of {}",
            args.spec.display(),
            report.steps,
            report.run_dir
        );
        if report.torn {
            println!("(the run's last record was cut off: it was killed; every complete step was checked)");
        }
        println!();
        print!("{}", verdict_table(&report.properties));
    }
    Ok(status)
}

/// The simulator of `uatu sim` could not start, stop or draw its screens.
fn sim_error(error: uatu_sim::SimError) -> Error {
    Error::from(uatu::devices::ConnectError::Start {
        device: "sim".into(),
        source: Box::new(error),
    })
}

/// `uatu sim`.
fn sim(args: SimArgs) -> anyhow::Result<ExitStatus> {
    let bugs = Bugs::parse(&args.bugs).context("--bugs")?;
    let latency = parse_duration("--latency", &args.latency).map_err(Error::from)?;
    uatu_sim::render::check_scale(args.scale).context("--scale")?;
    let config = SimConfig {
        bugs,
        latency,
        seed: args.seed,
        scale: args.scale,
        ..SimConfig::default()
    };
    if let Some(dir) = &args.render_screens {
        let written = uatu_sim::render_screens(&config, dir).map_err(sim_error)?;
        for path in written {
            println!("{}", path.display());
        }
        return Ok(ExitStatus::Ok);
    }
    runtime()?.block_on(async {
        let handle = Simulator::start(config.clone(), args.listen, args.agent_socket.clone())
            .await
            .map_err(sim_error)?;
        println!("uatu sim: serving driver.proto on {}", handle.addr());
        println!(
            "  app {} · bugs: {} · latency {:?} · seed {} · screenshot scale {}",
            config.bundle_id, config.bugs, config.latency, config.seed, config.scale
        );
        match &args.agent_socket {
            Some(path) => println!("  SDK connects to {}", path.display()),
            None => println!("  no --agent-socket: the app runs without an SDK connection"),
        }
        println!("Press Ctrl-C to stop.");
        tokio::signal::ctrl_c().await.map_err(Error::Runtime)?;
        handle.shutdown().await.map_err(sim_error)?;
        Ok(ExitStatus::Ok)
    })
}

/// `uatu doctor [--device D]`.
fn doctor(args: DoctorArgs) -> anyhow::Result<ExitStatus> {
    if args.device.device.is_none() {
        explain_real_devices();
        return Ok(ExitStatus::Infrastructure);
    }
    let defaults = Settings::defaults();
    let options = args.device.over(defaults.device.clone());
    let device = DeviceChoice::resolve(&options, 1).map_err(Error::from)?;
    let bundle_id = args
        .bundle_id
        .or_else(|| defaults.bundle_id.clone())
        .unwrap_or_default();
    let checks = runtime()?.block_on(uatu::doctor::check_device(&device, &bundle_id));
    for check in &checks {
        let mark = if check.passed { "✓" } else { "✗" };
        println!("{mark} {:<12} {}", check.name, check.detail);
    }
    let failed = checks.iter().filter(|check| !check.passed).count();
    if failed == 0 {
        println!("all {} checks passed", checks.len());
        Ok(ExitStatus::Ok)
    } else {
        println!("{failed} of {} checks failed", checks.len());
        Ok(ExitStatus::Infrastructure)
    }
}

fn explain_real_devices() {
    println!("No device given. To check one:");
    println!("  uatu doctor --device sim                   the built-in simulated Folio app");
    println!("  uatu doctor --device sidecar:<host:port>   a sidecar driving a real device");
    println!("  uatu doctor --device web --url <URL>       a web app in headless Chromium");
    println!();
    println!("A real Android device needs:");
    for requirement in uatu::doctor::real_device_requirements() {
        let mark = if requirement.found { "✓" } else { "✗" };
        println!("  {mark} {:<9} {}", requirement.tool, requirement.why);
    }
    println!("  and the app's debug build linked with the uatu SDK.");
}

/// `uatu plugin list`.
fn plugin_list(args: PluginListArgs) -> anyhow::Result<ExitStatus> {
    let plugins = uatu::plugin::list_builtins(&uatu::plugin::LoadOptions::default()).map_err(Error::from)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&plugins)?);
        return Ok(ExitStatus::Ok);
    }
    for plugin in &plugins {
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
    Ok(ExitStatus::Ok)
}

/// `uatu plugin build DIR`.
fn plugin_build(args: PluginBuildArgs) -> anyhow::Result<ExitStatus> {
    let output = uatu::plugin::build_plugin(&args.crate_dir, args.output.as_deref()).map_err(Error::from)?;
    println!("{}", output.display());
    Ok(ExitStatus::Ok)
}

/// `uatu plugin new NAME --kind K`.
fn plugin_new(args: PluginNewArgs) -> anyhow::Result<ExitStatus> {
    let dir = uatu::plugin::scaffold(Path::new(&args.name), args.kind).map_err(Error::from)?;
    println!(
        "created {} ({} plugin); build it with `uatu plugin build {}`",
        dir.display(),
        args.kind,
        dir.display()
    );
    Ok(ExitStatus::Ok)
}
