//! The database on disk: `fortunes.db` in a temporary directory of its own,
//! created and filled from [`SEED`] at server start, removed with the
//! directory when the [`FortuneDb`] that owns it is dropped (a server holds
//! it until it has stopped).

use std::io;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, params};
use tempfile::TempDir;
use thiserror::Error;

use super::SEED;

/// The database's file name inside its directory.
const FILE_NAME: &str = "fortunes.db";

/// Why the database could not be created or opened at start-up; the server
/// then does not start. The `Display` text is one line, with the cause.
#[derive(Debug, Error)]
pub enum DatabaseError {
    /// The temporary directory could not be created (`TMPDIR` missing, not
    /// a directory, full, …).
    #[error("cannot create its temporary directory: {0}")]
    TempDir(#[source] io::Error),
    /// SQLite refused the file: missing, not a database, no `fortune` table, …
    #[error("{}: {source}", path.display())]
    Sqlite {
        /// The database file.
        path: PathBuf,
        /// SQLite's reason.
        #[source]
        source: rusqlite::Error,
    },
    /// The connection pool could not open its connections.
    #[error("{}: connection pool: {source}", path.display())]
    Pool {
        /// The database file.
        path: PathBuf,
        /// The pool's reason.
        #[source]
        source: r2d2::Error,
    },
}

/// The database file and the temporary directory it lives in; both are
/// removed when this is dropped.
#[derive(Debug)]
pub struct FortuneDb {
    dir: TempDir,
    path: PathBuf,
}

impl FortuneDb {
    /// Creates `fortunes-XXXXXX/fortunes.db` under the temporary directory
    /// (`TMPDIR`, else `/tmp`) with the `fortune` table (`id INTEGER PRIMARY
    /// KEY, message TEXT NOT NULL`) holding [`SEED`], in WAL mode (readers
    /// never wait for the writer).
    ///
    /// # Errors
    /// When the directory or the database cannot be created; nothing is left behind.
    pub fn create() -> Result<Self, DatabaseError> {
        let dir = tempfile::Builder::new().prefix("fortunes-").tempdir().map_err(DatabaseError::TempDir)?;
        let path = dir.path().join(FILE_NAME);
        fill(&path).map_err(|source| DatabaseError::Sqlite { path: path.clone(), source })?;
        Ok(Self { dir, path })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The temporary directory holding it (and SQLite's `-wal`, `-shm` files).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

fn fill(path: &Path) -> rusqlite::Result<()> {
    let mut conn = Connection::open(path)?;
    let mode: String = conn.pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))?;
    debug_assert_eq!(mode.to_ascii_lowercase(), "wal");
    let tx = conn.transaction()?;
    tx.execute("CREATE TABLE fortune (id INTEGER PRIMARY KEY, message TEXT NOT NULL)", [])?;
    {
        let mut insert = tx.prepare("INSERT INTO fortune (id, message) VALUES (?1, ?2)")?;
        for (id, message) in SEED {
            insert.execute(params![id, message])?;
        }
    }
    tx.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creates_the_seed_rows_and_removes_its_directory_when_dropped() {
        let db = FortuneDb::create().unwrap();
        assert!(db.path().starts_with(db.dir()) && db.path().is_file());
        let dir = db.dir().to_owned();
        assert!(dir.file_name().unwrap().to_str().unwrap().starts_with("fortunes-"));
        let conn = Connection::open(db.path()).unwrap();
        let rows: Vec<(i64, String)> = conn
            .prepare("SELECT id, message FROM fortune ORDER BY id")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(rows, SEED.map(|(id, m)| (id, m.to_owned())));
        drop(conn);
        drop(db);
        assert!(!dir.exists(), "{} removed", dir.display());
    }
}
