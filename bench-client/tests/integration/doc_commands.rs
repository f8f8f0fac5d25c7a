//! The docs' commands work as written, checked without running anything:
//! every line of a `sh`, `bash`, `console` or `shell` block in README.md,
//! docs/*.md and bench/**/README.md is a `make` line that `make -n` accepts
//! (with each bench-client line it would run parsing), a `bench-client` or
//! server line that parses, a `git apply` that applies to HEAD, or a script
//! of the repository that exists; anything else is in [`NOT_CHECKED`], with
//! its reason.

use std::path::Path;
use std::process::Command;

use bench_client::cli::Cli;
use clap::Parser;
use pulldown_cmark::{CodeBlockKind, Event, Options, Parser as Markdown, Tag, TagEnd};

use crate::docs::{line_of, pages, root};

/// Placeholders the docs write for what the reader fills in, each replaced
/// by a value of its kind before the line is parsed.
const PLACEHOLDERS: [(&str, &str, &str); 5] = [
    ("$T", "2030-01-01T00:00:00Z", "the start instant the line above sets (date -u … +%FT%TZ)"),
    ("$i", "0", "the client host's index, 0 to N - 1"),
    ("$!", "4242", "the pid of the server started in the background on the line above"),
    ("\"$BASE_SHA\"", "HEAD", "the base commit of a pull request, in CI"),
    ("{addr}", "127.0.0.1:0", "the address `ab --before-cmd/--after-cmd` fills in"),
];

/// Lines run by something that is not this repository's, each with why it
/// is not checked here (prefix, reason).
const NOT_CHECKED: [(&str, &str); 2] = [
    ("kubectl ", "needs a cluster; `k8s render` prints these commands, tests/integration/k8s.rs checks them"),
    ("T=$(date ", "GNU date setting a shell variable; runs nothing of this repository"),
];

/// One command of a page: where it is, and the line as a shell reads it
/// (continuations joined, comment, prompt and trailing `&` removed).
struct Line {
    /// `page:line`.
    at: String,
    /// The command.
    text: String,
}

