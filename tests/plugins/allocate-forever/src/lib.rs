//! Allocates without bound in `choose`.
use uatu_plugin_sdk::strategy::*;

struct Hog(Vec<Vec<u8>>);

impl Strategy for Hog {
    fn init(_config: Config) -> Result<Self, String> {
        Ok(Hog(Vec::new()))
    }
    fn choose(&mut self, _ctx: &StepContext, candidates: &[Candidate]) -> Result<Choice, String> {
        loop {
            let mut block = vec![0u8; 1 << 20];
            block[0] = 1;
            self.0.push(std::hint::black_box(block));
            if self.0.len() == usize::MAX {
                return Ok(Choice::new(candidates[0].id));
            }
        }
    }
}

uatu_plugin_sdk::export_strategy!(Hog);
