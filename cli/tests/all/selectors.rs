//! One selector matcher, the same answers on every device (issue 38 item 1): every
//! selector form and key looked for in a hierarchy captured from each device kind —
//! the simulator's Folio sign-in screen over gRPC, a page in real Chromium, and a real
//! UIAutomator dump (`openweather-home.xml`, the fixture of `/work/shared/fixtures/android/`
//! kept in sidecar-maestro's test resources) parsed by the real sidecar JAR on its
//! scripted fake device. Each table says which elements each selector finds, in tree
//! order; [`every_key_is_in_a_table`] keeps the tables complete.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use uatu_device::Driver;
use uatu_device::grpc::{CallTimeouts, GrpcDriver};
use uatu_device::model::Node;
use uatu_device::selector::{FIELD_KEYS, STATE_KEYS, Selector};
use uatu_device::sidecar::{SidecarCommand, SidecarProcess};

use crate::support::android::{built_jar, fake_device_copy};
use crate::support::plugins::repo_root;

/// How a found element is named in the tables: its id, else its text, its description,
/// its class (the first that is not empty).
fn label(node: &Node) -> String {
    [&node.id, &node.text, &node.desc, &node.class_name]
        .into_iter()
        .find(|value| !value.is_empty())
        .cloned()
        .unwrap_or_default()
}

/// A selector as a spec writes it (a string, an object or a path) and the labels of what
/// it finds.
type Case = (Value, &'static [&'static str]);

/// Runs every case against `root`; one failure lists every case that answered otherwise.
fn check(device: &str, root: &Node, cases: &[Case]) {
    let mut wrong = Vec::new();
    for (written, expected) in cases {
        let selector: Selector = serde_json::from_value(written.clone())
            .unwrap_or_else(|e| panic!("{written} is a selector: {e}"));
        let query = selector
            .compile()
            .unwrap_or_else(|e| panic!("{written} compiles: {e}"));
        let found: Vec<String> = query.find_all(root).into_iter().map(label).collect();
        if found != *expected {
            wrong.push(format!("  {written}: found {found:?}, expected {expected:?}"));
        }
    }
    assert!(wrong.is_empty(), "{device}:\n{}", wrong.join("\n"));
}

const DAYS: &[&str] = &[
    "Navigate to a specific day: 01 Apr",
    "Navigate to a specific day: 02 Apr",
    "Navigate to a specific day: 03 Apr",
    "Navigate to a specific day: 04 Apr",
    "Navigate to a specific day: 05 Apr",
    "Navigate to a specific day: 06 Apr",
    "Navigate to a specific day: 07 Apr",
];

/// The real dump's cases. A dump has no role; its other attributes are `attrs`.
fn android_cases() -> Vec<Case> {
    vec![
        (json!("desc:Search"), &["Search"]),
        (json!({"desc": "Go to settings"}), &["Go to settings"]),
        (json!({"descPrefix": "Navigate to a specific day: 0"}), DAYS),
        (json!("text:London"), &["London"]),
        (json!({"text": "London"}), &["London"]),
        (json!({"textPrefix": "Wed"}), &["Wed Apr 02"]),
        (
            json!({"id": "action_bar_root"}),
            &["uk.co.openweather:id/action_bar_root"],
        ),
        (
            json!({"id": "uk.co.openweather:id/action_bar_root"}),
            &["uk.co.openweather:id/action_bar_root"],
        ),
        (
            json!({"idPrefix": "statusBar"}),
            &["android:id/statusBarBackground"],
        ),
        // Compose test tags are the dump's resource-id, whole.
        (json!({"testTag": "daily"}), &["daily"]),
        (json!("testTag:precipitation-summary"), &["precipitation-summary"]),
        (
            json!({"class": "android.widget.HorizontalScrollView"}),
            &["android.widget.HorizontalScrollView"],
        ),
        (
            json!({"scrollable": true}),
            &["android.widget.ScrollView", "android.widget.HorizontalScrollView"],
        ),
        (json!({"clickable": true, "descPrefix": "Navigate"}), DAYS),
        (
            json!({"desc": "Search", "clickable": true, "enabled": true, "checked": false, "focused": false, "selected": false}),
            &["Search"],
        ),
        // Keys are AND-ed.
        (json!({"desc": "Search", "clickable": false}), &[]),
        // Any other key is an attribute of the dump; a boolean is its "true"/"false".
        (json!({"focusable": "true", "descPrefix": "Navigate"}), DAYS),
        (json!({"long-clickable": false, "desc": "Search"}), &["Search"]),
        (json!({"role": "button"}), &[]),
        // Paths: the last part inside (not only directly inside) the part before it.
        (
            json!([{"testTag": "daily"}, {"textPrefix": "Wed"}]),
            &["Wed Apr 02"],
        ),
        (json!("id:daily > textPrefix:Thu"), &["Thu Apr 03"]),
        (json!([{"testTag": "precipitation-summary"}, "text:London"]), &[]),
    ]
}

