//! `bench-client suite`: the whole benchmark, then its tables on stdout.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::Context as _;
use clap::{Args, ValueEnum};

use super::Outcome;
use super::args::{
    FrameworksArg, PerfArgs, ServedArgs, dedup, duration, load_percent, nonzero, on_off, percent, positive_duration,
    slice, sliced_timing, timeout, timing,
};
use super::ci::{CiArgs, CiPlan};
use crate::engine::LoadSettings;
use crate::model::{Pairing, Profile, Scenario};
use crate::report;
use crate::suite::{self, COUNT_REPEATS, COUNT_REQUESTS, CountSettings, PrecisionTarget, SuitePlan};

/// A `--scenarios` value: a timed scenario, or `memory` (measured apart,
/// after the timed rounds, with no variants to pair).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScenarioArg {
    /// A scenario of timed variants.
    Timed(Scenario),
    /// What a connection costs in memory.
    Memory,
}

/// Every [`ScenarioArg`]: the timed scenarios as [`Scenario`] lists them, then `memory`.
static SCENARIO_ARGS: std::sync::LazyLock<Vec<ScenarioArg>> = std::sync::LazyLock::new(|| {
    Scenario::value_variants().iter().copied().map(ScenarioArg::Timed).chain([ScenarioArg::Memory]).collect()
});

impl ValueEnum for ScenarioArg {
    fn value_variants<'a>() -> &'a [Self] {
        &SCENARIO_ARGS
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        match self {
            Self::Timed(scenario) => scenario.to_possible_value(),
            Self::Memory => Some(clap::builder::PossibleValue::new("memory")),
        }
    }
}

