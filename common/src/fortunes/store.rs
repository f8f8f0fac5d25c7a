//! The fortunes a server serves: a pool of SQLite connections, the page
//! rendered once per change of the table, and the one writer.
//!
//! Readers of the cached page never wait: the page lives behind an
//! `ArcSwap`, as the device list does ([`crate::catalog`]). A write inserts
//! its row, reads the table and renders the next page inside one
//! transaction, commits, and only then swaps the page in, all under one
//! lock: so once `POST /fortunes` has been answered, every reader of
//! `/fortunes/cached` gets a page with that row, never an older or a torn
//! one, and a failed write changes neither the table nor the page.

use std::num::NonZeroUsize;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use arc_swap::ArcSwap;
use bytes::Bytes;
use r2d2::Pool;
use r2d2_sqlite::SqliteConnectionManager;
use rusqlite::{Connection, OpenFlags, TransactionBehavior};
use thiserror::Error;

use super::db::DatabaseError;
use super::{Fortune, SEED, render};

/// Largest `POST /fortunes` body (one message) accepted, bytes.
pub const MAX_FORTUNE_BYTES: usize = 1024;

/// How long a request waits for a free connection before its answer is a 500.
const CHECKOUT_TIMEOUT: Duration = Duration::from_secs(5);

/// The file must exist (no `CREATE`): a missing database is an error, not a
/// new empty one. `NO_MUTEX`: a pooled connection is used by one thread at a time.
const OPEN_FLAGS: OpenFlags = OpenFlags::SQLITE_OPEN_READ_WRITE.union(OpenFlags::SQLITE_OPEN_NO_MUTEX);

/// Why a request on the fortunes failed.
///
/// The `Display` text is the one-line reason a server answers with; it is
/// not a contract: tell kinds apart with [`FortuneError::status`].
#[derive(Debug, Error)]
pub enum FortuneError {
    /// A `POST` body over [`MAX_FORTUNE_BYTES`]: status 413.
    #[error("fortune over {MAX_FORTUNE_BYTES} bytes")]
    TooLarge,
    /// A `POST` body that is not a fortune (not UTF-8, blank, a control
    /// character): status 400.
    #[error("{0}")]
    Invalid(String),
    /// SQLite failed: status 500.
    #[error("fortunes database: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// No connection was free within the pool's timeout: status 500.
    #[error("fortunes database: {0}")]
    Pool(#[from] r2d2::Error),
}

impl FortuneError {
    /// The HTTP status a server answers with.
    pub fn status(&self) -> u16 {
        match self {
            Self::TooLarge => 413,
            Self::Invalid(_) => 400,
            Self::Sqlite(_) | Self::Pool(_) => 500,
        }
    }
}

/// The fortunes of one server; cloning shares them (one reference count).
#[derive(Debug, Clone)]
pub struct Fortunes {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    pool: Pool<SqliteConnectionManager>,
    /// The page of the table as it is, rendered once per change.
    page: ArcSwap<Bytes>,
    /// Held by the one writer from its insert to the swap of the page.
    writer: Mutex<()>,
}

impl Fortunes {
    /// Opens the database at `path` with a pool of `connections`
    /// connections, reads the table and renders the cached page.
    ///
    /// One connection is opened and read first, so that a missing or corrupt
    /// file (or one without the `fortune` table) is one error at once, not
    /// the pool's retries until its timeout.
    ///
    /// # Errors
    /// [`DatabaseError::Sqlite`] with SQLite's reason (`unable to open
    /// database file`, `file is not a database`, `no such table: fortune`);
    /// [`DatabaseError::Pool`] when the pool cannot open its connections.
    pub fn open(path: &Path, connections: NonZeroUsize) -> Result<Self, DatabaseError> {
        let sqlite = |source| DatabaseError::Sqlite { path: path.to_owned(), source };
        let first = Connection::open_with_flags(path, OPEN_FLAGS).map_err(sqlite)?;
        let page = render(all(&first).map_err(sqlite)?);
        drop(first);
        let pool = Pool::builder()
            .max_size(u32::try_from(connections.get()).unwrap_or(u32::MAX))
            // A file on this machine does not drop connections: no check per
            // checkout, and no connection closed for idling or age.
            .test_on_check_out(false)
            .idle_timeout(None)
            .max_lifetime(None)
            .connection_timeout(CHECKOUT_TIMEOUT)
            .build(SqliteConnectionManager::file(path).with_flags(OPEN_FLAGS))
            .map_err(|source| DatabaseError::Pool { path: path.to_owned(), source })?;
        Ok(Self { inner: Arc::new(Inner { pool, page: ArcSwap::from_pointee(page), writer: Mutex::new(()) }) })
    }

