//! `bench-client versions` (`make versions`): one framework's per-request
//! counts over releases of a crate it builds on, in one session.

use std::sync::atomic::AtomicBool;

use clap::Args;

use super::Outcome;
use super::args::ServedArgs;
use super::ci::{CiArgs, CiPlan};
use super::count::CountingArgs;
use crate::model::Framework;
use crate::suite::versions::{VersionsPlan, framework_crate};

/// Flags of `versions`, as typed.
#[derive(Debug, Args)]
pub struct VersionsArgs {
    /// The framework whose server is built with each release.
    #[arg(long, value_enum)]
    pub framework: Framework,
    /// The crate whose releases are swept (default: the framework's own, actix-web, axum or
    /// rocket; or one it builds on, such as hyper or tokio); several, comma-separated, when they
    /// are released together, each pinned to the release in the order given
    /// (rocket,rocket_codegen,rocket_http).
    #[arg(long = "crate", value_name = "NAME", value_delimiter = ',')]
    pub crates: Vec<String>,
    /// Its releases, oldest first, comma-separated (two or more, within what the workspace's
    /// manifests accept), e.g. 0.8.1,0.8.4,0.8.9.
    #[arg(long, value_delimiter = ',', required = true)]
    pub releases: Vec<String>,
    /// What is counted and how (as `count`'s flags).
    #[command(flatten)]
    pub counting: CountingArgs,
    /// An increase of instructions per request beyond this many percent from one release to the
    /// next (or to the newest), with an interval wholly above zero, exits 1 (at 0, a change of
    /// 0.05 % that the repeats resolve does).
    #[arg(long, default_value = "1", value_parser = super::args::percent)]
    pub threshold_percent: f64,
    /// CPUs, run folders, building.
    #[command(flatten, next_help_heading = "Servers, CPUs and output")]
    pub served: ServedArgs,
    /// Files for CI.
    #[command(flatten, next_help_heading = "CI and gates")]
    pub ci: CiArgs,
}

impl VersionsArgs {
    /// The CI files asked for, checked.
    ///
    /// # Errors
    /// A CI file that cannot be written where asked.
    pub fn checked_ci(&self) -> anyhow::Result<CiPlan> {
        CiPlan::new(&self.ci, self.threshold_percent)
    }

    /// The checked plan.
    ///
    /// # Errors
    /// A route outside the route table, fewer than two releases, a release that is not a version.
    pub fn plan(self) -> anyhow::Result<VersionsPlan> {
        let mut count = self.counting.plan(&self.served, self.threshold_percent)?;
        count.build = false;
        let crates =
            if self.crates.is_empty() { vec![framework_crate(self.framework).to_owned()] } else { self.crates };
        VersionsPlan::new(self.framework, crates, self.releases, count, !self.served.no_build)
    }
}

/// Builds every release, then counts them as `count` does (its table, its
/// file, its CI files and gate). A release that does not resolve is one
/// line, exit 2, before anything is counted (the releases before it built).
pub(super) fn run(plan: &VersionsPlan, ci: &CiPlan, stop: &AtomicBool) -> Outcome {
    if let Err(e) = crate::suite::check_tools(plan.count.perf) {
        return super::report(&e, Outcome::Usage);
    }
    match plan.count_plan() {
        Ok(counted) => {
            println!(
                "{} built with {} {}, each counted against the release before it and the newest",
                plan.framework.name(),
                plan.crates.join(", "),
                plan.releases.join(", ")
            );
            super::count::run(&counted, ci, stop)
        }
        // A cargo stopped by Ctrl-C did not refuse the release.
        Err(e) if stop.load(std::sync::atomic::Ordering::Relaxed) => super::report(&e, Outcome::Interrupted),
        Err(e) if e.downcast_ref::<crate::suite::ab::Refused>().is_some() => super::report(&e, Outcome::Usage),
        Err(e) => super::report(&e, Outcome::Failed),
    }
}

