//! The one owner of the files the client writes (results, reports, CI
//! files, manifests): each place a flag names is checked when the plan is
//! made, before anything runs (its folder made as `mkdir -p` does, a file
//! created and removed in it); each file is written atomically (a temporary
//! file of this process in the same folder, then a rename); and when the
//! place fails at the end all the same (its folder removed, a disk full),
//! the bytes are kept in a file of the system's temporary folder whose name
//! the error gives, so nothing measured is lost.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Temporary files made by this process so far: with the pid, a name no
/// other writer uses.
static TEMPORARIES: AtomicU64 = AtomicU64::new(0);

/// Why a place a flag names cannot be written; its text (one line) names the
/// flag, the path and what failed, its source why.
#[derive(Debug, thiserror::Error)]
#[error("{flag} {}: {what} {}", path.display(), at.display())]
pub struct Unwritable {
    flag: String,
    path: PathBuf,
    what: &'static str,
    at: PathBuf,
    source: std::io::Error,
}

/// A file that could not be written where asked at the end: where its bytes
/// went instead, if anywhere.
#[derive(Debug, thiserror::Error)]
#[error("cannot write {} ({error}); {}", path.display(), match kept {
    Ok(fallback) => format!("kept in {} instead", fallback.display()),
    Err((fallback, e)) => format!("not kept in {} either ({e})", fallback.display()),
})]
pub struct NotWritten {
    path: PathBuf,
    error: std::io::Error,
    kept: Result<PathBuf, (PathBuf, std::io::Error)>,
}

impl NotWritten {
    /// Where the bytes were kept instead, when they were.
    pub fn kept(&self) -> Option<&Path> {
        self.kept.as_ref().ok().map(PathBuf::as_path)
    }
}

/// The folder a file is written in (`.` for a bare name).
fn folder_of(path: &Path) -> &Path {
    path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."))
}

/// Checks, before anything runs, that `flag`'s file `path` can be written:
/// its folder made if missing (as `mkdir -p`), a file created in it and
/// removed, the folders made removed again; the path not a folder.
///
/// # Errors
/// [`Unwritable`], naming the flag, the path and the step that failed.
pub fn prepare_file(flag: &str, path: &Path) -> Result<(), Unwritable> {
    let fail =
        |what, at: &Path, source| Unwritable { flag: flag.to_owned(), path: path.into(), what, at: at.into(), source };
    if path.is_dir() {
        let source = std::io::Error::new(std::io::ErrorKind::IsADirectory, "a folder, not a file");
        return Err(fail("cannot write", path, source));
    }
    probe(folder_of(path)).map_err(|(what, at, e)| fail(what, &at, e))
}

/// Checks, before anything runs, that files can be written in `flag`'s
/// folder `dir`: made if missing (as `mkdir -p`), a file created in it and
/// removed.
///
/// # Errors
/// [`Unwritable`], naming the flag, the folder and the step that failed.
pub fn prepare_folder(flag: &str, dir: &Path) -> Result<(), Unwritable> {
    probe(dir).map_err(|(what, at, source)| Unwritable { flag: flag.to_owned(), path: dir.into(), what, at, source })
}

/// Makes `dir`, creates and removes a temporary file in it, and removes
/// again the folders it made, so a run refused later leaves nothing behind
/// (the run makes them when it writes).
fn probe(dir: &Path) -> Result<(), (&'static str, PathBuf, std::io::Error)> {
    let made: Vec<&Path> = dir.ancestors().take_while(|d| !d.as_os_str().is_empty() && !d.exists()).collect();
    let tried = (|| {
        std::fs::create_dir_all(dir).map_err(|e| ("cannot create the folder", dir.to_path_buf(), e))?;
        let tmp = temporary(&dir.join("probe"));
        std::fs::File::create_new(&tmp).map_err(|e| ("cannot write in the folder", dir.to_path_buf(), e))?;
        std::fs::remove_file(&tmp).map_err(|e| ("cannot remove a file in the folder", dir.to_path_buf(), e))
    })();
    for folder in made {
        // Deepest first; a folder something else wrote into meanwhile stays.
        let _ = std::fs::remove_dir(folder);
    }
    tried
}

