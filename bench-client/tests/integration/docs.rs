//! The docs lead somewhere: every relative link of README.md, docs/*.md and
//! bench/**/README.md names a file that exists, and every `#anchor` a heading
//! of its target by GitHub's rules; a pointer written as prose, `FILE, "Section"`,
//! names a heading that FILE has; a file named in code (`bench/x.sh`) is in
//! the repository. (Their commands: `doc_commands.rs`.)

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

/// The workspace's root.
pub(crate) fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").canonicalize().expect("workspace root")
}

/// The Markdown pages checked, relative to the root: README.md, docs/*.md
/// and every README.md under bench/, sorted.
pub(crate) fn pages() -> Vec<PathBuf> {
    let root = root();
    let mut out = vec![PathBuf::from("README.md")];
    let docs = std::fs::read_dir(root.join("docs")).expect("docs/");
    out.extend(
        docs.map(|e| PathBuf::from("docs").join(e.expect("entry").file_name()))
            .filter(|p| p.extension().is_some_and(|e| e == "md")),
    );
    out.extend(files_under("bench", |p| p.file_name().is_some_and(|n| n == "README.md")));
    out.sort();
    out
}

/// The files under `folder` (relative to the root, at any depth) that `keep`
/// keeps, relative to the root.
fn files_under(folder: &str, keep: impl Fn(&Path) -> bool) -> Vec<PathBuf> {
    let root = root();
    let (mut out, mut folders) = (Vec::new(), vec![PathBuf::from(folder)]);
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(root.join(&folder)).expect("folder") {
            let path = folder.join(entry.expect("entry").file_name());
            if root.join(&path).is_dir() {
                folders.push(path);
            } else if keep(&path) {
                out.push(path);
            }
        }
    }
    out
}

/// The 1-based line of byte `offset` in `text`.
pub(crate) fn line_of(text: &str, offset: usize) -> usize {
    text[..offset].matches('\n').count() + 1
}

