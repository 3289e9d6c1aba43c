//! WebAssembly plugins: strategies, extractors and trace sinks (see `docs/plugins.md`).
//!
//! The run loop loads a [`PluginSet`] at start-up and calls, every step,
//! [`PluginSet::extract`] (after observing the state, before the spec reads it),
//! [`PluginSet::strategy_choose`] (with the spec's candidates), and
//! [`PluginSet::sink_step`] (with the step's trace record and its serialised line); [`PluginSet::sink_run_start`]
//! and [`PluginSet::sink_run_end`] frame the run. Every call is synchronous and
//! must run outside an async context (e.g. inside `tokio::task::block_in_place`
//! or `spawn_blocking`), because WASI's host side blocks on its own.

mod bindings;
mod build;
pub mod builtin;
pub mod context;
pub mod contract;
mod sandbox;
mod scaffold;

use std::path::{Path, PathBuf};

use serde::Serialize;
use sha2::{Digest, Sha256};
use wasmtime::Store;
use wasmtime::component::Component;

use crate::action::Candidate;
use crate::state::State;
use crate::trace::StepRecord;
use uatu_device::model::Screenshot;

pub use build::{BuildError, BuildOptions, build_plugin, build_plugin_with, componentize};
pub use contract::{CONTRACT_VERSION, Kind, Version};
pub use sandbox::default_cache_dir;
pub use scaffold::scaffold;

use bindings::{extractor::ExtractorPlugin, sink::SinkPlugin, strategy::StrategyPlugin, types};
use sandbox::{OutputTail, PluginState, Sandbox};

/// Linear memory a plugin may use unless `memory-mib` says otherwise.
pub const DEFAULT_MEMORY_MIB: u64 = 64;
/// Wall time one call into a plugin may take unless `deadline-ms` says otherwise.
pub const DEFAULT_DEADLINE_MS: u64 = 250;

/// The `[plugins.<name>]` keys the host reads itself; the rest go to the plugin's `init`.
const HOST_KEYS: [&str; 2] = ["memory-mib", "deadline-ms"];

/// A plugin to load: its component, its name (the file's stem by default) and
/// its `[plugins.<name>]` table from `uatu.toml`.
#[derive(Debug, Clone, PartialEq)]
pub struct PluginChoice {
    /// Its name: the file's stem, or its `[plugins.<name>]` table's name.
    pub name: String,
    /// The component file, or a built-in plugin's name (see [`builtin::origin`]).
    pub path: PathBuf,
    /// Its settings from `[plugins.<name>]`.
    pub config: toml::Table,
}

/// What happens to the run when a plugin fails during it (`on-plugin-error` in uatu.toml).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum OnPluginError {
    /// The call returns the error: the run stops (exit code 2) with its trace complete.
    #[default]
    Stop,
    /// The plugin is disabled and the run goes on without it; a [`PluginEvent::Disabled`] says so.
    Disable,
}

/// How to load a set of plugins.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// What a plugin failure during the run does to the run.
    pub on_error: OnPluginError,
    /// Where compiled components are cached; `None` for [`default_cache_dir`].
    pub cache_dir: Option<PathBuf>,
    /// Compile every time, caching nothing.
    pub no_cache: bool,
}

impl LoadOptions {
    /// Where compiled components are cached, if anywhere.
    fn cache(&self) -> Option<PathBuf> {
        if self.no_cache {
            None
        } else {
            self.cache_dir.clone().or_else(default_cache_dir)
        }
    }
}

impl PluginError {
    /// A failure of `plugin` while loading (outside any call).
    fn loading(plugin: &str, cause: Cause) -> PluginError {
        PluginError {
            plugin: plugin.to_string(),
            call: None,
            cause,
        }
    }
}

/// The sandbox every plugin of a process shares; failing to make it fails them all.
fn new_sandbox() -> Result<Sandbox, PluginError> {
    Sandbox::new().map_err(|message| PluginError {
        plugin: "(all)".into(),
        call: None,
        cause: Cause::Load {
            path: PathBuf::from("-"),
            message,
        },
    })
}

