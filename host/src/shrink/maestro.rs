//! A reproducer as a Maestro flow (`repro.yaml`), so a team can drop the bug into the
//! Maestro suite it already runs. Only commands Maestro documents are written:
//! `launchApp`, `tapOn`, `doubleTapOn`, `longPressOn`, `inputText`, `eraseText`,
//! `swipe`, `scroll`, `pressKey`, `back`, `openLink` and `stopApp`. What Maestro has
//! no command for (a wait, forward, a navigation to a path, a few keys) becomes a
//! comment. A long press holds for Maestro's own duration; `eraseText` erases
//! Maestro's default of 50 characters; a reload is the app stopped and launched
//! again with its data kept, as on Android.

use std::fmt::Write as _;

use uatu_device::model::Key;

use crate::action::{Action, SWIPE_MILLIS, ScrollDirection, Target};
use crate::run::replay::Script;
use uatu_device::selector::Selector;

/// The commands a written flow may use.
pub const COMMANDS: [&str; 12] = [
    "launchApp",
    "tapOn",
    "doubleTapOn",
    "longPressOn",
    "inputText",
    "eraseText",
    "swipe",
    "scroll",
    "pressKey",
    "back",
    "openLink",
    "stopApp",
];

/// The flow: the app launched with its state cleared, then each action of `script`.
pub fn flow(script: &Script) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# uatu reproducer: {} step(s)", script.action_count());
    if let Some(property) = &script.property {
        let _ = writeln!(out, "# violates `{property}`");
    }
    let _ = writeln!(out, "appId: {}", quoted(&script.origin.device.bundle_id));
    out.push_str("---\n");
    out.push_str("- launchApp:\n    clearState: true\n");
    for step in &script.steps {
        match &step.action {
            Some(action) => command(&mut out, action),
            None => out.push_str("# (a step that waited 250 ms)\n"),
        }
    }
    out
}

fn command(out: &mut String, action: &Action) {
    match action {
        Action::Tap { on } => {
            let _ = writeln!(out, "- tapOn:\n    {}", selector(on));
        }
        Action::InputText { into, text, submit } => {
            if let Some(into) = into {
                let _ = writeln!(out, "- tapOn:\n    {}", selector(into));
            }
            let _ = writeln!(out, "- inputText: {}", quoted(text));
            if *submit {
                out.push_str("- pressKey: Enter\n");
            }
        }
        Action::Swipe {
            from,
            to,
            duration_millis,
        } => {
            let _ = writeln!(
                out,
                "- swipe:\n    start: {}\n    end: {}\n    duration: {}",
                point(from),
                point(to),
                duration_millis.unwrap_or(SWIPE_MILLIS)
            );
        }
        Action::PressKey { key: Key::Back } => out.push_str("- back\n"),
        Action::PressKey { key } => match key_name(*key) {
            Some(name) => {
                let _ = writeln!(out, "- pressKey: {name}");
            }
            None => {
                let _ = writeln!(out, "# press {} (Maestro has no such key)", key.name());
            }
        },
        Action::Wait { duration_millis } => {
            let _ = writeln!(
                out,
                "# wait {duration_millis} ms (Maestro waits for the app to settle)"
            );
        }
        Action::DoubleTap { on } => {
            let _ = writeln!(out, "- doubleTapOn:\n    {}", selector(on));
        }
        Action::LongPress { on, .. } => {
            let _ = writeln!(out, "- longPressOn:\n    {}", selector(on));
        }
        // Maestro's `scroll` is the screen's, downwards; a swipe the other way scrolls.
        Action::Scroll {
            on: None,
            direction: ScrollDirection::Down,
            ..
        } => out.push_str("- scroll\n"),
        Action::Scroll { on, direction, .. } => {
            out.push_str("- swipe:\n");
            if let Some(on) = on {
                let _ = writeln!(out, "    from:\n      {}", selector(on));
            }
            let _ = writeln!(out, "    direction: {}", swipe_direction(*direction));
        }
        Action::ClearText { into } => {
            if let Some(into) = into {
                let _ = writeln!(out, "- tapOn:\n    {}", selector(into));
            }
            out.push_str("- eraseText\n");
        }
        Action::Navigate { to } if to.starts_with("http://") || to.starts_with("https://") => {
            let _ = writeln!(out, "- openLink: {}", quoted(to));
        }
        Action::Navigate { to } => {
            let _ = writeln!(out, "# navigate to {to} (Maestro opens only whole addresses)");
        }
        Action::Reload => out.push_str("- stopApp\n- launchApp\n"),
        Action::Back => out.push_str("- back\n"),
        Action::Forward => out.push_str("# forward (Maestro has no forward navigation)\n"),
    }
}

/// The way a finger swipes to scroll `direction`: against it (to see what is
/// below, the finger moves up).
fn swipe_direction(direction: ScrollDirection) -> &'static str {
    match direction {
        ScrollDirection::Down => "UP",
        ScrollDirection::Up => "DOWN",
        ScrollDirection::Right => "LEFT",
        ScrollDirection::Left => "RIGHT",
    }
}

/// A `tapOn` target: Maestro's `id` for an id, its `text` (which also matches the
/// accessibility description) for a description or a text, `point` otherwise.
fn selector(target: &Target) -> String {
    match target {
        Target::Selector(Selector::Text(text)) => match text.split_once(':') {
            Some(("id", value)) => format!("id: {}", quoted(value)),
            Some(("desc" | "text", value)) => format!("text: {}", quoted(value)),
            Some(("descPrefix", value)) => format!("text: {}", quoted(&format!("{}.*", regex_escape(value)))),
            _ => format!("text: {}", quoted(text)),
        },
        Target::Selector(other) => format!("text: {}", quoted(&other.to_string())),
        Target::Element { x, y, .. } => format!("point: {}", quoted(&format!("{x},{y}"))),
    }
}

fn point(target: &Target) -> String {
    match target {
        Target::Element { x, y, .. } => quoted(&format!("{x}, {y}")),
        // A selector swipe has no Maestro equivalent; the centre is not known here.
        Target::Selector(_) => quoted("50%, 50%"),
    }
}

/// Maestro's name of a key, if it has the key.
fn key_name(key: Key) -> Option<&'static str> {
    Some(match key {
        Key::Back => "Back",
        Key::Home => "Home",
        Key::Enter => "Enter",
        Key::Tab => "Tab",
        Key::Backspace => "Backspace",
        Key::Up => "Remote Dpad Up",
        Key::Down => "Remote Dpad Down",
        Key::Left => "Remote Dpad Left",
        Key::Right => "Remote Dpad Right",
        Key::Escape | Key::Delete | Key::Space | Key::PageUp | Key::PageDown => return None,
    })
}

/// A YAML double-quoted scalar (JSON's string syntax is valid YAML).
fn quoted(text: &str) -> String {
    serde_json::Value::String(text.to_owned()).to_string()
}

fn regex_escape(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            let escape = "\\.+*?()|[]{}^$".contains(c);
            escape.then_some('\\').into_iter().chain(std::iter::once(c))
        })
        .collect()
}
