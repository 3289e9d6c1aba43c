#!/usr/bin/env python3
"""Writes the SDK socket test vectors (proto/vectors/*.bin and vectors.json).

The checked-in bytes are the contract, not this script: the Rust host, the
Kotlin SDK and the Swift SDK all decode every vector and compare with
`expected`. Re-run it only to add or change a vector, then review the diff:

    python3 proto/vectors/generate.py

It is deliberately independent of any implementation (standard library only),
so a bug in one codec cannot leak into the vectors. See proto/agent.md.
"""

import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
PROTOCOL_VERSION = 1
MAX_FRAME_BYTES = 16 * 1024 * 1024


def payload(message):
    """Compact UTF-8 JSON, keys in the order given."""
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def frame(body):
    return struct.pack(">I", len(body)) + body


HELLO = {
    "type": "HELLO",
    "protocol_version": 1,
    "sdk_version": "1.0.0",
    "platform": "android",
    "app_id": "app.folio",
}

STATE_FULL = {
    "type": "STATE",
    "id": 12,
    "snapshots": {
        "logged_in": True,
        "route": "ledger",
        "accounts": [
            {"id": "a1", "name": "Cash", "balance": 1250, "txn_count": 2},
            {"id": "a2", "name": "Épargne €", "balance": -300, "txn_count": 0},
        ],
        "total_balance": 950,
        "active_account_id": None,
        "form_errors": {},
    },
    "exceptions": [
        {
            "class": "java.lang.IllegalStateException",
            "message": "note longer than 40 characters",
            "stack": "at app.folio.Ledger.addTxn(Ledger.kt:42)\nat app.folio.Main.loop(Main.kt:7)",
            "time": 120345,
        }
    ],
    "logs": [
        {"time": 120001, "level": "info", "tag": "folio", "message": "ledger opened"},
        {"time": 120300, "level": "error", "tag": "folio", "message": "balance mismatch"},
    ],
    "coverage": ["ledger.open", "txn.submit.debit", "txn.validate.note_long"],
}

STATE_NO_COVERAGE = {
    "type": "STATE",
    "id": 13,
    "snapshots": {"route": "home"},
    "exceptions": [],
    "logs": [],
}

# The run token of the token vectors: what the host generated and passed to the
# app at launch, and what its listener requires (`listener_token` in the manifest).
RUN_TOKEN = "3f9c2a7e0b5d4e1f8a6c"

HELLO_WITH_TOKEN = dict(HELLO, token=RUN_TOKEN, capabilities=["hierarchy"])


def node(class_name, bounds, children=(), **fields):
    """A driver.proto Node in its JSON mapping, every field present."""
    full = {
        "resource_id": "",
        "text": "",
        "content_description": "",
        "class_name": class_name,
        "package": "app.folio",
        "clickable": False,
        "enabled": True,
        "checked": False,
        "focused": False,
        "selected": False,
        "scrollable": False,
        "bounds": dict(zip(("left", "top", "right", "bottom"), bounds)),
        "children": list(children),
    }
    full.update(fields)
    return full


HIERARCHY = {
    "root": node(
        "android.widget.FrameLayout",
        (0, 0, 1080, 2400),
        [
            node(
                "android.widget.EditText",
                (48, 200, 1032, 320),
                resource_id="app.folio:id/note",
                text="Café ☕",
                clickable=True,
                focused=True,
            ),
            node(
                "android.widget.Button",
                (48, 360, 1032, 480),
                resource_id="app.folio:id/submit",
                text="Submit",
                content_description="Submit transaction",
                clickable=True,
                enabled=False,
            ),
        ],
    ),
    "screen_width": 1080,
    "screen_height": 2400,
}

STATE_HIERARCHY = {
    "type": "STATE",
    "id": 17,
    "snapshots": {"route": "txn"},
    "exceptions": [],
    "logs": [],
    "hierarchy": HIERARCHY,
}

