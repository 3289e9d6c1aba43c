//! What several test modules share.

pub mod folio;
pub mod plugins;
pub mod sim;
