//! A result carried in a log: `load --json -` (and `watch`, `merge`) print
//! the JSON between two marker lines, the second with the SHA-256 of the
//! JSON, so that a pod's log (`kubectl logs`) carries the result and a
//! truncated or altered one is caught:
//!
//! ```text
//! -----BEGIN BENCH RESULT-----
//! {
//!   "schema_version": 6,
//!   …
//! }
//! -----END BENCH RESULT sha256=3b1f…-----
//! ```
//!
//! Lines longer than [`FOLD_BYTES`] (a histogram's base64 can be) are folded:
//! every piece but the last ends with `\`, which no line of pretty-printed
//! JSON ends with; container runtimes split log lines at 16 KiB, so a folded
//! block survives them whether or not the kubelet joins the pieces again.
//!
//! [`blocks`] finds every block in a log dump: several pods' logs
//! concatenated, with `kubectl logs --prefix`'s `[pod/NAME/CONTAINER] `
//! before each line or without it, and any other lines around the blocks.
//! Lines are grouped by their prefix, so pods whose lines interleave (a
//! followed log) still give whole blocks.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write;

use serde::Serialize;
use sha2::{Digest, Sha256};

/// The line before a result.
pub const BEGIN_MARKER: &str = "-----BEGIN BENCH RESULT-----";
/// The start of the line after it; the checksum and `-----` follow.
const END_PREFIX: &str = "-----END BENCH RESULT sha256=";
/// The end of that line.
const END_SUFFIX: &str = "-----";
/// Longest line of a block, bytes (folded beyond); well under the 16 KiB at
/// which container runtimes split log lines.
pub const FOLD_BYTES: usize = 4000;

/// Writes `value` as pretty JSON between the marker lines.
///
/// # Errors
/// When `w` fails.
pub fn write_block<T: Serialize>(w: &mut impl Write, value: &T) -> anyhow::Result<()> {
    let json = serde_json::to_string_pretty(value)?;
    let mut out = String::with_capacity(json.len() + 200);
    out.push_str(BEGIN_MARKER);
    out.push('\n');
    for line in json.lines() {
        let mut rest = line;
        while rest.len() > FOLD_BYTES {
            // JSON text here is ASCII but for strings; cut on a char boundary.
            let mut cut = FOLD_BYTES;
            while !rest.is_char_boundary(cut) {
                cut -= 1;
            }
            out.push_str(&rest[..cut]);
            out.push_str("\\\n");
            rest = &rest[cut..];
        }
        out.push_str(rest);
        out.push('\n');
    }
    let _ = writeln!(out, "{END_PREFIX}{}{END_SUFFIX}", sha256_hex(&json));
    w.write_all(out.as_bytes())?;
    w.flush()?;
    Ok(())
}

fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes()).iter().fold(String::with_capacity(64), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// One result found in a log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// The `kubectl logs --prefix` prefix of its lines (`pod/NAME/CONTAINER`),
    /// empty without one.
    pub prefix: String,
    /// Line number of its BEGIN marker in the dump, from 1.
    pub line: usize,
    /// The JSON, unfolded; its checksum matched.
    pub json: String,
}

/// Why a log's blocks cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BlockError {
    /// A BEGIN marker without its END (the log was cut, or the process died
    /// while printing).
    #[error("the result at line {line}{} has no END marker (a truncated log?)", from(.prefix))]
    Unterminated {
        /// The prefix of its lines.
        prefix: String,
        /// Line of its BEGIN marker.
        line: usize,
    },
    /// The checksum does not match the JSON between the markers.
    #[error("the result at line {line}{} fails its checksum (a truncated or altered log?)", from(.prefix))]
    Checksum {
        /// The prefix of its lines.
        prefix: String,
        /// Line of its BEGIN marker.
        line: usize,
    },
}

fn from(prefix: &str) -> String {
    if prefix.is_empty() { String::new() } else { format!(" of [{prefix}]") }
}

/// The `kubectl logs --prefix` prefix of `line` (`[pod/NAME/CONTAINER] `),
/// as its inner text and the rest of the line.
fn split_prefix(line: &str) -> (&str, &str) {
    if let Some(inner_and_rest) = line.strip_prefix('[')
        && let Some((inner, rest)) = inner_and_rest.split_once("] ")
        && !inner.is_empty()
        && !inner.contains(char::is_whitespace)
        && inner.contains('/')
    {
        return (inner, rest);
    }
    ("", line)
}

