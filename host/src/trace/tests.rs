use std::fs;

use super::*;
use crate::state::State;

fn record(step: u64) -> StepRecord {
    let mut state = State {
        step,
        time: step * 250,
        ..State::default()
    };
    state.snapshots.insert("route".into(), serde_json::json!("home"));
    StepRecord {
        step,
        time: state.time,
        state,
        hierarchy_source: None,
        evaluated: true,
        screenshot: None,
        extractors: Default::default(),
        properties: Default::default(),
        candidates: 3,
        action: None,
        events: vec![Event::NoAction],
        metrics: StepMetrics::default(),
    }
}

fn run_with_steps(count: u64) -> (tempfile::TempDir, RunDir) {
    let output = tempfile::tempdir().expect("temp dir");
    let mut run = RunDir::create(
        output.path(),
        time::OffsetDateTime::UNIX_EPOCH,
        42,
        TraceFormat::Full,
    )
    .expect("run dir");
    for step in 0..count {
        run.append_step(&record(step)).expect("append");
    }
    (output, run)
}

#[test]
fn run_directory_is_named_by_utc_time_and_seed() {
    let (_output, run) = run_with_steps(0);
    let name = run
        .path()
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    assert_eq!(name, "19700101T000000Z-42");
    assert!(run.path().join("screenshots").is_dir());
}

#[test]
fn reader_returns_every_step_written() {
    let (_output, run) = run_with_steps(5);
    let steps = read_steps(run.path()).expect("reads");
    assert_eq!(
        steps.iter().map(|r| r.step).collect::<Vec<_>>(),
        vec![0, 1, 2, 3, 4]
    );
    assert_eq!(steps[3], record(3));
}

#[test]
fn a_trace_cut_anywhere_in_its_last_record_yields_every_complete_step() {
    let (_output, run) = run_with_steps(4);
    let trace = run.path().join("trace.jsonl");
    let bytes = fs::read(&trace).expect("trace");
    let last_start = bytes[..bytes.len() - 1]
        .iter()
        .rposition(|&b| b == b'\n')
        .expect("several lines")
        + 1;
    // Every cut a killed writer could leave inside the last record.
    for cut in last_start + 1..bytes.len() - 1 {
        fs::write(&trace, &bytes[..cut]).expect("truncate");
        let mut reader = TraceReader::open(&trace).expect("open");
        let steps: Vec<u64> = reader
            .by_ref()
            .map(|r| r.expect("complete records parse").step)
            .collect();
        assert_eq!(steps, vec![0, 1, 2], "cut at byte {cut}");
        assert!(reader.torn(), "cut at byte {cut} is reported as torn");
    }
    // A whole record that only lacks its newline is still a whole step.
    fs::write(&trace, &bytes[..bytes.len() - 1]).expect("truncate");
    assert_eq!(read_steps(&trace).expect("reads").len(), 4);
}

#[test]
fn a_killed_writer_process_leaves_a_readable_trace() {
    // A child process appends records in a loop until it is SIGKILLed; what it
    // left must read back as a prefix of whole steps.
    let output = tempfile::tempdir().expect("temp dir");
    let trace = output.path().join("trace.jsonl");
    let line = serde_json::to_string(&record(0)).expect("json");
    let script = format!(
        "i=0; while :; do printf '%s\\n' '{}' | sed \"s/\\\"step\\\":0/\\\"step\\\":$i/\" >> {}; i=$((i+1)); done",
        line.replace('\'', ""),
        trace.display()
    );
    let mut child = std::process::Command::new("sh")
        .arg("-c")
        .arg(&script)
        .spawn()
        .expect("spawn writer");
    while fs::metadata(&trace).map(|m| m.len()).unwrap_or(0) < 20_000 {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    child.kill().expect("SIGKILL");
    child.wait().expect("reaped");
    let steps: Vec<u64> = TraceReader::open(&trace)
        .expect("open")
        .map(|r| r.expect("whole records parse").step)
        .collect();
    assert!(steps.len() > 10);
    assert!(
        steps.iter().enumerate().all(|(i, &s)| s == i as u64),
        "a prefix of whole steps"
    );
}

#[test]
fn a_bad_record_before_the_end_is_an_error_naming_its_line() {
    let (_output, run) = run_with_steps(2);
    let trace = run.path().join("trace.jsonl");
    let mut bytes = fs::read(&trace).expect("trace");
    bytes.splice(0..0, b"{not json}\n".iter().copied());
    fs::write(&trace, bytes).expect("write");
    let error = read_steps(&trace).unwrap_err();
    assert!(error.to_string().contains("trace.jsonl:1:"), "{error}");
}

#[test]
fn json_documents_are_replaced_whole() {
    let (_output, run) = run_with_steps(0);
    let path = run.path().join("meta.json");
    write_json_atomically(&path, &serde_json::json!({"seed": 1})).expect("write");
    write_json_atomically(&path, &serde_json::json!({"seed": 2})).expect("rewrite");
    let meta: serde_json::Value = serde_json::from_slice(&fs::read(&path).expect("read")).expect("json");
    assert_eq!(meta["seed"], 2);
    let leftovers: Vec<_> = fs::read_dir(run.path())
        .expect("list")
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().ends_with(".partial"))
        .collect();
    assert!(leftovers.is_empty());
}

