//! `bench-client ab`: two builds of the servers measured side by side.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::{bail, ensure};
use clap::Args;

use super::Outcome;
use super::args::{
    DEFAULT_ROUTES, FrameworksArg, ServedArgs, duration, load_percent, nonzero, percent, positive_duration, slice,
    sliced_timing, timing,
};
use super::ci::{CiArgs, CiPlan};
use crate::engine::LoadSettings;
use crate::model::{Framework, Pairing, Profile, Variant};
use crate::report::{self, change_with_ci};
use crate::suite::CountSettings;
use crate::suite::SuitePlan;
use crate::suite::ab::{self, AbPlan, Revision, Side};
use crate::suite::ab_count;
use crate::suite::command;
use crate::suite::deps::Deps;

/// Flags of `ab`, as typed.
#[derive(Debug, Args)]
pub struct AbArgs {
    /// The baseline: a git revision (HEAD, a branch, a commit) or `worktree`.
    #[arg(help_heading = "The two sides", long, default_value = "HEAD")]
    pub before: String,
    /// The candidate: `worktree` (the working tree, uncommitted changes included) or a git revision.
    #[arg(help_heading = "The two sides", long, default_value = "worktree")]
    pub after: String,
    /// BEFORE built with other versions of its dependencies, e.g. 'axum=0.8.1,hyper=1.5.0' (each
    /// `cargo update -p NAME --precise VERSION`), or a Cargo.lock file; in a worktree of --before.
    #[arg(help_heading = "The two sides", long, value_name = "NAME=VERSION,…|LOCKFILE", value_parser = Deps::parse)]
    pub before_deps: Option<Deps>,
    /// AFTER built with other versions of its dependencies, as --before-deps (--after then names a revision).
    #[arg(help_heading = "The two sides", long, value_name = "NAME=VERSION,…|LOCKFILE", value_parser = Deps::parse)]
    pub after_deps: Option<Deps>,
    /// The baseline as any server: a shell command with {addr} (or {port}, and {host}) where it is to
    /// listen, a free loopback address for each start, e.g. 'my-server --listen {addr}'; with
    /// --after-cmd and --routes, instead of --before/--after/--frameworks/--layers.
    #[arg(help_heading = "The two sides", long, requires_all = ["after_cmd", "routes"], conflicts_with_all = ["before", "after", "before_deps", "after_deps", "frameworks", "layers", "layers_before", "layers_after"])]
    pub before_cmd: Option<String>,
    /// The candidate as any server, as --before-cmd.
    #[arg(help_heading = "The two sides", long, requires = "before_cmd")]
    pub after_cmd: Option<String>,
    /// With --before-cmd/--after-cmd: how long each start may take to accept connections.
    #[arg(help_heading = "The two sides", long, default_value = "30s", value_parser = positive_duration)]
    pub ready_timeout: Duration,
    /// The frameworks.
    #[command(flatten)]
    pub frameworks: FrameworksArg,
    /// Routes to compare, comma-separated: paths of the route table (not /healthz; default:
    /// /plaintext, the devices and the state routes), or any paths with --before-cmd/--after-cmd.
    #[arg(help_heading = "What to measure", long, value_delimiter = ',')]
    pub routes: Option<Vec<String>>,
    /// Cargo profile to build and measure.
    #[arg(help_heading = "What to measure", long, value_enum, default_value_t = Profile::Release)]
    pub profile: Profile,
    /// Each side's own measured time per route and round (a whole number of blocks), e.g. 3s.
    #[arg(help_heading = "Timing and load", long, default_value = "3s", value_parser = positive_duration, allow_hyphen_values = true)]
    pub duration: Duration,
    /// Discarded warm-up before each route's run, e.g. 1s.
    #[arg(help_heading = "Timing and load", long, default_value = "1s", value_parser = duration, allow_hyphen_values = true)]
    pub warmup: Duration,
    /// Length of one slice, e.g. 250ms.
    #[arg(help_heading = "Timing and load", long = "slice", default_value = "250ms", value_parser = slice, allow_hyphen_values = true)]
    pub slice: Duration,
    /// Latency at a fixed load: each round measures the baseline's closed-loop rate, then alternates
    /// the variants in the open loop at this percentage of it, and every delta gets the change of
    /// p50, p90, p99 and p99.9 with its interval (docs/METHODOLOGY.md), e.g. 50.
    #[arg(help_heading = "Timing and load", long, value_parser = load_percent)]
    pub load_percent: Option<f64>,
    /// Rounds (2 or more), each on a new pair of server processes measuring every route once, the side
    /// started first alternating; the interval's t quantile is over rounds − 1 degrees of freedom.
    #[arg(help_heading = "Timing and load", long, default_value_t = 6, value_parser = clap::value_parser!(u32).range(2..=1000))]
    pub rounds: u32,
    /// Keep-alive connections to each server.
    #[arg(help_heading = "Timing and load", long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub connections: u32,
    /// State layers of both sides' servers (server --layers).
    #[arg(help_heading = "What to measure", long, default_value_t = 10, value_parser = clap::value_parser!(u16).range(0..=1000))]
    pub layers: u16,
    /// BEFORE's --layers instead of --layers.
    #[arg(help_heading = "What to measure", long, value_parser = clap::value_parser!(u16).range(0..=1000))]
    pub layers_before: Option<u16>,
    /// AFTER's --layers instead of --layers.
    #[arg(help_heading = "What to measure", long, value_parser = clap::value_parser!(u16).range(0..=1000))]
    pub layers_after: Option<u16>,
    /// Smallest significant slowdown, percent, that counts as a regression (exit 1).
    #[arg(help_heading = "CI and gates", long = "threshold-percent", visible_alias = "threshold", default_value = "2", value_parser = percent)]
    pub threshold: f64,
    /// The status a successful response carries on every compared route, on both sides (e.g. 201
    /// for a route that answers it on purpose).
    #[arg(help_heading = "What to measure", long, default_value_t = 200, value_parser = clap::value_parser!(u16).range(200..=599))]
    pub expect_status: u16,
    /// CPUs, run folders, building.
    #[command(flatten, next_help_heading = "Servers, CPUs and output")]
    pub served: ServedArgs,
    /// Files for CI.
    #[command(flatten, next_help_heading = "CI and gates")]
    pub ci: CiArgs,
    /// A/A: N sessions of the AFTER side against itself (one build or command on both sides), then
    /// this runner's false-alarm rate and the changes it resolves in this time, for --threshold-percent.
    #[arg(help_heading = "CI and gates", long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100))]
    pub aa: Option<u32>,
    /// Count what a request costs each side (instructions, allocations, bytes, system calls,
    /// context switches and page faults per request, as `count` does) instead of timing them: a
    /// change of 1 % shows on any machine. Needs valgrind and perf (or --no-perf).
    #[arg(help_heading = "Counted, not timed", long, conflicts_with_all = ["aa", "load_percent"])]
    pub count: bool,
    /// With --count: the most requests of a route's short stretch (as `count --requests`).
    #[arg(help_heading = "Counted, not timed", long, requires = "count", default_value_t = 2000, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub requests: u64,
    /// With --count: repeats of every route's two stretches (as `count --repeats`).
    #[arg(help_heading = "Counted, not timed", long, requires = "count", default_value_t = 3, value_parser = clap::value_parser!(u64).range(2..=1000))]
    pub repeats: u64,
    /// With --count: count without perf (no system calls, context switches or page faults of
    /// the native process), where perf is missing or may not count.
    #[arg(help_heading = "Counted, not timed", long, requires = "count")]
    pub no_perf: bool,
}

