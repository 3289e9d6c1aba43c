//! Run settings in one layer type.
//!
//! [`Settings`] holds every setting of `uatu run` as an option. The same type is read
//! from `uatu.toml` ([`Settings::from_file`]) and, in the binary, from the command line
//! (with the `cli` feature it derives `clap::Args`, its doc comments being the help).
//! [`RunConfig::resolve`] layers the command line over the file over the built-in
//! defaults (`defaults.toml`, embedded) and checks every value, naming the setting at fault.

mod value;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::devices::{DeviceChoice, DeviceOptions};
use crate::plugin::{OnPluginError, PluginChoice, builtin};
use crate::shrink::ShrinkSettings;
use crate::trace::TraceFormat;

pub use value::{ConfigError, parse_duration};

/// The name of the file read when no other is given.
pub const DEFAULT_CONFIG_FILE: &str = "uatu.toml";

/// The built-in defaults, the lowest layer.
const DEFAULTS_TOML: &str = include_str!("defaults.toml");

/// One layer of `uatu run` settings: the command line, `uatu.toml` or the defaults.
/// Every field is optional; a layer leaves unset what the layer below decides.
///
/// The device kinds' options are one [`DeviceOptions`] layer, flattened in (so they are
/// flags and keys of their own, spelled as before).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(rename_all = "kebab-case")]
pub struct Settings {
    /// The spec: a `.ts` or `.js` file (built on the fly and cached) or a `.wasm` module from `uatu build`.
    #[cfg_attr(feature = "cli", arg(long, value_name = "FILE"))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spec: Option<PathBuf>,

    /// `--device` and each device kind's own options.
    #[cfg_attr(feature = "cli", command(flatten))]
    #[serde(flatten)]
    pub device: DeviceOptions,

    /// Where each step's hierarchy comes from: `auto` (the app's SDK reads its own windows when it can, the driver's dump otherwise) or `sidecar` (always the driver's dump, e.g. `uiautomator dump` on Android).
    #[cfg_attr(feature = "cli", arg(long, value_name = "FROM"))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hierarchy: Option<HierarchyMode>,

    /// The app's bundle id (Android package).
    #[cfg_attr(feature = "cli", arg(long, value_name = "ID"))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bundle_id: Option<String>,

    /// The seed of every random choice; 0 picks one at random (recorded in the trace).
    #[cfg_attr(feature = "cli", arg(long, value_name = "N"))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,

    /// Stop after this many steps (no limit when only `--duration` is given).
    #[cfg_attr(feature = "cli", arg(long, value_name = "N"))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_steps: Option<u64>,

    /// Stop after this much wall time, e.g. `30s`, `5m`, `2h`.
    #[cfg_attr(feature = "cli", arg(long, value_name = "DURATION"))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration: Option<String>,

    /// Where run directories are created.
    #[cfg_attr(feature = "cli", arg(long, value_name = "DIR"))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<PathBuf>,

    /// A plugin to load: a `.wasm` component or a built-in plugin's name (`uatu plugin list`); repeat for several. Configured under `[plugins.<name>]` in uatu.toml.
    #[cfg_attr(feature = "cli", arg(long = "plugin", value_name = "FILE|NAME"))]
    #[serde(default)]
    pub plugin: Vec<PathBuf>,

    /// Stop at the first violated property.
    #[cfg_attr(feature = "cli", arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true"))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_on_violation: Option<bool>,

    /// Treat `unmet` (an unbounded `eventually` never satisfied) as a violation: exit code 1.
    #[cfg_attr(feature = "cli", arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true"))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strict: Option<bool>,

    /// Do not capture screenshots (faster; the trace has none).
    #[cfg_attr(feature = "cli", arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true"))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_screenshots: Option<bool>,

    /// How trace.jsonl is written: `compact` (each distinct hierarchy once, per step only what changed) or `full` (every step's whole record on its line).
    #[cfg_attr(feature = "cli", arg(long, value_name = "FORMAT"))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace_format: Option<TraceFormat>,

    /// Print the summary as JSON on stdout.
    #[cfg_attr(feature = "cli", arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true"))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub json: Option<bool>,

    /// Deadline for one call into the spec, e.g. `2s`.
    #[cfg_attr(feature = "cli", arg(long, value_name = "DURATION"))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spec_timeout: Option<String>,

    /// Memory cap of the spec's sandbox, in MiB.
    #[cfg_attr(feature = "cli", arg(long, value_name = "MIB"))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spec_memory: Option<u64>,

