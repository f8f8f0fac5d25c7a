//! Reading and writing results files: the schema-version check on the way
//! in, an atomic rename on the way out. `load`, `watch` and `merge` results
//! may also be read from a log holding them between marker lines
//! ([`super::block`]), such as `kubectl logs` of their pods. Any of them
//! may be gzipped (`*.gz`, as the sessions under `bench/runs/` are): read
//! as if it were not.

use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::block::{BEGIN_MARKER, blocks};
use super::{
    COUNT_SCHEMA_VERSION, CountReport, LoadReport, MEMORY_SCHEMA_VERSION, MemoryReport, OLDEST_READABLE_SCHEMA_VERSION,
    Results, SCHEMA_VERSION, WatchReport,
};

/// Reads a `results.json`, given as the file or the run folder holding it
/// (its `results.json`, else its `results.json.gz`), gzipped or not.
///
/// # Errors
/// A missing, unreadable, truncated or corrupted file, or one of another
/// schema version; the message names the file.
pub fn read(path: &Path) -> anyhow::Result<Results> {
    read_as(&results_file(path), "the results layout", OLDEST_READABLE_SCHEMA_VERSION)
}

/// The file [`read`] reads for `path`: `path` itself, or in a folder its
/// `results.json`, or its `results.json.gz` when only that one is there.
pub fn results_file(path: &Path) -> PathBuf {
    if !path.is_dir() {
        return path.to_path_buf();
    }
    let plain = path.join("results.json");
    let gzipped = path.join("results.json.gz");
    if !plain.exists() && gzipped.exists() { gzipped } else { plain }
}

/// The first bytes of every gzip stream (RFC 1952, section 2.3.1).
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// The text of `path`, decompressed when it is gzip (its name ends in `.gz`,
/// or its bytes start as gzip's do).
fn read_text(path: &Path) -> anyhow::Result<String> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let gzipped = path.extension().is_some_and(|e| e == "gz") || bytes.starts_with(&GZIP_MAGIC);
    if !gzipped {
        return String::from_utf8(bytes)
            .with_context(|| format!("cannot read {}: not UTF-8 text, nor gzip", path.display()));
    }
    let mut text = String::new();
    flate2::read::MultiGzDecoder::new(bytes.as_slice())
        .read_to_string(&mut text)
        .with_context(|| format!("cannot read {} as gzip (truncated or corrupted?)", path.display()))?;
    Ok(text)
}

/// Reads what `count` wrote (`count.json`), gzipped or not; older
/// versions read with their missing counts empty.
///
/// # Errors
/// A file that cannot be read, is not a `count.json`, or is of a newer
/// layout than this reader's; the message names it.
pub fn read_count(path: &Path) -> anyhow::Result<CountReport> {
    let report: CountReport =
        serde_json::from_str(&read_text(path)?).with_context(|| format!("{}: not a count.json", path.display()))?;
    anyhow::ensure!(
        report.schema_version <= COUNT_SCHEMA_VERSION,
        "{}: a count.json of schema version {}, newer than this reader's {COUNT_SCHEMA_VERSION}",
        path.display(),
        report.schema_version
    );
    Ok(report)
}

/// Reads a `memory.json` (`memory --from`), or the `memory` of a
/// `results.json` of the suite's `memory` scenario.
///
/// # Errors
/// A file that cannot be read, is neither, or is of a newer layout than
/// this reader's; the message names it.
pub fn read_memory(path: &Path) -> anyhow::Result<MemoryReport> {
    let not = || format!("{}: not a memory.json, nor a results.json of the memory scenario", path.display());
    let mut value: serde_json::Value = serde_json::from_str(&read_text(path)?).with_context(not)?;
    if value.get("meta").is_some() {
        value = value.get_mut("memory").map(serde_json::Value::take).with_context(not)?;
    }
    let report: MemoryReport = serde_json::from_value(value).with_context(not)?;
    anyhow::ensure!(
        report.schema_version <= MEMORY_SCHEMA_VERSION,
        "{}: a memory.json of schema version {}, newer than this reader's {MEMORY_SCHEMA_VERSION}",
        path.display(),
        report.schema_version
    );
    Ok(report)
}

/// Reads what `load --json` (or `merge --json`) wrote.
///
/// # Errors
/// As [`read`]; a file of another layout (a `results.json`, a `watch` file).
pub fn read_load(path: &Path) -> anyhow::Result<LoadReport> {
    read_as(path, "the layout of `load --json`", OLDEST_READABLE_SCHEMA_VERSION)
}