    /// `GET /fortunes`: reads every row, adds the request-time row, sorts and
    /// renders. Blocks on SQLite: call it off the async workers.
    ///
    /// # Errors
    /// [`FortuneError::Sqlite`] or [`FortuneError::Pool`] (status 500).
    pub fn render_page(&self) -> Result<Bytes, FortuneError> {
        let conn = self.inner.pool.get()?;
        Ok(render(all(&conn)?))
    }

    /// `GET /blocking/inline` and `/blocking/offloaded`: a short blocking
    /// call, [`SEED_READS`] synchronous reads of the seed rows (about 50 µs
    /// of SQLite work in release), answered with what they read
    /// ([`seed_read_body`], whatever rows were added since). The inline
    /// route calls it on the async worker, the offloaded one the way its
    /// framework documents for blocking work.
    ///
    /// # Errors
    /// [`FortuneError::Sqlite`] or [`FortuneError::Pool`] (status 500).
    pub fn read_seed(&self) -> Result<Bytes, FortuneError> {
        let conn = self.inner.pool.get()?;
        let mut statement = conn.prepare_cached("SELECT message FROM fortune WHERE id BETWEEN 1 AND ?1 ORDER BY id")?;
        let (mut rows, mut bytes) = (0, 0);
        for _ in 0..SEED_READS {
            (rows, bytes) = (0, 0);
            let mut read = statement.query([SEED.len() as i64])?;
            while let Some(row) = read.next()? {
                rows += 1;
                bytes += row.get_ref(0)?.as_str().map_or(0, str::len);
            }
        }
        Ok(Bytes::from(seed_read_json(rows, bytes)))
    }

    /// `GET /fortunes/cached`: the page of the table as it is, rendered once
    /// per change (no copy; never blocks).
    pub fn cached_page(&self) -> Bytes {
        Bytes::clone(&self.inner.page.load())
    }

