//! What several test modules share.

pub mod plugins;
pub mod sim;
