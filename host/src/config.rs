//! `uatu.toml` and its merge with the command line.
