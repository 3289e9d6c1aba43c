//! `uatu inspect` and `uatu report`: the real binary serving a real run that
//! `uatu run` made on the simulator with its bugs on, asked over real sockets.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;

pub const SPEC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/folio/spec.ts");

/// One Folio run with the simulator's bugs on (and its report), shared by the tests here.
pub struct Fixture {
    _dir: tempfile::TempDir,
    /// The runs directory.
    pub runs: PathBuf,
    /// The run's directory name.
    pub id: String,
    /// The report `uatu run --report` wrote.
    pub report: PathBuf,
}

/// The shared run, made once: 120 steps, seed 5, every planted bug on.
pub fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let dir = tempfile::tempdir().expect("tempdir");
        let runs = dir.path().join("runs");
        let report = dir.path().join("run-report.html");
        let out = Command::new(env!("CARGO_BIN_EXE_uatu"))
            .args([
                "run",
                "--spec",
                SPEC,
                "--seed",
                "5",
                "--max-steps",
                "120",
                "--sim-bugs",
                "all",
            ])
            .arg("--output")
            .arg(&runs)
            .arg("--report")
            .arg(&report)
            .output()
            .expect("runs uatu");
        assert_eq!(
            out.status.code(),
            Some(1),
            "a violation expected: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let id = std::fs::read_dir(&runs)
            .expect("runs dir")
            .next()
            .expect("one run")
            .expect("entry")
            .file_name()
            .into_string()
            .expect("utf-8 name");
        Fixture {
            _dir: dir,
            runs,
            id,
            report,
        }
    })
}

/// A running `uatu inspect`, killed on drop.
pub struct Inspect {
    child: Child,
    /// `127.0.0.1:<port>`.
    pub address: String,
}

