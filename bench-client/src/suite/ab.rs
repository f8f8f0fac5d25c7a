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
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::{Context, ensure};

use super::build::{build_in, target_dir, workspace_root};
use super::command;
use super::deps::Deps;
use super::design::{self, Design, ServerStart, Servers, Unit};
use super::plan::{SuiteOutcome, SuitePlan};
use super::schedule::{Sliced, Slot, Step};
use super::servers::{ServerFlags, Started, start_healthy};
use super::session;
use crate::model::Framework;
use crate::preflight;
use crate::results::{self, AbChange, AbMeta, Delta, Meta, RunRecord};

/// Which code a side runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Revision {
    /// The working tree as it is, uncommitted changes included.
    WorkTree,
    /// A git revision (`HEAD~1`, a branch, a commit), with other versions
    /// of its dependencies when given (`--before-deps`).
    Git(String, Option<Deps>),
    /// Any server, started by this shell command (`--before-cmd`), its
    /// placeholders replaced for each start ([`command::expand`]).
    Command(String),
}

impl Revision {
    /// `worktree` (or `.`) for the working tree, anything else a git revision.
    pub fn parse(text: &str) -> Self {
        match text {
            "worktree" | "." | "WORKTREE" => Self::WorkTree,
            other => Self::Git(other.to_owned(), None),
        }
    }

