//! `bench-client count`: what a request costs each framework on each route,
//! counted: instructions and allocations under callgrind, bytes under
//! memcheck, system calls, context switches and page faults by perf (`make count`).

use std::sync::atomic::AtomicBool;

use anyhow::ensure;
use clap::Args;

use super::Outcome;
use super::args::{FrameworksArg, ServedArgs, dedup};
use super::ci::{CiArgs, CiPlan};
use crate::model::{Profile, Scenario, Variant};
use crate::report;
use crate::suite::{self, CountPlan, CountedServer};

/// Flags of `count`, as typed.
#[derive(Debug, Args)]
pub struct CountArgs {
    /// The frameworks.
    #[command(flatten)]
    pub frameworks: FrameworksArg,
    /// Another build of a workspace server instead of the frameworks, as NAME=COMMAND: a program
    /// and its arguments with {addr} where it is to listen (run under callgrind, so no shell
    /// constructs), answering /healthz and the routes with the route table's bodies, e.g.
    /// before='target/release/server-axum --addr {addr} --workers 1'. Twice: the second is
    /// compared with the first, route by route.
    #[arg(long = "cmd", value_name = "NAME=COMMAND", conflicts_with = "frameworks")]
    pub commands: Vec<String>,
    /// With two --cmd: an increase of instructions per request beyond this many percent, with an
    /// interval wholly above zero, exits 1.
    #[arg(long, default_value = "0", value_parser = super::args::percent)]
    pub threshold_percent: f64,
    /// What is counted and how: routes, build, stretches, layers, perf.
    #[command(flatten)]
    pub counting: CountingArgs,
    /// Also count every route over HTTP/2 with prior knowledge (h2c), once per value with that many
    /// requests in flight at once on the connection (streams), e.g. 1,16: a row each (`h2c
    /// /plaintext`, `h2c x16 /plaintext`), and each set against the route over HTTP/1.1.
    #[arg(long, value_delimiter = ',', value_name = "STREAMS", value_parser = clap::value_parser!(u16).range(1..=100))]
    pub http2_streams: Vec<u16>,
    /// Count `/api/devices/preserialized` on each framework's server with `--middleware none`, then
    /// on one per layer it offers and one with all of them (requests with `Accept-Encoding: gzip`
    /// and an `Origin`, each answer checked through its layers), each set against the bare one.
    #[arg(long, conflicts_with_all = ["commands", "routes", "http2_streams"])]
    pub middleware: bool,
    /// Count `/scale/target` and `/scale/target/42` on each framework's server, then on one per
    /// count given with that many routes of each kind registered ahead of them (`--filler-routes`),
    /// each set against the framework's own, e.g. 10,100,1000.
    #[arg(long, value_name = "N", value_delimiter = ',', conflicts_with_all = ["commands", "routes", "http2_streams", "middleware"],
          value_parser = clap::value_parser!(u16).range(1..=i64::from(common::scale::MAX_FILLER_ROUTES)))]
    pub filler_routes: Vec<u16>,
    /// Print the tables of this `count.json` and run nothing (the README's tables are rendered so).
    #[arg(long, value_name = "FILE")]
    pub from: Option<std::path::PathBuf>,
    /// With --from a `versions` sweep: draw its timeline (instructions per request per release, a
    /// line per route) into this SVG file instead.
    #[arg(long, value_name = "SVG", requires = "from")]
    pub chart: Option<std::path::PathBuf>,
    /// Where the servers run, where the folder goes, whether to build.
    #[command(flatten)]
    pub served: ServedArgs,
    /// Files for CI (counted: instructions, allocations and system calls per request; with two
    /// --cmd, a JUnit test case per route, failed when its instructions grow beyond --threshold-percent).
    #[command(flatten, next_help_heading = "CI and gates")]
    pub ci: CiArgs,
}

