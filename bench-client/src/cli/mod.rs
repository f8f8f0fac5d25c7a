//! The command line: clap types, their conversion into checked plans, and
//! one runner per subcommand behind a single dispatch ([`run`]). The only
//! layer that knows clap and exit codes; nothing below it sees either.
//!
//! Exit codes ([`Outcome`]): 0 success; 1 a run failed or was incomplete
//! (errors counted, preflight mismatch, a server died), or the suite could
//! not start (the build failed, a server binary is missing), with one line
//! on stderr; 2 bad input (including a start barrier missed and inputs
//! `merge` refuses); 130 interrupted (Ctrl-C or SIGTERM), after writing
//! what was measured and stopping the servers.

mod ab;
mod args;
mod calibrate;
mod ci;
mod compare;
mod compare_count;
mod count;
mod flamegraph;
mod k8s;
mod load;
mod memory;
mod merge;
mod render;
mod responder;
mod suite;
mod versions;
mod watch;

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

use clap::{Parser, Subcommand};
use common::process::EXIT_USAGE;

pub use self::ab::AbArgs;
pub use self::args::MetricsArgs;
pub use self::calibrate::CalibrateArgs;
pub use self::compare::CompareArgs;
pub use self::count::CountArgs;
pub use self::flamegraph::FlamegraphArgs;
pub use self::k8s::{K8sArgs, K8sCommand, RenderArgs};
pub use self::load::{JOB_COMPLETION_INDEX, LoadArgs, SegmentArg};
pub use self::memory::MemoryArgs;
pub use self::merge::MergeArgs;
pub use self::render::{FrontTable, ReportArgs};
pub use self::responder::ResponderArgs;
pub use self::suite::{PairingChoice, ProfilerChoice, SuiteArgs};
pub use self::versions::VersionsArgs;
pub use self::watch::WatchArgs;
use crate::measure::BarrierError;
use crate::runner;
use crate::sys::ensure_fds_for;

