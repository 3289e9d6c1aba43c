//! What several test modules share.

pub mod android;
pub mod folio;
pub mod http;
pub mod plugins;
pub mod sim;
pub mod typescript;

/// Both output streams of a command, for a failing assertion's message.
pub fn printed(output: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// A tool `dev/setup` installs for the tests: `.tools/bin/NAME` in the repository, or else
/// NAME on the PATH (shellcheck is Debian's).
pub fn installed_tool(name: &str) -> std::path::PathBuf {
    let local = plugins::repo_root().join(".tools/bin").join(name);
    if local.is_file() {
        return local;
    }
    std::env::var_os("PATH")
        .and_then(|path| {
            std::env::split_paths(&path)
                .map(|dir| dir.join(name))
                .find(|file| file.is_file())
        })
        .unwrap_or_else(|| panic!("{name} is not installed: run dev/setup"))
}