    /// How it reads in tables.
    pub fn label(&self) -> String {
        match self {
            Self::WorkTree => "the working tree".to_owned(),
            Self::Git(r, None) | Self::Command(r) => r.clone(),
            Self::Git(r, Some(deps)) => format!("{r} with {}", deps.label()),
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
    /// Paths compared, each on both sides: of the route table, or any with
    /// commands.
    pub routes: Vec<&'static str>,
    /// Smallest significant slowdown, percent, that counts as a regression.
    pub threshold_percent: f64,
    /// How long a side's command may take to listen.
    pub ready_timeout: Duration,
    /// `--aa N`: N sessions of AFTER against itself (BEFORE is AFTER).
    pub aa: Option<u32>,
    /// The status every response of both sides carries (`--expect-status`).
    pub expect_status: u16,
    /// `--count`: the two sides counted under callgrind instead of timed.
    pub count: Option<super::plan::CountSettings>,
}

/// The two sides of an `ab` session, resolved to their binaries: `ab`'s
/// [`Design`], which owns what `meta.ab` records.
struct Builds {
    /// Folders holding BEFORE's and AFTER's server binaries.
    bins: (PathBuf, PathBuf),
    /// BEFORE.
    before: Side,
    /// AFTER.
    after: Side,
    /// Paths compared, each on both sides.
    routes: Vec<&'static str>,
    /// The status every response carries (`--expect-status`).
    expect_status: u16,
    /// How long a side's command may take to listen.
    ready_timeout: Duration,
    /// What `meta.ab` records; its `changes` are added as each framework's
    /// first pair of servers answers ([`Design::note_started`]).
    meta: AbMeta,
}

impl Design for Builds {
    /// One start per framework and round: the sides name their own layers.
    fn sweeps(&self, _plan: &SuitePlan, _unit: Unit) -> Vec<Option<u16>> {
        vec![None]
    }

    /// BEFORE (slot 0) and AFTER (slot 1), both started anew every round.
    fn start(&self, plan: &SuitePlan, at: ServerStart, stop: &AtomicBool) -> anyhow::Result<Servers> {
        let ServerStart { unit, round, .. } = at;
        let Unit::One(framework) = unit else { anyhow::bail!("ab compares two builds of one framework at a time") };
        let (before, after) = start_pair(plan, framework, self, round, stop)?;
        Ok(vec![before, after])
    }

    fn started_line(&self, unit: Unit, servers: &[Started], round: u32) -> String {
        let ([Started { process: before, .. }, Started { process: after, .. }], Unit::One(framework)) = (servers, unit)
        else {
            return design::server_lines(servers);
        };
        format!(
            "  {} round {round}: BEFORE pid {} on {}, AFTER pid {} on {}",
            framework.binary(),
            before.pid(),
            before.addr,
            after.pid(),
            after.addr
        )
    }

    /// Records where the first pair of `framework`'s servers answers
    /// differently; the lines that say so.
    fn note_started(&mut self, unit: Unit, servers: &[Started]) -> Vec<String> {
        let ([before, after], Unit::One(framework)) = (servers, unit) else { return Vec::new() };
        if self.meta.changes.iter().any(|c| c.framework == framework) {
            return Vec::new();
        }
        let mut lines = Vec::new();
        for ((path, b), (_, a)) in before.answers.iter().zip(&after.answers) {
            if let Some(change) = preflight::change(b, a) {
                lines.push(format!("  {} {path}: AFTER answers otherwise: {change}", framework.name()));
                self.meta.changes.push(AbChange { framework, route: (*path).to_owned(), change });
            }
        }
        lines
    }

    /// Each route, BEFORE against AFTER in slices.
    fn steps(&self, _plan: &SuitePlan, _unit: Unit, round: u32) -> Vec<Step> {
        self.routes.iter().map(|&p| Step::Sliced(Sliced::before_after(p, round))).collect()
    }

    fn deltas(&self, _plan: &SuitePlan, runs: &[RunRecord], frameworks: &[Framework]) -> Vec<Delta> {
        results::ab_deltas(runs, frameworks, &self.routes)
    }

    fn slot_columns(&self, slot: &Slot) -> String {
        format!("{:<6} {:<27}", slot.scenario.name(), slot.path)
    }

    fn record(&self, meta: &mut Meta) {
        meta.ab = Some(self.meta.clone());
    }
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

/// What building a side's servers takes: the profile, the frameworks, and
/// whether cargo may build (`--no-build`: only what is built already).
#[derive(Debug, Clone, Copy)]
pub struct Builder<'a> {
    /// The cargo profile.
    pub profile: crate::model::Profile,
    /// The servers built.
    pub frameworks: &'a [Framework],
    /// Cargo builds what is not built yet.
    pub build: bool,
}

impl<'a> Builder<'a> {
    /// What `plan` builds.
    pub fn of(plan: &'a SuitePlan) -> Self {
        Self { profile: plan.profile, frameworks: &plan.frameworks, build: plan.build }
    }
}

/// The commit of `revision` (`worktree` for the working tree), and the
/// folder holding its server binaries, built if needed.
///
/// # Errors
/// An unknown revision, a worktree that cannot be made, a failed build.
pub fn binaries_of(revision: &Revision, plan: &Builder) -> anyhow::Result<(String, PathBuf)> {
    let profile = plan.profile;
    let shared = target_dir();
    let built = |dir: &Path| plan.frameworks.iter().all(|f| dir.join(f.binary()).is_file());
    let copy_out = |to: &Path| -> anyhow::Result<()> {
        std::fs::create_dir_all(to).with_context(|| format!("cannot create {}", to.display()))?;
        for f in plan.frameworks {
            let from = shared.join(profile.target_dir()).join(f.binary());
            std::fs::copy(&from, to.join(f.binary()))
                .with_context(|| format!("cannot copy {} to {}", from.display(), to.display()))?;
        }
        Ok(())
    };
    match revision {
        Revision::Command(_) => Ok(("command".to_owned(), PathBuf::new())),
        Revision::WorkTree => {
            let dir = target_dir().join("ab").join("worktree").join(profile.target_dir());
            if plan.build {
                build_in(&workspace_root(), Some(&shared), profile, plan.frameworks)?;
                copy_out(&dir)?;
            }
            ensure!(built(&dir), "no servers of the working tree in {} (drop --no-build)", dir.display());
            Ok(("worktree".to_owned(), dir))
        }
        Revision::Git(name, deps) => {
            let commit = git(&["rev-parse", "--verify", &format!("{name}^{{commit}}")])
                .with_context(|| format!("{name} is not a git revision of this repository"))?;
            let dir = target_dir().join("ab").join(&commit).join(profile.target_dir());
            if deps.is_none() && built(&dir) {
                return Ok((commit, dir));
            }
            ensure!(plan.build || deps.is_some(), "no servers of {name} in {} (drop --no-build)", dir.display());
            let src = target_dir().join("ab-src").join(&commit);
            let _ = git(&["worktree", "remove", "--force", &src.to_string_lossy()]);
            git(&["worktree", "add", "--detach", &src.to_string_lossy(), &commit])?;
            let result = (|| {
                // Other versions: applied to the worktree's lockfile, the build kept under its hash.
                let (commit, dir) = match deps {
                    None => (commit, dir),
                    Some(deps) => {
                        let lock = deps.apply(&src).map_err(Refused)?;
                        let key = format!("{commit}-{lock}");
                        let dir = target_dir().join("ab").join(&key).join(profile.target_dir());
                        (key, dir)
                    }
                };
                if !built(&dir) {
                    ensure!(plan.build, "no servers of {} in {} (drop --no-build)", revision.label(), dir.display());
                    let building = build_in(&src, Some(&shared), profile, plan.frameworks);
                    // Other versions that do not build with this tree are refused as those that do not resolve.
                    match (building, deps) {
                        (Err(e), Some(deps)) => {
                            return Err(Refused(e.context(format!("{} does not build", deps.label()))).into());
                        }
                        (building, _) => building.and_then(|()| copy_out(&dir))?,
                    }
                }
                Ok((commit, dir))
            })();
            let _ = git(&["worktree", "remove", "--force", &src.to_string_lossy()]);
            result
        }
    }
}

/// Starts the BEFORE and the AFTER server of `framework` for `round`, each
/// with its own answers to `variants` (see [`Started::of_answers`]), a new
/// pair every round: a process keeps its code and heap layout for life, and
/// two processes of one binary differ by about 1 % for as long as they run
/// (A/A, docs/FINDINGS.md), so each round draws new layouts and the deltas' interval
/// spans the rounds ([`results::ab_deltas`]). The side started first
/// alternates (the first may find a colder page cache).
fn start_pair(
    plan: &SuitePlan,
    framework: Framework,
    builds: &Builds,
    round: u32,
    stop: &AtomicBool,
) -> anyhow::Result<(Started, Started)> {
    let start = |dir: &Path, side: &Side, name: &str| {
        let process = match &side.revision {
            Revision::Command(command) => {
                command::start(&format!("{name} command"), command, &plan.server_cpus, builds.ready_timeout, stop)
            }
            _ => start_healthy(&dir.join(framework.binary()), &plan.server_cpus, side.layers, ServerFlags::default()),
        }
        .context(name.to_owned())?;
        Started::of_answers(framework, process, side.layers, &builds.routes, builds.expect_status, name, stop)
    };
    let (bins, before, after) = ((&*builds.bins.0, &*builds.bins.1), &builds.before, &builds.after);
    if round.is_multiple_of(2) {
        let a = start(bins.1, after, "AFTER")?;
        Ok((start(bins.0, before, "BEFORE")?, a))
    } else {
        let b = start(bins.0, before, "BEFORE")?;
        Ok((b, start(bins.1, after, "AFTER")?))
    }
}

/// `ab` refused its sides before measuring anything: a server that does not
/// start, listen or answer as required (exit 2).
#[derive(Debug, thiserror::Error)]
#[error("{0:#}")]
pub struct Refused(anyhow::Error);

/// Runs `plan`: builds both sides, starts each framework's pair once to see
/// that both answer every route (stable, with the expected status), then
/// measures every framework and writes the results folder (`results.json`,
/// `report.md`, charts) like the suite.
///
/// # Errors
/// Before anything is measured: a revision that cannot be built, a side
/// that does not start or answer ([`Refused`]), an output folder that
/// cannot be created. Later errors are recorded per framework.
pub fn run(plan: &AbPlan, stop: &AtomicBool) -> anyhow::Result<SuiteOutcome> {
    let base = &plan.base;
    let builder = Builder::of(base);
    let (before_commit, before_bins) = binaries_of(&plan.before.revision, &builder).context("BEFORE")?;
    let (after_commit, after_bins) = binaries_of(&plan.after.revision, &builder).context("AFTER")?;
    let meta = AbMeta {
        before: plan.before.revision.label(),
        before_commit,
        before_layers: plan.before.layers,
        after: plan.after.revision.label(),
        after_commit,
        after_layers: plan.after.layers,
        expect_status: plan.expect_status,
        changes: Vec::new(),
    };
    let mut builds = Builds {
        bins: (before_bins, after_bins),
        before: plan.before.clone(),
        after: plan.after.clone(),
        routes: plan.routes.clone(),
        expect_status: plan.expect_status,
        ready_timeout: plan.ready_timeout,
        meta,
    };
    for &framework in &base.frameworks {
        // Stopped again when dropped.
        start_pair(base, framework, &builds, 1, stop).map_err(Refused)?;
    }
    session::run(base, &mut builds, stop)
}
