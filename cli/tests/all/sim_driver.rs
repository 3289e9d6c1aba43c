//! The simulator's gRPC driver, called over a real connection with the generated client.

use crate::support::sim as sim_support;

use sim_support::*;
use uatu_device::proto::{self, tap_selector_request::Selector};
use uatu_sim::{Bug, Bugs};

#[tokio::test]
async fn health_and_metrics_describe_a_simulator() {
    let (sim, mut client) = start(Bugs::none(), None).await;
    let health = client
        .health(proto::HealthRequest {})
        .await
        .expect("Health")
        .into_inner();
    assert!(health.ready);
    assert_eq!(health.platform, "sim");
    assert!(health.version.starts_with("uatu-sim "), "{}", health.version);
    let first = client
        .metrics(proto::MetricsRequest {})
        .await
        .expect("Metrics")
        .into_inner();
    let again = client
        .metrics(proto::MetricsRequest {})
        .await
        .expect("Metrics")
        .into_inner();
    assert!((0.0..=100.0).contains(&first.cpu_percent), "{first:?}");
    assert!(first.memory_bytes > 50 * 1024 * 1024, "{first:?}");
    assert_eq!(first, again, "metrics depend only on the device's state");
    sim.shutdown().await.expect("shuts down");
}

#[tokio::test]
async fn hierarchy_and_screenshot_show_the_login_screen() {
    let (sim, mut client) = start(Bugs::none(), None).await;
    let response = client
        .hierarchy(proto::HierarchyRequest {})
        .await
        .expect("Hierarchy")
        .into_inner();
    assert_eq!((response.screen_width, response.screen_height), (1080, 2400));
    let root = response.root.expect("root");
    for desc in ["login_email", "login_password", "login_submit"] {
        let node = find(&root, desc).unwrap_or_else(|| panic!("{desc} missing"));
        assert_eq!(node.package, "app.folio");
        assert!(node.clickable && node.enabled);
    }
    let email = find(&root, "login_email").expect("email");
    assert_eq!(email.class_name, "android.widget.EditText");
    assert_eq!(email.resource_id, "app.folio:id/email");

    let shot = client
        .screenshot(proto::ScreenshotRequest {})
        .await
        .expect("Screenshot")
        .into_inner();
    assert_eq!((shot.width, shot.height), (540, 1200), "default scale 0.5");
    let image = image::load_from_memory(&shot.png).expect("a PNG");
    assert_eq!((image.width(), image.height()), (540, 1200));
    sim.shutdown().await.expect("shuts down");
}

#[tokio::test]
async fn input_rpcs_drive_the_app_on_device_time() {
    let (sim, mut client) = start(Bugs::none(), None).await;
    let tapped = tap_desc(&mut client, "login_email").await;
    assert!(tapped.delivered);
    assert_eq!(
        tapped.device_time_ms, 150,
        "a tap takes about 150 ms of device time"
    );
    let typed = client
        .input_text(proto::InputTextRequest {
            text: "demo@folio.app".into(),
        })
        .await
        .expect("InputText")
        .into_inner();
    assert!(typed.delivered && typed.device_time_ms > tapped.device_time_ms);
    let root = hierarchy(&mut client).await;
    let email = find(&root, "login_email").expect("email");
    assert_eq!(email.text, "demo@folio.app");
    assert!(email.focused);

    // Tab to the password field, type, and submit with Enter.
    let key = |key: proto::Key| proto::PressKeyRequest { key: key as i32 };
    client.press_key(key(proto::Key::Tab)).await.expect("PressKey");
    client
        .input_text(proto::InputTextRequest {
            text: "ledger123".into(),
        })
        .await
        .expect("InputText");
    let entered = client
        .press_key(key(proto::Key::Enter))
        .await
        .expect("PressKey")
        .into_inner();
    let idle = client
        .wait_for_idle(proto::WaitForIdleRequest { timeout_ms: 1_000 })
        .await
        .expect("WaitForIdle");
    assert!(idle.get_ref().idle && idle.get_ref().device_time_ms > entered.device_time_ms);
    let after = sleep(&mut client, 5_000).await;
    assert_eq!(
        after,
        idle.get_ref().device_time_ms + 5_000,
        "Sleep advances the clock by its duration"
    );
    assert!(
        find(&hierarchy(&mut client).await, "logout_button").is_some(),
        "signed in"
    );
    add_account(&mut client, "Checking").await;

    // TapSelector resolves on the device; an unknown selector is not delivered.
    let by_desc = |desc: &str| proto::TapSelectorRequest {
        selector: Some(Selector::ContentDescription(desc.into())),
    };
    let opened = client
        .tap_selector(by_desc("account_card:a1"))
        .await
        .expect("TapSelector")
        .into_inner();
    assert!(opened.delivered);
    assert!(
        find(&hierarchy(&mut client).await, "add_txn_button").is_some(),
        "the ledger is shown"
    );
    let missing = client
        .tap_selector(by_desc("no_such_thing"))
        .await
        .expect("TapSelector")
        .into_inner();
    assert!(
        !missing.delivered && missing.detail.contains("no element"),
        "{missing:?}"
    );

    // Swipe is delivered; Back returns home.
    let swipe = proto::SwipeRequest {
        from: Some(proto::Point { x: 540, y: 1800 }),
        to: Some(proto::Point { x: 540, y: 900 }),
        duration_ms: 400,
    };
    let before = sleep(&mut client, 0).await;
    let swiped = client.swipe(swipe).await.expect("Swipe").into_inner();
    assert_eq!(swiped.device_time_ms, before + 400, "a swipe takes its duration");
    client.press_key(key(proto::Key::Back)).await.expect("PressKey");
    assert!(find(&hierarchy(&mut client).await, "add_account_button").is_some());

    // A tap off the screen is refused, not an error.
    let off = client
        .tap(proto::TapRequest {
            point: Some(proto::Point { x: 5_000, y: 5 }),
            element: None,
        })
        .await;
    assert!(!off.expect("Tap").into_inner().delivered);
    sim.shutdown().await.expect("shuts down");
}