/// A plugin failure, naming the plugin and (when it happened in one) the call.
#[derive(Debug, thiserror::Error)]
#[error("plugin `{plugin}`{}: {cause}", call.map(|call| format!(" in `{call}`")).unwrap_or_default())]
pub struct PluginError {
    /// The plugin's name (`(all)` or `(sinks)` when the failure is not one plugin's).
    pub plugin: String,
    /// The plugin function being called (e.g. `choose`, `extract`, `on-step`), or
    /// `None` when the failure happened while loading.
    pub call: Option<&'static str>,
    /// What went wrong.
    pub cause: Cause,
}

/// What went wrong with a plugin, in words its author can act on.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Cause {
    /// The file could not be read, compiled or instantiated (missing, not Wasm, not a
    /// component, imports the host does not provide).
    #[error("cannot load {path}: {message}")]
    Load {
        /// The component file (`-` when the shared Wasm engine could not be set up).
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// The plugin was built for a `uatu:plugin` contract this host does not implement.
    #[error(
        "built for plugin contract uatu:plugin@{found}, but this uatu implements uatu:plugin@{supported} \
         (compatible: the same major version and, before 1.0, the same minor version); \
         rebuild it against uatu-plugin-sdk {supported}"
    )]
    IncompatibleContract {
        /// The contract version the plugin was built against.
        found: String,
        /// The contract version this host implements ([`CONTRACT_VERSION`]).
        supported: String,
    },
    /// The plugin is neither a file nor a built-in plugin.
    #[error(transparent)]
    Unknown(#[from] builtin::UnknownPlugin),
    /// The component exports none of the plugin interfaces.
    #[error(
        "{path} is not a uatu plugin: it exports {exports}, but none of uatu:plugin/strategy, extractor or sink"
    )]
    NotAPlugin {
        /// The component file.
        path: PathBuf,
        /// What it does export, listed.
        exports: String,
    },
    /// The component exports more than one plugin interface.
    #[error("{path} exports several kinds of plugin ({kinds}); a plugin is exactly one kind")]
    SeveralKinds {
        /// The component file.
        path: PathBuf,
        /// The kinds it exports, listed.
        kinds: String,
    },
    /// A bad `[plugins.<name>]` table, a bad or duplicate name, a second strategy, or
    /// the plugin's `init` refusing its configuration; says which.
    #[error("invalid configuration: {0}")]
    Config(String),
    /// One call ran longer than the plugin's `deadline-ms` and was interrupted.
    #[error("exceeded its deadline of {deadline_ms} ms (raise `deadline-ms` in [plugins.<name>])")]
    Deadline {
        /// The deadline, ms.
        deadline_ms: u64,
    },
    /// The plugin tried to grow its memory past `memory-mib`.
    #[error("exceeded its memory cap of {memory_mib} MiB (raise `memory-mib` in [plugins.<name>]){output}")]
    MemoryCap {
        /// The cap, MiB.
        memory_mib: u64,
        /// The plugin's last lines of output, formatted for the message (may be empty).
        output: String,
    },
    /// The plugin's code trapped (a panic, an out-of-bounds access, `unreachable`).
    #[error("trapped: {message}{output}")]
    Trap {
        /// The trap (or host error) description.
        message: String,
        /// The plugin's last lines of output, where a panic message lands (may be empty).
        output: String,
    },
    /// The plugin returned an `err` from a call; its message.
    #[error("returned an error: {0}")]
    Failed(String),
    /// A strategy chose a candidate id that is not among those it was given.
    #[error("chose candidate {id}, but there are {count} candidates (ids 0 to {})", count.saturating_sub(1))]
    InvalidChoice {
        /// The id it chose.
        id: u32,
        /// How many candidates there were.
        count: usize,
    },
    /// An extractor returned a value that is not valid JSON.
    #[error("returned invalid JSON for `{name}`: {message}")]
    BadJson {
        /// The value's name.
        name: String,
        /// The JSON parser's complaint.
        message: String,
    },
    /// An extractor returned a value named `""`.
    #[error("returned a value with an empty name")]
    EmptyName,
    /// The host could not prepare the call's input (a screenshot that does not
    /// decode, a record that does not serialise).
    #[error("cannot pass it its input: {0}")]
    Input(String),
    /// The plugin failed earlier in the run and is not called again.
    #[error("is disabled after an earlier failure")]
    Poisoned,
}

