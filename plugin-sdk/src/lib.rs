//! The public plugin contract of uatu. See `docs/plugins.md`.