/// What `count` and `versions` count and how, as typed.
#[derive(Debug, Args)]
pub struct CountingArgs {
    /// Routes to count, comma-separated paths of the route table (default: /plaintext, the devices
    /// and the state routes).
    #[arg(long, value_delimiter = ',')]
    pub routes: Option<Vec<String>>,
    /// Cargo profile to build and count.
    #[arg(long, value_enum, default_value_t = Profile::Release)]
    pub profile: Profile,
    /// The most requests of a route's short stretch (the long one has twice as many; the difference
    /// over them is one request's cost); a heavy route gets fewer, sized to about 24 million
    /// instructions, at least 200.
    #[arg(long, default_value_t = 2000, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub requests: u64,
    /// Repeats of every route's two stretches: their spread is the count's own noise.
    #[arg(long, default_value_t = crate::suite::COUNT_REPEATS as u64, value_parser = clap::value_parser!(u64).range(2..=1000))]
    pub repeats: u64,
    /// State layers (server --layers).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u16).range(0..=1000))]
    pub layers: u16,
    /// Count without perf: no system calls, context switches or page faults of the native
    /// process (where perf is missing or may not count them); the rest as usual.
    #[arg(long)]
    pub no_perf: bool,
}

impl CountingArgs {
    /// A plan counting no server yet with `served`'s CPUs, folder and
    /// building, gated at `threshold_percent`.
    ///
    /// # Errors
    /// A route outside the route table (or /healthz); an output folder that cannot be used.
    pub(super) fn plan(self, served: &ServedArgs, threshold_percent: f64) -> anyhow::Result<CountPlan> {
        Ok(CountPlan {
            profile: self.profile,
            pairs: Vec::new(),
            servers: Vec::new(),
            threshold_percent,
            routes: super::args::counted_routes(self.routes)?,
            requests: self.requests,
            repeats: usize::try_from(self.repeats).unwrap_or(usize::MAX),
            layers: self.layers,
            server_cpus: served.cpus.server_cpus.clone(),
            build: !served.no_build,
            out: served.out.checked()?,
            client_cpus: Some(served.cpus.client_cpus.clone()),
            perf: !self.no_perf,
            http2_streams: Vec::new(),
            http2_routes: None,
        })
    }
}

/// The tables of the `count.json` at `path`, as `count` printed them.
///
/// # Errors
/// A file that cannot be read or is not a `count.json`.
pub(super) fn rendered(path: &std::path::Path) -> anyhow::Result<String> {
    let counted = crate::results::read_count(path)?;
    Ok(with_layers(report::count_table(&counted), &counted))
}

/// `table`, then with `count --middleware`'s rows what each layer adds,
/// with the extractor routes' rows what each typed extractor adds, and with
/// `count --filler-routes`'s what the routes ahead add.
fn with_layers(table: String, counted: &crate::results::CountReport) -> String {
    let mut out = table;
    for pairs in
        [Scenario::Middleware, Scenario::Extractors, Scenario::Routes].map(|s| report::counted_table(counted, s))
    {
        if !pairs.is_empty() {
            out = format!("{out}\n{pairs}");
        }
    }
    out
}

impl CountArgs {
    /// The CI files asked for, checked (before anything runs).
    ///
    /// # Errors
    /// A CI file's folder that cannot be made.
    pub fn checked_ci(&self) -> anyhow::Result<CiPlan> {
        CiPlan::new(&self.ci, self.threshold_percent)
    }