    /// When a plugin fails during the run: `stop` the run, or `disable` the plugin and go on.
    #[cfg_attr(feature = "cli", arg(long, value_name = "WHAT"))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on_plugin_error: Option<OnPluginError>,

    /// `[plugins.<name>]` in uatu.toml: each plugin's settings; `path` loads it without `--plugin`.
    #[cfg_attr(feature = "cli", arg(skip))]
    #[serde(default)]
    pub plugins: BTreeMap<String, toml::Table>,

    /// `[shrink]` in uatu.toml: what `uatu shrink` and `uatu run --shrink` may spend (`uatu shrink` takes them as flags).
    #[cfg_attr(feature = "cli", arg(skip))]
    #[serde(default)]
    pub shrink: ShrinkSettings,
}

impl Settings {
    /// Parses `text` as read from `path`; an unknown key is an error naming the key and line.
    /// Relative paths in the file are made relative to the file's directory.
    pub fn parse(text: &str, path: &Path) -> Result<Settings, ConfigError> {
        let mut settings = read_toml(text).map_err(|message| ConfigError::Parse {
            path: path.to_path_buf(),
            message,
        })?;
        let base = path.parent().unwrap_or(Path::new(""));
        let relative_to_file = |p: &mut PathBuf| {
            if p.is_relative() {
                *p = base.join(&*p);
            }
        };
        settings.spec.as_mut().map(relative_to_file);
        settings.output.as_mut().map(relative_to_file);
        settings.device.relative_to(base);
        // A plugin is a file relative to this one, unless it is a built-in plugin's
        // name and no such file is there.
        let plugin_relative_to_file = |p: &mut PathBuf| {
            let names_a_builtin = builtin::is_builtin_name(p) && !base.join(&*p).is_file();
            if !names_a_builtin {
                relative_to_file(p);
            }
        };
        settings.plugin.iter_mut().for_each(plugin_relative_to_file);
        for table in settings.plugins.values_mut() {
            if let Some(toml::Value::String(p)) = table.get_mut("path") {
                let mut path = PathBuf::from(&*p);
                plugin_relative_to_file(&mut path);
                *p = path.to_string_lossy().into_owned();
            }
        }
        Ok(settings)
    }

    /// The settings file `uatu run` reads: `explicit`, or `./uatu.toml` if it exists.
    pub fn file_to_read(explicit: Option<&Path>) -> Option<PathBuf> {
        match explicit {
            Some(path) => Some(path.to_path_buf()),
            None if Path::new(DEFAULT_CONFIG_FILE).is_file() => Some(PathBuf::from(DEFAULT_CONFIG_FILE)),
            None => None,
        }
    }

    /// Reads [`Settings::file_to_read`]; an empty layer when there is none.
    pub fn from_file(explicit: Option<&Path>) -> Result<Settings, ConfigError> {
        let Some(path) = Settings::file_to_read(explicit) else {
            return Ok(Settings::default());
        };
        let text = std::fs::read_to_string(&path).map_err(|source| ConfigError::Read {
            path: path.clone(),
            source,
        })?;
        Settings::parse(&text, &path)
    }

    /// The built-in defaults (`defaults.toml`).
    pub fn defaults() -> &'static Settings {
        static DEFAULTS: OnceLock<Settings> = OnceLock::new();
        DEFAULTS.get_or_init(|| {
            toml::from_str(DEFAULTS_TOML)
                .unwrap_or_else(|error| panic!("the embedded defaults.toml is invalid: {error}"))
        })
    }

    /// The default of `key` (a setting as spelled in uatu.toml) as text, for `--help`.
    /// A key inside a table is `table.key` (e.g. `shrink.budget`); an empty list has no default.
    pub fn default_text(key: &str) -> Option<String> {
        let defaults = toml::Table::try_from(Settings::defaults()).ok()?;
        let mut parts = key.split('.');
        let mut value = defaults.get(parts.next()?)?;
        for part in parts {
            value = value.as_table()?.get(part)?;
        }
        match value {
            toml::Value::String(text) => Some(text.clone()),
            toml::Value::Array(items) if items.is_empty() => None,
            toml::Value::Table(_) => None,
            other => Some(other.to_string()),
        }
    }

    /// This layer over `lower`: a value set here wins; lists are joined (this layer's
    /// first); `[plugins.<name>]` tables are merged key by key.
    pub fn over(self, lower: Settings) -> Settings {
        let mut plugins = lower.plugins;
        for (name, table) in self.plugins {
            plugins.entry(name).or_default().extend(table);
        }
        Settings {
            spec: self.spec.or(lower.spec),
            device: self.device.over(lower.device),
            hierarchy: self.hierarchy.or(lower.hierarchy),
            bundle_id: self.bundle_id.or(lower.bundle_id),
            seed: self.seed.or(lower.seed),
            max_steps: self.max_steps.or(lower.max_steps),
            duration: self.duration.or(lower.duration),
            output: self.output.or(lower.output),
            plugin: self.plugin.into_iter().chain(lower.plugin).collect(),
            exit_on_violation: self.exit_on_violation.or(lower.exit_on_violation),
            strict: self.strict.or(lower.strict),
            no_screenshots: self.no_screenshots.or(lower.no_screenshots),
            trace_format: self.trace_format.or(lower.trace_format),
            json: self.json.or(lower.json),
            spec_timeout: self.spec_timeout.or(lower.spec_timeout),
            spec_memory: self.spec_memory.or(lower.spec_memory),
            on_plugin_error: self.on_plugin_error.or(lower.on_plugin_error),
            plugins,
            shrink: self.shrink.over(lower.shrink),
        }
    }
}

