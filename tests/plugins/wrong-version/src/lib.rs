//! A strategy built against a future contract, `uatu:plugin@9.0.0`.
wit_bindgen::generate!({ path: "wit", world: "uatu:plugin/strategy-plugin" });

use exports::uatu::plugin::strategy::Guest;
use uatu::plugin::types::{Candidate, Choice, StepContext};

struct Future;

impl Guest for Future {
    fn init(_config: String) -> Result<(), String> {
        Ok(())
    }
    fn choose(_ctx: StepContext, _candidates: Vec<Candidate>) -> Result<Choice, String> {
        Ok(Choice { id: 0, note: None })
    }
}

export!(Future);