impl Inspect {
    /// Starts `uatu inspect path --port 0 --no-open` and reads the address it prints.
    pub fn start(path: &Path) -> Inspect {
        let mut child = Command::new(env!("CARGO_BIN_EXE_uatu"))
            .arg("inspect")
            .arg(path)
            .args(["--port", "0", "--no-open"])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("starts uatu inspect");
        let stdout = child.stdout.take().expect("stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("reads the banner");
        let address = line
            .split("http://")
            .nth(1)
            .and_then(|rest| rest.split('/').next())
            .unwrap_or_else(|| panic!("no address in {line:?}"))
            .to_owned();
        Inspect { child, address }
    }

    /// `GET path` (sent as written: no client normalises it): the status and the body.
    pub fn get(&self, path: &str) -> (u16, Vec<u8>) {
        let mut stream = TcpStream::connect(&self.address).expect("connects");
        write!(
            stream,
            "GET {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
            self.address
        )
        .expect("sends");
        let mut response = Vec::new();
        stream.read_to_end(&mut response).expect("reads");
        let split = response
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .expect("a header");
        let head = String::from_utf8_lossy(&response[..split]).into_owned();
        let status = head
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .expect("a status");
        let mut body = response[split + 4..].to_vec();
        if head.to_ascii_lowercase().contains("transfer-encoding: chunked") {
            body = dechunk(&body);
        }
        (status, body)
    }

    /// `GET path` as JSON, expecting 200.
    pub fn json(&self, path: &str) -> Value {
        let (status, body) = self.get(path);
        assert_eq!(status, 200, "{path}: {}", String::from_utf8_lossy(&body));
        serde_json::from_slice(&body).expect("JSON")
    }
}

impl Drop for Inspect {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn dechunk(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(end) = body.windows(2).position(|w| w == b"\r\n") {
        let size = usize::from_str_radix(String::from_utf8_lossy(&body[..end]).trim(), 16).unwrap_or(0);
        if size == 0 {
            break;
        }
        out.extend_from_slice(&body[end + 2..end + 2 + size]);
        body = &body[end + 2 + size + 2..];
    }
    out
}

#[test]
fn every_endpoint_serves_the_run() {
    let fixture = fixture();
    let server = Inspect::start(&fixture.runs);
    assert!(server.address.starts_with("127.0.0.1:"), "{}", server.address);
    let id = &fixture.id;

    let runs = server.json("/api/runs");
    assert_eq!(runs[0]["id"], id.as_str());
    assert_eq!(runs[0]["running"], false);
    assert_eq!(runs[0]["steps"], 120);
    assert!(
        !runs[0]["violated"].as_array().expect("violated").is_empty(),
        "{runs}"
    );
    assert_eq!(
        runs[0]["seed"], "5",
        "the seed as a string: JavaScript loses u64 digits"
    );

    let info = server.json(&format!("/api/runs/{id}"));
    assert_eq!(info["meta"]["seed"], 5);
    assert_eq!(info["summary"]["steps"], 120);

    let page = server.json(&format!("/api/runs/{id}/steps?from=10&count=5"));
    let steps: Vec<u64> = page["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .map(|s| s["step"].as_u64().expect("step"))
        .collect();
    assert_eq!(steps, [10, 11, 12, 13, 14]);
    assert_eq!(page["torn"], false);
    let capped = server.json(&format!("/api/runs/{id}/steps?from=0&count=100000"));
    assert_eq!(capped["steps"].as_array().expect("steps").len(), 120);

    let step = server.json(&format!("/api/runs/{id}/steps/7"));
    assert_eq!(step["step"], 7);
    assert!(step["state"]["hierarchy"].is_object());
    assert_eq!(server.get(&format!("/api/runs/{id}/steps/120")).0, 404);

    let index = server.json(&format!("/api/runs/{id}/index"));
    assert_eq!(index["steps"].as_array().expect("marks").len(), 120);
    let violating = index["steps"]
        .as_array()
        .expect("marks")
        .iter()
        .filter(|m| m.get("violations").is_some())
        .count();
    assert!(violating > 0, "{index}");
    assert!(index["timelines"].as_object().expect("timelines").len() > 5);

    let screenshot = step["screenshot"].as_str().expect("a screenshot");
    let (status, png) = server.get(&format!("/api/runs/{id}/files/{screenshot}"));
    assert_eq!(status, 200);
    assert!(png.starts_with(b"\x89PNG"), "a PNG");

    for page in ["/", &format!("/runs/{id}"), &format!("/runs/{id}/steps/3")] {
        let (status, html) = server.get(page);
        assert_eq!(status, 200, "{page}");
        assert!(String::from_utf8_lossy(&html).contains("uatu-config"), "{page}");
    }
    assert_eq!(server.get("/assets/app.js").0, 200);
    assert_eq!(server.get("/assets/app.css").0, 200);
    assert_eq!(server.get("/assets/nope.js").0, 404);
    assert_eq!(server.get("/api/runs/nope").0, 404);

    // A finished run's events: the steps not yet seen, then `ended`.
    let events = sse(
        &server.address,
        &format!("/api/runs/{id}/events?from=118"),
        "event: ended",
    );
    assert!(events.contains("event: steps"), "{events}");
    assert!(events.contains("\"step\":119"), "{events}");
}

/// Reads server-sent events from `path` until `until` appears (or 30 s pass).
fn sse(address: &str, path: &str, until: &str) -> String {
    let mut stream = TcpStream::connect(address).expect("connects");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {address}\r\nAccept: text/event-stream\r\n\r\n"
    )
    .expect("sends");
    let mut seen = String::new();
    let mut buffer = [0u8; 65536];
    while !seen.contains(until) {
        match stream.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(n) => seen.push_str(&String::from_utf8_lossy(&buffer[..n])),
        }
    }
    seen
}

#[test]
fn no_url_leaves_the_runs_directory() {
    let fixture = fixture();
    let outside = tempfile::tempdir().expect("tempdir");
    let secret = outside.path().join("secret.png");
    std::fs::write(&secret, b"SECRET-BYTES").expect("writes");
    // A run directory that is a symlink out of the runs directory, and a file
    // inside the real run that is a symlink out of it.
    let foreign_run = outside.path().join("foreign");
    std::fs::create_dir(&foreign_run).expect("mkdir");
    std::fs::write(foreign_run.join("meta.json"), b"{}").expect("writes");
    std::fs::write(foreign_run.join("secret.png"), b"SECRET-BYTES").expect("writes");
    let runs = tempfile::tempdir().expect("tempdir");
    copy_run(&fixture.runs.join(&fixture.id), &runs.path().join("r1"), None);
    std::os::unix::fs::symlink(&foreign_run, runs.path().join("escape")).expect("symlink");
    std::os::unix::fs::symlink(&secret, runs.path().join("r1/screenshots/link.png")).expect("symlink");

    let server = Inspect::start(runs.path());
    let listed = server.json("/api/runs");
    let ids: Vec<&str> = listed
        .as_array()
        .expect("runs")
        .iter()
        .map(|r| r["id"].as_str().expect("id"))
        .collect();
    assert_eq!(ids, ["r1"], "the symlinked run is not listed");
    let secret_path = secret.display().to_string();
    let attempts = [
        "/api/runs/r1/files/../../../etc/passwd".to_owned(),
        "/api/runs/r1/files/screenshots/../../escape/secret.png".to_owned(),
        "/api/runs/r1/files/%2e%2e/%2e%2e/etc/passwd".to_owned(),
        "/api/runs/r1/files/..%2f..%2fetc%2fpasswd".to_owned(),
        "/api/runs/r1/files/%2fetc%2fpasswd".to_owned(),
        format!("/api/runs/r1/files/{secret_path}"),
        format!("/api/runs/r1/files/%2f{}", secret_path.trim_start_matches('/')),
        "/api/runs/r1/files/screenshots/link.png".to_owned(),
        "/api/runs/escape".to_owned(),
        "/api/runs/escape/files/secret.png".to_owned(),
        "/api/runs/..%2f..%2f/files/etc/passwd".to_owned(),
        "/api/runs/%2e%2e/index".to_owned(),
        "/api/runs/%2e%2e/steps?from=0".to_owned(),
        "/api/runs/%2fetc/files/passwd".to_owned(),
    ];
    for attempt in &attempts {
        let (status, body) = server.get(attempt);
        let body = String::from_utf8_lossy(&body);
        assert!(status == 404 || status == 400, "{attempt}: {status} {body}");
        assert!(
            !body.contains("SECRET") && !body.contains("root:"),
            "{attempt}: {body}"
        );
    }
    // Inside the run, the same file is served.
    let first = uatu::trace::read_page(&fixture.runs.join(&fixture.id), 0, 1).expect("step 0");
    let screenshot = first.steps[0]
        .screenshot
        .clone()
        .expect("step 0 has a screenshot");
    let (status, _) = server.get(&format!("/api/runs/r1/files/{screenshot}"));
    assert_eq!(status, 200, "{screenshot}");
}

/// Copies a run directory; with `steps`, keeps only that many step lines of its trace
/// (after the compact format's version line) and drops its summary.
fn copy_run(from: &Path, to: &Path, steps: Option<usize>) {
    std::fs::create_dir_all(to.join("screenshots")).expect("mkdir");
    for entry in std::fs::read_dir(from.join("screenshots")).expect("screenshots") {
        let entry = entry.expect("entry");
        std::fs::copy(entry.path(), to.join("screenshots").join(entry.file_name())).expect("copies");
    }
    std::fs::copy(from.join("meta.json"), to.join("meta.json")).expect("copies");
    if from.join("hierarchies.jsonl").exists() {
        std::fs::copy(from.join("hierarchies.jsonl"), to.join("hierarchies.jsonl")).expect("copies");
    }
    let trace = std::fs::read_to_string(from.join("trace.jsonl")).expect("trace");
    match steps {
        None => {
            std::fs::copy(from.join("summary.json"), to.join("summary.json")).expect("copies");
            std::fs::write(to.join("trace.jsonl"), trace).expect("writes");
        }
        Some(n) => {
            let kept: String = trace
                .split_inclusive('\n')
                .take(header_lines(&trace) + n)
                .collect();
            std::fs::write(to.join("trace.jsonl"), kept).expect("writes");
        }
    }
}

/// 1 when the trace starts with the compact format's version line, else 0.
fn header_lines(trace: &str) -> usize {
    usize::from(trace.starts_with("{\"uatuTrace\""))
}

#[test]
fn a_torn_last_line_and_a_run_being_written_are_shown() {
    let fixture = fixture();
    let source = fixture.runs.join(&fixture.id);
    let runs = tempfile::tempdir().expect("tempdir");
    let run = runs.path().join("live");
    copy_run(&source, &run, Some(30));
    // Half of step 30's line: what a writer killed mid-line leaves.
    let trace = std::fs::read_to_string(source.join("trace.jsonl")).expect("trace");
    let lines: Vec<&str> = trace.split_inclusive('\n').skip(header_lines(&trace)).collect();
    let half = &lines[30][..lines[30].len() / 2];
    append(&run.join("trace.jsonl"), half);

    let server = Inspect::start(runs.path());
    let info = server.json("/api/runs/live");
    assert_eq!(info["running"], true);
    assert_eq!(info["steps"], 30);
    let page = server.json("/api/runs/live/steps?from=25&count=50");
    assert_eq!(page["steps"].as_array().expect("steps").len(), 5);
    assert_eq!(page["torn"], true);
    let index = server.json("/api/runs/live/index");
    assert_eq!(index["torn"], true);
    assert_eq!(index["steps"].as_array().expect("marks").len(), 30);
    assert_eq!(server.get("/api/runs/live/steps/30").0, 404);

    // The run goes on: the rest of the line and more steps arrive, then the summary.
    let address = server.address.clone();
    let listener = std::thread::spawn(move || sse(&address, "/api/runs/live/events?from=30", "event: ended"));
    std::thread::sleep(Duration::from_millis(500));
    append(&run.join("trace.jsonl"), &lines[30][lines[30].len() / 2..]);
    for line in &lines[31..40] {
        append(&run.join("trace.jsonl"), line);
    }
    std::thread::sleep(Duration::from_millis(800));
    std::fs::copy(source.join("summary.json"), run.join("summary.json")).expect("copies");
    let events = listener.join().expect("the listener");
    assert!(events.contains("event: steps"), "{events}");
    for step in 30..40 {
        assert!(
            events.contains(&format!("\"step\":{step},")),
            "step {step} in {events}"
        );
    }
    assert!(events.contains("event: ended"), "{events}");
    assert_eq!(server.json("/api/runs/live")["running"], false);
}

fn append(path: &Path, text: &str) {
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .expect("opens");
    file.write_all(text.as_bytes()).expect("appends");
}

#[test]
fn one_run_given_is_the_only_run_served() {
    let fixture = fixture();
    let server = Inspect::start(&fixture.runs.join(&fixture.id));
    let runs = server.json("/api/runs");
    assert_eq!(runs.as_array().expect("runs").len(), 1);
    assert_eq!(runs[0]["id"], fixture.id.as_str());
}

#[test]
fn a_missing_directory_is_a_usage_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_uatu"))
        .args(["inspect", "/nonexistent/runs", "--no-open", "--port", "0"])
        .output()
        .expect("runs uatu");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/runs"));
    let out = Command::new(env!("CARGO_BIN_EXE_uatu"))
        .args(["report", "/nonexistent/run", "-o", "/tmp/never.html"])
        .output()
        .expect("runs uatu");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn the_report_is_one_file_with_the_violations_inlined() {
    let fixture = fixture();
    let html = std::fs::read_to_string(&fixture.report).expect("`uatu run --report` wrote the report");
    assert!(
        !html.contains("src=\"/assets") && !html.contains("href=\"/assets"),
        "nothing external"
    );
    assert!(html.contains("data:image/png;base64,"), "screenshots inlined");
    let out = tempfile::tempdir().expect("tempdir");
    let path = out.path().join("report.html");
    let result = Command::new(env!("CARGO_BIN_EXE_uatu"))
        .arg("report")
        .arg(fixture.runs.join(&fixture.id))
        .arg("-o")
        .arg(&path)
        .output()
        .expect("runs uatu");
    assert_eq!(
        result.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&result.stderr)
    );
    let again = std::fs::read_to_string(&path).expect("the report");
    assert_eq!(again, html, "the same run makes the same report");
    let names: Vec<_> = std::fs::read_dir(out.path())
        .expect("dir")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(names.len(), 1, "no temporary left beside it: {names:?}");
}

