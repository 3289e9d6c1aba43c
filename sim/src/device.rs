//! The simulated device: the Folio model behind one lock, the pause gate the SDK
//! closes while the host inspects a state, and the touch screen that turns points
//! into the model's inputs by hit-testing the screen built from the model.

use std::sync::{Mutex, MutexGuard};

use tokio::sync::watch;

use super::folio::{Activate, Folio, InputResult, SCREEN_HEIGHT, SCREEN_WIDTH, Scroll};
use super::screen::{self, Widget};
use uatu_device::model::{Bounds, Key, Point, ScrollDirection, Touch};

pub(crate) struct DeviceState {
    pub folio: Folio,
    /// The id of the PAUSE the SDK is holding the app at, if any. Input waits for RESUME.
    pub paused: Option<u64>,
}

pub(crate) struct Device {
    state: Mutex<DeviceState>,
    /// Bumped after every change, so waiters (input behind a pause, the SDK
    /// watching its process) wake up and look again.
    changes: watch::Sender<u64>,
}

impl Device {
    pub fn new(folio: Folio) -> Device {
        Device {
            state: Mutex::new(DeviceState { folio, paused: None }),
            changes: watch::Sender::new(0),
        }
    }

    pub fn lock(&self) -> MutexGuard<'_, DeviceState> {
        // The model never panics half-way through an update, so a poisoned lock holds a usable state.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }

    pub fn changed(&self) {
        self.changes
            .send_modify(|version| *version = version.wrapping_add(1));
    }

    /// Applies an input once the app is not paused; capture calls use [`Device::lock`] directly.
    pub async fn input<R>(&self, apply: impl FnOnce(&mut Folio) -> R) -> R {
        let mut changes = self.subscribe();
        let mut apply = Some(apply);
        loop {
            {
                let mut state = self.lock();
                if state.paused.is_none()
                    && let Some(apply) = apply.take()
                {
                    let result = apply(&mut state.folio);
                    drop(state);
                    self.changed();
                    return result;
                }
            }
            // The sender lives as long as `self`, so this cannot fail while we wait.
            let _ = changes.changed().await;
        }
    }

    pub fn set_paused(&self, paused: Option<u64>) {
        self.lock().paused = paused;
        self.changed();
    }
}

/// Taps the screen at `touch`: the model activates what the screen shows there.
pub fn tap(folio: &mut Folio, touch: Touch) -> InputResult {
    folio.tap(|folio| hit(folio, touch))
}

/// Two taps at one point; the second lands on whatever the first left there (the
/// element is checked once: a finger cannot stop half-way through a double tap).
pub fn double_tap(folio: &mut Folio, touch: Touch) -> InputResult {
    let first = tap(folio, touch);
    if !first.delivered {
        return first;
    }
    folio.probe("input.double_tap");
    let second = tap(folio, Touch::at(touch.point));
    InputResult {
        detail: [first.detail, second.detail]
            .into_iter()
            .filter(|detail| !detail.is_empty())
            .collect::<Vec<_>>()
            .join("; "),
        ..first
    }
}

/// A touch held for `hold_ms` at `touch`; on release it activates what it is on.
pub fn long_press(folio: &mut Folio, touch: Touch, hold_ms: u64) -> InputResult {
    folio.long_press(hold_ms, |folio| hit(folio, touch))
}

/// What a touch at `touch` activates on the screen as it is now, or why nothing does;
/// with an element, refused when no element with its bounds is at the point any more.
fn hit(folio: &Folio, touch: Touch) -> Result<Activate, InputResult> {
    let point = touch.point;
    if !(0..SCREEN_WIDTH).contains(&point.x) || !(0..SCREEN_HEIGHT).contains(&point.y) {
        return Err(InputResult::refused(format!(
            "({}, {}) is off the 1080x2400 screen",
            point.x, point.y
        )));
    }
    let screen = screen::build(folio);
    let on_element = match touch.element {
        Some(element) => {
            element_at(&screen, element, point)?;
            true
        }
        None => false,
    };
    resolve_tap(&screen, point).ok_or_else(|| {
        let missed = InputResult::noted(format!("nothing clickable at ({}, {})", point.x, point.y));
        if on_element { missed.on_target() } else { missed }
    })
}