/// Something the run log should show.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "event", rename_all = "camelCase")]
pub enum PluginEvent {
    /// A strategy's note on a choice (each distinct note is reported once).
    Note {
        /// The strategy's name.
        plugin: String,
        /// The step at which it made the note.
        step: u64,
        /// The note.
        message: String,
    },
    /// Under [`OnPluginError::Disable`], a plugin failed and was disabled.
    Disabled {
        /// The plugin's name.
        plugin: String,
        /// The step it failed at, `None` when it failed outside a step (run start or end).
        step: Option<u64>,
        /// The failure, as [`PluginError`] words it.
        error: String,
    },
}

/// A loaded plugin as `meta.json` lists it.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct PluginMeta {
    /// The plugin's name (its `[plugins.<name>]`).
    pub name: String,
    /// The component file as given, or the built-in plugin's name.
    pub path: PathBuf,
    /// sha256 of the component file's bytes, hex.
    pub sha256: String,
    /// Which interface it exports: strategy, extractor or sink.
    pub kind: Kind,
    /// The contract version the plugin was built against.
    pub contract: String,
    /// Its linear-memory cap, MiB.
    pub memory_mib: u64,
    /// The wall time one call may take, ms.
    pub deadline_ms: u64,
    /// The whole `[plugins.<name>]` table.
    pub config: serde_json::Value,
    /// Why it was disabled during the run, if it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disabled: Option<String>,
}

enum Exports {
    Strategy(StrategyPlugin),
    Extractor {
        bindings: ExtractorPlugin,
        needs_screenshot: bool,
    },
    Sink(SinkPlugin),
}

struct Plugin {
    meta: PluginMeta,
    store: Store<PluginState>,
    output: OutputTail,
    exports: Exports,
    /// Set once a call failed: an instance that trapped must not be entered again.
    failed: bool,
}

/// The plugins of a run, each in its own sandbox.
pub struct PluginSet {
    plugins: Vec<Plugin>,
    on_error: OnPluginError,
    events: Vec<PluginEvent>,
    notes_seen: std::collections::HashSet<(String, String)>,
    // Declared last: its engine outlives the stores above.
    _sandbox: Option<Sandbox>,
}

impl PluginSet {
    /// No plugins: every call is a no-op, `strategy_choose` answers `None`.
    pub fn empty() -> PluginSet {
        PluginSet {
            plugins: Vec::new(),
            on_error: OnPluginError::Stop,
            events: Vec::new(),
            notes_seen: Default::default(),
            _sandbox: None,
        }
    }

    /// Loads, checks, instantiates and initialises `specs`. A sink gets the
    /// directory `run_dir/plugins/<name>/` (created here). Any failure here is an
    /// error whatever the policy: a plugin that cannot start is said at start-up.
    pub fn load(
        specs: &[PluginChoice],
        run_dir: &Path,
        options: &LoadOptions,
    ) -> Result<PluginSet, PluginError> {
        let mut set = PluginSet::empty();
        set.on_error = options.on_error;
        if specs.is_empty() {
            return Ok(set);
        }
        let fail = PluginError::loading;
        let sandbox = new_sandbox()?;
        let cache = options.cache();
        for (index, spec) in specs.iter().enumerate() {
            validate_name(&spec.name).map_err(|message| fail(&spec.name, Cause::Config(message)))?;
            if specs[..index].iter().any(|other| other.name == spec.name) {
                return Err(fail(
                    &spec.name,
                    Cause::Config(format!(
                        "two plugins are named `{}`; plugin names (file stems) must be distinct",
                        spec.name
                    )),
                ));
            }
            let plugin = load_one(&sandbox, spec, run_dir, cache.as_deref())?;
            if plugin.meta.kind == Kind::Strategy
                && let Some(first) = set.plugins.iter().find(|p| p.meta.kind == Kind::Strategy)
            {
                return Err(fail(
                    &spec.name,
                    Cause::Config(format!(
                        "a run has at most one strategy, and `{}` is one already",
                        first.meta.name
                    )),
                ));
            }
            set.plugins.push(plugin);
        }
        set._sandbox = Some(sandbox);
        Ok(set)
    }

    /// Each plugin for `meta.json`, in load order.
    pub fn plugins_meta(&self) -> Vec<PluginMeta> {
        self.plugins.iter().map(|plugin| plugin.meta.clone()).collect()
    }

