//! The spec pipeline end to end: the bundler, the embedded QuickJS provider and
//! wasmtime, on real specs (`tests/specs/`) and real states.

use std::path::{Path, PathBuf};
use std::time::Duration;

use uatu::action::{Action, Target};
use uatu::spec::{PredicateValue, SpecError, SpecInstance, SpecLimits, SpecModule, SpecStep};
use uatu::state::State;
use uatu_device::model::{Bounds, ExceptionInfo, LogEntry, LogLevel, Node};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/specs")
        .join(name)
}

/// Writes `source` as a spec file in a fresh directory.
fn spec_file(name: &str, source: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("creates a temporary directory");
    let path = dir.path().join(name);
    std::fs::write(&path, source).expect("writes the spec file");
    (dir, path)
}

fn start(path: &Path, seed: u64, limits: SpecLimits) -> Result<(SpecModule, SpecInstance), SpecError> {
    let module = uatu::spec::build(path).map_err(|e| match e {
        uatu::spec::BuildError::Compile(e) => e,
        other => panic!("build failed: {other}"),
    })?;
    let mut instance = SpecInstance::new(&module, limits)?;
    instance.load(&module, seed)?;
    Ok((module, instance))
}

fn node(id: &str, text: &str, desc: &str, clickable: bool, bounds: (i32, i32, i32, i32)) -> Node {
    Node {
        id: id.into(),
        text: text.into(),
        desc: desc.into(),
        class_name: "android.widget.TextView".into(),
        clickable,
        enabled: true,
        bounds: Bounds {
            left: bounds.0,
            top: bounds.1,
            right: bounds.2,
            bottom: bounds.3,
        },
        ..Node::default()
    }
}

fn state(step: u64, counter: i64) -> State {
    let mut list = node("app.folio:id/list", "", "", false, (0, 200, 1080, 2000));
    list.scrollable = true;
    list.children = vec![
        node("", "Hello", "row_1", true, (0, 200, 1080, 300)),
        node("", "", "row_2", true, (0, 300, 1080, 400)),
    ];
    let mut root = node("", "", "", false, (0, 0, 1080, 2400));
    root.children = vec![
        node("app.folio:id/amount", "12.50", "", false, (0, 0, 100, 100)),
        node("plain_id", "exact", "", false, (0, 100, 100, 200)),
        node("", "Log in", "login_submit", true, (100, 2200, 300, 2300)),
        list,
    ];
    let mut snapshots = serde_json::Map::new();
    snapshots.insert("counter".into(), counter.into());
    State {
        step,
        time: 1000 * step + 17,
        hierarchy: root,
        snapshots,
        ..State::default()
    }
}

fn holds(step: &SpecStep, id: usize) -> bool {
    step.predicates[id].holds()
}

#[test]
fn every_api_function_and_selector_form() {
    let (_module, mut spec) = start(&fixture("basic.ts"), 42, SpecLimits::default()).unwrap();
    let description = spec.describe().unwrap().clone();
    let names: Vec<&str> = description.properties.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "counterPositive",
            "loginVisible",
            "nextGrows",
            "combined",
            "noUncaughtExceptions",
            "noLogcatErrors"
        ]
    );
    let formula = |name: &str| {
        description
            .properties
            .iter()
            .find(|(n, _)| n == name)
            .unwrap()
            .1
            .clone()
    };
    let counter_id = formula("counterPositive")["arg"]["id"].as_u64().unwrap() as usize;
    assert_eq!(
        formula("counterPositive"),
        serde_json::json!({"op": "always", "arg": {"op": "pred", "id": counter_id}})
    );
    assert_eq!(formula("loginVisible")["op"], "now");
    assert_eq!(formula("nextGrows")["op"], "next");
    let combined = serde_json::to_string(&formula("combined")).unwrap();
    for part in [
        r#""op":"implies""#,
        r#""within":{"ms":3000}"#,
        r#""within":{"steps":2}"#,
        r#""within":{"ms":250}"#,
        r#""within":null"#,
        r#""op":"not""#,
        r#""op":"or""#,
        r#""op":"const","value":false"#,
    ] {
        assert!(combined.contains(part), "{part} missing in {combined}");
    }
    // Predicates point at the spec's source lines.
    assert!(
        description.predicates[counter_id].ends_with("basic.ts:19:20"),
        "{:?}",
        description.predicates
    );
    let next_id = formula("nextGrows")["arg"]["id"].as_u64().unwrap() as usize;
    let login_id = formula("loginVisible")["arg"]["id"].as_u64().unwrap() as usize;
    assert!(
        description
            .extractors
            .iter()
            .any(|(name, _)| name == "loginButton"),
        "{:?}",
        description.extractors
    );

    let first = spec.step(&state(0, 3)).unwrap();
    let e = &first.extractors;
    assert_eq!(e["byId"], "12.50", "Android id suffix");
    assert_eq!(e["byExactId"], "exact");
    assert_eq!(e["byText"], 1);
    assert_eq!(e["rows"], serde_json::json!(["row_1", "row_2"]));
    assert_eq!(e["loginButton"]["x"], 200);
    assert_eq!(e["loginButton"]["bounds"]["top"], 2200);
    assert_eq!(
        e["time"],
        serde_json::json!([17, 17, 17]),
        "Date is the step's time"
    );
    assert!(holds(&first, counter_id) && holds(&first, login_id));

    // Candidates: nested weighted paths, built-ins, and every action form.
    let paths: Vec<String> = first.candidates.iter().map(|c| c.path_label()).collect();
    assert!(paths.contains(&"0:login".to_string()), "{paths:?}");
    assert!(paths.contains(&"1:explore/0:taps".to_string()), "{paths:?}");
    assert!(paths.contains(&"1:explore/1:scroll".to_string()), "{paths:?}");
    assert!(paths.contains(&"3:waitOnce".to_string()) && paths.contains(&"4:pressKey".to_string()));
    let explore = first
        .candidates
        .iter()
        .find(|c| c.path_label() == "1:explore/1:scroll")
        .unwrap();
    assert_eq!(explore.path[0].weight, 2.0);
    assert_eq!(explore.path[1].weight, 3.0);
    let taps: Vec<&Action> = first
        .candidates
        .iter()
        .filter(|c| c.path_label() == "1:explore/0:taps")
        .map(|c| &c.action)
        .collect();
    assert_eq!(taps.len(), 3, "three clickable elements: {taps:?}");
    assert!(first.candidates.iter().any(|c| matches!(&c.action,
        Action::InputText { into: Some(target), .. } if *target == Target::selector("id:amount"))));
    assert!(first.candidates.iter().any(|c| matches!(
        &c.action,
        Action::Swipe {
            duration_millis: Some(200),
            ..
        }
    )));
    assert!(
        first
            .candidates
            .iter()
            .any(|c| matches!(&c.action, Action::Wait { duration_millis: 100 }))
    );
    assert!(first.generator_errors.is_empty(), "{:?}", first.generator_errors);

    // Extractor `previous` is the last step's value.
    let second = spec.step(&state(1, 9)).unwrap();
    assert_eq!(second.extractors["counter"], 9);
    assert_eq!(second.extractors["previousCounter"], 3);
    assert!(holds(&second, next_id), "next: counter grew");
    let third = spec.step(&state(2, 1)).unwrap();
    assert!(!holds(&third, next_id), "next: counter shrank");
}

