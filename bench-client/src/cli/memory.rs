//! `bench-client memory`: what a connection costs each framework in
//! resident memory, idle and busy, and what it keeps after the load.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context, ensure};
use clap::Args;
use clap::builder::TypedValueParser;

use super::Outcome;
use super::args::{FrameworksArg, ServedArgs, positive_duration};
use crate::model::Profile;
use crate::report;
use crate::suite::{self, CountedServer, MEMORY_CONNECTIONS, MEMORY_REPEATS, MemoryPlan};

/// Flags of `memory`, as typed.
#[derive(Debug, Args)]
pub struct MemoryArgs {
    /// The frameworks.
    #[command(flatten)]
    pub frameworks: FrameworksArg,
    /// Any server instead of the frameworks, as NAME=COMMAND: a program and its arguments with
    /// {addr} where it is to listen, answering /healthz and --route with the route table's bodies.
    /// Repeatable.
    #[arg(long = "cmd", value_name = "NAME=COMMAND", conflicts_with = "frameworks")]
    pub commands: Vec<String>,
    /// Keep-alive connections held at each point, ascending (at least two counts: a connection's
    /// cost is the slope between the fewest and the most).
    #[arg(long, value_delimiter = ',', default_values_t = MEMORY_CONNECTIONS,
          value_parser = clap::value_parser!(u32).range(1..=1_000_000).map(|n| n as usize))]
    pub connections: Vec<usize>,
    /// Fresh server processes per server: their spread is the interval.
    #[arg(long, default_value_t = MEMORY_REPEATS as u64, value_parser = clap::value_parser!(u64).range(2..=100))]
    pub repeats: u64,
    /// How long each count of connections is loaded before the server is read.
    #[arg(long, default_value = "2s", value_parser = positive_duration)]
    pub busy: Duration,
    /// Before each busy stretch, per 512 connections: they open and warm up (a loaded server accepts a
    /// burst past its listen backlog only as SYNs are sent again; the connections it holds when
    /// read are counted).
    #[arg(long, default_value = "1s", value_parser = super::args::duration)]
    pub warmup: Duration,
    /// The route every request asks for (a path of the route table).
    #[arg(long, default_value = "/plaintext")]
    pub route: String,
    /// Each idle connection first carries a PUT /api/devices of this many bytes (the device list
    /// padded with spaces, at most the application's 65536: a larger body is refused and its
    /// connection closed), then its verified request: what a large request leaves behind.
    #[arg(long, value_name = "BYTES")]
    pub put_body_bytes: Option<usize>,
    /// Leave out the live heap count (a third fresh process per repeat, under valgrind's memcheck,
    /// holding idle connections: heap bytes per connection counted block by block).
    #[arg(long)]
    pub no_heap: bool,
    /// Cargo profile to build and measure.
    #[arg(long, value_enum, default_value_t = Profile::Release)]
    pub profile: Profile,
    /// Print the table of this `memory.json` and run nothing.
    #[arg(long, value_name = "FILE")]
    pub from: Option<std::path::PathBuf>,
    /// With --from: draw its chart (resident memory against connections) into this SVG file instead.
    #[arg(long, value_name = "PATH", requires = "from")]
    pub chart: Option<std::path::PathBuf>,
    /// Where the servers run (workers = their CPUs), where the folder goes, whether to build.
    #[command(flatten)]
    pub served: ServedArgs,
}