/// Flags of `suite`, as typed.
#[derive(Debug, Args)]
pub struct SuiteArgs {
    /// Files for CI.
    #[command(flatten, next_help_heading = "CI and gates")]
    pub ci: CiArgs,
    /// With --junit: a delta significantly slower beyond this many percent fails its test case.
    #[arg(help_heading = "CI and gates", long = "threshold-percent", default_value = "2", value_parser = percent)]
    pub threshold: f64,
    /// Cargo profile to build and measure.
    #[arg(help_heading = "What to measure", long, value_enum, default_value_t = Profile::Release)]
    pub profile: Profile,
    /// The frameworks.
    #[command(flatten)]
    pub frameworks: FrameworksArg,
    /// Scenarios to measure, comma-separated (`fortunes`, the request that does real work, is not in the
    /// default: it adds about a quarter to the suite's time; `frameworks` sets the frameworks head to
    /// head, every framework's server loaded in turn in the same run, and adds /fortunes when asked).
    /// `memory` measures, after the timed rounds, what a connection costs each framework in memory
    /// (as `memory` does with its defaults, valgrind needed; about 2 minutes per framework).
    #[arg(
        help_heading = "What to measure",
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "payload,state,frameworks"
    )]
    pub scenarios: Vec<ScenarioArg>,
    /// The `frameworks` scenario (always in the closed loop; left out with one framework): two
    /// frameworks tie when the 95 % interval of their ratio lies
    /// within this margin of 1 (inside [1/(1 + m), 1 + m]: two one-sided tests at 2.5 % each).
    #[arg(help_heading = "What to measure", long, default_value_t = crate::results::TIE_MARGIN_PERCENT, value_parser = positive_percent)]
    pub tie_margin_percent: f64,
    /// Each variant's own measured time per round, e.g. 3s: with --pairing slices, the sum of its
    /// slices (whole blocks of them); with --pairing rounds, its run (a whole number of windows).
    #[arg(help_heading = "Timing and load", long, default_value = "3s", value_parser = positive_duration, allow_hyphen_values = true)]
    pub duration: Duration,
    /// Discarded warm-up before each run, e.g. 1s.
    #[arg(help_heading = "Timing and load", long, default_value = "1s", value_parser = duration, allow_hyphen_values = true)]
    pub warmup: Duration,
    /// Length of one counting window.
    #[arg(help_heading = "Timing and load", long, default_value = "1s", value_parser = positive_duration, allow_hyphen_values = true)]
    pub window: Duration,
    /// Rounds; each runs every scenario's variants, order alternating.
    #[arg(help_heading = "Timing and load", long, default_value_t = 6, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub rounds: u32,
    /// Keep-alive connections per run.
    #[arg(help_heading = "Timing and load", long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub connections: u32,
    /// State layers in front of the /state routes (server --layers); a comma-separated list
    /// (e.g. 0,1,5,10,20) sweeps them, restarting each server per layer count.
    #[arg(help_heading = "What to measure", long, value_delimiter = ',', default_value = "10", value_parser = clap::value_parser!(u16).range(0..=1000))]
    pub layers: Vec<u16>,
    /// Per-request timeout.
    #[arg(help_heading = "Timing and load", long, default_value = "2s", value_parser = timeout, allow_hyphen_values = true)]
    pub timeout: Duration,
    /// CPUs, run folders, building.
    #[command(flatten, next_help_heading = "Servers, CPUs and output")]
    pub served: ServedArgs,
    /// Sampling profiler attached to each server during the measured windows
    /// (auto: perf in the profiling profile, none otherwise).
    #[arg(help_heading = "Profiling", long, value_enum, default_value_t = ProfilerChoice::Auto)]
    pub profiler: ProfilerChoice,
    /// How the profiler samples.
    #[command(flatten, next_help_heading = "Profiling")]
    pub perf: PerfArgs,
    /// How a scenario's variants are paired: slices (alternating on the same connections within one
    /// run, many pairs per round; with a profiler, each sample goes to the route of its slice), rounds
    /// (one run per variant, one pair per round), or auto (slices).
    #[arg(help_heading = "Timing and load", long, value_enum, default_value_t = PairingChoice::Auto)]
    pub pairing: PairingChoice,
    /// Measure until every delta's 95 % interval is at most this many percentage points on each side
    /// (e.g. 0.5), or --budget is spent; --rounds is then ignored.
    #[arg(help_heading = "Timing and load", long = "target-ci-points", visible_alias = "target-ci", value_parser = positive_percent)]
    pub target_ci: Option<f64>,
    /// Wall time the measurements may take with --target-ci-points, shared by the frameworks, e.g. 15m.
    #[arg(help_heading = "Timing and load", long, default_value = "15m", value_parser = positive_duration, requires = "target_ci")]
    pub budget: Duration,
    /// Length of one slice with pairing by slices, e.g. 250ms.
    #[arg(help_heading = "Timing and load", long = "slice", default_value = "250ms", value_parser = slice, allow_hyphen_values = true)]
    pub slice: Duration,
    /// Keep one server process per framework for the whole session instead of a new one every
    /// round: the former method, whose intervals leave out the process-to-process spread; kept to
    /// measure against (docs/METHODOLOGY.md).
    #[arg(help_heading = "Timing and load", long)]
    pub keep_server: bool,
    /// Latency at a fixed load: each round measures the baseline's closed-loop rate, then alternates
    /// the variants in the open loop at this percentage of it, and every delta gets the change of
    /// p50, p90, p99 and p99.9 with its interval (docs/METHODOLOGY.md), e.g. 50.
    #[arg(help_heading = "Timing and load", long, value_parser = load_percent)]
    pub load_percent: Option<f64>,
    /// Close each connection after this many responses and open it again (churn): with the `tls`
    /// scenario, the cost of a handshake (full or resumed: --tls-resumption) per connection.
    #[arg(help_heading = "Timing and load", long, value_parser = clap::value_parser!(u32).range(1..=1_000_000_000))]
    pub requests_per_connection: Option<u32>,
    /// The `tls` scenario: resume TLS sessions on new connections (on|off).
    #[arg(help_heading = "Timing and load", long, value_name = "on|off", default_value = "on", value_parser = on_off, action = clap::ArgAction::Set)]
    pub tls_resumption: bool,
    /// Start the servers with --tcp-nodelay (TCP_NODELAY on every connection; actix-web and axum
    /// leave Nagle's algorithm on by default, which with a new TLS connection per request holds
    /// each response for the client's delayed ACK).
    #[arg(help_heading = "Servers, CPUs and output", long)]
    pub tcp_nodelay: bool,
    /// After the timed rounds, count every delta's two routes in each framework (instructions,
    /// allocations, bytes, system calls per request, as `count` does: under callgrind, memcheck
    /// and perf) and show each delta's counted change beside its timed one. Needs valgrind and
    /// perf (or --no-perf); adds about 15 s per route counted.
    #[arg(help_heading = "Counted, not timed", long)]
    pub count: bool,
    /// With --count: without perf (no system calls, context switches or page faults of the
    /// native process).
    #[arg(help_heading = "Counted, not timed", long, requires = "count")]
    pub no_perf: bool,
    /// With --count: the most requests of a route's short stretch, as `count --requests`.
    #[arg(help_heading = "Counted, not timed", long, requires = "count", default_value_t = COUNT_REQUESTS,
          value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub count_requests: u64,
    /// With --count: repeats of every route's two stretches, as `count --repeats`.
    #[arg(help_heading = "Counted, not timed", long, requires = "count", default_value_t = COUNT_REPEATS as u64,
          value_parser = clap::value_parser!(u64).range(2..=1000))]
    pub count_repeats: u64,
}