#[test]
fn default_properties_see_exceptions_and_error_logs() {
    let (_m, mut spec) = start(&fixture("basic.ts"), 1, SpecLimits::default()).unwrap();
    let description = spec.describe().unwrap().clone();
    let id = |name: &str| -> usize {
        let formula = &description.properties.iter().find(|(n, _)| n == name).unwrap().1;
        formula["arg"]["id"].as_u64().unwrap() as usize
    };
    let clean = spec.step(&state(0, 0)).unwrap();
    assert!(holds(&clean, id("noUncaughtExceptions")) && holds(&clean, id("noLogcatErrors")));
    let mut bad = state(1, 0);
    bad.exceptions.push(ExceptionInfo {
        class: "IllegalStateException".into(),
        message: "boom".into(),
        stack: String::new(),
        time: 5,
    });
    bad.logs.push(LogEntry {
        time: 5,
        level: LogLevel::Error,
        tag: "Folio".into(),
        message: "bad".into(),
    });
    let step = spec.step(&bad).unwrap();
    assert!(!holds(&step, id("noUncaughtExceptions")) && !holds(&step, id("noLogcatErrors")));
}

#[test]
fn same_seed_same_samples_and_candidates() {
    let run = |seed: u64| {
        let (_m, mut spec) = start(&fixture("basic.ts"), seed, SpecLimits::default()).unwrap();
        (0..4)
            .map(|i| {
                let step = spec.step(&state(i, i as i64)).unwrap();
                (
                    step.extractors["sampled"].clone(),
                    serde_json::to_string(&step.candidates).unwrap(),
                )
            })
            .collect::<Vec<_>>()
    };
    let a = run(7);
    assert_eq!(a, run(7));
    let b = run(8);
    assert_ne!(
        a.iter().map(|x| &x.0).collect::<Vec<_>>(),
        b.iter().map(|x| &x.0).collect::<Vec<_>>()
    );
    // Samples vary between steps.
    assert!(a.windows(2).any(|w| w[0].0 != w[1].0));
}

/// With the generators off, a step offers nothing, and each branch is offered on
/// demand: every leaf offered in the tree's order gives exactly what one step with
/// every generator gave (the same actions, the same `from(...)` samples), and the
/// root offers the whole tree.
#[test]
fn branches_offered_on_demand_are_what_the_whole_tree_offers() {
    let (_m, mut eager) = start(&fixture("basic.ts"), 42, SpecLimits::default()).unwrap();
    let (_m2, mut lazy) = start(&fixture("basic.ts"), 42, SpecLimits::default()).unwrap();
    let (_m3, mut root) = start(&fixture("basic.ts"), 42, SpecLimits::default()).unwrap();
    lazy.set_generators(false);
    root.set_generators(false);
    let error = lazy.offer(0).unwrap_err();
    assert!(error.to_string().contains("before any step"), "{error}");
    for step in 0..3 {
        let all = eager.step(&state(step, 3)).unwrap();
        let stepped = lazy.step(&state(step, 3)).unwrap();
        assert!(stepped.candidates.is_empty() && stepped.generator_errors.is_empty());
        assert_eq!(stepped.extractors, all.extractors, "the same extractors");
        assert_eq!(stepped.predicates, all.predicates, "the same predicates");
        let tree = lazy.action_tree();
        let mut offered = Vec::new();
        for place in 0..tree.len() {
            if tree.place(place).unwrap().children.is_empty() {
                offered.extend(lazy.offer(place).unwrap().candidates);
            }
        }
        assert_eq!(offered, all.candidates, "step {step}");
        root.step(&state(step, 3)).unwrap();
        assert_eq!(
            root.offer(0).unwrap().candidates,
            all.candidates,
            "step {step}: the root"
        );
    }
    let places = lazy.action_tree().len();
    let error = lazy.offer(places).unwrap_err();
    assert!(matches!(error, SpecError::Protocol { .. }), "{error}");
    assert!(
        error.to_string().contains(&format!("no place {places}")),
        "{error}"
    );
}

/// A generator run on demand reports its error with the source, and one that
/// never returns is stopped by the deadline, named by its place in the tree.
#[test]
fn a_generator_offered_on_demand_reports_errors_and_overruns() {
    let (_dir, path) = spec_file(
        "offers.ts",
        r#"import { always, actions, weighted, waitOnce } from "@uatu/spec";
export const properties = { p: always(() => true) };
export const actionsRoot = weighted(
  [1, actions(() => { throw new TypeError("generator exploded"); }), "bad"],
  [1, actions((s) => { if (s.step === 1) { for (;;) {} } return []; }), "endless"],
  [1, waitOnce],
);
"#,
    );
    let limits = SpecLimits {
        deadline: Duration::from_millis(300),
        ..SpecLimits::default()
    };
    let (_m, mut spec) = start(&path, 1, limits).unwrap();
    spec.set_generators(false);
    spec.step(&state(0, 0)).unwrap();
    let bad = spec.offer(1).unwrap();
    assert!(bad.candidates.is_empty());
    assert_eq!(bad.generator_errors.len(), 1, "{:?}", bad.generator_errors);
    assert_eq!(bad.generator_errors[0].message, "TypeError: generator exploded");
    assert_eq!(bad.generator_errors[0].path[0].label.as_deref(), Some("bad"));
    assert!(
        bad.generator_errors[0]
            .location
            .as_deref()
            .unwrap_or("")
            .contains("offers.ts:4:"),
        "{:?}",
        bad.generator_errors
    );
    assert_eq!(spec.offer(3).unwrap().candidates.len(), 1, "waitOnce");
    spec.step(&state(1, 0)).unwrap();
    let error = spec.offer(2).unwrap_err();
    assert!(matches!(error, SpecError::Deadline { .. }), "{error}");
    assert!(error.to_string().contains("in generator 1:endless"), "{error}");
}

#[test]
fn imported_modules_are_bundled_and_their_stacks_mapped() {
    let (dir, path) = spec_file(
        "spec.ts",
        r#"import { always, waitOnce } from "@uatu/spec";
import { check, LIMIT } from "./lib";
export const properties = { p: always(() => check(LIMIT)) };
export const actionsRoot = waitOnce;
"#,
    );
    std::fs::create_dir(dir.path().join("lib")).unwrap();
    std::fs::write(
        dir.path().join("lib/index.ts"),
        "export { LIMIT } from \"./limit.js\";\nexport function check(limit: number): boolean {\n  throw new Error(`over ${limit}`);\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("lib/limit.ts"),
        "export const LIMIT: number = 3;\n",
    )
    .unwrap();
    let (_m, mut spec) = start(&path, 1, SpecLimits::default()).unwrap();
    let step = spec.step(&state(0, 0)).unwrap();
    let PredicateValue::Error { error } = &step.predicates[0] else {
        panic!("{:?}", step.predicates)
    };
    assert_eq!(error.message, "over 3");
    assert!(error.stack.contains("lib/index.ts:3:"), "{}", error.stack);
    assert!(error.stack.contains("spec.ts:3:"), "{}", error.stack);
}

