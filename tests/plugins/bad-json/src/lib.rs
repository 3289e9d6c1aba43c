//! An extractor whose value is not JSON.
use uatu_plugin_sdk::extractor::*;

struct BadJson;

impl Extractor for BadJson {
    fn init(_config: Config) -> Result<Self, String> {
        Ok(BadJson)
    }
    fn extract(&mut self, _ctx: &StepContext, _screenshot: Option<&Screenshot>) -> Result<Vec<NamedValue>, String> {
        Ok(vec![NamedValue { name: "broken".into(), json: "{not json".into() }])
    }
}

uatu_plugin_sdk::export_extractor!(BadJson);