/// The commands of the shell blocks of `text` (the page `page`).
fn commands(page: &Path, text: &str) -> Vec<Line> {
    let (mut out, mut shell) = (Vec::new(), false);
    for (event, range) in Markdown::new_ext(text, Options::all()).into_offset_iter() {
        match event {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(lang))) => {
                shell = matches!(lang.split(',').next().unwrap_or("").trim(), "sh" | "bash" | "console" | "shell");
            }
            Event::End(TagEnd::CodeBlock) => shell = false,
            Event::Text(block) if shell => {
                let first = line_of(text, range.start);
                let mut pending: Option<(usize, String)> = None;
                for (i, raw) in block.lines().enumerate() {
                    let raw = raw.trim().strip_prefix("$ ").unwrap_or(raw.trim());
                    let (start, mut joined) = pending.take().unwrap_or((first + i, String::new()));
                    let code = without_comment(raw);
                    if let Some(head) = code.strip_suffix('\\') {
                        joined.push_str(head.trim_end());
                        joined.push(' ');
                        pending = Some((start, joined));
                        continue;
                    }
                    joined.push_str(code.trim_end().trim_end_matches('&').trim_end());
                    if !joined.trim().is_empty() {
                        out.push(Line { at: format!("{}:{start}", page.display()), text: joined.trim().to_owned() });
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// `line` without its shell comment (a `#` starting a word outside quotes).
fn without_comment(line: &str) -> &str {
    let (mut quote, mut prev) = (None, ' ');
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '#') if prev.is_whitespace() => return &line[..i],
            _ => {}
        }
        prev = c;
    }
    line
}

/// `text` split into words as a shell splits them, single and double quotes
/// removed (no expansion: the docs' variables are [`PLACEHOLDERS`]).
fn words(text: &str) -> Vec<String> {
    let (mut out, mut word, mut quote, mut any) = (Vec::new(), String::new(), None, false);
    for c in text.chars() {
        match (quote, c) {
            (None, '\'' | '"') => (quote, any) = (Some(c), true),
            (Some(q), c) if c == q => quote = None,
            (None, c) if c.is_whitespace() => {
                if any {
                    out.push(std::mem::take(&mut word));
                }
                any = false;
            }
            (_, c) => (word, any) = (word + &c.to_string(), true),
        }
    }
    if any {
        out.push(word);
    }
    out
}

/// The binary a command's first word runs, without its folder:
/// `target/release/bench-client` → `bench-client`.
fn program(word: &str) -> &str {
    match word.strip_prefix("target/release/").or_else(|| word.strip_prefix("target/debug/")) {
        Some(name) => name,
        None => word,
    }
}

/// Why `command` would not run as written, if it would not.
fn check(command: &str) -> Result<(), String> {
    let mut command = command.to_owned();
    for (placeholder, value, _) in PLACEHOLDERS {
        command = command.replace(placeholder, value);
    }
    if NOT_CHECKED.iter().any(|(prefix, _)| command.starts_with(prefix)) {
        return Ok(());
    }
    let mut argv = words(&command);
    // `NAME=value command …`: the variables the command runs with.
    let env = argv.iter().take_while(|w| w.split_once('=').is_some_and(|(n, _)| is_variable(n))).count();
    argv.drain(..env);
    let Some(first) = argv.first() else { return Ok(()) };
    match program(first) {
        "bench-client" => Cli::try_parse_from(&argv).map(drop).map_err(|e| first_line(&e.to_string())),
        "server-actix" | "server-axum" | "server-rocket" => {
            common::ServerArgs::try_parse_from(&argv).map(drop).map_err(|e| first_line(&e.to_string()))
        }
        "make" => check_make(&argv[1..]),
        "git" if argv.get(1).is_some_and(|w| w == "apply") => applies_to_head(&argv[2..]),
        script if script.starts_with("bench/") && script.ends_with(".sh") => {
            let meta = std::fs::metadata(root().join(script)).map_err(|e| format!("{script}: {e}"))?;
            let executable = std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o111 != 0;
            executable.then_some(()).ok_or_else(|| format!("{script} is not executable"))
        }
        other => Err(format!("`{other}` is neither checked nor in NOT_CHECKED")),
    }
}

/// Why `git apply ARGS` would not apply to HEAD, checked in an index read
/// from HEAD (`--cached --check`), so that local edits do not count; an
/// undo (`-R`) is checked on HEAD with the patch applied.
fn applies_to_head(args: &[String]) -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| format!("temporary folder: {e}"))?;
    let git = |argv: &[&str], extra: &[String]| {
        let out = Command::new("git")
            .current_dir(root())
            .env("GIT_INDEX_FILE", dir.path().join("index"))
            .args(argv)
            .args(extra)
            .output()
            .map_err(|e| format!("git: {e}"))?;
        out.status.success().then_some(()).ok_or_else(|| String::from_utf8_lossy(&out.stderr).trim().to_owned())
    };
    git(&["read-tree", "HEAD"], &[])?;
    if args.iter().any(|a| a == "-R") {
        let forward: Vec<String> = args.iter().filter(|a| *a != "-R").cloned().collect();
        git(&["apply", "--cached"], &forward)?;
    }
    git(&["apply", "--cached", "--check"], args)
}

/// Why `make ARGS` would not run as written: a variable the Makefile does
/// not read, `make -n` failing, or a command it would run not parsing.
fn check_make(args: &[String]) -> Result<(), String> {
    let makefile = std::fs::read_to_string(root().join("Makefile")).map_err(|e| format!("Makefile: {e}"))?;
    for (name, value) in args.iter().filter_map(|a| a.split_once('=')) {
        if !makefile.contains(&format!("$({name})")) {
            return Err(format!("the Makefile reads no variable {name}"));
        }
        if value.starts_with("target/") {
            check(value).map_err(|e| format!("{name}: {e}"))?;
        }
    }
    let out = Command::new("make")
        .current_dir(root())
        .arg("-n")
        .args(args)
        .env_remove("MAKEFLAGS")
        .env_remove("MFLAGS")
        .env_remove("MAKELEVEL")
        .output()
        .map_err(|e| format!("make: {e}"))?;
    if !out.status.success() {
        return Err(format!("make -n: {}", String::from_utf8_lossy(&out.stderr).trim()));
    }
    let printed = String::from_utf8_lossy(&out.stdout).replace("\\\n", " ");
    let mut runs_client = false;
    for line in printed.lines().filter(|l| l.starts_with("target/release/bench-client ")) {
        runs_client = true;
        check(line).map_err(|e| format!("make -n would run `{line}`: {e}"))?;
    }
    let client_targets = ["bench", "bench-debug", "ab", "count", "calibrate", "flamegraph"];
    match args.iter().find(|a| !a.contains('=')) {
        Some(target) if client_targets.contains(&target.as_str()) && !runs_client => {
            Err(format!("make -n {target} printed no bench-client line:\n{printed}"))
        }
        _ => Ok(()),
    }
}