/// How to pair variants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PairingChoice {
    /// Slices.
    Auto,
    /// Alternating slices within one run per scenario and round.
    Slices,
    /// One run per variant.
    Rounds,
}

/// Whether to attach a profiler.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProfilerChoice {
    /// `perf` in the `profiling` profile, none otherwise.
    Auto,
    /// `perf record -e cpu-clock` (skipped, with a note, when it is missing or may not record).
    Perf,
    /// No profiler.
    None,
}

fn positive_percent(text: &str) -> Result<f64, String> {
    match percent(text)? {
        p if p > 0.0 => Ok(p),
        _ => Err(format!("'{text}' must be above zero")),
    }
}

impl SuiteArgs {
    /// The CI files asked for, checked.
    ///
    /// # Errors
    /// A CI file that cannot be written where asked.
    pub fn checked_ci(&self) -> anyhow::Result<CiPlan> {
        CiPlan::new(&self.ci, self.threshold)
    }

    /// Checks the flags into a [`SuitePlan`].
    ///
    /// # Errors
    /// A duration that is not a whole number of windows; CPUs this process may
    /// not use.
    pub fn plan(self) -> anyhow::Result<SuitePlan> {
        let timing = timing(self.warmup, self.duration, self.window)?;
        self.served.cpus.check()?;
        let mut layers = self.layers;
        layers.sort_unstable();
        layers.dedup();
        let profiler = match self.profiler {
            ProfilerChoice::Auto => self.profile == crate::model::Profile::Profiling,
            ProfilerChoice::Perf => true,
            ProfilerChoice::None => false,
        };
        let sampling = self.perf.sampling(self.profile);
        let pairing = match self.pairing {
            PairingChoice::Auto | PairingChoice::Slices => Pairing::Slices,
            PairingChoice::Rounds => Pairing::Rounds,
        };
        if self.load_percent.is_some() && pairing != Pairing::Slices {
            anyhow::bail!("--load-percent alternates the variants in slices: it cannot be used with pairing by rounds");
        }
        let frameworks = dedup(self.frameworks.frameworks);
        let memory = self.scenarios.contains(&ScenarioArg::Memory);
        let timed = self.scenarios.iter().filter_map(|s| match s {
            ScenarioArg::Timed(scenario) => Some(*scenario),
            ScenarioArg::Memory => None,
        });
        let mut scenarios = dedup(timed.collect());
        if self.load_percent.is_some() && scenarios.contains(&Scenario::Middleware) {
            anyhow::bail!(
                "--load-percent offers every variant a share of the bare server's rate, which a layer that costs \
                 17 times as much cannot serve: leave the middleware scenario out of it"
            );
        }
        if memory {
            let most = *suite::MEMORY_CONNECTIONS.last().expect("counts");
            crate::sys::ensure_fds_for(2 * most)
                .with_context(|| format!("the memory scenario holds {most} connections, two descriptors each here"))?;
        }
        if frameworks.len() < 2 && scenarios.contains(&Scenario::Frameworks) {
            // Head to head needs two: with one framework, the other scenarios are measured alone.
            scenarios.retain(|s| *s != Scenario::Frameworks);
            anyhow::ensure!(
                !scenarios.is_empty() || memory,
                "the frameworks scenario sets frameworks head to head: give --frameworks two or more"
            );
        }
        let head_to_head = scenarios.contains(&Scenario::Frameworks);
        if pairing == Pairing::Slices || head_to_head {
            let mut variants = scenarios.iter().map(|s| s.variants().len()).max().unwrap_or(1);
            if head_to_head {
                variants = variants.max(frameworks.len());
            }
            sliced_timing(self.warmup, self.duration, self.slice, variants)?;
        }
        Ok(SuitePlan {
            profile: self.profile,
            frameworks,
            scenarios,
            settings: LoadSettings {
                requests_per_connection: self.requests_per_connection.map(nonzero),
                ..LoadSettings::closed(
                    nonzero(self.connections),
                    self.served.cpus.client_threads(),
                    timing,
                    self.timeout,
                )
            },
            tls_resumption: self.tls_resumption,
            tcp_nodelay: self.tcp_nodelay,
            rounds: self.rounds,
            layers,
            server_cpus: self.served.cpus.server_cpus,
            client_cpus: self.served.cpus.client_cpus,
            out: self.served.out.checked()?,
            build: !self.served.no_build,
            profiler: profiler.then_some(sampling),
            count: self.count.then_some(CountSettings {
                requests: self.count_requests,
                repeats: usize::try_from(self.count_repeats).unwrap_or(usize::MAX),
                perf: !self.no_perf,
            }),
            memory,
            pairing,
            slice: self.slice,
            server_per_round: !self.keep_server,
            load_percent: self.load_percent,
            threshold_percent: self.threshold,
            tie_margin_percent: self.tie_margin_percent,
            target: self
                .target_ci
                .map(|half_width_percent| PrecisionTarget { half_width_percent, budget: self.budget }),
        })
    }
}

