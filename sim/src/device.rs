//! The simulated device: the Folio model behind one lock, the pause gate the SDK
//! closes while the host inspects a state, and the touch screen that turns points
//! into the model's inputs by hit-testing the screen built from the model.

use std::sync::{Mutex, MutexGuard};

use tokio::sync::watch;

use super::folio::{Activate, Folio, InputResult, SCREEN_HEIGHT, SCREEN_WIDTH, Scroll};
use super::screen::{self, Widget};
use uatu_device::model::{Bounds, Point};

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

/// Taps the screen at `point`: the model activates what the screen shows there.
pub fn tap(folio: &mut Folio, point: Point) -> InputResult {
    folio.tap(|folio| {
        if !(0..SCREEN_WIDTH).contains(&point.x) || !(0..SCREEN_HEIGHT).contains(&point.y) {
            return Err(InputResult::refused(format!(
                "({}, {}) is off the 1080x2400 screen",
                point.x, point.y
            )));
        }
        resolve_tap(&screen::build(folio), point)
            .ok_or_else(|| InputResult::noted(format!("nothing clickable at ({}, {})", point.x, point.y)))
    })
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
