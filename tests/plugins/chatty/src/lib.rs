//! Prints a kilobyte to stdout (eight lines) at every `choose`, and panics at call `panic-at`.
use uatu_plugin_sdk::strategy::*;

struct Chatty {
    calls: u64,
    panic_at: u64,
}

impl Strategy for Chatty {
    fn init(config: Config) -> Result<Self, String> {
        Ok(Chatty {
            calls: 0,
            panic_at: config.f64_or("panic-at", f64::MAX)? as u64,
        })
    }
    fn choose(&mut self, _ctx: &StepContext, candidates: &[Candidate]) -> Result<Choice, String> {
        self.calls += 1;
        for line in 0..8 {
            println!("call {}, line {line}: {}", self.calls, "chatter ".repeat(14));
        }
        if self.calls == self.panic_at {
            panic!("boom after {} calls", self.calls);
        }
        Ok(Choice::new(candidates[0].id))
    }
}

uatu_plugin_sdk::export_strategy!(Chatty);