/// Runs the suite and prints its tables and the paths it wrote.
///
/// # Errors
/// See [`suite::run`].
pub(super) fn run(plan: &SuitePlan, ci: &CiPlan, stop: &AtomicBool) -> anyhow::Result<Outcome> {
    // Before anything is built or timed: the tools the count and the memory scenario need.
    let tools = match plan.count {
        Some(count) => suite::check_tools(count.perf),
        None => Ok(()),
    };
    let tools = tools.and_then(|()| match plan.memory {
        true => suite::check_valgrind("the memory scenario counts each server's live heap under memcheck"),
        false => Ok(()),
    });
    if let Err(e) = tools {
        return Ok(super::report(&e, Outcome::Usage));
    }
    let outcome = suite::run(plan, stop)?;
    super::print_answer(&outcome);
    ci.write("suite", &report::ci::tracked(&outcome.results), &report::ci::judged_deltas(&outcome.results))?;
    Ok(if outcome.interrupted {
        eprintln!("interrupted: partial results written");
        Outcome::Interrupted
    } else if outcome.clean() {
        Outcome::Success
    } else {
        Outcome::Failed
    })
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::super::{Cli, Commands};
    use super::*;
    use crate::model::Framework;

    fn plan(argv: &[&str]) -> SuitePlan {
        let cli = Cli::try_parse_from([&["b", "suite"][..], argv].concat()).unwrap();
        let Commands::Suite(args) = cli.command else { unreachable!() };
        args.plan().unwrap()
    }

    #[test]
    fn suite_plan_deduplicates_and_sizes_threads_by_client_cpus() {
        let p = plan(&["--frameworks", "axum,axum,actix", "--client-cpus", "0"]);
        assert_eq!(p.frameworks, [Framework::Axum, Framework::Actix]);
        assert_eq!(p.settings.threads.get(), 1);
        assert_eq!(p.rounds, 6);
        assert_eq!(p.layers, [10]);
        assert_eq!(plan(&["--layers", "20,0,5,5", "--client-cpus", "0"]).layers, [0, 5, 20]);
        assert!(Cli::try_parse_from(["b", "suite", "--layers", "1,x"]).is_err());
        assert_eq!(p.pairing, Pairing::Slices);
        assert_eq!(
            plan(&["--profile", "profiling", "--client-cpus", "0"]).pairing,
            Pairing::Slices,
            "perf's samples go to their slices"
        );
        assert_eq!(plan(&["--pairing", "rounds", "--client-cpus", "0"]).pairing, Pairing::Rounds);
        assert!(
            Cli::try_parse_from(["b", "suite", "--scenarios", "floor"]).is_err(),
            "floor is not a scenario to ask for"
        );
        assert_eq!(p.scenarios, [Scenario::Payload, Scenario::State, Scenario::Frameworks]);
        assert!((p.tie_margin_percent - 5.0).abs() < f64::EPSILON);
    }

    #[test]
    fn the_frameworks_scenario_needs_two_frameworks() {
        let args = |argv: &[&str]| {
            let cli = Cli::try_parse_from([&["b", "suite", "--client-cpus", "0"][..], argv].concat()).unwrap();
            let Commands::Suite(args) = cli.command else { unreachable!() };
            args.plan().map_err(|e| e.to_string())
        };
        let one = args(&["--frameworks", "axum", "--scenarios", "frameworks"]).unwrap_err();
        assert!(one.contains("give --frameworks two or more"), "{one}");
        let alone = args(&["--frameworks", "axum"]).unwrap();
        assert_eq!(alone.scenarios, [Scenario::Payload, Scenario::State], "one framework: the others alone");
        assert!(
            args(&["--scenarios", "frameworks", "--load-percent", "50"]).is_ok(),
            "head to head in the closed loop"
        );
        let layers = args(&["--scenarios", "middleware", "--load-percent", "50"]).unwrap_err();
        assert!(layers.contains("leave the middleware scenario out"), "{layers}");
        let p = args(&["--scenarios", "frameworks", "--tie-margin-percent", "3"]).unwrap();
        assert_eq!(p.scenarios, [Scenario::Frameworks]);
        assert!((p.tie_margin_percent - 3.0).abs() < f64::EPSILON);
    }

    #[test]
    fn memory_is_a_scenario_to_ask_for_measured_apart_from_the_timed_ones() {
        let p = plan(&["--scenarios", "state,memory,state", "--client-cpus", "0"]);
        assert_eq!((p.scenarios.as_slice(), p.memory), ([Scenario::State].as_slice(), true));
        let alone = plan(&["--scenarios", "memory", "--frameworks", "axum", "--client-cpus", "0"]);
        assert_eq!((alone.scenarios.len(), alone.memory), (0, true), "memory alone times nothing");
        assert!(!plan(&["--client-cpus", "0"]).memory, "not in the default");
        let help: Vec<String> = ScenarioArg::value_variants()
            .iter()
            .filter_map(|v| Some(v.to_possible_value()?.get_name().to_owned()))
            .collect();
        assert_eq!(
            help,
            [
                "payload",
                "state",
                "fortunes",
                "blocking",
                "tls",
                "http2",
                "frameworks",
                "middleware",
                "extractors",
                "routes",
                "memory"
            ]
        );
    }
}