/// Reads the `load --json` reports in `path`: the file itself, or every
/// result between marker lines in a log (`load --json -` in several pods,
/// `kubectl logs --prefix` concatenated). Each comes with the name to call
/// it by: the path, followed in a log by the pod (`clients.log[pod/NAME/client]`)
/// or, without prefixes, by its place (`clients.log#2`) when there are several.
///
/// # Errors
/// As [`read_load`]; a log without any result; a result cut short or
/// failing its checksum.
pub fn read_loads(path: &Path) -> anyhow::Result<Vec<(String, LoadReport)>> {
    read_all(path, "the layout of `load --json`", OLDEST_READABLE_SCHEMA_VERSION)
}

/// Reads what `watch --json` wrote (schema 6 on): the file, or a log holding
/// exactly one result between marker lines (`watch --json -`).
///
/// # Errors
/// As [`read`]; a file of another layout; a log with no result or several.
pub fn read_watch(path: &Path) -> anyhow::Result<WatchReport> {
    let mut all = read_all(path, "the layout of `watch --json`", 6)?;
    anyhow::ensure!(all.len() == 1, "{} holds {} results; give the one of `watch`", path.display(), all.len());
    Ok(all.remove(0).1)
}

/// Reads `path` as one `T`, or every `T` between marker lines in it.
fn read_all<T: DeserializeOwned + Consistent>(
    path: &Path,
    layout: &str,
    oldest: u32,
) -> anyhow::Result<Vec<(String, T)>> {
    let text = read_text(path)?;
    let name = path.display().to_string();
    if !text.contains(BEGIN_MARKER) {
        return Ok(vec![(name.clone(), parse_as(&text, &name, layout, oldest)?)]);
    }
    let found = blocks(&text).with_context(|| format!("{name}: unreadable log"))?;
    let several = found.len() > 1;
    found
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let which = match (b.prefix.as_str(), several) {
                ("", false) => name.clone(),
                ("", true) => format!("{name}#{}", i + 1),
                (prefix, _) => format!("{name}[{prefix}]"),
            };
            parse_as(&b.json, &which, layout, oldest).map(|value| (which, value))
        })
        .collect()
}

/// What a file read back must hold beyond its layout: numbers that add up.
trait Consistent {
    /// The first inconsistency, naming the field.
    fn check(&self) -> Result<(), String>;
}

impl Consistent for Results {
    fn check(&self) -> Result<(), String> {
        self.runs.iter().try_for_each(|r| {
            r.figures
                .check(self.schema_version >= 8)
                .map_err(|e| format!("run {} {} {} round {}: {e}", r.framework.name(), r.scenario, r.variant, r.round))
        })
    }
}

impl Consistent for LoadReport {
    fn check(&self) -> Result<(), String> {
        self.figures.check(self.schema_version >= 8)
    }
}

impl Consistent for WatchReport {
    fn check(&self) -> Result<(), String> {
        let windows = &self.server_cpu_percent_windows;
        match windows.iter().find(|p| !p.is_finite() || **p < 0.0) {
            Some(p) => Err(format!("`server_cpu_percent_windows` holds {p}")),
            None if self.window_s.is_nan()
                || self.window_s <= 0.0
                || !self.duration_s.is_finite()
                || self.duration_s < 0.0 =>
            {
                Err(format!("`window_s` {} and `duration_s` {} are not a run's", self.window_s, self.duration_s))
            }
            None => Ok(()),
        }
    }
}

/// What kind of file `value` is, by the keys only it has: how to call it,
/// and the word its layout's name holds.
fn kind_of(value: &serde_json::Value) -> Option<(&'static str, &'static str)> {
    let has = |key: &str| value.get(key).is_some();
    if has("meta") && has("runs") {
        Some(("the results.json of `suite` or `ab`", "results"))
    } else if has("url") && has("windows") {
        Some(("a report of `load --json` or `merge --json`", "load"))
    } else if has("pid") && has("server_cpu_percent_windows") {
        Some(("a file of `watch --json`", "watch"))
    } else {
        None
    }
}

/// Reads `file` as `T`, of schema `oldest` to [`SCHEMA_VERSION`].
fn read_as<T: DeserializeOwned + Consistent>(file: &Path, layout: &str, oldest: u32) -> anyhow::Result<T> {
    let text = read_text(file)?;
    parse_as(&text, &file.display().to_string(), layout, oldest)
}