#[test]
fn throwing_predicate_and_generator_are_recorded_with_mapped_stack() {
    let (_dir, path) = spec_file(
        "throws.ts",
        r#"import { always, actions, Tap } from "@uatu/spec";
const boom = (): boolean => {
  throw new Error("predicate exploded");
};
export const properties = { p: always(() => boom()), ok: always(() => true) };
export const actionsRoot = actions(() => {
  throw new TypeError("generator exploded");
}, "bad");
"#,
    );
    let (_m, mut spec) = start(&path, 1, SpecLimits::default()).unwrap();
    let step = spec.step(&state(0, 0)).unwrap();
    let PredicateValue::Error { error } = &step.predicates[0] else {
        panic!("{:?}", step.predicates)
    };
    assert_eq!(error.message, "predicate exploded");
    assert!(error.stack.contains("throws.ts:3:"), "{}", error.stack);
    assert!(
        error.location.as_deref().unwrap().contains("throws.ts:3:"),
        "{error:?}"
    );
    assert!(!step.predicates[0].holds());
    assert!(step.predicates[1].holds());
    assert_eq!(step.generator_errors.len(), 1);
    assert_eq!(step.generator_errors[0].message, "TypeError: generator exploded");
    assert!(
        step.generator_errors[0]
            .location
            .as_deref()
            .unwrap()
            .contains("throws.ts:7:"),
        "{:?}",
        step.generator_errors
    );
    // The run goes on.
    assert!(spec.step(&state(1, 0)).is_ok());
}

#[test]
fn endless_loop_hits_the_deadline() {
    let (_dir, path) = spec_file(
        "loop.ts",
        r#"import { always, extract, waitOnce } from "@uatu/spec";
export const x = extract((s) => { if (s.step === 1) { for (;;) {} } return 1; });
export const properties = { p: always(() => x.current === 1) };
export const actionsRoot = waitOnce;
"#,
    );
    let limits = SpecLimits {
        deadline: Duration::from_millis(300),
        ..SpecLimits::default()
    };
    let (_m, mut spec) = start(&path, 1, limits).unwrap();
    spec.step(&state(0, 0)).unwrap();
    let error = spec.step(&state(1, 0)).unwrap_err();
    assert!(matches!(error, SpecError::Deadline { .. }), "{error}");
    let message = error.to_string();
    assert!(
        message.contains("in extractor x (") && message.contains("loop.ts:2:"),
        "names the extractor: {message}"
    );
    assert!(
        message.contains("loop.ts") && message.contains("step 1") && message.contains("deadline"),
        "{message}"
    );
}

#[test]
fn endless_loop_at_load_hits_the_deadline() {
    let (_dir, path) = spec_file(
        "loadloop.js",
        "import { waitOnce } from '@uatu/spec';\nwhile (true) {}\nexport const properties = {};\nexport const actions = waitOnce;\n",
    );
    let limits = SpecLimits {
        deadline: Duration::from_millis(200),
        ..SpecLimits::default()
    };
    let error = start(&path, 1, limits).err().unwrap();
    assert!(
        matches!(
            error,
            SpecError::Deadline {
                phase: uatu::spec::Phase::Loading,
                ..
            }
        ),
        "{error}"
    );
}

#[test]
fn unbounded_allocation_hits_the_memory_cap() {
    let (_dir, path) = spec_file(
        "hog.ts",
        r#"import { always, extract, waitOnce } from "@uatu/spec";
const hoard: string[][] = [];
const x = extract(() => { for (;;) { hoard.push(new Array(100000).fill("x")); } });
export const properties = { p: always(() => true) };
export const actionsRoot = waitOnce;
"#,
    );
    let limits = SpecLimits {
        memory: 32 << 20,
        deadline: Duration::from_secs(20),
    };
    let (_m, mut spec) = start(&path, 1, limits).unwrap();
    let error = spec.step(&state(0, 0)).unwrap_err();
    assert!(matches!(error, SpecError::MemoryCap { mib: 32, .. }), "{error}");
    assert!(error.to_string().contains("hog.ts"), "{error}");
}

#[test]
fn no_files_environment_or_clock() {
    let (_dir, path) = spec_file(
        "escape.js",
        r#"import { always, extract, waitOnce } from "@uatu/spec";
const probe = extract(() => ({
  process: typeof process,
  require: (() => { try { require("fs"); return "read"; } catch (e) { return "refused"; } })(),
  std: typeof std,
  os: typeof os,
  javy: typeof Javy,
  fetch: typeof fetch,
  performance: typeof performance,
  console: (() => { if (typeof console !== "undefined") { console.log("hello"); console.error("err"); } return "survived"; })(),
  now: Date.now(),
  date: new Date().toISOString(),
}), "probe");
export const properties = { p: always(() => true) };
export const actions = waitOnce;
"#,
    );
    let (_m, mut spec) = start(&path, 1, SpecLimits::default()).unwrap();
    let mut s = state(0, 0);
    s.time = 5000;
    let step = spec.step(&s).unwrap();
    let probe = &step.extractors["probe"];
    assert_eq!(probe["require"], "refused");
    assert_eq!(probe["console"], "survived");
    for global in ["process", "std", "os", "javy", "fetch", "performance"] {
        assert_eq!(probe[global], "undefined", "{global} is reachable: {probe}");
    }
    assert_eq!(probe["now"], 5000);
    assert_eq!(probe["date"], "1970-01-01T00:00:05.000Z");
}

#[test]
fn dynamic_import_of_a_file_fails() {
    let (_dir, path) = spec_file(
        "import.js",
        r#"import { always, extract, waitOnce } from "@uatu/spec";
const probe = extract(() => { let r = "none"; import("/etc/passwd").then(() => { r = "read"; }, (e) => { r = "refused"; }); return r; }, "probe");
export const properties = { p: always(() => true) };
export const actions = waitOnce;
"#,
    );
    // The bundler leaves a dynamic import alone; QuickJS then has no module loader.
    match uatu::spec::build(&path) {
        Err(_) => {}
        Ok(module) => {
            let mut spec = SpecInstance::new(&module, SpecLimits::default()).unwrap();
            spec.load(&module, 1).unwrap();
            let step = spec.step(&state(0, 0)).unwrap();
            assert_ne!(step.extractors["probe"], "read");
        }
    }
}

#[test]
fn folio_example_spec_loads_and_offers_login_first() {
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/folio/spec.ts");
    let (_m, mut instance) = start(&spec, 5, SpecLimits::default()).unwrap();
    let description = instance.describe().unwrap().clone();
    assert_eq!(description.properties.len(), 11);
    let mut login = state(0, 0);
    login.snapshots.insert("route".into(), "login".into());
    login.snapshots.insert(
        "accounts".into(),
        serde_json::json!([{"id": "a1", "name": "Checking", "balance": 245401, "txnCount": 2}]),
    );
    login.snapshots.insert("total_balance".into(), 245401.into());
    let step = instance.step(&login).unwrap();
    assert!(step.generator_errors.is_empty(), "{:?}", step.generator_errors);
    // Every invariant (`always(pred)`) holds on a consistent state.
    let invariants: Vec<usize> = description
        .properties
        .iter()
        .filter(|(_, f)| f["op"] == "always" && f["arg"]["op"] == "pred")
        .map(|(_, f)| f["arg"]["id"].as_u64().unwrap() as usize)
        .collect();
    assert_eq!(invariants.len(), 10, "{:?}", description.properties);
    assert!(
        invariants.iter().all(|id| step.predicates[*id].holds()),
        "{:?}",
        step.predicates
    );
    assert!(
        step.candidates.iter().any(|c| c.path_label() == "0:signIn"),
        "{:?}",
        step.candidates
    );
    // A fractional cent breaks the integer-cents property.
    let mut bad = login.clone();
    bad.step = 1;
    bad.snapshots.insert(
        "accounts".into(),
        serde_json::json!([{"id": "a1", "name": "Checking", "balance": 100.5, "txnCount": 1}]),
    );
    let step = instance.step(&bad).unwrap();
    assert!(invariants.iter().any(|id| !step.predicates[*id].holds()));
}