/// Refuses a touch meant for `element` when no widget with those bounds holds `point` now.
fn element_at(screen: &Widget, element: Bounds, point: Point) -> Result<(), InputResult> {
    let mut stack = vec![screen];
    while let Some(widget) = stack.pop() {
        if widget.node.bounds == element && element.contains(point) {
            return Ok(());
        }
        stack.extend(widget.children.iter());
    }
    Err(InputResult::refused(format!(
        "the element at [{},{}][{},{}] is no longer on screen",
        element.left, element.top, element.right, element.bottom
    )))
}

/// Swipes from `from` to `to`: the scrollable list under `from`, if any, follows the finger.
pub fn swipe(folio: &mut Folio, from: Point, to: Point, duration_ms: u64) -> InputResult {
    folio.swipe(duration_ms, |folio| {
        let (list, content_height) = scrollable_at(&screen::build(folio), from)?;
        Some(Scroll {
            by: from.y - to.y,
            max: (content_height - (list.bottom - list.top)).max(0),
        })
    })
}

/// Scrolls the list at `touch` `distance` pixels `direction` (a wheel's worth of
/// scrolling; Folio's lists scroll vertically only).
pub fn scroll(folio: &mut Folio, touch: Touch, direction: ScrollDirection, distance: u32) -> InputResult {
    if let Some(element) = touch.element
        && let Err(gone) = element_at(&screen::build(folio), element, touch.point)
    {
        return gone;
    }
    let (_, by) = direction.delta(i32::try_from(distance).unwrap_or(i32::MAX));
    if by == 0 {
        folio.probe("list.scroll.sideways");
        return InputResult::noted("nothing here scrolls sideways");
    }
    let scrolled = folio.scroll(|folio| {
        let (list, content_height) = scrollable_at(&screen::build(folio), touch.point)?;
        Some(Scroll {
            by,
            max: (content_height - (list.bottom - list.top)).max(0),
        })
    });
    // The element meant was under the wheel, whether or not anything on it scrolls.
    if touch.element.is_some() {
        scrolled.on_target()
    } else {
        scrolled
    }
}

/// A key press; Page Up and Page Down scroll the screen's list by its height, the
/// other keys are the app's ([`Folio::press_key`]).
pub fn press_key(folio: &mut Folio, key: Key) -> InputResult {
    let page = match key {
        Key::PageUp => -1,
        Key::PageDown => 1,
        _ => return folio.press_key(key),
    };
    let list = first_scrollable(&screen::build(folio));
    match list {
        Some((bounds, content_height)) => folio.scroll(|_| {
            Some(Scroll {
                by: page * (bounds.bottom - bounds.top),
                max: (content_height - (bounds.bottom - bounds.top)).max(0),
            })
        }),
        None => folio.press_key(key),
    }
}

/// The deepest clickable, enabled widget containing `point`, and what tapping it does.
fn resolve_tap(root: &Widget, point: Point) -> Option<Activate> {
    fn deepest(widget: &Widget, point: Point) -> Option<&Widget> {
        if !widget.node.bounds.contains(point) {
            return None;
        }
        // Later siblings are drawn on top, so they receive the touch first.
        if let Some(hit) = widget
            .children
            .iter()
            .rev()
            .find_map(|child| deepest(child, point))
        {
            return Some(hit);
        }
        (widget.node.clickable && widget.node.enabled).then_some(widget)
    }
    deepest(root, point)?.action.clone()
}

/// The screen's first scrollable list (Folio shows one at most): its bounds and content height.
fn first_scrollable(root: &Widget) -> Option<(Bounds, i32)> {
    let mut stack = vec![root];
    while let Some(widget) = stack.pop() {
        if widget.node.scrollable {
            return Some((widget.node.bounds, widget.content_height));
        }
        stack.extend(widget.children.iter());
    }
    None
}

/// The scrollable list under `point`: its bounds and content height.
fn scrollable_at(root: &Widget, point: Point) -> Option<(Bounds, i32)> {
    let mut stack = vec![root];
    while let Some(widget) = stack.pop() {
        if widget.node.scrollable && widget.node.bounds.contains(point) {
            return Some((widget.node.bounds, widget.content_height));
        }
        stack.extend(widget.children.iter());
    }
    None
}
