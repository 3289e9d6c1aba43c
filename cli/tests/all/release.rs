//! The release path: `install.sh` (the real script, run by `sh`) installing a release
//! served from here over HTTP (axum's `ServeDir`), its assets packed by
//! `dev/package-release` as the release workflow packs them, from this test build of
//! `uatu` (a `dist` build would take too long here); the checksum checked and a corrupted
//! download refused. And the linters of what cannot run here: the workflows under
//! actionlint (with shellcheck on their scripts), the shell scripts under shellcheck.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use crate::support::http::serve;
use crate::support::plugins::repo_root;
use crate::support::{installed_tool, printed};

/// The release asset name of the machine running the tests, as install.sh picks it.
fn this_target() -> &'static str {
    match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => "x86_64-unknown-linux-gnu",
        ("linux", "aarch64") => "aarch64-unknown-linux-gnu",
        ("macos", "aarch64") => "aarch64-apple-darwin",
        (os, arch) => panic!("install.sh has no release for {os} {arch}"),
    }
}

fn tag() -> String {
    format!("v{}", uatu::VERSION)
}

/// The test build of `uatu`, packed once per test binary by `dev/package-release`.
fn packed_asset() -> &'static Path {
    static PACKED: OnceLock<PathBuf> = OnceLock::new();
    PACKED.get_or_init(|| {
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("release-asset");
        let _ = std::fs::remove_dir_all(&out);
        let output = Command::new(repo_root().join("dev/package-release"))
            .arg(env!("CARGO_BIN_EXE_uatu"))
            .arg(this_target())
            .arg(&out)
            .output()
            .expect("runs dev/package-release");
        assert!(
            output.status.success(),
            "dev/package-release failed:\n{}",
            printed(&output)
        );
        out
    })
}

/// A release laid out as GitHub serves one under `<base>`: `download/<tag>/<asset>` and
/// `latest/download/<asset>`, each beside its `SHA256SUMS`. `corrupt` flips one byte of
/// the archive after its checksum was taken.
fn release(root: &Path, corrupt: bool) {
    let asset = format!("uatu-{}.tar.gz", this_target());
    let packed = packed_asset();
    for dir in [root.join("download").join(tag()), root.join("latest/download")] {
        std::fs::create_dir_all(&dir).expect("the release directory");
        let mut archive = std::fs::read(packed.join(&asset)).expect("the packed archive");
        if corrupt {
            let middle = archive.len() / 2;
            archive[middle] ^= 0x55;
        }
        std::fs::write(dir.join(&asset), archive).expect("the served archive");
        // The release workflow's SHA256SUMS is the assets' .sha256 lines, concatenated.
        std::fs::copy(packed.join(format!("{asset}.sha256")), dir.join("SHA256SUMS"))
            .expect("the served SHA256SUMS");
    }
}

