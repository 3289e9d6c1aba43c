//! Write uatu plugins in Rust: exploration strategies, extractors and trace sinks,
//! built as WebAssembly components against the contract in `wit/plugin.wit`
//! (`uatu:plugin@0.1.0`). See `docs/plugins.md`.
//!
//! Implement one trait — [`strategy::Strategy`], [`extractor::Extractor`] or
//! [`sink::Sink`] — and export it with [`export_strategy!`], [`export_extractor!`]
//! or [`export_sink!`]:
//!
//! ```ignore
//! use uatu_plugin_sdk::strategy::*;
//!
//! struct Last;
//!
//! impl Strategy for Last {
//!     fn init(_config: Config) -> Result<Self, String> {
//!         Ok(Last)
//!     }
//!     fn choose(&mut self, _ctx: &StepContext, candidates: &[Candidate]) -> Result<Choice, String> {
//!         candidates.last().map(|c| Choice::new(c.id)).ok_or_else(|| "no candidates".into())
//!     }
//! }
//!
//! uatu_plugin_sdk::export_strategy!(Last);
//! ```
//!
//! Build it with `uatu plugin build <crate dir>`.

/// The version of the plugin contract this SDK implements.
pub const CONTRACT_VERSION: &str = "0.1.0";

#[doc(hidden)]
pub mod __private {
    pub mod strategy {
        wit_bindgen::generate!({
            path: "wit",
            world: "uatu:plugin/strategy-plugin",
            pub_export_macro: true,
            export_macro_name: "__export_strategy_world",
            default_bindings_module: "uatu_plugin_sdk::__private::strategy",
        });
    }
    pub mod extractor {
        wit_bindgen::generate!({
            path: "wit",
            world: "uatu:plugin/extractor-plugin",
            pub_export_macro: true,
            export_macro_name: "__export_extractor_world",
            default_bindings_module: "uatu_plugin_sdk::__private::extractor",
        });
    }
    pub mod sink {
        wit_bindgen::generate!({
            path: "wit",
            world: "uatu:plugin/sink-plugin",
            pub_export_macro: true,
            export_macro_name: "__export_sink_world",
            default_bindings_module: "uatu_plugin_sdk::__private::sink",
        });
    }
}

/// A plugin's `[plugins.<name>]` table from `uatu.toml` (without the host's own
/// keys `memory-mib` and `deadline-ms`), as JSON.
#[derive(Debug, Clone, Default)]
pub struct Config {
    table: serde_json::Map<String, serde_json::Value>,
}

impl Config {
    /// Parses the JSON text the host passes to `init`.
    pub fn parse(json: &str) -> Result<Config, String> {
        match serde_json::from_str::<serde_json::Value>(json) {
            Ok(serde_json::Value::Object(table)) => Ok(Config { table }),
            Ok(other) => Err(format!("config is not a JSON object: {other}")),
            Err(error) => Err(format!("config is not valid JSON: {error}")),
        }
    }

    pub fn get(&self, key: &str) -> Option<&serde_json::Value> {
        self.table.get(key)
    }

    /// A number, `default` when absent; an error when present but not a number.
    pub fn f64_or(&self, key: &str, default: f64) -> Result<f64, String> {
        match self.table.get(key) {
            None => Ok(default),
            Some(value) => value
                .as_f64()
                .ok_or_else(|| format!("config `{key}` must be a number, not {value}")),
        }
    }

    /// A boolean, `default` when absent; an error when present but not a boolean.
    pub fn bool_or(&self, key: &str, default: bool) -> Result<bool, String> {
        match self.table.get(key) {
            None => Ok(default),
            Some(value) => value
                .as_bool()
                .ok_or_else(|| format!("config `{key}` must be a boolean, not {value}")),
        }
    }

    /// A string, `default` when absent; an error when present but not a string.
    pub fn str_or(&self, key: &str, default: &str) -> Result<String, String> {
        match self.table.get(key) {
            None => Ok(default.to_string()),
            Some(value) => value
                .as_str()
                .map(str::to_string)
                .ok_or_else(|| format!("config `{key}` must be a string, not {value}")),
        }
    }

    pub fn table(&self) -> &serde_json::Map<String, serde_json::Value> {
        &self.table
    }
}

/// Helpers shared by the three copies of the contract's types.
macro_rules! impl_type_helpers {
    ($types:path) => {
        use $types as types;

        impl types::StepContext {
            /// The snapshots as a JSON object (empty when they do not parse).
            pub fn snapshots_json(&self) -> serde_json::Map<String, serde_json::Value> {
                serde_json::from_str(&self.snapshots).unwrap_or_default()
            }
        }

        impl types::Node {
            pub fn is_clickable(&self) -> bool {
                self.flags.contains(types::NodeFlags::CLICKABLE)
            }
        }
    };
}