/// HTTP/1.1 and HTTP/2 load generator (closed and open loop), request counter and benchmark suite for the workspace's servers.
///
/// Exit codes: 0 success; 1 a run failed (errors, preflight mismatch, server
/// died); 2 bad input; 130 interrupted.
#[derive(Debug, Parser)]
#[command(version, propagate_version = true, arg_required_else_help = true)]
pub struct Cli {
    /// What to run.
    #[command(subcommand)]
    pub command: Commands,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Commands {
    /// Load one URL and report successful requests per window and latency.
    #[command(after_help = "Examples:\n  bench-client load http://127.0.0.1:8080/plaintext -c 64 -d 10s\n  \
        bench-client load http://127.0.0.1:8080/api/devices -R 20000 --slo 'p99<2ms'   (open loop, judged)\n  \
        bench-client load http://127.0.0.1:8080/api/items -m POST -H 'Content-Type: application/json' \
        --body @item.json --expect-status 201 -n 10000 -d 60s")]
    Load(LoadArgs),
    /// Build, start and measure every framework and scenario, interleaved over rounds.
    #[command(after_help = "Examples:\n  bench-client suite   (what `make bench` runs)\n  \
        bench-client suite --frameworks axum --scenarios blocking --load-percent 25   (latency at a fixed load)")]
    Suite(SuiteArgs),
    /// Did my change make it faster? Build BEFORE and AFTER, run both servers side by side, and
    /// alternate between them in short slices: paired per-route deltas with their 95 % CI.
    ///
    /// Exit codes: 0 no significant regression beyond --threshold-percent; 1 at least one, or a failure.
    #[command(
        after_help = "Examples:\n  bench-client ab --before main --after worktree --frameworks axum --routes /api/devices\n  \
        bench-client ab --before-cmd './old --listen {addr}' --after-cmd './new --listen {addr}' --routes /\n  \
        bench-client ab --before HEAD --after HEAD --aa 3   (what this machine resolves)"
    )]
    Ab(AbArgs),
    /// Profile one server on one route with perf and write its flame graph (SVG).
    #[command(after_help = "Example:\n  bench-client flamegraph --framework axum --route /api/devices")]
    Flamegraph(FlamegraphArgs),
    /// Measure the client's own ceiling against a built-in canned responder pinned like a server.
    #[command(after_help = "Example:\n  bench-client calibrate --server-cpus 0 --client-cpus 1")]
    Calibrate(CalibrateArgs),
    /// What a request costs each framework, counted: instructions, allocations and system calls under callgrind.
    #[command(after_help = "Examples:\n  bench-client count   (what `make count` runs)\n  \
        bench-client count --frameworks axum --routes /state/fat,/state/arc --requests 1000")]
    Count(CountArgs),
    /// What a connection costs each framework in memory: resident memory of a fresh server with
    /// 1 to 4,096 keep-alive connections idle, then busy under load, and what it keeps after.
    ///
    /// Exit codes: 0 every server measured; 1 one died or answered wrongly (what was measured is
    /// written); 2 bad input; 130 stopped.
    #[command(after_help = "Examples:\n  bench-client memory   (what `make memory` runs)\n  \
        bench-client memory --frameworks axum --connections 1,256,1024 --repeats 5")]
    Memory(MemoryArgs),
    /// Did upgrading make it slower: one framework's server built with each release of a crate
    /// (the framework's own, or one it builds on), all counted in one session as `count` counts,
    /// each release against the one before it and the newest.
    ///
    /// Exit codes: 0 no release counts significantly more instructions per request than the one
    /// before it (or than the newest) beyond --threshold-percent; 1 one does, or a failure; 2 bad
    /// input or a release that does not resolve; 130 stopped.
    #[command(after_help = "Examples:\n  bench-client versions --framework axum --releases 0.8.1,0.8.4,0.8.9\n  \
        bench-client versions --framework axum --crate hyper --releases 1.6.0,1.7.0   (what axum builds on)")]
    Versions(VersionsArgs),
    /// A front-page table of a suite's results file: each route's cost per framework, fastest first
    /// (--table floors), or the changes (--table changes), under what and when it was measured.
    #[command(after_help = "Example:\n  bench-client report results/latest --table floors")]
    Report(ReportArgs),
    /// The canned responder `calibrate` starts (internal).
    #[command(hide = true)]
    Responder(ResponderArgs),
    /// Compare two results (files or run folders): per run type, the change from A to B with its 95 % CI;
    /// two `count` sessions: each server and route's counts, B against A.
    ///
    /// Exit codes: 0 no significant regression beyond --threshold-percent; 1 at least one; 2 bad input or
    /// different settings without --force.
    #[command(
        after_help = "Examples:\n  bench-client compare results/20261130T083717Z-release results/latest --threshold-percent 5\n  \
        bench-client compare bench/runs/2026-12-07-frameworks/session-1.results.json.gz results/latest   (a committed session, gzipped)"
    )]
    Compare(CompareArgs),
    /// Merge several clients' `load --json` files of one load (--clients N --segment i) exactly:
    /// counts and windows summed, latency histograms added; optionally the server's CPU from `watch`.
    ///
    /// Exit codes: 0 merged; 1 the merged run failed or is incomplete; 2 unreadable input, or inputs
    /// that are not one load (without --force).
    #[command(
        after_help = "Example:\n  bench-client merge client-0.json client-1.json --server watch.json --json merged.json"
    )]
    Merge(MergeArgs),
    /// Record one process's CPU use per window on this host (the server's, when the clients run
    /// elsewhere), on the clients' planned windows, for `merge --server`.
    #[command(
        after_help = "Example:\n  bench-client watch --pid 4242 --start-at 2026-12-01T12:00:00Z -d 10s --json watch.json"
    )]
    Watch(WatchArgs),
    /// Kubernetes: `k8s render` writes the manifests of one run over several client pods.
    ///
    /// Exit codes: 0 written; 1 a file could not be written; 2 bad flags.
    #[command(
        after_help = "Example:\n  bench-client k8s render --framework axum --clients 4 --connections 256 --image-server registry.example/server-axum:1 --image-client registry.example/bench-client:1"
    )]
    K8s(K8sArgs),
}

/// How a command ended; [`ExitCode::from`] gives the process's exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Exit 0.
    Success,
    /// Exit 1: a run failed or was incomplete, or the command could not start.
    Failed,
    /// Exit 2: bad input (flags, files, settings that cannot be compared).
    Usage,
    /// Exit 130: stopped by Ctrl-C or SIGTERM (as a shell reports SIGINT).
    Interrupted,
}

impl From<Outcome> for ExitCode {
    fn from(outcome: Outcome) -> Self {
        match outcome {
            Outcome::Success => Self::SUCCESS,
            Outcome::Failed => Self::from(1),
            Outcome::Usage => Self::from(EXIT_USAGE),
            Outcome::Interrupted => Self::from(130),
        }
    }
}