/// Records that vary the way a run's do: screens come back, actions change, a
/// snapshot is added and removed, an extractor is `null`.
fn varied_record(step: u64) -> StepRecord {
    use uatu_device::model::Node;
    let mut record = record(step);
    let screen = step % 7;
    record.state.hierarchy = Node {
        text: format!("screen {screen}"),
        role: if screen.is_multiple_of(2) {
            "main".into()
        } else {
            String::new()
        },
        attrs: (0..screen % 3)
            .map(|i| (format!("data-k{i}"), format!("v{screen}")))
            .collect(),
        ..Node::default()
    };
    if step.is_multiple_of(3) {
        record.state.snapshots.insert(
            "draft".into(),
            serde_json::json!({"text": "x".repeat(step as usize % 50)}),
        );
    }
    let extractors = std::sync::Arc::make_mut(&mut record.extractors);
    extractors.insert("maybe".into(), serde_json::Value::Null);
    extractors.insert("count".into(), serde_json::json!(step / 5));
    record.events = if step.is_multiple_of(4) {
        vec![]
    } else {
        vec![Event::NoAction]
    };
    record
}

fn compact_dir() -> (tempfile::TempDir, RunDir) {
    let output = tempfile::tempdir().expect("temp dir");
    let run = RunDir::create(
        output.path(),
        time::OffsetDateTime::UNIX_EPOCH,
        42,
        TraceFormat::Compact,
    )
    .expect("run dir");
    (output, run)
}

fn compact_run(count: u64) -> (tempfile::TempDir, RunDir, Vec<StepRecord>) {
    let (output, mut run) = compact_dir();
    let records: Vec<StepRecord> = (0..count).map(varied_record).collect();
    for record in &records {
        run.append_step(record).expect("append");
    }
    (output, run, records)
}

#[test]
fn a_compact_trace_reads_back_every_record_whole() {
    let (_output, run, records) = compact_run(KEYFRAME_EVERY * 2 + 17);
    assert_eq!(read_steps(run.path()).expect("reads"), records);
    let hierarchies = fs::read_to_string(run.path().join("hierarchies.jsonl")).expect("hierarchies");
    assert_eq!(hierarchies.lines().count(), 7, "each distinct hierarchy once");
}

#[test]
fn the_recorded_states_alone_are_those_of_the_whole_records_compact_or_full() {
    let (_output, run, written) = compact_run(250);
    let full = tempfile::tempdir().expect("temp dir");
    let full_trace = full.path().join("trace.jsonl");
    let lines: Vec<String> = written
        .iter()
        .map(|record| serde_json::to_string(record).expect("json"))
        .collect();
    fs::write(&full_trace, lines.join("\n") + "\n").expect("full trace");
    for trace in [run.path().to_path_buf(), full_trace] {
        let mut reader = TraceReader::open(&trace).expect("open").states();
        let mut states: Vec<RecordedState> = Vec::new();
        while let Some(state) = reader.next() {
            states.push(state.expect("states read").clone());
        }
        assert_eq!(states.len(), written.len(), "{}", trace.display());
        for (state, record) in states.iter().zip(&written) {
            assert_eq!(
                (state.step, state.time, state.evaluated, &state.state),
                (record.step, record.time, record.evaluated, &record.state),
                "{}",
                trace.display()
            );
        }
    }
}

