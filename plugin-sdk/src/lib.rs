//! Write uatu plugins in Rust: exploration strategies, extractors and trace sinks,
//! built as WebAssembly components against the contract in `wit/plugin.wit`
//! (`uatu:plugin@0.2.0`). See `docs/plugins.md`.
//!
//! Implement one trait — [`strategy::Strategy`], [`extractor::Extractor`] or
//! [`sink::Sink`] — and export it with [`export_strategy!`], [`export_extractor!`]
//! or [`export_sink!`]:
//!
//! ```ignore
//! use uatu_plugin_sdk::strategy::*;
//!
//! struct LastButton;
//!
//! impl Strategy for LastButton {
//!     fn init(_config: Config) -> Result<Self, String> {
//!         Ok(LastButton)
//!     }
//!     fn choose(&mut self, ctx: &StepContext, candidates: &[Candidate]) -> Result<Choice, String> {
//!         // Node views: `id()`, `desc()`, `text()`, `class()`, `depth()`, `bounds()`,
//!         // `is_clickable()`, `children()`, `parent()`, ...
//!         let buttons = ctx.hierarchy.nodes().filter(|node| node.is_clickable()).count();
//!         let last = candidates.last().ok_or("no candidates")?;
//!         Ok(Choice::with_note(last.id, format!("{buttons} clickable nodes")))
//!     }
//! }
//!
//! uatu_plugin_sdk::export_strategy!(LastButton);
//! ```
//!
//! On the wire the hierarchy is one string table and a list of flat records whose
//! strings are spans of it ([`strategy::NodeRecord`]); [`strategy::Hierarchy::nodes`]
//! hides that behind [`strategy::Node`] views, whose strings borrow from the table.
//!
//! Build a plugin with `uatu plugin build <crate dir>`.

/// The version of the plugin contract this SDK implements (the SDK's own version is the same).
pub const CONTRACT_VERSION: &str = "0.2.0";

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

