//! The layer rule of `bench-client/src` (see its crate doc and
//! `docs/ARCHITECTURE.md`): a module imports only modules of lower layers,
//! so there is no import circle; and `common/src` has no circle either.
//! Read from the source: every `crate::NAME` outside comments is an arrow.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Top-level modules of `bench-client/src`, top layer first; modules of one
/// rank may not import each other.
const LAYERS: [&[&str]; 8] = [
    &["cli"],
    &["suite", "runner", "k8s"],
    &["report"],
    &["results"],
    &["calibrate"],
    &["measure", "preflight", "telemetry"],
    &["engine"],
    &["analysis", "model", "sys"],
];

fn rank(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable source folder") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Arrows between the top-level modules of the crate in `src`: for each
/// module (file or folder), the modules it names as `crate::NAME`.
fn arrows(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        let relative = file.strip_prefix(src).expect("under src");
        let first = relative.components().next().expect("a component").as_os_str().to_string_lossy();
        let module = first.trim_end_matches(".rs").to_owned();
        if module == "lib" || module == "main" {
            continue;
        }
        let text = std::fs::read_to_string(&file).expect("readable source");
        let targets = graph.entry(module.clone()).or_default();
        for line in text.lines() {
            let code = line.split("//").next().unwrap_or("");
            for (i, _) in code.match_indices("crate::") {
                let name: String =
                    code[i + 7..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
                if !name.is_empty() && name != module {
                    targets.insert(name);
                }
            }
        }
    }
    graph
}

fn source(crate_dir: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(crate_dir).join("src")
}

/// A circle of `graph`, if any, as the modules along it.
fn circle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            return Some(path[at..].to_vec());
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(found) = visit(next, graph, path, done) {
                return Some(found);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

#[test]
fn bench_client_imports_only_downward() {
    let graph = arrows(&source("bench-client"));
    let mut upward = Vec::new();
    for (module, targets) in &graph {
        let from = rank(module).unwrap_or_else(|| panic!("module {module} is in no layer: add it to LAYERS"));
        for target in targets {
            let to = rank(target).unwrap_or_else(|| panic!("{module} imports crate::{target}, which is in no layer"));
            if to <= from {
                upward.push(format!("{module} -> {target}"));
            }
        }
    }
    assert!(upward.is_empty(), "imports that do not point down a layer: {upward:?}");
    assert_eq!(circle(&graph), None);
    assert!(
        graph["cli"].contains("suite") && graph["suite"].contains("report"),
        "the reader saw the arrows: {graph:?}"
    );
}

#[test]
fn common_has_no_import_circle() {
    let graph = arrows(&source("common"));
    assert!(graph.len() >= 5, "{graph:?}");
    assert_eq!(circle(&graph), None, "{graph:?}");
}

#[test]
fn a_circle_is_found() {
    let graph: BTreeMap<String, BTreeSet<String>> = [("a", "b"), ("b", "c"), ("c", "a")]
        .into_iter()
        .map(|(from, to)| (from.to_owned(), BTreeSet::from([to.to_owned()])))
        .collect();
    assert_eq!(circle(&graph).map(|c| c.len()), Some(3));
}

/// The protocol seam (docs/ARCHITECTURE.md, "To add a protocol"): the
/// engine's loop, preflight and the calibration responder reach the wire
/// only through `engine::Protocol`, so no file outside `engine/wire/` parses
/// HTTP, and none of those three writes or looks for HTTP/1.1's own bytes.
#[test]
fn only_the_wire_knows_the_load_protocol() {
    let src = source("bench-client");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut seen = Vec::new();
    for file in files {
        let relative = file.strip_prefix(&src).expect("under src").to_string_lossy().replace('\\', "/");
        if relative.starts_with("engine/wire/") {
            continue;
        }
        let text = std::fs::read_to_string(&file).expect("readable source");
        let code: String = text.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n");
        if code.contains("httparse") {
            seen.push(format!("{relative}: httparse"));
        }
        let reaches_the_wire =
            relative.starts_with("engine/") || relative == "preflight.rs" || relative.starts_with("calibrate/");
        for bytes in ["HTTP/1.1", r"\r\n\r\n"] {
            if reaches_the_wire && code.contains(bytes) {
                seen.push(format!("{relative}: {bytes}"));
            }
        }
    }
    assert!(seen.is_empty(), "protocol bytes outside engine/wire/: {seen:?}");
}

/// Arrows between the files of one folder of `bench-client/src`: the door
/// (`mod`) points at every file it declares, and a file at each file it
/// names as `super::NAME` (or at `mod`, when NAME is an item of the door).
/// Only code before a file's `#[cfg(test)]` counts.
fn folder_arrows(folder: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut stems: Vec<String> = std::fs::read_dir(folder)
        .expect("readable folder")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .map(|p| p.file_stem().expect("a stem").to_string_lossy().into_owned())
        .collect();
    stems.sort();
    let files: BTreeSet<String> = stems.iter().filter(|s| *s != "mod").cloned().collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    graph.insert("mod".to_owned(), files.clone());
    for file in &files {
        let text = std::fs::read_to_string(folder.join(format!("{file}.rs"))).expect("readable source");
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        let targets = graph.entry(file.clone()).or_default();
        for line in code.lines() {
            let code = line.split("//").next().unwrap_or("");
            for (i, _) in code.match_indices("super::") {
                let rest = &code[i + 7..];
                let names: Vec<&str> = match rest.strip_prefix('{') {
                    Some(group) => group.split('}').next().unwrap_or("").split(',').collect(),
                    None => vec![rest],
                };
                for name in names {
                    let name: String =
                        name.trim().chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
                    if name.is_empty() || name == *file {
                        continue;
                    }
                    targets.insert(if files.contains(&name) { name } else { "mod".to_owned() });
                }
            }
        }
    }
    graph
}

/// Every folder of `bench-client/src` (and each of its folders): no circle
/// between its files. A file may use an item of its folder's door (`mod`),
/// which is the folder's shared vocabulary; between the other files the
/// arrows point one way.
#[test]
fn the_files_of_every_folder_import_no_circle() {
    fn folders(dir: &Path, out: &mut Vec<PathBuf>) {
        out.push(dir.to_owned());
        for entry in std::fs::read_dir(dir).expect("readable source folder") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                folders(&path, out);
            }
        }
    }
    let src = source("bench-client");
    let mut all = Vec::new();
    folders(&src, &mut all);
    let mut circles = Vec::new();
    for folder in &all {
        let mut graph = folder_arrows(folder);
        graph.insert("mod".to_owned(), BTreeSet::new());
        if let Some(c) = circle(&graph) {
            circles.push(format!("{}: {c:?}", folder.strip_prefix(&src).unwrap().display()));
        }
    }
    assert!(all.len() > 10, "every folder read: {all:?}");
    assert!(circles.is_empty(), "{circles:#?}");
}

#[test]
fn the_files_of_the_suite_import_no_circle() {
    let graph = folder_arrows(&source("bench-client").join("suite"));
    assert_eq!(circle(&graph), None, "{graph:?}");
    let by = |file: &str, other: &str| graph[file].contains(other);
    assert!(
        by("ab", "design") && by("variants", "design") && by("session", "design"),
        "the reader saw them: {graph:?}"
    );
    assert!(!by("session", "ab") && !by("session", "variants"), "the session names no design: {graph:?}");
}