    /// Whether a (still enabled) strategy plugin replaces the built-in weighted-random choice.
    pub fn has_strategy(&self) -> bool {
        self.plugins
            .iter()
            .any(|p| p.meta.kind == Kind::Strategy && !p.failed)
    }

    /// Whether an enabled extractor asked for the screenshot.
    pub fn needs_screenshot(&self) -> bool {
        self.plugins.iter().any(|p| {
            !p.failed
                && matches!(
                    p.exports,
                    Exports::Extractor {
                        needs_screenshot: true,
                        ..
                    }
                )
        })
    }

    /// Notes and disabled plugins since the last call, for the run log.
    pub fn take_events(&mut self) -> Vec<PluginEvent> {
        std::mem::take(&mut self.events)
    }

    /// The strategy's choice among `candidates` (an index into it), or `None` when
    /// there is no strategy (or it was disabled) or no candidate: then the built-in
    /// strategy chooses.
    pub fn strategy_choose(
        &mut self,
        state: &State,
        candidates: &[Candidate],
    ) -> Result<Option<usize>, PluginError> {
        if candidates.is_empty() {
            return Ok(None);
        }
        let Some(index) = self
            .plugins
            .iter()
            .position(|p| p.meta.kind == Kind::Strategy && !p.failed)
        else {
            return Ok(None);
        };
        let ctx = context::step_context(state);
        let offered = context::candidates(candidates);
        let count = candidates.len();
        let plugin = &mut self.plugins[index];
        let result = plugin
            .call("choose", |store, exports| match exports {
                Exports::Strategy(bindings) => {
                    bindings.uatu_plugin_strategy().call_choose(store, &ctx, &offered)
                }
                _ => unreachable_kind(),
            })
            .and_then(|choice| {
                if (choice.id as usize) < count {
                    Ok(choice)
                } else {
                    Err(plugin.error(Some("choose"), Cause::InvalidChoice { id: choice.id, count }))
                }
            });
        match result {
            Ok(choice) => {
                if let Some(note) = choice.note {
                    let name = plugin.meta.name.clone();
                    if self.notes_seen.insert((name.clone(), note.clone())) {
                        self.events.push(PluginEvent::Note {
                            plugin: name,
                            step: state.step,
                            message: note,
                        });
                    }
                }
                Ok(Some(choice.id as usize))
            }
            Err(error) => self.handle(index, Some(state.step), error).map(|()| None),
        }
    }

    /// Every extractor's values for this step, keyed `"<plugin>.<name>"`: merge
    /// them into the state's snapshots before the spec reads it. The screenshot
    /// is decoded only when an extractor asked for it.
    pub fn extract(
        &mut self,
        state: &State,
        screenshot: Option<&Screenshot>,
    ) -> Result<serde_json::Map<String, serde_json::Value>, PluginError> {
        let mut values = serde_json::Map::new();
        if !self
            .plugins
            .iter()
            .any(|p| p.meta.kind == Kind::Extractor && !p.failed)
        {
            return Ok(values);
        }
        let ctx = context::step_context(state);
        let mut decoded: Option<Result<types::Screenshot, String>> = None;
        for index in 0..self.plugins.len() {
            let plugin = &mut self.plugins[index];
            let Exports::Extractor { needs_screenshot, .. } = &plugin.exports else {
                continue;
            };
            if plugin.failed {
                continue;
            }
            let picture = match (needs_screenshot, screenshot) {
                (true, Some(screenshot)) => {
                    match decoded.get_or_insert_with(|| context::decode_screenshot(screenshot)) {
                        Ok(picture) => Some(picture.clone()),
                        Err(message) => {
                            let error = plugin.error(Some("extract"), Cause::Input(message.clone()));
                            self.handle(index, Some(state.step), error)?;
                            continue;
                        }
                    }
                }
                _ => None,
            };
            let result = plugin
                .call("extract", |store, exports| match exports {
                    Exports::Extractor { bindings, .. } => {
                        bindings
                            .uatu_plugin_extractor()
                            .call_extract(store, &ctx, picture.as_ref())
                    }
                    _ => unreachable_kind(),
                })
                .and_then(|named| {
                    let mut parsed = Vec::with_capacity(named.len());
                    for value in named {
                        if value.name.is_empty() {
                            return Err(plugin.error(Some("extract"), Cause::EmptyName));
                        }
                        match serde_json::from_str::<serde_json::Value>(&value.json) {
                            Ok(json) => parsed.push((format!("{}.{}", plugin.meta.name, value.name), json)),
                            Err(error) => {
                                return Err(plugin.error(
                                    Some("extract"),
                                    Cause::BadJson {
                                        name: value.name,
                                        message: error.to_string(),
                                    },
                                ));
                            }
                        }
                    }
                    Ok(parsed)
                });
            match result {
                Ok(parsed) => values.extend(parsed),
                Err(error) => self.handle(index, Some(state.step), error)?,
            }
        }
        Ok(values)
    }

