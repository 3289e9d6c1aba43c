//! The plugin contract's identity: which interface a component exports and at
//! which version, and whether this host can run it.

use std::fmt;

/// The version of `uatu:plugin` this host implements (`plugin-sdk/wit/plugin.wit`).
pub const CONTRACT_VERSION: Version = Version {
    major: 0,
    minor: 2,
    patch: 0,
};

const PACKAGE: &str = "uatu:plugin";

/// What a plugin does, told by the one contract interface it exports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Chooses the step's action among the spec's candidates (`uatu:plugin/strategy`).
    Strategy,
    /// Adds values to the state before the spec reads it (`uatu:plugin/extractor`).
    Extractor,
    /// Receives the run's meta, every step record and the summary (`uatu:plugin/sink`).
    Sink,
}

impl Kind {
    /// The kind's name as the contract's interface, `meta.json` and the CLI spell it.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Strategy => "strategy",
            Kind::Extractor => "extractor",
            Kind::Sink => "sink",
        }
    }

    fn from_interface(name: &str) -> Option<Kind> {
        match name {
            "strategy" => Some(Kind::Strategy),
            "extractor" => Some(Kind::Extractor),
            "sink" => Some(Kind::Sink),
            _ => None,
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A version of the plugin contract, `major.minor.patch`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    /// Incompatible changes bump it (from 1.0 on).
    pub major: u64,
    /// Before 1.0, incompatible changes bump it; from 1.0 on, additions.
    pub minor: u64,
    /// Before 1.0, additions bump it; from 1.0 on, fixes.
    pub patch: u64,
}

impl Version {
    /// `x.y.z` (pre-release and build suffixes are not part of the contract's versions).
    pub fn parse(text: &str) -> Option<Version> {
        let mut parts = text.split('.').map(|part| part.parse::<u64>().ok());
        let version = Version {
            major: parts.next()??,
            minor: parts.next()??,
            patch: parts.next()??,
        };
        parts.next().is_none().then_some(version)
    }

    /// The contract's rule: the same major version and, while it is 0, the same minor
    /// version (Cargo's caret rule). Additions bump the minor (or, before 1.0, the patch).
    pub fn is_compatible_with(self, host: Version) -> bool {
        self.major == host.major && (self.major != 0 || self.minor == host.minor)
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// One export of a component that belongs to the contract, e.g. `uatu:plugin/strategy@0.2.0`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContractExport {
    /// The interface's name (`strategy`, `extractor`, `sink`, or another one).
    pub interface: String,
    /// The package version as written, and parsed when it is `x.y.z`.
    pub version_text: String,
    /// `version_text` parsed, `None` when it is not `x.y.z` (or absent).
    pub version: Option<Version>,
}

impl ContractExport {
    /// Reads an export name; `None` when it is not in the `uatu:plugin` package.
    pub fn parse(export_name: &str) -> Option<ContractExport> {
        let rest = export_name.strip_prefix(PACKAGE)?.strip_prefix('/')?;
        let (interface, version_text) = rest.split_once('@').unwrap_or((rest, ""));
        Some(ContractExport {
            interface: interface.to_string(),
            version_text: version_text.to_string(),
            version: Version::parse(version_text),
        })
    }

    /// The plugin kind this interface makes, `None` for an interface that is not one.
    pub fn kind(&self) -> Option<Kind> {
        Kind::from_interface(&self.interface)
    }
}

/// What the exports of a component say about it as a plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Identified {
    /// A plugin this host can run.
    Plugin {
        /// The one kind it exports.
        kind: Kind,
        /// The contract version it was built against.
        version: Version,
    },
    /// Built against another version of the contract.
    Incompatible {
        /// The version it names, or `(no version)`.
        found: String,
    },
    /// Exports more than one kind of plugin.
    SeveralKinds(Vec<Kind>),
    /// Exports nothing of the contract; the names it exports.
    NotAPlugin(Vec<String>),
}

/// Identifies a plugin from its component's export names.
pub fn identify<'a>(export_names: impl IntoIterator<Item = &'a str>) -> Identified {
    let mut all = Vec::new();
    let mut kinds = Vec::new();
    for name in export_names {
        all.push(name.to_string());
        if let Some(export) = ContractExport::parse(name)
            && let Some(kind) = export.kind()
        {
            kinds.push((kind, export));
        }
    }
    let incompatible = kinds.iter().find(|(_, export)| {
        !export
            .version
            .is_some_and(|version| version.is_compatible_with(CONTRACT_VERSION))
    });
    if let Some((_, export)) = incompatible {
        let found = if export.version_text.is_empty() {
            "(no version)".to_string()
        } else {
            export.version_text.clone()
        };
        return Identified::Incompatible { found };
    }
    match kinds.as_slice() {
        [] => Identified::NotAPlugin(all),
        [(kind, export)] => Identified::Plugin {
            kind: *kind,
            version: export.version.unwrap_or(CONTRACT_VERSION),
        },
        several => Identified::SeveralKinds(several.iter().map(|(kind, _)| *kind).collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_major_versions_need_the_same_minor() {
        let host = Version {
            major: 0,
            minor: 1,
            patch: 0,
        };
        assert!(
            Version {
                major: 0,
                minor: 1,
                patch: 7
            }
            .is_compatible_with(host)
        );
        assert!(
            !Version {
                major: 0,
                minor: 2,
                patch: 0
            }
            .is_compatible_with(host)
        );
        assert!(
            !Version {
                major: 1,
                minor: 1,
                patch: 0
            }
            .is_compatible_with(host)
        );
        let host = Version {
            major: 1,
            minor: 4,
            patch: 0,
        };
        assert!(
            Version {
                major: 1,
                minor: 0,
                patch: 3
            }
            .is_compatible_with(host)
        );
        assert!(
            !Version {
                major: 2,
                minor: 4,
                patch: 0
            }
            .is_compatible_with(host)
        );
    }

    #[test]
    fn identifies_the_kind_from_the_exported_interface() {
        assert_eq!(
            identify(["uatu:plugin/extractor@0.2.0"]),
            Identified::Plugin {
                kind: Kind::Extractor,
                version: CONTRACT_VERSION
            }
        );
        assert_eq!(
            identify(["uatu:plugin/extractor@0.2.5"]),
            Identified::Plugin {
                kind: Kind::Extractor,
                version: Version {
                    major: 0,
                    minor: 2,
                    patch: 5
                }
            }
        );
        // 0.1 passed each node's strings separately: incompatible with 0.2.
        assert_eq!(
            identify(["uatu:plugin/strategy@0.1.0"]),
            Identified::Incompatible {
                found: "0.1.0".into()
            }
        );
        assert_eq!(
            identify(["uatu:plugin/strategy@9.0.0"]),
            Identified::Incompatible {
                found: "9.0.0".into()
            }
        );
        assert_eq!(
            identify(["wasi:cli/run@0.2.0"]),
            Identified::NotAPlugin(vec!["wasi:cli/run@0.2.0".into()])
        );
        assert_eq!(
            identify(["uatu:plugin/sink@0.2.0", "uatu:plugin/strategy@0.2.0"]),
            Identified::SeveralKinds(vec![Kind::Sink, Kind::Strategy])
        );
        assert_eq!(Version::parse("0.1"), None);
        assert_eq!(Version::parse("0.1.0-rc1"), None);
    }
}
