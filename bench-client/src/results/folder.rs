//! The results folder: one run folder per suite, named
//! `<UTC timestamp>-<profile>` under the output folder, and the `latest`
//! link (the layout `docs/RESULTS.md` documents).

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::Context;
use clap::ValueEnum;

use super::{Results, read};
use crate::model::Profile;

/// The folder `OUT/<UTC timestamp>-<profile>`, created new (never reused).
pub fn create_run_dir(out: &Path, profile: Profile, started: SystemTime) -> anyhow::Result<PathBuf> {
    let stamp: String =
        humantime::format_rfc3339_seconds(started).to_string().chars().filter(|c| *c != '-' && *c != ':').collect();
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let dir = out.join(format!("{stamp}-{}", profile.cargo_name()));
    std::fs::create_dir(&dir).with_context(|| format!("cannot create {} (it must not exist yet)", dir.display()))?;
    Ok(dir)
}

/// Points `OUT/latest` at `dir` (replacing the link atomically).
pub fn link_latest(out: &Path, dir: &Path) -> anyhow::Result<()> {
    let name = dir.file_name().context("run folder has a name")?;
    let tmp = out.join(".latest.tmp");
    let _ = std::fs::remove_file(&tmp);
    std::os::unix::fs::symlink(name, &tmp)?;
    std::fs::rename(&tmp, out.join("latest"))?;
    Ok(())
}

/// The newest readable `results.json` of each profile other than `profile`
/// under `out` (run folders are named `<UTC timestamp>-<profile>`, so the
/// greatest name is the newest), and why each newer one was skipped (a
/// missing, truncated or corrupted file, or another schema version; each
/// error names the file).
pub fn latest_of_other_profiles(out: &Path, profile: Profile) -> (Vec<Results>, Vec<anyhow::Error>) {
    let (mut found, mut skipped) = (Vec::new(), Vec::new());
    let Ok(entries) = std::fs::read_dir(out) else { return (found, skipped) };
    let mut names: Vec<String> = entries.filter_map(|e| e.ok()?.file_name().into_string().ok()).collect();
    names.sort();
    for &other in Profile::value_variants() {
        if other == profile {
            continue;
        }
        let suffix = format!("-{}", other.cargo_name());
        let newest = names
            .iter()
            .rev()
            .filter(|n| n.ends_with(&suffix))
            // A suite's runs only: an `ab` session of the same folder is another command's.
            .find_map(|n| read(&out.join(n)).map_err(|e| skipped.push(e)).ok().filter(|r| r.meta.ab.is_none()));
        found.extend(newest);
    }
    (found, skipped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_profiles_skip_unreadable_results_and_name_them() {
        let out = std::env::temp_dir().join(format!("bench-other-profiles-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&out);
        let write = |name: &str, text: &str| {
            std::fs::create_dir_all(out.join(name)).unwrap();
            std::fs::write(out.join(name).join("results.json"), text).unwrap();
        };
        let valid = serde_json::to_string(&super::super::fixtures::results(Vec::new())).unwrap();
        write("20260101T000000Z-release", &valid);
        write("20260201T000000Z-release", &valid[..valid.len() / 2]);
        write("20260301T000000Z-profiling", "{\"schema_version\": 3, \"runs\": [");
        write("20260401T000000Z-dev", "not even json");
        let mut ab = super::super::fixtures::results(Vec::new());
        ab.meta.ab = Some(crate::results::AbMeta {
            before: "HEAD".to_owned(),
            before_commit: "abc".to_owned(),
            before_layers: 10,
            after: "worktree".to_owned(),
            after_commit: "def".to_owned(),
            after_layers: 10,
            expect_status: 200,
            changes: Vec::new(),
        });
        write("20260501T000000Z-release", &serde_json::to_string(&ab).unwrap());

        let (found, skipped) = latest_of_other_profiles(&out, Profile::Dev);
        assert_eq!(found.len(), 1, "the older readable release run, not the newer ab session");
        assert!(found[0].meta.ab.is_none());
        assert_eq!(found[0].meta.profile, Profile::Release);
        let errors: Vec<String> = skipped.iter().map(|e| format!("{e:#}")).collect();
        assert_eq!(errors.len(), 2, "{errors:#?}");
        for (error, folder) in errors.iter().zip(["20260201T000000Z-release", "20260301T000000Z-profiling"]) {
            let file = out.join(folder).join("results.json");
            assert!(error.starts_with(&format!("{} is not valid JSON", file.display())), "{error}");
        }
        let _ = std::fs::remove_dir_all(&out);
    }
}
