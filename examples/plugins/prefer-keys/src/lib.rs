//! A minimal strategy: dispatch a `pressKey` action whenever the spec offers one,
//! otherwise the last candidate. Written only against `uatu-plugin-sdk`.

use uatu_plugin_sdk::strategy::*;

struct PreferKeys;

impl Strategy for PreferKeys {
    fn init(_config: Config) -> Result<Self, String> {
        Ok(PreferKeys)
    }

    fn choose(&mut self, _ctx: &StepContext, candidates: &[Candidate]) -> Result<Choice, String> {
        let key = candidates.iter().find(|candidate| candidate.action_type() == "pressKey");
        match key.or(candidates.last()) {
            Some(candidate) => Ok(Choice::new(candidate.id)),
            None => Err("no candidates".to_string()),
        }
    }
}

uatu_plugin_sdk::export_strategy!(PreferKeys);