/// Parses the process's arguments. `--help` and `--version` print and end
/// with [`Outcome::Success`]; a bad flag prints one line and ends with
/// [`Outcome::Usage`].
///
/// # Errors
/// The outcome to end with when there is nothing to run.
pub fn parse() -> Result<Cli, Outcome> {
    match Cli::try_parse() {
        Ok(cli) => Ok(cli),
        Err(e) if matches!(e.kind(), clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion) => {
            let _ = e.print();
            Err(Outcome::Success)
        }
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            // No command: the command list, as `--help` prints it.
            let _ = e.print();
            Err(Outcome::Usage)
        }
        Err(e) => {
            eprintln!("{}", one_line(&e.render().to_string()));
            Err(Outcome::Usage)
        }
    }
}

/// clap's error as one line, whole: its message with the names and tips
/// under it, then the usage.
fn one_line(text: &str) -> String {
    let mut parts = Vec::new();
    let mut usage = None;
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with("For more information")) {
        match line.strip_prefix("Usage: ") {
            Some(u) => usage = Some(u),
            None => parts.push(line),
        }
    }
    let mut out = parts.join(" ");
    if let Some(u) = usage {
        out.push_str(&format!(" (usage: {u}; --help for more)"));
    }
    out
}

/// Prints `e` as one line and returns `outcome`.
fn report(e: &anyhow::Error, outcome: Outcome) -> Outcome {
    eprintln!("error: {e:#}");
    outcome
}

/// Prints `text` as it is (a file's tables, or the line naming what was
/// written): success; its error as one line: exit 2.
fn print_or_usage(text: anyhow::Result<String>) -> Outcome {
    match text {
        Ok(text) => {
            print!("{text}");
            Outcome::Success
        }
        Err(e) => report(&e, Outcome::Usage),
    }
}

/// Prints the answer of a suite or `ab` session (the terminal's tables)
/// and the paths of the results and report it wrote.
fn print_answer(outcome: &crate::suite::SuiteOutcome) {
    let answer = crate::report::Answer {
        results: &outcome.results,
        other_profiles: &outcome.other_profiles,
        flamegraphs: &outcome.flamegraphs,
    };
    print!("{}", crate::report::terminal_answer(&answer, &outcome.dir));
    println!("results: {}", outcome.dir.join("results.json").display());
    println!("report:  {}", outcome.dir.join("report.md").display());
}

/// The outcome of an error from a run that may have waited at a start
/// barrier: a missed barrier is bad input, Ctrl-C while waiting an
/// interruption, anything else `otherwise`.
fn barrier_or(e: &anyhow::Error, otherwise: Outcome) -> Outcome {
    if e.downcast_ref::<crate::preflight::Error>().is_some_and(crate::preflight::Error::is_not_http2) {
        // HTTP/2 asked of a port that does not speak it: bad input.
        return report(e, Outcome::Usage);
    }
    match e.downcast_ref::<BarrierError>() {
        Some(b) if b.is_interrupted() => report(e, Outcome::Interrupted),
        Some(_) => report(e, Outcome::Usage),
        None => report(e, otherwise),
    }
}

/// The command `bench-client ARGV…` parses into (for the subcommands' tests).
#[cfg(test)]
fn parsed(argv: &[&str]) -> anyhow::Result<Commands> {
    Ok(Cli::try_parse_from(std::iter::once("bench-client").chain(argv.iter().copied()))?.command)
}

/// A checked plan with the open-file limit raised for its `connections`, or
/// the usage outcome that said why not.
fn planned<P>(plan: anyhow::Result<P>, connections: impl FnOnce(&P) -> usize) -> Result<P, Outcome> {
    let plan = plan.map_err(|e| report(&e, Outcome::Usage))?;
    ensure_fds_for(connections(&plan)).map_err(|e| report(&e, Outcome::Usage))?;
    Ok(plan)
}