#[test]
fn instances_can_move_between_threads() {
    fn assert_send<T: Send>() {}
    assert_send::<SpecInstance>();
    assert_send::<SpecModule>();
    let (_m, mut spec) = start(&fixture("basic.ts"), 42, SpecLimits::default()).unwrap();
    let step = std::thread::spawn(move || spec.step(&state(0, 1)).map(|s| s.candidates.len()))
        .join()
        .unwrap()
        .unwrap();
    assert!(step > 0);
}

/// The host sends only changed snapshots and the runtime sends back only changed
/// extractor values; what a spec sees and what a step reports must not show it.
#[test]
fn unchanged_snapshots_and_screens_read_the_same_as_new_ones() {
    let (_dir, path) = spec_file(
        "incremental.ts",
        r#"import { always, extract, waitOnce } from "@uatu/spec";
const rows = extract((s) => (s.snapshots.rows ?? null) as number[] | null, "rows");
const counter = extract((s) => s.snapshots.counter as number | undefined, "counter");
const amount = extract((s) => s.ax.find("id:amount")?.text ?? "", "amount");
const rowEls = extract((s) => s.ax.findAll("descPrefix:row_"), "rowEls");
const rowsKept = extract(() => rows.current === rows.previous, "rowsKept");
const rowElsKept = extract(() => rowEls.current[0] === rowEls.previous?.[0], "rowElsKept");
export const properties = {
  hasRows: always(() => rows.current !== null),
  amountIs12: always(() => amount.current === "12.50"),
};
export const actions = waitOnce;
"#,
    );
    let (_m, mut spec) = start(&path, 1, SpecLimits::default()).unwrap();
    let with_rows = |step: u64, rows: serde_json::Value| {
        let mut s = state(step, 5);
        s.snapshots.insert("rows".into(), rows);
        s
    };

    let first = spec.step(&with_rows(0, serde_json::json!([1, 2, 3]))).unwrap();
    assert_eq!(first.extractors["rows"], serde_json::json!([1, 2, 3]));
    assert_eq!(first.extractors["counter"], serde_json::json!(5));
    assert_eq!(first.extractors["amount"], serde_json::json!("12.50"));
    assert_eq!(first.extractors["rowEls"].as_array().map(Vec::len), Some(2));
    assert_eq!(first.extractors["rowsKept"], serde_json::json!(false));

    // Nothing changed but the step: every value is still reported, and the
    // unchanged snapshot is the very same object in the spec.
    let second = spec.step(&with_rows(1, serde_json::json!([1, 2, 3]))).unwrap();
    for name in ["rows", "counter", "amount", "rowEls"] {
        assert_eq!(second.extractors[name], first.extractors[name], "{name}");
    }
    assert_eq!(second.extractors["rowsKept"], serde_json::json!(true));
    assert!(holds(&second, 0) && holds(&second, 1));

    assert_eq!(second.extractors["rowElsKept"], serde_json::json!(true));

    // A changed field: the list around it is the same elements as before.
    let mut typed = with_rows(2, serde_json::json!([1, 2, 3]));
    typed.hierarchy.children[0].text = "12.5".into();
    let after_typing = spec.step(&typed).unwrap();
    assert_eq!(after_typing.extractors["amount"], serde_json::json!("12.5"));
    assert_eq!(after_typing.extractors["rowElsKept"], serde_json::json!(true));
    assert_eq!(after_typing.extractors["rowEls"], first.extractors["rowEls"]);
    assert!(!holds(&after_typing, 1));

    // A changed snapshot and a changed screen are seen.
    let mut third_state = with_rows(2, serde_json::json!([4]));
    third_state.hierarchy.children[0].text = "7.00".into();
    third_state.hierarchy.children[3].children.pop();
    let third = spec.step(&third_state).unwrap();
    assert_eq!(third.extractors["rows"], serde_json::json!([4]));
    assert_eq!(third.extractors["amount"], serde_json::json!("7.00"));
    assert_eq!(third.extractors["rowEls"].as_array().map(Vec::len), Some(1));
    assert_eq!(third.extractors["rowsKept"], serde_json::json!(false));
    assert_eq!(third.extractors["rowElsKept"], serde_json::json!(false));
    assert!(!holds(&third, 1));

    // A snapshot that goes away is gone for the spec too.
    let fourth = spec.step(&state(3, 5)).unwrap();
    assert_eq!(fourth.extractors["rows"], serde_json::Value::Null);
    assert!(!holds(&fourth, 0));
    // ... and the screen of step 0 is read anew after the change.
    assert!(holds(&fourth, 1));
    assert_eq!(fourth.extractors["rowEls"].as_array().map(Vec::len), Some(2));
}

#[test]
fn the_state_is_read_only() {
    let (_dir, path) = spec_file(
        "mutates.ts",
        r#"import { always, waitOnce } from "@uatu/spec";
export const properties = {
  sortsInPlace: always((s) => (s.snapshots.rows as number[]).sort().length === 3),
  editsAnElement: always((s) => { (s.ax.find("id:amount") as any).text = "0"; return true; }),
  copiesFirst: always((s) => [...(s.snapshots.rows as number[])].sort()[0] === 1),
  resizesTheScreen: always((s) => { (s.screen as any).width = 1; return true; }),
};
export const actions = waitOnce;
"#,
    );
    let (_m, mut spec) = start(&path, 1, SpecLimits::default()).unwrap();
    let mut s = state(0, 0);
    s.snapshots.insert("rows".into(), serde_json::json!([3, 1, 2]));
    for step in 0..2 {
        s.step = step;
        let result = spec.step(&s).unwrap();
        for id in [0, 1, 3] {
            let PredicateValue::Error { error } = &result.predicates[id] else {
                panic!("predicate {id} at step {step}: {:?}", result.predicates[id])
            };
            assert!(error.message.contains("TypeError"), "{}", error.message);
        }
        assert!(holds(&result, 2), "{:?}", result.predicates[2]);
    }
}