impl MemoryArgs {
    /// Checks the flags into a [`MemoryPlan`], with the open-file limit
    /// raised for the most connections (two descriptors each here, one in
    /// the server).
    ///
    /// # Errors
    /// A route outside the table, counts not ascending, a malformed
    /// `--cmd`, CPUs this process may not use, more connections than the
    /// file-descriptor limit allows.
    pub fn plan(self) -> anyhow::Result<MemoryPlan> {
        let route = common::Route::by_path(&self.route)
            .filter(|r| r.path != common::RouteId::Healthz.path())
            .with_context(|| format!("--route {} is not a route of the table", self.route))?;
        ensure!(
            self.connections.len() >= 2 && self.connections.windows(2).all(|w| w[0] < w[1]),
            "--connections must name at least two counts, ascending (a connection's cost is the slope between them)"
        );
        ensure!(!self.frameworks.frameworks.is_empty(), "--frameworks names no framework");
        if let Some(bytes) = self.put_body_bytes {
            let (least, most) = (common::devices_json().len(), common::MAX_BODY_BYTES);
            ensure!(
                (least..=most).contains(&bytes),
                "--put-body-bytes {bytes}: from {least} (the device list) to {most} (the application's limit)"
            );
        }
        self.served.cpus.check()?;
        if !self.no_heap {
            suite::check_valgrind("the live heap count runs each server under memcheck; --no-heap leaves it out")?;
        }
        let most = *self.connections.last().expect("two counts");
        crate::sys::ensure_fds_for(2 * most)
            .with_context(|| format!("--connections {most}: each connection held takes two descriptors here"))?;
        let workers = self.served.cpus.server_cpus.len();
        let mut servers = super::args::command_servers(&self.commands)?;
        if servers.is_empty() {
            for f in super::args::dedup(self.frameworks.frameworks) {
                let binary = suite::server_binary(self.profile, f);
                servers.push(CountedServer {
                    name: f.name().to_owned(),
                    command: format!("{} --addr {{addr}} --workers {workers}", binary.display()),
                    framework: Some(f),
                    middleware: None,
                    filler_routes: 0,
                });
            }
        }
        Ok(MemoryPlan {
            profile: self.profile,
            servers,
            route,
            put_body_bytes: self.put_body_bytes,
            connections: self.connections,
            heap: !self.no_heap,
            repeats: usize::try_from(self.repeats).unwrap_or(usize::MAX),
            busy: self.busy,
            warmup: self.warmup,
            server_cpus: self.served.cpus.server_cpus,
            client_cpus: self.served.cpus.client_cpus,
            build: !self.served.no_build,
            out: self.served.out.checked()?,
        })
    }
}

/// `--from FILE`: prints its table, or with `chart` draws it there; 2 when
/// it cannot be read or holds nothing to draw.
pub(super) fn render(path: &std::path::Path, chart: Option<&std::path::Path>) -> Outcome {
    let drawn = crate::results::read_memory(path).and_then(|report| match chart {
        None => {
            println!("{}", report::memory_table(&report));
            Ok(())
        }
        Some(svg) => {
            crate::sys::prepare_file("--chart", svg)?;
            let drew = report::charts::draw_memory(svg, &report)?;
            ensure!(drew, "{}: nothing to draw (no point measured)", path.display());
            Ok(())
        }
    });
    drawn.map_or_else(|e| super::report(&e, Outcome::Usage), |()| Outcome::Success)
}

/// Measures, prints the table and where the file went: 0 when every server
/// was measured every repeat, 1 when one ended early (its error printed),
/// 130 when stopped.
pub(super) fn run(plan: &MemoryPlan, stop: &AtomicBool) -> Outcome {
    match suite::memory(plan, stop) {
        Ok(outcome) => {
            println!("{}", report::memory_table(&outcome.report));
            let svg = outcome.file.with_extension("svg");
            if let Err(e) = report::charts::draw_memory(&svg, &outcome.report) {
                eprintln!("warning: the chart was not drawn: {e:#}");
            }
            println!("memory: {}", outcome.file.display());
            match outcome.report.servers.iter().find_map(|s| s.error.as_ref().map(|e| (&s.name, e))) {
                None => Outcome::Success,
                Some((name, e)) => {
                    eprintln!("error: {name}: {e}");
                    Outcome::Failed
                }
            }
        }
        Err(e) if stop.load(Ordering::Relaxed) => super::report(&e, Outcome::Interrupted),
        Err(e) => super::report(&e, Outcome::Failed),
    }
}

