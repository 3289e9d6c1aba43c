//! What the Android tests share: the sidecar JAR they run and the run a `uatu run` left.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The JAR `mvn -B -q package -pl sidecar-maestro -am` (at the root) builds.
pub fn built_jar() -> PathBuf {
    let jar = Path::new(env!("CARGO_MANIFEST_DIR")).join("../sidecar-maestro/target/sidecar-maestro.jar");
    assert!(
        jar.is_file(),
        "{} is missing: build it with `mvn -B -q package -DskipTests -pl sidecar-maestro -am` (dev/test builds it)",
        jar.display()
    );
    jar
}

/// The run directory one `uatu run --output OUTPUT` made, if it made one; more than
/// one under `output` is a test's mistake (each run gets an `--output` of its own).
pub fn single_run_dir(output: &Path) -> Option<PathBuf> {
    let dirs: Vec<PathBuf> = std::fs::read_dir(output)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.is_dir())
        .collect();
    assert!(
        dirs.len() <= 1,
        "{} holds {} run directories, expected one run's: {dirs:?}",
        output.display(),
        dirs.len()
    );
    dirs.into_iter().next()
}

/// Every step record of the run in `run_dir` (none without one), as JSON.
pub fn steps_of(run_dir: Option<&Path>) -> Vec<Value> {
    run_dir
        .and_then(|dir| uatu::trace::read_steps(dir).ok())
        .unwrap_or_default()
        .iter()
        .map(|record| serde_json::to_value(record).expect("a record is JSON"))
        .collect()
}

/// A copy of the sidecar's built-in fake device in `dir/device`, with `extra` lines
/// appended to its device.properties (docs/devices.md, "The fake device").
pub fn fake_device_copy(dir: &Path, extra: &str) -> PathBuf {
    let builtin =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../sidecar-maestro/src/main/resources/fake-device");
    let device = dir.join("device");
    std::fs::create_dir(&device).expect("creates the device directory");
    for entry in std::fs::read_dir(&builtin).expect("lists the built-in device") {
        let path = entry.expect("a directory entry").path();
        std::fs::copy(&path, device.join(path.file_name().expect("a file name")))
            .expect("copies a device file");
    }
    let properties = device.join("device.properties");
    let mut text = std::fs::read_to_string(&properties).expect("reads device.properties");
    text.push_str(extra);
    std::fs::write(&properties, text).expect("writes device.properties");
    device
}
