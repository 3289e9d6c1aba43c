//! Replaying a run: the recorded actions instead of the strategy.
//!
//! A [`Script`] is the actions of a run's evaluated steps, in order, each with the
//! signature of the screen it was chosen on. [`crate::run::engine::replay`] runs the
//! ordinary step loop with the script as its action source, so a replay records a
//! run directory like any other. On the simulator, with the recorded seeds and bugs,
//! it reproduces the run step for step; on a real device each step says whether the
//! screen matched the recording ([`Event::ScreenDiverged`] when it did not).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use uatu_device::model::Node;
use uatu_device::selector::Matcher;

use crate::action::{Action, ResolvedAction, Target};
use crate::devices::DeviceOptions;
/// The screen signature a script records and a replay compares: the one plugins see
/// (shape, classes, ids and descriptions; not text, which a clock or a counter changes).
pub use crate::plugin::context::screen_signature;
use crate::run::target::{TargetError, resolve_action};
use crate::settings::{ConfigError, RunConfig, Settings};
use crate::trace::{DeviceMeta, Meta, TraceError, read_meta, read_steps};

/// The version of the `repro.json` format this build writes and reads.
pub const SCRIPT_VERSION: u32 = 1;

/// Why a script cannot be read or built.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    /// The run directory's trace or meta could not be read.
    #[error("{run_dir} is not a readable uatu run")]
    NotARun {
        /// The directory given.
        run_dir: PathBuf,
        /// What is missing or broken.
        #[source]
        source: TraceError,
    },
    /// The script file could not be read or written.
    #[error("{path}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        #[source]
        source: std::io::Error,
    },
    /// The script file is not a `repro.json` this build reads.
    #[error("{path}: not a uatu action script")]
    BadScript {
        /// The file.
        path: PathBuf,
        /// What the parser said.
        #[source]
        source: serde_json::Error,
    },
    /// The script was written by another version of the format.
    #[error("{path}: action script version {found}, this uatu reads version {SCRIPT_VERSION}")]
    Version {
        /// The file.
        path: PathBuf,
        /// The version it declares.
        found: u32,
    },
}

/// What a replay needs of the run it replays: the settings that make the device and
/// the spec behave as they did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Origin {
    /// The run's seed (the spec's `Math.random`, and the simulator's when it has none of its own).
    pub seed: u64,
    /// The spec, as the run was given it.
    pub spec: String,
    /// The device and app, with the device's options.
    pub device: DeviceMeta<DeviceOptions>,
}

impl Origin {
    /// The origin of a recorded run.
    pub fn of(meta: &Meta<DeviceOptions>) -> Origin {
        Origin {
            seed: meta.seed,
            spec: meta.spec.path.clone(),
            device: meta.device.clone(),
        }
    }

    /// The recorded settings as one settings layer. A device kind reads only its own
    /// options, so a replay on another kind (`--device`) is not changed by these.
    pub fn settings(&self) -> Settings {
        Settings {
            spec: Some(PathBuf::from(&self.spec)),
            device: DeviceOptions {
                device: Some(self.device.kind.clone()),
                ..self.device.options.clone()
            },
            bundle_id: Some(self.device.bundle_id.clone()),
            seed: Some(self.seed),
            ..Settings::default()
        }
    }
}

/// One step of a script: the action dispatched (none: the step waited), the
/// generator that offered it, and the screen it was chosen on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScriptStep {
    /// The action as the spec wrote it, targets included; absent: nothing was dispatched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<Action>,
    /// The generator path that offered it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub generator: String,
    /// The screen's signature when the action was chosen ([`screen_signature`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screen: Option<String>,
}

/// The recorded actions of a run (`repro.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Script {
    /// [`SCRIPT_VERSION`].
    pub version: u32,
    /// The settings of the run the actions come from.
    pub origin: Origin,
    /// The property this script violates, when it is a shrunk reproducer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub property: Option<String>,
    /// The actions, one per evaluated step.
    pub steps: Vec<ScriptStep>,
}