#[cfg(test)]
mod tests {
    /// Each committed sweep renders in its README as `count --from` prints
    /// it, and every change its prose quotes is one of its tables'.
    #[test]
    fn the_committed_sweeps_render_in_their_readmes_and_every_change_said_is_their_tables() {
        let runs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench/runs");
        for framework in ["axum", "actix", "rocket", "axum-hyper"] {
            let run = runs.join(format!("2026-12-06-versions-{framework}"));
            let readme = std::fs::read_to_string(run.join("README.md")).unwrap();
            let mut tables = super::super::count::rendered(&run.join("count.json")).unwrap();
            assert!(readme.contains(tables.trim()), "{framework}: the run's tables differ from:\n{tables}");
            if let Ok(aa) = super::super::count::rendered(&run.join("aa.count.json")) {
                tables.push_str(&aa);
            }
            let prose = readme.split("```").next().unwrap().split_whitespace().collect::<Vec<_>>().join(" ");
            assert!(prose.matches(" % [").count() >= 2, "{framework}: changes quoted: {prose}");
            for (at, _) in prose.match_indices(" % [") {
                let start = prose[..at].rfind(' ').map_or(0, |s| s + 1);
                let end = at + prose[at..].find(']').unwrap() + 1;
                let change = &prose[start..end];
                assert!(tables.contains(change), "{framework}: not a change of its tables: {change}");
            }
            let svg = std::env::temp_dir().join(format!("versions-{framework}-{}.svg", std::process::id()));
            let counted = crate::results::read_count(&run.join("count.json")).unwrap();
            assert!(crate::report::charts::draw_versions(&svg, &counted).unwrap());
            let drawn = std::fs::read_to_string(&svg).unwrap();
            let _ = std::fs::remove_file(&svg);
            assert_eq!(drawn, std::fs::read_to_string(run.join("versions.svg")).unwrap(), "{framework}: redrawn");
        }
        // Rocket 0.5.2's cost, from its callgrind file: the difference per request and its two calls.
        let run = runs.join("2026-12-06-versions-rocket");
        let readme =
            std::fs::read_to_string(run.join("README.md")).unwrap().split_whitespace().collect::<Vec<_>>().join(" ");
        let callers = std::fs::read_to_string(run.join("hash-callers.txt")).unwrap();
        let numbers = |needle: &str| -> Vec<(u64, u64)> {
            let of = |s: &str| s.trim().split(' ').next().unwrap().replace(',', "").parse::<u64>().unwrap();
            let calls = |l: &str| {
                l.rsplit('(').next().unwrap().trim_end_matches("x)").replace(',', "").parse::<u64>().unwrap_or(0)
            };
            callers.lines().filter(|l| l.contains(needle)).map(|l| (of(l), calls(l))).collect()
        };
        let (totals, inserts, gets) =
            (numbers("PROGRAM TOTALS"), numbers("insert_full"), numbers("IndexMap<K,V,S>::get"));
        let per = |pair: &[(u64, u64)]| (pair[1].0 - pair[0].0) as f64 / 20_000.0;
        let thousands = |n: f64| format!("{},{:03}", n.round() as u64 / 1000, n.round() as u64 % 1000);
        assert!(
            readme.contains(&format!("runs {} more instructions per request", thousands(per(&totals)))),
            "{readme}"
        );
        assert!(readme.contains(&format!("{} of them in two more", thousands(per(&inserts) + per(&gets)))), "{readme}");
        let calls = |pair: &[(u64, u64)]| {
            format!(
                "{},{:03} against {},{:03} calls",
                pair[1].1 / 1000,
                pair[1].1 % 1000,
                pair[0].1 / 1000,
                pair[0].1 % 1000
            )
        };
        assert!(readme.contains(&format!("({})", calls(&inserts))), "{readme}");
        assert!(readme.contains(&format!("({}", calls(&gets).trim_end_matches(" calls"))), "{readme}");
        let findings = std::fs::read_to_string(runs.join("../../docs/FINDINGS.md")).unwrap();
        let section = findings.split("## What upgrading within a release line costs").nth(1).unwrap();
        let section = section.split_whitespace().collect::<Vec<_>>().join(" ");
        let said = format!("{} of the {} instructions", thousands(per(&inserts) + per(&gets)), thousands(per(&totals)));
        assert!(section.contains(&said), "FINDINGS.md does not say: {said}");
        let mut tables = String::new();
        for framework in ["axum", "actix", "rocket"] {
            let run = runs.join(format!("2026-12-06-versions-{framework}"));
            tables.push_str(&super::super::count::rendered(&run.join("count.json")).unwrap());
        }
        for (at, _) in section.match_indices(" % [") {
            let start = section[..at].rfind(' ').map_or(0, |s| s + 1);
            let change = &section[start..at + section[at..].find(']').unwrap() + 1];
            assert!(tables.contains(change), "FINDINGS.md: not a change of the sweeps: {change}");
        }
        let run = runs.join("2026-12-06-versions-axum");
        let readme = std::fs::read_to_string(run.join("README.md")).unwrap();
        // The timeline names each release and each route.
        let drawn = std::fs::read_to_string(run.join("versions.svg")).unwrap();
        let svg = std::env::temp_dir().join(format!("versions-layers-{}.svg", std::process::id()));
        let doc = roxmltree::Document::parse(&drawn).unwrap();
        let texts: Vec<&str> = doc.descendants().filter_map(|n| n.text()).collect();
        for said in ["0.8.1", "0.8.3", "0.8.5", "0.8.7", "0.8.9", "/plaintext", "/api/devices/preserialized"] {
            assert!(texts.iter().any(|t| t.trim() == said), "{said} on the chart: {texts:?}");
        }
        assert!(readme.contains("![axum's instructions per request per release](versions.svg)"));
        // A count of layers is no sweep: nothing drawn.
        let layers = run.join("../2026-12-06-middleware/count.json");
        assert!(!crate::report::charts::draw_versions(&svg, &crate::results::read_count(&layers).unwrap()).unwrap());
        // The release against itself: within 0.2 % on every route.
        let aa = crate::results::read_count(&run.join("aa.count.json")).unwrap();
        assert_eq!(aa.deltas.len(), 2, "{:?}", aa.deltas);
        for delta in &aa.deltas {
            let change = delta.instructions.change_percent;
            assert!(change.abs() < 0.2, "A/A {}: {change} %", delta.route);
        }
    }
}