#[cfg(test)]
mod tests {
    use crate::cli::{Commands, parsed};

    fn plan(argv: &[&str]) -> anyhow::Result<crate::suite::MemoryPlan> {
        let Commands::Memory(args) = parsed(&[&["memory"][..], argv].concat())? else { panic!("memory") };
        args.plan()
    }

    #[test]
    fn counts_ascend_the_route_is_of_the_table_and_each_framework_gets_the_server_cpus_as_workers() {
        let p = plan(&["--server-cpus", "0", "--connections", "1,64"]).unwrap();
        assert_eq!((p.connections.as_slice(), p.repeats, p.route.path), (&[1, 64][..], 3, "/plaintext"));
        // The defaults the suite's memory scenario takes too.
        let defaults = (crate::suite::MEMORY_REPEATS, crate::suite::MEMORY_BUSY, crate::suite::MEMORY_WARMUP);
        assert_eq!((p.repeats, p.busy, p.warmup), defaults);
        assert_eq!(p.servers.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["actix", "axum", "rocket"]);
        assert!(p.servers[1].command.ends_with("server-axum --addr {addr} --workers 1"), "{}", p.servers[1].command);
        let p = plan(&["--cmd", "own=./srv --listen {addr}", "--connections", "2,4,8"]).unwrap();
        assert_eq!((p.servers[0].name.as_str(), p.servers[0].framework), ("own", None));
        let err = |argv: &[&str]| format!("{:#}", plan(argv).unwrap_err());
        assert!(err(&["--connections", "64,1"]).contains("at least two counts, ascending"));
        assert!(err(&["--connections", "64"]).contains("at least two counts, ascending"));
        assert!(err(&["--route", "/nope"]).contains("--route /nope is not a route of the table"));
        assert!(err(&["--cmd", "own=./srv"]).contains("expected NAME=COMMAND with {addr}"));
        assert!(err(&["--repeats", "1"]).contains("1 is not in 2..=100"));
        let beyond = err(&["--connections", "1,1000000"]);
        assert!(beyond.contains("--connections 1000000: each connection held takes two descriptors here"), "{beyond}");
        assert!(beyond.contains("hard limit (ulimit -Hn)"), "{beyond}");
        let least = common::devices_json().len();
        let p = plan(&["--put-body-bytes", "65536", "--connections", "1,2"]).unwrap();
        assert_eq!(p.put_body_bytes, Some(65_536));
        assert_eq!(plan(&["--put-body-bytes", &least.to_string()]).unwrap().put_body_bytes, Some(least));
        let said = format!("from {least} (the device list) to 65536 (the application's limit)");
        for bytes in [least - 1, 65_537] {
            let e = err(&["--put-body-bytes", &bytes.to_string()]);
            assert_eq!(e, format!("--put-body-bytes {bytes}: {said}"));
        }
    }

