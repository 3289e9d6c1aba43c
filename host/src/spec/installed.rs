//! The `@uatu/spec` a spec's project installed from npm for its editor's types.
//!
//! uatu never runs that copy: a spec is bundled with the library embedded in this binary.
//! When the installed copy is another version, the types the author's editor checked
//! against are not the ones that run, which is worth a warning (not an error: the spec may
//! well use nothing that changed).

use std::path::{Path, PathBuf};

/// The version of the `@uatu/spec` embedded in this binary. It is the binary's own version:
/// the workspace's `Cargo.toml` is the one place it is written, and a test holds
/// `packages/spec/package.json` to it.
pub const LIBRARY_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The TypeScript version the embedded `@uatu/spec` is built and checked with (its
/// `devDependencies`), for the spec projects `uatu init` writes.
pub fn typescript_version() -> String {
    serde_json::from_str::<serde_json::Value>(super::bundle::LIBRARY_MANIFEST)
        .ok()
        .and_then(|manifest| {
            manifest["devDependencies"]["typescript"]
                .as_str()
                .map(str::to_string)
        })
        .unwrap_or_else(|| "latest".to_string())
}

/// An installed `@uatu/spec` whose version is not [`LIBRARY_VERSION`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OtherLibraryVersion {
    /// The installed package's `package.json`.
    pub package_json: PathBuf,
    /// Its `version`, or `None` when the file has none that can be read.
    pub installed: Option<String>,
}

impl std::fmt::Display for OtherLibraryVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let installed = match &self.installed {
            Some(version) => format!("@uatu/spec {version}"),
            None => "a @uatu/spec without a readable version".to_string(),
        };
        write!(
            f,
            "{} is {installed}, but this uatu runs specs with its own @uatu/spec {LIBRARY_VERSION}: \
             the types your editor checks may differ from what runs; \
             `npm install --save-dev @uatu/spec@{LIBRARY_VERSION}` matches them",
            self.package_json.display()
        )
    }
}

/// The `@uatu/spec` that the spec at `spec` would import under Node's resolution (the
/// first `node_modules/@uatu/spec/package.json` in the spec's directory or above it),
/// when it is not the version this binary embeds. `None` when none is installed, it is
/// the same version, or `spec` is a compiled module (`.wasm`: no project to look in).
pub fn other_library_version(spec: &Path) -> Option<OtherLibraryVersion> {
    if spec.extension().is_some_and(|extension| extension == "wasm") {
        return None;
    }
    let spec = std::fs::canonicalize(spec).unwrap_or_else(|_| spec.to_path_buf());
    let package_json = spec
        .parent()?
        .ancestors()
        .map(|dir| dir.join("node_modules/@uatu/spec/package.json"))
        .find(|candidate| candidate.is_file())?;
    let installed = std::fs::read(&package_json)
        .ok()
        .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok())
        .and_then(|manifest| manifest.get("version")?.as_str().map(str::to_string));
    match installed.as_deref() {
        Some(LIBRARY_VERSION) => None,
        _ => Some(OtherLibraryVersion {
            package_json,
            installed,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The published package and the binary that embeds it carry one version.
    #[test]
    fn the_package_json_carries_the_binary_version() {
        let manifest: serde_json::Value =
            serde_json::from_str(super::super::bundle::LIBRARY_MANIFEST).unwrap();
        assert_eq!(
            manifest["version"].as_str(),
            Some(LIBRARY_VERSION),
            "packages/spec/package.json's version must be the workspace version in Cargo.toml"
        );
    }

    #[test]
    fn typescript_is_pinned_by_the_package() {
        let version = typescript_version();
        assert!(
            version.chars().next().is_some_and(|c| c.is_ascii_digit()),
            "{version}"
        );
    }

    fn project(installed: Option<&str>) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("specs/deep")).unwrap();
        std::fs::write(dir.path().join("specs/deep/spec.ts"), "").unwrap();
        if let Some(manifest) = installed {
            let package = dir.path().join("node_modules/@uatu/spec");
            std::fs::create_dir_all(&package).unwrap();
            std::fs::write(package.join("package.json"), manifest).unwrap();
        }
        dir
    }

    #[test]
    fn the_same_version_or_none_installed_is_not_reported() {
        let same = project(Some(&format!(
            r#"{{"name": "@uatu/spec", "version": "{LIBRARY_VERSION}"}}"#
        )));
        assert_eq!(
            other_library_version(&same.path().join("specs/deep/spec.ts")),
            None
        );
        let none = project(None);
        assert_eq!(
            other_library_version(&none.path().join("specs/deep/spec.ts")),
            None
        );
    }

    #[test]
    fn another_version_above_the_spec_is_reported_with_its_path() {
        let dir = project(Some(r#"{"name": "@uatu/spec", "version": "0.0.1"}"#));
        let found = other_library_version(&dir.path().join("specs/deep/spec.ts")).unwrap();
        assert_eq!(found.installed.as_deref(), Some("0.0.1"));
        assert_eq!(
            found.package_json,
            std::fs::canonicalize(dir.path())
                .unwrap()
                .join("node_modules/@uatu/spec/package.json")
        );
        let message = found.to_string();
        assert!(message.contains("is @uatu/spec 0.0.1"), "{message}");
        assert!(
            message.contains(&format!("@uatu/spec@{LIBRARY_VERSION}")),
            "{message}"
        );
    }

    #[test]
    fn an_unreadable_manifest_is_reported() {
        let dir = project(Some("not json"));
        let found = other_library_version(&dir.path().join("specs/deep/spec.ts")).unwrap();
        assert_eq!(found.installed, None);
    }
}
