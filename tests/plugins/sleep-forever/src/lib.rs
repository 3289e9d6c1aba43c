//! Sleeps in `choose`: for an hour, then answers; or, with `forever = true`, a
//! minute at a time without end.
use std::time::Duration;

use uatu_plugin_sdk::strategy::*;

struct Sleeper {
    forever: bool,
}

impl Strategy for Sleeper {
    fn init(config: Config) -> Result<Self, String> {
        Ok(Sleeper {
            forever: config.bool_or("forever", false)?,
        })
    }
    fn choose(&mut self, _ctx: &StepContext, candidates: &[Candidate]) -> Result<Choice, String> {
        if self.forever {
            loop {
                std::thread::sleep(Duration::from_secs(60));
            }
        }
        std::thread::sleep(Duration::from_secs(3600));
        Ok(Choice::new(candidates[0].id))
    }
}

uatu_plugin_sdk::export_strategy!(Sleeper);
