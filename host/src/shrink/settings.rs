//! How a shrink may spend its time, as a settings layer: `[shrink]` in `uatu.toml` and in
//! the built-in defaults, `--budget` and `--retries` of `uatu shrink`.

use serde::{Deserialize, Serialize};

/// One layer of the shrink's settings; every field optional.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ShrinkSettings {
    /// Wall time allowed, e.g. `5m`; when it runs out (or at Ctrl-C) the best reproducer so far is kept.
    #[cfg_attr(feature = "cli", arg(long, value_name = "DURATION"))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<String>,

    /// Replays of each candidate before it is rejected, for a device that can be flaky; a deterministic device (the simulator) replays each once unless this is given.
    #[cfg_attr(feature = "cli", arg(long, value_name = "N"))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retries: Option<u32>,
}

impl ShrinkSettings {
    /// This layer over `lower`: a value set here wins.
    pub fn over(self, lower: ShrinkSettings) -> ShrinkSettings {
        ShrinkSettings {
            budget: self.budget.or(lower.budget),
            retries: self.retries.or(lower.retries),
        }
    }
}
