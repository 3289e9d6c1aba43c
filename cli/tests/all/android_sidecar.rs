//! `--device android`: the real `uatu` binary starts the real sidecar JAR
//! (`sidecar-maestro/`, built by `mvn verify` before `cargo test` in dev/test)
//! on its scripted fake device, uses it, and stops it.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::cli::uatu;

/// The JAR `mvn -B -q package -f sidecar-maestro/pom.xml` builds.
fn built_jar() -> PathBuf {
    let jar = Path::new(env!("CARGO_MANIFEST_DIR")).join("../sidecar-maestro/target/sidecar-maestro.jar");
    assert!(
        jar.is_file(),
        "{} is missing: build it with `mvn -B -q package -DskipTests -f sidecar-maestro/pom.xml` (dev/test does)",
        jar.display()
    );
    jar
}

/// Processes whose command line mentions `needle` (a path unique to one test).
fn processes_mentioning(needle: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| std::fs::read(entry.path().join("cmdline")).ok())
        .map(|cmdline| String::from_utf8_lossy(&cmdline).replace('\0', " "))
        .filter(|cmdline| cmdline.contains(needle))
        .collect()
}

#[test]
fn doctor_drives_the_fake_android_device_through_the_sidecar_jar_and_stops_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    // A copy at a path of this test's own, to find the sidecar process by.
    let jar = dir.path().join("sidecar-maestro.jar");
    std::fs::copy(built_jar(), &jar).expect("copies the JAR");
    let jar_text = jar.display().to_string();

    let (code, stdout, stderr) = uatu(&[
        "doctor",
        "--device",
        "android",
        "--sidecar",
        &jar_text,
        "--sidecar-fake-device",
        "builtin",
    ]);

    let passed = |check: &str, detail: &str| {
        stdout
            .lines()
            .any(|line| line.starts_with('✓') && line.contains(check) && line.contains(detail))
    };
    assert!(
        passed("driver", "connected to gRPC driver 127.0.0.1:"),
        "{stdout}\n{stderr}"
    );
    assert!(
        passed(
            "health",
            "android uatu-sidecar-maestro 0.1.0 (emulator-5554, Android SDK 34)"
        ),
        "{stdout}"
    );
    assert!(passed("launch", "started app.folio"), "{stdout}");
    // The fake device's Folio accounts screen, parsed from its UIAutomator dump.
    assert!(passed("hierarchy", "16 nodes on a 1080x2424 screen"), "{stdout}");
    assert!(passed("screenshot", "270x606 PNG"), "{stdout}");
    // No app SDK runs on the fake device, so the SDK check fails, and doctor says so.
    assert!(
        stdout
            .lines()
            .any(|line| line.starts_with('✗') && line.contains("sdk hello")),
        "{stdout}"
    );
    assert_eq!(code, 3, "{stdout}");

    // The sidecar was stopped before uatu exited.
    let deadline = Instant::now() + Duration::from_secs(3);
    while !processes_mentioning(&jar_text).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        processes_mentioning(&jar_text),
        Vec::<String>::new(),
        "the sidecar outlived uatu"
    );
}

#[test]
fn a_missing_sidecar_jar_says_how_to_build_it() {
    let (code, stdout, _) = uatu(&[
        "doctor",
        "--device",
        "android:emulator-5554",
        "--sidecar",
        "/nonexistent/sidecar-maestro.jar",
    ]);
    assert_eq!(code, 3, "{stdout}");
    assert!(
        stdout.lines().any(|line| line.starts_with('✗')
            && line.contains("/nonexistent/sidecar-maestro.jar does not exist")
            && line.contains("mvn -B -q package")),
        "{stdout}"
    );
}

#[test]
fn a_sidecar_that_cannot_start_its_device_reports_the_sidecars_words() {
    let dir = tempfile::tempdir().expect("temp dir");
    let missing = dir.path().join("no-such-device").display().to_string();
    let jar = built_jar().display().to_string();
    let (code, stdout, _) = uatu(&[
        "doctor",
        "--device",
        "android",
        "--sidecar",
        &jar,
        "--sidecar-fake-device",
        &missing,
    ]);
    assert_eq!(code, 3, "{stdout}");
    assert!(
        stdout
            .lines()
            .any(|line| line.starts_with('✗') && line.contains("exited") && line.contains("not a directory")),
        "{stdout}"
    );
}