/// A step's results leave the runtime as `JSON.stringify` would write them (the
/// provider transcodes them in Rust): `toJSON` called, functions and `undefined`
/// dropped from objects and `null` in arrays, whole numbers as integers, NaN as
/// `null`; a cyclic value is the spec's error, naming the extractor.
#[test]
fn extractor_values_are_recorded_as_json_stringify_writes_them() {
    let (_dir, path) = spec_file(
        "values.ts",
        r#"import { always, extract, waitOnce } from "@uatu/spec";
extract(() => new Date(86_400_000), "date");
extract(() => ({ a: 1, f: () => 1, u: undefined, nested: { toJSON: (key: string) => `nested as ${key}` } }), "object");
extract(() => [1, undefined, () => 2, Symbol("s")], "array");
extract(() => [2.0, 0.5, -0, NaN, Infinity, 2 ** 53], "numbers");
extract(() => "tab\t\"quoted\" \u00e9 \u{1F600}", "text");
extract((s) => {
  if (s.step === 0) return 1;
  const cycle: Record<string, unknown> = {};
  cycle.self = cycle;
  return cycle;
}, "cyclic");
export const properties = { ok: always(() => true) };
export const actions = waitOnce;
"#,
    );
    let (_m, mut spec) = start(&path, 1, SpecLimits::default()).unwrap();
    let step = spec.step(&state(0, 0)).unwrap();
    let extracted = &step.extractors;
    assert_eq!(extracted["date"], "1970-01-02T00:00:00.000Z");
    assert_eq!(
        extracted["object"],
        serde_json::json!({ "a": 1, "nested": "nested as nested" })
    );
    assert_eq!(extracted["array"], serde_json::json!([1, null, null, null]));
    let numbers = extracted["numbers"].as_array().expect("an array");
    assert_eq!(
        numbers[..5],
        serde_json::json!([2, 0.5, 0, null, null]).as_array().unwrap()[..]
    );
    assert!(extracted["numbers"][0].is_u64(), "{}", extracted["numbers"]);
    // The one difference: a whole number past 2^53 - 1 (not exact in JavaScript) is
    // written as a float (`9007199254740992.0`), where JSON.stringify writes no `.0`.
    assert_eq!(extracted["numbers"][5].as_f64(), Some(9007199254740992.0));
    assert_eq!(extracted["text"], "tab\t\"quoted\" \u{e9} \u{1F600}");
    assert_eq!(extracted["cyclic"], 1);

    let error = spec.step(&state(1, 0)).unwrap_err();
    let SpecError::Thrown { message, .. } = &error else {
        panic!("a cyclic value is the spec's error, not {error:?}")
    };
    assert!(
        message.contains("extractor cyclic: its value cannot be recorded as JSON")
            && message.contains("circular"),
        "names the extractor: {message}"
    );
}

/// Predicates outside `evaluate_only` are not run (a violated property's, in a run)
/// and come back as skipped; the others run as before, and all run again when asked.
#[test]
fn predicates_left_out_by_evaluate_only_are_not_run() {
    let (_dir, path) = spec_file(
        "skips.ts",
        r#"import { always, extract, waitOnce } from "@uatu/spec";
let runs = [0, 0];
extract(() => runs.slice(), "runs");
export const properties = {
  first: always(() => { runs[0] += 1; return false; }),
  second: always(() => { runs[1] += 1; return true; }),
};
export const actions = waitOnce;
"#,
    );
    let (_m, mut spec) = start(&path, 1, SpecLimits::default()).unwrap();
    let first = spec.step(&state(0, 0)).unwrap();
    assert_eq!(
        first.predicates,
        [PredicateValue::Value(false), PredicateValue::Value(true)]
    );
    spec.evaluate_only(&[1].into());
    for step in 1..3 {
        let skipping = spec.step(&state(step, 0)).unwrap();
        assert_eq!(
            skipping.predicates,
            [PredicateValue::Skipped, PredicateValue::Value(true)]
        );
    }
    spec.evaluate_only(&[0, 1].into());
    let again = spec.step(&state(3, 0)).unwrap();
    // The extractor ran before this step's predicates: the first ran at step 0 only.
    assert_eq!(again.extractors["runs"], serde_json::json!([1, 3]));
    assert_eq!(
        again.predicates,
        [PredicateValue::Value(false), PredicateValue::Value(true)]
    );
}

/// A generator's action that cannot be sent as JSON is the spec's error naming the
/// generator, whether its branch is offered on demand or every generator runs.
#[test]
fn a_cyclic_action_is_an_error_naming_its_generator() {
    let (_dir, path) = spec_file(
        "cyclic_action.ts",
        r#"import { actions, always, Tap, weighted } from "@uatu/spec";
export const properties = { ok: always(() => true) };
const looped = () => {
  const action: Record<string, unknown> = { ...Tap({ on: "desc:row_1" }) };
  action.self = action;
  return action as any;
};
export const actionsRoot = weighted([1, actions(looped, "looped")]);
"#,
    );
    for on_demand in [true, false] {
        let (_m, mut spec) = start(&path, 1, SpecLimits::default()).unwrap();
        spec.set_generators(!on_demand);
        let error = if on_demand {
            spec.step(&state(0, 0)).unwrap();
            spec.offer(1).unwrap_err()
        } else {
            spec.step(&state(0, 0)).unwrap_err()
        };
        let message = error.to_string();
        assert!(
            message.contains("generator looped: an action cannot be sent as JSON")
                && message.contains("circular"),
            "names the generator: {message}"
        );
    }
}

/// With the extractors' values off (`uatu check`) every extractor still runs, one
/// keeping state included, and the predicates see what they see with the values on;
/// no value comes back. Turned back on, the next step returns every value, those
/// that did not change included.
#[test]
fn extractor_values_turned_off_still_run_every_extractor() {
    let source = r#"import { always, extract, waitOnce } from "@uatu/spec";
let seen = 0;
const count = extract(() => ++seen, "count");
const constant = extract(() => "same", "constant");
export const properties = { counted: always(() => count.current === (count.previous ?? 0) + 1) };
export const actions = waitOnce;
"#;
    let (_dir, path) = spec_file("values.ts", source);
    let (_m, mut with_values) = start(&path, 1, SpecLimits::default()).unwrap();
    let (_m2, mut without) = start(&path, 1, SpecLimits::default()).unwrap();
    without.set_extractor_values(false);
    for step in 0..3 {
        let expected = with_values.step(&state(step, 0)).unwrap();
        let got = without.step(&state(step, 0)).unwrap();
        assert!(got.extractors.is_empty(), "step {step}: {:?}", got.extractors);
        assert_eq!(got.predicates, expected.predicates, "step {step}");
        assert!(holds(&got, 0), "step {step}");
    }
    without.set_extractor_values(true);
    let again = without.step(&state(3, 0)).unwrap();
    assert_eq!(
        again.extractors["count"],
        serde_json::json!(4),
        "every step ran it"
    );
    assert_eq!(
        again.extractors["constant"],
        serde_json::json!("same"),
        "sent though unchanged"
    );
    assert_eq!(
        again.extractors,
        with_values.step(&state(3, 0)).unwrap().extractors
    );
}