pub mod strategy {
    //! Strategies choose, every step, which of the spec's candidate actions to dispatch.
    pub use crate::__private::strategy::uatu::plugin::types::{
        Bounds, Candidate, Choice, Node, NodeFlags, StepContext,
    };
    pub use crate::Config;
    impl_type_helpers!(crate::__private::strategy::uatu::plugin::types);

    /// An exploration strategy. One instance lives for the whole run, so it may
    /// keep memory across steps.
    pub trait Strategy: Sized + 'static {
        /// Builds the strategy from its configuration; an error stops the run before it starts.
        fn init(config: Config) -> Result<Self, String>;
        /// Picks one of `candidates` (never empty) by its `id`.
        fn choose(&mut self, ctx: &StepContext, candidates: &[Candidate]) -> Result<Choice, String>;
    }

    impl Choice {
        pub fn new(id: u32) -> Choice {
            Choice { id, note: None }
        }

        /// A choice with a note for the run log.
        pub fn with_note(id: u32, note: impl Into<String>) -> Choice {
            Choice {
                id,
                note: Some(note.into()),
            }
        }
    }

    impl Candidate {
        /// The action's `type` (`tap`, `inputText`, `swipe`, `pressKey`, `wait`).
        pub fn action_type(&self) -> String {
            serde_json::from_str::<serde_json::Value>(&self.action)
                .ok()
                .and_then(|action| action.get("type").and_then(|t| t.as_str()).map(str::to_string))
                .unwrap_or_default()
        }
    }
}

pub mod extractor {
    //! Extractors compute named values from each step's state; specs read them as
    //! `state.snapshots["<plugin>.<name>"]`.
    pub use crate::__private::extractor::uatu::plugin::types::{
        Bounds, NamedValue, Node, NodeFlags, Screenshot, StepContext,
    };
    pub use crate::Config;
    impl_type_helpers!(crate::__private::extractor::uatu::plugin::types);

    pub trait Extractor: Sized + 'static {
        fn init(config: Config) -> Result<Self, String>;
        /// Whether `extract` wants the screenshot (decoded RGBA). Passing it costs a copy per step.
        fn needs_screenshot(&self) -> bool {
            false
        }
        fn extract(
            &mut self,
            ctx: &StepContext,
            screenshot: Option<&Screenshot>,
        ) -> Result<Vec<NamedValue>, String>;
    }

    impl NamedValue {
        /// A value from anything serde_json can serialise.
        pub fn new(name: impl Into<String>, value: serde_json::Value) -> NamedValue {
            NamedValue {
                name: name.into(),
                json: value.to_string(),
            }
        }
    }
}

pub mod sink {
    //! Sinks receive the run's meta, every trace record and the summary. A sink may
    //! write files only under its own directory, which it sees as `/` (and `.`).
    pub use crate::Config;

    pub trait Sink: Sized + 'static {
        fn init(config: Config) -> Result<Self, String>;
        /// `meta` is the run's meta.json.
        fn on_run_start(&mut self, meta: &serde_json::Value) -> Result<(), String>;
        /// `record` is one line of trace.jsonl.
        fn on_step(&mut self, record: &serde_json::Value) -> Result<(), String>;
        /// `summary` is the run's summary.
        fn on_run_end(&mut self, summary: &serde_json::Value) -> Result<(), String>;
    }

    #[doc(hidden)]
    pub fn parse(what: &str, json: &str) -> Result<serde_json::Value, String> {
        serde_json::from_str(json).map_err(|error| format!("{what} is not valid JSON: {error}"))
    }
}

/// Exports a [`strategy::Strategy`] as the plugin's strategy.
#[macro_export]
macro_rules! export_strategy {
    ($plugin:ty) => {
        const _: () = {
            use $crate::__private::strategy as __bindings;
            use __bindings::uatu::plugin::types as __types;
            struct __UatuExport;
            ::std::thread_local! {
                static __INSTANCE: ::core::cell::RefCell<::core::option::Option<$plugin>> =
                    const { ::core::cell::RefCell::new(::core::option::Option::None) };
            }
            impl __bindings::exports::uatu::plugin::strategy::Guest for __UatuExport {
                fn init(config: ::std::string::String) -> ::core::result::Result<(), ::std::string::String> {
                    let config = $crate::Config::parse(&config)?;
                    let instance = <$plugin as $crate::strategy::Strategy>::init(config)?;
                    __INSTANCE.with(|cell| *cell.borrow_mut() = ::core::option::Option::Some(instance));
                    ::core::result::Result::Ok(())
                }
                fn choose(
                    ctx: __types::StepContext,
                    candidates: ::std::vec::Vec<__types::Candidate>,
                ) -> ::core::result::Result<__types::Choice, ::std::string::String> {
                    __INSTANCE.with(|cell| match cell.borrow_mut().as_mut() {
                        ::core::option::Option::Some(instance) => {
                            $crate::strategy::Strategy::choose(instance, &ctx, &candidates)
                        }
                        ::core::option::Option::None => {
                            ::core::result::Result::Err("choose called before init".into())
                        }
                    })
                }
            }
            $crate::__private::strategy::__export_strategy_world!(__UatuExport with_types_in $crate::__private::strategy);
        };
    };
}

