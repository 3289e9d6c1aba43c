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

    /// The length of the shortest reproducer known for this bug with the example spec's
    /// actions (`examples/folio/spec.ts`, where typing into a field is one action): how
    /// many steps (each dispatching one action) from a fresh install lead to a step that
    /// violates a property catching it, the step spent signing in (300 ms) included.
    /// The yardstick `uatu shrink` is measured against (docs/benchmarks.md); derived by
    /// hand from the model and matched by shrunk reproducers:
    ///
    /// - `duplicate-account-names`: 10 — sign in (email, password, submit) and one step
    ///   while it authenticates; add an account (add, name, create); add it again with the
    ///   name in another case or with spaces (add, name, create).
    /// - `stale-total`: 11 — sign in (4); add an account (3); open its ledger, new
    ///   transaction, an amount, save (a debit is the default).
    /// - `crash-on-long-note`: 12 — as `stale-total` with a note over 40 characters typed.
    /// - `float-cents`: 11 — as `stale-total` with the amount `1.005`.
    /// - `deep-ledger-duplication`: 43 — sign in (4); three accounts (9); in each ledger two
    ///   transactions and back (3 × 8); log out; sign in (4); open the ledger the seed chose.
    /// - `slow-login`: 10 when the seed makes the first valid login the slow one — sign in
    ///   (3) and seven steps of at most 500 ms each on the login screen, past the 3 s the
    ///   spec allows — and 5 more for each valid login before the slow one (log out, sign
    ///   in, a step while it authenticates): 10, 15 or 20.
    pub fn shortest_reproducer(self) -> usize {
        match self {
            Bug::DuplicateAccountNames => 10,
            Bug::StaleTotal => 11,
            Bug::CrashOnLongNote => 12,
            Bug::FloatCents => 11,
            Bug::DeepLedgerDuplication => 43,
            // The seed's slow phase decides between 10, 15 and 20; the middle one.
            Bug::SlowLogin => 15,
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