#[tokio::test]
async fn recent_logs_filter_by_time_and_level() {
    let (sim, mut client) = start(Bugs::none(), None).await;
    tap_desc(&mut client, "login_submit").await; // empty fields: a warning
    sign_in(&mut client).await;
    let logs = |since_ms: u64, level: proto::LogLevel| proto::RecentLogsRequest {
        since_ms,
        min_level: level as i32,
    };
    let all = client
        .recent_logs(logs(0, proto::LogLevel::Verbose))
        .await
        .expect("RecentLogs")
        .into_inner();
    assert!(
        all.entries.iter().any(|e| e.message == "navigate login -> home"),
        "{:?}",
        all.entries
    );
    let warnings = client
        .recent_logs(logs(0, proto::LogLevel::Warn))
        .await
        .expect("RecentLogs")
        .into_inner();
    assert!(!warnings.entries.is_empty());
    assert!(
        warnings
            .entries
            .iter()
            .all(|e| e.level >= proto::LogLevel::Warn as i32)
    );
    let last = all.entries.last().map(|e| e.time_ms).unwrap_or_default();
    let later = client
        .recent_logs(logs(last, proto::LogLevel::Verbose))
        .await
        .expect("RecentLogs")
        .into_inner();
    assert!(later.entries.is_empty(), "entries strictly after `since_ms`");
    sim.shutdown().await.expect("shuts down");
}

#[tokio::test]
async fn launch_and_terminate_control_the_app_process() {
    let (sim, mut client) = start(Bugs::only(Bug::StaleTotal), None).await;
    let wrong = client
        .launch(proto::LaunchRequest {
            bundle_id: "com.other".into(),
            clear_state: false,
            launcher_activity: None,
        })
        .await
        .expect_err("an app that is not installed");
    assert_eq!(wrong.code(), tonic::Code::NotFound);
    sign_in(&mut client).await;
    let launched = client
        .launch(proto::LaunchRequest {
            bundle_id: "app.folio".into(),
            clear_state: false,
            launcher_activity: None,
        })
        .await
        .expect("Launch")
        .into_inner();
    assert!(launched.device_time_ms > 5_000);
    assert!(
        find(&hierarchy(&mut client).await, "logout_button").is_some(),
        "a restart keeps the session: home"
    );
    client
        .terminate(proto::TerminateRequest {
            bundle_id: "app.folio".into(),
        })
        .await
        .expect("Terminate");
    let root = hierarchy(&mut client).await;
    assert!(
        all_nodes(&root).iter().all(|node| node.package != "app.folio"),
        "only the launcher"
    );
    let press = client
        .press_key(proto::PressKeyRequest {
            key: proto::Key::Unspecified as i32,
        })
        .await
        .expect_err("a key is required");
    assert_eq!(press.code(), tonic::Code::InvalidArgument);
    sim.shutdown().await.expect("shuts down");
}

#[tokio::test]
async fn the_same_seed_and_inputs_give_the_same_device() {
    let mut runs = Vec::new();
    for _ in 0..2 {
        let (sim, mut client) = start(Bugs::all(), None).await;
        sign_in(&mut client).await;
        add_account(&mut client, "Checking").await;
        add_account(&mut client, "Savings").await;
        tap_desc(&mut client, "account_card:a2").await;
        let shot = client
            .screenshot(proto::ScreenshotRequest {})
            .await
            .expect("Screenshot")
            .into_inner();
        runs.push((
            hierarchy(&mut client).await,
            shot.png,
            sleep(&mut client, 0).await,
        ));
        sim.shutdown().await.expect("shuts down");
    }
    assert_eq!(runs[0], runs[1]);
}
