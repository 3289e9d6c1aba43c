//! What a person reads at the end of a run (or a check): one line per
//! property with its verdict, where it first failed and what led there.

use std::fmt::Write as _;

use uatu::action::ResolvedAction;
use uatu::trace::PropertySummary;

/// The verdict table, one row per property, violations first.
pub fn verdict_table(properties: &[PropertySummary]) -> String {
    let mut rows: Vec<[String; 4]> = properties
        .iter()
        .map(|p| {
            [
                p.name.clone(),
                p.verdict.clone(),
                p.first_violation_step
                    .map(|s| s.to_string())
                    .unwrap_or_else(|| "-".into()),
                p.led_by
                    .as_ref()
                    .map(ResolvedAction::describe)
                    .unwrap_or_else(|| "-".into()),
            ]
        })
        .collect();
    let rank = |verdict: &str| match verdict {
        "violated" => 0,
        "unmet" => 1,
        "inconclusive" => 2,
        _ => 3,
    };
    rows.sort_by_key(|row| rank(&row[1]));
    let header = ["property", "verdict", "first step", "led by"].map(String::from);
    let widths: Vec<usize> = (0..3)
        .map(|column| {
            rows.iter()
                .chain(std::iter::once(&header))
                .map(|row| row[column].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut table = String::new();
    for row in std::iter::once(&header).chain(&rows) {
        let _ = writeln!(
            table,
            "  {:<w0$}  {:<w1$}  {:>w2$}  {}",
            row[0],
            row[1],
            row[2],
            row[3],
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2]
        );
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;
    use uatu::action::{Action, Target};

    #[test]
    fn violations_come_first_with_the_action_that_led_there() {
        let led_by = ResolvedAction {
            action: Action::Tap {
                on: Target::Selector("desc:txn_submit".into()),
            },
            generator: "1:forms".into(),
            point: None,
            bounds: None,
            to_point: None,
            applied: uatu::action::Applied::Unknown,
            detail: String::new(),
        };
        let table = verdict_table(&[
            PropertySummary {
                name: "noCrash".into(),
                verdict: "passed".into(),
                first_violation_step: None,
                led_by: None,
                errors: vec![],
            },
            PropertySummary {
                name: "totalMatches".into(),
                verdict: "violated".into(),
                first_violation_step: Some(41),
                led_by: Some(led_by),
                errors: vec![],
            },
        ]);
        let lines: Vec<&str> = table.lines().collect();
        assert!(lines[0].contains("property") && lines[0].contains("led by"));
        assert!(lines[1].contains("totalMatches") && lines[1].contains("41"));
        assert!(lines[1].contains("tap desc:txn_submit (1:forms)"), "{table}");
        assert!(lines[2].contains("noCrash") && lines[2].contains("passed"));
    }
}