    /// Gives every sink the run's meta (what `meta.json` holds).
    pub fn sink_run_start(&mut self, meta: &impl Serialize) -> Result<(), PluginError> {
        if !self.has_sinks() {
            return Ok(());
        }
        let json = sink_json("on-run-start", meta)?;
        self.sink_call("on-run-start", None, |sink, store| {
            sink.call_on_run_start(store, &json)
        })
    }

    /// Gives every sink one step, after its record was written: `line` is the whole
    /// record as JSON (a `full` trace's line, without the newline, whatever format the
    /// trace is written in), serialised once per step whatever the number of sinks.
    pub fn sink_step(&mut self, record: &StepRecord, line: String) -> Result<(), PluginError> {
        if !self.has_sinks() {
            return Ok(());
        }
        let step = context::step_record(record, line);
        self.sink_call("on-step", Some(record.step), |sink, store| {
            sink.call_on_step(store, &step)
        })
    }

    /// Gives every sink the run's summary, before the run's exit.
    pub fn sink_run_end(&mut self, summary: &impl Serialize) -> Result<(), PluginError> {
        if !self.has_sinks() {
            return Ok(());
        }
        let json = sink_json("on-run-end", summary)?;
        self.sink_call("on-run-end", None, |sink, store| {
            sink.call_on_run_end(store, &json)
        })
    }

    /// Whether a sink plugin is loaded and not disabled (the host need not serialise records otherwise).
    pub fn has_sinks(&self) -> bool {
        self.plugins
            .iter()
            .any(|p| p.meta.kind == Kind::Sink && !p.failed)
    }

    fn sink_call(
        &mut self,
        call: &'static str,
        step: Option<u64>,
        body: impl Fn(
            &bindings::sink::exports::uatu::plugin::sink::Guest,
            &mut Store<PluginState>,
        ) -> wasmtime::Result<Result<(), String>>,
    ) -> Result<(), PluginError> {
        for index in 0..self.plugins.len() {
            let plugin = &mut self.plugins[index];
            if plugin.failed || plugin.meta.kind != Kind::Sink {
                continue;
            }
            let result = plugin.call(call, |store, exports| match exports {
                Exports::Sink(bindings) => body(bindings.uatu_plugin_sink(), store),
                _ => unreachable_kind(),
            });
            if let Err(error) = result {
                self.handle(index, step, error)?;
            }
        }
        Ok(())
    }

    /// Applies the policy to a failed call: the error (stop), or a disabled plugin and an event.
    fn handle(&mut self, index: usize, step: Option<u64>, error: PluginError) -> Result<(), PluginError> {
        let plugin = &mut self.plugins[index];
        plugin.failed = true;
        plugin.meta.disabled = Some(error.to_string());
        match self.on_error {
            OnPluginError::Stop => Err(error),
            OnPluginError::Disable => {
                self.events.push(PluginEvent::Disabled {
                    plugin: plugin.meta.name.clone(),
                    step,
                    error: error.to_string(),
                });
                Ok(())
            }
        }
    }
}

/// A built-in plugin as `uatu plugin list` shows it: what the binary embeds, and the
/// kind and contract version read from its component (not declared beside it).
#[derive(Debug, Clone, Serialize)]
pub struct BuiltInListing {
    /// Its name, for `--plugin`.
    pub name: &'static str,
    /// Which interface its component exports.
    pub kind: Kind,
    /// The contract version its component was built against.
    pub contract: String,
    /// What it does, in one line.
    pub summary: &'static str,
    /// The keys of its `[plugins.<name>]` table and their defaults.
    pub config: &'static [builtin::ConfigKey],
}

