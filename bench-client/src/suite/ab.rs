//! `bench-client ab`: did my change make it faster? Two builds of the
//! servers, BEFORE and AFTER, run side by side on the same server CPUs, and
//! the client alternates between their connections in short slices (the
//! pairing of the suite's scenarios, across two processes): only the server
//! of the current slice is loaded, the other waits idle in its event loop.
//! Both servers are started anew every round, so the layout of one process
//! cannot pass for a change. Each route gives a paired delta with its
//! interval, as a scenario does.
//!
//! A revision is built in a detached git worktree under `target/ab-src/`
//! (removed afterwards) into this workspace's `target/` (its dependencies are
//! shared with the usual builds), and its binaries are copied to
//! `target/ab/<commit>/<profile>/`, so a revision is built once; the working
//! tree is built in place, as `make bench` builds it, and copied to
//! `target/ab/worktree/<profile>/`. Nothing of the user's tree changes.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::SystemTime;

use anyhow::{Context, bail, ensure};
use common::Route;

use super::build::{build_in, target_dir, workspace_root};
use super::progress::Progress;
use super::servers::{route_load, start_binary};
use super::{SuitePlan, measure_run, meta};
use crate::engine::Load;
use crate::measure::RunFigures;
use crate::model::{Framework, Scenario, Variant};
use crate::report::flames::FlameGraphs;
use crate::report::{self, run_line};
use crate::results::{self, AbMeta, FrameworkFailure, Results, RunRecord, SCHEMA_VERSION};
use crate::sys::ServerProcess;

/// Which code a side runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Revision {
    /// The working tree as it is, uncommitted changes included.
    WorkTree,
    /// A git revision (`HEAD~1`, a branch, a commit).
    Git(String),
}

impl Revision {
    /// `worktree` (or `.`) for the working tree, anything else a git revision.
    pub fn parse(text: &str) -> Self {
        match text {
            "worktree" | "." | "WORKTREE" => Self::WorkTree,
            other => Self::Git(other.to_owned()),
        }
    }

    /// How it reads in tables.
    pub fn label(&self) -> String {
        match self {
            Self::WorkTree => "the working tree".to_owned(),
            Self::Git(r) => r.clone(),
        }
    }
}

/// One side of the comparison.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Side {
    /// Its code.
    pub revision: Revision,
    /// Its servers' `--layers`.
    pub layers: u16,
}

/// A checked `ab` invocation.
#[derive(Debug, Clone)]
pub struct AbPlan {
    /// Frameworks, profile, timings (each side's own time per round is the
    /// duration), rounds, slice, CPUs, output folder, whether to build.
    pub base: SuitePlan,
    /// The baseline.
    pub before: Side,
    /// The candidate.
    pub after: Side,
    /// Routes compared, each on both sides.
    pub variants: Vec<Variant>,
    /// Smallest significant slowdown, percent, that counts as a regression.
    pub threshold_percent: f64,
}

/// How `ab` ended.
#[derive(Debug)]
pub struct AbOutcome {
    /// The run folder written.
    pub dir: PathBuf,
    /// Everything it wrote.
    pub results: Results,
    /// The stop flag cut it short.
    pub interrupted: bool,
}

