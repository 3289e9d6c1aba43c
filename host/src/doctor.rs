//! `uatu doctor`: checks a device end to end, the way a run would use it.

use std::time::Duration;

use crate::cli::DoctorArgs;
use crate::config::DeviceChoice;
use uatu_device::agent::{AgentListener, ListenerConfig};
use uatu_device::{Driver, GrpcDriver};
use crate::exit::{self, Status};
use uatu_sim::{SimConfig, Simulator};

const APP_TIMEOUT: Duration = Duration::from_secs(10);

/// One line of the report.
struct Check {
    name: &'static str,
    outcome: Result<String, String>,
}

impl Check {
    fn print(&self) {
        match &self.outcome {
            Ok(detail) => println!("✓ {:<12} {detail}", self.name),
            Err(problem) => println!("✗ {:<12} {problem}", self.name),
        }
    }
}

pub fn command(args: DoctorArgs) -> anyhow::Result<Status> {
    let Some(device) = args.device else {
        explain_real_devices();
        return Ok(Status::Infrastructure);
    };
    let device = DeviceChoice::parse(&device).map_err(exit::usage)?;
    let runtime = tokio::runtime::Runtime::new().map_err(exit::infrastructure)?;
    let checks = runtime.block_on(check_device(&device))?;
    for check in &checks {
        check.print();
    }
    if checks.iter().all(|check| check.outcome.is_ok()) {
        println!("all {} checks passed", checks.len());
        Ok(Status::Ok)
    } else {
        println!(
            "{} of {} checks failed",
            checks.iter().filter(|c| c.outcome.is_err()).count(),
            checks.len()
        );
        Ok(Status::Infrastructure)
    }
}

async fn check_device(device: &DeviceChoice) -> anyhow::Result<Vec<Check>> {
    let agent = AgentListener::bind(ListenerConfig::default())
        .await
        .map_err(exit::infrastructure)?;
    let (addr, sim) = match device {
        DeviceChoice::Sim => {
            let sim = Simulator::start(
                SimConfig::default(),
                "127.0.0.1:0".parse()?,
                Some(agent.socket_path().to_path_buf()),
            )
            .await
            .map_err(exit::infrastructure)?;
            (sim.addr().to_string(), Some(sim))
        }
        DeviceChoice::Sidecar(addr) => (addr.clone(), None),
    };
    let mut checks = Vec::new();
    let driver = match GrpcDriver::connect(&addr, Default::default()).await {
        Ok(driver) => driver,
        Err(error) => {
            checks.push(Check {
                name: "driver",
                outcome: Err(error.to_string()),
            });
            return Ok(checks);
        }
    };
    checks.push(Check {
        name: "driver",
        outcome: Ok(format!("connected to {}", driver.describe())),
    });
    checks.push(Check {
        name: "health",
        outcome: match driver.health().await {
            Ok(health) if health.ready => Ok(format!("ready, {} {}", health.platform, health.version)),
            Ok(health) => Err(format!("not ready ({} {})", health.platform, health.version)),
            Err(error) => Err(error.to_string()),
        },
    });
    let bundle_id = SimConfig::default().bundle_id;
    checks.push(Check {
        name: "launch",
        outcome: driver
            .launch(&bundle_id, false, None)
            .await
            .map(|_| format!("started {bundle_id}"))
            .map_err(|e| e.to_string()),
    });
    checks.push(Check {
        name: "hierarchy",
        outcome: driver
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
    });
    checks.push(Check {
        name: "screenshot",
        outcome: driver
            .screenshot()
            .await
            .map(|s| format!("{}x{} PNG, {} bytes", s.width, s.height, s.png.len()))
            .map_err(|e| e.to_string()),
    });
    checks.push(Check {
        name: "sdk hello",
        outcome: agent
            .wait_for_app(APP_TIMEOUT)
            .await
            .map(|hello| {
                format!(
                    "protocol version {}, {} SDK {} in {}",
                    hello.protocol_version, hello.platform, hello.sdk_version, hello.app_id
                )
            })
            .map_err(|e| {
                format!(
                    "{e} (is the app built with the uatu SDK, and can it reach {}?)",
                    agent.socket_path().display()
                )
            }),
    });
    if checks.last().is_some_and(|c| c.outcome.is_ok()) {
        let state = agent.pause(APP_TIMEOUT).await;
        let resumed = agent.resume().await;
        checks.push(Check {
            name: "sdk state",
            outcome: match (state, resumed) {
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
        });
    }
    if let Some(sim) = sim {
        sim.shutdown().await.map_err(exit::infrastructure)?;
    }
    Ok(checks)
}

fn explain_real_devices() {
    let on_path = |tool: &str| {
        std::env::var_os("PATH")
            .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(tool).is_file()))
    };
    println!("No device given. To check one:");
    println!("  uatu doctor --device sim                   the built-in simulated Folio app");
    println!("  uatu doctor --device sidecar:<host:port>   a Maestro sidecar driving a real device");
    println!();
    println!("A real Android device needs:");
    for (tool, why) in [
        ("adb", "to reach the device or emulator"),
        (
            "emulator",
            "to start an Android emulator (or attach a device over USB)",
        ),
        ("java", "to run the Maestro sidecar (sidecar-maestro/)"),
    ] {
        let mark = if on_path(tool) { "✓" } else { "✗" };
        println!("  {mark} {tool:<9} {why}");
    }
    println!("  and the app's debug build linked with the uatu SDK.");
}