/// The simulator's Folio sign-in screen. The simulator models Android widgets: ids are
/// `app.folio:id/<name>`, no role, no other attributes.
fn sim_cases() -> Vec<Case> {
    const EMAIL: &str = "app.folio:id/email";
    const PASSWORD: &str = "app.folio:id/password";
    const SIGN_IN: &str = "app.folio:id/sign_in";
    vec![
        (json!("desc:login_email"), &[EMAIL]),
        (json!({"desc": "login_submit"}), &[SIGN_IN]),
        (json!({"descPrefix": "login_"}), &[EMAIL, PASSWORD, SIGN_IN]),
        (
            json!({"text": "Sign in"}),
            &["app.folio:id/toolbar_title", SIGN_IN],
        ),
        (json!({"textPrefix": "Your"}), &["app.folio:id/tagline"]),
        (json!("id:email"), &[EMAIL]),
        (json!({"id": "email"}), &[EMAIL]),
        (
            json!({"idPrefix": "pass"}),
            &["app.folio:id/password_label", PASSWORD],
        ),
        (json!({"testTag": "tagline"}), &["app.folio:id/tagline"]),
        (json!({"class": "android.widget.EditText"}), &[EMAIL, PASSWORD]),
        (
            json!({"clickable": true, "class": "android.widget.EditText"}),
            &[EMAIL, PASSWORD],
        ),
        (json!({"enabled": true, "desc": "login_submit"}), &[SIGN_IN]),
        (
            json!({"id": "email", "checked": false, "focused": false, "selected": false, "scrollable": false}),
            &[EMAIL],
        ),
        (json!({"id": "email", "focused": true}), &[]),
        (json!({"role": "button"}), &[]),
        (json!({"hint": "password"}), &[]),
        (
            json!(["id:toolbar", {"text": "Sign in"}]),
            &["app.folio:id/toolbar_title"],
        ),
        (
            json!("id:toolbar > text:Sign in"),
            &["app.folio:id/toolbar_title"],
        ),
        (json!([{"id": "toolbar"}, "desc:login_submit"]), &[]),
    ]
}

/// `web/tests/pages/widgets.html` in Chromium. A web element's id is its `id`, else its
/// `data-testid`; `class` is `tag.class1.class2`.
/// The web capture here reports no `role` and no other attributes yet (the `web` helper's
/// capture adds both): `role` and attribute cases join this table with it.
fn web_cases() -> Vec<Case> {
    vec![
        (json!("id:save"), &["save"]),
        (json!({"id": "save"}), &["save"]),
        (json!({"idPrefix": "ag"}), &["agree"]),
        // Elements not shown (display: none, visibility: hidden) are not captured.
        (json!({"idPrefix": "hidden-by"}), &[]),
        (json!({"text": "Save"}), &["save"]),
        (json!({"textPrefix": "Hello"}), &["banner"]),
        (json!({"desc": "Close dialog"}), &["x"]),
        (json!("descPrefix:Close"), &["x"]),
        (json!({"testTag": "banner"}), &["banner"]),
        (json!("testid:banner"), &["banner"]),
        (json!({"class": "input"}), &["name", "agree"]),
        (json!("css:li.todo.completed"), &["first"]),
        (json!({"checked": true}), &["agree"]),
        (json!({"enabled": false}), &["off"]),
        (
            json!({"clickable": true, "class": "button"}),
            &["save", "x", "off"],
        ),
        (
            json!({"id": "name", "focused": false, "selected": false, "scrollable": false}),
            &["name"],
        ),
        (json!({"id": "save", "enabled": false}), &[]),
        (
            json!([{"class": "ul.todo-list"}, {"text": "second"}]),
            &["second"],
        ),
        (json!("css:ul.todo-list > text:first"), &["first"]),
        (json!([{"testTag": "banner"}, "text:3"]), &["3"]),
        (json!([{"id": "save"}, "text:first"]), &[]),
    ]
}

/// The keys every table uses between them: the object keys, the string kinds, and
/// whether an attribute key (any other) and a path of each form appear.
fn keys_used(cases: &[Case]) -> Vec<String> {
    let mut keys = Vec::new();
    let visit = |selector: &Value, keys: &mut Vec<String>| match selector {
        Value::String(text) => {
            if text.contains(" > ") {
                keys.push("path string".into());
            }
            for part in text.split(" > ") {
                if let Some((kind, _)) = part.split_once(':') {
                    keys.push(format!("{kind}:"));
                }
            }
        }
        Value::Object(object) => {
            for key in object.keys() {
                let known = FIELD_KEYS.contains(&key.as_str()) || STATE_KEYS.contains(&key.as_str());
                keys.push(if known { key.clone() } else { "an attribute".into() });
            }
        }
        _ => {}
    };
    for (selector, _) in cases {
        match selector {
            Value::Array(parts) => {
                keys.push("path list".into());
                for part in parts {
                    visit(part, &mut keys);
                }
            }
            other => visit(other, &mut keys),
        }
    }
    keys.sort();
    keys.dedup();
    keys
}

