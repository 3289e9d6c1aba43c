//! The actions beyond a tap, through Debian's Chromium as real input events: a
//! double click, a held button, a wheel over a list, typing left pending and a
//! field cleared, the page's history, a reload and addresses, and the evidence
//! each input leaves (`lastAction.applied`): refused when the element meant is
//! gone or covered, or when the touch landed elsewhere.

mod common;

use std::time::Duration;

use uatu_device::Driver;
use uatu_device::model::{Applied, Hierarchy, InputOutcome, Navigation, Node, ScrollDirection, Touch};
use uatu_device::selector::Matcher;

use common::*;

fn find<'h>(hierarchy: &'h Hierarchy, selector: &str) -> &'h Node {
    Matcher::parse(selector)
        .expect(selector)
        .find(&hierarchy.root)
        .unwrap_or_else(|| panic!("{selector} is on the page"))
}

/// The page once it has settled.
async fn settled(device: &uatu_web::WebDevice) -> Hierarchy {
    device.wait_for_idle(Duration::from_secs(5)).await.expect("idle");
    device.hierarchy().await.expect("hierarchy")
}

async fn page_log(device: &uatu_web::WebDevice) -> String {
    find(&settled(device).await, "id:log").text.clone()
}

async fn route(device: &uatu_web::WebDevice) -> String {
    find(&settled(device).await, "id:route").text.clone()
}

