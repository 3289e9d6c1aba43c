//! Spec step cost: one `SpecInstance::step` call (state in, results out) on a
//! Folio-like spec with a 300-node hierarchy, and `uatu build` with a warm cache.
//!
//! A step costs most where the state changed (changed snapshots are re-sent and
//! re-parsed, a changed screen drops the query answers), so each spec runs over
//! three sequences of 1,000 states: `steady` (nothing changes but the step),
//! `run-like` (each snapshot and the hierarchy change with the rates measured in a
//! 2,000-step Folio run, see `RUN_LIKE_RATES`) and `all-new` (every snapshot and
//! the text of every element change at every step).
//!
//! Run: `cargo bench -p uatu-cli --bench spec_step` (or add `--profile dev` to skip
//! the release build; the guest runs the same Cranelift code either way).

use std::path::Path;
use std::time::{Duration, Instant};

mod bench_common;
use bench_common::percentile;
use uatu::spec::{SpecInstance, SpecLimits, SpecModule};
use uatu::state::State;
use uatu_device::model::{Bounds, Node, ScreenSize};

fn leaf(id: &str, desc: &str, text: &str, top: i32) -> Node {
    Node {
        id: if id.is_empty() {
            String::new()
        } else {
            format!("app.folio:id/{id}")
        },
        desc: desc.into(),
        text: text.into(),
        class_name: "android.widget.TextView".into(),
        package: "app.folio".into(),
        clickable: !desc.is_empty(),
        enabled: true,
        bounds: Bounds {
            left: 0,
            top,
            right: 1080,
            bottom: top + 60,
        },
        ..Node::default()
    }
}

/// 300 nodes: containers, account rows, ledger rows, fields and buttons.
fn state(step: u64) -> State {
    let mut nodes = vec![
        leaf("title", "", "Ledger", 0),
        leaf("total", "", "1234.00", 60),
        leaf("amount", "", "", 120),
        leaf("email", "", "", 180),
        leaf("", "save", "Save", 240),
        leaf("", "add_row", "Add", 300),
        leaf("", "nav_back", "Back", 360),
    ];
    for tab in ["accounts", "ledger", "settings"] {
        nodes.push(leaf("", &format!("tab_{tab}"), tab, 2300));
    }
    let mut list = leaf("list", "", "", 400);
    list.scrollable = true;
    list.bounds.bottom = 2200;
    for i in 0..190 {
        let desc = if i < 40 {
            format!("account_{i}")
        } else {
            format!("row_{i}")
        };
        let mut row = leaf("", "", "", 400 + (i % 30) * 60);
        row.children = vec![leaf(
            "",
            &desc,
            &format!("Item {i}  {}.00", i * 7),
            row.bounds.top,
        )];
        if i % 2 == 0 {
            list.children.push(row);
        } else {
            list.children.push(row.children.remove(0));
        }
    }
    nodes.push(list);
    let mut root = leaf("", "", "", 0);
    root.bounds = Bounds {
        left: 0,
        top: 0,
        right: 1080,
        bottom: 2400,
    };
    root.children = nodes;
    let count = root.descendants().count();
    assert!((290..=310).contains(&count), "{count} nodes");

    let accounts: Vec<serde_json::Value> = (0..20)
        .map(|i| serde_json::json!({"name": format!("Account {i}"), "balanceCents": i * 1000}))
        .collect();
    let ledger: Vec<serde_json::Value> = (0..60)
        .map(|i| serde_json::json!({"account": format!("Account {}", i % 20), "amountCents": i * 25 - 300}))
        .collect();
    let mut snapshots = serde_json::Map::new();
    snapshots.insert("route".into(), "ledger".into());
    snapshots.insert("accounts".into(), accounts.into());
    snapshots.insert("ledger".into(), ledger.into());
    snapshots.insert("totalCents".into(), (0..20).map(|i| i * 1000).sum::<i64>().into());
    // The keys the reference Folio app registers (docs/simulator.md), for examples/folio/spec.ts.
    let folio_accounts: Vec<serde_json::Value> = (0..20)
        .map(|i| serde_json::json!({"id": format!("a{i}"), "name": format!("Account {i}"), "balance": i * 1000, "txnCount": 3}))
        .collect();
    let folio_rows: Vec<serde_json::Value> = (0..60)
        .map(|i| serde_json::json!({"id": format!("t{i}"), "accountId": "a3", "type": "credit", "amount": 25 * i + 1, "signed": 25 * i + 1}))
        .collect();
    snapshots.insert("logged_in".into(), true.into());
    snapshots.insert("auth_status".into(), "logged-in".into());
    snapshots.insert("account_count".into(), 20.into());
    snapshots.insert("accounts_folio".into(), folio_accounts.into());
    snapshots.insert("ledger_rows".into(), folio_rows.into());
    snapshots.insert("active_account_id".into(), "a3".into());
    snapshots.insert(
        "ledger_balance".into(),
        (0..60).map(|i| 25 * i + 1).sum::<i64>().into(),
    );
    snapshots.insert("focused_input".into(), serde_json::Value::Null);
    snapshots.insert("txn_form_type".into(), serde_json::Value::Null);
    snapshots.insert("txn_form_account_id".into(), serde_json::Value::Null);
    for error in ["login_error", "add_account_error", "txn_error"] {
        snapshots.insert(error.into(), "".into());
    }
    State {
        step,
        time: step * 700,
        screen: ScreenSize {
            width: 1080,
            height: 2400,
        },
        hierarchy: root,
        snapshots,
        ..State::default()
    }
}

