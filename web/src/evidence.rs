//! Whether an input arrived where it was aimed, seen from inside the page: the
//! evidence behind `lastAction.applied`.
//!
//! Before an input, one evaluation installs a listener on the page's window (in
//! the capture phase, so it sees events before the app's own handlers can stop
//! them), checks that the element the host means is still at the point, and
//! marks it. After the input, a second evaluation reads how many of the expected
//! events arrived inside the marked element. An element that is gone or covered
//! refuses the input before it is sent ([`Check::Gone`]); events that all went
//! elsewhere (the element vanished under the pointer as it moved) say it missed;
//! events that never came (the app navigated away, a handler of the app's ran
//! before ours and stopped it) leave the input without evidence.

use serde::Deserialize;
use uatu_device::model::{Bounds, Touch};

/// The DOM events that show an input arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Expect {
    /// A press of the pointer (taps, double taps, long presses).
    PointerDown,
    /// A wheel turn.
    Wheel,
    /// A key going down.
    KeyDown,
    /// An editable element's content changing (typing, clearing).
    Input,
}

impl Expect {
    fn event(self) -> &'static str {
        match self {
            Expect::PointerDown => "pointerdown",
            Expect::Wheel => "wheel",
            Expect::KeyDown => "keydown",
            Expect::Input => "input",
        }
    }
}

/// What the page said before the input.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(tag = "check", rename_all = "camelCase")]
pub(crate) enum Check {
    /// The listener is ready, and the element meant (if any) is under the point.
    Ready,
    /// The element meant is not at the point any more: what is there instead.
    Gone {
        /// The element at the point (`tag#id.class`), or `nothing`.
        found: String,
    },
    /// Clearing text needs a focused editable element; what has the focus instead.
    NotEditable {
        /// The focused element (`tag#id.class`), or `nothing`.
        focused: String,
    },
}

/// What the page saw of the input.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub(crate) struct Seen {
    /// Expected events that arrived inside the element meant (anywhere, without one).
    pub landed: u32,
    /// Expected events that arrived outside the element meant: it moved or vanished
    /// under the pointer.
    #[serde(default)]
    pub missed: u32,
    /// Where the first missed event arrived (`tag#id.class`).
    #[serde(default)]
    pub missed_on: String,
}

/// Installs the listener once per document and prepares it for one input.
const PREPARE: &str = r#"((x, y, bounds, expect, editable) => {
  let state = window.__uatuInput;
  if (!state) {
    state = window.__uatuInput = { expect: '', target: null, landed: 0, missed: 0, missedOn: '' };
    const seen = (event) => {
      if (event.type !== state.expect) return;
      const target = event.composedPath()[0];
      if (!state.target || (target instanceof Node && state.target.contains(target))) {
        state.landed++;
      } else if (state.missed++ === 0) {
        state.missedOn = state.name(target instanceof Element ? target : null);
      }
    };
    for (const type of ['pointerdown', 'wheel', 'keydown', 'input']) {
      window.addEventListener(type, seen, { capture: true, passive: true });
    }
  }
  const name = state.name = (el) => !el ? 'nothing' : el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
    (typeof el.className === 'string' && el.className.trim() ? '.' + el.className.trim().split(/\s+/).join('.') : '');
  state.expect = ''; state.target = null; state.landed = 0; state.missed = 0; state.missedOn = '';
  if (editable) {
    let active = document.activeElement;
    while (active && active.shadowRoot && active.shadowRoot.activeElement) active = active.shadowRoot.activeElement;
    const canEdit = active && (active.isContentEditable ||
      (active.tagName === 'TEXTAREA' && !active.readOnly && !active.disabled) ||
      (active.tagName === 'INPUT' && !active.readOnly && !active.disabled &&
        !['button', 'checkbox', 'color', 'file', 'hidden', 'image', 'radio', 'range', 'reset', 'submit'].includes(active.type)));
    if (!canEdit) return { check: 'notEditable', focused: name(active === document.body ? null : active) };
  }
  if (bounds) {
    let hit = document.elementFromPoint(x, y);
    while (hit && hit.shadowRoot) {
      const inner = hit.shadowRoot.elementFromPoint(x, y);
      if (!inner || inner === hit) break;
      hit = inner;
    }
    const screen = bounds.left <= 0 && bounds.top <= 0 &&
      bounds.right >= window.innerWidth && bounds.bottom >= window.innerHeight;
    const near = (a, b) => Math.abs(a - b) <= 1;
    let target = null;
    for (let el = hit; el && !target; el = el.parentElement || (el.getRootNode().host || null)) {
      const r = el.getBoundingClientRect();
      if (near(Math.floor(r.left), bounds.left) && near(Math.floor(r.top), bounds.top) &&
          near(Math.ceil(r.right), bounds.right) && near(Math.ceil(r.bottom), bounds.bottom)) target = el;
    }
    if (!target && !screen) return { check: 'gone', found: name(hit) };
    state.target = target;
  }
  state.expect = expect;
  return { check: 'ready' };
})"#;