/// Parses `text` (called `name` in errors) as `T`, of schema `oldest` to
/// [`SCHEMA_VERSION`], whose numbers add up ([`Consistent`]).
fn parse_as<T: DeserializeOwned + Consistent>(text: &str, name: &str, layout: &str, oldest: u32) -> anyhow::Result<T> {
    let value: serde_json::Value =
        serde_json::from_str(text).with_context(|| format!("{name} is not valid JSON (truncated or corrupted?)"))?;
    let version = value.get("schema_version").and_then(serde_json::Value::as_u64);
    anyhow::ensure!(
        version.is_some_and(|v| (u64::from(oldest)..=u64::from(SCHEMA_VERSION)).contains(&v)),
        "{name} has schema_version {}, this bench-client reads {oldest} to {SCHEMA_VERSION}",
        version.map_or_else(|| "(none)".to_owned(), |v| v.to_string())
    );
    let kind = kind_of(&value);
    let parsed: T = serde_json::from_value(value).with_context(|| match kind {
        Some(kind) if !layout.contains(kind.1) => format!("{name} is {}, not {layout}", kind.0),
        _ => format!("{name} does not match {layout}"),
    })?;
    parsed.check().map_err(|why| anyhow::anyhow!("{name}: {why}"))?;
    Ok(parsed)
}

/// Writes `value` as pretty JSON to `path` atomically, or keeps it in the
/// system's temporary folder when `path` fails ([`crate::sys::write_or_keep`]).
///
/// # Errors
/// When the file cannot be written ([`crate::sys::NotWritten`], naming where
/// the results were kept instead).
pub fn write<T: Serialize>(path: &Path, value: &T) -> anyhow::Result<()> {
    let text = serde_json::to_string_pretty(value)? + "\n";
    Ok(crate::sys::write_or_keep(path, text.as_bytes())?)
}