/// Reads a settings file's text, or says what is wrong with it and on which line.
///
/// [`Settings`] takes the device kinds' options in with serde's `flatten`, which cannot
/// refuse unknown keys itself and forgets where a value stood. So the file is read as a
/// table first (syntax errors name their line), a value that does not fit is found by
/// reading each key alone, and a key is unknown when the settings read do not write it
/// back (every setting is written when it is set).
fn read_toml(text: &str) -> Result<Settings, String> {
    use serde::Deserialize as _;
    let table: toml::Table = toml::from_str(text).map_err(|error| error.to_string())?;
    let read = |table: toml::Table| Settings::deserialize(toml::Value::Table(table));
    let lines = key_lines(text);
    let line = |key: &str| {
        lines
            .get(key)
            .map_or_else(String::new, |line| format!("line {line}: "))
    };
    let mut keys: Vec<&String> = table.keys().collect();
    keys.sort_by_key(|key| lines.get(key.as_str()).copied().unwrap_or(usize::MAX));
    let settings = match read(table.clone()) {
        Ok(settings) => settings,
        Err(whole) => {
            for key in &keys {
                let alone = toml::Table::from_iter([((*key).clone(), table[key.as_str()].clone())]);
                if let Err(error) = read(alone) {
                    return Err(format!("{}`{key}`: {error}", line(key)));
                }
            }
            return Err(whole.to_string());
        }
    };
    let written = toml::Table::try_from(&settings).map_err(|error| error.to_string())?;
    match keys.into_iter().find(|key| !written.contains_key(key.as_str())) {
        Some(unknown) => Err(format!("{}unknown key `{unknown}`", line(unknown))),
        None => Ok(settings),
    }
}

/// The line (from 1) of each top-level key of a TOML document.
fn key_lines(text: &str) -> BTreeMap<String, usize> {
    let Ok(document) = toml::de::DeTable::parse(text) else {
        return BTreeMap::new();
    };
    document
        .get_ref()
        .keys()
        .map(|key| {
            let line = text[..key.span().start].matches('\n').count() + 1;
            (key.get_ref().to_string(), line)
        })
        .collect()
}

/// Where a step's hierarchy comes from (`hierarchy` in uatu.toml, `--hierarchy`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum HierarchyMode {
    /// The app's own windows when its SDK advertises `hierarchy` (milliseconds instead of
    /// a `uiautomator dump`'s seconds), the driver's dump when it does not or when the app
    /// shows no window of its own.
    #[default]
    Auto,
    /// Always the driver's dump (the sidecar's `uiautomator dump` on Android).
    Sidecar,
}

