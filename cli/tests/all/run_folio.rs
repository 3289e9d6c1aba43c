//! End-to-end tests of `uatu run` and `uatu check`: the real binary, the
//! example Folio spec compiled to Wasm, and the simulated device over real
//! gRPC and a real SDK socket.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use uatu::trace::{TraceReader, read_steps};

use crate::support::folio::{SPEC, check, json_of, run_spec, uatu, violated};
/// The spec written from the reference Folio app's behaviour alone (issue 13).
const REFERENCE_SPEC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/folio/reference-spec.ts");

/// Which property of the example spec catches each planted bug.
const CATCHES: &[(&str, &[&str])] = &[
    ("duplicate-account-names", &["accountNamesAreUnique"]),
    ("stale-total", &["totalIsSumOfAccounts"]),
    ("crash-on-long-note", &["noUncaughtExceptions", "noLogcatErrors"]),
    (
        "float-cents",
        // Sums of fractional cents also drift apart in floating point.
        &[
            "amountsAreWholeCents",
            "ledgerBalanceIsSumOfRows",
            "totalIsSumOfAccounts",
        ],
    ),
    (
        "deep-ledger-duplication",
        &[
            "ledgerRowsAreUnique",
            "ledgerCountMatchesAccount",
            "ledgerBalanceIsSumOfRows",
        ],
    ),
    ("slow-login", &["signInCompletesWithin3s"]),
];

/// Runs the Folio spec with `extra` flags into a fresh output directory;
/// returns the exit code, the JSON summary and the run directory.
fn run_folio(output: &Path, extra: &[&str]) -> (i32, Value, PathBuf) {
    run_spec(SPEC, output, extra)
}

fn actions_of(run_dir: &Path) -> Vec<Value> {
    read_steps(run_dir)
        .expect("trace reads")
        .into_iter()
        .map(|record| serde_json::to_value(&record.action).expect("json"))
        .collect()
}

#[test]
fn with_every_bug_on_each_is_caught_by_its_property() {
    let output = tempfile::tempdir().expect("temp dir");
    // The README's command, with the default simulator latency.
    let (code, summary, run_dir) = run_folio(output.path(), &["--seed", "7", "--max-steps", "2000"]);
    assert_eq!(code, 1, "{summary}");
    let violated = violated(&summary);
    for (bug, properties) in CATCHES {
        assert!(
            properties.iter().any(|p| violated.contains(*p)),
            "{bug} not caught; violated: {violated:?}"
        );
    }
    assert_eq!(summary["steps"], 2000);
    let meta: Value =
        serde_json::from_slice(&std::fs::read(run_dir.join("meta.json")).expect("meta")).expect("json");
    assert!(
        meta["ended_at"].is_string(),
        "meta.json rewritten at the end: {meta}"
    );
    assert_eq!(meta["seed"], 7);
    let first = read_steps(&run_dir)
        .expect("trace")
        .into_iter()
        .next()
        .expect("step 0");
    let screenshot = first.screenshot.expect("step 0 has a screenshot");
    assert!(run_dir.join(&screenshot).is_file(), "{screenshot}");
}

/// With no bug planted, neither example spec finds anything: for seeds 1–5 over 2,000 steps no
/// property is violated and no liveness property is left unmet (passed or inconclusive only).
/// The reference spec was written from the reference app's behaviour, so this keeps the
/// simulator's Folio in step with the app it models.
#[test]
fn with_every_bug_off_neither_example_spec_finds_anything() {
    let output = tempfile::tempdir().expect("temp dir");
    let mut findings = Vec::new();
    for spec in [SPEC, REFERENCE_SPEC] {
        let name = Path::new(spec).file_name().expect("a file").to_string_lossy();
        for seed in 1..=5 {
            let seed = seed.to_string();
            let (code, summary, _) = run_spec(
                spec,
                output.path(),
                &[
                    "--seed",
                    &seed,
                    "--max-steps",
                    "2000",
                    "--sim-bugs",
                    "none",
                    "--sim-latency",
                    "0",
                    "--no-screenshots",
                ],
            );
            for property in summary["properties"].as_array().expect("properties") {
                let verdict = property["verdict"].as_str().unwrap_or("?");
                if verdict != "passed" && verdict != "inconclusive" {
                    findings.push(format!(
                        "{name} seed {seed}: {} {verdict} (first at step {})",
                        property["name"], property["first_violation_step"]
                    ));
                }
            }
            if code != 0 {
                findings.push(format!("{name} seed {seed}: exit code {code}"));
            }
        }
    }
    assert!(findings.is_empty(), "false positives:\n{}", findings.join("\n"));
}