impl AbArgs {
    /// The CI files asked for, checked.
    ///
    /// # Errors
    /// A CI file that cannot be written where asked; a CI file with `--aa`.
    pub fn checked_ci(&self) -> anyhow::Result<CiPlan> {
        let ci = CiPlan::new(&self.ci, self.threshold)?;
        ensure!(
            self.aa.is_none() || ci.is_empty(),
            "--aa compares one side with itself: it writes no --bmf, --github-benchmark or --junit"
        );
        Ok(ci)
    }

    /// Checks the flags into an [`AbPlan`].
    ///
    /// # Errors
    /// A route outside the route table, CPUs this process may not use.
    pub fn plan(self) -> anyhow::Result<AbPlan> {
        self.served.cpus.check()?;
        let (before, after, frameworks, routes) = match (self.before_cmd, self.after_cmd) {
            (Some(before), Some(after)) => {
                command::check("--before-cmd", &before)?;
                command::check("--after-cmd", &after)?;
                let routes = checked_paths(self.routes, true)?;
                let side = |command| Side { revision: Revision::Command(command), layers: 0 };
                (side(before), side(after), vec![Framework::Own], routes)
            }
            _ => {
                let routes = checked_paths(self.routes, false)?;
                let layers = |side: Option<u16>| side.unwrap_or(self.layers);
                let revision = |flag: &str, name: &str, deps: Option<Deps>| match (Revision::parse(name), deps) {
                    (Revision::Git(name, _), deps) => Ok(Revision::Git(name, deps)),
                    (_, Some(_)) => {
                        bail!("--{flag}-deps: the working tree builds as it is; name a revision (--{flag} HEAD)")
                    }
                    (revision, None) => Ok(revision),
                };
                let before = Side {
                    revision: revision("before", &self.before, self.before_deps)?,
                    layers: layers(self.layers_before),
                };
                let after = Side {
                    revision: revision("after", &self.after, self.after_deps)?,
                    layers: layers(self.layers_after),
                };
                (before, after, self.frameworks.frameworks, routes)
            }
        };
        ensure!(!routes.is_empty(), "--routes is empty");
        let mut seen = std::collections::HashSet::new();
        ensure!(routes.iter().all(|r| seen.insert(*r)), "--routes names a path twice");
        // A/A: the candidate on both sides.
        let before = if self.aa.is_some() { after.clone() } else { before };
        sliced_timing(self.warmup, self.duration, self.slice, 2)?;
        Ok(AbPlan {
            base: SuitePlan {
                profile: self.profile,
                frameworks,
                scenarios: Vec::new(),
                settings: LoadSettings::closed(
                    nonzero(self.connections),
                    self.served.cpus.client_threads(),
                    timing(self.warmup, self.duration, self.duration)?,
                    Duration::from_secs(2),
                ),
                rounds: self.rounds,
                pairing: Pairing::Slices,
                slice: self.slice,
                server_per_round: true,
                load_percent: self.load_percent,
                tls_resumption: true,
                tcp_nodelay: false,
                threshold_percent: self.threshold,
                tie_margin_percent: crate::results::TIE_MARGIN_PERCENT,
                target: None,
                layers: {
                    let mut layers = vec![before.layers, after.layers];
                    layers.sort_unstable();
                    layers.dedup();
                    layers
                },
                server_cpus: self.served.cpus.server_cpus,
                client_cpus: self.served.cpus.client_cpus,
                out: self.served.out.checked()?,
                build: !self.served.no_build,
                profiler: None,
                count: None,
                memory: false,
            },
            before,
            after,
            routes,
            aa: self.aa,
            count: self.count.then(|| CountSettings {
                requests: self.requests,
                repeats: usize::try_from(self.repeats).unwrap_or(usize::MAX),
                perf: !self.no_perf,
            }),
            threshold_percent: self.threshold,
            ready_timeout: self.ready_timeout,
            expect_status: self.expect_status,
        })
    }
}

