//! The inspect page and the report in headless Chromium (Debian's, launched by
//! `uatu-web`'s launcher), driven over CDP, against the real run of
//! [`super::inspect::fixture`]. Page screenshots are saved under
//! `target/inspect-screenshots/` as artifacts.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use chromiumoxide::page::ScreenshotParams;
use chromiumoxide::{Browser, Page};
use futures::StreamExt;
use serde_json::Value;
use uatu_web::chromium::{self, Chromium};

use super::inspect::{Inspect, fixture};

/// Where the page screenshots go.
fn artifacts() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/inspect-screenshots");
    std::fs::create_dir_all(&dir).expect("artifact dir");
    dir
}

async fn eval(page: &Page, expression: &str) -> Value {
    page.evaluate_expression(expression)
        .await
        .unwrap_or_else(|e| panic!("{expression}: {e}"))
        .value()
        .cloned()
        .unwrap_or(Value::Null)
}

/// Waits until `expression` is true in the page (20 s at most).
async fn until(page: &Page, expression: &str) {
    let start = Instant::now();
    loop {
        if eval(page, expression).await == Value::Bool(true) {
            return;
        }
        if start.elapsed() > Duration::from_secs(20) {
            let body = eval(page, "document.body.innerText.slice(0, 2000)").await;
            panic!("timed out waiting for `{expression}`; the page says: {body}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Waits for step `n` to be shown in full (record drawn, screenshot loaded).
async fn shown(page: &Page, n: u64) {
    until(page, &format!("document.body.dataset.ready === '{n}'")).await;
}

async fn snap(page: &Page, name: &str) {
    let png = page
        .screenshot(ScreenshotParams::builder().build())
        .await
        .expect("a page screenshot");
    std::fs::write(artifacts().join(name), png).expect("saves the screenshot");
}

#[test]
fn the_page_and_the_report_show_the_violation() {
    let fixture = fixture();
    let server = Inspect::start(&fixture.runs);
    let index = server.json(&format!("/api/runs/{}/index", fixture.id));
    let marks = index["steps"].as_array().expect("marks");
    let first = marks
        .iter()
        .find(|m| m.get("violations").is_some() || m.get("crash").is_some())
        .expect("a violating step");
    let first_step = first["step"].as_u64().expect("step");
    assert!(first_step > 0, "the violation has an action that led there");
    let property = first["violations"][0].as_str().expect("a property").to_owned();
    let led_by = marks[first_step as usize - 1]["action"]
        .as_str()
        .expect("led by")
        .to_owned();
    let total = marks.len() as u64;

    let chromium = Chromium::launch(&chromium::executable(None), (1400, 900)).expect("launches Chromium");
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let (browser, mut handler) = Browser::connect(chromium.websocket.clone()).await.expect("connects");
        let events = tokio::spawn(async move { while handler.next().await.is_some() {} });
        let base = format!("http://{}", server.address);
        let id = &fixture.id;

        // The run list shows the run.
        let page = browser.new_page(format!("{base}/")).await.expect("opens the page");
        until(&page, "document.body.dataset.ready === 'list'").await;
        let listed = eval(&page, &format!("!!document.querySelector('.run-row[data-run=\"{id}\"]')")).await;
        assert_eq!(listed, Value::Bool(true));
        snap(&page, "run-list.png").await;

        // Opening it shows step 0's screenshot.
        page.find_element(".run-row a").await.expect("the run's link").click().await.expect("clicks");
        shown(&page, 0).await;
        let image = eval(&page, "(() => { const i = document.getElementById('screenshot'); return i.dataset.step === '0' && i.complete && i.naturalWidth > 0; })()").await;
        assert_eq!(image, Value::Bool(true), "step 0's screenshot is shown");
        until(&page, "document.querySelectorAll('.timeline').length > 0").await;
        snap(&page, "run-view.png").await;

        // "Next violation" reaches the first violating step: the property violated, its `led by` drawn.
        page.find_element("#steps").await.expect("the step list").press_key("n").await.expect("presses n");
        shown(&page, first_step).await;
        let path = eval(&page, "location.pathname").await;
        assert_eq!(path, Value::String(format!("/runs/{id}/steps/{first_step}")), "a deep link");
        let violated = eval(&page, &format!("!!document.querySelector('.prop[data-prop=\"{property}\"][data-status=\"violated\"]')")).await;
        assert_eq!(violated, Value::Bool(true), "{property} shown violated at step {first_step}");
        let drawn = eval(&page, "document.querySelectorAll('#overlay [data-role=\"led-by\"] circle, #overlay [data-role=\"led-by\"] rect, #overlay [data-role=\"led-by\"] text').length").await;
        assert!(drawn.as_u64().unwrap_or(0) > 0, "the led-by action is drawn on the screenshot");
        let text = eval(&page, "document.querySelector('#led-by-text code').textContent").await;
        assert_eq!(text, Value::String(led_by.clone()), "the page names the action the summary names");
        snap(&page, "violation.png").await;

        // The hierarchy outlines the element under the pointer.
        let screen = page.find_element("#screen").await.expect("the screen");
        let point = screen.clickable_point().await.expect("a point");
        page.move_mouse(point).await.expect("moves the mouse");
        until(&page, "document.querySelector('rect.hover').getAttribute('visibility') === 'visible' && !!document.querySelector('.node.hovered')").await;

        // The timeline seeks: a click in its middle shows the step in the middle.
        page.find_element(&format!(".timeline[data-prop=\"{property}\"]"))
            .await
            .expect("the property's timeline")
            .click()
            .await
            .expect("clicks");
        until(&page, &format!("document.body.dataset.ready !== '' && document.body.dataset.ready !== '{first_step}'")).await;
        let sought: u64 = eval(&page, "document.body.dataset.ready").await.as_str().and_then(|s| s.parse().ok()).expect("a step");
        assert!(sought.abs_diff(total / 2) <= 1, "clicked the middle of {total} steps, got {sought}");
        snap(&page, "timeline.png").await;

        // Keyboard: End, Home, ±10.
        page.find_element("#steps").await.expect("the step list").press_key("End").await.expect("End");
        shown(&page, total - 1).await;
        page.find_element("#steps").await.expect("the step list").press_key("Home").await.expect("Home");
        shown(&page, 0).await;
        page.find_element("#steps").await.expect("the step list").press_key("PageDown").await.expect("PageDown");
        shown(&page, 10).await;

        // A deep link opens its step; dark mode.
        page.goto(format!("{base}/runs/{id}/steps/{first_step}")).await.expect("deep link");
        shown(&page, first_step).await;
        page.find_element("#theme").await.expect("the theme toggle").click().await.expect("clicks");
        until(&page, "document.documentElement.dataset.theme === 'dark' || document.documentElement.dataset.theme === 'light'").await;
        let dark = eval(&page, "getComputedStyle(document.body).backgroundColor").await;
        snap(&page, "violation-toggled-theme.png").await;
        page.find_element("#theme").await.expect("the theme toggle").click().await.expect("clicks");
        let light = eval(&page, "getComputedStyle(document.body).backgroundColor").await;
        assert_ne!(dark, light, "the toggle switches light and dark");

        // The report opens from disk with no server and shows the same violation.
        drop(server);
        let report = format!("file://{}", fixture.report.display());
        let page = browser.new_page(report).await.expect("opens the report");
        shown(&page, 0).await;
        page.find_element("#steps").await.expect("the step list").press_key("n").await.expect("presses n");
        shown(&page, first_step).await;
        let violated = eval(&page, &format!("!!document.querySelector('.prop[data-prop=\"{property}\"][data-status=\"violated\"]')")).await;
        assert_eq!(violated, Value::Bool(true), "the report shows {property} violated");
        let image = eval(&page, "(() => { const i = document.getElementById('screenshot'); return i.complete && i.naturalWidth > 0; })()").await;
        assert_eq!(image, Value::Bool(true), "the report's screenshot is inlined");
        let drawn = eval(&page, "document.querySelectorAll('#overlay [data-role=\"led-by\"]').length").await;
        assert_eq!(drawn, Value::from(1));
        snap(&page, "report.png").await;

        drop(browser);
        events.abort();
    });
    drop(chromium);
}

#[test]
fn a_run_being_written_grows_on_screen() {
    let dir = tempfile::tempdir().expect("tempdir");
    let runs = dir.path().join("runs");
    std::fs::create_dir(&runs).expect("mkdir");
    let server = Inspect::start(&runs);
    let mut run = std::process::Command::new(env!("CARGO_BIN_EXE_uatu"))
        .args([
            "run",
            "--spec",
            super::inspect::SPEC,
            "--seed",
            "3",
            "--max-steps",
            "40",
            "--sim-latency",
            "40ms",
        ])
        .arg("--output")
        .arg(&runs)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("starts uatu run");
    let start = Instant::now();
    let id = loop {
        let listed = server.json("/api/runs");
        if let Some(id) = listed[0]["id"].as_str() {
            break id.to_owned();
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the run never appeared"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let chromium = Chromium::launch(&chromium::executable(None), (1400, 900)).expect("launches Chromium");
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let (browser, mut handler) = Browser::connect(chromium.websocket.clone())
            .await
            .expect("connects");
        let events = tokio::spawn(async move { while handler.next().await.is_some() {} });
        let page = browser
            .new_page(format!("http://{}/runs/{id}", server.address))
            .await
            .expect("opens the page");
        until(&page, "!!document.getElementById('running')").await;
        let steps = "parseInt(document.getElementById('step-count').textContent)";
        let before = eval(&page, steps).await.as_u64().unwrap_or(0);
        snap(&page, "running.png").await;
        until(&page, &format!("{steps} > {before}")).await;
        until(
            &page,
            &format!("!document.getElementById('running') && {steps} === 40"),
        )
        .await;
        drop(browser);
        events.abort();
    });
    drop(chromium);
    let status = run.wait().expect("uatu run ends");
    assert!(matches!(status.code(), Some(0 | 1)), "{status}");
}