/// Everything `uatu run` needs, resolved and checked: plain values for the engine.
#[derive(Debug, Clone, PartialEq)]
pub struct RunConfig {
    /// The spec file (`.ts`, `.js` or `.wasm`).
    pub spec: PathBuf,
    /// The device to drive, with its kind's own settings.
    pub device: DeviceChoice,
    /// Where each step's hierarchy comes from.
    pub hierarchy: HierarchyMode,
    /// The app's bundle id.
    pub bundle_id: String,
    /// The seed of every random choice (never 0: a `seed` of 0 is resolved to one picked at random).
    pub seed: u64,
    /// Stop after this many steps, if set.
    pub max_steps: Option<u64>,
    /// Stop after this much wall time, if set.
    pub duration: Option<Duration>,
    /// Where run directories are created.
    pub output: PathBuf,
    /// The plugins to load, each with its settings.
    pub plugins: Vec<PluginChoice>,
    /// Stop at the first violated property.
    pub exit_on_violation: bool,
    /// `unmet` fails the run too.
    pub strict: bool,
    /// Capture a screenshot every step.
    pub screenshots: bool,
    /// How `trace.jsonl` is written.
    pub trace_format: TraceFormat,
    /// The binary prints the summary as JSON (the engine does not print).
    pub json: bool,
    /// Deadline of one call into the spec.
    pub spec_timeout: Duration,
    /// Memory cap of the spec's sandbox, in MiB.
    pub spec_memory_mib: u64,
    /// What a plugin failure does to the run.
    pub on_plugin_error: OnPluginError,
    /// The command line that repeats this run, recorded as `rerun` in `meta.json` and
    /// the summary. The caller writes it (the library spells no flag); empty: none.
    pub rerun: String,
}

impl RunConfig {
    /// Layers `flags` over `file` over the defaults and checks the result.
    pub fn resolve(flags: Settings, file: Settings) -> Result<RunConfig, ConfigError> {
        let chosen = flags.over(file);
        // A duration alone lifts the default step limit: "run for 5 minutes" means that.
        let lift_step_limit = chosen.duration.is_some() && chosen.max_steps.is_none();
        let settings = chosen.over(Settings::defaults().clone());
        let required = |setting: &str| ConfigError::invalid(setting, "missing from the built-in defaults");

        let spec = settings.spec.ok_or_else(|| {
            ConfigError::invalid(
                "spec",
                "no spec given: pass --spec <file> or set `spec` in uatu.toml",
            )
        })?;
        let seed = match settings.seed.ok_or_else(|| required("seed"))? {
            // Odd, so that it is never 0 again.
            0 => rand::random::<u64>() | 1,
            seed => seed,
        };
        let device = DeviceChoice::resolve(&settings.device, seed)?;
        let duration = settings
            .duration
            .as_deref()
            .map(|text| parse_duration("duration", text))
            .transpose()?;
        let max_steps = match settings.max_steps {
            Some(0) => return Err(ConfigError::invalid("max-steps", "must be at least 1")),
            _ if lift_step_limit => None,
            steps => steps,
        };
        let spec_timeout = parse_duration(
            "spec-timeout",
            settings
                .spec_timeout
                .as_deref()
                .ok_or_else(|| required("spec-timeout"))?,
        )?;
        Ok(RunConfig {
            spec,
            device,
            hierarchy: settings.hierarchy.ok_or_else(|| required("hierarchy"))?,
            bundle_id: settings.bundle_id.ok_or_else(|| required("bundle-id"))?,
            seed,
            max_steps,
            duration,
            output: settings.output.ok_or_else(|| required("output"))?,
            plugins: resolve_plugins(settings.plugin, settings.plugins)?,
            exit_on_violation: settings.exit_on_violation.unwrap_or_default(),
            strict: settings.strict.unwrap_or_default(),
            screenshots: !settings.no_screenshots.unwrap_or_default(),
            trace_format: settings.trace_format.ok_or_else(|| required("trace-format"))?,
            json: settings.json.unwrap_or_default(),
            spec_timeout,
            spec_memory_mib: settings.spec_memory.ok_or_else(|| required("spec-memory"))?,
            on_plugin_error: settings.on_plugin_error.unwrap_or_default(),
            rerun: String::new(),
        })
    }
}