/// Writes a `load`, `watch` or `merge` result to `--json PATH`: the file, or
/// with `-` stdout between marker lines (a pod's log carries it; `merge`
/// reads it back from `kubectl logs`).
///
/// # Errors
/// When the file or stdout cannot be written.
pub fn emit<T: Serialize>(path: &Path, value: &T) -> anyhow::Result<()> {
    if path.as_os_str() == "-" { super::write_block(&mut std::io::stdout().lock(), value) } else { write(path, value) }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::results::fixtures::{load_report, results, run};

    #[test]
    fn a_count_json_newer_than_this_reader_is_refused_naming_both_versions() {
        let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench/runs/2026-12-03-counted/make-count.json");
        let report = read_count(&committed).unwrap();
        assert!(report.schema_version <= COUNT_SCHEMA_VERSION);
        let mut value: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&committed).unwrap()).unwrap();
        value["schema_version"] = (COUNT_SCHEMA_VERSION + 1).into();
        let newer = std::env::temp_dir().join(format!("bench-newer-count-{}.json", std::process::id()));
        std::fs::write(&newer, value.to_string()).unwrap();
        let e = read_count(&newer).unwrap_err().to_string();
        let said = format!(
            "a count.json of schema version {}, newer than this reader's {COUNT_SCHEMA_VERSION}",
            COUNT_SCHEMA_VERSION + 1
        );
        assert!(e.ends_with(&said), "{e}");
        let _ = std::fs::remove_file(&newer);
    }

    #[test]
    fn memory_from_reads_a_memory_json_or_the_memory_of_a_results_json_and_nothing_else() {
        let dir = std::env::temp_dir().join(format!("bench-read-memory-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let report = crate::results::fixtures::memory_report();
        let alone = dir.join("memory.json");
        std::fs::write(&alone, serde_json::to_vec(&report).unwrap()).unwrap();
        assert_eq!(read_memory(&alone).unwrap(), report);
        let mut suite = results(vec![]);
        suite.memory = Some(report.clone());
        let within = dir.join("results.json");
        std::fs::write(&within, serde_json::to_vec(&suite).unwrap()).unwrap();
        assert_eq!(read_memory(&within).unwrap(), report, "the memory scenario's session");
        suite.memory = None;
        std::fs::write(&within, serde_json::to_vec(&suite).unwrap()).unwrap();
        let e = read_memory(&within).unwrap_err().to_string();
        assert!(e.ends_with("results.json: not a memory.json, nor a results.json of the memory scenario"), "{e}");
        let newer = MemoryReport { schema_version: MEMORY_SCHEMA_VERSION + 1, ..report };
        std::fs::write(&alone, serde_json::to_vec(&newer).unwrap()).unwrap();
        let e = read_memory(&alone).unwrap_err().to_string();
        assert!(
            e.contains(&format!("schema version {}, newer than this reader's 2", MEMORY_SCHEMA_VERSION + 1)),
            "{e}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_file_whose_numbers_do_not_add_up_is_refused_naming_file_and_field() {
        let dir = std::env::temp_dir().join(format!("bench-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("c0.json");
        let mut value = serde_json::to_value(load_report(0, 1, 1_796_119_201_000, &[5, 6, 7, 8])).unwrap();
        value["windows_failed"].as_array_mut().unwrap().pop();
        std::fs::write(&path, value.to_string()).unwrap();
        let err = format!("{:#}", read_load(&path).unwrap_err());
        assert_eq!(err, format!("{}: `windows_failed` has 1 windows where `windows` has 2", path.display()));

        let mut r = results(vec![run(crate::model::Framework::Axum, "floor", "plaintext", 1, 40, true)]);
        r.runs[0].figures.counts.sent -= 1;
        write(&path, &r).unwrap();
        let err = format!("{:#}", read(&path).unwrap_err());
        assert!(
            err.starts_with(&format!("{}: run axum floor plaintext round 1: `sent` is 39", path.display())),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn failures_by_status_and_absent_figures_read_back_as_written() {
        let dir = std::env::temp_dir().join(format!("bench-file-status-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("c0.json");
        // Nothing succeeded, every measured response a 503: no latency.
        let mut report = load_report(0, 1, 1_796_119_201_000, &[]);
        report.figures.failed.status.insert(503, 4);
        report.figures.windows_failed = vec![2, 2];
        (report.figures.failed_total, report.figures.counts.sent) = (4, 14);
        write(&path, &report).unwrap();
        let back = read_load(&path).unwrap();
        assert_eq!(back.figures.failed.status, BTreeMap::from([(503, 4)]));
        assert_eq!((back.figures.latency_us, back.figures.latency_percentiles_us.len()), (None, 0));
        assert_eq!(back, report);

        let mut r = results(vec![run(crate::model::Framework::Axum, "floor", "plaintext", 1, 40, true)]);
        r.runs[0].figures.failed.status.insert(404, 1);
        r.runs[0].figures.windows_failed = vec![1];
        (r.runs[0].figures.failed_total, r.runs[0].figures.counts.sent) = (1, 41);
        write(&path, &r).unwrap();
        assert_eq!(read(&path).unwrap().runs[0].figures.failed.status, BTreeMap::from([(404, 1)]));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// `bytes` gzipped.
    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut encoder, bytes).unwrap();
        encoder.finish().unwrap()
    }

    #[test]
    fn a_gzipped_file_reads_as_the_plain_one_and_a_folder_falls_back_to_it() {
        let dir = std::env::temp_dir().join(format!("bench-file-gz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let r = results(vec![run(crate::model::Framework::Axum, "floor", "plaintext", 1, 40, true)]);
        let text = serde_json::to_string(&r).unwrap();
        std::fs::write(dir.join("results.json.gz"), gzip(text.as_bytes())).unwrap();
        assert_eq!(results_file(&dir), dir.join("results.json.gz"));
        assert_eq!(serde_json::to_value(read(&dir).unwrap()).unwrap(), serde_json::to_value(&r).unwrap());
        // Gzip by its bytes under any name, as `gzip -c > x.json` leaves it.
        std::fs::write(dir.join("renamed.json"), gzip(text.as_bytes())).unwrap();
        assert_eq!(read(&dir.join("renamed.json")).unwrap().runs.len(), 1);
        std::fs::write(dir.join("results.json"), &text).unwrap();
        assert_eq!(results_file(&dir), dir.join("results.json"), "the plain file first");

        let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench/runs/2026-12-03-count/make-count.json");
        std::fs::write(dir.join("count.json.gz"), gzip(&std::fs::read(&committed).unwrap())).unwrap();
        let (plain, gzipped) = (read_count(&committed).unwrap(), read_count(&dir.join("count.json.gz")).unwrap());
        assert_eq!(serde_json::to_value(gzipped).unwrap(), serde_json::to_value(plain).unwrap());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
