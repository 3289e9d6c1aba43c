//! Helpers shared by the simulator's integration tests.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use tonic::transport::Channel;
use uatu_device::proto::{self, driver_client::DriverClient};
use uatu_sim::{Bugs, SimConfig, SimHandle, Simulator};

pub type Client = DriverClient<Channel>;

pub async fn start(bugs: Bugs, agent_socket: Option<PathBuf>) -> (SimHandle, Client) {
    let config = SimConfig {
        bugs,
        latency: Duration::ZERO,
        ..SimConfig::default()
    };
    let listen: SocketAddr = "127.0.0.1:0".parse().expect("address");
    let sim = Simulator::start(config, listen, agent_socket)
        .await
        .expect("simulator starts");
    let client = DriverClient::connect(format!("http://{}", sim.addr()))
        .await
        .expect("client connects");
    (sim, client)
}

pub async fn hierarchy(client: &mut Client) -> proto::Node {
    let response = client
        .hierarchy(proto::HierarchyRequest {})
        .await
        .expect("Hierarchy")
        .into_inner();
    response.root.expect("a root node")
}

pub fn find<'a>(node: &'a proto::Node, desc: &str) -> Option<&'a proto::Node> {
    if node.content_description == desc {
        return Some(node);
    }
    node.children.iter().find_map(|child| find(child, desc))
}

pub fn all_nodes(node: &proto::Node) -> Vec<&proto::Node> {
    let mut nodes = vec![node];
    for child in &node.children {
        nodes.extend(all_nodes(child));
    }
    nodes
}

pub fn centre(node: &proto::Node) -> proto::Point {
    let bounds = node.bounds.unwrap_or_default();
    proto::Point {
        x: (bounds.left + bounds.right) / 2,
        y: (bounds.top + bounds.bottom) / 2,
    }
}

/// Taps the element with content description `desc`, as the host does: by its bounds.
pub async fn tap_desc(client: &mut Client, desc: &str) -> proto::InputResponse {
    let root = hierarchy(client).await;
    let node = find(&root, desc).unwrap_or_else(|| panic!("no element `{desc}` on screen"));
    let point = centre(node);
    client
        .tap(proto::TapRequest {
            point: Some(point),
            element: None,
        })
        .await
        .expect("Tap")
        .into_inner()
}

pub async fn type_into(client: &mut Client, desc: &str, text: &str) {
    tap_desc(client, desc).await;
    let typed = client
        .input_text(proto::InputTextRequest { text: text.into() })
        .await
        .expect("InputText")
        .into_inner();
    assert!(typed.delivered, "typing into {desc}: {}", typed.detail);
}

pub async fn sleep(client: &mut Client, ms: u32) -> u64 {
    client
        .sleep(proto::SleepRequest { duration_ms: ms })
        .await
        .expect("Sleep")
        .into_inner()
        .device_time_ms
}

/// Signs in with the demo account and waits out authentication (slow or not).
pub async fn sign_in(client: &mut Client) {
    type_into(client, "login_email", "demo@folio.app").await;
    type_into(client, "login_password", "ledger123").await;
    tap_desc(client, "login_submit").await;
    sleep(client, 5_000).await;
    let root = hierarchy(client).await;
    assert!(
        find(&root, "add_account_button").is_some(),
        "home is shown after signing in"
    );
}

/// Creates the account `name` from the home screen (a fresh install has none) and returns home.
pub async fn add_account(client: &mut Client, name: &str) {
    tap_desc(client, "add_account_button").await;
    type_into(client, "account_name_field", name).await;
    tap_desc(client, "add_account_submit").await;
    let root = hierarchy(client).await;
    assert!(
        find(&root, "add_account_button").is_some(),
        "home is shown after creating {name}"
    );
}
