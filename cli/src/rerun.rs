//! The command line that repeats a run, recorded as its `rerun` (in `meta.json`, the
//! summary and the last line `uatu run` prints).
//!
//! It is written from the settings layer the command was given, through the command's
//! own definition: each setting becomes the flag clap defines for it, so a setting added
//! to the layer (a device kind's new option) is repeated with no code here. The settings
//! file read, if any, is named with `--config`.

use std::path::Path;

use uatu::settings::Settings;

/// `words` (the command and its own arguments, e.g. `uatu replay runs/x`), then
/// `--config FILE` if a settings file was read, then the flags of the command `A` that
/// give `layer`'s settings, as one line for a POSIX shell.
pub fn line<A: clap::Args>(mut words: Vec<String>, config_file: Option<&Path>, layer: &Settings) -> String {
    if let Some(file) = config_file {
        words.extend(["--config".into(), file.display().to_string()]);
    }
    words.extend(setting_flags(&A::augment_args(clap::Command::new("uatu")), layer));
    shell_line(&words)
}

/// `uatu replay` of a shrunk reproducer's directory.
pub fn replay_line(run_dir: &Path) -> String {
    shell_line(&["uatu".into(), "replay".into(), run_dir.display().to_string()])
}

/// The flags of `command` that give `layer`'s settings, in the order `--help` lists
/// them. A setting is found by its flag's id (the field's name: the key in `uatu.toml`
/// with `_` for `-`); `[plugins.<name>]` and `[shrink]` tables have no flag here and
/// come from the settings file.
fn setting_flags(command: &clap::Command, layer: &Settings) -> Vec<String> {
    let serde_json::Value::Object(values) = serde_json::to_value(layer).unwrap_or_default() else {
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
fn shell_line(words: &[String]) -> String {
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

/// Splits a line the way [`line`] quotes it (single quotes, and `\'` between them).
#[cfg(test)]
pub fn shell_split(line: &str) -> Vec<String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_a_shell_would_split_are_quoted_and_read_back() {
        let words: Vec<String> = ["a b", "it's", "plain-1.0/x:y", ""].map(String::from).to_vec();
        let line = shell_line(&words);
        assert_eq!(line, r"'a b' 'it'\''s' plain-1.0/x:y ''");
        assert_eq!(shell_split(&line), words);
    }
}