/// The paths `--routes` names, checked: with both sides' own commands
/// (`own`), any paths (none given: none); else routes of the table (none
/// given: [`DEFAULT_ROUTES`]).
fn checked_paths(paths: Option<Vec<String>>, own: bool) -> anyhow::Result<Vec<&'static str>> {
    Ok(if own {
        let paths = paths.unwrap_or_default();
        for path in &paths {
            ensure!(path.starts_with('/'), "--routes {path} is not a path (it starts with /)");
        }
        // Leaked once: the paths live as long as the run, and its slots copy them.
        paths.into_iter().map(|p| &*Box::leak(p.into_boxed_str())).collect()
    } else {
        let paths = paths.unwrap_or_else(|| DEFAULT_ROUTES.iter().map(|p| (*p).to_owned()).collect());
        paths
            .iter()
            .map(|path| {
                Variant::of_path(path).map(Variant::path).ok_or_else(|| {
                    let known: Vec<&str> = Variant::ALL.iter().map(|v| v.path()).collect();
                    anyhow::anyhow!("--routes {path} is not a benchmark route ({})", known.join(", "))
                })
            })
            .collect::<anyhow::Result<_>>()?
    })
}

/// Runs `ab`, prints its table, and ends with [`Outcome::Failed`] on a
/// significant slowdown beyond the threshold.
///
/// # Errors
/// See [`ab::run`].
pub(super) fn run(plan: &AbPlan, ci: &CiPlan, stop: &AtomicBool) -> anyhow::Result<Outcome> {
    if let Some(sessions) = plan.aa {
        return aa(plan, sessions, stop);
    }
    if let Some(settings) = plan.count {
        // Before anything is built: the tool the count needs.
        if let Err(e) = crate::suite::check_tools(settings.perf) {
            return Ok(super::report(&e, Outcome::Usage));
        }
        let counted = ab_count::count_plan(plan, settings)?;
        println!(
            "BEFORE: {} · AFTER: {} · counted under callgrind and memcheck{}",
            plan.before.revision.label(),
            plan.after.revision.label(),
            if settings.perf { ", and by perf" } else { "" }
        );
        return Ok(super::count::run(&counted, ci, stop));
    }
    let outcome = ab::run(plan, stop)?;
    super::print_answer(&outcome);
    // The rate's change and, at a fixed load, every percentile's.
    let gated = ci.gate("ab", &report::ci::tracked(&outcome.results), &report::ci::judged_deltas(&outcome.results))?;
    Ok(if outcome.interrupted {
        Outcome::Interrupted
    } else if gated > 0 || !outcome.results.complete {
        Outcome::Failed
    } else {
        Outcome::Success
    })
}

/// `--aa N`: N sessions of one side against itself, each printed as it
/// ends, then what they say about this runner ([`report::aa_summary`]).
/// Exit 0 (the figures are the answer), 130 when interrupted.
///
/// # Errors
/// See [`ab::run`].
fn aa(plan: &AbPlan, sessions: u32, stop: &AtomicBool) -> anyhow::Result<Outcome> {
    let mut plan = plan.clone();
    let mut deltas = Vec::new();
    for session in 1..=sessions {
        let outcome = ab::run(&plan, stop)?;
        // Built once: the later sessions run the same binaries.
        plan.base.build = false;
        println!("\nA/A session {session} of {sessions} ({}):", outcome.dir.display());
        for d in &outcome.results.deltas {
            println!("  {} {} {} {}", d.framework.name(), d.to, change_with_ci(&d.change), d.change.verdict.label());
        }
        deltas.extend(outcome.results.deltas);
        if outcome.interrupted {
            return Ok(Outcome::Interrupted);
        }
    }
    println!("\n{}", report::aa_summary(&deltas, sessions));
    Ok(Outcome::Success)
}