    /// The two committed sessions of the run folder `run`, `files`: each
    /// renders in the run's README (session 1 also on the front page when
    /// `front`), its chart is session 1 drawn again by the command the
    /// README gives, and every figure of session 2 (the heap's where
    /// counted) has an interval that overlaps session 1's, its mean inside
    /// it but for the size at start (overlapping only).
    fn committed_sessions_agree(run: &str, files: [&str; 2], front: bool) {
        use crate::results::{Held, MemoryServer, OverRepeats, read_memory};

        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let folder = root.join(run);
        let [one, two] = files.map(|f| read_memory(&folder.join(f)).unwrap());
        let table = crate::report::memory_table(&one);
        let readme = std::fs::read_to_string(folder.join("README.md")).unwrap();
        let front_page = std::fs::read_to_string(root.join("README.md")).unwrap();
        for (page, text) in
            [("its README", &readme), ("the front page", &front_page)].into_iter().take(1 + usize::from(front))
        {
            assert!(text.contains(table.trim()), "{run}: {page} differs from:\n{table}");
        }
        assert!(readme.contains(crate::report::memory_table(&two).trim()), "{run}: session 2 in its README");
        let drawn = std::env::temp_dir().join(format!("bench-client-memory-chart-{}.svg", std::process::id()));
        assert!(crate::report::charts::draw_memory(&drawn, &one).unwrap());
        let committed = format!("{run}/memory.svg");
        assert!(std::fs::read(&drawn).unwrap() == std::fs::read(root.join(&committed)).unwrap(), "{committed} differs");
        let _ = std::fs::remove_file(&drawn);
        assert!(!front || front_page.contains(&format!("]({committed})")), "README shows {committed}");
        let command = format!("bench-client memory --from {run}/{} --chart {committed}", files[0]);
        assert!(readme.contains(&command), "the run's README says it draws with `{command}`");
        // What a connection costs and what is kept; the size at start is held to overlapping only.
        let figures = |s: &MemoryServer, c: &[usize]| {
            let heap = s.repeats.iter().all(|r| r.heap.is_some()).then(|| s.heap_kib_per_connection(c));
            let rss = [s.kib_per_connection(Held::Idle, c), s.kib_per_connection(Held::Busy, c), s.kept_mib()];
            rss.into_iter().chain(heap).map(|f| (f, true)).chain([(s.baseline_mib(), false)])
        };
        let bounds = |f: Option<OverRepeats>| f.and_then(|f| f.interval).expect("three repeats: an interval");
        assert_eq!(one.servers.len(), 3);
        for (a, b) in one.servers.iter().zip(&two.servers) {
            assert_eq!((a.name.as_str(), a.repeats.len(), b.repeats.len()), (b.name.as_str(), 3, 3));
            for ((fa, _), (fb, lands)) in figures(a, &one.connections).zip(figures(b, &two.connections)) {
                let ((lo_a, hi_a), (lo_b, hi_b)) = (bounds(fa), bounds(fb));
                assert!(lo_b <= hi_a && lo_a <= hi_b, "{}: [{lo_a} … {hi_a}] and [{lo_b} … {hi_b}]", a.name);
                let mean = fb.map(|f| f.mean).unwrap_or_default();
                assert!(!lands || (lo_a..=hi_a).contains(&mean), "{}: {mean} outside [{lo_a} … {hi_a}]", a.name);
            }
        }
    }

    #[test]
    fn the_committed_sessions_render_and_the_second_overlaps_the_first() {
        committed_sessions_agree(
            "bench/runs/2026-12-06-memory",
            ["session-1.memory.json", "session-2.memory.json"],
            false,
        );
    }

    #[test]
    fn the_memory_scenarios_results_validate_render_on_the_front_page_and_the_second_meets_the_first() {
        let run = "bench/runs/2026-12-06-memory-heap";
        let files = ["session-1.results.json.gz", "session-2.results.json.gz"];
        committed_sessions_agree(run, files, true);
        let schema: serde_json::Value =
            serde_json::from_str(include_str!("../../../docs/results.schema.json")).expect("the schema is JSON");
        let validator = jsonschema::validator_for(&schema).expect("a valid schema");
        for file in files {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(run).join(file);
            let results = crate::results::read(&path).unwrap();
            assert!(results.memory.is_some() && results.meta.scenarios.is_empty(), "{file}: the memory scenario alone");
            // The file as written, not as read back.
            let gz = flate2::read::GzDecoder::new(std::fs::File::open(&path).unwrap());
            let value: serde_json::Value = serde_json::from_reader(gz).unwrap();
            let errors: Vec<String> =
                validator.iter_errors(&value).map(|e| format!("{e} at {}", e.instance_path())).collect();
            assert!(errors.is_empty(), "{file}: {errors:#?}");
        }
    }

