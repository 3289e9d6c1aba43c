//! Resolving an action's targets against the captured hierarchy, as a real
//! device would see them: a selector becomes the centre of the first matching
//! element (parents before children), an element or point is used as given.

use crate::action::{Action, ResolvedAction, Target};
use uatu_device::model::{Bounds, Node, Point};
use uatu_device::selector::Selector;

/// Why an action's target could not be turned into a point on screen.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    /// The spec wrote a target string that is not a selector; the string.
    #[error("`{0}` is not a selector: use id:, text:, desc:, descPrefix:, testid: or css:")]
    BadSelector(String),
    /// No element of the step's hierarchy matches the selector; the selector.
    #[error("nothing on screen matches `{0}`")]
    NoMatch(String),
}

/// A point to act on, and the bounds it came from when it came from an element.
fn resolve(target: &Target, root: &Node) -> Result<(Point, Option<Bounds>), TargetError> {
    match target {
        Target::Selector(text) => {
            let node = Selector::parse(text)
                .ok_or_else(|| TargetError::BadSelector(text.clone()))?
                .find(root)
                .ok_or_else(|| TargetError::NoMatch(text.clone()))?;
            Ok((node.bounds.centre(), Some(node.bounds)))
        }
        Target::Element { x, y, bounds } => Ok((Point { x: *x, y: *y }, *bounds)),
    }
}

/// Resolves every target of `action` against `root`.
pub fn resolve_action(
    action: &Action,
    generator: String,
    root: &Node,
) -> Result<ResolvedAction, TargetError> {
    let mut resolved = ResolvedAction {
        action: action.clone(),
        generator,
        point: None,
        bounds: None,
        to_point: None,
    };
    match action {
        Action::Tap { on } => {
            let (point, bounds) = resolve(on, root)?;
            resolved.point = Some(point);
            resolved.bounds = bounds;
        }
        Action::InputText { into: Some(into), .. } => {
            let (point, bounds) = resolve(into, root)?;
            resolved.point = Some(point);
            resolved.bounds = bounds;
        }
        Action::Swipe { from, to, .. } => {
            let (point, bounds) = resolve(from, root)?;
            resolved.point = Some(point);
            resolved.bounds = bounds;
            resolved.to_point = Some(resolve(to, root)?.0);
        }
        Action::InputText { into: None, .. } | Action::PressKey { .. } | Action::Wait { .. } => {}
    }
    Ok(resolved)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(id: &str, desc: &str, text: &str, bounds: (i32, i32, i32, i32), children: Vec<Node>) -> Node {
        Node {
            id: id.into(),
            desc: desc.into(),
            text: text.into(),
            bounds: Bounds {
                left: bounds.0,
                top: bounds.1,
                right: bounds.2,
                bottom: bounds.3,
            },
            children,
            ..Node::default()
        }
    }

    fn screen() -> Node {
        node(
            "",
            "",
            "",
            (0, 0, 1080, 2400),
            vec![
                node(
                    "app.folio:id/email",
                    "login_email",
                    "",
                    (40, 400, 1040, 520),
                    vec![],
                ),
                node("submit", "login_submit", "Sign in", (40, 700, 1040, 820), vec![]),
                node("", "account_card:a1", "Cash", (40, 900, 1040, 1100), vec![]),
                node("", "account_card:a2", "Bank", (40, 1100, 1040, 1300), vec![]),
            ],
        )
    }

    #[test]
    fn every_selector_form_finds_its_element() {
        let root = screen();
        for (selector, expected_desc) in [
            ("id:submit", "login_submit"),
            ("id:email", "login_email"),
            ("id:app.folio:id/email", "login_email"),
            ("text:Sign in", "login_submit"),
            ("desc:login_email", "login_email"),
            ("descPrefix:account_card:", "account_card:a1"),
        ] {
            let found = Selector::parse(selector)
                .expect("parses")
                .find(&root)
                .expect(selector);
            assert_eq!(found.desc, expected_desc, "{selector}");
        }
        assert_eq!(Selector::parse("id:mail").expect("parses").find(&root), None);
    }

    #[test]
    fn a_tap_on_a_selector_records_the_element_bounds_and_centre() {
        let action = Action::Tap {
            on: Target::Selector("desc:login_submit".into()),
        };
        let resolved = resolve_action(&action, "0:login".into(), &screen()).expect("resolves");
        assert_eq!(resolved.point, Some(Point { x: 540, y: 760 }));
        assert_eq!(
            resolved.bounds,
            Some(Bounds {
                left: 40,
                top: 700,
                right: 1040,
                bottom: 820
            })
        );
    }

    #[test]
    fn an_element_target_uses_its_centre() {
        let action = Action::Swipe {
            from: Target::Element {
                x: 500,
                y: 2000,
                bounds: None,
            },
            to: Target::Selector("desc:login_email".into()),
            duration_millis: Some(300),
        };
        let resolved = resolve_action(&action, String::new(), &screen()).expect("resolves");
        assert_eq!(resolved.point, Some(Point { x: 500, y: 2000 }));
        assert_eq!(resolved.to_point, Some(Point { x: 540, y: 460 }));
    }

    #[test]
    fn unknown_and_unmatched_selectors_are_errors() {
        let root = screen();
        let tap = |s: &str| {
            resolve_action(
                &Action::Tap {
                    on: Target::Selector(s.into()),
                },
                String::new(),
                &root,
            )
        };
        assert_eq!(tap("label:x"), Err(TargetError::BadSelector("label:x".into())));
        assert_eq!(
            tap("desc:nothing"),
            Err(TargetError::NoMatch("desc:nothing".into()))
        );
    }
}