    /// Checks the flags into a [`CountPlan`].
    ///
    /// # Errors
    /// A route outside the route table (or /healthz); CPUs this process may not use.
    pub fn plan(self) -> anyhow::Result<CountPlan> {
        ensure!(!self.frameworks.frameworks.is_empty(), "--frameworks names no framework");
        self.served.cpus.check()?;
        let (profile, layers) = (self.counting.profile, self.counting.layers);
        let mut plan = self.counting.plan(&self.served, self.threshold_percent)?;
        let mut servers = super::args::command_servers(&self.commands)?;
        let mut pairs = Vec::new();
        if self.middleware {
            plan.routes = vec![common::Route::get(common::RouteId::DevicesPreserialized)];
            for f in dedup(self.frameworks.frameworks.clone()) {
                let bare = servers.len();
                let layered = Variant::MIDDLEWARE.iter().filter_map(|&v| CountedServer::layered(f, profile, layers, v));
                servers.extend(layered);
                pairs.extend((bare + 1..servers.len()).map(|after| (bare, after)));
            }
        }
        if !self.filler_routes.is_empty() {
            plan.routes = [common::RouteId::ScaleStatic, common::RouteId::ScaleParam].map(common::Route::get).to_vec();
            for f in dedup(self.frameworks.frameworks.clone()) {
                let own = servers.len();
                servers.push(CountedServer::framework(f, profile, layers));
                for &n in &dedup(self.filler_routes.clone()) {
                    servers.push(CountedServer::with_fillers(f, profile, layers, n));
                    pairs.push((own, servers.len() - 1));
                }
            }
        }
        if servers.is_empty() {
            for f in self.frameworks.frameworks {
                if !servers.iter().any(|s| s.framework == Some(f)) {
                    servers.push(CountedServer::framework(f, profile, layers));
                }
            }
        }
        // Two commands: the second against the first.
        if servers.len() == 2 && !self.commands.is_empty() {
            pairs.push((0, 1));
        }
        plan.http2_streams = dedup(self.http2_streams.iter().map(|&n| usize::from(n)).collect());
        (plan.servers, plan.pairs) = (servers, pairs);
        Ok(plan)
    }
}

/// `--from FILE`: prints its tables, or with `chart` draws a sweep's
/// timeline there; 2 when it cannot be read or is no sweep.
pub(super) fn render(path: &std::path::Path, chart: Option<&std::path::Path>) -> Outcome {
    if let Some(svg) = chart {
        let drawn = crate::results::read_count(path).and_then(|counted| {
            crate::sys::prepare_file("--chart", svg)?;
            anyhow::ensure!(
                report::charts::draw_versions(svg, &counted)?,
                "{} is not a `versions` sweep: no timeline to draw",
                path.display()
            );
            Ok(format!("chart: {}\n", svg.display()))
        });
        return super::print_or_usage(drawn);
    }
    super::print_or_usage(rendered(path).map(|text| format!("{text}\n")))
}

/// Checks the tools, counts, prints the table and where the file went, and
/// writes the CI files `ci` asks for.
pub(super) fn run(plan: &CountPlan, ci: &CiPlan, stop: &AtomicBool) -> Outcome {
    if let Err(e) = suite::check_tools(plan.perf) {
        return super::report(&e, Outcome::Usage);
    }
    match suite::count(plan, stop) {
        Ok(outcome) => {
            println!("{}", with_layers(report::count_table(&outcome.report), &outcome.report));
            println!("count: {}", outcome.file.display());
            let tracked = report::ci::tracked_counts(&outcome.report);
            // Instructions per request are judged; the other counts are shown. Servers set against
            // their framework's own (`--middleware`, `--filler-routes`) are what is measured, not a
            // regression.
            let set_against = plan.servers.iter().any(|s| s.middleware.is_some() || s.filler_routes > 0);
            let judged = if set_against { Vec::new() } else { report::ci::judged_counts(&outcome.report) };
            let gated = match ci.gate("count", &tracked, &judged) {
                Ok(n) => n,
                Err(e) => return super::report(&e, Outcome::Failed),
            };
            if stop.load(std::sync::atomic::Ordering::Relaxed) {
                Outcome::Interrupted
            } else if gated == 0 {
                Outcome::Success
            } else {
                Outcome::Failed
            }
        }
        Err(e) if stop.load(std::sync::atomic::Ordering::Relaxed) => super::report(&e, Outcome::Interrupted),
        Err(e) => super::report(&e, Outcome::Failed),
    }
}

#[cfg(test)]
mod tests {
    use crate::cli::{Commands, parsed};

