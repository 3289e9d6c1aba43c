//! What several test modules share.

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

/// The sidecar JAR that `mvn -B -q package -pl sidecar-maestro -am` (at the root) builds;
/// a panic says how to build it.
pub fn built_sidecar_jar() -> std::path::PathBuf {
    let jar = plugins::repo_root().join("sidecar-maestro/target/sidecar-maestro.jar");
    assert!(
        jar.is_file(),
        "{} is missing: build it with `mvn -B -q package -DskipTests -pl sidecar-maestro -am` (dev/test builds it)",
        jar.display()
    );
    jar
}

/// A copy of the sidecar's built-in fake device (`--fake-device builtin`) in `dir/device`,
/// for a test to change; returns that directory.
pub fn builtin_fake_device_copy(dir: &std::path::Path) -> std::path::PathBuf {
    let builtin = plugins::repo_root().join("sidecar-maestro/src/main/resources/fake-device");
    let device = dir.join("device");
    std::fs::create_dir(&device).expect("creates the device directory");
    for entry in std::fs::read_dir(&builtin).expect("lists the built-in device") {
        let path = entry.expect("a directory entry").path();
        std::fs::copy(&path, device.join(path.file_name().expect("a file name")))
            .expect("copies a device file");
    }
    device
}