/// Every built-in plugin, with its kind and contract version from its compiled component
/// (compiled once and cached as a run would: `options.cache_dir`, `options.no_cache`).
pub fn list_builtins(options: &LoadOptions) -> Result<Vec<BuiltInListing>, PluginError> {
    let fail = PluginError::loading;
    let sandbox = new_sandbox()?;
    let cache = options.cache();
    builtin::all()
        .iter()
        .map(|plugin| {
            let load_error = |message: String| {
                fail(
                    plugin.name,
                    Cause::Load {
                        path: PathBuf::from(plugin.name),
                        message,
                    },
                )
            };
            let bytes = plugin
                .component()
                .map_err(|error| load_error(error.to_string()))?;
            let sha256 = hex::encode(Sha256::digest(bytes));
            let component = sandbox
                .component(bytes, &sha256, cache.as_deref())
                .map_err(load_error)?;
            let (kind, version) = identify(&sandbox, &component, Path::new(plugin.name))
                .map_err(|cause| fail(plugin.name, cause))?;
            Ok(BuiltInListing {
                name: plugin.name,
                kind,
                contract: version.to_string(),
                summary: plugin.summary,
                config: plugin.config,
            })
        })
        .collect()
}

/// A value for a sink's `on-run-start` or `on-run-end`, as JSON text.
fn sink_json(call: &'static str, value: &impl Serialize) -> Result<String, PluginError> {
    serde_json::to_string(value).map_err(|error| PluginError {
        plugin: "(sinks)".into(),
        call: Some(call),
        cause: Cause::Input(error.to_string()),
    })
}

fn unreachable_kind<T>() -> wasmtime::Result<Result<T, String>> {
    Err(wasmtime::Error::msg(
        "internal error: a call of another kind of plugin",
    ))
}

fn validate_name(name: &str) -> Result<(), String> {
    let valid = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if valid {
        Ok(())
    } else {
        Err(format!(
            "the plugin name {name:?} must be 1 to 64 letters, digits, `-` or `_` (it names a directory and snapshot keys)"
        ))
    }
}

/// The host's limits from the table, and the rest as the plugin's JSON config.
fn split_config(table: &toml::Table) -> Result<(u64, u64, String), String> {
    let positive = |key: &str, default: u64| -> Result<u64, String> {
        match table.get(key) {
            None => Ok(default),
            Some(toml::Value::Integer(value)) if *value > 0 => Ok(*value as u64),
            Some(other) => Err(format!("`{key}` must be a positive integer, not {other}")),
        }
    };
    let memory_mib = positive("memory-mib", DEFAULT_MEMORY_MIB)?;
    let deadline_ms = positive("deadline-ms", DEFAULT_DEADLINE_MS)?;
    if memory_mib > 4096 {
        return Err(format!(
            "`memory-mib` is at most 4096 (a 32-bit memory), not {memory_mib}"
        ));
    }
    let own: toml::Table = table
        .iter()
        .filter(|(key, _)| !HOST_KEYS.contains(&key.as_str()))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    let json = serde_json::to_string(&own).map_err(|error| format!("cannot pass it as JSON: {error}"))?;
    Ok((memory_mib, deadline_ms, json))
}