#[test]
fn every_key_is_in_a_table() {
    let mut all = android_cases();
    all.extend(sim_cases());
    all.extend(web_cases());
    let used = keys_used(&all);
    let mut wanted: Vec<String> = FIELD_KEYS
        .iter()
        .chain(STATE_KEYS.iter())
        .map(|key| key.to_string())
        .collect();
    wanted.extend(
        [
            "an attribute",
            "path string",
            "path list",
            "id:",
            "text:",
            "desc:",
            "testTag:",
            "css:",
        ]
        .map(String::from),
    );
    let missing: Vec<&String> = wanted.iter().filter(|key| !used.contains(key)).collect();
    assert!(missing.is_empty(), "no case uses {missing:?}");
    // Each device answers every object key.
    for (device, cases) in [("android", android_cases()), ("sim", sim_cases())] {
        let used = keys_used(&cases);
        let missing: Vec<&&str> = FIELD_KEYS
            .iter()
            .chain(STATE_KEYS.iter())
            .filter(|key| !used.contains(&key.to_string()))
            .collect();
        assert!(missing.is_empty(), "{device}: no case uses {missing:?}");
    }
}

/// A fake device (a copy of the built-in one) whose app shows the real dump.
fn fixture_device(dir: &Path) -> PathBuf {
    let device = fake_device_copy(dir, "");
    std::fs::copy(
        repo_root().join("sidecar-maestro/src/test/resources/dumps/openweather-home.xml"),
        device.join("openweather-home.xml"),
    )
    .expect("copies the dump");
    // The app's screen is the dump, and no SDK is linked (none answers here).
    let properties = device.join("device.properties");
    let text = std::fs::read_to_string(&properties).expect("reads device.properties");
    let text: String = text
        .lines()
        .filter(|line| !line.starts_with("screens=") && !line.starts_with("sdk="))
        .map(|line| format!("{line}\n"))
        .collect();
    std::fs::write(&properties, format!("{text}screens=openweather-home.xml\n"))
        .expect("writes device.properties");
    device
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_matcher_on_a_real_uiautomator_dump_through_the_sidecar() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut command = SidecarCommand::new(built_jar());
    command.fake_device = Some(fixture_device(dir.path()).display().to_string());
    let sidecar = SidecarProcess::start(&command).await.expect("the sidecar starts");
    let hierarchy = async {
        let driver = GrpcDriver::connect(&sidecar.addr(), CallTimeouts::default()).await?;
        driver.launch("app.folio", true, None).await?;
        driver.hierarchy().await
    }
    .await;
    let tail = sidecar.stderr_tail();
    sidecar.stop(Duration::from_secs(10)).await;
    let hierarchy = hierarchy.unwrap_or_else(|e| panic!("the dump through the sidecar: {e}\n{tail}"));
    check("android", &hierarchy.root, &android_cases());

    // An element's own find/findAll look inside it only.
    let daily = uatu_device::selector::Matcher::parse("testTag:daily")
        .expect("a selector")
        .find(&hierarchy.root)
        .expect("the daily list");
    let inside: Vec<String> = Selector::from("textPrefix:Sat")
        .compile()
        .expect("compiles")
        .find_all_inside(daily)
        .into_iter()
        .map(label)
        .collect();
    assert_eq!(inside, ["Sat Apr 05"]);
    let outside = Selector::from("text:London")
        .compile()
        .expect("compiles")
        .find_all_inside(daily);
    assert!(outside.is_empty(), "London is not in the daily list");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_matcher_on_the_simulators_sign_in_screen() {
    let config = uatu_sim::SimConfig {
        latency: Duration::ZERO,
        ..uatu_sim::SimConfig::default()
    };
    let sim = uatu_sim::Simulator::start(config, "127.0.0.1:0".parse().expect("address"), None)
        .await
        .expect("the simulator starts");
    let driver = GrpcDriver::connect(&sim.addr().to_string(), CallTimeouts::default())
        .await
        .expect("connects");
    driver.launch("app.folio", true, None).await.expect("launch");
    let hierarchy = driver.hierarchy().await.expect("hierarchy");
    check("sim", &hierarchy.root, &sim_cases());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_matcher_on_a_page_in_chromium() {
    let pages = repo_root().join("web/tests/pages");
    let addr = crate::support::http::serve(pages);
    let mut config = uatu_web::WebConfig::new(format!("http://{addr}/widgets.html").parse().expect("url"));
    config.viewport = (800, 600);
    let device = uatu_web::WebDevice::start(config, None)
        .await
        .expect("the web device starts");
    let hierarchy = async {
        device.launch("web", true, None).await?;
        device.wait_for_idle(Duration::from_secs(5)).await?;
        device.hierarchy().await
    }
    .await;
    // Dropping the device stops its browser.
    drop(device);
    let hierarchy = hierarchy.expect("the page's hierarchy");
    check("web", &hierarchy.root, &web_cases());
}