fn git(args: &[&str]) -> anyhow::Result<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(workspace_root())
        .output()
        .with_context(|| format!("cannot run `git {}`", args.join(" ")))?;
    ensure!(
        out.status.success(),
        "`git {}` failed: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr).lines().next().unwrap_or("")
    );
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// The commit of `revision` (`worktree` for the working tree), and the
/// folder holding its server binaries, built if needed.
///
/// # Errors
/// An unknown revision, a worktree that cannot be made, a failed build.
pub fn binaries_of(revision: &Revision, plan: &SuitePlan) -> anyhow::Result<(String, PathBuf)> {
    let profile = plan.profile;
    let shared = target_dir();
    let built = |dir: &Path| plan.frameworks.iter().all(|f| dir.join(f.binary()).is_file());
    let copy_out = |to: &Path| -> anyhow::Result<()> {
        std::fs::create_dir_all(to).with_context(|| format!("cannot create {}", to.display()))?;
        for f in &plan.frameworks {
            let from = shared.join(profile.target_dir()).join(f.binary());
            std::fs::copy(&from, to.join(f.binary()))
                .with_context(|| format!("cannot copy {} to {}", from.display(), to.display()))?;
        }
        Ok(())
    };
    match revision {
        Revision::WorkTree => {
            let dir = target_dir().join("ab").join("worktree").join(profile.target_dir());
            if plan.build {
                build_in(&workspace_root(), Some(&shared), profile, &plan.frameworks)?;
                copy_out(&dir)?;
            }
            ensure!(built(&dir), "no servers of the working tree in {} (drop --no-build)", dir.display());
            Ok(("worktree".to_owned(), dir))
        }
        Revision::Git(name) => {
            let commit = git(&["rev-parse", "--verify", &format!("{name}^{{commit}}")])
                .with_context(|| format!("{name} is not a git revision of this repository"))?;
            let dir = target_dir().join("ab").join(&commit).join(profile.target_dir());
            if built(&dir) {
                return Ok((commit, dir));
            }
            ensure!(plan.build, "no servers of {name} in {} (drop --no-build)", dir.display());
            let src = target_dir().join("ab-src").join(&commit);
            let _ = git(&["worktree", "remove", "--force", &src.to_string_lossy()]);
            git(&["worktree", "add", "--detach", &src.to_string_lossy(), &commit])?;
            let result = build_in(&src, Some(&shared), profile, &plan.frameworks).and_then(|()| copy_out(&dir));
            let _ = git(&["worktree", "remove", "--force", &src.to_string_lossy()]);
            result?;
            Ok((commit, dir))
        }
    }
}

/// The load of one round of `variant`: BEFORE's server is route 0, AFTER's
/// route 1, alternating in blocks `0 1 1 0` (`1 0 0 1` in even rounds).
fn ab_load(
    plan: &SuitePlan,
    before: &ServerProcess,
    after: &ServerProcess,
    variant: Variant,
    round: u32,
) -> anyhow::Result<Load> {
    let route = Route::get(variant.route());
    let block = if round.is_multiple_of(2) { vec![1, 0, 0, 1] } else { vec![0, 1, 1, 0] };
    let routes = vec![route_load(before.addr, route), route_load(after.addr, route)];
    Ok(Load::sliced(routes, block, plan.settings, plan.settings.timing.duration(), plan.slice)?)
}

/// Starts the BEFORE and the AFTER server of `framework` for `round`, the
/// side started first alternating (the first may find a colder page cache).
fn start_pair(
    plan: &AbPlan,
    framework: Framework,
    bins: (&Path, &Path),
    round: u32,
) -> anyhow::Result<(ServerProcess, ServerProcess)> {
    let base = &plan.base;
    let start = |dir: &Path, side: &Side, name: &str| {
        start_binary(&dir.join(framework.binary()), &base.server_cpus, side.layers).context(name.to_owned())
    };
    if round.is_multiple_of(2) {
        let after = start(bins.1, &plan.after, "AFTER")?;
        Ok((start(bins.0, &plan.before, "BEFORE")?, after))
    } else {
        let before = start(bins.0, &plan.before, "BEFORE")?;
        Ok((before, start(bins.1, &plan.after, "AFTER")?))
    }
}

