//! Exit codes, used by every subcommand.

use std::fmt;

/// What the process tells its caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[repr(u8)]
pub enum Status {
    /// No property was violated.
    Ok = 0,
    /// A property was violated (or, under `--strict`, left unmet).
    Violated = 1,
    /// Bad usage, configuration or spec.
    Usage = 2,
    /// The device, the simulator or other infrastructure failed.
    Infrastructure = 3,
}

impl Status {
    /// The exit status an error asks for: the outermost [`Failure`] in its
    /// chain, else [`Status::Usage`] (most unclassified errors are bad input).
    pub fn of_error(error: &anyhow::Error) -> Status {
        error
            .chain()
            .find_map(|cause| cause.downcast_ref::<Failure>())
            .map_or(Status::Usage, |failure| failure.status)
    }
}

/// An error marked with the exit status it must produce.
#[derive(Debug)]
pub struct Failure {
    pub status: Status,
    pub message: String,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Failure {}

/// Marks an error as a device or infrastructure failure (exit code 3).
pub fn infrastructure(error: impl Into<anyhow::Error>) -> anyhow::Error {
    classify(Status::Infrastructure, error.into())
}

/// Marks an error as a usage, configuration or spec error (exit code 2).
pub fn usage(error: impl Into<anyhow::Error>) -> anyhow::Error {
    classify(Status::Usage, error.into())
}

fn classify(status: Status, error: anyhow::Error) -> anyhow::Error {
    // Keep the original chain for the report, and put the marker outermost.
    let message = format!("{error:#}");
    anyhow::Error::new(Failure { status, message })
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context as _;

    #[test]
    fn unclassified_errors_are_usage_errors() {
        assert_eq!(Status::of_error(&anyhow::anyhow!("bad flag")), Status::Usage);
    }

    #[test]
    fn classification_survives_added_context() {
        let error = Err::<(), _>(infrastructure(anyhow::anyhow!("connection refused")))
            .context("calling Health on 127.0.0.1:1")
            .unwrap_err();
        assert_eq!(Status::of_error(&error), Status::Infrastructure);
        assert!(format!("{error:#}").contains("connection refused"));
    }
}
