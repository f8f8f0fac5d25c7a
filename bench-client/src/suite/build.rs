//! Where the workspace and its binaries are, and `cargo build` of the
//! servers. The workspace is the one this client was compiled in
//! (`CARGO_MANIFEST_DIR` at build time): a client binary copied elsewhere
//! still builds and runs the servers of its own tree.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

use crate::model::{Framework, Profile};

/// The workspace root (where `Cargo.toml` and `target/` are).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

/// The target folder of this workspace's builds.
pub(super) fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| workspace_root().join("target"), PathBuf::from)
}

/// Where Cargo puts `framework`'s server binary of `profile`.
pub fn server_binary(profile: Profile, framework: Framework) -> PathBuf {
    target_dir().join(profile.target_dir()).join(framework.binary())
}

/// Extra `RUSTFLAGS` of the `profiling` profile's servers: frame pointers, so
/// that `perf record --call-graph fp` can walk the stacks of optimized code
/// (Cargo profiles cannot set rustflags on stable Rust). The default DWARF
/// call graphs do not need them; they are kept so both modes profile the
/// same binaries.
pub const PROFILING_RUSTFLAGS: &str = "-C force-frame-pointers=yes";

/// Builds the servers of `frameworks` in `profile` (`cargo build --locked`);
/// cargo's own output goes to this process's stderr.
///
/// Runs `$CARGO`, or `cargo` when `CARGO` is unset.
///
/// # Errors
/// When cargo cannot be run or the build fails; the message quotes the command.
pub fn build(profile: Profile, frameworks: &[Framework]) -> anyhow::Result<()> {
    build_in(&workspace_root(), None, profile, frameworks)
}

/// A counted or measured session's start: the servers of `frameworks` built
/// in `profile` when `build` (and there are any), then the session's folder
/// made under `out`. Its start time and its folder.
///
/// # Errors
/// A build that fails; a folder that cannot be made.
pub(super) fn start_session(
    frameworks: &[Framework],
    build_them: bool,
    profile: Profile,
    out: &Path,
) -> anyhow::Result<(std::time::SystemTime, std::path::PathBuf)> {
    if build_them && !frameworks.is_empty() {
        build(profile, frameworks)?;
    }
    let started = std::time::SystemTime::now();
    Ok((started, crate::results::create_run_dir(out, profile, started)?))
}

/// Builds the servers of `frameworks` of the workspace at `root` in
/// `profile`, into `target` (Cargo's default when `None`).
///
/// # Errors
/// When cargo cannot be run or the build fails; the message quotes the command.
pub(super) fn build_in(
    root: &Path,
    target: Option<&Path>,
    profile: Profile,
    frameworks: &[Framework],
) -> anyhow::Result<()> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(&cargo);
    command.current_dir(root).args(["build", "--locked", "--profile", profile.cargo_name()]);
    if let Some(target) = target {
        command.env("CARGO_TARGET_DIR", target);
    }
    for f in frameworks {
        command.args(["-p", &f.binary()]);
    }
    if profile == Profile::Profiling {
        let mut flags = std::env::var("RUSTFLAGS").unwrap_or_default();
        flags.push(' ');
        flags.push_str(PROFILING_RUSTFLAGS);
        command.env("RUSTFLAGS", flags.trim());
    }
    let shown = std::iter::once(cargo.as_os_str())
        .chain(command.get_args())
        .map(|a| a.to_string_lossy())
        .collect::<Vec<_>>()
        .join(" ");
    eprintln!("building the servers ({} profile)…", profile.cargo_name());
    let status = command.status().with_context(|| format!("cannot run `{shown}`"))?;
    if !status.success() {
        bail!("`{shown}` failed ({status}): the servers were not built");
    }
    Ok(())
}
