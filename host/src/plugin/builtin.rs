//! The first-party plugins (`plugins/`) built into this binary: `build.rs` builds their
//! workspace once, with the spec provider, and embeds each core module deflate-compressed;
//! here a module becomes a component the first time it is asked for. A run loads one by
//! name (`--plugin coverage-guided`) as it loads a file, through the same compiled-component
//! cache.

use std::path::Path;
use std::sync::OnceLock;

use super::build::componentize;

/// A plugin built into this binary.
#[derive(Debug)]
pub struct BuiltIn {
    /// Its name: what `--plugin` and `[plugins.<name>]` call it (its crate's name).
    pub name: &'static str,
    /// What it does, in one line.
    pub summary: &'static str,
    /// The keys of its `[plugins.<name>]` table, each with its default.
    pub config: &'static [ConfigKey],
    compressed: &'static [u8],
    component: OnceLock<Result<Vec<u8>, String>>,
}

/// One key of a built-in plugin's `[plugins.<name>]` table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct ConfigKey {
    /// The key.
    pub key: &'static str,
    /// Its default, as `docs/plugins.md` gives it.
    pub default: &'static str,
}

/// Why a built-in plugin's component could not be made (a broken build of uatu).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the built-in plugin `{name}` is damaged: {message}")]
pub struct BuiltInError {
    /// The plugin's name.
    pub name: &'static str,
    /// What failed: decompressing or componentizing its embedded module.
    pub message: String,
}

/// A `--plugin` value that is neither a file nor a built-in plugin.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{given}` is neither a plugin file nor a built-in plugin (built-in: {}); \
     give a path to a .wasm component or one of those names (`uatu plugin list`)",
    names().join(", ")
)]
pub struct UnknownPlugin {
    /// The value as given.
    pub given: String,
}

macro_rules! embedded {
    ($name:literal) => {
        include_bytes!(concat!(
            env!("OUT_DIR"),
            "/builtin-plugins/",
            $name,
            ".wasm.deflate"
        ))
    };
}

const fn key(key: &'static str, default: &'static str) -> ConfigKey {
    ConfigKey { key, default }
}

static BUILT_INS: [BuiltIn; 3] = [
    BuiltIn {
        name: "coverage-guided",
        summary: "a novelty-seeking strategy that plans over the screens it has learnt",
        config: &[
            key("exploration", "1.0"),
            key("optimism", "2.0"),
            key("optimism-weighting", "1.0"),
            key("novelty-weight", "1.0"),
            key("state-weight", "1.5"),
            key("rarity", "1.0"),
            key("learning-rate", "0.25"),
            key("discount", "0.3"),
            key("seed", "1"),
        ],
        compressed: embedded!("coverage-guided"),
        component: OnceLock::new(),
    },
    BuiltIn {
        name: "junit",
        summary: "writes plugins/junit/junit.xml: one test case per property",
        config: &[
            key("suite", "the spec's file name"),
            key("unmet-is-failure", "false"),
        ],
        compressed: embedded!("junit"),
        component: OnceLock::new(),
    },
    BuiltIn {
        name: "screen-signature",
        summary: "adds the screen's signature, the distinct screens so far and whether it is blank",
        config: &[
            key("blank-detection", "true"),
            key("blank-threshold", "0.98"),
            key("blank-tolerance", "8"),
        ],
        compressed: embedded!("screen-signature"),
        component: OnceLock::new(),
    },
];

/// Every built-in plugin, by name.
pub fn all() -> &'static [BuiltIn] {
    &BUILT_INS
}

/// The built-in plugin called `name`.
pub fn find(name: &str) -> Option<&'static BuiltIn> {
    BUILT_INS.iter().find(|builtin| builtin.name == name)
}

/// The built-in plugins' names.
pub fn names() -> Vec<&'static str> {
    BUILT_INS.iter().map(|builtin| builtin.name).collect()
}

impl BuiltIn {
    /// Its component's bytes, made once per process from the embedded module.
    pub fn component(&self) -> Result<&[u8], BuiltInError> {
        self.component
            .get_or_init(|| {
                let module = miniz_oxide::inflate::decompress_to_vec(self.compressed)
                    .map_err(|error| format!("cannot decompress its module: {error}"))?;
                componentize(&module).map_err(|error| error.to_string())
            })
            .as_deref()
            .map_err(|message| BuiltInError {
                name: self.name,
                message: message.clone(),
            })
    }
}

/// Where a plugin comes from.
#[derive(Debug, Clone, Copy)]
pub enum Origin<'a> {
    /// A component file.
    File(&'a Path),
    /// A plugin built into this binary.
    BuiltIn(&'static BuiltIn),
}

/// What a `--plugin` value (or a `[plugins.<name>]` table's `path`) names: an existing
/// file is a file; otherwise a built-in plugin's name is that plugin; anything else
/// that looks like a bare name (no directory, no extension) is an [`UnknownPlugin`],
/// and a path that does not exist stays a path (loading it says it is missing).
pub fn origin(path: &Path) -> Result<Origin<'_>, UnknownPlugin> {
    if path.is_file() {
        return Ok(Origin::File(path));
    }
    let text = path.to_string_lossy();
    if let Some(builtin) = find(&text) {
        return Ok(Origin::BuiltIn(builtin));
    }
    let bare_name = path.components().count() == 1 && path.extension().is_none();
    if bare_name {
        return Err(UnknownPlugin {
            given: text.into_owned(),
        });
    }
    Ok(Origin::File(path))
}

/// Whether `path` is a built-in plugin's bare name (which a settings file does not
/// make relative to its directory, as it does a file's path).
pub fn is_builtin_name(path: &Path) -> bool {
    find(&path.to_string_lossy()).is_some()
}