/// Every action constructor of `@uatu/spec` builds the JSON the host reads as that action.
#[test]
fn every_action_constructor_builds_an_action_the_host_reads() {
    let (_dir, path) = spec_file(
        "actions.ts",
        r##"import { always, actions, Tap, DoubleTap, LongPress, Scroll, InputText, ClearText, Swipe, PressKey, Wait,
  Navigate, Reload, Back, Forward } from "@uatu/spec";
export const properties = { ok: always(() => true) };
export const actionsRoot = actions((s) => {
  const row = s.ax.find("desc:row_1")!;
  return [
    Tap({ on: row }), DoubleTap({ on: "desc:row_1" }), LongPress({ on: row }), LongPress({ on: row, durationMillis: 750.4 }),
    Scroll({ direction: "down" }), Scroll({ in: "id:list", direction: "up", amount: 1 }),
    InputText({ into: "id:amount", text: "12" }), InputText({ text: "x", submit: true }), InputText({ text: "y", submit: false }),
    ClearText(), ClearText({ into: "id:amount" }),
    Swipe({ from: { x: 1, y: 2 }, to: row }),
    ...(["escape", "backspace", "delete", "space", "pageUp", "pageDown"] as const).map((key) => PressKey({ key })),
    Wait({ durationMillis: 10 }),
    Navigate({ to: "/active" }), Navigate({ to: "#/completed" }), Navigate({ to: "http://127.0.0.1:8000/x" }),
    Reload(), Back(), Forward(),
  ];
});
"##,
    );
    let (_m, mut spec) = start(&path, 1, SpecLimits::default()).unwrap();
    let step = spec.step(&state(0, 0)).unwrap();
    assert!(step.generator_errors.is_empty(), "{:?}", step.generator_errors);
    let written: Vec<serde_json::Value> = step
        .candidates
        .iter()
        .map(|c| serde_json::to_value(&c.action).unwrap())
        .collect();
    let row = serde_json::json!({"x": 540, "y": 250, "bounds": {"left": 0, "top": 200, "right": 1080, "bottom": 300}});
    let expected = serde_json::json!([
        {"type": "tap", "on": row},
        {"type": "doubleTap", "on": "desc:row_1"},
        {"type": "longPress", "on": row},
        {"type": "longPress", "on": row, "durationMillis": 750},
        {"type": "scroll", "direction": "down"},
        {"type": "scroll", "on": "id:list", "direction": "up", "amount": 1.0},
        {"type": "inputText", "into": "id:amount", "text": "12"},
        {"type": "inputText", "text": "x", "submit": true},
        {"type": "inputText", "text": "y"},
        {"type": "clearText"},
        {"type": "clearText", "into": "id:amount"},
        {"type": "swipe", "from": {"x": 1, "y": 2}, "to": row},
        {"type": "pressKey", "key": "escape"},
        {"type": "pressKey", "key": "backspace"},
        {"type": "pressKey", "key": "delete"},
        {"type": "pressKey", "key": "space"},
        {"type": "pressKey", "key": "pageUp"},
        {"type": "pressKey", "key": "pageDown"},
        {"type": "wait", "durationMillis": 10},
        {"type": "navigate", "to": "/active"},
        {"type": "navigate", "to": "#/completed"},
        {"type": "navigate", "to": "http://127.0.0.1:8000/x"},
        {"type": "reload"},
        {"type": "back"},
        {"type": "forward"},
    ]);
    assert_eq!(serde_json::Value::Array(written), expected);
}

/// A constructor given a bad argument throws a `SpecError` located at the spec's line:
/// at load for top-level code, as the generator's error (the run goes on) inside one;
/// an action object the constructors did not build is refused by the host, naming it.
#[test]
fn a_misused_action_constructor_is_a_spec_error_at_its_line() {
    for (call, message) in [
        (
            "DoubleTap({} as any)",
            "DoubleTap.on must be a selector or an element/point with x and y (got undefined",
        ),
        (
            "LongPress({ on: \"desc:x\", durationMillis: -5 })",
            "LongPress.durationMillis must be a non-negative",
        ),
        (
            "Scroll({ direction: \"sideways\" } as any)",
            "Scroll.direction must be one of up, down, left, right",
        ),
        (
            "Scroll({ direction: \"up\", amount: 2 })",
            "Scroll.amount must be a fraction over 0 and at most 1",
        ),
        (
            "InputText({ text: \"x\", submit: \"yes\" } as any)",
            "InputText.submit must be true or false",
        ),
        (
            "PressKey({ key: \"page_down\" } as any)",
            "PressKey.key must be one of back, home, enter, tab",
        ),
        (
            "Navigate({ to: \"javascript:alert(1)\" })",
            "Navigate.to must be a path starting with /, # or ?",
        ),
        (
            "ClearText(\"id:x\" as any)",
            "ClearText takes an object of its arguments",
        ),
    ] {
        let source = format!(
            "import {{ always, actions, DoubleTap, LongPress, Scroll, InputText, PressKey, Navigate, ClearText }} from \"@uatu/spec\";\n\
             export const properties = {{ ok: always(() => true) }};\n\
             export const actionsRoot = actions(() => [\n  {call},\n]);\n"
        );
        let (_dir, path) = spec_file("misused.ts", &source);
        let (_m, mut spec) = start(&path, 1, SpecLimits::default()).unwrap();
        let step = spec.step(&state(0, 0)).unwrap();
        assert_eq!(
            step.generator_errors.len(),
            1,
            "{call}: {:?}",
            step.generator_errors
        );
        let error = &step.generator_errors[0];
        assert!(
            error.message.starts_with("SpecError: ") && error.message.contains(message),
            "{call}: {error:?}"
        );
        assert!(
            error
                .location
                .as_deref()
                .is_some_and(|l| l.contains("misused.ts:4:")),
            "{call}: {error:?}"
        );

        let top_level = format!(
            "import {{ always, actions, DoubleTap, LongPress, Scroll, InputText, PressKey, Navigate, ClearText }} from \"@uatu/spec\";\n\
             export const properties = {{ ok: always(() => true) }};\n\
             const bad = {call};\n\
             export const actionsRoot = actions(() => [bad]);\n"
        );
        let (_dir, path) = spec_file("top.ts", &top_level);
        let error = start(&path, 1, SpecLimits::default())
            .err()
            .expect(call)
            .to_string();
        assert!(
            error.contains("top.ts:3:") && error.contains(message),
            "{call}: {error}"
        );
    }
    let (_dir, path) = spec_file(
        "handmade.ts",
        r#"import { always, actions } from "@uatu/spec";
export const properties = { ok: always(() => true) };
export const actionsRoot = actions(() => [{ type: "doubleTap" } as any, { type: "hover", on: "id:x" } as any]);
"#,
    );
    let (_m, mut spec) = start(&path, 1, SpecLimits::default()).unwrap();
    let step = spec.step(&state(0, 0)).unwrap();
    let messages: Vec<&str> = step.generator_errors.iter().map(|e| e.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "invalid action: doubleTap: missing field `on`",
            "invalid action: `hover` is not an action type; the types are tap, doubleTap, longPress, scroll, \
             inputText, clearText, swipe, pressKey, wait, navigate, reload, back, forward"
        ]
    );
}

/// `state.lastAction` is what the trace records as the step's action, with `applied`
/// always there: `true`, `false` or `"unknown"`.
#[test]
fn the_spec_sees_the_last_action_and_whether_it_was_applied() {
    let (_dir, path) = spec_file(
        "last.ts",
        r#"import { always, actions, extract, Wait } from "@uatu/spec";
export const applied = extract((s) => s.lastAction === null ? "none" : s.lastAction.applied);
export const kind = extract((s) => s.lastAction?.action.type ?? null);
export const detail = extract((s) => s.lastAction?.detail ?? null);
export const properties = { ok: always(() => true) };
export const actionsRoot = actions(() => Wait({ durationMillis: 1 }));
"#,
    );
    let (_m, mut spec) = start(&path, 1, SpecLimits::default()).unwrap();
    let tap = |applied: uatu::action::Applied, detail: &str| uatu::action::ResolvedAction {
        action: Action::DoubleTap {
            on: Target::selector("desc:row_1"),
        },
        generator: "0".into(),
        point: None,
        bounds: None,
        to_point: None,
        applied,
        detail: detail.into(),
    };
    let mut expected = Vec::new();
    let mut seen = Vec::new();
    for (step, last) in [
        None,
        Some(tap(uatu::action::Applied::Yes, "")),
        Some(tap(
            uatu::action::Applied::No,
            "nothing on screen matches `desc:row_1`",
        )),
        Some(tap(uatu::action::Applied::Unknown, "")),
    ]
    .into_iter()
    .enumerate()
    {
        let mut state = state(step as u64, 1);
        expected.push(match &last {
            None => serde_json::json!(["none", null, null]),
            Some(action) => serde_json::json!([
                serde_json::to_value(action.applied).unwrap(),
                "doubleTap",
                if action.detail.is_empty() {
                    serde_json::Value::Null
                } else {
                    action.detail.clone().into()
                }
            ]),
        });
        state.last_action = last;
        let values = spec.step(&state).unwrap().extractors;
        seen.push(serde_json::json!([
            values["applied"],
            values["kind"],
            values["detail"]
        ]));
    }
    assert_eq!(seen, expected);
    assert_eq!(expected[3][0], "unknown");
}

