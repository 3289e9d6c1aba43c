//! The web device against real pages in Debian's Chromium, served by a local
//! static server: hierarchy and selectors, input events, idle, logs and
//! exceptions through the real agent socket, crashes, and browser cleanup.

mod common;

use std::time::Duration;

use chromiumoxide::Browser;
use chromiumoxide::cdp::browser_protocol::page::CrashParams;
use futures::StreamExt;
use uatu_device::agent::{AgentListener, ListenerConfig};
use uatu_device::model::{Hierarchy, Key, LogLevel, Node, Touch};
use uatu_device::selector::Matcher;
use uatu_device::{DeviceSelector, Driver};

use common::*;

fn find<'h>(hierarchy: &'h Hierarchy, selector: &str) -> Option<&'h Node> {
    Matcher::parse(selector).expect(selector).find(&hierarchy.root)
}

/// Why the app's connection ended, once it has (10 s at most).
async fn disconnect_reason(agent: &AgentListener) -> String {
    for _ in 0..200 {
        let status = agent.status();
        if !status.is_connected() {
            return status.last_disconnect.map(|r| r.to_string()).unwrap_or_default();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the app connection is still up");
}

async fn page_log(device: &uatu_web::WebDevice) -> String {
    let hierarchy = device.hierarchy().await.expect("hierarchy");
    find(&hierarchy, "id:log")
        .map(|n| n.text.clone())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_selector_kind_finds_its_element_and_hidden_ones_are_left_out() {
    let device = launched("widgets.html", None).await;
    let hierarchy = device.hierarchy().await.expect("hierarchy");
    assert_eq!((hierarchy.screen.width, hierarchy.screen.height), (800, 600));

    let save = find(&hierarchy, "id:save").expect("id:save");
    assert_eq!(
        (
            save.text.as_str(),
            save.class_name.as_str(),
            save.package.as_str()
        ),
        ("Save", "button", "button")
    );
    assert!(save.clickable && save.enabled && !save.bounds.is_empty());

    let close = find(&hierarchy, "desc:Close dialog").expect("desc: (aria-label)");
    assert_eq!(close.text, "x");
    let name = find(&hierarchy, "desc:Your name").expect("desc: (label for)");
    assert_eq!(
        (name.id.as_str(), name.text.as_str(), name.package.as_str()),
        ("name", "Ada", "textbox")
    );

    let banner = find(&hierarchy, "testid:banner").expect("testid:");
    assert_eq!(banner.text, "Hello 3 items");
    assert_eq!(
        find(&hierarchy, "text:Hello 3 items").map(|n| &n.id),
        Some(&banner.id)
    );

    let done = find(&hierarchy, "css:li.todo.completed").expect("css:");
    assert_eq!(done.text, "first");
    let todos = hierarchy
        .root
        .descendants()
        .filter(|n| Matcher::parse("css:li.todo").expect("css").matches(n));
    assert_eq!(todos.count(), 2);

    let agree = find(&hierarchy, "id:agree").expect("checkbox");
    assert!(agree.checked && agree.clickable);
    assert!(!find(&hierarchy, "id:off").expect("disabled button").enabled);
    assert!(find(&hierarchy, "id:name").is_some_and(|n| !n.focused));
    assert!(find(&hierarchy, "id:hidden-by-display").is_none());
    assert!(find(&hierarchy, "id:hidden-by-visibility").is_none());
    assert!(find(&hierarchy, "text:never").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn taps_keys_text_and_wheel_reach_the_page_as_real_events() {
    let device = launched("widgets.html", None).await;
    let hierarchy = device.hierarchy().await.expect("hierarchy");
    let save = find(&hierarchy, "id:save").expect("save").bounds.centre();
    let name = find(&hierarchy, "id:name").expect("name").bounds.centre();

    device.tap(Touch::at(save)).await.expect("tap");
    assert_eq!(page_log(&device).await, "click save");
    device.tap(Touch::at(save)).await.expect("second tap");
    assert!(
        page_log(&device).await.ends_with("dblclick save"),
        "two quick taps are a double click"
    );

    device.tap(Touch::at(name)).await.expect("tap the field");
    let focused = device.hierarchy().await.expect("hierarchy");
    assert!(find(&focused, "id:name").is_some_and(|n| n.focused));
    device.input_text("!\u{8}z").await.expect("type");
    device.press_key(Key::Enter).await.expect("enter");
    device.press_key(Key::Back).await.expect("back");
    device.press_key(Key::Tab).await.expect("tab");
    let log = page_log(&device).await;
    for line in [
        "keydown ! 49",
        "value Ada!",
        "keydown Backspace 8",
        "value Ada",
        "keydown z 90",
        "value Adaz",
        "keydown Enter 13",
        "keydown Escape 27",
        "keydown Tab 9",
    ] {
        assert!(log.contains(line), "missing `{line}` in:\n{log}");
    }
    let after_tab = device.hierarchy().await.expect("hierarchy");
    assert!(
        find(&after_tab, "id:name").is_some_and(|n| !n.focused),
        "Tab moves focus on"
    );

    let by_selector = device
        .tap_selector(&DeviceSelector::ContentDescription("Close dialog".into()))
        .await
        .expect("tap by selector");
    assert!(by_selector.delivered);

    let top_before = find(&after_tab, "id:save").expect("save").bounds.top;
    device
        .swipe(
            uatu_device::model::Point { x: 400, y: 500 },
            uatu_device::model::Point { x: 400, y: 200 },
            Duration::from_millis(300),
        )
        .await
        .expect("swipe");
    device.wait_for_idle(Duration::from_secs(1)).await.expect("idle");
    let scrolled = device.hierarchy().await.expect("hierarchy");
    let log = page_log(&device).await;
    assert!(log.contains("wheel 0 300"), "{log}");
    assert_eq!(
        find(&scrolled, "id:save").expect("save").bounds.top,
        top_before - 300
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_is_reached_on_a_still_page_and_capped_on_one_that_keeps_mutating() {
    let still = launched("widgets.html", None).await;
    let outcome = still.wait_for_idle(Duration::from_secs(5)).await.expect("idle");
    assert!(outcome.idle);

    let busy = launched("busy.html", None).await;
    let before = busy
        .wait_for_idle(Duration::from_millis(300))
        .await
        .expect("wait");
    assert!(!before.idle, "a page that mutates every 10 ms is never idle");
    // The host's timeout is larger than the cap: the cap ends the wait.
    let capped = busy.wait_for_idle(Duration::from_secs(60)).await.expect("wait");
    assert!(!capped.idle);
    assert!(
        capped.device_time_ms >= before.device_time_ms + 2_000,
        "ended by the 2 s cap"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn console_errors_are_logs_and_uncaught_exceptions_and_snapshots_reach_the_agent() {
    let agent = AgentListener::bind(ListenerConfig::default())
        .await
        .expect("agent socket");
    let device = launched("faulty.html", Some(agent.socket_path().to_path_buf())).await;
    let hello = agent
        .wait_for_app(Duration::from_secs(10))
        .await
        .expect("the web SDK connects");
    assert_eq!(hello.platform, "web");

    let hierarchy = device.hierarchy().await.expect("hierarchy");
    device
        .tap(Touch::on(find(&hierarchy, "id:shout").expect("shout").bounds))
        .await
        .expect("tap");
    device
        .tap(Touch::on(find(&hierarchy, "id:throw").expect("throw").bounds))
        .await
        .expect("tap");
    device.wait_for_idle(Duration::from_secs(2)).await.expect("idle");

    let errors = device.recent_logs(0, LogLevel::Error).await.expect("logs");
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(
        (errors[0].tag.as_str(), errors[0].message.as_str()),
        ("console", "boom: the list is gone")
    );

    let state = agent.pause(Duration::from_secs(5)).await.expect("STATE");
    assert_eq!(state.snapshots.get("todos"), Some(&serde_json::json!(2)));
    assert_eq!(state.exceptions.len(), 1, "{:?}", state.exceptions);
    assert_eq!(state.exceptions[0].class, "TypeError");
    assert_eq!(state.exceptions[0].message, "todos is undefined");
    agent.resume().await.expect("resume");
    let again = agent.pause(Duration::from_secs(5)).await.expect("STATE");
    assert!(again.exceptions.is_empty(), "each exception is reported once");
    agent.resume().await.expect("resume");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_page_and_a_page_that_leaves_the_app_end_the_app_connection_and_relaunch_works() {
    let agent = AgentListener::bind(ListenerConfig::default())
        .await
        .expect("agent socket");
    let device = launched("faulty.html", Some(agent.socket_path().to_path_buf())).await;
    agent
        .wait_for_app(Duration::from_secs(10))
        .await
        .expect("connects");

    // Crash the renderer from a second DevTools client, as a renderer bug would.
    let (browser, mut handler) = Browser::connect(device.devtools_websocket())
        .await
        .expect("second client");
    tokio::spawn(async move { while handler.next().await.is_some() {} });
    tokio::time::sleep(Duration::from_millis(200)).await;
    let pages = browser.pages().await.expect("pages");
    let page = pages
        .into_iter()
        .find(|p| {
            futures::executor::block_on(p.url())
                .ok()
                .flatten()
                .is_some_and(|u| u.ends_with("faulty.html"))
        })
        .expect("the app page");
    let _ = page.execute(CrashParams::default()).await;
    let reason = disconnect_reason(&agent).await;
    assert!(reason.contains("crash: WebPageCrashed"), "{reason}");

    device.launch("web", false, None).await.expect("relaunch");
    agent
        .wait_for_app(Duration::from_secs(10))
        .await
        .expect("reconnects");
    agent
        .pause(Duration::from_secs(5))
        .await
        .expect("the new page answers");
    agent.resume().await.expect("resume");

    let hierarchy = device.hierarchy().await.expect("hierarchy");
    device
        .tap(Touch::on(find(&hierarchy, "id:away").expect("away").bounds))
        .await
        .expect("tap");
    let reason = disconnect_reason(&agent).await;
    assert!(reason.contains("crash: WebPageLeftApp"), "{reason}");
}
