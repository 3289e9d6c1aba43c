//! `uatu.toml` and its merge with the command line.
//!
//! The file has the same keys as the `uatu run` flags (kebab-case, without the
//! dashes), plus `on-plugin-error` and a `[plugins.<name>]` table per plugin.
//! Flags override the file; the file overrides the defaults. Paths in the file
//! are relative to the file's directory.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::cli::RunArgs;
pub use crate::plugin::OnPluginError;

/// The name of the file read when `--config` is not given.
pub const DEFAULT_CONFIG_FILE: &str = "uatu.toml";

/// Why the configuration could not be used, naming the file or flag at fault.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("{setting}: {message}")]
    Invalid { setting: String, message: String },
}

/// The contents of `uatu.toml`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct FileConfig {
    pub spec: Option<PathBuf>,
    pub device: Option<String>,
    pub sim_bugs: Option<String>,
    pub sim_latency: Option<String>,
    pub sim_seed: Option<u64>,
    pub bundle_id: Option<String>,
    pub seed: Option<u64>,
    pub max_steps: Option<u64>,
    pub duration: Option<String>,
    pub output: Option<PathBuf>,
    /// Plugin files to load, as with `--plugin`.
    #[serde(default)]
    pub plugin: Vec<PathBuf>,
    pub exit_on_violation: Option<bool>,
    pub strict: Option<bool>,
    pub no_screenshots: Option<bool>,
    pub json: Option<bool>,
    pub spec_timeout: Option<String>,
    pub spec_memory: Option<u64>,
    pub on_plugin_error: Option<OnPluginError>,
    /// `[plugins.<name>]`: each plugin's settings; `path` loads it without `--plugin`.
    #[serde(default)]
    pub plugins: BTreeMap<String, toml::Table>,
}

impl FileConfig {
    /// Parses `text` as read from `path`; unknown keys are errors naming the key and line.
    pub fn parse(text: &str, path: &Path) -> Result<FileConfig, ConfigError> {
        let mut config: FileConfig = toml::from_str(text).map_err(|e| ConfigError::Parse {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        let base = path.parent().unwrap_or(Path::new(""));
        let relative_to_file = |p: &mut PathBuf| {
            if p.is_relative() {
                *p = base.join(&*p);
            }
        };
        config.spec.as_mut().map(relative_to_file);
        config.output.as_mut().map(relative_to_file);
        config.plugin.iter_mut().for_each(relative_to_file);
        for table in config.plugins.values_mut() {
            if let Some(toml::Value::String(p)) = table.get_mut("path") {
                let mut path = PathBuf::from(&*p);
                relative_to_file(&mut path);
                *p = path.to_string_lossy().into_owned();
            }
        }
        Ok(config)
    }

    /// Reads `--config`, or `./uatu.toml` if it exists, or nothing.
    pub fn load(explicit: Option<&Path>) -> Result<FileConfig, ConfigError> {
        let path = match explicit {
            Some(path) => path.to_path_buf(),
            None if Path::new(DEFAULT_CONFIG_FILE).is_file() => PathBuf::from(DEFAULT_CONFIG_FILE),
            None => return Ok(FileConfig::default()),
        };
        let text = std::fs::read_to_string(&path).map_err(|source| ConfigError::Read {
            path: path.clone(),
            source,
        })?;
        FileConfig::parse(&text, &path)
    }
}

/// The device to drive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeviceChoice {
    Sim,
    Sidecar(String),
}

impl DeviceChoice {
    pub fn parse(text: &str) -> Result<DeviceChoice, ConfigError> {
        match text.split_once(':') {
            _ if text == "sim" => Ok(DeviceChoice::Sim),
            Some(("sidecar", addr)) if !addr.is_empty() => Ok(DeviceChoice::Sidecar(addr.to_string())),
            _ => Err(ConfigError::Invalid {
                setting: "device".into(),
                message: format!("`{text}` is neither `sim` nor `sidecar:<host:port>`"),
            }),
        }
    }

    pub fn describe(&self) -> String {
        match self {
            DeviceChoice::Sim => "sim".into(),
            DeviceChoice::Sidecar(addr) => format!("sidecar:{addr}"),
        }
    }
}

/// A plugin to load, with its `[plugins.<name>]` settings.
#[derive(Debug, Clone, PartialEq)]
pub struct PluginChoice {
    pub name: String,
    pub path: PathBuf,
    pub config: toml::Table,
}

/// The simulator's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct SimChoice {
    pub bugs: String,
    pub latency: Duration,
    /// `None`: the run's seed.
    pub seed: Option<u64>,
}