/// Every result block in `text`, in the order their END markers appear.
///
/// # Errors
/// [`BlockError`]: a block without its END marker, or whose checksum fails.
pub fn blocks(text: &str) -> Result<Vec<Block>, BlockError> {
    struct Open {
        line: usize,
        lines: Vec<String>,
    }
    let mut open: BTreeMap<String, Open> = BTreeMap::new();
    let mut found = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let (prefix, line) = split_prefix(raw.trim_end_matches('\r'));
        let marker = line.trim_end();
        if marker == BEGIN_MARKER {
            if let Some(previous) = open.remove(prefix) {
                return Err(BlockError::Unterminated { prefix: prefix.to_owned(), line: previous.line });
            }
            open.insert(prefix.to_owned(), Open { line: i + 1, lines: Vec::new() });
        } else if let Some(rest) = marker.strip_prefix(END_PREFIX) {
            let Some(block) = open.remove(prefix) else { continue };
            let sum = rest.strip_suffix(END_SUFFIX).unwrap_or("");
            let mut json = String::new();
            for (k, piece) in block.lines.iter().enumerate() {
                match piece.strip_suffix('\\') {
                    Some(folded) => json.push_str(folded),
                    None => {
                        json.push_str(piece);
                        if k + 1 < block.lines.len() {
                            json.push('\n');
                        }
                    }
                }
            }
            if !sum.eq_ignore_ascii_case(&sha256_hex(&json)) {
                return Err(BlockError::Checksum { prefix: prefix.to_owned(), line: block.line });
            }
            found.push(Block { prefix: prefix.to_owned(), line: block.line, json });
        } else if let Some(block) = open.get_mut(prefix) {
            block.lines.push(line.to_owned());
        }
    }
    match open.into_iter().next() {
        Some((prefix, block)) => Err(BlockError::Unterminated { prefix, line: block.line }),
        None => Ok(found),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn printed(value: &Value) -> String {
        let mut out = Vec::new();
        write_block(&mut out, value).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_block_reads_back_from_a_dump_of_several_pods_with_other_lines_around() {
        let long = "HISTFAAA".to_owned() + &"x".repeat(3 * FOLD_BYTES + 17);
        let a = json!({"schema_version": 6, "label": "pod-a", "latency_hdr": long});
        let b = json!({"schema_version": 6, "label": "pod-b", "windows": [1, 2, 3]});
        let (pa, pb) = (printed(&a), printed(&b));
        assert!(pa.lines().all(|l| l.len() <= FOLD_BYTES + 1), "folded");
        assert!(pa.starts_with(BEGIN_MARKER) && pa.trim_end().ends_with("-----"));
        let prefixed = |pod: &str, text: &str| -> String {
            text.lines().map(|l| format!("[pod/{pod}/client] {l}\n")).collect::<String>()
        };
        // kubectl logs -l … --prefix: one pod after the other, other lines around.
        let dump = prefixed("c-0", &format!("metrics on http://0.0.0.0:9464/metrics\n{pa}done\n"))
            + &prefixed("c-1", &format!("summary line\n{pb}"));
        let found = blocks(&dump).unwrap();
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].prefix, "pod/c-0/client");
        assert_eq!(serde_json::from_str::<Value>(&found[0].json).unwrap(), a);
        assert_eq!(serde_json::from_str::<Value>(&found[1].json).unwrap(), b);
        // Interleaved lines (a followed log) are grouped by prefix.
        let (la, lb): (Vec<&str>, Vec<&str>) = dump.lines().partition(|l| l.starts_with("[pod/c-0/"));
        let mut mixed = String::new();
        for k in 0..la.len().max(lb.len()) {
            for l in [la.get(k), lb.get(k)].into_iter().flatten() {
                mixed.push_str(l);
                mixed.push('\n');
            }
        }
        assert_eq!(blocks(&mixed).unwrap().len(), 2);
        // Without prefixes: plain concatenation, CRLF tolerated.
        let plain = format!("x\r\n{}y\n{}", pa.replace('\n', "\r\n"), pb);
        assert_eq!(blocks(&plain).unwrap().len(), 2);
        assert_eq!(blocks("no results here\n").unwrap(), []);
    }

    #[test]
    fn a_cut_or_altered_block_is_refused_with_where_it_starts() {
        let text = format!("first line\n{}", printed(&json!({"schema_version": 6, "successful": 10})));
        let cut: String = text.lines().take(3).map(|l| format!("{l}\n")).collect();
        assert_eq!(blocks(&cut), Err(BlockError::Unterminated { prefix: String::new(), line: 2 }));
        let altered = text.replace("10", "11");
        let err = blocks(&altered).unwrap_err();
        assert_eq!(err, BlockError::Checksum { prefix: String::new(), line: 2 });
        assert_eq!(err.to_string(), "the result at line 2 fails its checksum (a truncated or altered log?)");
        let prefixed: String = cut.lines().map(|l| format!("[pod/p/c] {l}\n")).collect();
        assert!(blocks(&prefixed).unwrap_err().to_string().contains("of [pod/p/c] has no END marker"));
        // A BEGIN again before the END: the first was cut.
        let twice = cut.clone() + &text;
        assert!(matches!(blocks(&twice), Err(BlockError::Unterminated { line: 2, .. })));
    }
}