fn load_one(
    sandbox: &Sandbox,
    spec: &PluginChoice,
    run_dir: &Path,
    cache: Option<&Path>,
) -> Result<Plugin, PluginError> {
    let fail = |cause: Cause| PluginError {
        plugin: spec.name.clone(),
        call: None,
        cause,
    };
    let fail_in = |call: &'static str, cause: Cause| PluginError {
        plugin: spec.name.clone(),
        call: Some(call),
        cause,
    };
    let load_error = |message: String| {
        fail(Cause::Load {
            path: spec.path.clone(),
            message,
        })
    };
    let (memory_mib, deadline_ms, config_json) =
        split_config(&spec.config).map_err(|m| fail(Cause::Config(m)))?;
    let file_bytes;
    let bytes: &[u8] = match builtin::origin(&spec.path).map_err(|unknown| fail(unknown.into()))? {
        builtin::Origin::File(path) => {
            file_bytes = std::fs::read(path).map_err(|error| load_error(error.to_string()))?;
            &file_bytes
        }
        builtin::Origin::BuiltIn(plugin) => plugin
            .component()
            .map_err(|error| load_error(error.to_string()))?,
    };
    let sha256 = hex::encode(Sha256::digest(bytes));
    let component = sandbox.component(bytes, &sha256, cache).map_err(load_error)?;
    let (kind, version) = identify(sandbox, &component, &spec.path).map_err(fail)?;
    let dir = match kind {
        Kind::Sink => {
            let dir = run_dir.join("plugins").join(&spec.name);
            std::fs::create_dir_all(&dir).map_err(|error| {
                load_error(format!("cannot create its directory {}: {error}", dir.display()))
            })?;
            Some(dir)
        }
        _ => None,
    };
    let memory_bytes = usize::try_from(memory_mib << 20).unwrap_or(usize::MAX);
    let (mut store, output) = sandbox.store(memory_bytes, dir.as_deref()).map_err(load_error)?;
    store.set_epoch_deadline(deadline_ms + 1);
    let meta = PluginMeta {
        name: spec.name.clone(),
        path: spec.path.clone(),
        sha256,
        kind,
        contract: version.to_string(),
        memory_mib,
        deadline_ms,
        config: serde_json::to_value(&spec.config).unwrap_or_default(),
        disabled: None,
    };
    let instantiated = match kind {
        Kind::Strategy => {
            StrategyPlugin::instantiate(&mut store, &component, &sandbox.linker).map(Exports::Strategy)
        }
        Kind::Extractor => {
            ExtractorPlugin::instantiate(&mut store, &component, &sandbox.linker).map(|bindings| {
                Exports::Extractor {
                    bindings,
                    needs_screenshot: false,
                }
            })
        }
        Kind::Sink => SinkPlugin::instantiate(&mut store, &component, &sandbox.linker).map(Exports::Sink),
    };
    let exports = match instantiated {
        Ok(exports) => exports,
        Err(error) => {
            let cause = classify(&meta, &store, &output, error, 0);
            return Err(fail_in("instantiate", cause));
        }
    };
    let mut plugin = Plugin {
        meta,
        store,
        output,
        exports,
        failed: false,
    };
    plugin.call("init", |store, exports| match exports {
        Exports::Strategy(bindings) => bindings.uatu_plugin_strategy().call_init(store, &config_json),
        Exports::Extractor { bindings, .. } => {
            bindings.uatu_plugin_extractor().call_init(store, &config_json)
        }
        Exports::Sink(bindings) => bindings.uatu_plugin_sink().call_init(store, &config_json),
    })?;
    if matches!(plugin.exports, Exports::Extractor { .. }) {
        let wants = plugin.call("needs-screenshot", |store, exports| match exports {
            Exports::Extractor { bindings, .. } => bindings
                .uatu_plugin_extractor()
                .call_needs_screenshot(store)
                .map(Ok),
            _ => unreachable_kind(),
        })?;
        if let Exports::Extractor { needs_screenshot, .. } = &mut plugin.exports {
            *needs_screenshot = wants;
        }
    }
    Ok(plugin)
}

fn identify(sandbox: &Sandbox, component: &Component, path: &Path) -> Result<(Kind, Version), Cause> {
    let component_type = component.component_type();
    let names: Vec<String> = component_type
        .exports(&sandbox.engine)
        .map(|(name, _)| name.to_string())
        .collect();
    match contract::identify(names.iter().map(String::as_str)) {
        contract::Identified::Plugin { kind, version } => Ok((kind, version)),
        contract::Identified::Incompatible { found } => Err(Cause::IncompatibleContract {
            found,
            supported: CONTRACT_VERSION.to_string(),
        }),
        contract::Identified::SeveralKinds(kinds) => Err(Cause::SeveralKinds {
            path: path.to_path_buf(),
            kinds: kinds
                .iter()
                .map(|kind| kind.name())
                .collect::<Vec<_>>()
                .join(", "),
        }),
        contract::Identified::NotAPlugin(exports) => Err(Cause::NotAPlugin {
            path: path.to_path_buf(),
            exports: if exports.is_empty() {
                "nothing".into()
            } else {
                exports.join(", ")
            },
        }),
    }
}