    #[test]
    fn routes_of_the_table_and_at_least_two_repeats() {
        let Commands::Count(args) = parsed(&["count", "--routes", "/plaintext,/state/fat,/plaintext"]).unwrap() else {
            panic!("count")
        };
        let plan = args.plan().unwrap();
        assert_eq!(plan.routes.iter().map(|r| r.path).collect::<Vec<_>>(), ["/plaintext", "/state/fat"]);
        assert_eq!((plan.requests, plan.repeats, plan.build), (2000, 3, true));
        assert_eq!(plan.servers.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["actix", "axum", "rocket"]);
        let Commands::Count(args) =
            parsed(&["count", "--cmd", "old=./a --addr {addr}", "--cmd", "new=./b --listen {addr} -v"]).unwrap()
        else {
            panic!("count")
        };
        let plan = args.plan().unwrap();
        assert_eq!(plan.servers[1].command, "./b --listen {addr} -v");
        assert_eq!((plan.servers[0].name.as_str(), plan.servers[0].framework), ("old", None));
        let Commands::Count(args) = parsed(&["count", "--cmd", "old=./a"]).unwrap() else { panic!("count") };
        assert!(args.plan().unwrap_err().to_string().contains("expected NAME=COMMAND with {addr}"));
        let Commands::Count(args) = parsed(&["count", "--routes", "/nope"]).unwrap() else { panic!("count") };
        assert!(args.plan().unwrap_err().to_string().contains("--routes /nope is not a route of the table"));
        assert!(parsed(&["count", "--repeats", "1"]).is_err(), "one repeat has no interval");
    }

