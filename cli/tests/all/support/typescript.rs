//! TypeScript from npm, as `dev/setup` installs it (packages/spec's dev dependency), and the
//! `@uatu/spec` package packed once per test binary with `npm pack`, as it would be published.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use super::plugins::repo_root;
use super::printed;

/// `packages/spec/`.
pub fn package_dir() -> PathBuf {
    repo_root().join("packages/spec")
}

/// `tsc` in `packages/spec/node_modules` (`dev/setup` installs it); a panic says how to get it.
fn tsc() -> PathBuf {
    let tsc = package_dir().join("node_modules/.bin/tsc");
    assert!(
        tsc.is_file(),
        "{} is missing: run dev/setup (it installs TypeScript from npm)",
        tsc.display()
    );
    tsc
}

/// `tsc -p PROJECT` (a directory holding a `tsconfig.json`), with its output.
pub fn check_project(project: &Path) -> Output {
    Command::new(tsc())
        .arg("-p")
        .arg(project)
        .arg("--pretty")
        .arg("false")
        .output()
        .expect("runs tsc")
}

/// What `npm pack` made of `packages/spec`.
pub struct Packed {
    /// The tarball.
    pub tarball: PathBuf,
    /// The files in it, relative to the package.
    pub files: Vec<String>,
}

/// `@uatu/spec` packed with `npm pack` (its `prepack` script builds `dist/` with `tsc`),
/// once per test binary, into the test target's temporary directory.
pub fn packed_spec_package() -> &'static Packed {
    static PACKED: OnceLock<Packed> = OnceLock::new();
    PACKED.get_or_init(|| {
        // `prepack` runs `tsc`: a missing one is said here, with how to get it.
        tsc();
        let destination = Path::new(env!("CARGO_TARGET_TMPDIR")).join("spec-package");
        std::fs::create_dir_all(&destination).expect("creates the pack directory");
        let output = Command::new("npm")
            .args(["pack", "--json", "--pack-destination"])
            .arg(&destination)
            .current_dir(package_dir())
            .output()
            .expect("runs npm pack");
        assert!(output.status.success(), "npm pack failed:\n{}", printed(&output));
        let report: serde_json::Value = serde_json::from_slice(&output.stdout)
            .unwrap_or_else(|e| panic!("npm pack --json printed no JSON ({e}):\n{}", printed(&output)));
        let filename = report[0]["filename"]
            .as_str()
            .expect("npm pack names the tarball");
        let files = report[0]["files"]
            .as_array()
            .expect("npm pack lists the files")
            .iter()
            .filter_map(|file| file["path"].as_str().map(str::to_string))
            .collect();
        Packed {
            tarball: destination.join(filename),
            files,
        }
    })
}

/// Installs the packed `@uatu/spec` into the npm project at `project` (which has a
/// `package.json`), from the tarball alone: no registry is asked.
pub fn install_packed_spec_package(project: &Path) {
    let packed = packed_spec_package();
    let output = Command::new("npm")
        .args(["install", "--offline", "--no-audit", "--no-fund", "--save-dev"])
        .arg(&packed.tarball)
        .current_dir(project)
        .output()
        .expect("runs npm install");
    assert!(
        output.status.success(),
        "npm install of the tarball failed:\n{}",
        printed(&output)
    );
}
