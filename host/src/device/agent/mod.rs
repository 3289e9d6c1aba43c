//! The in-app SDK socket protocol (`proto/agent.md`): length-prefixed JSON
//! frames between the host (which listens) and the app's SDK (which connects).

pub mod frame;
pub mod message;

pub use message::*;