#[test]
fn a_page_of_a_compact_or_full_trace_reads_from_the_nearest_keyframe() {
    let (_output, run, records) = compact_run(KEYFRAME_EVERY * 3 + 5);
    let index = TraceIndex::build(run.path()).expect("indexes");
    assert_eq!(index.records(), records.len() as u64);
    for first in [0, 1, 99, 100, 101, 250, 300, 304] {
        let page = read_step_range(run.path(), &index, first, first + 10).expect("a page");
        let end = (first as usize + 10).min(records.len());
        assert_eq!(page, records[first as usize..end], "from {first}");
    }
    let (_full_output, full) = run_with_steps(30);
    let index = TraceIndex::build(full.path()).expect("indexes");
    assert_eq!(index.last_step(), Some(29));
    let page = read_step_range(full.path(), &index, 12, 15).expect("a page");
    assert_eq!(page.iter().map(|r| r.step).collect::<Vec<_>>(), vec![12, 13, 14]);
}

#[test]
fn a_compact_trace_cut_anywhere_in_its_last_line_yields_every_complete_step() {
    let (_output, run, records) = compact_run(KEYFRAME_EVERY + 3);
    let trace = run.path().join("trace.jsonl");
    let bytes = fs::read(&trace).expect("trace");
    let last_start = bytes[..bytes.len() - 1]
        .iter()
        .rposition(|&b| b == b'\n')
        .expect("lines")
        + 1;
    for cut in last_start + 1..bytes.len() - 1 {
        fs::write(&trace, &bytes[..cut]).expect("truncate");
        let mut reader = TraceReader::open(&trace).expect("open");
        let read: Vec<StepRecord> = reader
            .by_ref()
            .map(|r| r.expect("complete records resolve"))
            .collect();
        assert_eq!(read, records[..records.len() - 1], "cut at byte {cut}");
        assert!(reader.torn(), "cut at byte {cut} is reported as torn");
    }
    // A header cut short: a run killed before its first step.
    fs::write(&trace, &bytes[..10]).expect("truncate");
    assert_eq!(read_steps(&trace).expect("reads").len(), 0);
}

#[test]
fn a_torn_node_line_no_record_refers_to_is_ignored_and_a_missing_or_misplaced_one_is_an_error() {
    let (_output, run, records) = compact_run(10);
    let path = run.path().join("hierarchies.jsonl");
    let whole = fs::read(&path).expect("hierarchies");
    let mut torn = whole.clone();
    torn.extend_from_slice(b"{\"n\":99,\"id");
    fs::write(&path, &torn).expect("write");
    assert_eq!(read_steps(run.path()).expect("reads"), records);

    // The last node, which step 6 shows, gone.
    let last_line = whole[..whole.len() - 1]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    fs::write(&path, &whole[..last_line]).expect("write");
    let error = read_steps(run.path()).unwrap_err();
    assert!(matches!(error, TraceError::MissingNode { .. }), "{error}");

    let first_line = whole.iter().position(|&b| b == b'\n').expect("a line") + 1;
    fs::write(&path, &whole[first_line..]).expect("write");
    let error = read_steps(run.path()).unwrap_err();
    assert!(
        error.to_string().contains("hierarchies.jsonl:1: not node 0"),
        "{error}"
    );
}

#[test]
fn a_node_whose_children_are_not_earlier_nodes_is_refused_not_followed() {
    let (_output, run, _records) = compact_run(1);
    let path = run.path().join("hierarchies.jsonl");
    // Node 0 claims itself as its child: a loop a reader must not walk into.
    let node = fs::read_to_string(&path).expect("hierarchies");
    let looped = node.replacen("}\n", ",\"children\":[0]}\n", 1);
    assert_ne!(looped, node);
    fs::write(&path, looped).expect("write");
    let error = read_steps(run.path()).unwrap_err();
    assert!(
        error.to_string().contains("children are not all earlier nodes"),
        "{error}"
    );
}

