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
    for state in &states {
        instance.step(state)?;
    }
    let mut samples = Vec::new();
    for round in 0..20 {
        for state in &states {
            let mut state = state.clone();
            state.step += 50 * (round + 1);
            let started = Instant::now();
            let step = instance.step(&state)?;
            samples.push(started.elapsed());
            assert!(!step.candidates.is_empty());
        }
    }
    let p50 = percentile(&mut samples, 0.5);
    let p90 = percentile(&mut samples, 0.9);
    let p99 = percentile(&mut samples, 0.99);

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
    println!(
        "spec step, 300-node hierarchy ({state_json} bytes of state JSON), {} steps:",
        samples.len()
    );
    println!("  p50 {:?}  p90 {:?}  p99 {:?}", p50, p90, p99);
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