/// A temporary name beside `path`, unique to this process and this call.
fn temporary(path: &Path) -> PathBuf {
    let name = path.file_name().map_or_else(|| "file".into(), |n| n.to_string_lossy());
    let n = TEMPORARIES.fetch_add(1, Ordering::Relaxed);
    folder_of(path).join(format!(".{name}.{}.{n}.tmp", std::process::id()))
}

/// Writes `bytes` to `path` atomically: its folder made if missing, into a
/// temporary file of this process in the same folder, flushed to disk, then renamed over `path`; a
/// reader sees the old file or the whole new one, and a failure leaves no
/// temporary file behind.
///
/// # Errors
/// The first write, flush or rename that fails.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    std::fs::create_dir_all(folder_of(path))?;
    let tmp = temporary(path);
    let written = std::fs::File::create_new(&tmp).and_then(|mut f| {
        f.write_all(bytes)?;
        f.sync_all()
    });
    let renamed = written.and_then(|()| std::fs::rename(&tmp, path));
    if renamed.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    renamed
}

/// Writes `bytes` to `path` atomically ([`write_atomic`]); when that fails,
/// keeps them in a new file of the system's temporary folder, named after
/// `path`, this process and this call.
///
/// # Errors
/// [`NotWritten`], naming the path, why, and where the bytes were kept.
pub fn write_or_keep(path: &Path, bytes: &[u8]) -> Result<(), NotWritten> {
    let error = match write_atomic(path, bytes) {
        Ok(()) => return Ok(()),
        Err(e) => e,
    };
    let name = path.file_name().map_or_else(|| "output".into(), |n| n.to_string_lossy());
    let n = TEMPORARIES.fetch_add(1, Ordering::Relaxed);
    let fallback = std::env::temp_dir().join(format!("bench-client-{}-{n}-{name}", std::process::id()));
    let kept = write_atomic(&fallback, bytes).map(|()| fallback.clone()).map_err(|e| (fallback, e));
    Err(NotWritten { path: path.to_path_buf(), error, kept })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("bench-output-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_missing_folder_is_made_and_a_place_under_a_file_is_refused_naming_the_flag() {
        let dir = scratch("prepare");
        let nested = dir.join("a/b/c.json");
        prepare_file("--json", &nested).unwrap();
        assert!(!dir.join("a").exists(), "the folders the check made are removed again");
        write_atomic(&nested, b"{}").unwrap();
        assert_eq!(std::fs::read(&nested).unwrap(), b"{}", "made as mkdir -p when written");
        prepare_file("--json", &nested).unwrap();
        assert_eq!(std::fs::read_dir(dir.join("a/b")).unwrap().count(), 1, "the probe removed, the file kept");
        std::fs::write(dir.join("file"), "x").unwrap();
        let under = dir.join("file/sub/c.json");
        let err = format!("{:#}", anyhow::Error::from(prepare_file("--json", &under).unwrap_err()));
        let folder = dir.join("file/sub");
        let expected = format!("--json {}: cannot create the folder {}: ", under.display(), folder.display());
        assert_eq!(err, expected + "Not a directory (os error 20)");
        assert!(prepare_folder("--out", &dir.join("file/runs")).unwrap_err().to_string().starts_with("--out "));
        let err = format!("{:#}", anyhow::Error::from(prepare_file("--junit", &dir).unwrap_err()));
        assert!(err.ends_with("a folder, not a file"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_file_is_replaced_whole_and_a_failed_write_is_kept_elsewhere_and_named() {
        let dir = scratch("write");
        let path = dir.join("r.json");
        write_atomic(&path, b"old").unwrap();
        write_or_keep(&path, b"new").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1, "no temporary file left");
        // Its folder replaced by a file: a folder cannot be made there.
        std::fs::remove_dir_all(&dir).unwrap();
        std::fs::write(&dir, "a file").unwrap();
        let err = write_or_keep(&path, b"figures").unwrap_err();
        let kept = err.kept().unwrap().to_path_buf();
        assert_eq!(std::fs::read(&kept).unwrap(), b"figures");
        assert!(kept.file_name().unwrap().to_string_lossy().ends_with("-r.json"), "{}", kept.display());
        assert_eq!(
            err.to_string(),
            format!("cannot write {} (File exists (os error 17)); kept in {} instead", path.display(), kept.display())
        );
        std::fs::remove_file(kept).unwrap();
        std::fs::remove_file(&dir).unwrap();
    }
}