fn install_sh(args: &[&str], home: &Path) -> Output {
    Command::new("sh")
        .arg(repo_root().join("install.sh"))
        .args(args)
        .env("HOME", home)
        .env_remove("UATU_INSTALL_PREFIX")
        .env_remove("UATU_INSTALL_VERSION")
        .env_remove("UATU_INSTALL_BASE_URL")
        .output()
        .expect("runs sh install.sh")
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|entry| entry.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[test]
fn install_sh_installs_the_release_for_this_machine_after_checking_its_checksum() {
    let served = tempfile::tempdir().unwrap();
    release(served.path(), false);
    let base = format!("http://{}", serve(served.path().to_path_buf()));
    let home = tempfile::tempdir().unwrap();
    let prefix = home.path().join("tools");

    let output = install_sh(
        &[
            "--base-url",
            &base,
            "--version",
            &tag(),
            "--prefix",
            &prefix.display().to_string(),
        ],
        home.path(),
    );
    let said = printed(&output);
    assert!(output.status.success(), "{said}");
    let installed = prefix.join("bin/uatu");
    assert_eq!(
        std::fs::read(&installed).unwrap(),
        std::fs::read(env!("CARGO_BIN_EXE_uatu")).unwrap(),
        "the installed binary is the released one"
    );
    assert!(
        said.contains(&format!(
            "downloading {base}/download/{}/uatu-{}.tar.gz",
            tag(),
            this_target()
        )),
        "{said}"
    );
    assert!(said.contains("checksum ok (sha256 "), "{said}");
    assert!(
        said.contains(&format!(
            "installed uatu {} ({}) into {}",
            uatu::VERSION,
            this_target(),
            installed.display()
        )),
        "{said}"
    );
    assert!(said.contains("is not on your PATH"), "{said}");
    let version = Command::new(&installed).arg("version").output().unwrap();
    assert!(String::from_utf8_lossy(&version.stdout).starts_with(&format!("uatu {}\n", uatu::VERSION)));
    assert_eq!(
        files_in(&prefix.join("bin")),
        ["uatu"],
        "nothing else is left beside it"
    );

    // Without a version it installs the latest release; the prefix defaults to ~/.local.
    let output = Command::new("sh")
        .arg(repo_root().join("install.sh"))
        .env("HOME", home.path())
        .env("UATU_INSTALL_BASE_URL", &base)
        .env_remove("UATU_INSTALL_PREFIX")
        .env_remove("UATU_INSTALL_VERSION")
        .output()
        .unwrap();
    let said = printed(&output);
    assert!(output.status.success(), "{said}");
    assert!(
        said.contains(&format!("downloading {base}/latest/download/uatu-")),
        "{said}"
    );
    assert!(home.path().join(".local/bin/uatu").is_file(), "{said}");
}

#[test]
fn install_sh_refuses_a_corrupted_download_and_keeps_what_was_installed() {
    let served = tempfile::tempdir().unwrap();
    release(served.path(), true);
    let base = format!("http://{}", serve(served.path().to_path_buf()));
    let home = tempfile::tempdir().unwrap();
    let bin = home.path().join(".local/bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::write(bin.join("uatu"), "an earlier uatu").unwrap();

    let output = install_sh(&["--base-url", &base, "--version", &tag()], home.path());
    let said = printed(&output);
    assert_eq!(output.status.code(), Some(1), "{said}");
    assert!(
        said.contains(&format!(
            "error: checksum mismatch for uatu-{}.tar.gz: SHA256SUMS says ",
            this_target()
        )),
        "{said}"
    );
    assert!(said.contains("nothing was installed"), "{said}");
    assert_eq!(
        std::fs::read_to_string(bin.join("uatu")).unwrap(),
        "an earlier uatu"
    );
    assert_eq!(files_in(&bin), ["uatu"], "no partial file is left");
}

#[test]
fn install_sh_says_what_is_missing() {
    let home = tempfile::tempdir().unwrap();
    // The repository's copy has no release to default to.
    let output = install_sh(&[], home.path());
    assert_eq!(output.status.code(), Some(1));
    assert!(
        printed(&output).contains("give --base-url"),
        "{}",
        printed(&output)
    );
    // A server with no such release.
    let served = tempfile::tempdir().unwrap();
    let base = format!("http://{}", serve(served.path().to_path_buf()));
    let output = install_sh(&["--base-url", &base, "--version", "v0.0.0"], home.path());
    let said = printed(&output);
    assert_eq!(output.status.code(), Some(1), "{said}");
    assert!(
        said.contains(&format!("cannot download {base}/download/v0.0.0/SHA256SUMS")),
        "{said}"
    );
    assert!(!home.path().join(".local/bin/uatu").exists());
}

#[test]
fn the_workflows_pass_actionlint() {
    let workflows = repo_root().join(".github/workflows");
    let files: Vec<PathBuf> = files_in(&workflows)
        .iter()
        .map(|name| workflows.join(name))
        .collect();
    assert!(
        files.iter().any(|file| file.ends_with("release.yml")),
        "{files:?}"
    );
    // shellcheck is named, so that a missing one fails here instead of leaving the scripts unchecked.
    let output = Command::new(installed_tool("actionlint"))
        .arg("-shellcheck")
        .arg(installed_tool("shellcheck"))
        .args(&files)
        .current_dir(repo_root())
        .output()
        .unwrap();
    assert!(output.status.success(), "actionlint:\n{}", printed(&output));
}

#[test]
fn the_shell_scripts_pass_shellcheck() {
    let root = repo_root();
    let mut scripts = vec![root.join("install.sh"), root.join(".ci/run")];
    scripts.extend(
        files_in(&root.join("dev"))
            .iter()
            .map(|name| root.join("dev").join(name)),
    );
    let output = Command::new(installed_tool("shellcheck"))
        .args(&scripts)
        .output()
        .unwrap();
    assert!(output.status.success(), "shellcheck:\n{}", printed(&output));
}

#[test]
fn actionlint_refuses_a_broken_workflow() {
    let dir = tempfile::tempdir().unwrap();
    let workflow = dir.path().join("broken.yml");
    std::fs::write(
        &workflow,
        "on: push\njobs:\n  test:\n    runs-on: ubuntu-24.04\n    steps:\n      - run: echo ${{ matrix.target }}\n",
    )
    .unwrap();
    let output = Command::new(installed_tool("actionlint"))
        .arg(&workflow)
        .output()
        .unwrap();
    let said = printed(&output);
    assert!(!output.status.success(), "{said}");
    assert!(said.contains("broken.yml:6:"), "{said}");
}
