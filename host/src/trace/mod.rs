//! The run directory: meta.json, trace.jsonl, screenshots, summary.json.