/// A tree of `rows` rows (a label and a value each) under a list under a root.
fn screen(rows: usize, value_of: impl Fn(usize) -> String) -> uatu_device::model::Node {
    use uatu_device::model::Node;
    let row = |i: usize| Node {
        id: format!("row{i}"),
        clickable: true,
        children: vec![
            Node {
                text: format!("label {i}"),
                ..Node::default()
            },
            Node {
                text: value_of(i),
                ..Node::default()
            },
        ],
        ..Node::default()
    };
    Node {
        id: "root".into(),
        children: vec![Node {
            id: "list".into(),
            scrollable: true,
            children: (0..rows).map(row).collect(),
            ..Node::default()
        }],
        ..Node::default()
    }
}

#[test]
fn a_hierarchy_that_changes_one_text_stores_that_node_and_its_ancestors_only() {
    let (_output, mut run) = compact_dir();
    let hierarchies = [
        screen(20, |i| format!("{i}.00")),
        screen(20, |i| format!("{i}.00")),
        // Row 7's value changes: a new value node, row 7, the list, the root.
        screen(20, |i| if i == 7 { "7.50".into() } else { format!("{i}.00") }),
        // Back to the first screen: nothing new.
        screen(20, |i| format!("{i}.00")),
    ];
    let mut records = Vec::new();
    let mut lines = Vec::new();
    for (step, hierarchy) in hierarchies.into_iter().enumerate() {
        let mut record = varied_record(step as u64);
        record.state.hierarchy = hierarchy;
        run.append_step(&record).expect("append");
        records.push(record);
        let nodes = fs::read_to_string(run.path().join("hierarchies.jsonl")).expect("nodes");
        lines.push(nodes.lines().count());
    }
    // 20 labels + 20 values + 20 rows + list + root; then 4; then none.
    assert_eq!(lines, [62, 62, 66, 66]);
    assert_eq!(read_steps(run.path()).expect("reads"), records);
}

#[test]
fn screenshots_are_stored_once_by_content() {
    let output = tempfile::tempdir().expect("temp dir");
    let mut run = RunDir::create(
        output.path(),
        time::OffsetDateTime::UNIX_EPOCH,
        1,
        TraceFormat::Compact,
    )
    .expect("run dir");
    let first = run.write_screenshot(b"png one").expect("write");
    let again = run.write_screenshot(b"png one").expect("write");
    let other = run.write_screenshot(b"png two").expect("write");
    assert_eq!(first, again);
    assert_ne!(first, other);
    assert!(
        first.starts_with("screenshots/") && first.ends_with(".png"),
        "{first}"
    );
    assert_eq!(fs::read(run.path().join(&first)).expect("stored"), b"png one");
    assert_eq!(
        fs::read_dir(run.path().join("screenshots"))
            .expect("list")
            .count(),
        2
    );
}

#[test]
fn a_trace_of_a_newer_format_is_refused_by_name() {
    let (_output, run, _records) = compact_run(3);
    let trace = run.path().join("trace.jsonl");
    let text = fs::read_to_string(&trace).expect("trace");
    fs::write(&trace, text.replacen("\"uatuTrace\":3", "\"uatuTrace\":4", 1)).expect("write");
    let error = TraceReader::open(&trace).err().expect("refused");
    assert!(error.to_string().contains("trace format 4 is newer"), "{error}");
}