/// `state()` with a role and attributes on the login button and a text field.
fn rich_state(step: u64) -> State {
    let mut state = state(step, 1);
    let login = &mut state.hierarchy.children[2];
    login.role = "button".into();
    login.attrs = [("data-kind".to_string(), "primary".to_string())].into();
    let mut field = node("app.folio:id/note", "", "", true, (0, 2300, 1080, 2400));
    field.class_name = "android.widget.EditText".into();
    state.hierarchy.children.push(field);
    state
}

/// Object, path and element-scoped selectors, in queries and action targets, find
/// what the host's one matcher finds; a mistyped key is a spec error at its line.
#[test]
fn object_path_and_element_selectors_in_queries_and_targets() {
    let (_dir, path) = spec_file(
        "selectors.ts",
        r#"import { always, actions, extract, Tap } from "@uatu/spec";
export const byObject = extract((s) => s.ax.find({ desc: "row_1", clickable: true })?.text ?? null);
export const byPath = extract((s) => s.ax.findAll([{ id: "list" }, { clickable: true }]).map((e) => e.desc));
export const byString = extract((s) => s.ax.find("id:list > desc:row_2")?.desc ?? null);
export const inside = extract((s) => s.ax.find("id:list")!.findAll({ clickable: true }).map((e) => e.desc));
export const notItself = extract((s) => s.ax.find("id:list")!.find("id:list") ?? null);
export const attrs = extract((s) => s.ax.find({ role: "button" })?.attrs["data-kind"] ?? null);
export const byAttr = extract((s) => s.ax.find({ "data-kind": "primary" })?.desc ?? null);
export const prefixes = extract((s) => [s.ax.findAll("textPrefix:Hel").length, s.ax.findAll({ idPrefix: "am" }).length]);
export const properties = { ok: always(() => true) };
export const actionsRoot = actions((s) => [
  Tap({ on: { role: "button" } }),
  Tap({ on: ["id:list", { desc: "row_2" }] }),
  Tap({ on: s.ax.find({ enabled: "yes" } as any)! }),
]);
"#,
    );
    let (_m, mut spec) = start(&path, 1, SpecLimits::default()).unwrap();
    let step = spec.step(&rich_state(0)).unwrap();
    let value = |name: &str| step.extractors[name].clone();
    assert_eq!(value("byObject"), "Hello");
    assert_eq!(value("byPath"), serde_json::json!(["row_1", "row_2"]));
    assert_eq!(value("byString"), "row_2");
    assert_eq!(value("inside"), serde_json::json!(["row_1", "row_2"]));
    assert_eq!(value("notItself"), serde_json::Value::Null);
    assert_eq!(value("attrs"), "primary");
    assert_eq!(value("byAttr"), "login_submit");
    assert_eq!(value("prefixes"), serde_json::json!([1, 1]));
    // The generator threw at its third action: nothing from it, its error located.
    assert!(step.candidates.is_empty(), "{:?}", step.candidates);
    let error = &step.generator_errors[0];
    assert!(
        error
            .message
            .contains("ax.find.enabled must be true or false (got \"yes\")"),
        "{error:?}"
    );
    assert!(
        error
            .location
            .as_deref()
            .is_some_and(|l| l.contains("selectors.ts:14:")),
        "{error:?}"
    );

    let (_dir, path) = spec_file(
        "targets.ts",
        r#"import { always, actions, Tap, LongPress } from "@uatu/spec";
export const properties = { ok: always(() => true) };
export const actionsRoot = actions(() => [
  Tap({ on: { role: "button" } }),
  LongPress({ on: ["id:list", { desc: "row_2" }] }),
]);
"#,
    );
    let (_m, mut spec) = start(&path, 1, SpecLimits::default()).unwrap();
    let step = spec.step(&rich_state(0)).unwrap();
    assert!(step.generator_errors.is_empty(), "{:?}", step.generator_errors);
    let hierarchy = rich_state(0).hierarchy;
    let points: Vec<_> = step
        .candidates
        .iter()
        .map(|c| {
            uatu::run::target::resolve_action(&c.action, String::new(), &hierarchy)
                .expect("resolves")
                .point
        })
        .collect();
    assert_eq!(
        points,
        [
            Some(uatu_device::model::Point { x: 200, y: 2250 }),
            Some(uatu_device::model::Point { x: 540, y: 350 })
        ]
    );
}

/// The built-in generators offer what their table says, over the tree.
#[test]
fn the_built_in_generators_offer_every_action_kind() {
    let (_dir, path) = spec_file(
        "builtins.ts",
        r#"import { always, weighted, taps, doubleTaps, longPresses, scrolls, swipes, typing, pressKeys, navigation, waitOnce, defaultActions } from "@uatu/spec";
export const properties = { ok: always(() => true) };
export const actionsRoot = weighted([1, doubleTaps], [1, longPresses], [1, scrolls], [1, typing], [1, pressKeys], [1, navigation], [1, defaultActions]);
void taps; void swipes; void waitOnce;
"#,
    );
    let (_m, mut spec) = start(&path, 1, SpecLimits::default()).unwrap();
    let step = spec.step(&rich_state(0)).unwrap();
    assert!(step.generator_errors.is_empty(), "{:?}", step.generator_errors);
    let count = |first: u32, kind: &str| {
        step.candidates
            .iter()
            .filter(|c| c.path[0].index == first && c.action.type_name() == kind)
            .count()
    };
    // Clickable and enabled: row_1, row_2, login, the note field.
    assert_eq!(count(0, "doubleTap"), 4);
    assert_eq!(count(1, "longPress"), 4);
    assert_eq!(count(2, "scroll"), 2, "down and up on the list");
    assert_eq!(count(3, "inputText"), 1, "the one EditText");
    assert_eq!(count(4, "pressKey"), 13, "every key but home");
    assert_eq!(count(5, "back") + count(5, "forward") + count(5, "reload"), 3);
    for kind in [
        "tap",
        "inputText",
        "scroll",
        "swipe",
        "doubleTap",
        "longPress",
        "pressKey",
        "back",
        "wait",
    ] {
        assert!(count(6, kind) > 0, "defaultActions offers {kind}");
    }
    let typed = step
        .candidates
        .iter()
        .find_map(|c| match &c.action {
            Action::InputText { text, submit, .. } if c.path[0].index == 3 => Some((text.clone(), *submit)),
            _ => None,
        })
        .expect("typing offered");
    assert!(!typed.1, "typing leaves the text pending");
}