/// Measures one framework's BEFORE and AFTER servers on every variant, with
/// a new pair of processes every round: a process keeps its code and heap
/// layout for life, and two processes of one binary differ by about 1 % for
/// as long as they run (A/A, README), so each round draws new layouts and
/// the deltas' interval spans the rounds ([`results::ab_deltas`]).
fn measure_framework(
    plan: &AbPlan,
    framework: Framework,
    bins: (&Path, &Path),
    progress: &Progress,
    stop: &AtomicBool,
    runs: &mut Vec<RunRecord>,
) -> anyhow::Result<()> {
    let base = &plan.base;
    for round in 1..=base.rounds {
        if stop.load(Ordering::Relaxed) {
            return Ok(());
        }
        let (mut before, mut after) = start_pair(plan, framework, bins, round)?;
        progress.line(&format!(
            "  {} round {round}: BEFORE pid {} on {}, AFTER pid {} on {}",
            framework.binary(),
            before.pid(),
            before.addr,
            after.pid(),
            after.addr
        ));
        for &variant in &plan.variants {
            if stop.load(Ordering::Relaxed) {
                return Ok(());
            }
            let load = ab_load(base, &before, &after, variant, round)?;
            let slicing = load.slicing.as_ref().context("a sliced load has its slicing")?;
            let label = format!("{} round {round}/{} {}", framework.name(), base.rounds, variant.path());
            let run = measure_run(&load, &[before.pid(), after.pid()], None, progress, &label, stop)?;
            for (route, scenario) in [(0, Scenario::Before), (1, Scenario::After)] {
                let figures = RunFigures::of_route(&run, &load.settings, Some(base.server_cpus.len()), route, slicing);
                let columns = format!(
                    "{:<6} round {round}/{} {:<6} {:<27}",
                    framework.name(),
                    base.rounds,
                    scenario.name(),
                    variant.path()
                );
                progress.line(&run_line(&columns, &figures));
                let layers = if scenario == Scenario::Before { plan.before.layers } else { plan.after.layers };
                runs.push(RunRecord {
                    framework,
                    scenario,
                    variant,
                    route: variant.path().to_owned(),
                    profile: base.profile,
                    layers,
                    round,
                    position: u32::from(scenario == Scenario::After) + 1,
                    figures,
                });
            }
            for server in [&mut before, &mut after] {
                if server.has_exited() {
                    bail!("{} exited during the run", server.name());
                }
            }
        }
        before.stop();
        after.stop();
    }
    Ok(())
}

/// Runs `plan`: builds both sides, measures every framework, writes the
/// results folder (`results.json`, `report.md`, charts) like the suite.
///
/// # Errors
/// Before anything is measured: a revision that cannot be built, an output
/// folder that cannot be created. Later errors are recorded per framework.
pub fn run(plan: &AbPlan, stop: &AtomicBool) -> anyhow::Result<AbOutcome> {
    let base = &plan.base;
    let (before_commit, before_bins) = binaries_of(&plan.before.revision, base).context("BEFORE")?;
    let (after_commit, after_bins) = binaries_of(&plan.after.revision, base).context("AFTER")?;
    base.client_cpus.pin_current_thread()?;
    let started = SystemTime::now();
    let dir = results::create_run_dir(&base.out, base.profile, started)?;
    let mut results = Results {
        schema_version: SCHEMA_VERSION,
        complete: false,
        meta: meta::capture(base, started),
        runs: Vec::new(),
        deltas: Vec::new(),
        failures: Vec::new(),
    };
    results.meta.ab = Some(AbMeta {
        before: plan.before.revision.label(),
        before_commit,
        before_layers: plan.before.layers,
        after: plan.after.revision.label(),
        after_commit,
        after_layers: plan.after.layers,
    });
    let json = dir.join("results.json");
    eprintln!("measuring into {}", dir.display());
    if let Some(ceiling) = super::client_ceiling(base, stop) {
        results.meta.client_ceiling_per_s = Some(ceiling);
    }
    let progress = Progress::new(base.frameworks.len() as u64 * u64::from(base.rounds) * plan.variants.len() as u64);
    for &framework in &base.frameworks {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        if let Err(e) =
            measure_framework(plan, framework, (&before_bins, &after_bins), &progress, stop, &mut results.runs)
        {
            let error = format!("{e:#}");
            progress.line(&format!("error: {error}"));
            results.failures.push(FrameworkFailure { framework, error });
        }
        results.deltas = results::ab_deltas(&results.runs, &base.frameworks, &plan.variants);
        results::write(&json, &results)?;
    }
    progress.finish();
    let interrupted = stop.load(Ordering::Relaxed);
    results.complete = !interrupted && results.failures.is_empty();
    results.deltas = results::ab_deltas(&results.runs, &base.frameworks, &plan.variants);
    results::write(&json, &results)?;
    let charts = report::charts::suite_charts(&dir, &results).unwrap_or_else(|e| {
        eprintln!("warning: charts not drawn: {e:#}");
        Vec::new()
    });
    std::fs::write(dir.join("report.md"), report::report(&results, &[], &charts, &FlameGraphs::default()))
        .with_context(|| format!("cannot write {}", dir.join("report.md").display()))?;
    results::link_latest(&base.out, &dir)?;
    Ok(AbOutcome { dir, results, interrupted })
}
