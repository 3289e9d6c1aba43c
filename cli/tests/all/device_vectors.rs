//! Decodes every SDK socket test vector of `proto/vectors/vectors.json` with
//! the host's frame codec and compares with the expected result. The same
//! vectors are the contract for the Kotlin and Swift SDKs (`proto/agent.md`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;
use uatu_device::agent::frame::{self, FrameError};
use uatu_device::agent::{DisconnectReason, MAX_FRAME_BYTES, Message, PROTOCOL_VERSION, check_hello};

const MESSAGE_TYPES: [&str; 5] = ["HELLO", "PAUSE", "STATE", "RESUME", "GOODBYE"];

fn vectors_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../proto/vectors")
}

fn manifest() -> Value {
    let path = vectors_dir().join("vectors.json");
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

fn vectors(manifest: &Value) -> &[Value] {
    manifest["vectors"].as_array().expect("`vectors` is an array")
}

/// The manifest's name for a decode failure. A message the codec refuses is
/// `unknown_type` when its `type` is absent or not one of ours, else `invalid_message`.
fn error_kind(error: &FrameError, bytes: &[u8]) -> &'static str {
    match error {
        FrameError::Closed => "closed",
        FrameError::Truncated { .. } => "truncated",
        FrameError::Oversize { .. } => "oversize",
        FrameError::BadJson(_) => "bad_json",
        FrameError::BadMessage(_) => {
            let payload: Value = serde_json::from_slice(&bytes[4..]).expect("a BadMessage payload is JSON");
            match payload.as_object() {
                Some(object) => match object.get("type").and_then(Value::as_str) {
                    Some(name) if MESSAGE_TYPES.contains(&name) => "invalid_message",
                    _ => "unknown_type",
                },
                None => "invalid_message",
            }
        }
        FrameError::Io(_) => "io",
    }
}

async fn decode(bytes: &[u8]) -> Result<Message, FrameError> {
    let mut reader = bytes;
    let message = frame::read_frame(&mut reader).await?;
    assert!(reader.is_empty(), "{} bytes left after one frame", reader.len());
    Ok(message)
}

#[tokio::test]
async fn every_vector_decodes_as_expected() {
    let manifest = manifest();
    assert_eq!(manifest["protocol_version"], PROTOCOL_VERSION);
    assert_eq!(manifest["max_frame_bytes"], MAX_FRAME_BYTES);
    let mut failures = Vec::new();
    for vector in vectors(&manifest) {
        let file = vector["file"].as_str().expect("`file` is a string");
        let path = vectors_dir().join(file);
        let bytes =
            std::fs::read(&path).unwrap_or_else(|e| panic!("vector {} is missing: {e}", path.display()));
        let expected = &vector["expected"];
        let decoded = decode(&bytes).await;
        match (decoded, expected.get("ok"), expected.get("error")) {
            (Ok(message), Some(ok), None) => {
                let got = serde_json::to_value(&message).expect("serialises");
                if &got != ok {
                    failures.push(format!("{file}: decoded {got}, expected {ok}"));
                }
                let listener_token = vector.get("listener_token").and_then(Value::as_str);
                let handshake = match (&message, check_hello(&message, listener_token)) {
                    (Message::Hello { .. }, Ok(_)) => Some("accepted"),
                    (Message::Hello { .. }, Err(DisconnectReason::VersionMismatch { .. })) => {
                        Some("version_mismatch")
                    }
                    (Message::Hello { .. }, Err(DisconnectReason::TokenMissing)) => Some("token_missing"),
                    (Message::Hello { .. }, Err(DisconnectReason::TokenMismatch)) => Some("token_mismatch"),
                    (Message::Hello { .. }, Err(other)) => {
                        panic!("{file}: unexpected handshake result {other}")
                    }
                    _ => None,
                };
                if handshake != expected.get("handshake").and_then(Value::as_str) {
                    failures.push(format!(
                        "{file}: handshake {handshake:?}, expected {}",
                        expected["handshake"]
                    ));
                }
                let again = decode(&frame::encode(&message).expect("re-encodes"))
                    .await
                    .expect("re-decodes");
                assert_eq!(again, message, "{file}: round trip");
            }
            (Err(error), None, Some(kind)) => {
                let got = error_kind(&error, &bytes);
                if got != kind {
                    failures.push(format!("{file}: failed with {got} ({error}), expected {kind}"));
                }
            }
            (Ok(message), None, Some(kind)) => {
                failures.push(format!("{file}: decoded {message:?}, expected error {kind}"));
            }
            (Err(error), Some(_), None) => failures.push(format!("{file}: expected a message, got {error}")),
            _ => panic!("{file}: `expected` needs exactly one of `ok` and `error`"),
        }
    }
    assert!(
        failures.is_empty(),
        "{} vectors failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn the_manifest_lists_every_vector_file_and_covers_the_protocol() {
    let manifest = manifest();
    let listed: BTreeSet<String> = vectors(&manifest)
        .iter()
        .map(|v| v["file"].as_str().expect("file").to_string())
        .collect();
    assert_eq!(listed.len(), vectors(&manifest).len(), "a file is listed twice");
    let on_disk: BTreeSet<String> = std::fs::read_dir(vectors_dir())
        .expect("vectors dir")
        .map(|entry| entry.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".bin"))
        .collect();
    assert_eq!(listed, on_disk, "vectors.json and the .bin files disagree");

    let mut covered = BTreeSet::new();
    for vector in vectors(&manifest) {
        let expected = &vector["expected"];
        if let Some(kind) = expected["ok"]["type"].as_str() {
            covered.insert(kind.to_string());
        }
        if let Some(kind) = expected["error"].as_str() {
            covered.insert(kind.to_string());
        }
        if let Some(kind) = expected["handshake"].as_str() {
            covered.insert(kind.to_string());
        }
        if expected["ok"]["type"] == "STATE" {
            let state = &expected["ok"];
            let full = ["snapshots", "exceptions", "logs", "coverage"]
                .iter()
                .all(|field| {
                    state[field].as_array().is_some_and(|a| !a.is_empty()) || state[field].is_object()
                });
            if full && state["exceptions"].as_array().is_some_and(|a| !a.is_empty()) {
                covered.insert("STATE with everything".into());
            }
            if state.get("coverage").is_none() {
                covered.insert("STATE without coverage".into());
            }
            if state.get("hierarchy").is_some() {
                covered.insert("STATE with hierarchy".into());
            }
        }
        if expected["ok"]["type"] == "PAUSE" && expected["ok"]["hierarchy"] == true {
            covered.insert("PAUSE asking for the hierarchy".into());
        }
    }
    let required = [
        "HELLO",
        "PAUSE",
        "STATE",
        "RESUME",
        "GOODBYE",
        "STATE with everything",
        "STATE without coverage",
        "truncated",
        "oversize",
        "bad_json",
        "unknown_type",
        "invalid_message",
        "accepted",
        "version_mismatch",
        "token_missing",
        "token_mismatch",
        "STATE with hierarchy",
        "PAUSE asking for the hierarchy",
    ];
    let missing: Vec<_> = required.iter().filter(|r| !covered.contains(**r)).collect();
    assert!(missing.is_empty(), "no vector for {missing:?}");
}