fn applied(outcome: &InputOutcome) -> Applied {
    outcome.applied()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_double_tap_is_a_dblclick_and_a_long_press_holds_the_button() {
    let device = launched("actions.html", None).await;
    let page = settled(&device).await;

    let twice = device
        .double_tap(Touch::on(find(&page, "id:twice").bounds))
        .await
        .expect("double tap");
    assert_eq!(applied(&twice), Applied::Yes, "{twice:?}");
    assert_eq!(page_log(&device).await, "click twice click twice dblclick twice");

    let hold = find(&page, "id:hold").bounds;
    let held = device
        .long_press(Touch::on(hold), Duration::from_millis(700))
        .await
        .expect("long press");
    assert_eq!(applied(&held), Applied::Yes, "{held:?}");
    let log = page_log(&device).await;
    let millis: u64 = log
        .rsplit("held ")
        .next()
        .and_then(|ms| ms.trim().parse().ok())
        .unwrap_or_else(|| panic!("no hold in {log:?}"));
    assert!(millis >= 690, "the button was held {millis} ms");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scroll_turns_the_wheel_over_a_list_and_moves_it() {
    let device = launched("actions.html", None).await;
    let page = settled(&device).await;
    let list = find(&page, "id:list").bounds;
    let first_top = find(&page, "text:item 0").bounds.top;

    let down = device
        .scroll(Touch::on(list), ScrollDirection::Down, 200)
        .await
        .expect("scroll");
    assert_eq!(applied(&down), Applied::Yes, "{down:?}");
    let scrolled = settled(&device).await;
    assert_eq!(find(&scrolled, "text:item 0").bounds.top, first_top - 200);

    device
        .scroll(Touch::on(list), ScrollDirection::Up, 120)
        .await
        .expect("scroll back");
    let back = settled(&device).await;
    assert_eq!(find(&back, "text:item 0").bounds.top, first_top - 80);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typing_without_enter_leaves_the_text_pending_and_clear_text_empties_the_field() {
    let device = launched("actions.html", None).await;
    let page = settled(&device).await;
    device
        .tap(Touch::on(find(&page, "id:field").bounds))
        .await
        .expect("tap the field");
    let typed = device.input_text("pending").await.expect("type");
    assert_eq!(applied(&typed), Applied::Yes, "{typed:?}");
    let pending = settled(&device).await;
    assert_eq!(find(&pending, "id:field").text, "pending");
    assert!(
        find(&pending, "id:field").focused,
        "the text stays in the focused field"
    );

    let cleared = device.clear_text().await.expect("clear");
    assert_eq!(applied(&cleared), Applied::Yes, "{cleared:?}");
    let empty = settled(&device).await;
    assert_eq!(find(&empty, "id:field").text, "");
    assert_eq!(
        find(&empty, "id:other").text,
        "keep",
        "only the focused field is cleared"
    );
    assert!(
        page_log(&device).await.ends_with("value"),
        "the page saw its value go"
    );

    device
        .tap(Touch::on(find(&empty, "id:twice").bounds))
        .await
        .expect("tap a button");
    let refused = device.clear_text().await.expect("clear");
    assert_eq!(applied(&refused), Applied::No, "{refused:?}");
    assert!(
        refused.detail.contains("no focused text field"),
        "{}",
        refused.detail
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_touch_meant_for_an_element_that_is_gone_covered_or_vanishing_is_not_applied() {
    let device = launched("actions.html", None).await;
    let page = settled(&device).await;
    let doomed = find(&page, "id:doomed").bounds;

    // The app removes it before the tap is dispatched (the test's key hook).
    device.input_text("d").await.expect("d removes the button");
    let gone = device.tap(Touch::on(doomed)).await.expect("tap");
    assert_eq!(applied(&gone), Applied::No, "{gone:?}");
    assert!(gone.detail.contains("no longer there"), "{}", gone.detail);
    // A bare point there is still a tap, with evidence that the page got it.
    let bare = device.tap(Touch::at(doomed.centre())).await.expect("tap");
    assert_eq!(applied(&bare), Applied::Yes, "{bare:?}");

    // Covered by another element: what a tap there would hit is not the element meant.
    device.navigate(&Navigation::Reload).await.expect("reload");
    let reloaded = settled(&device).await;
    let doomed = find(&reloaded, "id:doomed").bounds;
    device.input_text("c").await.expect("c covers it");
    let covered = device.tap(Touch::on(doomed)).await.expect("tap");
    assert_eq!(applied(&covered), Applied::No, "{covered:?}");
    assert!(covered.detail.contains("div#cover"), "{}", covered.detail);

    // It vanishes as the pointer comes over it: the press lands on what was under it.
    let vanish = find(&reloaded, "id:vanish").bounds;
    let missed = device.tap(Touch::on(vanish)).await.expect("tap");
    assert_eq!(applied(&missed), Applied::No, "{missed:?}");
    assert!(missed.detail.contains("div#under"), "{}", missed.detail);
    assert!(page_log(&device).await.contains("pressed under"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn navigation_goes_through_the_page_history_reloads_and_stays_on_the_app() {
    let device = launched("actions.html", None).await;
    assert_eq!(route(&device).await, "route #/ loads 1");

    for (to, shown) in [("#/a", "route #/a loads 1"), ("#/b", "route #/b loads 1")] {
        let went = device
            .navigate(&Navigation::To(to.into()))
            .await
            .expect("navigate");
        assert_eq!(applied(&went), Applied::Yes, "{went:?}");
        assert_eq!(route(&device).await, shown);
    }
    device.navigate(&Navigation::Back).await.expect("back");
    assert_eq!(route(&device).await, "route #/a loads 1");
    device.navigate(&Navigation::Forward).await.expect("forward");
    assert_eq!(route(&device).await, "route #/b loads 1");
    let reloaded = device.navigate(&Navigation::Reload).await.expect("reload");
    assert_eq!(applied(&reloaded), Applied::Yes);
    assert!(!reloaded.app_restarted, "a page reload keeps the tab and its SDK");
    assert_eq!(route(&device).await, "route #/b loads 2");

    let nothing_later = device.navigate(&Navigation::Forward).await.expect("forward");
    assert_eq!(applied(&nothing_later), Applied::No, "{nothing_later:?}");
    // Back to the app's first page, and no further: before it is the blank tab.
    device.navigate(&Navigation::Back).await.expect("back");
    device.navigate(&Navigation::Back).await.expect("back");
    assert_eq!(route(&device).await, "route #/ loads 2");
    let off_app = device.navigate(&Navigation::Back).await.expect("back");
    assert_eq!(applied(&off_app), Applied::No, "{off_app:?}");
    assert!(off_app.detail.contains("not the app's"), "{}", off_app.detail);

    // A path loads another document of the app's origin.
    let other_page = device
        .navigate(&Navigation::To("/actions.html?again#/c".into()))
        .await
        .expect("navigate to a path");
    assert_eq!(applied(&other_page), Applied::Yes, "{other_page:?}");
    assert_eq!(route(&device).await, "route #/c loads 3");

    let elsewhere = device
        .navigate(&Navigation::To("http://example.invalid/".into()))
        .await
        .expect("navigate");
    assert_eq!(applied(&elsewhere), Applied::No);
    assert!(
        elsewhere.detail.contains("not on the app's origin"),
        "{}",
        elsewhere.detail
    );
    assert_eq!(route(&device).await, "route #/c loads 3", "the page stayed");
}
