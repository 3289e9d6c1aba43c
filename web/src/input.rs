//! Real input events for CDP's `Input` domain: what a mouse, a wheel and a
//! keyboard would send, so the app's handlers see what a person would cause.

use std::time::{Duration, Instant};

use chromiumoxide::cdp::browser_protocol::input::{
    DispatchKeyEventParams, DispatchKeyEventType, DispatchMouseEventParams, DispatchMouseEventType,
    MouseButton,
};
use chromiumoxide::keys::{KeyDefinition, USKEYBOARD_LAYOUT};
use uatu_device::model::{Key, Point};

/// Two presses this close in time and space make a double click, as in
/// desktop environments (GTK's defaults: 400 ms, a few pixels).
const DOUBLE_CLICK_TIME: Duration = Duration::from_millis(500);
const DOUBLE_CLICK_DISTANCE: i32 = 4;

/// Counts consecutive clicks the way the OS does: a press close enough in
/// time and space to the previous one continues its count, so two taps in a
/// row on one element are a double click (`dblclick`) to the page.
///
/// The time between two taps is the user's time, not uatu's: the step between
/// them waits for the page to settle and captures it (hierarchy, screenshot),
/// which a person double-clicking does not, and which takes seconds on a loaded
/// machine. So the window restarts whenever the device finishes observing the
/// page ([`ClickCounter::observed`]), and two taps in a row are a double click
/// however long the observation between them took.
#[derive(Default)]
pub(crate) struct ClickCounter {
    last: Option<(Point, Instant, i64)>,
}

impl ClickCounter {
    /// The click count of a press at `point` now.
    pub fn click_at(&mut self, point: Point) -> i64 {
        self.click_at_time(point, Instant::now())
    }

    fn click_at_time(&mut self, point: Point, now: Instant) -> i64 {
        let count = match self.last {
            Some((at, when, count))
                if now.duration_since(when) <= DOUBLE_CLICK_TIME
                    && (at.x - point.x).abs() <= DOUBLE_CLICK_DISTANCE
                    && (at.y - point.y).abs() <= DOUBLE_CLICK_DISTANCE =>
            {
                count + 1
            }
            _ => 1,
        };
        self.last = Some((point, now, count));
        count
    }

    /// Ends the click sequence: other input came between, so the next press is
    /// a first click (a double click is two presses with nothing in between).
    pub fn interrupt(&mut self) {
        self.last = None;
    }

    /// The device finished observing the page: the double-click window of the
    /// last press restarts now (the observation took none of the user's time).
    pub fn observed(&mut self) {
        self.observed_at(Instant::now());
    }

    fn observed_at(&mut self, now: Instant) {
        if let Some((_, when, _)) = &mut self.last {
            *when = now;
        }
    }
}

fn mouse(kind: DispatchMouseEventType, point: Point) -> DispatchMouseEventParams {
    DispatchMouseEventParams::new(kind, point.x as f64, point.y as f64)
}

/// Move, press and release the left button at `point`, as click number `clicks`.
pub(crate) fn mouse_click(point: Point, clicks: i64) -> Vec<DispatchMouseEventParams> {
    let mut moved = mouse(DispatchMouseEventType::MouseMoved, point);
    moved.buttons = Some(0);
    let mut pressed = mouse(DispatchMouseEventType::MousePressed, point);
    pressed.button = Some(MouseButton::Left);
    pressed.buttons = Some(1);
    pressed.click_count = Some(clicks);
    let mut released = mouse(DispatchMouseEventType::MouseReleased, point);
    released.button = Some(MouseButton::Left);
    released.buttons = Some(0);
    released.click_count = Some(clicks);
    vec![moved, pressed, released]
}

/// A wheel turn at `from` that moves the content the way a finger dragged
/// from `from` to `to` would: swiping up scrolls down.
pub(crate) fn wheel(from: Point, to: Point) -> DispatchMouseEventParams {
    let mut wheel = mouse(DispatchMouseEventType::MouseWheel, from);
    wheel.delta_x = Some((from.x - to.x) as f64);
    wheel.delta_y = Some((from.y - to.y) as f64);
    wheel
}

/// The DOM `key` value a device key presses on the web. `back` is Escape (what
/// dismisses an edit or a dialog, as back does first on a phone).
pub(crate) fn web_key(key: Key) -> &'static str {
    match key {
        Key::Back => "Escape",
        Key::Home => "Home",
        Key::Enter => "Enter",
        Key::Tab => "Tab",
        Key::Up => "ArrowUp",
        Key::Down => "ArrowDown",
        Key::Left => "ArrowLeft",
        Key::Right => "ArrowRight",
        Key::Escape => "Escape",
        Key::Backspace => "Backspace",
        Key::Delete => "Delete",
        Key::Space => " ",
        Key::PageUp => "PageUp",
        Key::PageDown => "PageDown",
    }
}

