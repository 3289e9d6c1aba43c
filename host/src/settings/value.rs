//! One setting's value read or refused: the error that names the setting (or the file)
//! at fault, and the value parsers every settings layer shares.

use std::path::PathBuf;
use std::time::Duration;

/// Why the settings cannot be used, naming the file or setting at fault.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The settings file could not be read.
    #[error("cannot read {path}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The settings file is not valid TOML or has an unknown key (the message names key and line).
    #[error("{path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's message, with the line.
        message: String,
    },
    /// A setting has a value uatu cannot use.
    #[error("{setting}: {message}")]
    Invalid {
        /// The setting, spelled as in `uatu.toml` (`max-steps`, `plugins.junit`).
        setting: String,
        /// What is wrong and what would be right.
        message: String,
    },
}

impl ConfigError {
    pub(crate) fn invalid(setting: impl Into<String>, message: impl Into<String>) -> ConfigError {
        ConfigError::Invalid {
            setting: setting.into(),
            message: message.into(),
        }
    }
}

/// Parses `30s`, `5m`, `2h`, `250ms`, or `0`, naming `setting` when it cannot.
pub fn parse_duration(setting: &str, text: &str) -> Result<Duration, ConfigError> {
    if text.trim() == "0" {
        return Ok(Duration::ZERO);
    }
    humantime::parse_duration(text.trim()).map_err(|e| {
        ConfigError::invalid(
            setting,
            format!("`{text}` is not a duration such as 30s, 5m or 2h: {e}"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_accept_the_documented_forms() {
        assert_eq!(parse_duration("d", "30s").expect("30s"), Duration::from_secs(30));
        assert_eq!(parse_duration("d", "2h").expect("2h"), Duration::from_secs(7200));
        assert_eq!(parse_duration("d", "0").expect("0"), Duration::ZERO);
        assert_eq!(
            parse_duration("d", "250ms").expect("ms"),
            Duration::from_millis(250)
        );
        let error = parse_duration("budget", "soon")
            .expect_err("not a duration")
            .to_string();
        assert!(error.starts_with("budget: "), "{error}");
    }
}
