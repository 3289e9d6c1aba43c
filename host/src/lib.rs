//! uatu: autonomous, property-based testing for mobile apps — the engine as a library.
//!
//! A run ([`run`]) connects a device ([`devices`], over the device layer
//! `uatu_device` or the simulator `uatu_sim`), evaluates a spec compiled to
//! WebAssembly ([`spec`]) and its LTL properties ([`ltl`]), consults plugins
//! ([`plugin`]) and records everything ([`trace`]). The library takes plain
//! values ([`settings::RunConfig`]) and returns values and typed errors
//! ([`errors`]); the `uatu` binary (crate `uatu-cli`) alone parses the command
//! line and prints.

pub mod action;
pub mod devices;
pub mod doctor;
pub mod errors;
pub mod init;
pub mod inspect;
pub mod ltl;
pub mod plugin;
pub mod run;
pub mod settings;
pub mod shrink;
pub mod spec;
pub mod state;
pub mod trace;
pub mod wasm;
pub mod wasm_toolchain;

pub use errors::{Error, ExitStatus};

/// The version of this build of uatu, recorded in every trace.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
