//! An extractor that panics on its second call.
use uatu_plugin_sdk::extractor::*;

struct Panics(u32);

impl Extractor for Panics {
    fn init(_config: Config) -> Result<Self, String> {
        Ok(Panics(0))
    }
    fn extract(&mut self, _ctx: &StepContext, _screenshot: Option<&Screenshot>) -> Result<Vec<NamedValue>, String> {
        self.0 += 1;
        if self.0 >= 2 {
            panic!("boom at call {}", self.0);
        }
        Ok(vec![NamedValue::new("calls", self.0.into())])
    }
}

uatu_plugin_sdk::export_extractor!(Panics);