/// A heading's anchor as GitHub makes it: lowercase; letters, digits, `_`,
/// `-` and spaces kept, each space a `-`; everything else dropped.
fn slug(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of `markdown`'s headings: each heading's slug, a repeated
/// one followed by `-1`, `-2`, … as GitHub numbers them.
fn anchors(markdown: &str) -> BTreeSet<String> {
    let (mut out, mut seen, mut heading) = (BTreeSet::new(), HashMap::<String, usize>::new(), None::<String>);
    for event in Parser::new_ext(markdown, Options::all()) {
        match event {
            Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
            Event::Text(t) | Event::Code(t) if heading.is_some() => heading.as_mut().unwrap().push_str(&t),
            Event::End(TagEnd::Heading(_)) => {
                let base = slug(&heading.take().unwrap_or_default());
                let n = seen.entry(base.clone()).or_insert(0);
                out.insert(if *n == 0 { base.clone() } else { format!("{base}-{n}") });
                *n += 1;
            }
            _ => {}
        }
    }
    out
}

/// What prose may call a section of `markdown`, as slugs: its headings, and
/// the bold lead of a paragraph (`**Two builds (`ab`): rounds are the units.**`).
fn sections(markdown: &str) -> BTreeSet<String> {
    let (mut out, mut lead, mut at_start) = (anchors(markdown), None::<String>, false);
    for event in Parser::new_ext(markdown, Options::all()) {
        match event {
            Event::Start(Tag::Paragraph) => at_start = true,
            Event::Start(Tag::Strong) if at_start => lead = Some(String::new()),
            Event::Text(t) | Event::Code(t) if lead.is_some() => lead.as_mut().unwrap().push_str(&t),
            Event::End(TagEnd::Strong) => out.extend(lead.take().map(|l| slug(&l))),
            _ => at_start = false,
        }
    }
    out
}

/// What is wrong with each relative link of `page` (relative to the root),
/// whose text is `text`: `page:line: (link): why`.
fn dead_links(page: &Path, text: &str) -> Vec<String> {
    let root = root();
    let dir = page.parent().unwrap_or(Path::new(""));
    let mut out = Vec::new();
    for (event, range) in Parser::new_ext(text, Options::all()).into_offset_iter() {
        let (Event::Start(Tag::Link { dest_url, .. }) | Event::Start(Tag::Image { dest_url, .. })) = event else {
            continue;
        };
        if dest_url.contains("://") || dest_url.starts_with("mailto:") {
            continue;
        }
        let (file, anchor) = dest_url.split_once('#').map_or((&*dest_url, None), |(f, a)| (f, Some(a)));
        let at = format!("{}:{}: ({dest_url})", page.display(), line_of(text, range.start));
        let markdown = if file.is_empty() {
            text.to_owned()
        } else {
            let target = dir.join(file);
            let Ok(resolved) = root.join(&target).canonicalize() else {
                out.push(format!("{at}: {} does not exist", target.display()));
                continue;
            };
            if !resolved.starts_with(&root) {
                out.push(format!("{at}: leaves the repository"));
                continue;
            }
            if anchor.is_some() && resolved.extension().is_none_or(|e| e != "md") {
                out.push(format!("{at}: an anchor into {}, which is not Markdown", target.display()));
                continue;
            }
            std::fs::read_to_string(&resolved).unwrap_or_default()
        };
        if let Some(anchor) = anchor.filter(|a| !anchors(&markdown).contains(*a)) {
            out.push(format!("{at}: no heading has the anchor #{anchor}"));
        }
    }
    out
}

/// What is wrong with each prose pointer of `text` (called `name`):
/// `README, "Section"`, `README ("Section")`, `docs/X.md, “Section”`,
/// `X.md, "Section"` (a page of docs/) whose page has no such section.
fn dead_pointers(name: &str, text: &str) -> Vec<String> {
    let root = root();
    let in_name = |c: char| c.is_alphanumeric() || matches!(c, '/' | '-' | '_' | '.');
    let mut out = Vec::new();
    let ends = text.match_indices(".md").map(|(i, _)| i + 3);
    let readmes = text.match_indices("README").map(|(i, _)| i + 6).filter(|i| !text[*i..].starts_with(".md"));
    for end in ends.chain(readmes) {
        let start =
            text[..end].rfind(|c: char| !in_name(c)).map_or(0, |i| i + text[i..].chars().next().unwrap().len_utf8());
        let Some(title) = quoted_title(&text[end..]) else { continue };
        let page = match &text[start..end] {
            "README" | "README.md" => "README.md".to_owned(),
            p if p.starts_with("docs/") => p.to_owned(),
            p if !p.contains('/') && root.join("docs").join(p).is_file() => format!("docs/{p}"),
            p => p.to_owned(),
        };
        let Ok(markdown) = std::fs::read_to_string(root.join(&page)) else {
            out.push(format!("{name}:{}: {page} does not exist", line_of(text, start)));
            continue;
        };
        let wanted = slug(&title);
        // A title may be a heading's start: "Counted, not timed" for "Counted, not timed (`make count`)".
        if !sections(&markdown).iter().any(|a| *a == wanted || a.starts_with(&format!("{wanted}-"))) {
            out.push(format!("{name}:{}: {page} has no section \"{title}\"", line_of(text, start)));
        }
    }
    out
}

/// The section title right after a file name: `, "T"`, ` ("T")`, `, “T”`
/// (a Rust string's `\` line continuation removed with the indentation after it).
fn quoted_title(after: &str) -> Option<String> {
    let after = after.strip_prefix(',').or_else(|| after.strip_prefix(" ("))?.trim_start();
    let (open, close) = [('"', '"'), ('“', '”')].into_iter().find(|(o, _)| after.starts_with(*o))?;
    let inner = &after[open.len_utf8()..];
    let title = &inner[..inner.find(close)?];
    let mut joined = String::new();
    for (i, part) in title.split("\\\n").enumerate() {
        joined.push_str(if i == 0 { part } else { part.trim_start() });
    }
    Some(joined.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// Names in code spans that look like files of the repository but are not
/// meant to be, each with why.
const NOT_FILES: [(&str, &str); 1] =
    [("Rocket.toml", "the file Rocket would read from its working folder; none is kept")];

/// The files of the repository (tracked, or new and not ignored), relative to the root.
fn repository_files() -> Vec<String> {
    let out = std::process::Command::new("git")
        .current_dir(root())
        .args(["ls-files", "--cached", "--others", "--exclude-standard"])
        .output()
        .expect("git ls-files");
    assert!(out.status.success(), "git ls-files: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("UTF-8 paths").lines().map(str::to_owned).collect()
}

/// Each code span of `text` (the page `page`) naming a file (`x.rs`, `.sh`,
/// `.py`, `.patch`, `.toml`, `.yml`, `.md`, no wildcard or placeholder) that
/// `files` lacks: not at that path from the root or the page's folder, nor
/// at the end of any path (`engine/stats.rs` is `bench-client/src/engine/stats.rs`).
fn missing_files(page: &Path, text: &str, files: &[String]) -> Vec<String> {
    let dir = page.parent().unwrap_or(Path::new(""));
    let kinds = ["rs", "sh", "py", "patch", "toml", "yml", "md"];
    let mut out = Vec::new();
    for (event, range) in Parser::new_ext(text, Options::all()).into_offset_iter() {
        let Event::Code(code) = event else { continue };
        let named = code.trim_start_matches("./");
        let is_file = Path::new(named).extension().is_some_and(|e| kinds.iter().any(|k| e == *k))
            && !named.contains(|c: char| c.is_whitespace() || "*<>{}…$".contains(c));
        if !is_file || NOT_FILES.iter().any(|(n, _)| *n == named) {
            continue;
        }
        let beside = dir.join(named).to_string_lossy().into_owned();
        let found = files.iter().any(|f| *f == named || *f == beside || f.ends_with(&format!("/{named}")));
        if !found {
            out.push(format!(
                "{}:{}: `{named}` is no file of the repository",
                page.display(),
                line_of(text, range.start)
            ));
        }
    }
    out
}

/// The files whose prose may point at a page's section: the pages, the
/// Makefile, and bench-client's source (its help texts and report notes).
fn pointer_sources() -> Vec<PathBuf> {
    let mut out = pages();
    out.push(PathBuf::from("Makefile"));
    out.extend(files_under("bench-client/src", |p| p.extension().is_some_and(|e| e == "rs")));
    out
}

#[test]
fn anchors_are_github_slugs_numbered_when_repeated() {
    let page = "# Measure your own change\n## `ab`: two builds, side by side\n## Notes\n## Notes\n\
                ## TLS (rustls, ring) — 2026_12\n## Notes\n";
    let expected = [
        "measure-your-own-change",
        "ab-two-builds-side-by-side",
        "notes",
        "notes-1",
        "tls-rustls-ring--2026_12",
        "notes-2",
    ];
    assert_eq!(anchors(page), expected.iter().map(|s| (*s).to_owned()).collect());
}

#[test]
fn a_dead_link_anchor_or_pointer_is_found_and_named() {
    let page = "# Top\n[ok](#top) [gone](#nowhere)\n[client](CLIENT.md) [no file](NOPE.md)\n\
                [no part](../README.md#no-such-part) [web](https://example.com/#x)\n";
    assert_eq!(
        dead_links(Path::new("docs/NEW.md"), page),
        [
            "docs/NEW.md:2: (#nowhere): no heading has the anchor #nowhere",
            "docs/NEW.md:3: (NOPE.md): docs/NOPE.md does not exist",
            "docs/NEW.md:4: (../README.md#no-such-part): no heading has the anchor #no-such-part",
        ]
    );
    let prose = "as measured (README, \"No such section\"); see docs/CLIENT.md, “No such part”; (README);\n\
                 FINDINGS.md (\"Nothing\"), GONE.md, \"x\"; CLIENT.md, \"The load client\"";
    assert_eq!(
        dead_pointers("x.md", prose),
        [
            "x.md:1: docs/CLIENT.md has no section \"No such part\"",
            "x.md:2: docs/FINDINGS.md has no section \"Nothing\"",
            "x.md:2: GONE.md does not exist",
            "x.md:1: README.md has no section \"No such section\"",
        ]
    );
    assert!(sections("Text.\n\n**Two builds (`ab`): rounds.** More **bold**.\n").contains("two-builds-ab-rounds"));
    assert!(!sections("Text with **bold** inside.\n").contains("bold"), "a lead only");
    assert_eq!(quoted_title(" (\"Latency at a fixed \\\n      load\")"), Some("Latency at a fixed load".to_owned()));
}

#[test]
fn every_relative_link_and_anchor_of_the_docs_leads_somewhere() {
    let pages = pages();
    assert!(pages.len() > 15, "README.md, docs/*.md, bench/**/README.md: {pages:?}");
    let root = root();
    let dead: Vec<String> =
        pages.iter().flat_map(|p| dead_links(p, &std::fs::read_to_string(root.join(p)).unwrap())).collect();
    assert!(dead.is_empty(), "{} dead links:\n{}", dead.len(), dead.join("\n"));
}

#[test]
fn every_file_named_in_the_docs_code_exists() {
    let (root, files) = (root(), repository_files());
    assert!(files.iter().any(|f| f == "bench-client/src/engine/stats.rs"), "{} files", files.len());
    let sample = "`engine/stats.rs` `bench/tls.sh` `bench/gone.py` `results/*.json` `Rocket.toml` `x.rs`";
    assert_eq!(
        missing_files(Path::new("docs/NEW.md"), sample, &files),
        [
            "docs/NEW.md:1: `bench/gone.py` is no file of the repository",
            "docs/NEW.md:1: `x.rs` is no file of the repository"
        ]
    );
    let missing: Vec<String> = pages()
        .iter()
        .flat_map(|p| missing_files(p, &std::fs::read_to_string(root.join(p)).unwrap(), &files))
        .collect();
    assert!(missing.is_empty(), "{} files named that do not exist:\n{}", missing.len(), missing.join("\n"));
}

#[test]
fn every_prose_pointer_to_a_section_names_one_that_exists() {
    let root = root();
    let dead: Vec<String> = pointer_sources()
        .iter()
        .flat_map(|p| dead_pointers(&p.display().to_string(), &std::fs::read_to_string(root.join(p)).unwrap()))
        .collect();
    assert!(dead.is_empty(), "{} pointers to no section:\n{}", dead.len(), dead.join("\n"));
}