#[test]
fn a_range_of_steps_is_read_without_the_rest_and_stops_at_a_torn_line() {
    let (_output, run) = run_with_steps(10);
    let range = read_page(run.path(), 3, 4).expect("range");
    let steps: Vec<u64> = range.steps.iter().map(|r| r.step).collect();
    assert_eq!(steps, [3, 4, 5, 6]);
    assert!(!range.torn);
    assert_eq!(count_steps(run.path()).expect("count"), 10);
    assert!(
        read_page(run.path(), 10, 5)
            .expect("past the end")
            .steps
            .is_empty()
    );

    let trace = run.path().join(TRACE_FILE);
    let mut torn = fs::OpenOptions::new().append(true).open(&trace).expect("open");
    std::io::Write::write_all(&mut torn, b"{\"step\":10,\"ti").expect("append");
    assert_eq!(
        count_steps(run.path()).expect("count"),
        10,
        "a torn line is not a step"
    );
    let tail = read_page(run.path(), 8, 50).expect("tail");
    assert_eq!(tail.steps.len(), 2);
    assert!(tail.torn);
    let beyond = read_page(run.path(), 11, 5).expect("beyond");
    assert!(beyond.steps.is_empty());
}

/// A record whose state changes, from one step to the next, each field a state has:
/// snapshots added, removed, changed within (one under a key that needs escaping in
/// a pointer), logs, exceptions, the screen, coverage, the focused window, the last
/// action (the action before it), the hierarchy, and whether the spec was evaluated.
fn record_changing_every_field(step: u64) -> StepRecord {
    use crate::action::{Action, ResolvedAction};
    use uatu_device::model::{ExceptionInfo, LogEntry, LogLevel, Node, ScreenSize, Window, WindowKind};
    let mut record = varied_record(step);
    let state = &mut record.state;
    state.snapshots.insert(
        "form/a~b".into(),
        serde_json::json!({"email": format!("user{}", step % 4), "ok": step.is_multiple_of(5)}),
    );
    if step % 6 < 2 {
        state.logs = vec![LogEntry {
            time: step,
            level: LogLevel::Warn,
            tag: "folio".into(),
            message: format!("log {step}"),
        }];
    }
    if step % 9 == 4 {
        state.exceptions = vec![ExceptionInfo {
            class: "java.lang.IllegalStateException".into(),
            message: format!("at {step}"),
            stack: String::new(),
            time: step,
        }];
    }
    state.screen = ScreenSize {
        width: 1080,
        height: if step < 40 { 2400 } else { 1920 },
    };
    state.coverage = (step % 4 == 1).then(|| vec![format!("probe{}", step % 3)]);
    state.window = (step % 7 != 3).then(|| Window {
        package: "app.folio".into(),
        title: "app.folio/app.folio.MainActivity".into(),
        kind: if step % 7 == 5 {
            WindowKind::OtherApp
        } else {
            WindowKind::App
        },
        keyboard: step % 7 == 6,
    });
    state.hierarchy = Node {
        text: format!("screen {}", step % 11),
        ..Node::default()
    };
    let action = |step: u64| ResolvedAction {
        action: Action::Wait {
            duration_millis: 100 + step as u32,
        },
        generator: "wait".into(),
        point: None,
        bounds: None,
        to_point: None,
        applied: crate::action::Applied::Unknown,
        detail: String::new(),
    };
    record.action = (step % 3 != 2).then(|| action(step));
    state.last_action = (step > 0 && (step - 1) % 3 != 2).then(|| action(step - 1));
    record.evaluated = step % 13 != 7;
    record
}

#[test]
fn states_read_from_a_compact_trace_follow_every_field_a_delta_changes() {
    let (_output, mut run) = compact_dir();
    let written: Vec<StepRecord> = (0..KEYFRAME_EVERY + 60)
        .map(record_changing_every_field)
        .collect();
    for record in &written {
        run.append_step(record).expect("append");
    }
    let index = TraceIndex::build(run.path()).expect("indexes");
    for first in [0, 5, KEYFRAME_EVERY - 1, KEYFRAME_EVERY + 3] {
        let mut reader = TraceReader::open_at(run.path(), &index, first)
            .expect("open")
            .states();
        let mut read = 0;
        while let Some(state) = reader.next() {
            let state = state.expect("a state");
            let record = &written[(first + read) as usize];
            assert_eq!(
                (state.step, state.time, state.evaluated, &state.state),
                (record.step, record.time, record.evaluated, &record.state),
                "from step {first}"
            );
            read += 1;
        }
        assert_eq!(first + read, written.len() as u64, "from step {first}");
        assert!(!reader.torn());
    }
}
