//! Spec step cost: one `SpecInstance::step` call (state in, results out) on a
//! Folio-like spec with a 300-node hierarchy, and `uatu build` with a warm cache.
//!
//! Run: `cargo bench -p uatu --bench spec_step` (or add `--profile dev` to skip
//! the release build; the guest runs the same Cranelift code either way).

use std::path::Path;
use std::time::{Duration, Instant};

use uatu::device::model::{Bounds, Node, ScreenSize};
use uatu::spec::{SpecInstance, SpecLimits, SpecModule};
use uatu::state::State;

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
    // The keys the Folio app registers (docs/simulator.md), for examples/folio/spec.ts.
    let folio_accounts: Vec<serde_json::Value> = (0..20)
        .map(|i| serde_json::json!({"id": format!("a{i}"), "name": format!("Account {i}"), "balance_cents": i * 1000, "txn_count": 3}))
        .collect();
    let folio_rows: Vec<serde_json::Value> = (0..60)
        .map(|i| serde_json::json!({"id": format!("t{i}"), "account_id": "a3", "amount_cents": 25 * i + 1, "kind": "credit", "note": ""}))
        .collect();
    snapshots.insert("logged_in".into(), true.into());
    snapshots.insert("auth_pending".into(), false.into());
    snapshots.insert("accounts_folio".into(), folio_accounts.into());
    snapshots.insert("ledger_rows".into(), folio_rows.into());
    snapshots.insert("active_account_id".into(), "a3".into());
    snapshots.insert("form_errors".into(), serde_json::json!({}));
    snapshots.insert("focused_input".into(), serde_json::Value::Null);
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

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    samples[((samples.len() - 1) as f64 * p).round() as usize]
}

/// p50/p90/p99 of `rounds` passes over `states`, after one warm-up pass.
fn measure(instance: &mut SpecInstance, states: &[State], rounds: u64) -> anyhow::Result<[Duration; 3]> {
    for state in states {
        instance.step(state)?;
    }
    let mut samples = Vec::new();
    for round in 0..rounds {
        for state in states {
            let mut state = state.clone();
            state.step += states.len() as u64 * (round + 1);
            let started = Instant::now();
            let step = instance.step(&state)?;
            samples.push(started.elapsed());
            assert!(!step.candidates.is_empty());
        }
    }
    Ok([
        percentile(&mut samples, 0.5),
        percentile(&mut samples, 0.9),
        percentile(&mut samples, 0.99),
    ])
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

    let states: Vec<State> = (0..50).map(state).collect();
    let state_json = serde_json::to_vec(&states[0])?.len();
    let [p50, p90, p99] = measure(&mut instance, &states, 20)?;

    // The example Folio spec, on the same tree with Folio's snapshot keys.
    let folio = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/folio/spec.ts");
    let folio_module = uatu::spec::build(&folio)?;
    let mut folio_instance = SpecInstance::new(&folio_module, SpecLimits::default())?;
    folio_instance.load(&folio_module, 1)?;
    let folio_states: Vec<State> = states
        .iter()
        .map(|s| {
            let mut s = s.clone();
            let accounts = s.snapshots.remove("accounts_folio").unwrap_or_default();
            s.snapshots.insert("accounts".into(), accounts);
            s.snapshots.insert("route".into(), "ledger".into());
            s
        })
        .collect();
    let folio_times = measure(&mut folio_instance, &folio_states, 20)?;
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
    println!("tests/specs/bench.ts step, 300-node hierarchy ({state_json} bytes of state JSON), 1000 steps:");
    println!("  p50 {:?}  p90 {:?}  p99 {:?}", p50, p90, p99);
    println!(
        "examples/folio/spec.ts step: p50 {:?}  p90 {:?}  p99 {:?}; build {:?}",
        folio_times[0], folio_times[1], folio_times[2], folio_build
    );
    println!("first build (provider compile + esbuild + QuickJS): {cold_build:?}");
    println!("instance + load: {load:?}");
    println!(
        "build (esbuild + QuickJS compile, compiled provider cached): median {:?}",
        percentile(&mut rebuild, 0.5)
    );
    println!(
        "load of a .ts spec from the build cache: median {:?}",
        percentile(&mut warm, 0.5)
    );
    Ok(())
}