#[test]
fn each_bug_alone_violates_only_the_properties_that_catch_it() {
    let output = tempfile::tempdir().expect("temp dir");
    for (bug, properties) in CATCHES {
        let (code, summary, _) = run_folio(
            output.path(),
            &[
                "--seed",
                "7",
                "--max-steps",
                "2000",
                "--sim-bugs",
                bug,
                "--sim-latency",
                "0",
                "--no-screenshots",
            ],
        );
        let violated = violated(&summary);
        assert_eq!(code, 1, "{bug}: {summary}");
        assert!(
            properties.iter().any(|p| violated.contains(*p)),
            "{bug} not caught; violated: {violated:?}"
        );
        let unrelated: Vec<_> = violated
            .iter()
            .filter(|p| !properties.contains(&p.as_str()))
            .collect();
        assert!(unrelated.is_empty(), "{bug} also violated {unrelated:?}");
    }
}

#[test]
fn the_same_seeds_give_the_same_run() {
    let output = tempfile::tempdir().expect("temp dir");
    let flags = [
        "--seed",
        "11",
        "--max-steps",
        "400",
        "--sim-latency",
        "0",
        "--no-screenshots",
    ];
    let (_, first, first_dir) = run_folio(output.path(), &flags);
    let (_, second, second_dir) = run_folio(output.path(), &flags);
    assert_ne!(first_dir, second_dir);
    let actions = actions_of(&first_dir);
    assert_eq!(actions.len(), 400);
    assert!(
        actions.iter().filter(|a| !a.is_null()).count() > 300,
        "the run acted"
    );
    assert_eq!(actions, actions_of(&second_dir), "same seeds, same actions");
    assert_eq!(first["properties"], second["properties"], "same verdicts");
    // Another seed explores differently.
    let (_, _, other_dir) = run_folio(
        output.path(),
        &[
            "--seed",
            "12",
            "--max-steps",
            "400",
            "--sim-latency",
            "0",
            "--no-screenshots",
        ],
    );
    assert_ne!(actions, actions_of(&other_dir));
}

/// The built-in draw runs only the generators it draws: one that throws is
/// reported when drawn (an event of the step, counted as a spec error), and the
/// draw goes on among its siblings, past one that offers nothing.
#[test]
fn a_generator_drawn_on_demand_that_throws_is_reported_and_the_run_goes_on() {
    let dir = tempfile::tempdir().expect("temp dir");
    let spec = dir.path().join("drawn.ts");
    std::fs::write(
        &spec,
        r#"import { actions, always, PressKey, weighted } from "@uatu/spec";
export const properties = { fine: always(() => true) };
export const actionsRoot = weighted(
  [1, actions(() => { throw new TypeError("generator exploded"); }), "bad"],
  [1, actions(() => PressKey({ key: "back" })), "back"],
  [1, actions((s) => s.step >= 0 ? [] : (() => { throw new Error("never drawn"); })()), "silent"],
);
"#,
    )
    .expect("writes the spec");
    let flags = [
        "--seed",
        "3",
        "--max-steps",
        "40",
        "--sim-latency",
        "0",
        "--no-screenshots",
    ];
    let (code, summary, run_dir) = run_spec(&spec.display().to_string(), dir.path(), &flags);
    assert_eq!(code, 0, "{summary}");
    let records = read_steps(&run_dir).expect("trace reads");
    let thrown: Vec<&uatu::trace::Event> = records
        .iter()
        .flat_map(|record| &record.events)
        .filter(|event| matches!(event, uatu::trace::Event::GeneratorError { .. }))
        .collect();
    assert!(
        !thrown.is_empty() && thrown.len() < 40,
        "{} generator errors",
        thrown.len()
    );
    assert!(
        thrown.iter().all(
            |event| matches!(event, uatu::trace::Event::GeneratorError { path, message, .. }
            if path == "0:bad" && message == "TypeError: generator exploded")
        ),
        "{thrown:?}"
    );
    assert_eq!(summary["counts"]["spec_errors"], thrown.len() as u64, "{summary}");
    let evaluated: Vec<_> = records.iter().filter(|record| record.evaluated).collect();
    assert!(
        evaluated.iter().all(|record| record
            .action
            .as_ref()
            .is_some_and(|action| action.generator == "1:back")),
        "every step acts, with the one generator that offers an action"
    );
}