/// Plugins from `--plugin`, the file's `plugin` list and `[plugins.<name>] path = ...`,
/// each named by its table or its file stem, without duplicates.
fn resolve_plugins(
    files: Vec<PathBuf>,
    mut tables: BTreeMap<String, toml::Table>,
) -> Result<Vec<PluginChoice>, ConfigError> {
    let mut choices: Vec<PluginChoice> = Vec::new();
    let mut add = |name: String, path: PathBuf, config: toml::Table| -> Result<(), ConfigError> {
        if let Some(existing) = choices.iter().find(|c| c.name == name) {
            if existing.path == path {
                return Ok(());
            }
            return Err(ConfigError::invalid(
                format!("plugins.{name}"),
                format!(
                    "two plugins are named `{name}`: {} and {}",
                    existing.path.display(),
                    path.display()
                ),
            ));
        }
        choices.push(PluginChoice { name, path, config });
        Ok(())
    };
    for path in files {
        let name = plugin_name(&path)?;
        let config = tables.remove(&name).unwrap_or_default();
        add(name, path, config)?;
    }
    for (name, mut config) in tables {
        // A table without `path` configures a plugin that is not loaded: say so
        // rather than silently ignoring it.
        match config.remove("path") {
            Some(toml::Value::String(path)) => add(name, PathBuf::from(path), config)?,
            Some(_) => {
                return Err(ConfigError::invalid(
                    format!("plugins.{name}.path"),
                    "must be a string",
                ));
            }
            None => {
                let load = if builtin::find(&name).is_some() {
                    format!("pass --plugin {name} (the built-in plugin)")
                } else {
                    format!("pass --plugin {name}.wasm")
                };
                return Err(ConfigError::invalid(
                    format!("plugins.{name}"),
                    format!(
                        "configures plugin `{name}`, which is not loaded: add `path = \"...\"` or {load}"
                    ),
                ));
            }
        }
    }
    Ok(choices)
}