# (file, description, bytes, expected[, listener_token])
VECTORS = [
    (
        "hello.bin",
        "HELLO of the current protocol version; the handshake accepts it",
        frame(payload(HELLO)),
        {"ok": HELLO, "handshake": "accepted"},
    ),
    (
        "hello_wrong_version.bin",
        "HELLO of protocol version 2: a valid frame, which the handshake rejects "
        "(the host answers GOODBYE naming both versions and closes)",
        frame(payload(dict(HELLO, protocol_version=2))),
        {"ok": dict(HELLO, protocol_version=2), "handshake": "version_mismatch"},
    ),
    (
        "pause.bin",
        "PAUSE with id 7",
        frame(payload({"type": "PAUSE", "id": 7})),
        {"ok": {"type": "PAUSE", "id": 7}},
    ),
    (
        "pause_large_id.bin",
        "PAUSE with the largest id (2^53 - 1) every JSON implementation represents exactly",
        frame(payload({"type": "PAUSE", "id": 9007199254740991})),
        {"ok": {"type": "PAUSE", "id": 9007199254740991}},
    ),
    (
        "resume.bin",
        "RESUME with id 7",
        frame(payload({"type": "RESUME", "id": 7})),
        {"ok": {"type": "RESUME", "id": 7}},
    ),
    (
        "goodbye.bin",
        "GOODBYE with a reason",
        frame(payload({"type": "GOODBYE", "reason": "app is finishing"})),
        {"ok": {"type": "GOODBYE", "reason": "app is finishing"}},
    ),
    (
        "goodbye_crash.bin",
        "GOODBYE sent by a dying app: reason 'crash: <class>: <message>'",
        frame(payload({"type": "GOODBYE", "reason": "crash: java.lang.IllegalStateException: note too long"})),
        {"ok": {"type": "GOODBYE", "reason": "crash: java.lang.IllegalStateException: note too long"}},
    ),
    (
        "state_full.bin",
        "STATE with snapshots (nested values, null, non-ASCII text), an exception, logs and coverage",
        frame(payload(STATE_FULL)),
        {"ok": STATE_FULL},
    ),
    (
        "state_no_coverage.bin",
        "STATE without the coverage field: the app has no coverage (not the same as an empty list)",
        frame(payload(STATE_NO_COVERAGE)),
        {"ok": STATE_NO_COVERAGE},
    ),
    (
        "state_empty_coverage.bin",
        "STATE with coverage [] : the app has coverage but hit no new probe",
        frame(payload({"type": "STATE", "id": 14, "snapshots": {}, "exceptions": [], "logs": [], "coverage": []})),
        {"ok": {"type": "STATE", "id": 14, "snapshots": {}, "exceptions": [], "logs": [], "coverage": []}},
    ),
    (
        "state_minimal.bin",
        "STATE with only its id: snapshots, exceptions and logs default to empty; "
        "a log's tag and an exception's stack default to empty strings",
        frame(payload({"type": "STATE", "id": 15})),
        {"ok": {"type": "STATE", "id": 15, "snapshots": {}, "exceptions": [], "logs": []}},
    ),
    (
        "state_optional_fields.bin",
        "STATE whose log has no tag and whose exception has no stack",
        frame(
            payload(
                {
                    "type": "STATE",
                    "id": 16,
                    "exceptions": [{"class": "E", "message": "m", "time": 5}],
                    "logs": [{"time": 4, "level": "warn", "message": "w"}],
                }
            )
        ),
        {
            "ok": {
                "type": "STATE",
                "id": 16,
                "snapshots": {},
                "exceptions": [{"class": "E", "message": "m", "stack": "", "time": 5}],
                "logs": [{"time": 4, "level": "warn", "tag": "", "message": "w"}],
            }
        },
    ),
    (
        "whitespace_and_key_order.bin",
        "PAUSE pretty-printed, with `type` last: whitespace and key order do not matter",
        frame(b'{\n  "id" : 8,\n  "type" : "PAUSE"\n}\n'),
        {"ok": {"type": "PAUSE", "id": 8}},
    ),
    (
        "empty.bin",
        "no bytes at all: the stream ended cleanly between frames",
        b"",
        {"error": "closed"},
    ),
    (
        "truncated_prefix.bin",
        "only 2 of the 4 length bytes",
        b"\x00\x00",
        {"error": "truncated"},
    ),
    (
        "truncated_payload.bin",
        "the length says 23 bytes (a PAUSE), only 10 follow",
        frame(payload({"type": "PAUSE", "id": 7}))[:14],
        {"error": "truncated"},
    ),
    (
        "oversize.bin",
        "length 0x01000001 (16 MiB + 1) and no payload: rejected from the prefix alone, "
        "before any payload is read",
        struct.pack(">I", MAX_FRAME_BYTES + 1),
        {"error": "oversize"},
    ),
    (
        "oversize_max_length.bin",
        "length 0xFFFFFFFF and no payload",
        b"\xff\xff\xff\xff",
        {"error": "oversize"},
    ),
    (
        "empty_payload.bin",
        "length 0: an empty payload is not JSON",
        struct.pack(">I", 0),
        {"error": "bad_json"},
    ),
    (
        "bad_json.bin",
        "a payload that is not JSON (a value is missing)",
        frame(b'{"type":"PAUSE","id":}'),
        {"error": "bad_json"},
    ),
    (
        "not_utf8.bin",
        "a payload with a byte that is not UTF-8 (0xFF) inside a string",
        frame(b'{"type":"GOODBYE","reason":"\xff"}'),
        {"error": "bad_json"},
    ),
    (
        "unknown_type.bin",
        "a message type this protocol version does not define",
        frame(payload({"type": "REBOOT"})),
        {"error": "unknown_type"},
    ),
    (
        "lowercase_type.bin",
        "type names are upper case: 'pause' is unknown",
        frame(payload({"type": "pause", "id": 1})),
        {"error": "unknown_type"},
    ),
    (
        "missing_type.bin",
        "an object without a type",
        frame(payload({"id": 1})),
        {"error": "unknown_type"},
    ),
    (
        "missing_field.bin",
        "PAUSE without its required id",
        frame(payload({"type": "PAUSE"})),
        {"error": "invalid_message"},
    ),
    (
        "hello_missing_field.bin",
        "HELLO without app_id",
        frame(payload({k: v for k, v in HELLO.items() if k != "app_id"})),
        {"error": "invalid_message"},
    ),
    (
        "wrong_field_type.bin",
        "PAUSE whose id is a string",
        frame(payload({"type": "PAUSE", "id": "7"})),
        {"error": "invalid_message"},
    ),
    (
        "negative_id.bin",
        "RESUME with a negative id (ids are unsigned)",
        frame(payload({"type": "RESUME", "id": -1})),
        {"error": "invalid_message"},
    ),
    (
        "unknown_field.bin",
        "RESUME with a field the message does not define (unknown fields are rejected)",
        frame(payload({"type": "RESUME", "id": 1, "extra": True})),
        {"error": "invalid_message"},
    ),
    (
        "bad_log_level.bin",
        "STATE with a log level that does not exist",
        frame(payload({"type": "STATE", "id": 2, "logs": [{"time": 1, "level": "loud", "message": "m"}]})),
        {"error": "invalid_message"},
    ),
    (
        "not_an_object.bin",
        "a JSON array instead of an object",
        frame(b'["PAUSE",1]'),
        {"error": "invalid_message"},
    ),
    # The run token and the hierarchy from inside the app (agent.md §1, §3).
    (
        "hello_token.bin",
        "HELLO with the run token the listener requires and the hierarchy capability; accepted",
        frame(payload(HELLO_WITH_TOKEN)),
        {"ok": HELLO_WITH_TOKEN, "handshake": "accepted"},
        RUN_TOKEN,
    ),
    (
        "hello_token_mismatch.bin",
        "HELLO whose token is not the one the listener requires: refused with "
        "GOODBYE 'run token mismatch: ...'",
        frame(payload(dict(HELLO, token="not-this-run"))),
        {"ok": dict(HELLO, token="not-this-run"), "handshake": "token_mismatch"},
        RUN_TOKEN,
    ),
    (
        "hello_token_missing.bin",
        "HELLO without a token to a listener that requires one: refused with "
        "GOODBYE 'run token missing: ...'",
        frame(payload(HELLO)),
        {"ok": HELLO, "handshake": "token_missing"},
        RUN_TOKEN,
    ),
    (
        "hello_bad_capabilities.bin",
        "HELLO whose capabilities is a string, not an array of strings",
        frame(payload(dict(HELLO, capabilities="hierarchy"))),
        {"error": "invalid_message"},
    ),
    (
        "pause_hierarchy.bin",
        "PAUSE asking for the hierarchy of the app's windows",
        frame(payload({"type": "PAUSE", "id": 9, "hierarchy": True})),
        {"ok": {"type": "PAUSE", "id": 9, "hierarchy": True}},
    ),
    (
        "pause_hierarchy_not_bool.bin",
        "PAUSE whose hierarchy is a string, not a boolean",
        frame(payload({"type": "PAUSE", "id": 9, "hierarchy": "yes"})),
        {"error": "invalid_message"},
    ),
    (
        "state_hierarchy.bin",
        "STATE carrying the hierarchy (driver.proto HierarchyResponse, proto field names): "
        "nested nodes, bounds, flags, non-ASCII text",
        frame(payload(STATE_HIERARCHY)),
        {"ok": STATE_HIERARCHY},
    ),
    (
        "state_hierarchy_missing_field.bin",
        "STATE whose hierarchy has a node without class_name (every Node field is required)",
        frame(
            payload(
                dict(
                    STATE_HIERARCHY,
                    hierarchy=dict(
                        HIERARCHY,
                        root={k: v for k, v in HIERARCHY["root"].items() if k != "class_name"},
                    ),
                )
            )
        ),
        {"error": "invalid_message"},
    ),
]


def main():
    manifest = {
        "protocol_version": PROTOCOL_VERSION,
        "max_frame_bytes": MAX_FRAME_BYTES,
        "vectors": [],
    }
    for name, description, data, expected, *listener_token in VECTORS:
        with open(os.path.join(HERE, name), "wb") as out:
            out.write(data)
        entry = {"file": name, "description": description, "expected": expected}
        if listener_token:
            entry["listener_token"] = listener_token[0]
        manifest["vectors"].append(entry)
    with open(os.path.join(HERE, "vectors.json"), "w", encoding="utf-8") as out:
        json.dump(manifest, out, indent=2, ensure_ascii=False)
        out.write("\n")


if __name__ == "__main__":
    main()
