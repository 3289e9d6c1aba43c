//! The step loop (`uatu run`) and the offline re-check of a recorded run (`uatu check`).
//!
//! `engine` runs one exploration; `strategy` and `target` choose and resolve
//! actions; `verify` is the verification both `run` and `check` use: a spec's
//! properties as formulas, predicate results, and the LTL verdicts.

pub mod check;
pub mod engine;
pub mod replay;
pub mod strategy;
pub mod target;
pub mod verify;

pub use check::{CheckReport, check};
pub use engine::{Outcome, Progress, execute, replay};