/// A plugin's name: its file stem, e.g. `coverage-guided` for `plugins/coverage-guided.wasm`.
pub fn plugin_name(path: &Path) -> Result<String, ConfigError> {
    path.file_stem()
        .map(|stem| stem.to_string_lossy().into_owned())
        .filter(|stem| !stem.is_empty())
        .ok_or_else(|| {
            ConfigError::invalid(
                "plugin",
                format!("`{}` does not name a plugin file", path.display()),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Settings, ConfigError> {
        Settings::parse(text, Path::new("/project/uatu.toml"))
    }

    fn flags(spec: &str) -> Settings {
        Settings {
            spec: Some(spec.into()),
            ..Settings::default()
        }
    }

    #[test]
    fn the_embedded_defaults_parse_and_resolve() {
        let config = RunConfig::resolve(flags("s.ts"), Settings::default()).expect("resolves");
        assert_eq!(config.max_steps, Some(1000));
        assert_eq!(config.output, PathBuf::from("runs"));
        assert_eq!(config.spec_timeout, Duration::from_secs(2));
        assert!(matches!(config.device, DeviceChoice::Sim(_)));
        assert!(config.screenshots);
        assert_eq!(Settings::default_text("max-steps").as_deref(), Some("1000"));
        assert_eq!(Settings::default_text("spec-timeout").as_deref(), Some("2s"));
        assert_eq!(Settings::default_text("sim-bugs").as_deref(), Some("all"));
        assert_eq!(Settings::default_text("shrink.budget").as_deref(), Some("5m"));
        assert_eq!(Settings::default_text("plugin"), None, "no plugin by default");
    }

    #[test]
    fn the_simulators_built_in_defaults_are_its_own() {
        let defaults = &Settings::defaults().device.sim;
        let choice = crate::devices::sim::resolve(None, defaults, 1).expect("the defaults resolve");
        let simulator = uatu_sim::SimConfig::default();
        assert_eq!((choice.bugs, choice.latency), (simulator.bugs, simulator.latency));
    }

    #[test]
    fn hierarchy_is_auto_by_default_and_a_setting_of_both_layers() {
        let config = RunConfig::resolve(flags("s.ts"), Settings::default()).expect("resolves");
        assert_eq!(config.hierarchy, HierarchyMode::Auto);
        let file = parse("hierarchy = \"sidecar\"\n").expect("parses");
        let config = RunConfig::resolve(flags("s.ts"), file.clone()).expect("resolves");
        assert_eq!(config.hierarchy, HierarchyMode::Sidecar);
        let over = Settings {
            hierarchy: Some(HierarchyMode::Auto),
            ..flags("s.ts")
        };
        assert_eq!(
            RunConfig::resolve(over, file).expect("resolves").hierarchy,
            HierarchyMode::Auto
        );
        let error = parse("hierarchy = \"uiautomator\"\n").unwrap_err().to_string();
        assert!(error.contains("hierarchy") && error.contains("line 1"), "{error}");
    }

    #[test]
    fn unknown_keys_name_the_key_and_line() {
        let error = parse("seed = 3\nmax-step = 10\n").unwrap_err().to_string();
        assert!(error.contains("/project/uatu.toml"), "{error}");
        assert!(error.contains("line 2"), "{error}");
        assert!(error.contains("max-step"), "{error}");
    }

    #[test]
    fn flags_override_the_file_and_the_file_overrides_defaults() {
        let file = parse("spec = \"spec.ts\"\nseed = 3\nmax-steps = 10\nstrict = true\njson = true\n")
            .expect("parses");
        let flags = Settings {
            seed: Some(9),
            json: Some(false),
            ..Settings::default()
        };
        let config = RunConfig::resolve(flags, file).expect("resolves");
        assert_eq!(config.seed, 9);
        assert_eq!(config.max_steps, Some(10));
        assert!(config.strict);
        assert!(!config.json, "a flag turns off what the file turned on");
        assert_eq!(config.spec, PathBuf::from("/project/spec.ts"));
    }

    #[test]
    fn a_duration_alone_lifts_the_step_limit() {
        let flags = Settings {
            duration: Some("5m".into()),
            ..flags("s.ts")
        };
        let config = RunConfig::resolve(flags, Settings::default()).expect("resolves");
        assert_eq!(config.duration, Some(Duration::from_secs(300)));
        assert_eq!(config.max_steps, None);
    }

    #[test]
    fn on_plugin_error_is_a_setting_of_both_layers() {
        let file = parse("on-plugin-error = \"disable\"\n").expect("parses");
        let config = RunConfig::resolve(flags("s.ts"), file.clone()).expect("resolves");
        assert_eq!(config.on_plugin_error, OnPluginError::Disable);
        let flags = Settings {
            on_plugin_error: Some(OnPluginError::Stop),
            ..flags("s.ts")
        };
        assert_eq!(
            RunConfig::resolve(flags, file).expect("resolves").on_plugin_error,
            OnPluginError::Stop
        );
    }

    #[test]
    fn plugins_take_their_table_by_file_stem() {
        let file =
            parse("[plugins.coverage-guided]\nexploration = 0.3\n[plugins.junit]\npath = \"p/junit.wasm\"\n")
                .expect("parses");
        let flags = Settings {
            plugin: vec!["build/coverage-guided.wasm".into()],
            ..flags("s.ts")
        };
        let config = RunConfig::resolve(flags, file).expect("resolves");
        let names: Vec<_> = config.plugins.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["coverage-guided", "junit"]);
        assert_eq!(
            config.plugins[0].config.get("exploration"),
            Some(&toml::Value::Float(0.3))
        );
        assert_eq!(config.plugins[1].path, PathBuf::from("/project/p/junit.wasm"));
    }

    #[test]
    fn a_built_in_plugin_name_in_the_file_stays_a_name_and_a_path_becomes_relative() {
        let file = parse(
            "plugin = [\"junit\", \"my.wasm\"]\n[plugins.coverage-guided]\npath = \"coverage-guided\"\n",
        )
        .expect("parses");
        let config = RunConfig::resolve(flags("s.ts"), file).expect("resolves");
        let paths: Vec<_> = config.plugins.iter().map(|p| p.path.clone()).collect();
        assert_eq!(
            paths,
            [
                PathBuf::from("junit"),
                PathBuf::from("/project/my.wasm"),
                PathBuf::from("coverage-guided")
            ]
        );
    }

    #[test]
    fn a_table_for_a_plugin_that_is_not_loaded_is_an_error() {
        let file = parse("[plugins.junit]\nreport = \"x\"\n").expect("parses");
        let error = RunConfig::resolve(flags("s.ts"), file).unwrap_err().to_string();
        assert!(error.contains("plugins.junit"), "{error}");
    }

    #[test]
    fn bad_values_name_their_setting() {
        for (layer, setting) in [
            (
                Settings {
                    duration: Some("soon".into()),
                    ..Settings::default()
                },
                "duration",
            ),
            (
                Settings {
                    device: DeviceOptions {
                        device: Some("usb".into()),
                        ..DeviceOptions::default()
                    },
                    ..Settings::default()
                },
                "device",
            ),
            (
                Settings {
                    max_steps: Some(0),
                    ..Settings::default()
                },
                "max-steps",
            ),
            (
                Settings {
                    device: DeviceOptions {
                        sim: crate::devices::sim::SimOptions {
                            sim_latency: Some("slow".into()),
                            ..Default::default()
                        },
                        ..DeviceOptions::default()
                    },
                    ..Settings::default()
                },
                "sim-latency",
            ),
        ] {
            let error = RunConfig::resolve(layer.over(flags("s.ts")), Settings::default())
                .unwrap_err()
                .to_string();
            assert!(error.starts_with(setting), "{error}");
        }
        let error = RunConfig::resolve(Settings::default(), Settings::default())
            .unwrap_err()
            .to_string();
        assert!(error.contains("--spec"), "{error}");
    }
}