impl Script {
    /// The actions of `run_dir`'s evaluated steps before step `until` (all when `None`).
    pub fn from_run(run_dir: &Path, until: Option<u64>) -> Result<Script, ScriptError> {
        let not_a_run = |source| ScriptError::NotARun {
            run_dir: run_dir.to_path_buf(),
            source,
        };
        let meta = read_meta(run_dir).map_err(not_a_run)?;
        let records = read_steps(run_dir).map_err(not_a_run)?;
        let steps = records
            .iter()
            .filter(|record| record.evaluated && until.is_none_or(|until| record.step < until))
            .map(|record| ScriptStep {
                action: record.action.as_ref().map(|resolved| resolved.action.clone()),
                generator: record
                    .action
                    .as_ref()
                    .map(|resolved| resolved.generator.clone())
                    .unwrap_or_default(),
                screen: Some(screen_signature(&record.state.hierarchy)),
            })
            .collect();
        Ok(Script {
            version: SCRIPT_VERSION,
            origin: Origin::of(&meta),
            property: None,
            steps,
        })
    }

    /// Reads a `repro.json`.
    pub fn read(path: &Path) -> Result<Script, ScriptError> {
        let bytes = std::fs::read(path).map_err(|source| ScriptError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        // The version first, so a script of another version is refused as such.
        #[derive(Deserialize)]
        struct Versioned {
            version: u32,
        }
        let bad = |source| ScriptError::BadScript {
            path: path.to_path_buf(),
            source,
        };
        let versioned: Versioned = serde_json::from_slice(&bytes).map_err(bad)?;
        if versioned.version != SCRIPT_VERSION {
            return Err(ScriptError::Version {
                path: path.to_path_buf(),
                found: versioned.version,
            });
        }
        serde_json::from_slice(&bytes).map_err(bad)
    }

    /// Writes it as `repro.json` (atomically).
    pub fn write(&self, path: &Path) -> Result<(), TraceError> {
        crate::trace::write_json_atomically(path, self)
    }

    /// How many actions it dispatches (steps that only waited not counted).
    pub fn action_count(&self) -> usize {
        self.steps.iter().filter(|step| step.action.is_some()).count()
    }
}

/// How a replay runs: the script, and when to stop early.
#[derive(Debug, Clone)]
pub struct Replay {
    /// The actions to dispatch, one per evaluated step.
    pub script: Script,
    /// Stop as soon as this property is violated (shrinking); the script's rest is not dispatched.
    pub stop_at_violation_of: Option<String>,
    /// Stop at the first action whose target is not on screen (shrinking: the candidate fails);
    /// otherwise that action is skipped and the replay goes on.
    pub stop_at_missing_target: bool,
    /// Only the verdicts matter (a shrink's candidate): the spec's generators do not run
    /// (a replay dispatches recorded actions) and no step is written to the trace or
    /// handed to a sink; the run directory gets its `meta.json` and `summary.json` only.
    pub verdicts_only: bool,
}

/// What a replay saw, beside its summary.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReplayReport {
    /// Script steps used (dispatched, waited or skipped) before the replay ended.
    pub consumed: usize,
    /// Steps whose screen differed from the recording.
    pub diverged: Vec<u64>,
    /// The first step whose action's target was not on screen.
    pub target_missing: Option<u64>,
    /// The script steps (indices) whose action was skipped, its target not on screen.
    pub skipped: Vec<usize>,
}

/// Resolves a script's action on the current screen. A selector must match; an element
/// target recorded with its bounds must find an element with those bounds on screen
/// (otherwise the tap would land on whatever is there now).
pub fn resolve_scripted(
    action: &Action,
    generator: String,
    root: &Node,
) -> Result<ResolvedAction, TargetError> {
    for target in action.targets() {
        if let Target::Element {
            x,
            y,
            bounds: Some(bounds),
        } = target
            && !root.descendants().any(|node| node.bounds == *bounds)
        {
            return Err(TargetError::NoMatch(format!("the element at {x},{y}")));
        }
    }
    resolve_action(action, generator, root)
}

/// A selector that finds exactly the element with `bounds` on this screen (by its
/// description, id or text, in that order of preference), if one does.
pub fn selector_for(root: &Node, bounds: &uatu_device::model::Bounds) -> Option<String> {
    let node = root.descendants().find(|node| node.bounds == *bounds)?;
    [("desc", &node.desc), ("id", &node.id), ("text", &node.text)]
        .into_iter()
        .filter(|(_, value)| !value.is_empty())
        .map(|(kind, value)| format!("{kind}:{value}"))
        .find(|text| {
            Matcher::parse(text).is_some_and(|selector| {
                let mut matching = root.descendants().filter(|candidate| selector.matches(candidate));
                matches!((matching.next(), matching.next()), (Some(found), None) if found.bounds == *bounds)
            })
        })
}

