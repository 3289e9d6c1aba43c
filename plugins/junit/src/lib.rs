//! `junit`: writes `junit.xml` into its directory (`runs/<id>/plugins/junit/`):
//! one test suite per run, one test case per property; a violated property is a
//! failure carrying its first violating step and the command that re-runs it.
//!
//! It reads the run summary's `properties` (an array of objects, or an object
//! keyed by property name) with `name`, `verdict` (`holds`, `violated`, `unmet`,
//! ...), the first violating step (`first_violation_step` as in summary.json, `firstViolationStep`, `violationStep`,
//! `violation.step` or `step`) and an optional `message`; and the summary's
//! re-run command (`rerun`, `rerunCommand` or `reproduce`).
//!
//! Config (`[plugins.junit]`): `suite` (the suite's name, default: the spec's
//! file name from meta.json, else "uatu"), `unmet-is-failure` (default false).

use std::fmt::Write as _;

use uatu_plugin_sdk::serde_json::Value;
use uatu_plugin_sdk::sink::*;

struct Junit {
    suite: Option<String>,
    unmet_is_failure: bool,
    meta: Value,
    steps: u64,
    last_time_ms: u64,
}

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if (c as u32) < 0x20 && !matches!(c, '\n' | '\r' | '\t') => {}
            c => out.push(c),
        }
    }
    out
}

fn first_str<'a>(value: &'a Value, keys: &[&str]) -> Option<&'a str> {
    keys.iter().find_map(|key| value.get(*key).and_then(Value::as_str))
}

fn violation_step(property: &Value) -> Option<u64> {
    ["first_violation_step", "firstViolationStep", "violationStep", "step"]
        .iter()
        .find_map(|key| property.get(*key).and_then(Value::as_u64))
        .or_else(|| property.get("violation").and_then(|v| v.get("step")).and_then(Value::as_u64))
}

impl Junit {
    fn properties(summary: &Value) -> Vec<(String, Value)> {
        match summary.get("properties") {
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| (first_str(item, &["name", "property"]).unwrap_or("(unnamed)").to_string(), item.clone()))
                .collect(),
            Some(Value::Object(map)) => map
                .iter()
                .map(|(name, item)| {
                    let item = match item {
                        Value::String(verdict) => uatu_plugin_sdk::serde_json::json!({ "verdict": verdict }),
                        other => other.clone(),
                    };
                    (name.clone(), item)
                })
                .collect(),
            _ => Vec::new(),
        }
    }

    fn render(&self, summary: &Value) -> String {
        let suite = self.suite.clone().unwrap_or_else(|| {
            first_str(&self.meta, &["spec", "specPath"])
                .or_else(|| self.meta.get("spec").and_then(|s| first_str(s, &["path", "name"])))
                .map(|path| path.rsplit('/').next().unwrap_or(path).to_string())
                .unwrap_or_else(|| "uatu".to_string())
        });
        let rerun = first_str(summary, &["rerun", "rerunCommand", "reproduce"]).unwrap_or("");
        let properties = Self::properties(summary);
        let mut failures = 0;
        let mut skipped = 0;
        let mut cases = String::new();
        let seconds = summary
            .get("durationMs")
            .and_then(Value::as_f64)
            .unwrap_or(self.last_time_ms as f64)
            / 1000.0;
        for (name, property) in &properties {
            let verdict = first_str(property, &["verdict", "status"]).unwrap_or("unknown");
            let _ = write!(cases, "    <testcase classname=\"{}\" name=\"{}\"", escape(&suite), escape(name));
            let failed = verdict == "violated" || (verdict == "unmet" && self.unmet_is_failure);
            if failed {
                failures += 1;
                let step = violation_step(property);
                let mut message = format!("{name}: {verdict}");
                if let Some(step) = step {
                    let _ = write!(message, " at step {step}");
                }
                let mut body = String::new();
                if let Some(detail) = first_str(property, &["message", "detail"]) {
                    let _ = writeln!(body, "{detail}");
                }
                if let Some(step) = step {
                    let _ = writeln!(body, "first violating step: {step}");
                }
                if !rerun.is_empty() {
                    let _ = writeln!(body, "re-run: {rerun}");
                }
                let _ = write!(
                    cases,
                    ">\n      <failure message=\"{}\" type=\"{}\">{}</failure>\n    </testcase>\n",
                    escape(&message),
                    escape(verdict),
                    escape(&body)
                );
            } else if verdict == "unmet" {
                skipped += 1;
                let _ = write!(cases, ">\n      <skipped message=\"unmet: never satisfied within the run\"/>\n    </testcase>\n");
            } else {
                cases.push_str("/>\n");
            }
        }
        let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        let _ = writeln!(
            xml,
            "<testsuites name=\"uatu\" tests=\"{}\" failures=\"{failures}\" skipped=\"{skipped}\" time=\"{seconds:.3}\">",
            properties.len()
        );
        let _ = writeln!(
            xml,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\" time=\"{seconds:.3}\">",
            escape(&suite),
            properties.len()
        );
        let _ = writeln!(xml, "    <properties>");
        let _ = writeln!(xml, "      <property name=\"steps\" value=\"{}\"/>", self.steps);
        if let Some(seed) = self.meta.get("seed") {
            let _ = writeln!(xml, "      <property name=\"seed\" value=\"{}\"/>", escape(&seed.to_string()));
        }
        if !rerun.is_empty() {
            let _ = writeln!(xml, "      <property name=\"rerun\" value=\"{}\"/>", escape(rerun));
        }
        let _ = writeln!(xml, "    </properties>");
        xml.push_str(&cases);
        xml.push_str("  </testsuite>\n</testsuites>\n");
        xml
    }
}

impl Sink for Junit {
    fn init(config: Config) -> Result<Self, String> {
        Ok(Junit {
            suite: config.get("suite").and_then(Value::as_str).map(str::to_string),
            unmet_is_failure: config.bool_or("unmet-is-failure", false)?,
            meta: Value::Null,
            steps: 0,
            last_time_ms: 0,
        })
    }

    fn on_run_start(&mut self, meta: &Value) -> Result<(), String> {
        self.meta = meta.clone();
        Ok(())
    }

    fn on_step(&mut self, record: &Value) -> Result<(), String> {
        self.steps += 1;
        if let Some(time) = record.get("state").and_then(|s| s.get("time")).and_then(Value::as_u64) {
            self.last_time_ms = time;
        }
        Ok(())
    }

    fn on_run_end(&mut self, summary: &Value) -> Result<(), String> {
        let xml = self.render(summary);
        std::fs::write("/junit.xml", xml).map_err(|error| format!("cannot write junit.xml: {error}"))
    }
}

uatu_plugin_sdk::export_sink!(Junit);