/// Samplers draw within their bounds, the same values from the same seed; a bad
/// bound is a spec error at its line.
#[test]
fn samplers_draw_within_bounds_deterministically() {
    let source = r#"import { always, actions, extract, from, integers, strings, emails, edgeCaseText, EDGE_CASE_CORPUS } from "@uatu/spec";
const small = integers().between(-3, 3);
const codes = strings().length(2, 4).numeric();
const names = strings().length(1, 5).alpha();
const mixed = strings().length(3, 3).alnum();
const mails = emails().domain("test.example");
const picks = from(["a", "b"]);
export const drawn = extract(() => {
  const out: unknown[] = [];
  for (let i = 0; i < 20; i++) out.push([small.generate(), codes.generate(), names.generate(), mixed.generate(), mails.generate(), picks.generate(), EDGE_CASE_CORPUS.includes(edgeCaseText().generate())]);
  return out;
});
export const properties = { ok: always(() => true) };
export const actionsRoot = actions(() => null);
"#;
    let (_dir, path) = spec_file("samplers.ts", source);
    let draw = |seed: u64| {
        let (_m, mut spec) = start(&path, seed, SpecLimits::default()).unwrap();
        spec.step(&state(0, 0)).unwrap().extractors["drawn"].clone()
    };
    let drawn = draw(5);
    assert_eq!(drawn, draw(5));
    assert_ne!(drawn, draw(6));
    for row in drawn.as_array().expect("rows") {
        let n = row[0].as_i64().expect("an integer");
        assert!((-3..=3).contains(&n), "{row}");
        let code = row[1].as_str().expect("a string");
        assert!(
            (2..=4).contains(&code.len()) && code.chars().all(|c| c.is_ascii_digit()),
            "{row}"
        );
        let name = row[2].as_str().expect("a string");
        assert!(
            (1..=5).contains(&name.len()) && name.chars().all(|c| c.is_ascii_alphabetic()),
            "{row}"
        );
        let mixed = row[3].as_str().expect("a string");
        assert!(
            mixed.len() == 3 && mixed.chars().all(|c| c.is_ascii_alphanumeric()),
            "{row}"
        );
        assert!(
            row[4].as_str().expect("a string").ends_with("@test.example"),
            "{row}"
        );
        assert!(row[5] == "a" || row[5] == "b", "{row}");
        assert_eq!(row[6], true, "{row}");
    }
    for (call, message) in [
        (
            "integers().between(5, 1)",
            "integers().between: min 5 is over max 1",
        ),
        (
            "integers().between(0.5, 1)",
            "integers().between min must be a whole number",
        ),
        (
            "strings().length(-1, 3)",
            "strings().length: min must be 0 or more",
        ),
        (
            "emails().domain(\"not a domain\")",
            "emails().domain takes a domain name",
        ),
    ] {
        let source = format!(
            "import {{ always, actions, integers, strings, emails }} from \"@uatu/spec\";\nexport const properties = {{ ok: always(() => true) }};\nconst bad = {call};\nexport const actionsRoot = actions(() => null);\nvoid integers; void strings; void emails; void bad;\n"
        );
        let (_dir, path) = spec_file("bad.ts", &source);
        let error = start(&path, 1, SpecLimits::default())
            .err()
            .expect(call)
            .to_string();
        assert!(
            error.contains(message) && error.contains("bad.ts:3:"),
            "{call}: {error}"
        );
    }
}

/// `whenRoute` offers its body only on its routes; `setup` is described to the host,
/// as a list of actions or as a second tree the host can offer from.
#[test]
fn when_route_gates_its_body_and_setup_is_described() {
    let (_dir, path) = spec_file(
        "routes.ts",
        r#"import { always, weighted, extract, whenRoute, actions, Tap, Wait, InputText } from "@uatu/spec";
const route = extract((s) => (s.ax.find("desc:login_submit") ? "login" : "home"));
export const properties = { ok: always(() => true) };
export const actionsRoot = weighted(
  [1, whenRoute(route, ["login"], () => [Tap({ on: "desc:login_submit" })])],
  [1, whenRoute((s) => s.step > 0, actions(() => [Wait({ durationMillis: 1 })]))],
);
export const setup = weighted([1, actions(() => [InputText({ into: "id:amount", text: "1" })])]).named("login");
"#,
    );
    let (_m, mut spec) = start(&path, 1, SpecLimits::default()).unwrap();
    let kinds = |step: &SpecStep| {
        step.candidates
            .iter()
            .map(|c| c.action.type_name())
            .collect::<Vec<_>>()
    };
    let first = spec.step(&state(0, 0)).unwrap();
    assert_eq!(kinds(&first), ["tap"], "step 0: only the login route");
    let mut away = state(1, 0);
    away.hierarchy.children.remove(2);
    let second = spec.step(&away).unwrap();
    assert_eq!(kinds(&second), ["wait"], "step 1 on home");
    let setup = spec.describe().unwrap().setup.clone();
    let Some(uatu::spec::Setup::Generator { place }) = setup else {
        panic!("a generator setup: {setup:?}");
    };
    assert_eq!(
        spec.action_tree().place(place).map(|p| p.path.len()),
        Some(0),
        "a second root"
    );
    let offered = spec.offer(place).unwrap();
    assert_eq!(
        offered
            .candidates
            .iter()
            .map(|c| c.action.type_name())
            .collect::<Vec<_>>(),
        ["inputText"]
    );

    let (_dir, path) = spec_file(
        "listed.ts",
        r#"import { always, actions, Tap, InputText } from "@uatu/spec";
export const properties = { ok: always(() => true) };
export const actionsRoot = actions(() => null);
export const setup = [InputText({ into: "id:amount", text: "5", submit: true }), Tap({ on: "desc:login_submit" })];
"#,
    );
    let (_m, spec) = start(&path, 1, SpecLimits::default()).unwrap();
    let Some(uatu::spec::Setup::Actions(actions)) = spec.describe().unwrap().setup.clone() else {
        panic!("a list setup");
    };
    assert_eq!(
        actions.iter().map(|a| a.type_name()).collect::<Vec<_>>(),
        ["inputText", "tap"]
    );
}

/// The original project's ways of naming an extractor work too.
#[test]
fn an_extractor_is_named_first_last_or_with_named() {
    let (_dir, path) = spec_file(
        "named.ts",
        r#"import { always, actions, extract } from "@uatu/spec";
const a = extract("first", (s) => s.step);
const b = extract((s) => s.step + 1, "last");
const c = extract((s) => s.step + 2).named("chained");
export const properties = { ok: always(() => a.current + 1 === b.current && b.current + 1 === c.current) };
export const actionsRoot = actions(() => null);
"#,
    );
    let (_m, mut spec) = start(&path, 1, SpecLimits::default()).unwrap();
    let names: Vec<String> = spec
        .describe()
        .unwrap()
        .extractors
        .iter()
        .map(|(n, _)| n.clone())
        .collect();
    assert_eq!(names, ["first", "last", "chained"]);
    let step = spec.step(&state(3, 0)).unwrap();
    assert_eq!(step.extractors["chained"], 5);
    assert!(holds(&step, 0));
}