/// The configuration of a replay: the command line over the recorded run's settings
/// over `uatu.toml` over the defaults. The recording sits above `uatu.toml` because a
/// replay is of that run: a project file's `sim-bugs` or `seed` must not change it.
/// Limits come from the replay itself (the script's length) or the command line, never
/// from the recording or the file.
pub fn replay_config(flags: Settings, origin: &Origin, file: Settings) -> Result<RunConfig, ConfigError> {
    // Limits are the replay's own (the script's length) unless the command line sets them.
    let max_steps = flags.max_steps;
    let duration_given = flags.duration.is_some();
    let recorded = origin.settings();
    let file = Settings {
        max_steps: None,
        duration: None,
        exit_on_violation: None,
        ..file
    };
    let mut config = RunConfig::resolve(flags.over(recorded), file)?;
    config.max_steps = max_steps;
    if !duration_given {
        config.duration = None;
    }
    config.exit_on_violation = false;
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;
    use uatu_device::model::Bounds;

    fn node(desc: &str, text: &str, bounds: (i32, i32, i32, i32)) -> Node {
        Node {
            desc: desc.into(),
            text: text.into(),
            bounds: Bounds {
                left: bounds.0,
                top: bounds.1,
                right: bounds.2,
                bottom: bounds.3,
            },
            ..Node::default()
        }
    }

    fn screen() -> Node {
        Node {
            children: vec![
                node("submit", "", (0, 0, 10, 10)),
                node("", "Cash", (0, 20, 10, 30)),
                node("", "Cash", (0, 40, 10, 50)),
            ],
            ..node("", "", (0, 0, 100, 100))
        }
    }

    #[test]
    fn a_selector_is_offered_only_where_it_finds_exactly_that_element() {
        let root = screen();
        assert_eq!(
            selector_for(&root, &root.children[0].bounds).as_deref(),
            Some("desc:submit")
        );
        // Two elements read "Cash": no selector tells them apart.
        assert_eq!(selector_for(&root, &root.children[1].bounds), None);
        assert_eq!(selector_for(&root, &node("", "", (5, 5, 6, 6)).bounds), None);
    }

    #[test]
    fn an_element_target_must_still_be_on_screen() {
        let root = screen();
        let tap = |bounds: Bounds| Action::Tap {
            on: Target::Element {
                x: 5,
                y: 5,
                bounds: Some(bounds),
            },
        };
        assert!(resolve_scripted(&tap(root.children[0].bounds), String::new(), &root).is_ok());
        assert!(resolve_scripted(&tap(node("", "", (1, 1, 2, 2)).bounds), String::new(), &root).is_err());
    }

    #[test]
    fn a_web_run_is_replayed_on_its_recorded_page_unless_the_command_line_names_another() {
        let origin = Origin {
            seed: 3,
            spec: "spec.ts".into(),
            device: DeviceMeta {
                kind: "web".into(),
                bundle_id: "app".into(),
                platform: String::new(),
                version: String::new(),
                options: DeviceOptions {
                    web: crate::devices::web::WebOptions {
                        url: Some("http://127.0.0.1:8123/".into()),
                        cdp: None,
                    },
                    ..DeviceOptions::default()
                },
            },
        };
        let url = |flags: Settings| {
            let config = replay_config(flags, &origin, Settings::default()).expect("replay config");
            match config.device {
                crate::devices::DeviceChoice::Web(web) => Some(web.url.to_string()),
                _ => None,
            }
        };
        assert_eq!(
            url(Settings::default()).as_deref(),
            Some("http://127.0.0.1:8123/")
        );
        let elsewhere = Settings {
            device: DeviceOptions {
                web: crate::devices::web::WebOptions {
                    url: Some("http://127.0.0.1:9000/".into()),
                    cdp: None,
                },
                ..DeviceOptions::default()
            },
            ..Settings::default()
        };
        assert_eq!(url(elsewhere).as_deref(), Some("http://127.0.0.1:9000/"));
    }
}