/// How often each snapshot, and the hierarchy, changed from one step to the next
/// in `uatu run --spec examples/folio/spec.ts --seed 7 --max-steps 2000 --sim-latency 0`.
const RUN_LIKE_RATES: &[(&str, f64)] = &[
    ("hierarchy", 0.84),
    ("route", 0.44),
    ("ledger_balance", 0.35),
    ("focused_input", 0.29),
    ("active_account_id", 0.13),
    ("ledger_rows", 0.12),
    ("txn_error", 0.10),
    ("accounts", 0.03),
    ("logged_in", 0.02),
];

#[derive(Clone, Copy)]
enum Changes {
    Steady,
    RunLike,
    AllNew,
}

impl Changes {
    fn name(self) -> &'static str {
        match self {
            Changes::Steady => "steady",
            Changes::RunLike => "run-like",
            Changes::AllNew => "all-new",
        }
    }
}

/// A deterministic sequence of `len` states from `base`, changing as `changes` says.
fn sequence(base: &State, changes: Changes, len: u64) -> Vec<State> {
    let mut random = 0x2545_f491_4f6c_dd1du64;
    let mut coin = |p: f64| {
        random ^= random << 13;
        random ^= random >> 7;
        random ^= random << 17;
        (random % 10_000) as f64 / 10_000.0 < p
    };
    let mut state = base.clone();
    (0..len)
        .map(|step| {
            state.step = step;
            state.time = step * 700;
            for &(key, rate) in RUN_LIKE_RATES {
                let change = match changes {
                    Changes::Steady => false,
                    Changes::RunLike => coin(rate),
                    Changes::AllNew => true,
                };
                if change {
                    change_part(&mut state, key, step);
                }
            }
            if let Changes::AllNew = changes {
                for key in ["accounts_folio", "ledger", "totalCents"] {
                    change_part(&mut state, key, step);
                }
                // Every element, so that no query answer is the same as before.
                retext(&mut state.hierarchy, step);
            }
            state.clone()
        })
        .collect()
}

fn retext(node: &mut Node, step: u64) {
    node.text = format!("{} {step}", node.text.split(' ').next().unwrap_or_default());
    for child in &mut node.children {
        retext(child, step);
    }
}

/// Gives one part of the state a new value (the same shape, other numbers).
fn change_part(state: &mut State, key: &str, step: u64) {
    if key == "hierarchy" {
        // A field's text: the typing and counters that change most screens.
        state.hierarchy.children[2].text = format!("{}.{:02}", step / 100, step % 100);
        return;
    }
    let step = step as i64;
    let value = match state.snapshots.get_mut(key) {
        Some(value) => value,
        None => return,
    };
    match value {
        serde_json::Value::Array(items) => {
            // A new row or balance replaces an old one.
            let index = step as usize % items.len().max(1);
            if let Some(serde_json::Value::Object(item)) = items.get_mut(index) {
                for field in ["amount", "balance", "amountCents", "balanceCents"] {
                    if item.contains_key(field) {
                        item.insert(field.into(), (step * 25).into());
                    }
                }
            }
        }
        serde_json::Value::Number(_) => *value = (step * 25).into(),
        serde_json::Value::Bool(b) => *b = !*b,
        _ => {
            *value = match key {
                "route" => ["ledger", "add-transaction"][step as usize % 2].into(),
                "txn_error" if *value == "" => "Enter a valid amount (e.g. 12.34)".into(),
                "txn_error" => "".into(),
                _ => format!("{key}-{}", step % 7).into(),
            }
        }
    }
}