/// Helpers shared by the copies of the contract's types (one per world).
macro_rules! impl_type_helpers {
    ($types:path) => {
        pub use types::{Bounds, Hierarchy, Node as NodeRecord, NodeFlags, Span};
        use $types as types;

        impl types::StepContext {
            /// The snapshots as a JSON object (empty when they do not parse).
            pub fn snapshots_json(&self) -> serde_json::Map<String, serde_json::Value> {
                serde_json::from_str(&self.snapshots).unwrap_or_default()
            }
        }

        /// An empty hierarchy, to build one node by node with [`Hierarchy::push`] (in a
        /// plugin's own tests; the host sends hierarchies ready-made).
        impl Default for types::Hierarchy {
            fn default() -> types::Hierarchy {
                types::Hierarchy {
                    strings: String::new(),
                    nodes: Vec::new(),
                }
            }
        }

        impl types::Hierarchy {
            /// Appends a node in pre-order (after its parent and its parent's earlier
            /// subtrees), its strings added to the table, with no flags and empty bounds;
            /// set those on the record returned.
            pub fn push(
                &mut self,
                depth: u32,
                class: &str,
                id: &str,
                desc: &str,
                text: &str,
            ) -> &mut NodeRecord {
                let mut span = |text: &str| {
                    let offset = self.strings.len() as u32;
                    self.strings.push_str(text);
                    types::Span {
                        offset,
                        len: text.len() as u32,
                    }
                };
                let record = NodeRecord {
                    depth,
                    id: span(id),
                    desc: span(desc),
                    text: span(text),
                    class: span(class),
                    flags: NodeFlags::empty(),
                    bounds: Bounds {
                        left: 0,
                        top: 0,
                        right: 0,
                        bottom: 0,
                    },
                };
                self.nodes.push(record);
                self.nodes.last_mut().expect("a node was just pushed")
            }

            /// The nodes in pre-order (parents before children), the root first.
            pub fn nodes(&self) -> impl ExactSizeIterator<Item = Node<'_>> + DoubleEndedIterator + Clone {
                (0..self.nodes.len()).map(move |index| Node {
                    hierarchy: self,
                    index,
                })
            }

            /// The node at `index` in pre-order.
            pub fn get(&self, index: usize) -> Option<Node<'_>> {
                (index < self.nodes.len()).then_some(Node {
                    hierarchy: self,
                    index,
                })
            }

            /// The root (`None` for an empty tree).
            pub fn root(&self) -> Option<Node<'_>> {
                self.get(0)
            }

            /// The number of nodes.
            pub fn len(&self) -> usize {
                self.nodes.len()
            }

            pub fn is_empty(&self) -> bool {
                self.nodes.is_empty()
            }

            /// The first node, in pre-order, whose resource id is `id`.
            pub fn find_by_id(&self, id: &str) -> Option<Node<'_>> {
                self.nodes().find(|node| node.id() == id)
            }

            /// The string `span` points at in the string table (empty when it points outside).
            pub fn str(&self, span: Span) -> &str {
                let start = span.offset as usize;
                self.strings
                    .get(start..start.saturating_add(span.len as usize))
                    .unwrap_or_default()
            }
        }

        /// One node of a [`Hierarchy`], borrowed from it: its strings are slices of the
        /// hierarchy's string table, so reading them copies nothing.
        #[derive(Clone, Copy)]
        pub struct Node<'a> {
            hierarchy: &'a types::Hierarchy,
            index: usize,
        }

        impl<'a> Node<'a> {
            /// The flat record as passed by the host (strings as spans).
            pub fn record(&self) -> &'a NodeRecord {
                &self.hierarchy.nodes[self.index]
            }

            /// Its position in pre-order (the root is 0).
            pub fn index(&self) -> usize {
                self.index
            }

            /// 0 for the root, 1 for its children, ...
            pub fn depth(&self) -> u32 {
                self.record().depth
            }

            /// Resource id (empty when absent).
            pub fn id(&self) -> &'a str {
                self.hierarchy.str(self.record().id)
            }

            /// Content description / accessibility label (empty when absent).
            pub fn desc(&self) -> &'a str {
                self.hierarchy.str(self.record().desc)
            }

            /// The text shown (empty when absent).
            pub fn text(&self) -> &'a str {
                self.hierarchy.str(self.record().text)
            }

            /// The platform's class name, e.g. `android.widget.Button`.
            pub fn class(&self) -> &'a str {
                self.hierarchy.str(self.record().class)
            }

            /// Device pixels; `right` and `bottom` are exclusive.
            pub fn bounds(&self) -> Bounds {
                self.record().bounds
            }

            pub fn flags(&self) -> NodeFlags {
                self.record().flags
            }

            pub fn is_clickable(&self) -> bool {
                self.flags().contains(NodeFlags::CLICKABLE)
            }

            pub fn is_enabled(&self) -> bool {
                self.flags().contains(NodeFlags::ENABLED)
            }

            pub fn is_checked(&self) -> bool {
                self.flags().contains(NodeFlags::CHECKED)
            }

            pub fn is_focused(&self) -> bool {
                self.flags().contains(NodeFlags::FOCUSED)
            }

            pub fn is_selected(&self) -> bool {
                self.flags().contains(NodeFlags::SELECTED)
            }

            pub fn is_scrollable(&self) -> bool {
                self.flags().contains(NodeFlags::SCROLLABLE)
            }

            /// Its subtree without itself, in pre-order.
            pub fn descendants(&self) -> impl Iterator<Item = Node<'a>> + use<'a> {
                let hierarchy = self.hierarchy;
                let depth = self.depth();
                (self.index + 1..hierarchy.nodes.len())
                    .take_while(move |&index| hierarchy.nodes[index].depth > depth)
                    .map(move |index| Node { hierarchy, index })
            }

            /// Its direct children, in order.
            pub fn children(&self) -> impl Iterator<Item = Node<'a>> + use<'a> {
                let depth = self.depth();
                self.descendants()
                    .filter(move |node| node.depth() == depth + 1)
            }

            /// Its parent (`None` for the root).
            pub fn parent(&self) -> Option<Node<'a>> {
                let depth = self.depth();
                let hierarchy = self.hierarchy;
                (0..self.index)
                    .rev()
                    .find(|&index| hierarchy.nodes[index].depth < depth)
                    .map(|index| Node { hierarchy, index })
            }
        }

        impl std::fmt::Debug for Node<'_> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct("Node")
                    .field("index", &self.index)
                    .field("depth", &self.depth())
                    .field("id", &self.id())
                    .field("desc", &self.desc())
                    .field("text", &self.text())
                    .field("class", &self.class())
                    .field("flags", &self.flags())
                    .field("bounds", &self.bounds())
                    .finish()
            }
        }
    };
}

