//! Resolving an action's targets against the captured hierarchy, as a real
//! device would see them: a selector becomes the centre of the first matching
//! element (parents before children), an element or point is used as given. A
//! scroll's distance is worked out here from its area, once for every device.

use crate::action::{Action, Applied, ResolvedAction, SCROLL_AMOUNT, ScrollDirection, Target};
use uatu_device::model::{Bounds, Node, Point};
use uatu_device::selector::SelectorError;

/// Why an action's target could not be turned into a point on screen.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    /// The spec wrote a target that is not a selector: the selector as written, and why.
    #[error("{0}")]
    BadSelector(#[from] SelectorError),
    /// No element of the step's hierarchy matches the selector; the selector.
    #[error("nothing on screen matches `{0}`")]
    NoMatch(String),
}

/// A point to act on, and the bounds it came from when it came from an element.
fn resolve(target: &Target, root: &Node) -> Result<(Point, Option<Bounds>), TargetError> {
    match target {
        Target::Selector(selector) => {
            let node = selector
                .compile()?
                .find(root)
                .ok_or_else(|| TargetError::NoMatch(selector.to_string()))?;
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
        applied: Applied::Unknown,
        detail: String::new(),
    };
    match action {
        Action::Tap { on } | Action::DoubleTap { on } | Action::LongPress { on, .. } => {
            (resolved.point, resolved.bounds) = at(resolve(on, root)?);
        }
        Action::InputText { into: Some(into), .. } | Action::ClearText { into: Some(into) } => {
            (resolved.point, resolved.bounds) = at(resolve(into, root)?);
        }
        Action::Swipe { from, to, .. } => {
            (resolved.point, resolved.bounds) = at(resolve(from, root)?);
            resolved.to_point = Some(resolve(to, root)?.0);
        }
        Action::Scroll {
            on,
            direction,
            amount,
        } => {
            // The area that scrolls: the element's; around a bare point, or without a
            // target, the screen's (the hierarchy's root).
            let (point, element) = match on {
                Some(on) => resolve(on, root)?,
                None => (root.bounds.centre(), None),
            };
            let area = element.unwrap_or(root.bounds);
            let distance = pixels_to_scroll(area, *direction, amount.unwrap_or(SCROLL_AMOUNT));
            let (dx, dy) = direction.delta(distance);
            resolved.point = Some(point);
            resolved.bounds = element;
            resolved.to_point = Some(Point {
                x: point.x + dx,
                y: point.y + dy,
            });
        }
        Action::InputText { into: None, .. }
        | Action::ClearText { into: None }
        | Action::PressKey { .. }
        | Action::Wait { .. }
        | Action::Navigate { .. }
        | Action::Reload
        | Action::Back
        | Action::Forward => {}
    }
    Ok(resolved)
}

fn at((point, bounds): (Point, Option<Bounds>)) -> (Option<Point>, Option<Bounds>) {
    (Some(point), bounds)
}

/// How far a scroll of `amount` (a fraction) of `area`'s height (up, down) or width
/// (left, right) moves the content, device pixels.
fn pixels_to_scroll(area: Bounds, direction: ScrollDirection, amount: f64) -> i32 {
    let extent = match direction {
        ScrollDirection::Up | ScrollDirection::Down => area.bottom - area.top,
        ScrollDirection::Left | ScrollDirection::Right => area.right - area.left,
    };
    (extent.max(0) as f64 * amount.clamp(0.0, 1.0)).round() as i32
}

#[cfg(test)]
mod tests {
    use super::*;
    use uatu_device::selector::Matcher;

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
            let found = Matcher::parse(selector)
                .expect("parses")
                .find(&root)
                .expect(selector);
            assert_eq!(found.desc, expected_desc, "{selector}");
        }
        assert_eq!(Matcher::parse("id:mail").expect("parses").find(&root), None);
    }

    #[test]
    fn a_tap_on_a_selector_records_the_element_bounds_and_centre() {
        let action = Action::Tap {
            on: Target::selector("desc:login_submit"),
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
            to: Target::selector("desc:login_email"),
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
                    on: Target::selector(s),
                },
                String::new(),
                &root,
            )
        };
        assert_eq!(
            tap("label:x"),
            Err(TargetError::BadSelector(SelectorError::NotASelector(
                "label:x".into()
            )))
        );
        assert_eq!(
            tap("desc:nothing"),
            Err(TargetError::NoMatch("desc:nothing".into()))
        );
    }

    #[test]
    fn a_scroll_acts_at_its_area_and_records_its_distance_as_the_gap_to_to_point() {
        let root = screen();
        let scroll = |on: Option<Target>, direction: ScrollDirection, amount: Option<f64>| {
            let action = Action::Scroll {
                on,
                direction,
                amount,
            };
            let resolved = resolve_action(&action, String::new(), &root).expect("resolves");
            (
                resolved.point.expect("point"),
                resolved.to_point.expect("to"),
                resolved.bounds,
                resolved.scroll_distance().expect("a distance"),
            )
        };
        let card = Some(Target::selector("desc:account_card:a1"));
        let card_bounds = Bounds {
            left: 40,
            top: 900,
            right: 1040,
            bottom: 1100,
        };
        let centre = Point { x: 540, y: 1000 };
        // Down by half the card's height (200 px): the view moves 100 px down.
        assert_eq!(
            scroll(card.clone(), ScrollDirection::Down, None),
            (centre, Point { x: 540, y: 1100 }, Some(card_bounds), 100)
        );
        assert_eq!(
            scroll(card.clone(), ScrollDirection::Up, Some(1.0)),
            (centre, Point { x: 540, y: 800 }, Some(card_bounds), 200)
        );
        // Sideways: a fraction of the width (1000 px).
        assert_eq!(
            scroll(card, ScrollDirection::Right, Some(0.2)),
            (centre, Point { x: 740, y: 1000 }, Some(card_bounds), 200)
        );
        // No target: the screen (the hierarchy's root, 1080 x 2400), no element.
        assert_eq!(
            scroll(None, ScrollDirection::Left, None),
            (Point { x: 540, y: 1200 }, Point { x: 0, y: 1200 }, None, 540)
        );
        // A bare point: there, by a fraction of the screen.
        let point = Some(Target::Element {
            x: 100,
            y: 300,
            bounds: None,
        });
        assert_eq!(
            scroll(point, ScrollDirection::Down, Some(0.1)),
            (Point { x: 100, y: 300 }, Point { x: 100, y: 540 }, None, 240)
        );
        let gone = Action::Scroll {
            on: Some(Target::selector("desc:gone")),
            direction: ScrollDirection::Up,
            amount: None,
        };
        assert_eq!(
            resolve_action(&gone, String::new(), &root),
            Err(TargetError::NoMatch("desc:gone".into()))
        );
    }
}