/// Everything `uatu run` needs, after merging flags, file and defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct RunConfig {
    pub spec: PathBuf,
    pub device: DeviceChoice,
    pub sim: SimChoice,
    pub bundle_id: String,
    /// 0 means: pick one at random (the run records the one picked).
    pub seed: u64,
    pub max_steps: Option<u64>,
    pub duration: Option<Duration>,
    pub output: PathBuf,
    pub plugins: Vec<PluginChoice>,
    pub exit_on_violation: bool,
    pub strict: bool,
    pub screenshots: bool,
    pub json: bool,
    pub spec_timeout: Duration,
    pub spec_memory_mib: u64,
    pub on_plugin_error: OnPluginError,
}

pub const DEFAULT_MAX_STEPS: u64 = 1000;
pub const DEFAULT_BUNDLE_ID: &str = "app.folio";
pub const DEFAULT_SIM_LATENCY: Duration = Duration::from_millis(1);
pub const DEFAULT_SPEC_TIMEOUT: Duration = Duration::from_secs(2);
pub const DEFAULT_SPEC_MEMORY_MIB: u64 = 256;

impl RunConfig {
    /// Merges the flags over the file over the defaults.
    pub fn resolve(args: &RunArgs, file: FileConfig) -> Result<RunConfig, ConfigError> {
        let spec = args
            .spec
            .clone()
            .or(file.spec)
            .ok_or_else(|| ConfigError::Invalid {
                setting: "spec".into(),
                message: "no spec given: pass --spec <file> or set `spec` in uatu.toml".into(),
            })?;
        let device = DeviceChoice::parse(args.device.as_deref().or(file.device.as_deref()).unwrap_or("sim"))?;
        let sim = SimChoice {
            bugs: args
                .sim_bugs
                .clone()
                .or(file.sim_bugs)
                .unwrap_or_else(|| "all".into()),
            latency: match args.sim_latency.as_deref().or(file.sim_latency.as_deref()) {
                Some(text) => parse_duration("sim-latency", text)?,
                None => DEFAULT_SIM_LATENCY,
            },
            seed: args.sim_seed.or(file.sim_seed),
        };
        let duration = args
            .duration
            .as_deref()
            .or(file.duration.as_deref())
            .map(|text| parse_duration("duration", text))
            .transpose()?;
        let max_steps = match args.max_steps.or(file.max_steps) {
            Some(0) => {
                return Err(ConfigError::Invalid {
                    setting: "max-steps".into(),
                    message: "must be at least 1".into(),
                });
            }
            Some(n) => Some(n),
            None if duration.is_some() => None,
            None => Some(DEFAULT_MAX_STEPS),
        };
        let spec_timeout = match args.spec_timeout.as_deref().or(file.spec_timeout.as_deref()) {
            Some(text) => parse_duration("spec-timeout", text)?,
            None => DEFAULT_SPEC_TIMEOUT,
        };
        let plugins = resolve_plugins(&args.plugins, file.plugin, file.plugins)?;
        Ok(RunConfig {
            spec,
            device,
            sim,
            bundle_id: args
                .bundle_id
                .clone()
                .or(file.bundle_id)
                .unwrap_or_else(|| DEFAULT_BUNDLE_ID.into()),
            seed: args.seed.or(file.seed).unwrap_or(0),
            max_steps,
            duration,
            output: args
                .output
                .clone()
                .or(file.output)
                .unwrap_or_else(|| PathBuf::from("runs")),
            plugins,
            exit_on_violation: args.exit_on_violation || file.exit_on_violation.unwrap_or(false),
            strict: args.strict || file.strict.unwrap_or(false),
            screenshots: !(args.no_screenshots || file.no_screenshots.unwrap_or(false)),
            json: args.json || file.json.unwrap_or(false),
            spec_timeout,
            spec_memory_mib: args
                .spec_memory
                .or(file.spec_memory)
                .unwrap_or(DEFAULT_SPEC_MEMORY_MIB),
            on_plugin_error: file.on_plugin_error.unwrap_or_default(),
        })
    }
}

