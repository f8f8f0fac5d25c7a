//! `bench-client versions`: did upgrading make it slower? One framework's
//! server built with each release of a crate it builds on (the framework
//! itself, or hyper, tokio…), `ab --before-deps` for every release, and all
//! of them counted in one session, route by route: each release against the
//! one before it and against the newest.

use anyhow::ensure;

use super::ab::{Builder, Revision, binaries_of};
use super::counted::{CountPlan, CountedServer};
use super::deps::Deps;
use crate::model::Framework;

/// A checked `versions` invocation.
#[derive(Debug, Clone)]
pub struct VersionsPlan {
    /// The server built with each release.
    pub framework: Framework,
    /// The crates whose releases are swept, released together (`rocket`,
    /// `rocket_http`, `rocket_codegen`): each pinned to the same version.
    pub crates: Vec<String>,
    /// Its releases, oldest first, two or more.
    pub releases: Vec<String>,
    /// How each release's server is counted (its servers and pairs are the releases').
    pub count: CountPlan,
    /// Cargo builds the releases not built yet.
    pub build: bool,
}

/// The crate a framework is: what `versions` sweeps unless told another.
pub fn framework_crate(framework: Framework) -> &'static str {
    match framework {
        Framework::Actix => "actix-web",
        Framework::Axum => "axum",
        Framework::Rocket => "rocket",
        Framework::Own => "",
    }
}

impl VersionsPlan {
    /// Checks the releases: two or more, each `MAJOR.MINOR.PATCH` (one named
    /// twice is an A/A of it: the same build, counted in two processes).
    ///
    /// # Errors
    /// The first release that is not one.
    pub fn new(
        framework: Framework,
        crates: Vec<String>,
        releases: Vec<String>,
        count: CountPlan,
        build: bool,
    ) -> anyhow::Result<Self> {
        ensure!(framework != Framework::Own, "--framework names a framework of the workspace");
        ensure!(releases.len() >= 2, "--releases needs two or more releases, oldest first");
        ensure!(!crates.is_empty(), "--crate names no crate");
        for release in &releases {
            Self::pins(&crates, release).map_err(|e| anyhow::anyhow!("--releases: {e}"))?;
        }
        Ok(Self { framework, crates, releases, count, build })
    }

    /// Every crate of `crates` at `release`.
    fn pins(crates: &[String], release: &str) -> Result<Deps, String> {
        Deps::parse(&crates.iter().map(|c| format!("{c}={release}")).collect::<Vec<_>>().join(","))
    }

    /// The server's name for the `i`th release: `axum 0.8.1`, or `axum
    /// hyper=1.5.0` for another crate; `#2` on a release named again.
    fn name(&self, i: usize) -> String {
        let release = &self.releases[i];
        let mut name = if self.crates[0] == framework_crate(self.framework) {
            format!("{} {release}", self.framework.name())
        } else {
            format!("{} {}={release}", self.framework.name(), self.crates[0])
        };
        let before = self.releases[..i].iter().filter(|r| *r == release).count();
        if before > 0 {
            name.push_str(&format!(" #{}", before + 1));
        }
        name
    }

    /// Every release built (HEAD with the crate at that release), and the
    /// [`CountPlan`] that counts their servers: each against the one before
    /// it, and each earlier one against the newest.
    ///
    /// # Errors
    /// A release that does not resolve ([`super::ab::Refused`], one line
    /// naming it), a failed build, a release not built with `--no-build`.
    pub fn count_plan(&self) -> anyhow::Result<CountPlan> {
        let frameworks = [self.framework];
        let builder = Builder { profile: self.count.profile, frameworks: &frameworks, build: self.build };
        let mut servers = Vec::new();
        for (i, release) in self.releases.iter().enumerate() {
            let deps = Self::pins(&self.crates, release).map_err(|e| anyhow::anyhow!("--releases: {e}"))?;
            let (_, dir) = binaries_of(&Revision::Git("HEAD".to_owned(), Some(deps)), &builder)?;
            let binary = dir.join(self.framework.binary());
            servers.push(CountedServer {
                name: self.name(i),
                command: format!("{} --addr {{addr}} --workers 1 --layers {}", binary.display(), self.count.layers),
                framework: None,
                middleware: None,
                filler_routes: 0,
            });
        }
        Ok(CountPlan { servers, pairs: release_pairs(self.releases.len()), ..self.count.clone() })
    }
}

/// The pairs of a sweep of `n` releases: each against the one before it,
/// then each older than the last but one against the newest.
fn release_pairs(n: usize) -> Vec<(usize, usize)> {
    let newest = n.saturating_sub(1);
    (1..n).map(|i| (i - 1, i)).chain((0..newest.saturating_sub(1)).map(|i| (i, newest))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_release_is_set_against_the_one_before_and_the_newest() {
        assert_eq!(release_pairs(2), [(0, 1)]);
        assert_eq!(release_pairs(4), [(0, 1), (1, 2), (2, 3), (0, 3), (1, 3)]);
    }

    fn plan(krate: &str, releases: &[&str]) -> anyhow::Result<VersionsPlan> {
        let crates = krate.split(',').map(str::to_owned).collect();
        let count = CountPlan {
            profile: crate::model::Profile::Release,
            servers: Vec::new(),
            routes: Vec::new(),
            requests: 100,
            repeats: 2,
            layers: 0,
            server_cpus: "0".parse().unwrap(),
            build: false,
            out: std::path::PathBuf::from("out"),
            client_cpus: None,
            threshold_percent: 0.0,
            pairs: Vec::new(),
            perf: false,
            http2_streams: Vec::new(),
            http2_routes: None,
        };
        let releases = releases.iter().map(|r| (*r).to_owned()).collect();
        VersionsPlan::new(Framework::Axum, crates, releases, count, false)
    }

    #[test]
    fn releases_are_checked_and_named_by_crate_with_a_repeat_numbered() {
        let sweep = plan("axum", &["0.8.1", "0.8.4", "0.8.1"]).unwrap();
        assert_eq!([sweep.name(0), sweep.name(1), sweep.name(2)], ["axum 0.8.1", "axum 0.8.4", "axum 0.8.1 #2"]);
        assert_eq!(plan("hyper", &["1.6.0", "1.7.0"]).unwrap().name(1), "axum hyper=1.7.0");
        let family = plan("axum,axum-core", &["0.8.1", "0.8.4"]).unwrap();
        assert_eq!(family.name(0), "axum 0.8.1");
        assert_eq!(
            VersionsPlan::pins(&family.crates, "0.8.1").unwrap().label(),
            "axum=0.8.1, axum-core=0.8.1",
            "each crate of the family at the release"
        );
        for (releases, said) in [
            (&["0.8.1"][..], "--releases needs two or more releases"),
            (&["0.8.1", "0.8"][..], "--releases: 'axum=0.8' is not NAME=VERSION"),
        ] {
            let err = plan("axum", releases).unwrap_err().to_string();
            assert!(err.starts_with(said), "{err}");
        }
    }
}