/// Whether `name` is a shell variable's name as the docs write them (`ALTERNATE`).
fn is_variable(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// The first line of a clap error.
fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or_default().to_owned()
}

#[test]
fn shell_lines_are_joined_split_and_stripped_as_a_shell_reads_them() {
    let page = "```sh\n$ make ab X='a # b' \\\n   Y=1   # a comment\nserver-axum --addr 0.0.0.0:8080 &\n# only a comment\n```\n\
                ```text\nnot a command\n```\n";
    let found: Vec<(String, String)> = commands(Path::new("p.md"), page).into_iter().map(|l| (l.at, l.text)).collect();
    assert_eq!(
        found,
        [
            ("p.md:2".to_owned(), "make ab X='a # b' Y=1".to_owned()),
            ("p.md:4".to_owned(), "server-axum --addr 0.0.0.0:8080".to_owned()),
        ]
    );
    assert_eq!(words("make ab X='a # b' --cmd \"x {addr}\""), ["make", "ab", "X=a # b", "--cmd", "x {addr}"]);
}

#[test]
fn a_command_that_would_not_run_is_refused_with_why() {
    let refused = |command: &str| check(command).expect_err(command);
    assert!(refused("bench-client load").contains("required arguments"), "{}", refused("bench-client load"));
    assert!(refused("bench-client compare a b --thresold 5").contains("--thresold"));
    assert!(refused("server-axum --adr 127.0.0.1:1").contains("--adr"));
    assert_eq!(refused("make ab ROUNDZ=3"), "the Makefile reads no variable ROUNDZ");
    assert!(refused("make no-such-target").starts_with("make -n: "), "{}", refused("make no-such-target"));
    assert!(refused("make ab CONNECTIONS=-1").contains("make -n would run"), "{}", refused("make ab CONNECTIONS=-1"));
    assert!(refused("make ab BEFORE_CMD='target/release/server-axum --nope {addr}' AFTER_CMD=x").contains("--nope"));
    assert!(refused("git apply bench/no-such.patch").contains("no-such.patch"));
    let stale = tempfile::tempdir().unwrap();
    let patch = stale.path().join("stale.patch");
    let text =
        "diff --git a/Makefile b/Makefile\n--- a/Makefile\n+++ b/Makefile\n@@ -1 +1 @@\n-# not the first line\n+# x\n";
    std::fs::write(&patch, text).unwrap();
    let why = refused(&format!("git apply {}", patch.display()));
    assert!(why.contains("patch failed: Makefile:1"), "{why}");
    assert!(refused("bench/no-such.sh OUT").contains("bench/no-such.sh"));
    assert!(refused("curl http://127.0.0.1/").contains("neither checked nor in NOT_CHECKED"));
    assert_eq!(check("make ab FRAMEWORKS=axum ROUTES=/plaintext ROUNDS=12"), Ok(()));
    assert_eq!(check("bench/tls.sh OUT"), Ok(()));
    assert_eq!(check("ALTERNATE='a|b' bench/reproduce.sh 3"), Ok(()));
    assert!(refused("ALTERNATE='a|b' bench/gone.sh 3").contains("bench/gone.sh"));
}

#[test]
fn every_command_in_the_docs_shell_blocks_runs_as_written() {
    let root = root();
    let mut checked = 0;
    let mut wrong = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(root.join(&page)).unwrap();
        for line in commands(&page, &text) {
            checked += 1;
            if let Err(why) = check(&line.text) {
                wrong.push(format!("{}: `{}`: {why}", line.at, line.text));
            }
        }
    }
    assert!(checked >= 30, "only {checked} commands found in the docs' shell blocks");
    assert!(wrong.is_empty(), "{} of {checked} commands would not run as written:\n{}", wrong.len(), wrong.join("\n"));
}