/// What a failed call ran into: the memory cap, the deadline, or another trap
/// (with the plugin's output since `since`, where a panic message lands).
fn classify(
    meta: &PluginMeta,
    store: &Store<PluginState>,
    output: &OutputTail,
    error: wasmtime::Error,
    since: u64,
) -> Cause {
    let output = output_since(output, since);
    if store.data().limiter.exceeded {
        Cause::MemoryCap {
            memory_mib: meta.memory_mib,
            output,
        }
    } else if matches!(
        error.downcast_ref::<wasmtime::Trap>(),
        Some(wasmtime::Trap::Interrupt)
    ) {
        Cause::Deadline {
            deadline_ms: meta.deadline_ms,
        }
    } else {
        let message = match error.downcast_ref::<wasmtime::Trap>() {
            Some(trap) => trap.to_string(),
            None => format!("{error:#}"),
        };
        Cause::Trap { message, output }
    }
}

/// How much of a plugin's last lines of output an error message shows.
const OUTPUT_SHOWN_CHARS: usize = 600;

/// A plugin's output (stdout and stderr) since `since`, for an error message: its last
/// four lines, at most their last [`OUTPUT_SHOWN_CHARS`] characters.
fn output_since(output: &OutputTail, since: u64) -> String {
    let contents = output.since(since);
    let text = String::from_utf8_lossy(&contents);
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with("note: run with `RUST_BACKTRACE"))
        .collect();
    if lines.is_empty() {
        return String::new();
    }
    let tail = lines[lines.len().saturating_sub(4)..].join(" / ");
    // The end matters most: a panic's message is the last thing a plugin prints.
    let excess = tail.chars().count().saturating_sub(OUTPUT_SHOWN_CHARS);
    match tail.char_indices().nth(excess) {
        Some((start, _)) if excess > 0 => format!("; its output: …{}", &tail[start..]),
        _ => format!("; its output: {tail}"),
    }
}

impl Plugin {
    /// One call into the plugin under its deadline and memory cap.
    fn call<R>(
        &mut self,
        call: &'static str,
        body: impl FnOnce(&mut Store<PluginState>, &Exports) -> wasmtime::Result<Result<R, String>>,
    ) -> Result<R, PluginError> {
        if self.failed {
            return Err(self.error(Some(call), Cause::Poisoned));
        }
        self.store
            .set_epoch_deadline(crate::wasm::deadline_ticks(std::time::Duration::from_millis(
                self.meta.deadline_ms,
            )));
        self.store.data_mut().limiter.exceeded = false;
        let output_before = self.output.written();
        match body(&mut self.store, &self.exports) {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(message)) => Err(self.error(Some(call), Cause::Failed(message))),
            Err(error) => {
                self.failed = true;
                Err(self.call_error_since(Some(call), error, output_before))
            }
        }
    }

    fn call_error_since(
        &mut self,
        call: Option<&'static str>,
        error: wasmtime::Error,
        since: u64,
    ) -> PluginError {
        let cause = classify(&self.meta, &self.store, &self.output, error, since);
        self.error(call, cause)
    }

    fn error(&self, call: Option<&'static str>, cause: Cause) -> PluginError {
        PluginError {
            plugin: self.meta.name.clone(),
            call,
            cause,
        }
    }
}

#[cfg(test)]
mod tests {
    use wasmtime_wasi::p2::OutputStream;

    use super::*;

    #[test]
    fn an_error_shows_the_end_of_the_output_since_the_call_began() {
        let mut output = sandbox::OutputTail::new(64 * 1024);
        output.write("an earlier call\n".into()).unwrap();
        let mark = output.written();
        output.write(format!("{}\n\n", "x".repeat(1000)).into()).unwrap();
        output.write("panicked: boom\n".into()).unwrap();
        let shown = output_since(&output, mark);
        assert!(shown.starts_with("; its output: …x"), "{shown}");
        assert!(shown.ends_with("xxx / panicked: boom"), "{shown}");
        assert_eq!(
            shown.chars().count(),
            "; its output: …".chars().count() + OUTPUT_SHOWN_CHARS
        );
        assert!(!shown.contains("earlier"));
        assert_eq!(output_since(&output, output.written()), "");
    }
}
