//! Chooses a candidate that does not exist.
use uatu_plugin_sdk::strategy::*;

struct OutOfRange;

impl Strategy for OutOfRange {
    fn init(_config: Config) -> Result<Self, String> {
        Ok(OutOfRange)
    }
    fn choose(&mut self, _ctx: &StepContext, candidates: &[Candidate]) -> Result<Choice, String> {
        Ok(Choice::new(candidates.len() as u32 + 5))
    }
}

uatu_plugin_sdk::export_strategy!(OutOfRange);
