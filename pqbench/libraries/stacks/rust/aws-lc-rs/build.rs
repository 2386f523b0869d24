// The versions `hello` reports, read from this crate's Cargo.lock at build time.
include!("../common/locked_versions.rs");
