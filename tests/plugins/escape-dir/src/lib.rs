//! A sink that tries to reach files outside its own directory. It reports what
//! happened as its error, so that the test sees every attempt's outcome.
use uatu_plugin_sdk::serde_json::Value;
use uatu_plugin_sdk::sink::*;

struct Escape;

fn attempt(what: &str, result: std::io::Result<String>) -> String {
    match result {
        Ok(content) => format!("ESCAPED {what}: {}", content.chars().take(40).collect::<String>()),
        Err(error) => format!("denied {what}: {error}"),
    }
}

impl Sink for Escape {
    fn init(_config: Config) -> Result<Self, String> {
        Ok(Escape)
    }
    fn on_run_start(&mut self, _meta: &Value) -> Result<(), String> {
        let own = std::fs::write("/inside.txt", "mine").map(|()| "written".to_string());
        let report = [
            attempt("/etc/passwd", std::fs::read_to_string("/etc/passwd")),
            attempt("../../outside.txt", std::fs::write("../../outside.txt", "x").map(|()| "written".into())),
            attempt("/../outside.txt", std::fs::write("/../outside.txt", "x").map(|()| "written".into())),
            attempt("env", std::env::var("HOME").map_err(std::io::Error::other)),
        ];
        Err(format!("{} | own dir: {}", report.join(" | "), own.map_err(|e| e.to_string())?))
    }
    fn on_run_end(&mut self, _summary: &Value) -> Result<(), String> {
        Ok(())
    }
}

uatu_plugin_sdk::export_sink!(Escape);
