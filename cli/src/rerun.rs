//! The command line that repeats a run, recorded as its `rerun` (in `meta.json`, the
//! summary and the last line `uatu run` prints).
//!
//! It is written from the settings layer the command was given, through the command
//! line's own definition: each setting becomes the flag clap defines for it, so a
//! setting added to the layer (a device kind's new option) is repeated with no code
//! here. The seed is the one the run used (a `--seed 0` picks one), and the settings
//! file read, if any, is named with `--config`.

use std::path::Path;

use clap::CommandFactory as _;
use uatu::settings::Settings;

use crate::args::{Cli, ReplayArgs};

/// `uatu run` with the flags `flags` gave, the file read and the seed used.
pub fn run_line(flags: &Settings, config_file: Option<&Path>, seed: u64) -> String {
    let layer = Settings {
        seed: Some(seed),
        ..flags.clone()
    };
    let mut words = words(&["uatu", "run"]);
    words.extend(config_flag(config_file));
    words.extend(setting_flags("run", &layer));
    shell_line(&words)
}

/// `uatu replay` as `args` asked for it.
pub fn replay_args_line(args: &ReplayArgs) -> String {
    let mut words = words(&["uatu", "replay"]);
    if let Some(run) = &args.run {
        words.push(run.display().to_string());
    }
    if let Some(script) = &args.script {
        words.extend(["--script".into(), script.display().to_string()]);
    }
    if let Some(until) = args.until {
        words.extend(["--until".into(), until.to_string()]);
    }
    words.extend(config_flag(args.config.as_deref()));
    words.extend(setting_flags("replay", &args.settings));
    shell_line(&words)
}

/// `uatu replay` of a shrunk reproducer's directory.
pub fn replay_line(run_dir: &Path) -> String {
    shell_line(&["uatu".into(), "replay".into(), run_dir.display().to_string()])
}

fn words(words: &[&str]) -> Vec<String> {
    words.iter().map(|word| word.to_string()).collect()
}

fn config_flag(file: Option<&Path>) -> Vec<String> {
    file.map(|file| vec!["--config".into(), file.display().to_string()])
        .unwrap_or_default()
}

/// The flags of `subcommand` that give `layer`'s settings, in the order `--help` lists
/// them. A setting is found by its flag's id (the field's name, as the key in
/// `uatu.toml` with `_` for `-`); `[plugins.<name>]` tables have no flag and come from
/// the settings file.
pub fn setting_flags(subcommand: &str, layer: &Settings) -> Vec<String> {
    let serde_json::Value::Object(values) = serde_json::to_value(layer).unwrap_or_default() else {
        return Vec::new();
    };
    let command = Cli::command();
    let Some(command) = command.find_subcommand(subcommand) else {
        return Vec::new();
    };
    let mut flags = Vec::new();
    for arg in command.get_arguments() {
        let key = arg.get_id().as_str().replace('_', "-");
        let (Some(long), Some(value)) = (arg.get_long(), values.get(&key)) else {
            continue;
        };
        let flag = format!("--{long}");
        match value {
            serde_json::Value::Bool(true) => flags.push(flag),
            serde_json::Value::Bool(false) => flags.push(format!("{flag}=false")),
            serde_json::Value::String(text) => flags.extend([flag, text.clone()]),
            serde_json::Value::Number(number) => flags.extend([flag, number.to_string()]),
            serde_json::Value::Array(items) => {
                for item in items {
                    let text = match item {
                        serde_json::Value::String(text) => text.clone(),
                        other => other.to_string(),
                    };
                    flags.extend([flag.clone(), text]);
                }
            }
            serde_json::Value::Null | serde_json::Value::Object(_) => {}
        }
    }
    flags
}

/// `words` as one line a POSIX shell reads back as those words.
pub fn shell_line(words: &[String]) -> String {
    words
        .iter()
        .map(|word| shell_word(word))
        .collect::<Vec<_>>()
        .join(" ")
}

fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use clap::Parser as _;
    use uatu::devices::DeviceOptions;
    use uatu::devices::android::AndroidOptions;
    use uatu::devices::sim::SimOptions;
    use uatu::devices::web::WebOptions;
    use uatu::plugin::OnPluginError;
    use uatu::settings::HierarchyMode;
    use uatu::trace::TraceFormat;

    use super::*;
    use crate::args::Command;

    /// Every setting that has a flag, set.
    fn every_setting() -> Settings {
        Settings {
            spec: Some("specs/my spec.ts".into()),
            device: DeviceOptions {
                device: Some("android:emulator-5554".into()),
                sim: SimOptions {
                    sim_bugs: Some("stale-total,float-cents".into()),
                    sim_latency: Some("2ms".into()),
                    sim_seed: Some(11),
                },
                web: WebOptions {
                    url: Some("http://127.0.0.1:8080/?q=a&b=c".into()),
                    cdp: Some("ws://127.0.0.1:9222/devtools/browser/x".into()),
                },
                android: AndroidOptions {
                    sidecar: Some("/opt/uatu/sidecar-maestro.jar".into()),
                    sidecar_fake_device: Some("builtin".into()),
                },
            },
            hierarchy: Some(HierarchyMode::Sidecar),
            bundle_id: Some("app.folio".into()),
            seed: Some(3),
            max_steps: Some(500),
            duration: Some("10m".into()),
            output: Some("it's here".into()),
            plugin: vec!["junit".into(), PathBuf::from("plugins/my.wasm")],
            exit_on_violation: Some(true),
            strict: Some(false),
            no_screenshots: Some(true),
            trace_format: Some(TraceFormat::Full),
            json: Some(true),
            spec_timeout: Some("3s".into()),
            spec_memory: Some(128),
            on_plugin_error: Some(OnPluginError::Disable),
            plugins: Default::default(),
        }
    }

    /// Splits a line the way `shell_line` quotes it (single quotes only).
    fn shell_split(line: &str) -> Vec<String> {
        let mut words = Vec::new();
        let mut word: Option<String> = None;
        let mut quoted = false;
        let mut chars = line.chars();
        while let Some(c) = chars.next() {
            match c {
                '\'' => {
                    quoted = !quoted;
                    word.get_or_insert_with(String::new);
                }
                '\\' if !quoted => word.get_or_insert_with(String::new).extend(chars.next()),
                ' ' if !quoted => words.extend(word.take()),
                c => word.get_or_insert_with(String::new).push(c),
            }
        }
        words.extend(word);
        words
    }

    #[test]
    fn the_run_line_gives_back_every_setting_and_the_file() {
        let line = run_line(&every_setting(), Some(Path::new("conf/uatu.toml")), 42);
        let words = shell_split(&line);
        assert_eq!(
            words[..4],
            ["uatu", "run", "--config", "conf/uatu.toml"],
            "{line}"
        );
        let Command::Run(args) = Cli::try_parse_from(&words).expect("the line parses").command else {
            panic!("not a run: {line}")
        };
        let expected = Settings {
            seed: Some(42),
            ..every_setting()
        };
        assert_eq!(args.settings, expected, "{line}");
        assert_eq!(args.config, Some(PathBuf::from("conf/uatu.toml")));
    }

    #[test]
    fn only_what_was_given_is_repeated() {
        let flags = Settings {
            spec: Some("spec.ts".into()),
            ..Settings::default()
        };
        assert_eq!(run_line(&flags, None, 7), "uatu run --spec spec.ts --seed 7");
    }

    #[test]
    fn words_a_shell_would_split_are_quoted() {
        let words = words(&["a b", "it's", "plain-1.0/x:y", ""]);
        assert_eq!(shell_line(&words), r"'a b' 'it'\''s' plain-1.0/x:y ''");
    }
}