#[test]
fn a_run_that_uatu_run_is_writing_grows_on_the_page() {
    let dir = tempfile::tempdir().expect("tempdir");
    let runs = dir.path().join("runs");
    std::fs::create_dir(&runs).expect("mkdir");
    let server = Inspect::start(&runs);
    // Slow device calls, so that the run is still being written while it is looked at.
    let mut run = Command::new(env!("CARGO_BIN_EXE_uatu"))
        .args([
            "run",
            "--spec",
            SPEC,
            "--seed",
            "3",
            "--max-steps",
            "40",
            "--sim-latency",
            "40ms",
        ])
        .arg("--output")
        .arg(&runs)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("starts uatu run");
    let start = std::time::Instant::now();
    let id = loop {
        let listed = server.json("/api/runs");
        if let Some(run) = listed.as_array().and_then(|runs| runs.first()) {
            assert_eq!(run["running"], true, "seen while it runs: {run}");
            break run["id"].as_str().expect("id").to_owned();
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the run never appeared"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let events = sse(
        &server.address,
        &format!("/api/runs/{id}/events?from=0"),
        "event: ended",
    );
    let batches = events.matches("event: steps").count();
    assert!(
        batches >= 2,
        "the steps arrive as they are written, not at once: {batches} batch(es)"
    );
    assert!(events.contains("\"step\":39,"), "the last step arrives");
    assert!(events.contains("event: ended"));
    let status = run.wait().expect("uatu run ends");
    assert!(matches!(status.code(), Some(0 | 1)), "{status}");
    let info = server.json(&format!("/api/runs/{id}"));
    assert_eq!(info["running"], false);
    assert_eq!(info["steps"], 40);
}
