//! `ab --before-deps`/`--after-deps`: a side built with other versions of
//! its dependencies ("did upgrading make it slower?"). The versions are
//! applied to the lockfile of the side's git worktree, never to the user's
//! tree, and the side's binaries are kept under the lockfile's hash, so a
//! version set is built once.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail, ensure};
use sha2::{Digest, Sha256};

/// Other versions of a side's dependencies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Deps {
    /// `NAME=VERSION,…`: `cargo update -p NAME --precise VERSION` for each,
    /// in order (a crate of the registry, at a published version).
    Precise(Vec<(String, String)>),
    /// A `Cargo.lock` used whole as the side's.
    Lockfile(PathBuf),
}

impl Deps {
    /// `NAME=VERSION[,NAME=VERSION…]`, or the path of a lockfile (a text
    /// without `=` that names a file).
    ///
    /// # Errors
    /// A part that is not `NAME=VERSION`, a name twice, a file that does not exist.
    pub fn parse(text: &str) -> Result<Self, String> {
        if !text.contains('=') {
            let path = PathBuf::from(text);
            return if path.is_file() {
                Ok(Self::Lockfile(path))
            } else {
                Err(format!("'{text}' is neither NAME=VERSION,… nor a Cargo.lock file"))
            };
        }
        let mut pins: Vec<(String, String)> = Vec::new();
        for part in text.split(',').map(str::trim) {
            let Some((name, version)) = part.split_once('=').map(|(n, v)| (n.trim(), v.trim())) else {
                return Err(format!("'{part}' is not NAME=VERSION"));
            };
            let is_name =
                |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
            let is_version =
                |s: &str| s.split('.').count() == 3 && s.chars().next().is_some_and(|c| c.is_ascii_digit());
            if !is_name(name) || !is_version(version) {
                return Err(format!("'{part}' is not NAME=VERSION (a crate name and a version such as 0.8.1)"));
            }
            if pins.iter().any(|(n, _)| n == name) {
                return Err(format!("{name} is named twice"));
            }
            pins.push((name.to_owned(), version.to_owned()));
        }
        Ok(Self::Precise(pins))
    }

    /// How it reads beside the revision: `axum=0.8.1, hyper=1.5.0`, or the lockfile's path.
    pub fn label(&self) -> String {
        match self {
            Self::Precise(pins) => pins.iter().map(|(n, v)| format!("{n}={v}")).collect::<Vec<_>>().join(", "),
            Self::Lockfile(path) => path.display().to_string(),
        }
    }

    /// Applies these versions to the workspace at `root` (a worktree), and
    /// returns the hash of its lockfile then: the key its build is kept by.
    ///
    /// # Errors
    /// A version that does not resolve: one line naming the crate and the
    /// first line of cargo's error. A lockfile that cannot be copied or read.
    pub fn apply(&self, root: &Path) -> anyhow::Result<String> {
        let lock = root.join("Cargo.lock");
        match self {
            Self::Lockfile(path) => {
                std::fs::copy(path, &lock)
                    .with_context(|| format!("cannot copy {} to {}", path.display(), lock.display()))?;
            }
            Self::Precise(pins) => {
                let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
                for (name, version) in pins {
                    let out = Command::new(&cargo)
                        .current_dir(root)
                        .args(["update", "--quiet", "-p", name, "--precise", version])
                        .output()
                        .with_context(|| format!("cannot run {}", cargo.to_string_lossy()))?;
                    if !out.status.success() {
                        let said = String::from_utf8_lossy(&out.stderr);
                        let first = said.lines().find(|l| l.starts_with("error")).or(said.lines().next()).unwrap_or("");
                        bail!("{name}={version} does not resolve: cargo says \"{}\"", first.trim());
                    }
                }
            }
        }
        let text = std::fs::read(&lock).with_context(|| format!("cannot read {}", lock.display()))?;
        ensure!(!text.is_empty(), "{} is empty", lock.display());
        Ok(Sha256::digest(&text).iter().take(6).map(|b| format!("{b:02x}")).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_in_order_and_a_bad_part_or_a_name_twice_is_named() {
        assert_eq!(
            Deps::parse("axum=0.8.1, hyper=1.5.0"),
            Ok(Deps::Precise(vec![("axum".into(), "0.8.1".into()), ("hyper".into(), "1.5.0".into())]))
        );
        assert_eq!(Deps::parse("axum=0.8.1,hyper=1.5.0").unwrap().label(), "axum=0.8.1, hyper=1.5.0");
        for (text, said) in [
            ("axum=0.8", "'axum=0.8' is not NAME=VERSION"),
            ("axum=0.8.1,tokio", "'tokio' is not NAME=VERSION"),
            ("=1.0.0", "'=1.0.0' is not NAME=VERSION"),
            ("a xum=1.0.0", "'a xum=1.0.0' is not NAME=VERSION"),
            ("axum=0.8.1,axum=0.8.2", "axum is named twice"),
            ("no/such/Cargo.lock", "'no/such/Cargo.lock' is neither NAME=VERSION,… nor a Cargo.lock file"),
        ] {
            let err = Deps::parse(text).unwrap_err();
            assert!(err.starts_with(said), "{text}: {err}");
        }
    }

    #[test]
    fn a_lockfile_is_the_sides_and_its_hash_names_the_build() {
        let dir = tempfile::tempdir().unwrap();
        let (root, lock) = (dir.path().join("tree"), dir.path().join("other.lock"));
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(root.join("Cargo.lock"), "version = 4\n").unwrap();
        std::fs::write(&lock, "version = 4\n# other\n").unwrap();
        let deps = Deps::parse(lock.to_str().unwrap()).unwrap();
        let hash = deps.apply(&root).unwrap();
        assert_eq!(std::fs::read_to_string(root.join("Cargo.lock")).unwrap(), "version = 4\n# other\n");
        assert_eq!(hash.len(), 12);
        std::fs::write(&lock, "version = 4\n# a third\n").unwrap();
        assert_ne!(deps.apply(&root).unwrap(), hash, "another lockfile, another build");
    }
}