/// p50/p90/p99 of one pass over `states`, after a warm-up pass over the first 50.
fn measure(instance: &mut SpecInstance, states: &[State]) -> anyhow::Result<[Duration; 3]> {
    for state in states.iter().take(50) {
        instance.step(state)?;
    }
    let mut samples = Vec::new();
    for state in states {
        let mut state = state.clone();
        state.step += 50;
        let started = Instant::now();
        let step = instance.step(&state)?;
        samples.push(started.elapsed());
        assert!(!step.candidates.is_empty());
    }
    Ok([
        percentile(&mut samples, 0.5),
        percentile(&mut samples, 0.9),
        percentile(&mut samples, 0.99),
    ])
}

/// Each sequence, on a fresh instance of `module`.
fn measure_all(module: &SpecModule, base: &State) -> anyhow::Result<Vec<(Changes, [Duration; 3])>> {
    [Changes::Steady, Changes::RunLike, Changes::AllNew]
        .into_iter()
        .map(|changes| {
            let mut instance = SpecInstance::new(module, SpecLimits::default())?;
            instance.load(module, 1)?;
            let times = measure(&mut instance, &sequence(base, changes, 1000))?;
            Ok((changes, times))
        })
        .collect()
}

fn main() -> anyhow::Result<()> {
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/specs/bench.ts");
    let started = Instant::now();
    let module = uatu::spec::build(&spec)?;
    let cold_build = started.elapsed();

    let started = Instant::now();
    let mut instance = SpecInstance::new(&module, SpecLimits::default())?;
    instance.load(&module, 1)?;
    let load = started.elapsed();

    let base = state(0);
    let state_json = serde_json::to_vec(&base)?.len();
    let bench_times = measure_all(&module, &base)?;

    // The example Folio spec, on the same tree with Folio's snapshot keys.
    let folio = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/folio/spec.ts");
    let folio_module = uatu::spec::build(&folio)?;
    let mut folio_base = base.clone();
    let accounts = folio_base.snapshots.remove("accounts_folio").unwrap_or_default();
    folio_base.snapshots.insert("accounts".into(), accounts);
    let folio_times = measure_all(&folio_module, &folio_base)?;
    let started = Instant::now();
    uatu::spec::build(&folio)?;
    let folio_build = started.elapsed();

    // `uatu build` of the spec with a warm cache: the same path `uatu run --spec bench.ts` takes.
    let mut warm = Vec::new();
    SpecModule::load(&spec)?;
    for _ in 0..5 {
        let started = Instant::now();
        SpecModule::load(&spec)?;
        warm.push(started.elapsed());
    }
    let mut rebuild = Vec::new();
    for _ in 0..3 {
        let started = Instant::now();
        uatu::spec::build(&spec)?;
        rebuild.push(started.elapsed());
    }

    let load_average = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "load average: {}",
        load_average
            .split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    for (spec, times) in [
        ("examples/folio/spec.ts", &folio_times),
        ("tests/specs/bench.ts", &bench_times),
    ] {
        println!("{spec} step, 300-node hierarchy ({state_json} bytes of state JSON), 1,000 steps:");
        for (changes, [p50, p90, p99]) in times {
            println!("  {:<9} p50 {p50:?}  p90 {p90:?}  p99 {p99:?}", changes.name());
        }
    }
    println!("examples/folio/spec.ts build (warm cache): {folio_build:?}");
    println!("first build (provider compile + bundling + QuickJS): {cold_build:?}");
    println!("instance + load: {load:?}");
    println!(
        "build (bundling + QuickJS compile, compiled provider cached): median {:?}",
        percentile(&mut rebuild, 0.5)
    );
    println!(
        "load of a .ts spec from the build cache: median {:?}",
        percentile(&mut warm, 0.5)
    );
    Ok(())
}