/// Runs `cli`; `stop` is set by Ctrl-C or SIGTERM. Every error is printed
/// here, once, with its chain.
pub fn run(cli: Cli, stop: &AtomicBool) -> Outcome {
    let interrupted = || stop.load(Ordering::Relaxed);
    // An error while the stop flag is set was caused by the stop (cargo
    // interrupted during the build, a recording cut short).
    let failed = |e: anyhow::Error| report(&e, if interrupted() { Outcome::Interrupted } else { Outcome::Failed });
    match cli.command {
        Commands::Load(args) => match planned(args.plan(), |p| p.settings.connections.get()) {
            Err(outcome) => outcome,
            Ok(plan) => match runner::load(&plan, stop) {
                // Ctrl-C while lingering after a complete run ends it as the run ended.
                Ok(report) if interrupted() && !report.figures.complete => Outcome::Interrupted,
                Ok(report)
                    if report.figures.is_failure()
                        || report.slo.iter().any(|v| !v.met)
                        || report.short_of_requests_asked().is_some() =>
                {
                    Outcome::Failed
                }
                Ok(_) => Outcome::Success,
                // Ctrl-C in preflight (or anything else before the windows).
                Err(e) if interrupted() => report(&e, Outcome::Interrupted),
                Err(e) => barrier_or(&e, Outcome::Failed),
            },
        },
        Commands::Merge(args) => merge::run(&args).unwrap_or_else(failed),
        Commands::K8s(args) => k8s::dispatch(args),
        Commands::Watch(args) => match args.plan() {
            Ok(plan) => match runner::watch(&plan, stop) {
                Ok(_) if interrupted() => Outcome::Interrupted,
                Ok(report) if report.complete => Outcome::Success,
                Ok(_) => Outcome::Failed,
                Err(e) => barrier_or(&e, Outcome::Failed),
            },
            Err(e) => report(&e, Outcome::Usage),
        },
        Commands::Flamegraph(args) => match args.plan() {
            Ok(plan) => flamegraph::run(&plan, stop).map_or_else(failed, |()| Outcome::Success),
            Err(e) => report(&e, Outcome::Usage),
        },
        Commands::Report(args) => render::run(&args),
        Commands::Count(CountArgs { from: Some(path), chart, .. }) => count::render(&path, chart.as_deref()),
        Commands::Count(args) => match args.checked_ci().and_then(|ci| Ok((args.plan()?, ci))) {
            Ok((plan, ci)) => count::run(&plan, &ci, stop),
            Err(e) => report(&e, Outcome::Usage),
        },
        Commands::Memory(MemoryArgs { from: Some(path), chart, .. }) => memory::render(&path, chart.as_deref()),
        Commands::Versions(args) => match args.checked_ci().and_then(|ci| Ok((args.plan()?, ci))) {
            Ok((plan, ci)) => versions::run(&plan, &ci, stop),
            Err(e) => report(&e, Outcome::Usage),
        },
        Commands::Memory(args) => match args.plan() {
            Ok(plan) => memory::run(&plan, stop),
            Err(e) => report(&e, Outcome::Usage),
        },
        Commands::Calibrate(args) => match planned(args.plan(), |plan| plan.settings.connections.get()) {
            Ok(plan) => calibrate::run(&plan, stop).unwrap_or_else(|e| report(&e, Outcome::Failed)),
            Err(outcome) => outcome,
        },
        Commands::Responder(args) => {
            if let Err(e) = ensure_fds_for(4096) {
                eprintln!("warning: {e:#}");
            }
            match crate::calibrate::serve(args.addr, stop) {
                Ok(()) => Outcome::Success,
                Err(e) => report(&e, Outcome::Usage),
            }
        }
        Commands::Ab(args) => match planned(args.checked_ci().and_then(|ci| Ok((args.plan()?, ci))), |(plan, _)| {
            plan.base.settings.connections.get() * 2
        }) {
            Ok((plan, ci)) => {
                ab::run(&plan, &ci, stop).unwrap_or_else(|e| match e.downcast_ref::<crate::suite::ab::Refused>() {
                    // Refused by Ctrl-C is an interruption (`failed` says so).
                    Some(_) if !interrupted() => report(&e, Outcome::Usage),
                    _ => failed(e),
                })
            }
            Err(outcome) => outcome,
        },
        Commands::Compare(args) => compare::run(&args).unwrap_or_else(|e| report(&e, Outcome::Usage)),
        Commands::Suite(args) => match planned(args.checked_ci().and_then(|ci| Ok((args.plan()?, ci))), |(plan, _)| {
            plan.settings.connections.get()
        }) {
            Ok((plan, ci)) => suite::run(&plan, &ci, stop).unwrap_or_else(failed),
            Err(outcome) => outcome,
        },
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    #[test]
    fn cli_is_consistent() {
        Cli::command().debug_assert();
    }

    /// `text` split into words as a POSIX shell splits them, with single quotes only.
    fn words(text: &str) -> Vec<String> {
        let (mut out, mut word, mut quoted, mut any) = (Vec::new(), String::new(), false, false);
        for c in text.chars() {
            match c {
                '\'' => (quoted, any) = (!quoted, true),
                ' ' if !quoted => {
                    if any {
                        out.push(std::mem::take(&mut word));
                    }
                    any = false;
                }
                c => (word, any) = (word + &c.to_string(), true),
            }
        }
        if any {
            out.push(word);
        }
        out
    }

    #[test]
    fn every_subcommand_has_an_example_and_every_example_parses() {
        let cli = Cli::command();
        for sub in cli.get_subcommands().filter(|s| !s.is_hide_set()) {
            let help = sub.get_after_help().map(ToString::to_string).unwrap_or_default();
            let examples: Vec<&str> = help.lines().filter_map(|l| l.trim().strip_prefix("bench-client ")).collect();
            assert!(!examples.is_empty(), "{}: no example in its help", sub.get_name());
            for example in examples {
                let command = example.split("   (").next().unwrap_or(example);
                let argv = [vec!["bench-client".to_owned()], words(command)].concat();
                if let Err(e) = Cli::try_parse_from(&argv) {
                    panic!("{}: the example `{command}` does not parse: {e}", sub.get_name());
                }
            }
        }
        for (command, groups) in [
            ("load", &["Load", "Target and checks", "Output", "Several clients"][..]),
            ("suite", &["What to measure", "Timing and load", "Profiling", "CI and gates", "Servers, CPUs and output"]),
            (
                "ab",
                &["The two sides", "What to measure", "Timing and load", "CI and gates", "Servers, CPUs and output"],
            ),
        ] {
            let sub = cli.find_subcommand(command).unwrap();
            let headings: Vec<&str> = sub.get_arguments().filter_map(|a| a.get_help_heading()).collect();
            for heading in groups {
                assert!(headings.contains(heading), "{command}'s help groups its flags under {heading}: {headings:?}");
            }
            let ungrouped: Vec<_> =
                sub.get_arguments().filter(|a| a.get_help_heading().is_none() && !a.is_positional()).collect();
            assert!(
                ungrouped.iter().all(|a| ["help", "version"].contains(&a.get_id().as_str())),
                "{command}: flags outside a group: {:?}",
                ungrouped.iter().map(|a| a.get_id()).collect::<Vec<_>>()
            );
        }
    }

    #[test]
    fn clap_errors_are_one_whole_line_with_names_tips_and_usage() {
        let err = |argv: &[&str]| one_line(&Cli::try_parse_from(argv).unwrap_err().render().to_string());
        let missing = err(&["bench-client", "load"]);
        assert!(missing.starts_with("error: the following required arguments were not provided: <URL>"), "{missing}");
        assert!(missing.ends_with("(usage: bench-client load <URL>; --help for more)"), "{missing}");
        let typo = err(&["bench-client", "load", "http://127.0.0.1:1/", "--conections", "4"]);
        assert!(typo.contains("tip: a similar argument exists: '--connections'"), "{typo}");
        assert!(!missing.contains('\n') && !typo.contains('\n'));
        let none = Cli::try_parse_from(["bench-client"]).unwrap_err();
        assert_eq!(none.kind(), clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand);
        assert!(none.render().to_string().contains("load"), "the command list");
    }

    #[test]
    fn the_common_load_flags_have_wrk_and_oha_short_forms() {
        let Commands::Load(args) =
            parsed(&["load", "http://127.0.0.1:1/", "-c", "8", "-d", "3s", "-t", "2", "-R", "100"]).unwrap()
        else {
            unreachable!()
        };
        assert_eq!((args.connections, args.timing.duration, args.threads), (8, std::time::Duration::from_secs(3), 2));
        assert!(args.rate_per_s.is_some());
    }

    #[test]
    fn outcomes_map_to_the_documented_exit_codes() {
        for (outcome, code) in
            [(Outcome::Success, 0u8), (Outcome::Failed, 1), (Outcome::Usage, 2), (Outcome::Interrupted, 130)]
        {
            assert_eq!(ExitCode::from(outcome), ExitCode::from(code), "{outcome:?}");
        }
    }
}
