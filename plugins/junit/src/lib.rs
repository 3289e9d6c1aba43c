//! `junit`: writes `junit.xml` into its directory (`runs/<id>/plugins/junit/`):
//! one test suite per run, one test case per property; a violated property is a
//! failure carrying its first violating step, the action that led there, its
//! predicate errors and the command that re-runs the run.
//!
//! It reads summary.json's own fields (`host/src/trace/record.rs`, `Summary`):
//! `properties` (each `name`, `verdict` — `passed`, `violated`, `inconclusive` or
//! `unmet` —, `first_violation_step`, `led_by`, `errors`), `steps`, `wall_ms` and
//! `rerun`; and meta.json's `spec.path` and `seed`. It needs nothing per step.
//!
//! Config (`[plugins.junit]`): `suite` (the suite's name, default: the spec's
//! file name, else "uatu"), `unmet-is-failure` (default false).

use std::fmt::Write as _;

use uatu_plugin_sdk::serde_json::Value;
use uatu_plugin_sdk::sink::*;

struct Junit {
    suite: Option<String>,
    unmet_is_failure: bool,
    meta: Value,
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

fn str_field<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

impl Junit {
    fn render(&self, summary: &Value) -> String {
        let suite = self.suite.clone().unwrap_or_else(|| {
            self.meta
                .get("spec")
                .and_then(|spec| str_field(spec, "path"))
                .map(|path| path.rsplit('/').next().unwrap_or(path).to_string())
                .unwrap_or_else(|| "uatu".to_string())
        });
        let rerun = str_field(summary, "rerun").unwrap_or("");
        let no_properties = Vec::new();
        let properties = summary
            .get("properties")
            .and_then(Value::as_array)
            .unwrap_or(&no_properties);
        let mut failures = 0;
        let mut skipped = 0;
        let mut cases = String::new();
        let seconds = summary.get("wall_ms").and_then(Value::as_f64).unwrap_or(0.0) / 1000.0;
        let steps = summary.get("steps").and_then(Value::as_u64).unwrap_or(0);
        for property in properties {
            let name = str_field(property, "name").unwrap_or("(unnamed)");
            let verdict = str_field(property, "verdict").unwrap_or("unknown");
            let _ = write!(
                cases,
                "    <testcase classname=\"{}\" name=\"{}\"",
                escape(&suite),
                escape(name)
            );
            let failed = verdict == "violated" || (verdict == "unmet" && self.unmet_is_failure);
            if failed {
                failures += 1;
                let step = property.get("first_violation_step").and_then(Value::as_u64);
                let mut message = format!("{name}: {verdict}");
                if let Some(step) = step {
                    let _ = write!(message, " at step {step}");
                }
                let mut body = String::new();
                for error in property
                    .get("errors")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if let Some(error) = error.as_str() {
                        let _ = writeln!(body, "{error}");
                    }
                }
                if let Some(step) = step {
                    let _ = writeln!(body, "first violating step: {step}");
                }
                if let Some(action) = property.get("led_by").filter(|action| !action.is_null()) {
                    let _ = writeln!(body, "led by: {action}");
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
                let _ = write!(
                    cases,
                    ">\n      <skipped message=\"unmet: never satisfied within the run\"/>\n    </testcase>\n"
                );
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
        let _ = writeln!(xml, "      <property name=\"steps\" value=\"{}\"/>", steps);
        if let Some(seed) = self.meta.get("seed") {
            let _ = writeln!(
                xml,
                "      <property name=\"seed\" value=\"{}\"/>",
                escape(&seed.to_string())
            );
        }
        if !rerun.is_empty() {
            let _ = writeln!(
                xml,
                "      <property name=\"rerun\" value=\"{}\"/>",
                escape(rerun)
            );
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
        })
    }

    fn on_run_start(&mut self, meta: &Value) -> Result<(), String> {
        self.meta = meta.clone();
        Ok(())
    }

    fn on_run_end(&mut self, summary: &Value) -> Result<(), String> {
        let xml = self.render(summary);
        std::fs::write("/junit.xml", xml).map_err(|error| format!("cannot write junit.xml: {error}"))
    }
}

uatu_plugin_sdk::export_sink!(Junit);
