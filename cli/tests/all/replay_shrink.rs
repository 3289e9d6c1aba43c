//! `uatu replay` and `uatu shrink` end to end: the real binary, the example Folio spec
//! and the simulator over real gRPC and a real SDK socket.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;
use uatu::trace::{StepRecord, read_steps};

use crate::support::folio::violated;

const SPEC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/folio/spec.ts");

fn uatu(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_uatu"))
        .args(args)
        .output()
        .expect("runs uatu")
}

fn json_of(out: &Output) -> Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}):\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// A zero-latency simulator run of `spec` without screenshots, with `flags`; returns its
/// summary and directory.
fn spec_run(spec: &str, output: &Path, flags: &[&str]) -> (Value, PathBuf) {
    let output = output.display().to_string();
    let mut args = vec!["run", "--spec", spec, "--json", "--output", &output];
    args.extend(["--sim-latency", "0", "--no-screenshots"]);
    args.extend(flags);
    let summary = json_of(&uatu(&args));
    let run_dir = PathBuf::from(summary["run_dir"].as_str().expect("run_dir"));
    (summary, run_dir)
}

/// A zero-latency Folio run of the example spec without screenshots.
fn folio_run(output: &Path, seed: &str, steps: &str, bugs: &str) -> (Value, PathBuf) {
    spec_run(
        SPEC,
        output,
        &["--seed", seed, "--max-steps", steps, "--sim-bugs", bugs],
    )
}

/// What must be the same in a replay: everything the step saw and decided (not its
/// timings, and not an event's message, which names the run's own socket).
fn comparable(record: &StepRecord) -> Value {
    let mut value = serde_json::to_value(record).expect("json");
    let object = value.as_object_mut().expect("object");
    object.remove("metrics");
    let kinds: Vec<Value> = record
        .events
        .iter()
        .map(|event| serde_json::to_value(event).expect("json")["kind"].clone())
        .collect();
    object.insert("events".into(), Value::Array(kinds));
    value
}

#[test]
fn a_replay_of_a_simulator_run_is_the_same_run_step_for_step() {
    let output = tempfile::tempdir().expect("temp dir");
    // Every bug on: violations, an app crash and its relaunch are all in 300 steps of seed 5.
    let (summary, run_dir) = folio_run(output.path(), "5", "300", "all");
    let out = uatu(&[
        "replay",
        &run_dir.display().to_string(),
        "--json",
        "--no-screenshots",
        "--output",
        &output.path().join("replays").display().to_string(),
    ]);
    let replayed = json_of(&out);
    assert_eq!(out.status.code(), Some(1), "{replayed}");
    let replay_dir = PathBuf::from(replayed["run_dir"].as_str().expect("run_dir"));

    let original = read_steps(&run_dir).expect("trace");
    let replay = read_steps(&replay_dir).expect("replay trace");
    assert_eq!(original.len(), 300);
    assert!(
        original.iter().any(|record| !record.evaluated),
        "the run should include an app crash"
    );
    assert_eq!(replay.len(), original.len());
    for (recorded, again) in original.iter().zip(&replay) {
        assert_eq!(comparable(recorded), comparable(again), "step {}", recorded.step);
    }
    assert_eq!(summary["properties"], replayed["properties"]);
    assert_eq!(replayed["stopped"], "max-steps");
    assert_eq!(
        replayed["rerun"],
        format!(
            "uatu replay {} --output {} --no-screenshots --json",
            run_dir.display(),
            output.path().join("replays").display()
        )
    );
}