/// Exports an [`extractor::Extractor`] as the plugin's extractor.
#[macro_export]
macro_rules! export_extractor {
    ($plugin:ty) => {
        const _: () = {
            use $crate::__private::extractor as __bindings;
            use __bindings::uatu::plugin::types as __types;
            struct __UatuExport;
            ::std::thread_local! {
                static __INSTANCE: ::core::cell::RefCell<::core::option::Option<$plugin>> =
                    const { ::core::cell::RefCell::new(::core::option::Option::None) };
            }
            impl __bindings::exports::uatu::plugin::extractor::Guest for __UatuExport {
                fn init(config: ::std::string::String) -> ::core::result::Result<(), ::std::string::String> {
                    let config = $crate::Config::parse(&config)?;
                    let instance = <$plugin as $crate::extractor::Extractor>::init(config)?;
                    __INSTANCE.with(|cell| *cell.borrow_mut() = ::core::option::Option::Some(instance));
                    ::core::result::Result::Ok(())
                }
                fn needs_screenshot() -> bool {
                    __INSTANCE.with(|cell| {
                        cell.borrow()
                            .as_ref()
                            .is_some_and(|instance| $crate::extractor::Extractor::needs_screenshot(instance))
                    })
                }
                fn extract(
                    ctx: __types::StepContext,
                    screenshot: ::core::option::Option<__types::Screenshot>,
                ) -> ::core::result::Result<::std::vec::Vec<__types::NamedValue>, ::std::string::String> {
                    __INSTANCE.with(|cell| match cell.borrow_mut().as_mut() {
                        ::core::option::Option::Some(instance) => {
                            $crate::extractor::Extractor::extract(instance, &ctx, screenshot.as_ref())
                        }
                        ::core::option::Option::None => {
                            ::core::result::Result::Err("extract called before init".into())
                        }
                    })
                }
            }
            $crate::__private::extractor::__export_extractor_world!(__UatuExport with_types_in $crate::__private::extractor);
        };
    };
}

/// Exports a [`sink::Sink`] as the plugin's sink.
#[macro_export]
macro_rules! export_sink {
    ($plugin:ty) => {
        const _: () = {
            use $crate::__private::sink as __bindings;
            struct __UatuExport;
            ::std::thread_local! {
                static __INSTANCE: ::core::cell::RefCell<::core::option::Option<$plugin>> =
                    const { ::core::cell::RefCell::new(::core::option::Option::None) };
            }
            fn __with(
                what: &str,
                json: &str,
                call: impl FnOnce(
                    &mut $plugin,
                    &$crate::__serde_json::Value,
                ) -> ::core::result::Result<(), ::std::string::String>,
            ) -> ::core::result::Result<(), ::std::string::String> {
                let value = $crate::sink::parse(what, json)?;
                __INSTANCE.with(|cell| match cell.borrow_mut().as_mut() {
                    ::core::option::Option::Some(instance) => call(instance, &value),
                    ::core::option::Option::None => {
                        ::core::result::Result::Err(format!("{what} before init"))
                    }
                })
            }
            impl __bindings::exports::uatu::plugin::sink::Guest for __UatuExport {
                fn init(config: ::std::string::String) -> ::core::result::Result<(), ::std::string::String> {
                    let config = $crate::Config::parse(&config)?;
                    let instance = <$plugin as $crate::sink::Sink>::init(config)?;
                    __INSTANCE.with(|cell| *cell.borrow_mut() = ::core::option::Option::Some(instance));
                    ::core::result::Result::Ok(())
                }
                fn on_run_start(
                    meta: ::std::string::String,
                ) -> ::core::result::Result<(), ::std::string::String> {
                    __with("meta", &meta, |instance, value| {
                        $crate::sink::Sink::on_run_start(instance, value)
                    })
                }
                fn on_step(
                    record: ::std::string::String,
                ) -> ::core::result::Result<(), ::std::string::String> {
                    __with("record", &record, |instance, value| {
                        $crate::sink::Sink::on_step(instance, value)
                    })
                }
                fn on_run_end(
                    summary: ::std::string::String,
                ) -> ::core::result::Result<(), ::std::string::String> {
                    __with("summary", &summary, |instance, value| {
                        $crate::sink::Sink::on_run_end(instance, value)
                    })
                }
            }
    $crate::__private::sink::__export_sink_world!(__UatuExport with_types_in $crate::__private::sink);
        };
    };
}

#[doc(hidden)]
pub use serde_json as __serde_json;
pub use serde_json;
