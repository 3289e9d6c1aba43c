//! The in-app SDK socket protocol (`proto/agent.md`): length-prefixed JSON
//! frames between the host (which listens) and the app's SDK (which connects).

pub mod frame;
pub mod listener;
pub mod message;

pub use listener::{
    AgentError, AgentListener, AgentState, AgentStatus, DisconnectReason, Hello, ListenerConfig, check_hello,
    generate_token,
};
pub use message::*;