pub mod strategy {
    //! Strategies choose, every step, which of the spec's candidate actions to dispatch.
    pub use crate::__private::strategy::uatu::plugin::types::{Candidate, Choice, StepContext};
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
    pub use crate::__private::extractor::uatu::plugin::types::{NamedValue, Screenshot, StepContext};
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
    //! Sinks receive the run's meta, every step and the summary. A sink may
    //! write files only under its own directory, which it sees as `/` (and `.`).
    pub use crate::__private::sink::uatu::plugin::types::StepRecord;
    pub use crate::Config;

    pub trait Sink: Sized + 'static {
        fn init(config: Config) -> Result<Self, String>;
        /// `meta` is the run's meta.json.
        fn on_run_start(&mut self, meta: &serde_json::Value) -> Result<(), String>;
        /// One step, after its trace record was written: `record.step`, `.time_ms`,
        /// `.evaluated`, `.action` and `.violations` are at hand, and
        /// [`StepRecord::parse`] parses the whole trace line when a sink needs more.
        /// Does nothing unless implemented.
        fn on_step(&mut self, record: &StepRecord) -> Result<(), String> {
            let _ = record;
            Ok(())
        }
        /// `summary` is the run's summary.json.
        fn on_run_end(&mut self, summary: &serde_json::Value) -> Result<(), String>;
    }

    impl StepRecord {
        /// The step's whole record, parsed: a `full` trace's line (see `docs/trace-format.md`),
        /// whatever format the run writes. It holds the whole state (hierarchy, snapshots,
        /// logs): parse it only when needed.
        pub fn parse(&self) -> Result<serde_json::Value, String> {
            parse("the trace record", &self.json)
        }

        /// The dispatched action, parsed (`None` when the step dispatched nothing).
        pub fn action_json(&self) -> Option<serde_json::Value> {
            self.action
                .as_deref()
                .and_then(|action| serde_json::from_str(action).ok())
        }
    }

    #[doc(hidden)]
    pub fn parse(what: &str, json: &str) -> Result<serde_json::Value, String> {
        serde_json::from_str(json).map_err(|error| format!("{what} is not valid JSON: {error}"))
    }
}

#[doc(hidden)]
pub mod __export {
    //! What the `export_*!` macros share: the plugin's one instance, built by `init`
    //! and lent to every later call.
    use std::cell::RefCell;

    pub struct Instance<P>(RefCell<Option<P>>);

    impl<P> Instance<P> {
        #[allow(clippy::new_without_default)]
        pub const fn new() -> Instance<P> {
            Instance(RefCell::new(None))
        }

        /// `init`: parses the config and builds the instance with `build`.
        pub fn init(
            &self,
            config: &str,
            build: impl FnOnce(crate::Config) -> Result<P, String>,
        ) -> Result<(), String> {
            let instance = build(crate::Config::parse(config)?)?;
            *self.0.borrow_mut() = Some(instance);
            Ok(())
        }

