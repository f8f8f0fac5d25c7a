//! Helpers shared by the integration tests: where the server binaries are,
//! and which CPUs a test may pin to.

// Each test binary includes this module and uses a different subset of it.
#![allow(dead_code)]

use std::path::PathBuf;

use bench_client::affinity::{CpuList, affinity_of};

/// `target/<profile>/` of this test binary, where `cargo test --workspace`
/// also builds the server binaries (each server crate has integration tests,
/// so Cargo builds its binary).
pub(crate) fn bin_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    exe.parent().and_then(|deps| deps.parent()).expect("target/<profile>/deps").to_path_buf()
}

/// The binary of `server-<name>`, asserting it was built.
pub(crate) fn server_binary(name: &str) -> PathBuf {
    let path = bin_dir().join(format!("server-{name}"));
    assert!(
        path.is_file(),
        "{} missing: run `cargo test --workspace` (or `make test`), which builds it",
        path.display()
    );
    path
}

/// Every CPU this process may use, as a list.
pub(crate) fn all_cpus() -> CpuList {
    let cpus = affinity_of(0).expect("own affinity");
    cpus.iter().map(ToString::to_string).collect::<Vec<_>>().join(",").parse().expect("cpu list")
}
