//! `uatu doctor`: checks a device end to end, the way a run would use it, and
//! returns a report for the binary to print.

use std::time::Duration;

use uatu_device::{AppInfo, Driver};

use crate::devices::{self, DeviceChoice};

const APP_TIMEOUT: Duration = Duration::from_secs(10);

pub use crate::devices::Check;

/// Checks what the device kind needs before connecting ([`devices::DeviceKind::preflight`]),
/// connects `device` as a run would, launches `bundle_id`, and checks each part
/// in turn: the driver, its health, launch, what the device says of the installed app
/// (on Android: a debug build, its runtime permissions), hierarchy, screenshot, the
/// SDK's HELLO and one PAUSE/STATE/RESUME. Stops at the first part that cannot be reached.
pub async fn check_device(device: &DeviceChoice, bundle_id: &str) -> Vec<Check> {
    let mut checks = device.kind().preflight();
    if checks.iter().any(|check| !check.passed) {
        return checks;
    }
    let connected = match devices::connect(device).await {
        Ok(connected) => connected,
        Err(error) => {
            checks.push(Check::of("driver", Err(crate::errors::chain(&error))));
            return checks;
        }
    };
    let driver: &dyn Driver = connected.driver.as_ref();
    let agent = &connected.agent;
    checks.push(Check::of(
        "driver",
        Ok(format!("connected to {}", driver.describe())),
    ));
    checks.push(Check::of(
        "health",
        match driver.health().await {
            Ok(health) if health.ready => Ok(format!("ready, {} {}", health.platform, health.version)),
            Ok(health) => Err(format!("not ready ({} {})", health.platform, health.version)),
            Err(error) => Err(error.to_string()),
        },
    ));
    checks.push(Check::of(
        "launch",
        driver
            .launch(bundle_id, false, None)
            .await
            .map(|_| format!("started {bundle_id}"))
            .map_err(|e| e.to_string()),
    ));
    if checks.last().is_some_and(|check| check.passed) {
        match driver.app_info(bundle_id).await {
            Ok(Some(info)) => checks.extend(app_checks(bundle_id, &info)),
            Ok(None) => {}
            Err(error) => checks.push(Check::of("app", Err(error.to_string()))),
        }
    }
    checks.push(Check::of(
        "hierarchy",
        driver
            .hierarchy()
            .await
            .map(|h| {
                format!(
                    "{} nodes on a {}x{} screen",
                    h.root.descendants().count(),
                    h.screen.width,
                    h.screen.height
                )
            })
            .map_err(|e| e.to_string()),
    ));
    checks.push(Check::of(
        "screenshot",
        driver
            .screenshot()
            .await
            .map(|s| format!("{}x{} PNG, {} bytes", s.width, s.height, s.png.len()))
            .map_err(|e| e.to_string()),
    ));
    checks.push(Check::of(
        "sdk hello",
        agent
            .wait_for_app(APP_TIMEOUT)
            .await
            .map(|hello| {
                format!(
                    "protocol version {}, {} SDK {} in {}",
                    hello.protocol_version, hello.platform, hello.sdk_version, hello.app_id
                )
            })
            .map_err(|e| {
                let reach = match agent.tcp_addr() {
                    Some(addr) => format!("the sidecar's forward to {addr}"),
                    None => agent.socket_path().display().to_string(),
                };
                format!("{e} (is the app built with the uatu SDK, and can it reach {reach}?)")
            }),
    ));
    if checks.last().is_some_and(|c| c.passed) {
        let state = agent.pause(APP_TIMEOUT).await;
        let resumed = agent.resume().await;
        checks.push(Check::of(
            "sdk state",
            match (state, resumed) {
                (Ok(state), Ok(())) => Ok(format!(
                    "{} snapshots, coverage {}",
                    state.snapshots.len(),
                    state
                        .coverage
                        .map_or("not reported".to_string(), |probes| format!(
                            "{} probes",
                            probes.len()
                        ))
                )),
                (Err(error), _) | (Ok(_), Err(error)) => Err(error.to_string()),
            },
        ));
    }
    if let Err(error) = connected.stop().await {
        checks.push(Check::of("stop", Err(error.to_string())));
    }
    checks
}

/// What a device says of the installed app: a debug build (the SDK does nothing in a
/// release build), and its runtime permissions granted (or, when the driver does not
/// grant them, that their prompts will stand over the app).
fn app_checks(bundle_id: &str, info: &AppInfo) -> [Check; 2] {
    let debuggable = Check::of(
        "debuggable",
        if info.debuggable {
            Ok(format!("{bundle_id} is a debug build"))
        } else {
            Err(format!(
                "{bundle_id} is not debuggable (a release build): the uatu SDK does nothing in it; install the debug build (docs/sdk-android.md)"
            ))
        },
    );
    let missing: Vec<&str> = info
        .requested_permissions
        .iter()
        .filter(|permission| !info.granted_permissions.contains(permission))
        .map(String::as_str)
        .collect();
    let permissions = Check::of(
        "permissions",
        match (
            info.requested_permissions.len(),
            missing.is_empty(),
            info.grants_permissions,
        ) {
            (0, _, _) => Ok("no runtime permission requested".to_string()),
            (requested, true, _) => Ok(format!(
                "{requested} runtime permission(s) requested, all granted: {}",
                info.requested_permissions.join(", ")
            )),
            (_, false, false) => Ok(format!(
                "not granted (--no-grant-permissions): {}; their prompts will stand over the app",
                missing.join(", ")
            )),
            (_, false, true) => Err(format!(
                "not granted although the launch grants them: {} (the system refused `pm grant`); grant them in the device's settings, or pass --no-grant-permissions and let the spec answer the prompts",
                missing.join(", ")
            )),
        },
    );
    [debuggable, permissions]
}

/// A tool a real Android device needs on this machine, and whether it is on the PATH.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Requirement {
    /// The program, e.g. `adb`.
    pub tool: &'static str,
    /// What it is for.
    pub why: &'static str,
    /// Whether it is on the PATH.
    pub found: bool,
}

/// What driving a real device needs on this machine, each looked up on the PATH.
pub fn real_device_requirements() -> Vec<Requirement> {
    let on_path = |tool: &str| {
        std::env::var_os("PATH")
            .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(tool).is_file()))
    };
    [
        ("adb", "to reach the device or emulator"),
        (
            "emulator",
            "to start an Android emulator (or attach a device over USB)",
        ),
        ("java", "to run the Android sidecar (sidecar-maestro/)"),
    ]
    .into_iter()
    .map(|(tool, why)| Requirement {
        tool,
        why,
        found: on_path(tool),
    })
    .collect()
}