/// Reads what arrived, waiting two frames for events the browser delivers
/// after the input's acknowledgement (wheels) when none has arrived yet.
pub(crate) const READ: &str = r#"(() => {
  const state = window.__uatuInput;
  const read = () => {
    const seen = state ? { landed: state.landed, missed: state.missed, missed_on: state.missedOn } : { landed: 0 };
    if (state) { state.expect = ''; state.target = null; }
    return seen;
  };
  if (!state || state.landed > 0 || state.missed > 0) return read();
  return new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve(read()))));
})()"#;

/// The expression that prepares the page for an input of `expect` at `touch`
/// (no touch: keys and text); `editable` also checks that the focused element takes text.
pub(crate) fn prepare(expect: Expect, touch: Option<&Touch>, editable: bool) -> String {
    let (x, y) = touch.map_or((0, 0), |touch| (touch.point.x, touch.point.y));
    let bounds = touch.and_then(|touch| touch.element).map_or_else(
        || "null".to_owned(),
        |bounds: Bounds| {
            format!(
                "{{left:{},top:{},right:{},bottom:{}}}",
                bounds.left, bounds.top, bounds.right, bounds.bottom
            )
        },
    );
    format!("{PREPARE}({x}, {y}, {bounds}, '{}', {editable})", expect.event())
}

#[cfg(test)]
mod tests {
    use super::*;
    use uatu_device::model::Point;

    #[test]
    fn the_prepared_expression_carries_the_point_the_bounds_and_the_event() {
        let touch = Touch::on(Bounds {
            left: 10,
            top: 20,
            right: 30,
            bottom: 40,
        });
        let expression = prepare(Expect::PointerDown, Some(&touch), false);
        assert!(
            expression.ends_with("(20, 30, {left:10,top:20,right:30,bottom:40}, 'pointerdown', false)"),
            "{expression}"
        );
        let bare = prepare(Expect::Wheel, Some(&Touch::at(Point { x: 5, y: 6 })), false);
        assert!(bare.ends_with("(5, 6, null, 'wheel', false)"), "{bare}");
        assert!(prepare(Expect::Input, None, true).ends_with("(0, 0, null, 'input', true)"));
    }

    #[test]
    fn the_page_answers_are_read() {
        let gone: Check = serde_json::from_str(r#"{"check":"gone","found":"body"}"#).expect("reads");
        assert_eq!(gone, Check::Gone { found: "body".into() });
        let ready: Check = serde_json::from_str(r#"{"check":"ready"}"#).expect("reads");
        assert_eq!(ready, Check::Ready);
        let seen: Seen = serde_json::from_str(r#"{"landed":2}"#).expect("reads");
        assert_eq!((seen.landed, seen.missed), (2, 0));
        let missed: Seen =
            serde_json::from_str(r#"{"landed":0,"missed":1,"missed_on":"div#under"}"#).expect("reads");
        assert_eq!((missed.missed, missed.missed_on.as_str()), (1, "div#under"));
    }
}