/// A violated property is decided: its predicates stop running (a predicate that
/// throws once its property is violated reports nothing more), the others go on,
/// and `uatu check` reaches the same verdicts.
#[test]
fn a_violated_propertys_predicates_stop_running_and_the_others_go_on() {
    let dir = tempfile::tempdir().expect("temp dir");
    let spec = dir.path().join("decided.ts");
    std::fs::write(
        &spec,
        r#"import { always, PressKey, actions } from "@uatu/spec";
export const properties = {
  early: always((s) => {
    if (s.step >= 4) throw new Error("run after the violation");
    return s.step < 2;
  }),
  late: always((s) => {
    if (s.step >= 6) throw new Error("still running");
    return true;
  }),
};
export const actionsRoot = actions(() => PressKey({ key: "back" }), "back");
"#,
    )
    .expect("writes the spec");
    let flags = [
        "--seed",
        "5",
        "--max-steps",
        "10",
        "--sim-latency",
        "0",
        "--no-screenshots",
    ];
    let (code, summary, run_dir) = run_spec(&spec.display().to_string(), dir.path(), &flags);
    assert_eq!(code, 1, "{summary}");
    let records = read_steps(&run_dir).expect("trace reads");
    let errors: Vec<(u64, String)> = records
        .iter()
        .flat_map(|record| record.events.iter().map(move |event| (record.step, event)))
        .filter_map(|(step, event)| match event {
            uatu::trace::Event::PredicateError { message, .. } => Some((step, message.clone())),
            _ => None,
        })
        .collect();
    assert!(!errors.is_empty(), "the undecided property's predicate runs on");
    assert!(
        errors
            .iter()
            .all(|(step, message)| *step >= 6 && message == "still running"),
        "{errors:?}"
    );
    let early = |record: &uatu::trace::StepRecord| record.properties["early"].status.clone();
    assert!(
        records
            .iter()
            .filter(|r| r.evaluated && r.step >= 2)
            .all(|r| early(r) == "violated")
    );
    let checked = uatu(&[
        "check",
        "--json",
        "--spec",
        &spec.display().to_string(),
        &run_dir.display().to_string(),
    ]);
    let report = json_of(&checked);
    assert_eq!(checked.status.code(), Some(1), "{report}");
    for (i, property) in summary["properties"]
        .as_array()
        .expect("properties")
        .iter()
        .enumerate()
    {
        assert_eq!(
            report["properties"][i]["verdict"], property["verdict"],
            "{report}"
        );
    }
}

#[test]
fn check_over_a_finished_run_reproduces_its_verdicts() {
    let output = tempfile::tempdir().expect("temp dir");
    let (code, summary, run_dir) = run_folio(
        output.path(),
        &[
            "--seed",
            "5",
            "--max-steps",
            "1500",
            "--sim-latency",
            "0",
            "--no-screenshots",
        ],
    );
    let (check_code, report) = check(&run_dir);
    assert_eq!(check_code, code, "same exit code");
    assert_eq!(
        report["properties"], summary["properties"],
        "same verdicts, steps and causes"
    );
    assert!(!violated(&summary).is_empty(), "the comparison covers violations");
}

#[test]
fn an_app_crash_is_recorded_and_the_run_goes_on() {
    let output = tempfile::tempdir().expect("temp dir");
    let (_, summary, run_dir) = run_folio(
        output.path(),
        &[
            "--seed",
            "7",
            "--max-steps",
            "600",
            "--sim-bugs",
            "crash-on-long-note",
            "--sim-latency",
            "0",
            "--no-screenshots",
        ],
    );
    let records = read_steps(&run_dir).expect("trace");
    assert_eq!(records.len(), 600, "the run went on to its end");
    let crash = records
        .iter()
        .position(|r| {
            r.events
                .iter()
                .any(|e| matches!(e, uatu::trace::Event::AppDisconnected { .. }))
        })
        .expect("a crash was recorded");
    assert!(!records[crash].evaluated);
    assert!(
        records[crash]
            .events
            .iter()
            .any(|e| matches!(e, uatu::trace::Event::AppRelaunched))
    );
    let after = &records[crash + 1..];
    assert!(
        after.iter().any(|r| !r.state.exceptions.is_empty()),
        "the exception arrives after the restart"
    );
    assert!(
        after.iter().filter(|r| r.action.is_some()).count() > 10,
        "exploring continued"
    );
    assert!(summary["counts"]["app_crashes"].as_u64().unwrap_or(0) >= 1);
}

