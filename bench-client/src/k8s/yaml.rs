//! A small ordered document tree and its YAML text: maps keep the order they
//! were built in (`apiVersion`, `kind`, `metadata`, `spec`, as people write
//! manifests), and the output depends on nothing but the tree, so golden
//! files can hold it.
//!
//! Block style only. A string is written plain only when no YAML reader
//! (YAML 1.1 as PyYAML and Kubernetes' sigs.k8s.io/yaml read it, or 1.2)
//! could take it for anything else: it starts with a letter or `/`, holds
//! no space or indicator, and is no boolean or null word; every other
//! string is double-quoted with JSON escapes, which YAML reads alike. So
//! `"2"` (a CPU quantity) stays a string and `"--addr"` an argument.

use std::fmt::Write as _;

/// A node of a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    /// A mapping, in order.
    Map(Vec<(String, Node)>),
    /// A sequence.
    Seq(Vec<Node>),
    /// A string.
    Str(String),
    /// An integer.
    Int(i64),
    /// A boolean.
    Bool(bool),
}

/// A mapping from `(key, value)` pairs, in order.
pub fn map<'a>(entries: impl IntoIterator<Item = (&'a str, Node)>) -> Node {
    Node::Map(entries.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
}

/// A string node.
pub fn s(text: impl Into<String>) -> Node {
    Node::Str(text.into())
}

/// A sequence of strings.
pub fn strings<I: IntoIterator<Item = T>, T: Into<String>>(items: I) -> Node {
    Node::Seq(items.into_iter().map(|t| Node::Str(t.into())).collect())
}

impl Node {
    /// This node as JSON (what the Kubernetes API and its typed structs read).
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Self::Map(entries) => {
                serde_json::Value::Object(entries.iter().map(|(k, v)| (k.clone(), v.to_json())).collect())
            }
            Self::Seq(items) => serde_json::Value::Array(items.iter().map(Self::to_json).collect()),
            Self::Str(s) => serde_json::Value::from(s.as_str()),
            Self::Int(i) => serde_json::Value::from(*i),
            Self::Bool(b) => serde_json::Value::from(*b),
        }
    }

    /// With `(key, value)` appended, if this is a map.
    #[must_use]
    pub fn with(mut self, key: &str, value: Node) -> Self {
        if let Self::Map(entries) = &mut self {
            entries.push((key.to_owned(), value));
        }
        self
    }
}

/// Words YAML 1.1 readers take for booleans or null.
const SPECIAL_WORDS: [&str; 12] = ["true", "false", "yes", "no", "on", "off", "y", "n", "null", "~", "nan", "inf"];

/// Whether `text` may be written without quotes.
fn plain(text: &str) -> bool {
    let Some(first) = text.chars().next() else { return false };
    (first.is_ascii_alphabetic() || first == '/')
        && text.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:=@".contains(c))
        && !text.ends_with(':')
        && !SPECIAL_WORDS.contains(&text.to_ascii_lowercase().as_str())
}

/// `text` as a YAML scalar.
fn scalar(text: &str) -> String {
    if plain(text) {
        text.to_owned()
    } else {
        // JSON's escapes are YAML's double-quoted escapes.
        serde_json::Value::from(text).to_string()
    }
}

/// A node that is written on the line of its key or dash.
fn inline(node: &Node) -> Option<String> {
    match node {
        Node::Str(s) => Some(scalar(s)),
        Node::Int(i) => Some(i.to_string()),
        Node::Bool(b) => Some(b.to_string()),
        Node::Map(m) if m.is_empty() => Some("{}".to_owned()),
        Node::Seq(v) if v.is_empty() => Some("[]".to_owned()),
        Node::Map(_) | Node::Seq(_) => None,
    }
}

/// Writes the entries of map `entries` at `indent`; the first line's
/// indentation is already written when `first_done`.
fn write_map(out: &mut String, entries: &[(String, Node)], indent: usize, mut first_done: bool) {
    for (key, value) in entries {
        if !first_done {
            out.push_str(&" ".repeat(indent));
        }
        first_done = false;
        let key = scalar(key);
        match inline(value) {
            Some(v) => {
                let _ = writeln!(out, "{key}: {v}");
            }
            None => {
                let _ = writeln!(out, "{key}:");
                write_block(out, value, indent + 2);
            }
        }
    }
}

/// Writes a map or sequence at `indent`.
fn write_block(out: &mut String, node: &Node, indent: usize) {
    match node {
        Node::Map(entries) => write_map(out, entries, indent, false),
        Node::Seq(items) => {
            for item in items {
                out.push_str(&" ".repeat(indent));
                out.push_str("- ");
                match (inline(item), item) {
                    (Some(v), _) => {
                        out.push_str(&v);
                        out.push('\n');
                    }
                    (None, Node::Map(entries)) => write_map(out, entries, indent + 2, true),
                    (None, _) => {
                        out.push('\n');
                        write_block(out, item, indent + 2);
                    }
                }
            }
        }
        _ => {
            if let Some(v) = inline(node) {
                out.push_str(&" ".repeat(indent));
                out.push_str(&v);
                out.push('\n');
            }
        }
    }
}

/// The YAML text of `documents`, each after `---`, with `comment` lines
/// (each prefixed `# `) at the top.
pub fn to_yaml(comment: &[String], documents: &[Node]) -> String {
    let mut out = String::new();
    for line in comment {
        if line.is_empty() {
            out.push_str("#\n");
        } else {
            let _ = writeln!(out, "# {line}");
        }
    }
    for d in documents {
        out.push_str("---\n");
        write_block(&mut out, d, 0);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_another_reader_could_mistake_are_quoted() {
        for (text, expected) in [
            ("bench-server", "bench-server"),
            ("/api/devices", "/api/devices"),
            ("http://bench-server:8080/plaintext", "http://bench-server:8080/plaintext"),
            ("app.kubernetes.io/part-of", "app.kubernetes.io/part-of"),
            ("2", "\"2\""),
            ("256Mi", "\"256Mi\""),
            ("2026-12-01T10:00:00Z", "\"2026-12-01T10:00:00Z\""),
            ("--addr", "\"--addr\""),
            ("$(POD_IP):8080", "\"$(POD_IP):8080\""),
            ("yes", "\"yes\""),
            ("Null", "\"Null\""),
            ("a b", "\"a b\""),
            ("key:", "\"key:\""),
            ("", "\"\""),
            ("say \"hi\"", "\"say \\\"hi\\\"\""),
        ] {
            assert_eq!(scalar(text), expected, "{text}");
        }
    }

    #[test]
    fn blocks_nest_maps_in_sequences_on_the_dash_line() {
        let doc = map([
            ("kind", s("Pod")),
            ("metadata", map([("name", s("p")), ("labels", Node::Map(vec![]))])),
            (
                "spec",
                map([(
                    "containers",
                    Node::Seq(vec![map([
                        ("name", s("c")),
                        ("args", strings(["--x", "1"])),
                        ("ports", Node::Seq(vec![])),
                    ])]),
                )]),
            ),
            ("count", Node::Int(3)),
            ("n", Node::Bool(false)),
            ("b", Node::Bool(true)),
        ]);
        let text = to_yaml(&["made here".into(), String::new()], &[doc]);
        let expected = "# made here\n#\n---\nkind: Pod\nmetadata:\n  name: p\n  labels: {}\nspec:\n  containers:\n    \
                        - name: c\n      args:\n        - \"--x\"\n        - \"1\"\n      ports: []\ncount: 3\n\"n\": false\nb: true\n";
        assert_eq!(text, expected);
    }
}