/// The key a control character in typed text stands for.
fn control_key(c: char) -> Option<&'static str> {
    Some(match c {
        '\n' | '\r' => "Enter",
        '\t' => "Tab",
        '\u{8}' => "Backspace",
        '\u{1b}' => "Escape",
        '\u{7f}' => "Delete",
        _ => return None,
    })
}

fn definition(key: &str) -> Option<&'static KeyDefinition> {
    USKEYBOARD_LAYOUT.iter().find(|def| def.key == key)
}

/// Key down and up for the DOM key `key` (a name such as `Enter`, or one character).
pub(crate) fn key_press(key: &str) -> Vec<DispatchKeyEventParams> {
    let def = definition(key);
    // What the key types: Enter types "\r"; a character key types itself; Escape nothing.
    let text = match def.and_then(|d| d.text) {
        Some(text) => Some(text.to_owned()),
        None if key.chars().count() == 1 => Some(key.to_owned()),
        None => None,
    };
    let event = |kind| {
        let mut event = DispatchKeyEventParams::new(kind);
        event.key = Some(key.to_owned());
        if let Some(def) = def {
            event.code = Some(def.code.to_owned());
            event.windows_virtual_key_code = Some(def.key_code);
            event.native_virtual_key_code = Some(def.key_code);
        }
        event
    };
    let mut down = event(if text.is_some() {
        DispatchKeyEventType::KeyDown
    } else {
        DispatchKeyEventType::RawKeyDown
    });
    down.unmodified_text = text.clone();
    down.text = text;
    vec![down, event(DispatchKeyEventType::KeyUp)]
}

/// The key events of typing `text`; control characters press their keys
/// (`\n` Enter, `\t` Tab, `\u{8}` Backspace, `\u{1b}` Escape, `\u{7f}` Delete).
pub(crate) fn typing(text: &str) -> Vec<DispatchKeyEventParams> {
    let mut events = Vec::new();
    let mut buffer = [0u8; 4];
    for c in text.chars() {
        let key = control_key(c).unwrap_or_else(|| c.encode_utf8(&mut buffer));
        events.extend(key_press(key));
    }
    events
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presses_close_in_time_and_space_count_up_and_a_far_one_restarts() {
        let mut counter = ClickCounter::default();
        let at = Point { x: 100, y: 100 };
        assert_eq!(counter.click_at(at), 1);
        assert_eq!(counter.click_at(Point { x: 102, y: 99 }), 2);
        assert_eq!(counter.click_at(Point { x: 300, y: 100 }), 1);
        counter.interrupt();
        assert_eq!(counter.click_at(Point { x: 300, y: 100 }), 1);
    }

    #[test]
    fn a_press_after_the_window_is_a_first_click_unless_the_device_was_observing() {
        let mut counter = ClickCounter::default();
        let at = Point { x: 100, y: 100 };
        let start = Instant::now();
        let later = |ms| start + Duration::from_millis(ms);
        assert_eq!(counter.click_at_time(at, start), 1);
        assert_eq!(
            counter.click_at_time(at, later(600)),
            1,
            "600 ms after: a new first click"
        );
        // Two seconds of settling and capturing after that tap, then 100 ms of the user's.
        counter.observed_at(later(2_600));
        assert_eq!(counter.click_at_time(at, later(2_700)), 2);
        // Observing with no press before it starts nothing.
        counter.interrupt();
        counter.observed_at(later(3_000));
        assert_eq!(counter.click_at_time(at, later(3_100)), 1);
    }

    #[test]
    fn typed_control_characters_press_their_keys() {
        let keys: Vec<String> = typing("a\n\u{1b}\u{8}")
            .into_iter()
            .filter(|e| e.r#type != DispatchKeyEventType::KeyUp)
            .filter_map(|e| e.key)
            .collect();
        assert_eq!(keys, ["a", "Enter", "Escape", "Backspace"]);
        let enter = &typing("\n")[0];
        assert_eq!(enter.windows_virtual_key_code, Some(13));
        assert_eq!(enter.text.as_deref(), Some("\r"));
        assert_eq!(typing("\u{1b}")[0].text, None);
    }
}
