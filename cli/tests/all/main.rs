//! The one integration-test binary: the real `uatu` binary, real gRPC servers
//! and sockets, real Wasm. Each module tests one part; `support` holds what
//! several share (starting the simulator, building plugin components).

mod support;

mod android_adb;
mod android_sidecar;
mod cli;
mod device_agent;
mod device_grpc;
mod device_vectors;
mod failures;
mod init;
mod inspect;
mod inspect_browser;
mod plugin_cli;
mod plugin_contract;
mod plugin_example;
mod plugin_first_party;
mod plugin_hostile;
mod release;
mod replay_shrink;
mod run_folio;
mod run_plugins;
mod run_todomvc;
mod sdk_android_harness;
mod sdk_hierarchy;
mod selectors;
mod sim_driver;
mod sim_sdk;
mod spec_build;
mod spec_runtime;
mod spec_semantics;
mod trace_compact;
mod typescript;
