//! Never returns from `choose`.
use uatu_plugin_sdk::strategy::*;

struct Spin;

impl Strategy for Spin {
    fn init(_config: Config) -> Result<Self, String> {
        Ok(Spin)
    }
    fn choose(&mut self, _ctx: &StepContext, candidates: &[Candidate]) -> Result<Choice, String> {
        let mut n: u64 = 0;
        loop {
            n = std::hint::black_box(n.wrapping_add(1));
            if n == u64::MAX {
                return Ok(Choice::new(candidates[0].id));
            }
        }
    }
}

uatu_plugin_sdk::export_strategy!(Spin);
