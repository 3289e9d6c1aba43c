//! A sink that writes what it receives of each step to `steps.jsonl`: the typed
//! fields, and the step index read from the parsed trace line.
use std::io::Write;

use uatu_plugin_sdk::serde_json::{Value, json};
use uatu_plugin_sdk::sink::*;

struct EchoSteps(std::fs::File);

impl Sink for EchoSteps {
    fn init(_config: Config) -> Result<Self, String> {
        std::fs::File::create("/steps.jsonl")
            .map(EchoSteps)
            .map_err(|e| e.to_string())
    }
    fn on_run_start(&mut self, _meta: &Value) -> Result<(), String> {
        Ok(())
    }
    fn on_step(&mut self, record: &StepRecord) -> Result<(), String> {
        let parsed = record.parse()?;
        let line = json!({
            "step": record.step,
            "time_ms": record.time_ms,
            "evaluated": record.evaluated,
            "action": record.action_json(),
            "violations": record.violations,
            "json_step": parsed.get("step"),
            "json_bytes": record.json.len(),
        });
        writeln!(self.0, "{line}").map_err(|e| e.to_string())
    }
    fn on_run_end(&mut self, _summary: &Value) -> Result<(), String> {
        Ok(())
    }
}

uatu_plugin_sdk::export_sink!(EchoSteps);