    /// `POST /fortunes`: validates `body` as one message and adds it as a
    /// row, then renders the cached page anew. Blocks on SQLite: call it off
    /// the async workers.
    ///
    /// # Errors
    /// [`FortuneError::TooLarge`] over [`MAX_FORTUNE_BYTES`];
    /// [`FortuneError::Invalid`] when `body` is not UTF-8, is blank or holds
    /// a control character (a fortune is one line of text); a database
    /// error. The table and the page are unchanged in every case.
    pub fn add(&self, body: &[u8]) -> Result<(), FortuneError> {
        let message = validate(body)?;
        let _writer = self.inner.writer.lock().unwrap_or_else(PoisonError::into_inner);
        let mut conn = self.inner.pool.get()?;
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        tx.execute("INSERT INTO fortune (message) VALUES (?1)", [message])?;
        let page = render(all(&tx)?);
        tx.commit()?;
        self.inner.page.store(Arc::new(page));
        Ok(())
    }
}

/// Every row, in the order SQLite returns them (the page sorts them).
fn all(conn: &Connection) -> rusqlite::Result<Vec<Fortune>> {
    let mut statement = conn.prepare_cached("SELECT id, message FROM fortune")?;
    let rows = statement.query_map([], |row| Ok(Fortune { id: row.get(0)?, message: row.get(1)? }))?;
    rows.collect()
}

/// `body` as a message: at most [`MAX_FORTUNE_BYTES`], UTF-8, not blank, no
/// control character.
fn validate(body: &[u8]) -> Result<&str, FortuneError> {
    if body.len() > MAX_FORTUNE_BYTES {
        return Err(FortuneError::TooLarge);
    }
    let message =
        std::str::from_utf8(body).map_err(|e| FortuneError::Invalid(format!("fortune is not valid UTF-8: {e}")))?;
    if message.trim().is_empty() {
        return Err(FortuneError::Invalid("empty fortune".to_owned()));
    }
    if let Some(c) = message.chars().find(|c| c.is_control()) {
        return Err(FortuneError::Invalid(format!("fortune holds a control character (U+{:04X})", u32::from(c))));
    }
    Ok(message)
}

/// Reads of the seed rows per blocking call ([`Fortunes::read_seed`]):
/// about 50 µs of SQLite work per call in release on a 2-CPU virtual machine.
pub const SEED_READS: usize = 8;

fn seed_read_json(rows: usize, bytes: usize) -> String {
    format!("{{\"rows\":{rows},\"bytes\":{bytes}}}")
}

/// The body of the blocking routes: the rows and the bytes of messages
/// [`SEED`] holds.
pub fn seed_read_body() -> Vec<u8> {
    seed_read_json(SEED.len(), SEED.iter().map(|(_, m)| m.len()).sum()).into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fortunes::{FortuneDb, SEED, seed, seed_page};

    fn open() -> (FortuneDb, Fortunes) {
        let db = FortuneDb::create().unwrap();
        let fortunes = Fortunes::open(db.path(), NonZeroUsize::new(2).unwrap()).unwrap();
        (db, fortunes)
    }

    #[test]
    fn a_fresh_database_serves_the_seed_page_per_request_and_cached() {
        let (_db, f) = open();
        assert_eq!(f.render_page().unwrap(), seed_page());
        assert_eq!(f.cached_page(), seed_page());
        let bytes: usize = SEED.iter().map(|(_, m)| m.len()).sum();
        assert_eq!(f.read_seed().unwrap(), format!("{{\"rows\":12,\"bytes\":{bytes}}}").as_bytes());
        assert_eq!(f.cached_page().as_ptr(), f.cached_page().as_ptr(), "no work per cached read");
    }

    #[test]
    fn an_added_row_is_in_both_pages_once_add_returns() {
        let (_db, f) = open();
        let message = "<b>Ünïcödé</b> & 'quotes' — 日本語";
        f.add(message.as_bytes()).unwrap();
        let mut rows = seed();
        rows.push(Fortune { id: SEED.len() as i64 + 1, message: message.to_owned() });
        let expected = render(rows);
        assert_eq!(f.cached_page(), expected);
        assert_eq!(f.render_page().unwrap(), expected);
        assert_eq!(f.read_seed().unwrap(), seed_read_body(), "the blocking read answers the seed alone");
        let page = String::from_utf8(expected.to_vec()).unwrap();
        assert!(page.contains("&#60;b&#62;Ünïcödé&#60;/b&#62; &#38; &#39;quotes&#39; — 日本語"), "{page}");
    }

    #[test]
    fn refusals_are_by_kind_and_change_nothing() {
        let (_db, f) = open();
        let cases: [(&[u8], u16, &str); 8] = [
            (b"", 400, "empty fortune"),
            (b"  ", 400, "empty fortune"),
            (b"\xff\xfe", 400, "fortune is not valid UTF-8: invalid utf-8 sequence of 1 bytes from index 0"),
            (b"caf\xc3", 400, "fortune is not valid UTF-8: incomplete utf-8 byte sequence from index 3"),
            (b"two\nlines", 400, "fortune holds a control character (U+000A)"),
            (b"nul\0", 400, "fortune holds a control character (U+0000)"),
            (&[b'a'; MAX_FORTUNE_BYTES + 1], 413, "fortune over 1024 bytes"),
            (&[b'a'; 64 * 1024], 413, "fortune over 1024 bytes"),
        ];
        for (body, status, reason) in cases {
            let err = f.add(body).unwrap_err();
            assert_eq!((err.status(), err.to_string().as_str()), (status, reason), "{body:?}");
            assert_eq!(f.cached_page(), seed_page());
            assert_eq!(f.render_page().unwrap(), seed_page());
        }
        f.add(&[b'a'; MAX_FORTUNE_BYTES]).expect("exactly the limit is accepted");
    }

    #[test]
    fn concurrent_writers_leave_the_cache_with_every_row() {
        let (_db, f) = open();
        std::thread::scope(|s| {
            for t in 0..4 {
                let f = &f;
                s.spawn(move || {
                    for i in 0..10 {
                        f.add(format!("writer {t} row {i}").as_bytes()).unwrap();
                    }
                });
            }
        });
        let page = f.cached_page();
        assert_eq!(page, f.render_page().unwrap(), "the cache is the table");
        assert_eq!(page.windows(8).filter(|w| w == b"<tr><td>").count(), SEED.len() + 1 + 40);
    }

    #[test]
    fn a_missing_or_corrupt_database_is_one_error_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let one = NonZeroUsize::MIN;
        let missing = dir.path().join("missing.db");
        let garbage = dir.path().join("garbage.db");
        std::fs::write(&garbage, vec![0x5a; 8192]).unwrap();
        let empty = dir.path().join("empty.db");
        std::fs::write(&empty, b"").unwrap();
        let started = std::time::Instant::now();
        for (path, reason) in [
            (&missing, "unable to open database file"),
            (&garbage, "file is not a database"),
            (&empty, "no such table: fortune"),
        ] {
            let err = Fortunes::open(path, one).unwrap_err();
            let text = err.to_string();
            assert!(matches!(err, DatabaseError::Sqlite { .. }), "{text}");
            assert!(text.starts_with(&path.display().to_string()) && text.contains(reason), "{text}");
            assert!(!text.contains('\n'), "one line: {text:?}");
        }
        assert!(!missing.exists(), "a missing database is not created");
        assert!(started.elapsed() < CHECKOUT_TIMEOUT, "no waiting for the pool's timeout");
    }
}
