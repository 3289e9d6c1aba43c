//! The planted bugs of the Folio model, each switchable on its own.

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

/// One planted defect. Each is a realistic bug a property in a spec can catch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Bug {
    /// Account names differing only in case or surrounding spaces are accepted as new.
    DuplicateAccountNames,
    /// The home total is not refreshed after a debit until a later navigation to home.
    StaleTotal,
    /// Saving a transaction whose note is over 40 characters throws an uncaught exception.
    CrashOnLongNote,
    /// Amounts with more than two decimals are stored as fractional cents.
    FloatCents,
    /// After ≥3 accounts with ≥2 transactions each and a logout/login, one ledger shows a row twice.
    DeepLedgerDuplication,
    /// One valid login in three stays on the login screen, authenticating, for 5 s.
    SlowLogin,
}

impl Bug {
    /// Every planted bug: what `all` switches on and what an unknown name's error lists.
    pub const ALL: [Bug; 6] = [
        Bug::DuplicateAccountNames,
        Bug::StaleTotal,
        Bug::CrashOnLongNote,
        Bug::FloatCents,
        Bug::DeepLedgerDuplication,
        Bug::SlowLogin,
    ];

    /// The kebab-case name `--bugs` and `--sim-bugs` use for it.
    pub fn name(self) -> &'static str {
        match self {
            Bug::DuplicateAccountNames => "duplicate-account-names",
            Bug::StaleTotal => "stale-total",
            Bug::CrashOnLongNote => "crash-on-long-note",
            Bug::FloatCents => "float-cents",
            Bug::DeepLedgerDuplication => "deep-ledger-duplication",
            Bug::SlowLogin => "slow-login",
        }
    }
}

impl fmt::Display for Bug {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A bug list named a bug the simulator does not plant; the message lists the valid names.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown planted bug `{name}`; valid: all, none, {}", valid_names())]
pub struct UnknownBug {
    /// The name that matched no bug.
    pub name: String,
}

fn valid_names() -> String {
    Bug::ALL
        .iter()
        .map(|bug| bug.name())
        .collect::<Vec<_>>()
        .join(", ")
}

impl FromStr for Bug {
    type Err = UnknownBug;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Bug::ALL
            .into_iter()
            .find(|bug| bug.name() == name)
            .ok_or_else(|| UnknownBug {
                name: name.to_owned(),
            })
    }
}

/// The set of planted bugs switched on.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Bugs(BTreeSet<Bug>);

impl Bugs {
    /// Every planted bug switched on: the simulator's default.
    pub fn all() -> Bugs {
        Bugs(Bug::ALL.into_iter().collect())
    }

    /// A correct Folio, for checking that a spec finds nothing where there is nothing.
    pub fn none() -> Bugs {
        Bugs(BTreeSet::new())
    }

    /// Parses `all`, `none` or a comma-separated list of bug names.
    pub fn parse(spec: &str) -> Result<Bugs, UnknownBug> {
        match spec.trim() {
            "all" => Ok(Bugs::all()),
            "none" | "" => Ok(Bugs::none()),
            list => list
                .split(',')
                .map(str::trim)
                .filter(|name| !name.is_empty())
                .map(Bug::from_str)
                .collect::<Result<_, _>>()
                .map(Bugs),
        }
    }

    /// Just `bug`, so a test can show that a property catches that one defect.
    pub fn only(bug: Bug) -> Bugs {
        Bugs([bug].into_iter().collect())
    }

    /// Whether `bug` is switched on.
    pub fn has(&self, bug: Bug) -> bool {
        self.0.contains(&bug)
    }

    /// The bugs switched on, in the order of [`Bug::ALL`].
    pub fn iter(&self) -> impl Iterator<Item = Bug> + '_ {
        self.0.iter().copied()
    }
}

impl fmt::Display for Bugs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("none");
        }
        if *self == Bugs::all() {
            return f.write_str("all");
        }
        let names: Vec<_> = self.iter().map(Bug::name).collect();
        f.write_str(&names.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_none_and_lists_parse() {
        assert_eq!(Bugs::parse("all").unwrap(), Bugs::all());
        assert_eq!(Bugs::parse("none").unwrap(), Bugs::none());
        let two = Bugs::parse("stale-total, slow-login").unwrap();
        assert!(two.has(Bug::StaleTotal) && two.has(Bug::SlowLogin) && !two.has(Bug::FloatCents));
        assert_eq!(two.to_string(), "stale-total,slow-login");
    }

    #[test]
    fn an_unknown_name_lists_the_valid_ones() {
        let error = Bugs::parse("stale-total,typo").unwrap_err();
        assert_eq!(error.name, "typo");
        let message = error.to_string();
        for bug in Bug::ALL {
            assert!(message.contains(bug.name()), "{message}");
        }
    }
}
