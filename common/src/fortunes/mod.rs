//! Fortunes: a request that does real work, after the "fortunes" test of the
//! TechEmpower benchmarks. Every `GET /fortunes` reads all rows of the
//! `fortune` table of an embedded SQLite database, adds one row at request
//! time, sorts by message and renders an HTML page with escaping;
//! `GET /fortunes/cached` serves the same page rendered once per change of
//! the table, and `POST /fortunes` adds a row.
//!
//! The servers only glue this to their framework: [`FortuneDb::create`]
//! makes the database file (in a temporary directory of its own, removed
//! when the [`FortuneDb`] is dropped), [`Fortunes::open`] opens the pool and
//! renders the cached page, and a handler calls [`Fortunes::render_page`]
//! or [`Fortunes::add`] off the async workers (both block on SQLite) or
//! [`Fortunes::cached_page`] (never blocks). The page of a fresh database is
//! [`seed_page`], what the route table expects.

mod db;
mod page;
mod store;

pub use self::db::{DatabaseError, FortuneDb};
pub use self::page::{render, seed_page};
pub use self::store::{FortuneError, Fortunes, MAX_FORTUNE_BYTES, SEED_READS, seed_read_body};

/// One row of the `fortune` table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fortune {
    /// Its id (`INTEGER PRIMARY KEY`); 0 for the row added at request time.
    pub id: i64,
    /// The message, any UTF-8 text; escaped when rendered.
    pub message: String,
}

/// The row every page adds at request time, with id 0.
pub const ADDITIONAL_FORTUNE: &str = "Additional fortune added at request time.";

/// The rows the database starts with: the dozen classic fortunes of the
/// TechEmpower test, among them one holding a `<script>` tag (escaping),
/// two with an em dash and one in Japanese (UTF-8 bytes, and a sort by
/// bytes that puts it last).
pub const SEED: [(i64, &str); 12] = [
    (1, "fortune: No such file or directory"),
    (2, "A computer scientist is someone who fixes things that aren't broken."),
    (3, "After enough decimal places, nobody gives a damn."),
    (4, "A bad random number generator: 1, 1, 1, 1, 1, 4.33e+67, 1, 1, 1"),
    (5, "A computer program does what you tell it to do, not what you want it to do."),
    (6, "Emacs is a nice operating system, but I prefer UNIX. — Tom Christaensen"),
    (7, "Any program that runs right is obsolete."),
    (8, "A list is only as strong as its weakest link. — Donald Knuth"),
    (9, "Feature: A bug with seniority."),
    (10, "Computers make very fast, very accurate mistakes."),
    (11, "<script>alert(\"This should not be displayed in a browser alert box.\");</script>"),
    (12, "フレームワークのベンチマーク"),
];

/// [`SEED`] as rows.
pub fn seed() -> Vec<Fortune> {
    SEED.iter().map(|&(id, message)| Fortune { id, message: message.to_owned() }).collect()
}
