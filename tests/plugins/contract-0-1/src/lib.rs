//! A strategy built against the previous contract, `uatu:plugin@0.1.0` (each node's
//! strings passed separately): before 1.0 a minor version is incompatible.
wit_bindgen::generate!({ path: "wit", world: "uatu:plugin/strategy-plugin" });

use exports::uatu::plugin::strategy::Guest;
use uatu::plugin::types::{Candidate, Choice, StepContext};

struct Old;

impl Guest for Old {
    fn init(_config: String) -> Result<(), String> {
        Ok(())
    }
    fn choose(ctx: StepContext, _candidates: Vec<Candidate>) -> Result<Choice, String> {
        Ok(Choice {
            id: ctx.hierarchy.len() as u32,
            note: None,
        })
    }
}

export!(Old);
