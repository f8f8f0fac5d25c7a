//! Reading and writing results files: the schema-version check on the way
//! in, an atomic rename on the way out.

use std::path::Path;

use anyhow::Context;
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{LoadReport, OLDEST_READABLE_SCHEMA_VERSION, Results, SCHEMA_VERSION, WatchReport};

/// Reads a `results.json`, given as the file or the run folder holding it.
///
/// # Errors
/// A missing, unreadable, truncated or corrupted file, or one of another
/// schema version; the message names the file.
pub fn read(path: &Path) -> anyhow::Result<Results> {
    let file = if path.is_dir() { path.join("results.json") } else { path.to_path_buf() };
    read_as(&file, "the results layout", OLDEST_READABLE_SCHEMA_VERSION)
}

/// Reads what `load --json` (or `merge --json`) wrote.
///
/// # Errors
/// As [`read`]; a file of another layout (a `results.json`, a `watch` file).
pub fn read_load(path: &Path) -> anyhow::Result<LoadReport> {
    read_as(path, "the layout of `load --json`", OLDEST_READABLE_SCHEMA_VERSION)
}

/// Reads what `watch --json` wrote (schema 6 on).
///
/// # Errors
/// As [`read`]; a file of another layout.
pub fn read_watch(path: &Path) -> anyhow::Result<WatchReport> {
    read_as(path, "the layout of `watch --json`", 6)
}

/// Reads `file` as `T`, of schema `oldest` to [`SCHEMA_VERSION`].
fn read_as<T: DeserializeOwned>(file: &Path, layout: &str, oldest: u32) -> anyhow::Result<T> {
    let text = std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    let value: serde_json::Value = serde_json::from_str(&text)
        .with_context(|| format!("{} is not valid JSON (truncated or corrupted?)", file.display()))?;
    let version = value.get("schema_version").and_then(serde_json::Value::as_u64);
    anyhow::ensure!(
        version.is_some_and(|v| (u64::from(oldest)..=u64::from(SCHEMA_VERSION)).contains(&v)),
        "{} has schema_version {}, this bench-client reads {oldest} to {SCHEMA_VERSION}",
        file.display(),
        version.map_or_else(|| "(none)".to_owned(), |v| v.to_string())
    );
    serde_json::from_value(value).with_context(|| format!("{} does not match {layout}", file.display()))
}

/// Writes `value` as pretty JSON to `path` atomically (temporary file, then rename).
///
/// # Errors
/// When the file cannot be written.
pub fn write<T: Serialize>(path: &Path, value: &T) -> anyhow::Result<()> {
    let tmp = path.with_extension("json.tmp");
    let text = serde_json::to_string_pretty(value)?;
    std::fs::write(&tmp, text + "\n").with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))
}