#[test]
fn a_host_killed_mid_run_leaves_a_readable_trace() {
    let output = tempfile::tempdir().expect("temp dir");
    let mut child = Command::new(env!("CARGO_BIN_EXE_uatu"))
        .args([
            "run",
            "--spec",
            SPEC,
            "--seed",
            "3",
            "--max-steps",
            "100000",
            "--sim-latency",
            "0",
            "--output",
        ])
        .arg(output.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("starts uatu");
    let trace = loop {
        let found = std::fs::read_dir(output.path())
            .ok()
            .and_then(|mut dirs| dirs.next())
            .and_then(Result::ok)
            .map(|dir| dir.path().join("trace.jsonl"));
        if let Some(trace) =
            found.filter(|t| std::fs::metadata(t).map(|m| m.len() > 200_000).unwrap_or(false))
        {
            break trace;
        }
        assert!(child.try_wait().expect("status").is_none(), "uatu ended early");
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    child.kill().expect("SIGKILL");
    child.wait().expect("reaped");
    let mut reader = TraceReader::open(&trace).expect("opens");
    let steps: Vec<u64> = reader
        .by_ref()
        .map(|r| r.expect("every complete record parses").step)
        .collect();
    assert!(steps.len() > 5);
    assert!(
        steps.iter().enumerate().all(|(i, &s)| s == i as u64),
        "whole steps in order"
    );
    let run_dir = trace.parent().expect("run dir");
    assert!(
        !run_dir.join("summary.json").exists(),
        "a killed run has no summary"
    );
    // uatu check still works over what was recorded.
    let (_, report) = check(run_dir);
    assert_eq!(report["steps"].as_u64(), Some(steps.len() as u64));
}

#[test]
fn ctrl_c_ends_the_run_cleanly_with_a_summary() {
    let output = tempfile::tempdir().expect("temp dir");
    let child = Command::new(env!("CARGO_BIN_EXE_uatu"))
        .args([
            "run",
            "--spec",
            SPEC,
            "--seed",
            "4",
            "--max-steps",
            "100000",
            "--sim-latency",
            "0",
            "--json",
        ])
        .args(["--sim-bugs", "none", "--no-screenshots", "--output"])
        .arg(output.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("starts uatu");
    // Wait until it is stepping, then interrupt it as Ctrl-C would.
    loop {
        let stepping = std::fs::read_dir(output.path())
            .ok()
            .and_then(|mut dirs| dirs.next())
            .and_then(Result::ok)
            .and_then(|dir| std::fs::metadata(dir.path().join("trace.jsonl")).ok())
            .is_some_and(|m| m.len() > 50_000);
        if stepping {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
    let out = child.wait_with_output().expect("uatu ends");
    assert_eq!(
        out.status.code(),
        Some(0),
        "no violation with bugs off, interrupted cleanly"
    );
    let summary: Value = serde_json::from_slice(&out.stdout).expect("the summary is printed");
    assert_eq!(summary["stopped"], "interrupted");
    let run_dir = PathBuf::from(summary["run_dir"].as_str().expect("run dir"));
    assert!(run_dir.join("summary.json").is_file());
    let meta: Value =
        serde_json::from_slice(&std::fs::read(run_dir.join("meta.json")).expect("meta")).expect("json");
    assert!(meta["ended_at"].is_string());
    assert_eq!(
        read_steps(&run_dir).expect("trace").len() as u64,
        summary["steps"].as_u64().expect("steps")
    );
}

/// A run's summary as its `summary.json` holds it, found from the `trace:` line `uatu run` printed.
fn printed_summary(stdout: &str) -> Value {
    let run_dir = stdout
        .lines()
        .find_map(|line| line.strip_prefix("trace:"))
        .unwrap_or_else(|| panic!("no trace: line in\n{stdout}"))
        .trim();
    serde_json::from_slice(&std::fs::read(Path::new(run_dir).join("summary.json")).expect("summary.json"))
        .expect("json")
}

/// The first violation a summary reports: the property, and the step.
fn first_violation(summary: &Value) -> (String, u64) {
    summary["properties"]
        .as_array()
        .expect("properties")
        .iter()
        .filter_map(|p| {
            Some((
                p["name"].as_str()?.to_owned(),
                p["first_violation_step"].as_u64()?,
            ))
        })
        .min_by_key(|(_, step)| *step)
        .unwrap_or_else(|| panic!("nothing violated: {summary}"))
}

/// The `re-run:` line `uatu run` prints, run as printed through a shell, repeats the
/// run: every flag that shaped it (a duration, exit-on-violation, a plugin, the device's
/// options), the settings file it read, and the seed it picked for `seed = 0`.
#[test]
fn the_printed_rerun_line_repeats_the_run() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("project.toml");
    std::fs::write(&config, "seed = 0\nno-screenshots = true\nsim-latency = \"0\"\n").expect("writes");
    let output = dir.path().join("runs");
    let (config, output) = (config.display().to_string(), output.display().to_string());
    let first = uatu(&[
        "run",
        "--spec",
        SPEC,
        "--config",
        &config,
        "--output",
        &output,
        "--max-steps",
        "1500",
        "--duration",
        "10m",
        "--exit-on-violation",
        "--plugin",
        "junit",
        "--sim-bugs",
        "all",
    ]);
    let stdout = String::from_utf8_lossy(&first.stdout).into_owned();
    assert_eq!(
        first.status.code(),
        Some(1),
        "{stdout}\n{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let line = stdout
        .lines()
        .find_map(|line| line.strip_prefix("re-run: "))
        .unwrap_or_else(|| panic!("no re-run: line in\n{stdout}"));
    for flag in [
        "--config",
        "--duration 10m",
        "--exit-on-violation",
        "--plugin junit",
        "--sim-bugs all",
        "--seed ",
    ] {
        assert!(line.contains(flag), "{flag} missing from {line}");
    }
    let summary = printed_summary(&stdout);
    assert_eq!(summary["stopped"], "violation", "{summary}");

    // This build's `uatu` first on the PATH, so the printed line runs it.
    let binary_dir = Path::new(env!("CARGO_BIN_EXE_uatu")).parent().expect("bin dir");
    let path = format!(
        "{}:{}",
        binary_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let again = Command::new("sh")
        .args(["-c", line])
        .env("PATH", path)
        .output()
        .expect("runs the line");
    let stdout_again = String::from_utf8_lossy(&again.stdout).into_owned();
    assert_eq!(
        again.status.code(),
        Some(1),
        "{stdout_again}\n{}",
        String::from_utf8_lossy(&again.stderr)
    );
    let summary_again = printed_summary(&stdout_again);
    assert_ne!(summary["run_dir"], summary_again["run_dir"], "a run of its own");
    assert_eq!(first_violation(&summary_again), first_violation(&summary));
    assert_eq!(summary_again["steps"], summary["steps"]);
    assert_eq!(summary_again["stopped"], "violation");
}

/// The generator labels of a run's evaluated steps' actions (`""` for a step without one).
fn generators_of(records: &[uatu::trace::StepRecord]) -> Vec<String> {
    records
        .iter()
        .filter(|record| record.evaluated)
        .map(|record| {
            record
                .action
                .as_ref()
                .map(|action| action.generator.clone())
                .unwrap_or_default()
        })
        .collect()
}

/// A `setup` list logs in before exploring, one action a step, and again after an input
/// that restarted the app (a reload); an action whose target is not on screen is skipped
/// with a `target-missing` event; setup steps are judged like any other.
#[test]
fn a_setup_list_runs_after_the_launch_and_after_every_restart() {
    let dir = tempfile::tempdir().expect("temp dir");
    let spec = dir.path().join("setup.ts");
    std::fs::write(
        &spec,
        r#"import { actions, always, InputText, Reload, Tap } from "@uatu/spec";
export const setup = [
  InputText({ into: "desc:login_email", text: "demo@folio.app" }),
  InputText({ into: "desc:login_password", text: "ledger123" }),
  Tap({ on: "desc:login_submit" }),
];
export const properties = { fine: always(() => true) };
export const actionsRoot = actions(() => [Tap({ on: "desc:logout_button" }), Reload()]);
"#,
    )
    .expect("writes the spec");
    let flags = [
        "--seed",
        "5",
        "--max-steps",
        "60",
        "--sim-bugs",
        "none",
        "--sim-latency",
        "0",
        "--no-screenshots",
    ];
    let (code, summary, run_dir) = run_spec(&spec.display().to_string(), dir.path(), &flags);
    assert_eq!(code, 0, "{summary}");
    let records = read_steps(&run_dir).expect("trace reads");
    assert!(
        records.iter().all(|record| record.evaluated),
        "setup steps are judged"
    );
    let generators = generators_of(&records);
    assert_eq!(generators[..3], ["setup", "setup", "setup"], "{generators:?}");
    let first: Vec<&str> = records[..3]
        .iter()
        .map(|record| record.action.as_ref().expect("an action").action.type_name())
        .collect();
    assert_eq!(first, ["inputText", "inputText", "tap"]);
    // A step's action is recorded before its dispatch: whether it landed is in the next
    // step's `lastAction`.
    assert!(
        records[1..4].iter().all(|record| record
            .state
            .last_action
            .as_ref()
            .is_some_and(|a| a.generator == "setup" && a.applied == uatu::action::Applied::Yes)),
        "the setup actions landed"
    );
    assert_ne!(generators[3], "setup", "exploring begins once the list is done");

    // Setup starts again only right after a reload that restarted the app (and goes on
    // through its list): never elsewhere.
    let after_reload = |record: &uatu::trace::StepRecord| {
        record.state.last_action.as_ref().is_some_and(|action| {
            action.action.type_name() == "reload" && action.applied != uatu::action::Applied::No
        })
    };
    let mut setup_again = 0;
    for index in 3..records.len() {
        let starts = after_reload(&records[index]);
        if generators[index] == "setup" {
            assert!(
                starts || generators[index - 1] == "setup",
                "step {index}: a setup action with no restart before it: {generators:?}"
            );
            if starts {
                setup_again += 1;
            }
        } else if starts {
            // Logged in already (the sim keeps its login across a restart): every listed
            // target is missing, each said so, and exploring goes on in the same step.
            let missing = records[index]
                .events
                .iter()
                .filter(|event| matches!(event, uatu::trace::Event::TargetMissing { .. }))
                .count();
            assert_eq!(missing, 3, "step {index}: {:?}", records[index].events);
        }
    }
    assert!(
        setup_again > 0,
        "a logout then a reload logs in again: {generators:?}"
    );
}

/// A `setup` generator is drawn from, one action a step, until it offers nothing; its
/// actions carry its own path under `setup/`, and exploring follows.
#[test]
fn a_setup_generator_is_drawn_from_until_it_offers_nothing() {
    let dir = tempfile::tempdir().expect("temp dir");
    let spec = dir.path().join("setup.ts");
    std::fs::write(
        &spec,
        r#"import { actions, always, InputText, Tap, Wait, weighted } from "@uatu/spec";
const logIn = actions((s) => {
  if (!s.ax.find("desc:login_email")) return [];
  const last = s.lastAction?.generator.startsWith("setup") ? s.lastAction.action : undefined;
  if (last === undefined) return InputText({ into: "desc:login_email", text: "demo@folio.app" });
  if (last.type === "inputText" && last.into === "desc:login_email") return InputText({ into: "desc:login_password", text: "ledger123" });
  if (last.type === "inputText") return Tap({ on: "desc:login_submit" });
  return Wait({ durationMillis: 100 });
});
export const setup = weighted([1, logIn, "logIn"]);
export const properties = { fine: always(() => true) };
export const actionsRoot = weighted([1, actions(() => Wait({ durationMillis: 100 })), "idle"]);
"#,
    )
    .expect("writes the spec");
    let flags = [
        "--seed",
        "2",
        "--max-steps",
        "60",
        "--sim-bugs",
        "none",
        "--sim-latency",
        "0",
        "--no-screenshots",
    ];
    let (code, summary, run_dir) = run_spec(&spec.display().to_string(), dir.path(), &flags);
    assert_eq!(code, 0, "{summary}");
    let records = read_steps(&run_dir).expect("trace reads");
    let generators = generators_of(&records);
    let setup_steps = generators
        .iter()
        .take_while(|label| label.starts_with("setup"))
        .count();
    assert!(
        setup_steps >= 3,
        "typed the email and the password, then signed in: {generators:?}"
    );
    let first: Vec<&str> = records[..3]
        .iter()
        .map(|record| record.action.as_ref().expect("an action").action.type_name())
        .collect();
    assert_eq!(first, ["inputText", "inputText", "tap"]);
    assert!(
        generators[..setup_steps]
            .iter()
            .all(|label| label == "setup/0:logIn"),
        "{generators:?}"
    );
    assert!(
        generators[setup_steps..].iter().all(|label| label == "0:idle"),
        "then only the root's actions: {generators:?}"
    );
    assert!(setup_steps < generators.len(), "exploring began: {generators:?}");
    let home = records[setup_steps]
        .state
        .hierarchy
        .descendants()
        .any(|node| node.desc == "logout_button");
    assert!(home, "setup ended once signed in");
}