    #[test]
    fn the_pitfall_sessions_render_in_their_readme_whose_rows_are_the_files_and_the_second_meets_the_first() {
        use crate::results::{Held, MemoryReport, OverRepeats, read_memory};

        let run = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench/runs/2026-12-06-memory-pitfalls");
        let readme = std::fs::read_to_string(run.join("README.md")).unwrap();
        let session = |kind: &str, n: u32| read_memory(&run.join(format!("{kind}-{n}.memory.json"))).unwrap();
        let idle = |r: &MemoryReport, name: &str, held: Held| -> OverRepeats {
            let server = r.servers.iter().find(|s| s.name == name).unwrap_or_else(|| panic!("{name}"));
            server.kib_per_connection(held, &r.connections).expect("three repeats")
        };
        let cell = |f: OverRepeats| {
            let (lo, hi) = f.interval.expect("an interval");
            format!("{:.1} [{lo:.1} … {hi:.1}]", f.mean)
        };
        let (mut rows, mut more_after_put, mut more_as_router) = (Vec::new(), Vec::new(), Vec::new());
        for n in [1, 2] {
            let (small, put, serve) = (session("small", n), session("put", n), session("serve", n));
            assert_eq!((small.put_body_bytes, put.put_body_bytes, serve.put_body_bytes), (None, Some(65_536), None));
            for report in [&small, &put, &serve] {
                let table = crate::report::memory_table(report);
                assert!(readme.contains(table.trim()), "session {n}'s table in the README:\n{table}");
            }
            // What one large request leaves: each framework's idle connection, small requests only and after it.
            for name in ["actix", "axum", "rocket"] {
                let (a, b) = (idle(&small, name, Held::Idle), idle(&put, name, Held::Idle));
                rows.push(format!("| {n} | {name} | {} | {} | {:+.1} |", cell(a), cell(b), b.mean - a.mean));
                more_after_put.push(b.mean - a.mean);
            }
            // axum's two idioms, idle and busy.
            for held in [Held::Idle, Held::Busy] {
                let (a, b) = (idle(&serve, "axum-router", held), idle(&serve, "axum-make-service", held));
                rows.push(format!("| {n} | {held:?} | {} | {} | {:+.1} |", cell(a), cell(b), a.mean - b.mean));
                if held == Held::Idle {
                    more_as_router.push(a.mean - b.mean);
                }
            }
        }
        let missing: Vec<&String> = rows.iter().filter(|row| !readme.contains(row.as_str())).collect();
        assert!(missing.is_empty(), "rows the README lacks, as the files give them:\n{missing:#?}");
        // The front page's sentence: the least and the most a PUT left over both sessions, and
        // what the Router costs an idle connection in each (one figure where both agree).
        let front = std::fs::read_to_string(run.join("../../../README.md")).unwrap();
        let (least, most) = more_after_put.iter().fold((f64::MAX, f64::MIN), |(l, m), &d| (l.min(d), m.max(d)));
        let router: Vec<String> = more_as_router.iter().map(|d| format!("{d:.1}")).collect();
        assert_eq!(router[0], router[1], "both sessions say the same of the Router");
        for said in
            [format!("holding {least:.0} to {most:.0} KiB more"), format!("costs {} KiB more per idle", router[0])]
        {
            assert!(front.contains(&said), "the front page says: {said}");
        }
        // A second session's interval meets the first's: each idle slope, each kind, each interval
        // widened by what a slope resolves (RSS counts 4 KiB pages: one page over the span).
        for kind in ["small", "put", "serve"] {
            let (one, two) = (session(kind, 1), session(kind, 2));
            let span = (one.connections.last().unwrap() - one.connections[0]) as f64;
            let page = 4.0 / span;
            for server in &one.servers {
                let (first, second) = (idle(&one, &server.name, Held::Idle), idle(&two, &server.name, Held::Idle));
                let ((lo_a, hi_a), (lo_b, hi_b)) = (first.interval.unwrap(), second.interval.unwrap());
                assert!(
                    lo_b - page <= hi_a + page && lo_a - page <= hi_b + page,
                    "{kind} {}: [{lo_a} … {hi_a}] and [{lo_b} … {hi_b}]",
                    server.name
                );
            }
        }
    }
}
