//! `uatu plugin new`: a plugin crate that builds with `uatu plugin build`.

use std::path::{Path, PathBuf};

use super::build::BuildError;
use super::contract::{CONTRACT_VERSION, Kind};

/// Creates the crate `dir` (its last component is the crate's name) and returns it.
pub fn scaffold(dir: &Path, kind: Kind) -> Result<PathBuf, BuildError> {
    let name = dir
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .filter(|name| {
            !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        })
        .ok_or_else(|| {
            BuildError(format!(
                "{:?} is not a valid crate name (letters, digits, `-`, `_`)",
                dir
            ))
        })?;
    if dir.exists() {
        return Err(BuildError(format!("{} already exists", dir.display())));
    }
    let sdk = sdk_dependency();
    let manifest = format!(
        r#"[package]
name = "{name}"
version = "0.1.0"
edition = "2024"
publish = false

[lib]
crate-type = ["cdylib"]

[dependencies]
{sdk}

# A plugin is its own workspace: it builds for wasm32-wasip1, apart from any host crate.
[workspace]

[profile.release]
opt-level = "s"
lto = true
codegen-units = 1
panic = "abort"
strip = true
"#
    );
    std::fs::create_dir_all(dir.join("src"))
        .map_err(|error| BuildError(format!("cannot create {}: {error}", dir.display())))?;
    let write = |path: PathBuf, text: &str| {
        std::fs::write(&path, text)
            .map_err(|error| BuildError(format!("cannot write {}: {error}", path.display())))
    };
    write(dir.join("Cargo.toml"), &manifest)?;
    write(dir.join(".gitignore"), "/target\n*.wasm\n")?;
    write(dir.join("src").join("lib.rs"), source(kind))?;
    Ok(dir.to_path_buf())
}

/// The SDK by path when `UATU_PLUGIN_SDK_PATH` names a checkout's `plugin-sdk`,
/// else by version: the SDK's version is the contract version it implements.
fn sdk_dependency() -> String {
    match std::env::var("UATU_PLUGIN_SDK_PATH") {
        Ok(path) if !path.is_empty() => format!("uatu-plugin-sdk = {{ path = {:?} }}", path),
        _ => format!("uatu-plugin-sdk = \"{CONTRACT_VERSION}\""),
    }
}

fn source(kind: Kind) -> &'static str {
    match kind {
        Kind::Strategy => STRATEGY,
        Kind::Extractor => EXTRACTOR,
        Kind::Sink => SINK,
    }
}

const STRATEGY: &str = r#"//! A uatu exploration strategy. See https://example.invalid/uatu/docs/plugins.md
use uatu_plugin_sdk::strategy::*;

struct MyStrategy {
    steps: u64,
}

impl Strategy for MyStrategy {
    fn init(_config: Config) -> Result<Self, String> {
        Ok(MyStrategy { steps: 0 })
    }

    fn choose(&mut self, _ctx: &StepContext, candidates: &[Candidate]) -> Result<Choice, String> {
        self.steps += 1;
        // Round-robin over the candidates; replace with your own policy.
        let index = (self.steps as usize) % candidates.len();
        Ok(Choice::new(candidates[index].id))
    }
}

uatu_plugin_sdk::export_strategy!(MyStrategy);
"#;

const EXTRACTOR: &str = r#"//! A uatu extractor: specs read its values as `state.snapshots["<plugin>.<name>"]`.
use uatu_plugin_sdk::extractor::*;
use uatu_plugin_sdk::serde_json::json;

struct MyExtractor;

impl Extractor for MyExtractor {
    fn init(_config: Config) -> Result<Self, String> {
        Ok(MyExtractor)
    }

    fn extract(&mut self, ctx: &StepContext, _screenshot: Option<&Screenshot>) -> Result<Vec<NamedValue>, String> {
        let clickable = ctx.hierarchy.nodes().filter(|node| node.is_clickable()).count();
        Ok(vec![NamedValue::new("clickable", json!(clickable))])
    }
}

uatu_plugin_sdk::export_extractor!(MyExtractor);
"#;

const SINK: &str = r#"//! A uatu trace sink: it may write files only in its own directory, seen as `/`.
use std::io::Write;

use uatu_plugin_sdk::serde_json::Value;
use uatu_plugin_sdk::sink::*;

struct MySink {
    steps: u64,
}

impl Sink for MySink {
    fn init(_config: Config) -> Result<Self, String> {
        Ok(MySink { steps: 0 })
    }

    fn on_run_start(&mut self, _meta: &Value) -> Result<(), String> {
        Ok(())
    }

    // `record.step`, `.time_ms`, `.evaluated`, `.action`, `.violations`; `record.parse()`
    // parses the whole trace line (costly: it holds the hierarchy) when you need it.
    fn on_step(&mut self, _record: &StepRecord) -> Result<(), String> {
        self.steps += 1;
        Ok(())
    }

    fn on_run_end(&mut self, _summary: &Value) -> Result<(), String> {
        let mut file = std::fs::File::create("/steps.txt").map_err(|e| e.to_string())?;
        writeln!(file, "{}", self.steps).map_err(|e| e.to_string())
    }
}

uatu_plugin_sdk::export_sink!(MySink);
"#;
