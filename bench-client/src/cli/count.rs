//! `bench-client count`: what a request costs each framework on each route,
//! in instructions and allocations, counted under callgrind (`make count`).

use std::sync::atomic::AtomicBool;

use anyhow::{Context, ensure};
use clap::Args;

use super::Outcome;
use super::ab::DEFAULT_ROUTES;
use super::args::ServedArgs;
use crate::model::{Framework, Profile};
use crate::report;
use crate::suite::{self, CountPlan};

/// Flags of `count`, as typed.
#[derive(Debug, Args)]
pub struct CountArgs {
    /// Frameworks to count, comma-separated.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "actix,axum,rocket")]
    pub frameworks: Vec<Framework>,
    /// Routes to count, comma-separated paths of the route table (default: /plaintext, the devices
    /// and the state routes).
    #[arg(long, value_delimiter = ',')]
    pub routes: Option<Vec<String>>,
    /// Cargo profile to build and count.
    #[arg(long, value_enum, default_value_t = Profile::Release)]
    pub profile: Profile,
    /// Requests of the short stretch; the long one has twice as many, and the difference over this
    /// many is one request's cost.
    #[arg(long, default_value_t = 500, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub requests: u64,
    /// Repeats of every stretch, interleaved over the routes: their spread is the count's own noise.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(2..=1000))]
    pub repeats: u64,
    /// State layers (server --layers).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u16).range(0..=1000))]
    pub layers: u16,
    /// Where the servers run, where the folder goes, whether to build.
    #[command(flatten)]
    pub served: ServedArgs,
}

impl CountArgs {
    /// Checks the flags into a [`CountPlan`].
    ///
    /// # Errors
    /// A route outside the route table (or /healthz); CPUs this process may not use.
    pub fn plan(self) -> anyhow::Result<CountPlan> {
        let paths: Vec<String> =
            self.routes.unwrap_or_else(|| DEFAULT_ROUTES.iter().map(|p| (*p).to_owned()).collect());
        let mut routes = Vec::new();
        for path in &paths {
            let route = common::Route::by_path(path)
                .filter(|r| r.path != common::RouteId::Healthz.path())
                .with_context(|| format!("--routes {path} is not a route of the table"))?;
            if !routes.contains(&route) {
                routes.push(route);
            }
        }
        ensure!(!self.frameworks.is_empty(), "--frameworks names no framework");
        self.served.cpus.check()?;
        let mut frameworks = Vec::new();
        for f in self.frameworks {
            if !frameworks.contains(&f) {
                frameworks.push(f);
            }
        }
        Ok(CountPlan {
            profile: self.profile,
            frameworks,
            routes,
            requests: self.requests,
            repeats: usize::try_from(self.repeats).unwrap_or(usize::MAX),
            layers: self.layers,
            server_cpus: self.served.cpus.server_cpus,
            build: !self.served.no_build,
            out: self.served.out.out,
        })
    }
}

/// Checks the tools, counts, prints the table and where the file went.
pub(super) fn run(plan: &CountPlan, stop: &AtomicBool) -> Outcome {
    if let Err(e) = suite::check_tools() {
        return super::report(&e, Outcome::Usage);
    }
    match suite::count(plan, stop) {
        Ok(outcome) => {
            println!("{}", report::count_table(&outcome.report));
            println!("count: {}", outcome.file.display());
            Outcome::Success
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
        assert_eq!((plan.requests, plan.repeats, plan.build), (500, 3, true));
        let Commands::Count(args) = parsed(&["count", "--routes", "/nope"]).unwrap() else { panic!("count") };
        assert!(args.plan().unwrap_err().to_string().contains("--routes /nope is not a route of the table"));
        assert!(parsed(&["count", "--repeats", "1"]).is_err(), "one repeat has no interval");
    }
}