/// Plugins from `--plugin`, the file's `plugin` list and `[plugins.<name>] path = ...`,
/// each named by its table or its file stem, without duplicates.
fn resolve_plugins(
    flags: &[PathBuf],
    listed: Vec<PathBuf>,
    mut tables: BTreeMap<String, toml::Table>,
) -> Result<Vec<PluginChoice>, ConfigError> {
    let mut choices: Vec<PluginChoice> = Vec::new();
    let mut add = |name: String, path: PathBuf, config: toml::Table| -> Result<(), ConfigError> {
        if let Some(existing) = choices.iter().find(|c| c.name == name) {
            if existing.path == path {
                return Ok(());
            }
            return Err(ConfigError::Invalid {
                setting: format!("plugins.{name}"),
                message: format!(
                    "two plugins are named `{name}`: {} and {}",
                    existing.path.display(),
                    path.display()
                ),
            });
        }
        choices.push(PluginChoice { name, path, config });
        Ok(())
    };
    for path in flags.iter().cloned().chain(listed) {
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
                return Err(ConfigError::Invalid {
                    setting: format!("plugins.{name}.path"),
                    message: "must be a string".into(),
                });
            }
            None => {
                return Err(ConfigError::Invalid {
                    setting: format!("plugins.{name}"),
                    message: format!(
                        "configures plugin `{name}`, which is not loaded: add `path = \"...\"` or pass --plugin {name}.wasm"
                    ),
                });
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
        .ok_or_else(|| ConfigError::Invalid {
            setting: "plugin".into(),
            message: format!("`{}` does not name a plugin file", path.display()),
        })
}

/// Parses `30s`, `5m`, `2h`, `250ms`, or `0`.
pub fn parse_duration(setting: &str, text: &str) -> Result<Duration, ConfigError> {
    if text.trim() == "0" {
        return Ok(Duration::ZERO);
    }
    humantime::parse_duration(text.trim()).map_err(|e| ConfigError::Invalid {
        setting: setting.into(),
        message: format!("`{text}` is not a duration such as 30s, 5m or 2h: {e}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<FileConfig, ConfigError> {
        FileConfig::parse(text, Path::new("/project/uatu.toml"))
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
        let file = parse("spec = \"spec.ts\"\nseed = 3\nmax-steps = 10\nstrict = true\n").expect("parses");
        let args = RunArgs {
            seed: Some(9),
            ..RunArgs::default()
        };
        let config = RunConfig::resolve(&args, file).expect("resolves");
        assert_eq!(config.seed, 9);
        assert_eq!(config.max_steps, Some(10));
        assert!(config.strict);
        assert_eq!(config.spec, PathBuf::from("/project/spec.ts"));
        assert_eq!(config.device, DeviceChoice::Sim);
        assert!(config.screenshots);
    }

    #[test]
    fn a_duration_alone_lifts_the_step_limit() {
        let args = RunArgs {
            spec: Some("s.ts".into()),
            duration: Some("5m".into()),
            ..RunArgs::default()
        };
        let config = RunConfig::resolve(&args, FileConfig::default()).expect("resolves");
        assert_eq!(config.duration, Some(Duration::from_secs(300)));
        assert_eq!(config.max_steps, None);
    }

    #[test]
    fn plugins_take_their_table_by_file_stem() {
        let file =
            parse("[plugins.coverage-guided]\nexploration = 0.3\n[plugins.junit]\npath = \"p/junit.wasm\"\n")
                .expect("parses");
        let args = RunArgs {
            spec: Some("s.ts".into()),
            plugins: vec!["build/coverage-guided.wasm".into()],
            ..RunArgs::default()
        };
        let config = RunConfig::resolve(&args, file).expect("resolves");
        let names: Vec<_> = config.plugins.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["coverage-guided", "junit"]);
        assert_eq!(
            config.plugins[0].config.get("exploration"),
            Some(&toml::Value::Float(0.3))
        );
        assert_eq!(config.plugins[1].path, PathBuf::from("/project/p/junit.wasm"));
    }

    #[test]
    fn a_table_for_a_plugin_that_is_not_loaded_is_an_error() {
        let file = parse("[plugins.junit]\nreport = \"x\"\n").expect("parses");
        let args = RunArgs {
            spec: Some("s.ts".into()),
            ..RunArgs::default()
        };
        let error = RunConfig::resolve(&args, file).unwrap_err().to_string();
        assert!(error.contains("plugins.junit"), "{error}");
    }

    #[test]
    fn bad_values_name_their_setting() {
        for (args, setting) in [
            (
                RunArgs {
                    duration: Some("soon".into()),
                    ..RunArgs::default()
                },
                "duration",
            ),
            (
                RunArgs {
                    device: Some("usb".into()),
                    ..RunArgs::default()
                },
                "device",
            ),
            (
                RunArgs {
                    max_steps: Some(0),
                    ..RunArgs::default()
                },
                "max-steps",
            ),
        ] {
            let args = RunArgs {
                spec: Some("s.ts".into()),
                ..args
            };
            let error = RunConfig::resolve(&args, FileConfig::default())
                .unwrap_err()
                .to_string();
            assert!(error.starts_with(setting), "{error}");
        }
        let error = RunConfig::resolve(&RunArgs::default(), FileConfig::default())
            .unwrap_err()
            .to_string();
        assert!(error.contains("--spec"), "{error}");
    }

    #[test]
    fn durations_accept_the_documented_forms() {
        assert_eq!(parse_duration("d", "30s").expect("30s"), Duration::from_secs(30));
        assert_eq!(parse_duration("d", "2h").expect("2h"), Duration::from_secs(7200));
        assert_eq!(parse_duration("d", "0").expect("0"), Duration::ZERO);
        assert_eq!(
            parse_duration("d", "250ms").expect("ms"),
            Duration::from_millis(250)
        );
    }
}
