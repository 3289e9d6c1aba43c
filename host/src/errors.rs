//! The library's errors and the one mapping from an error to an exit code.
//!
//! Every fallible public function of the library returns [`Error`] or one of the
//! typed errors it wraps; [`Error::exit_status`] is the only place that decides
//! which exit code a failure earns. Messages do not repeat their source: print an
//! error with its chain (`{:#}` through `anyhow`, or [`chain`]).

use crate::devices::ConnectError;
use crate::inspect::InspectError;
use crate::plugin::PluginError;
use crate::settings::ConfigError;
use crate::spec::{LoadError, SpecError};
use crate::trace::TraceError;

/// What the process tells its caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[repr(u8)]
pub enum ExitStatus {
    /// No property was violated.
    Ok = 0,
    /// A property was violated (or, under `--strict`, left unmet).
    Violated = 1,
    /// Bad usage, configuration, spec or plugin.
    Usage = 2,
    /// The device, the simulator, the disk or other infrastructure failed.
    Infrastructure = 3,
}

/// A failure of the library, by the part that failed; the sources are kept.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The settings (flags, `uatu.toml`) cannot be used.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The spec cannot be read, built or loaded.
    #[error(transparent)]
    SpecLoad(#[from] LoadError),
    /// The spec failed while running (a deadline, the memory cap, a throw at load).
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// A property of the spec is not a formula the host can read.
    #[error("spec {spec}: property `{property}` is not a formula")]
    Property {
        /// The spec file.
        spec: String,
        /// The property's name.
        property: String,
        /// Why the formula could not be read.
        #[source]
        source: serde_json::Error,
    },
    /// A plugin cannot be loaded, or failed during the run.
    #[error(transparent)]
    Plugin(#[from] PluginError),
    /// A plugin crate could not be built or scaffolded.
    #[error(transparent)]
    PluginBuild(#[from] crate::plugin::BuildError),
    /// The device could not be connected.
    #[error(transparent)]
    Connect(#[from] ConnectError),
    /// The device failed during the run.
    #[error(transparent)]
    Device(#[from] uatu_device::DeviceError),
    /// The app's SDK connection failed in a way the run cannot recover from.
    #[error(transparent)]
    Agent(#[from] uatu_device::agent::AgentError),
    /// The device is up but says it is not ready.
    #[error("{device} is not ready")]
    DeviceNotReady {
        /// How the device describes itself.
        device: String,
    },
    /// The run directory (trace, screenshots, summary) cannot be read or written.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// A directory given as a recorded run is not one (or its trace is unreadable).
    #[error("{run_dir} is not a readable uatu run")]
    NotARun {
        /// The directory given.
        run_dir: std::path::PathBuf,
        /// What is missing or broken.
        #[source]
        source: TraceError,
    },
    /// A file the library was asked to read or write.
    #[error("{action} {path}")]
    Io {
        /// `reading`, `writing`, `creating` ...
        action: &'static str,
        /// The file.
        path: std::path::PathBuf,
        /// What the OS said.
        #[source]
        source: std::io::Error,
    },
    /// `uatu inspect` or `uatu report` failed.
    #[error(transparent)]
    Inspect(#[from] InspectError),
    /// A replay's action script cannot be read or built.
    #[error(transparent)]
    Script(#[from] crate::run::replay::ScriptError),
    /// A violation cannot be shrunk.
    #[error(transparent)]
    Shrink(#[from] crate::shrink::ShrinkError),
    /// The async runtime could not be started.
    #[error("cannot start the async runtime")]
    Runtime(#[source] std::io::Error),
    /// `uatu init` wrote nothing.
    #[error(transparent)]
    Init(#[from] crate::init::InitError),
}

impl Error {
    /// The exit code this failure earns: 2 for what the user can fix in their
    /// command, settings, spec or plugin; 3 for the device and the machine.
    pub fn exit_status(&self) -> ExitStatus {
        match self {
            Error::Config(_)
            | Error::SpecLoad(_)
            | Error::Spec(_)
            | Error::Property { .. }
            | Error::NotARun { .. }
            | Error::Plugin(_)
            | Error::PluginBuild(_)
            | Error::Script(_) => ExitStatus::Usage,
            // Nothing to shrink, or a violation that does not reproduce: the request cannot be met.
            Error::Shrink(crate::shrink::ShrinkError::Write { .. }) => ExitStatus::Infrastructure,
            // The replay's own failure decides: a device that cannot be reached is not the user's.
            Error::Shrink(crate::shrink::ShrinkError::ReplayFailed { source, .. }) => source.exit_status(),
            Error::Shrink(_) => ExitStatus::Usage,
            Error::Connect(_)
            | Error::Device(_)
            | Error::Agent(_)
            | Error::DeviceNotReady { .. }
            | Error::Trace(_)
            | Error::Io { .. }
            | Error::Runtime(_) => ExitStatus::Infrastructure,
            Error::Init(crate::init::InitError::Write { .. }) => ExitStatus::Infrastructure,
            Error::Init(_) => ExitStatus::Usage,
            Error::Inspect(error) if error.is_usage() => ExitStatus::Usage,
            Error::Inspect(_) => ExitStatus::Infrastructure,
        }
    }

    /// A failure to read or write `path`.
    pub fn io(action: &'static str, path: &std::path::Path, source: std::io::Error) -> Error {
        Error::Io {
            action,
            path: path.to_path_buf(),
            source,
        }
    }
}

/// An error and its sources on one line, `outer: inner: innermost`: how the trace
/// and reports show an error as text.
pub fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_disk_is_an_infrastructure_failure_shown_once() {
        let error = Error::from(TraceError::io(
            std::path::Path::new("runs/x/trace.jsonl"),
            std::io::Error::from_raw_os_error(28),
        ));
        assert_eq!(error.exit_status(), ExitStatus::Infrastructure);
        let text = chain(&error);
        assert_eq!(text.matches("No space left on device").count(), 1, "{text}");
        assert!(text.starts_with("runs/x/trace.jsonl: "), "{text}");
    }

    #[test]
    fn settings_errors_are_usage_errors() {
        let error = Error::from(ConfigError::invalid("max-steps", "must be at least 1"));
        assert_eq!(error.exit_status(), ExitStatus::Usage);
    }
}