        /// Any other call: `call` on the instance, or an error naming `what` before `init`.
        pub fn call<R>(
            &self,
            what: &str,
            call: impl FnOnce(&mut P) -> Result<R, String>,
        ) -> Result<R, String> {
            match self.0.borrow_mut().as_mut() {
                Some(instance) => call(instance),
                None => Err(format!("{what} called before init")),
            }
        }
    }
}

/// The instance a `export_*!` macro keeps (one per plugin; Wasm guests are single-threaded).
#[doc(hidden)]
#[macro_export]
macro_rules! __instance {
    ($plugin:ty) => {
        ::std::thread_local! {
            static __INSTANCE: $crate::__export::Instance<$plugin> = const { $crate::__export::Instance::new() };
        }
    };
}

/// Exports a [`strategy::Strategy`] as the plugin's strategy.
#[macro_export]
macro_rules! export_strategy {
    ($plugin:ty) => {
        const _: () = {
            use $crate::__private::strategy::uatu::plugin::types as __types;
            $crate::__instance!($plugin);
            struct __UatuExport;
            impl $crate::__private::strategy::exports::uatu::plugin::strategy::Guest for __UatuExport {
                fn init(config: ::std::string::String) -> ::core::result::Result<(), ::std::string::String> {
                    __INSTANCE.with(|instance| instance.init(&config, <$plugin as $crate::strategy::Strategy>::init))
                }
                fn choose(
                    ctx: __types::StepContext,
                    candidates: ::std::vec::Vec<__types::Candidate>,
                ) -> ::core::result::Result<__types::Choice, ::std::string::String> {
                    __INSTANCE.with(|instance| instance.call("choose", |plugin| $crate::strategy::Strategy::choose(plugin, &ctx, &candidates)))
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
            use $crate::__private::extractor::uatu::plugin::types as __types;
            $crate::__instance!($plugin);
            struct __UatuExport;
            impl $crate::__private::extractor::exports::uatu::plugin::extractor::Guest for __UatuExport {
                fn init(config: ::std::string::String) -> ::core::result::Result<(), ::std::string::String> {
                    __INSTANCE.with(|instance| instance.init(&config, <$plugin as $crate::extractor::Extractor>::init))
                }
                fn needs_screenshot() -> bool {
                    __INSTANCE.with(|instance| {
                        instance
                            .call("needs-screenshot", |plugin| ::core::result::Result::Ok($crate::extractor::Extractor::needs_screenshot(plugin)))
                            .unwrap_or(false)
                    })
                }
                fn extract(
                    ctx: __types::StepContext,
                    screenshot: ::core::option::Option<__types::Screenshot>,
                ) -> ::core::result::Result<::std::vec::Vec<__types::NamedValue>, ::std::string::String> {
                    __INSTANCE.with(|instance| instance.call("extract", |plugin| $crate::extractor::Extractor::extract(plugin, &ctx, screenshot.as_ref())))
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
            use $crate::__private::sink::uatu::plugin::types as __types;
            $crate::__instance!($plugin);
            struct __UatuExport;
            impl $crate::__private::sink::exports::uatu::plugin::sink::Guest for __UatuExport {
                fn init(config: ::std::string::String) -> ::core::result::Result<(), ::std::string::String> {
                    __INSTANCE.with(|instance| instance.init(&config, <$plugin as $crate::sink::Sink>::init))
                }
                fn on_run_start(
                    meta: ::std::string::String,
                ) -> ::core::result::Result<(), ::std::string::String> {
                    let meta = $crate::sink::parse("meta", &meta)?;
                    __INSTANCE.with(|instance| {
                        instance.call("on-run-start", |plugin| {
                            $crate::sink::Sink::on_run_start(plugin, &meta)
                        })
                    })
                }
                fn on_step(record: __types::StepRecord) -> ::core::result::Result<(), ::std::string::String> {
                    __INSTANCE.with(|instance| {
                        instance.call("on-step", |plugin| {
                            $crate::sink::Sink::on_step(plugin, &record)
                        })
                    })
                }
                fn on_run_end(
                    summary: ::std::string::String,
                ) -> ::core::result::Result<(), ::std::string::String> {
                    let summary = $crate::sink::parse("summary", &summary)?;
                    __INSTANCE.with(|instance| {
                        instance.call("on-run-end", |plugin| {
                            $crate::sink::Sink::on_run_end(plugin, &summary)
                        })
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

#[cfg(test)]
mod tests {
    use crate::strategy::{Bounds, Hierarchy, NodeFlags, Span};

    /// root > (a > b), c
    fn tree() -> Hierarchy {
        let mut tree = Hierarchy::default();
        let mut node = |depth: u32, id: &str, text: &str, flags: NodeFlags| {
            let record = tree.push(depth, "View", id, "", text);
            record.flags = flags;
            record.bounds = Bounds {
                left: 0,
                top: depth as i32,
                right: 10,
                bottom: 20,
            };
        };
        node(0, "root", "", NodeFlags::SCROLLABLE);
        node(1, "a", "Crème", NodeFlags::CLICKABLE | NodeFlags::ENABLED);
        node(2, "b", "✓", NodeFlags::empty());
        node(1, "c", "", NodeFlags::CHECKED);
        tree
    }

    #[test]
    fn node_views_read_the_string_table() {
        let tree = tree();
        let ids: Vec<&str> = tree.nodes().map(|node| node.id()).collect();
        assert_eq!(ids, ["root", "a", "b", "c"]);
        let a = tree.find_by_id("a").unwrap();
        assert_eq!(
            (a.text(), a.class(), a.desc(), a.depth()),
            ("Crème", "View", "", 1)
        );
        assert!(a.is_clickable() && a.is_enabled() && !a.is_checked());
        assert_eq!(tree.get(2).unwrap().text(), "✓");
        assert_eq!(a.bounds().top, 1);
        assert!(tree.root().unwrap().is_scrollable());
        assert_eq!(tree.len(), 4);
    }

    #[test]
    fn node_views_navigate_the_tree() {
        let tree = tree();
        let root = tree.root().unwrap();
        let children: Vec<&str> = root.children().map(|node| node.id()).collect();
        assert_eq!(children, ["a", "c"]);
        let descendants: Vec<&str> = root.descendants().map(|node| node.id()).collect();
        assert_eq!(descendants, ["a", "b", "c"]);
        assert_eq!(tree.get(2).unwrap().parent().unwrap().id(), "a");
        assert_eq!(tree.get(3).unwrap().parent().unwrap().id(), "root");
        assert!(root.parent().is_none());
        assert_eq!(tree.get(1).unwrap().children().count(), 1);
    }

    #[test]
    fn an_instance_is_lent_to_calls_after_init_only() {
        let instance = crate::__export::Instance::<u32>::new();
        assert_eq!(
            instance.call("choose", |n| Ok(*n)),
            Err("choose called before init".to_string())
        );
        assert_eq!(
            instance.init("{\"start\": 3}", |config| Ok(config.f64_or("start", 0.0)? as u32)),
            Ok(())
        );
        instance
            .call("bump", |n| {
                *n += 1;
                Ok(())
            })
            .unwrap();
        assert_eq!(instance.call("read", |n| Ok(*n)), Ok(4));
        assert_eq!(
            instance.init("[1]", |_| Ok(0)),
            Err("config is not a JSON object: [1]".to_string())
        );
    }

    #[test]
    fn a_span_outside_the_table_reads_as_empty() {
        let mut tree = tree();
        tree.nodes[1].text = Span { offset: 1000, len: 3 };
        // Inside a multi-byte character: not a char boundary.
        let check = tree.nodes[2].text.offset;
        tree.nodes[2].text = Span {
            offset: check + 1,
            len: 1,
        };
        assert_eq!(tree.get(1).unwrap().text(), "");
        assert_eq!(tree.get(2).unwrap().text(), "");
        assert_eq!(tree.get(9).map(|node| node.id()), None);
    }
}
