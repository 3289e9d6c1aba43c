//! uatu: autonomous, property-based testing for mobile apps.
//!
//! The binary is a thin CLI (`cli`) over the engine: a run (`run`) drives a
//! device (`device`, or the built-in simulator `sim`), evaluates a spec compiled
//! to WebAssembly (`spec`) and its LTL properties (`ltl`), consults plugins
//! (`plugin`) and records everything (`trace`).

pub mod action;
pub mod cli;
pub mod config;
pub mod doctor;
pub mod exit;
pub mod inspect;
pub mod ltl;
pub mod plugin;
pub mod run;
pub mod sandbox;
pub mod spec;
pub mod state;
pub mod trace;
pub mod wasm_toolchain;

/// The version of this build of uatu, recorded in every trace.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
