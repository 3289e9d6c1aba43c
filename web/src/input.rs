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
    let mut events = vec![mouse_move(point)];
    events.extend(mouse_press(point, clicks));
    events.push(mouse_release(point, clicks));
    events
}

/// The pointer moved to `point` with no button held.
pub(crate) fn mouse_move(point: Point) -> DispatchMouseEventParams {
    let mut moved = mouse(DispatchMouseEventType::MouseMoved, point);
    moved.buttons = Some(0);
    moved
}

/// The left button pressed at `point`, as click number `clicks` (a long press holds it).
pub(crate) fn mouse_press(point: Point, clicks: i64) -> Vec<DispatchMouseEventParams> {
    let mut pressed = mouse(DispatchMouseEventType::MousePressed, point);
    pressed.button = Some(MouseButton::Left);
    pressed.buttons = Some(1);
    pressed.click_count = Some(clicks);
    vec![pressed]
}

/// The left button released at `point`, ending click number `clicks`.
pub(crate) fn mouse_release(point: Point, clicks: i64) -> DispatchMouseEventParams {
    let mut released = mouse(DispatchMouseEventType::MouseReleased, point);
    released.button = Some(MouseButton::Left);
    released.buttons = Some(0);
    released.click_count = Some(clicks);
    released
}

/// A double click at `point`: two presses counted 1 and 2, so the page sees
/// `click`, `click` and `dblclick`, as from a mouse.
pub(crate) fn double_click(point: Point) -> Vec<DispatchMouseEventParams> {
    let mut events = mouse_click(point, 1);
    events.extend(mouse_press(point, 2));
    events.push(mouse_release(point, 2));
    events
}

/// A wheel turn at `from` that moves the content the way a finger dragged
/// from `from` to `to` would: swiping up scrolls down.
pub(crate) fn wheel(from: Point, to: Point) -> DispatchMouseEventParams {
    wheel_by(from, from.x - to.x, from.y - to.y)
}

/// A wheel turn at `at` scrolling the content under it by `delta_x`, `delta_y`
/// pixels (positive: right and down).
pub(crate) fn wheel_by(at: Point, delta_x: i32, delta_y: i32) -> DispatchMouseEventParams {
    let mut wheel = mouse(DispatchMouseEventType::MouseWheel, at);
    wheel.delta_x = Some(delta_x as f64);
    wheel.delta_y = Some(delta_y as f64);
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

/// The layout's key for the DOM key `key`: the one whose code is its name when there
/// are several (`PageUp` is also the keypad's 9), else the first.
fn definition(key: &str) -> Option<&'static KeyDefinition> {
    let mut keys = USKEYBOARD_LAYOUT.iter().filter(|def| def.key == key);
    let first = keys.next()?;
    Some(
        std::iter::once(first)
            .chain(keys)
            .find(|def| def.code == key)
            .unwrap_or(first),
    )
}

/// Control held, as CDP's `modifiers` bit field says it.
const CONTROL: i64 = 2;

/// Selects all of the focused field's text and deletes it: Control+A then
/// Backspace, as a person clears a field with the keyboard (`selectAll` is also
/// named as the editing command, which Chromium needs on some platforms).
pub(crate) fn clear_field() -> Vec<DispatchKeyEventParams> {
    let mut select_all = key_press("a");
    for event in &mut select_all {
        event.modifiers = Some(CONTROL);
        // With Control held the key types nothing.
        event.text = None;
        event.unmodified_text = None;
        if event.r#type == DispatchKeyEventType::KeyDown {
            event.r#type = DispatchKeyEventType::RawKeyDown;
        }
    }
    select_all[0].commands = Some(vec!["selectAll".into()]);
    select_all.extend(key_press("Backspace"));
    select_all
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
    fn a_double_click_is_two_presses_counted_one_and_two() {
        let at = Point { x: 10, y: 20 };
        let events = double_click(at);
        let kinds: Vec<_> = events.iter().map(|e| (e.r#type.clone(), e.click_count)).collect();
        assert_eq!(
            kinds,
            [
                (DispatchMouseEventType::MouseMoved, None),
                (DispatchMouseEventType::MousePressed, Some(1)),
                (DispatchMouseEventType::MouseReleased, Some(1)),
                (DispatchMouseEventType::MousePressed, Some(2)),
                (DispatchMouseEventType::MouseReleased, Some(2)),
            ]
        );
        assert!(events.iter().all(|e| e.x == 10.0 && e.y == 20.0));
    }

    #[test]
    fn page_keys_have_their_own_codes_and_space_types_a_space() {
        let page_down = &key_press("PageDown")[0];
        assert_eq!(page_down.code.as_deref(), Some("PageDown"));
        assert_eq!(page_down.windows_virtual_key_code, Some(34));
        assert_eq!(page_down.text, None);
        let space = &key_press(web_key(Key::Space))[0];
        assert_eq!(space.code.as_deref(), Some("Space"));
        assert_eq!(space.text.as_deref(), Some(" "));
        for key in Key::ALL {
            assert!(definition(web_key(key)).is_some(), "{key:?} is on the layout");
        }
    }

    #[test]
    fn clearing_a_field_is_control_a_then_backspace() {
        let events = clear_field();
        let select = &events[0];
        assert_eq!(select.r#type, DispatchKeyEventType::RawKeyDown);
        assert_eq!(
            (select.key.as_deref(), select.modifiers),
            (Some("a"), Some(CONTROL))
        );
        assert_eq!(select.text, None);
        assert_eq!(select.commands.as_deref(), Some(&["selectAll".to_string()][..]));
        let keys: Vec<_> = events.iter().filter_map(|e| e.key.as_deref()).collect();
        assert_eq!(keys, ["a", "a", "Backspace", "Backspace"]);
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