#[test]
fn replay_until_stops_after_observing_that_step() {
    let output = tempfile::tempdir().expect("temp dir");
    let (_, run_dir) = folio_run(output.path(), "5", "60", "none");
    let out = uatu(&[
        "replay",
        &run_dir.display().to_string(),
        "--until",
        "20",
        "--json",
        "--no-screenshots",
        "--output",
        &output.path().join("replays").display().to_string(),
    ]);
    let replayed = json_of(&out);
    let replay = read_steps(Path::new(replayed["run_dir"].as_str().expect("run_dir"))).expect("trace");
    assert_eq!(replay.len(), 21, "steps 0 to 20");
    assert_eq!(replay[20].action, None, "nothing dispatched after --until");
    let original = read_steps(&run_dir).expect("trace");
    assert_eq!(comparable(&original[19]), comparable(&replay[19]));
    assert_eq!(original[20].state, replay[20].state);
}

/// Which property of the example spec each planted bug violates first (of those that catch it).
const CATCHES: &[(&str, &[&str])] = &[
    ("duplicate-account-names", &["accountNamesAreUnique"]),
    ("stale-total", &["totalIsSumOfAccounts"]),
    ("crash-on-long-note", &["noUncaughtExceptions", "noLogcatErrors"]),
    (
        "float-cents",
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

/// `uatu shrink RUN_DIR --json` with `extra` flags; the report.
fn shrink(run_dir: &Path, extra: &[&str]) -> Value {
    let mut args = vec![
        "shrink".to_string(),
        run_dir.display().to_string(),
        "--json".into(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = uatu(&args);
    let report = json_of(&out);
    assert_eq!(out.status.code(), Some(1), "a reproducer violates: {report}");
    report
}

fn summary_of(run_dir: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(run_dir.join("summary.json")).expect("summary.json")).expect("json")
}

#[test]
fn shrinking_each_planted_bug_keeps_its_violation() {
    let output = tempfile::tempdir().expect("temp dir");
    for (bug, catching) in CATCHES {
        // Seed 1 finds each bug alone within 1,200 steps (deep-ledger-duplication at 903).
        let (summary, run_dir) = folio_run(output.path(), "1", "1200", bug);
        let found = violated(&summary);
        assert!(catching.iter().any(|p| found.contains(*p)), "{bug}: {found:?}");
        // The deep bug's reproducer is long and slow to minimise: a budget keeps this test
        // short, and what it leaves must still violate (the benchmark measures the rest).
        let report = shrink(&run_dir, &["--budget", "15s"]);
        let property = report["property"].as_str().expect("property");
        assert!(catching.contains(&property), "{bug}: shrank {property}");
        let length = report["length"].as_u64().expect("length");
        assert!(
            length < report["original_length"].as_u64().expect("original length"),
            "{bug}: {report}"
        );
        let shrunk = PathBuf::from(report["output"].as_str().expect("output"));
        // The shrunk directory is a run that violates the property, with its reproducer.
        assert!(
            violated(&summary_of(&shrunk)).contains(property),
            "{bug}: the shrunk run does not violate {property}"
        );
        let script: Value =
            serde_json::from_slice(&std::fs::read(shrunk.join("repro.json")).expect("repro.json"))
                .expect("json");
        assert_eq!(script["steps"].as_array().expect("steps").len() as u64, length);
        assert_eq!(script["property"], property);
        assert!(shrunk.join("repro.yaml").is_file());
    }
}

#[test]
fn a_shrunk_reproducer_replayed_ten_times_violates_ten_times() {
    let output = tempfile::tempdir().expect("temp dir");
    let (_, run_dir) = folio_run(output.path(), "2", "400", "stale-total");
    let report = shrink(&run_dir, &["--property", "totalIsSumOfAccounts"]);
    let script = PathBuf::from(report["output"].as_str().expect("output")).join("repro.json");
    for attempt in 1..=10 {
        let out = uatu(&[
            "replay",
            "--script",
            &script.display().to_string(),
            "--json",
            "--no-screenshots",
            "--output",
            &output.path().join("again").display().to_string(),
        ]);
        let summary = json_of(&out);
        assert_eq!(out.status.code(), Some(1), "attempt {attempt}: {summary}");
        assert!(
            violated(&summary).contains("totalIsSumOfAccounts"),
            "attempt {attempt}: {summary}"
        );
        assert_eq!(summary["stopped"], "script-end");
    }
}

#[test]
fn ctrl_c_during_a_shrink_keeps_a_valid_best_so_far() {
    let output = tempfile::tempdir().expect("temp dir");
    // A long run whose violation comes late: the shrink takes long enough to interrupt.
    let (_, run_dir) = folio_run(output.path(), "1", "1200", "deep-ledger-duplication");
    let child = Command::new(env!("CARGO_BIN_EXE_uatu"))
        .args(["shrink", &run_dir.display().to_string(), "--json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("starts uatu");
    let shrunk = uatu::shrink::default_output(&run_dir);
    // Interrupt once the first (confirmed) best is on disk and the search goes on.
    while !shrunk.join("repro.json").is_file() {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
    let out = child.wait_with_output().expect("uatu ends");
    let report: Value = serde_json::from_slice(&out.stdout).expect("the report is printed");
    assert_eq!(out.status.code(), Some(1), "{report}");
    assert_eq!(report["ended"], "interrupted", "{report}");
    let property = report["property"].as_str().expect("property");
    // The best so far is whole: its script replays to the violation.
    let replayed = uatu(&[
        "replay",
        "--script",
        &shrunk.join("repro.json").display().to_string(),
        "--json",
        "--no-screenshots",
        "--output",
        &output.path().join("again").display().to_string(),
    ]);
    let summary = json_of(&replayed);
    assert!(violated(&summary).contains(property), "{summary}");
    assert!(violated(&summary_of(&shrunk)).contains(property));
    assert!(
        !uatu::shrink::scratch_dir(&shrunk).exists(),
        "the candidates' scratch directory is removed"
    );
}

#[test]
fn a_violation_at_launch_shrinks_to_a_reproducer_with_no_action() {
    let output = tempfile::tempdir().expect("temp dir");
    let spec = output.path().join("violated-at-launch.ts");
    std::fs::write(
        &spec,
        r#"import { actions, always, PressKey } from "@uatu/spec";
export const properties = { neverHolds: always(() => false) };
export const actionsRoot = actions(() => PressKey({ key: "back" }), "back");
"#,
    )
    .expect("spec written");
    let (summary, run_dir) = spec_run(
        &spec.display().to_string(),
        &output.path().join("runs"),
        &["--max-steps", "5"],
    );
    assert_eq!(summary["properties"][0]["first_violation_step"], 0, "{summary}");

    let report = shrink(&run_dir, &[]);
    assert_eq!(report["length"], 0, "{report}");
    assert_eq!(report["ended"], "done", "{report}");
    let shrunk = PathBuf::from(report["output"].as_str().expect("output"));
    assert!(violated(&summary_of(&shrunk)).contains("neverHolds"));
    let script: Value =
        serde_json::from_slice(&std::fs::read(shrunk.join("repro.json")).expect("repro.json")).expect("json");
    assert_eq!(script["steps"], Value::Array(Vec::new()));
    let flow = std::fs::read_to_string(shrunk.join("repro.yaml")).expect("repro.yaml");
    assert_eq!(maestro_commands(&flow), ["launchApp"], "{flow}");
    assert!(
        !uatu::shrink::scratch_dir(&shrunk).exists(),
        "the candidates' scratch directory is removed"
    );
}

#[test]
fn a_shrink_whose_replays_cannot_reach_the_device_says_so_with_exit_3() {
    let output = tempfile::tempdir().expect("temp dir");
    let (_, run_dir) = folio_run(output.path(), "2", "400", "stale-total");
    // Nothing listens on port 1: every replay fails to connect.
    let out = uatu(&[
        "shrink",
        &run_dir.display().to_string(),
        "--device",
        "sidecar:127.0.0.1:1",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("failed"), "{stderr}");
    assert!(
        stderr.contains("127.0.0.1:1"),
        "the device at fault is named: {stderr}"
    );
    assert!(!stderr.contains("does not reproduce"), "{stderr}");
    assert!(!uatu::shrink::default_output(&run_dir).exists());
}

/// Every command of a Maestro flow: a bare command name or a one-key map.
fn maestro_commands(yaml: &str) -> Vec<String> {
    use serde::Deserialize as _;
    let mut documents = serde_yaml::Deserializer::from_str(yaml);
    let header = serde_yaml::Value::deserialize(documents.next().expect("a header")).expect("YAML header");
    assert!(
        header.get("appId").is_some(),
        "the header names the app: {header:?}"
    );
    let commands =
        serde_yaml::Value::deserialize(documents.next().expect("the commands")).expect("YAML commands");
    assert!(documents.next().is_none(), "two documents only");
    commands
        .as_sequence()
        .expect("a list of commands")
        .iter()
        .map(|command| match command {
            serde_yaml::Value::String(name) => name.clone(),
            serde_yaml::Value::Mapping(map) if map.len() == 1 => map
                .keys()
                .next()
                .and_then(|k| k.as_str())
                .expect("a command name")
                .to_owned(),
            other => panic!("not a Maestro command: {other:?}"),
        })
        .collect()
}

#[test]
fn the_maestro_flow_parses_as_yaml_and_uses_only_documented_commands() {
    use uatu::action::{Action, ScrollDirection, Target};
    use uatu::run::replay::{Origin, SCRIPT_VERSION, Script, ScriptStep};
    use uatu_device::model::{Bounds, Key};

    // Every kind of action, with awkward text.
    let step = |action: Option<Action>| ScriptStep {
        action,
        generator: String::new(),
        screen: None,
    };
    let element = Target::Element {
        x: 10,
        y: 20,
        bounds: Some(Bounds {
            left: 0,
            top: 0,
            right: 20,
            bottom: 40,
        }),
    };
    let script = Script {
        version: SCRIPT_VERSION,
        origin: Origin {
            seed: 1,
            spec: "spec.ts".into(),
            device: serde_json::from_value(serde_json::json!({"kind": "sim", "bundle_id": "app.folio"}))
                .expect("device meta"),
        },
        property: Some("p".into()),
        steps: vec![
            step(Some(Action::Tap {
                on: Target::Selector("desc:login_submit".into()),
            })),
            step(Some(Action::Tap { on: element.clone() })),
            step(Some(Action::Tap {
                on: Target::Selector("id:app:id/name".into()),
            })),
            step(Some(Action::Tap {
                on: Target::Selector("descPrefix:account_card:".into()),
            })),
            step(Some(Action::InputText {
                into: Some(Target::Selector("desc:txn_note".into())),
                text: "a \"quoted\": note # not a comment\n- with a newline".into(),
                submit: false,
            })),
            step(Some(Action::InputText {
                into: None,
                text: "yes".into(),
                submit: true,
            })),
            step(Some(Action::Swipe {
                from: element.clone(),
                to: Target::Element {
                    x: 10,
                    y: 500,
                    bounds: None,
                },
                duration_millis: None,
            })),
            step(Some(Action::PressKey { key: Key::Back })),
            step(Some(Action::PressKey { key: Key::Enter })),
            step(Some(Action::PressKey { key: Key::Up })),
            step(Some(Action::Wait { duration_millis: 500 })),
            step(None),
            step(Some(Action::DoubleTap {
                on: Target::selector("desc:row"),
            })),
            step(Some(Action::LongPress {
                on: element.clone(),
                duration_millis: Some(900),
            })),
            step(Some(Action::Scroll {
                on: None,
                direction: ScrollDirection::Down,
                amount: None,
            })),
            step(Some(Action::Scroll {
                on: Some(Target::selector("id:list")),
                direction: ScrollDirection::Up,
                amount: Some(1.0),
            })),
            step(Some(Action::ClearText {
                into: Some(Target::selector("desc:txn_note")),
            })),
            step(Some(Action::Navigate {
                to: "https://app.example/#/active".into(),
            })),
            step(Some(Action::Navigate {
                to: "#/active".into(),
            })),
            step(Some(Action::Reload)),
            step(Some(Action::Back)),
            step(Some(Action::Forward)),
        ],
    };
    let yaml = uatu::shrink::maestro::flow(&script);
    let commands = maestro_commands(&yaml);
    for command in &commands {
        assert!(
            uatu::shrink::maestro::COMMANDS.contains(&command.as_str()),
            "{command} is not an allowed Maestro command:\n{yaml}"
        );
    }
    assert_eq!(
        commands,
        [
            "launchApp",
            "tapOn",
            "tapOn",
            "tapOn",
            "tapOn",
            "tapOn",
            "inputText",
            "inputText",
            "pressKey",
            "swipe",
            "back",
            "pressKey",
            "pressKey",
            "doubleTapOn",
            "longPressOn",
            "scroll",
            "swipe",
            "tapOn",
            "eraseText",
            "openLink",
            "stopApp",
            "launchApp",
            "back"
        ],
        "{yaml}"
    );
    assert!(
        yaml.contains("- swipe:\n    from:\n      id: \"list\"\n    direction: DOWN\n"),
        "scrolling up is a swipe down from the list:\n{yaml}"
    );
    assert!(yaml.contains("# forward"), "{yaml}");
    assert!(
        yaml.contains("a \\\"quoted\\\": note # not a comment\\n- with a newline"),
        "{yaml}"
    );
}

#[test]
fn a_shrunk_runs_maestro_flow_parses_and_uses_only_documented_commands() {
    let output = tempfile::tempdir().expect("temp dir");
    let (_, run_dir) = folio_run(output.path(), "1", "400", "float-cents");
    let report = shrink(&run_dir, &[]);
    let yaml =
        std::fs::read_to_string(PathBuf::from(report["output"].as_str().expect("output")).join("repro.yaml"))
            .expect("repro.yaml");
    let commands = maestro_commands(&yaml);
    assert_eq!(commands[0], "launchApp");
    assert!(
        commands
            .iter()
            .all(|c| uatu::shrink::maestro::COMMANDS.contains(&c.as_str())),
        "{yaml}"
    );
    assert!(commands.contains(&"inputText".to_string()), "{yaml}");
}

#[test]
fn run_with_shrink_shrinks_each_violated_property_and_reports_the_lengths() {
    let output = tempfile::tempdir().expect("temp dir");
    let out = uatu(&[
        "run",
        "--spec",
        SPEC,
        "--json",
        "--output",
        &output.path().display().to_string(),
        "--seed",
        "1",
        "--max-steps",
        "200",
        "--sim-bugs",
        "stale-total",
        "--sim-latency",
        "0",
        "--no-screenshots",
        "--shrink",
    ]);
    let summary = json_of(&out);
    assert_eq!(out.status.code(), Some(1), "{summary}");
    let shrunk = summary["shrunk"].as_array().expect("shrunk reports");
    assert_eq!(shrunk.len(), violated(&summary).len(), "{summary}");
    let report = &shrunk[0];
    assert_eq!(report["property"], "totalIsSumOfAccounts", "{summary}");
    let length = report["length"].as_u64().expect("length");
    assert!(
        length < report["original_length"].as_u64().expect("original"),
        "{report}"
    );
    let dir = PathBuf::from(report["output"].as_str().expect("output"));
    assert!(dir.ends_with(format!(
        "{}-shrunk-totalIsSumOfAccounts",
        Path::new(summary["run_dir"].as_str().expect("run dir"))
            .file_name()
            .expect("name")
            .to_string_lossy()
    )));
    assert!(dir.join("repro.json").is_file() && dir.join("repro.yaml").is_file());
}