    #[test]
    fn middleware_counts_each_layer_offered_against_the_bare_server_of_its_framework() {
        let Commands::Count(args) = parsed(&["count", "--middleware", "--frameworks", "actix,axum"]).unwrap() else {
            panic!("count")
        };
        let plan = args.plan().unwrap();
        assert_eq!(plan.routes.iter().map(|r| r.path).collect::<Vec<_>>(), ["/api/devices/preserialized"]);
        let names: Vec<&str> = plan.servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names[..6],
            ["actix bare", "actix trace", "actix cors", "actix security-headers", "actix compression", "actix stacked"]
        );
        assert_eq!(names.len(), 6 + 8, "axum offers all six layers");
        assert!(plan.servers[0].command.ends_with("--layers 10 --middleware none"), "{}", plan.servers[0].command);
        assert!(plan.servers[5].command.ends_with("--middleware trace,cors,security-headers,compression"));
        assert_eq!(plan.pairs[..2], [(0, 1), (0, 2)]);
        assert_eq!(plan.pairs.len(), 5 + 7);
        assert!(plan.pairs.iter().all(|&(bare, _)| bare == 0 || bare == 6), "{:?}", plan.pairs);
        for conflicting in [&["--routes", "/plaintext"][..], &["--http2-streams", "1"], &["--cmd", "a=./a {addr}"]] {
            let argv: Vec<&str> = ["count", "--middleware"].iter().chain(conflicting).copied().collect();
            assert!(parsed(&argv).is_err(), "{argv:?}");
        }
    }

    #[test]
    fn filler_routes_count_the_scale_targets_against_the_frameworks_own_server() {
        let Commands::Count(args) = parsed(&["count", "--filler-routes", "10,1000", "--frameworks", "rocket"]).unwrap()
        else {
            panic!("count")
        };
        let plan = args.plan().unwrap();
        let names: Vec<&str> = plan.servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["rocket", "rocket 10 ahead", "rocket 1000 ahead"]);
        assert!(plan.servers[2].command.ends_with("--layers 10 --filler-routes 1000"), "{}", plan.servers[2].command);
        assert_eq!((plan.pairs.as_slice(), plan.routes.len()), ([(0, 1), (0, 2)].as_slice(), 2));
        assert_eq!(plan.servers.iter().map(|s| s.filler_routes).collect::<Vec<_>>(), [0, 10, 1000]);
    }

    #[test]
    fn the_committed_middleware_count_renders_in_its_readme_with_the_figures_said_from_it() {
        let run = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench/runs/2026-12-06-middleware");
        let table = super::rendered(&run.join("count.json")).unwrap();
        let readme = std::fs::read_to_string(run.join("README.md")).unwrap();
        assert!(readme.contains(table.trim()), "the run's counted table differs from:\n{table}");
        let flat = readme.split_whitespace().collect::<Vec<_>>().join(" ");
        let report = crate::results::read_count(&run.join("count.json")).unwrap();
        let mean = |name: &str, of: fn(&crate::results::CountRow) -> &Vec<f64>| {
            let row = report.rows.iter().find(|r| r.framework == name).unwrap();
            of(row).iter().sum::<f64>() / of(row).len() as f64
        };
        let thousands = |n: f64| {
            let n = n.round() as u64;
            if n >= 1000 { format!("{},{:03}", n / 1000, n % 1000) } else { n.to_string() }
        };
        let mut added = Vec::new();
        for f in ["actix", "axum", "rocket"] {
            let (bare, gzip) = (format!("{f} bare"), format!("{f} compression"));
            let instructions = |n: &str| mean(n, |r| &r.instructions_per_request);
            let bytes = |n: &str| mean(n, |r| &r.bytes_allocated_per_request);
            let said = format!(
                "{} instructions and {} bytes against {} and {} bare",
                thousands(instructions(&gzip)),
                thousands(bytes(&gzip)),
                thousands(instructions(&bare)),
                thousands(bytes(&bare))
            );
            let said = if f == "actix" {
                said
            } else {
                said.replace(" instructions and ", " and ").replace(" bytes against", " against").replace(" bare", "")
            };
            assert!(flat.contains(&said), "the run's README does not say: {said}");
            added.push((instructions(&gzip) - instructions(&bare), bytes(&gzip) - bytes(&bare)));
        }
        let (low, high) = added.iter().fold((f64::MAX, 0.0_f64), |(l, h), a| (l.min(a.0), h.max(a.0)));
        let said = format!("{},000 to {},000 instructions", (low / 1000.0).floor(), (high / 1000.0).floor());
        assert!(flat.contains(&said), "the run's README does not say: {said}");
        let (low, high) = added.iter().fold((f64::MAX, 0.0_f64), |(l, h), a| (l.min(a.1), h.max(a.1)));
        let said = format!("{:.0} to {:.0} KB", (low / 1000.0).floor(), (high / 1000.0).floor());
        assert!(flat.contains(&said), "the run's README does not say: {said}");
    }

    #[test]
    fn the_committed_count_shows_as_count_from_renders_it() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let run = root.join("bench/runs/2026-12-03-counted");
        let table = super::rendered(&run.join("make-count.json")).unwrap();
        let readme = std::fs::read_to_string(run.join("README.md")).unwrap();
        assert!(readme.contains(table.trim()), "the run's counted table differs from:\n{table}");
        // Every count of a file of version 3 has its column; callgrind's system calls give way to perf's.
        for column in
            ["| bytes allocated per request |", "| context switches per request |", "| system calls per connection |"]
        {
            assert!(table.contains(column), "{column}: {table}");
        }
        assert!(!table.contains("under callgrind per request"), "{table}");
        // Over h2c with 1 and 16 streams beside HTTP/1.1, on the client page.
        let http2 = super::rendered(&root.join("bench/runs/2026-12-03-http2/count.json")).unwrap();
        let run = std::fs::read_to_string(root.join("bench/runs/2026-12-03-http2/README.md")).unwrap();
        assert!(run.contains(http2.trim()), "the run's counted HTTP/2 table differs from:\n{http2}");
        let page = std::fs::read_to_string(root.join("docs/CLIENT.md")).unwrap();
        assert!(page.contains("bench-client count --from bench/runs/2026-12-03-http2/count.json"));
        for row in ["| h2c /plaintext | actix /plaintext → actix h2c /plaintext |", "| h2c x16 /api/devices | rocket"]
        {
            assert!(http2.contains(row), "{row}: {http2}");
        }
        let err = super::rendered(&root.join("README.md")).unwrap_err();
        assert!(format!("{err:#}").contains("not a count.json"), "{err:#}");
    }
}
