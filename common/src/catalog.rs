//! The device list as an application would keep it: replaceable at run time
//! (`PUT /api/devices`), with its JSON serialized once per change for
//! `GET /api/devices/cached`, the practical middle ground between
//! serializing on every request and a payload frozen at start-up.
//!
//! Readers never wait for a writer: the current list and its bytes live in
//! one immutable snapshot behind an `ArcSwap`; a writer builds the next
//! snapshot aside and swaps the pointer, so a reader sees the old or the new
//! snapshot whole, never a torn or empty body.

use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwap;
use bytes::Bytes;
use thiserror::Error;

use crate::devices::{Device, devices};

/// Largest `PUT /api/devices` body accepted, bytes (64 KiB).
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// How long a server keeps reading (and dropping) the rest of a refused body
/// that the client is sending anyway, so that the client can finish and read
/// the 413 instead of meeting a connection reset: actix-web's default
/// `client_disconnect_timeout`, during which it does the same after its
/// answer.
pub const REFUSED_BODY_LINGER: Duration = Duration::from_secs(1);

/// Why a request body was not handed to the application: every server reads
/// `PUT /api/devices` and `POST /fortunes` bodies through its framework and
/// tells the two refusals apart this way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unread {
    /// Over the limit, declared or read (a 413).
    TooLarge,
    /// The body could not be read (the connection broke, bad chunking): the
    /// reason, for a 400.
    Broken(String),
}

/// Refuses a body from its declared length, the value of its
/// `Content-Length` header, before a byte of it is read. No header (a
/// chunked body) or one a server's HTTP parser would not have accepted
/// passes: the length read then decides.
///
/// # Errors
/// [`CatalogError::TooLarge`] for a declared length over [`MAX_BODY_BYTES`].
pub fn check_content_length(content_length: Option<&str>) -> Result<(), CatalogError> {
    if declared_length_over(content_length, MAX_BODY_BYTES) { Err(CatalogError::TooLarge) } else { Ok(()) }
}

/// Whether a body's declared length, the value of its `Content-Length`
/// header, is over `limit` bytes: the rule of [`check_content_length`] for
/// any limit (`POST /fortunes` uses it with
/// [`MAX_FORTUNE_BYTES`](crate::MAX_FORTUNE_BYTES)). No header, or one a
/// server's HTTP parser would not have accepted, is not over.
pub fn declared_length_over(content_length: Option<&str>, limit: usize) -> bool {
    content_length.and_then(|v| v.trim().parse::<u64>().ok()).is_some_and(|n| n > limit as u64)
}

/// One version of the list and its serialization.
#[derive(Debug)]
pub struct Snapshot {
    /// The devices.
    pub devices: Vec<Device>,
    /// `serde_json` of `devices`, compact: what `/api/devices` serializes
    /// per request, byte for byte.
    pub json: Bytes,
}

impl Snapshot {
    fn new(devices: Vec<Device>) -> Self {
        let json = Bytes::from(serde_json::to_vec(&devices).expect("devices serialize to JSON"));
        Self { devices, json }
    }
}

/// Why a replacement list was refused; the old list is kept.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum CatalogError {
    /// The body is over [`MAX_BODY_BYTES`]: status 413.
    #[error("body over {MAX_BODY_BYTES} bytes")]
    TooLarge,
    /// Not JSON, or not an array of `{id, mac, firmware}`: status 400.
    #[error("{0}")]
    Invalid(String),
}

impl CatalogError {
    /// The HTTP status a server answers with.
    pub fn status(&self) -> u16 {
        match self {
            Self::TooLarge => 413,
            Self::Invalid(_) => 400,
        }
    }
}

/// The shared, replaceable device list.
#[derive(Debug)]
pub struct DeviceCatalog {
    current: ArcSwap<Snapshot>,
}

impl Default for DeviceCatalog {
    fn default() -> Self {
        Self::new()
    }
}

impl DeviceCatalog {
    /// Starts with [`devices`].
    pub fn new() -> Self {
        Self { current: ArcSwap::from_pointee(Snapshot::new(devices())) }
    }

    /// The current snapshot (a reference-count increment; never blocks).
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.current.load_full()
    }

    /// The current list, cloned: what a handler that serializes per request
    /// builds (the same allocations as [`devices`]).
    pub fn devices(&self) -> Vec<Device> {
        self.current.load().devices.clone()
    }

    /// The current list's JSON, serialized once per change (no copy).
    pub fn cached_json(&self) -> Bytes {
        self.current.load().json.clone()
    }

    /// Validates `body` as a JSON array of devices and makes it the current
    /// list, re-serialized once.
    ///
    /// # Errors
    /// [`CatalogError::TooLarge`] over [`MAX_BODY_BYTES`];
    /// [`CatalogError::Invalid`] with serde's reason for anything but an
    /// array of `{"id": u32, "mac": string, "firmware": string}` (no other
    /// keys). The current list is kept in both cases.
    pub fn replace_from_json(&self, body: &[u8]) -> Result<(), CatalogError> {
        if body.len() > MAX_BODY_BYTES {
            return Err(CatalogError::TooLarge);
        }
        let devices: Vec<Device> =
            serde_json::from_slice(body).map_err(|e| CatalogError::Invalid(format!("invalid device list: {e}")))?;
        self.current.store(Arc::new(Snapshot::new(devices)));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::devices::devices_json;

    #[test]
    fn starts_with_the_fleet_and_its_exact_bytes() {
        let c = DeviceCatalog::new();
        assert_eq!(c.devices(), devices());
        assert_eq!(c.cached_json(), devices_json());
    }

    #[test]
    fn replacement_reserializes_once() {
        let c = DeviceCatalog::new();
        let body = br#"[{"id":9,"mac":"00-00-00-00-00-09","firmware":"9.9.9"}]"#;
        c.replace_from_json(body).unwrap();
        assert_eq!(c.cached_json(), &body[..]);
        assert_eq!(c.devices()[0].id, 9);
        let a = c.snapshot();
        assert!(Arc::ptr_eq(&a, &c.snapshot()), "no work per read");
    }

    #[test]
    fn declared_lengths_over_the_limit_are_refused_unread() {
        let at_limit = MAX_BODY_BYTES.to_string();
        let over = (MAX_BODY_BYTES + 1).to_string();
        assert_eq!(check_content_length(None), Ok(()));
        assert_eq!(check_content_length(Some("0")), Ok(()));
        assert_eq!(check_content_length(Some(&at_limit)), Ok(()));
        assert_eq!(check_content_length(Some(&over)), Err(CatalogError::TooLarge));
        assert_eq!(check_content_length(Some("18446744073709551615")), Err(CatalogError::TooLarge));
        assert_eq!(check_content_length(Some("not a number")), Ok(()), "the parser's business");
        assert!(declared_length_over(Some("1025"), 1024) && !declared_length_over(Some("1024"), 1024));
    }

    #[test]
    fn bad_input_is_refused_by_kind_and_the_old_list_kept() {
        let c = DeviceCatalog::new();
        let cases: [(&[u8], u16); 5] = [
            (b"not json", 400),
            (br#"{"id":1}"#, 400),
            (br#"[{"id":"one","mac":"m","firmware":"f"}]"#, 400),
            (br#"[{"id":1,"mac":"m","firmware":"f","extra":true}]"#, 400),
            (&[b' '; MAX_BODY_BYTES + 1], 413),
        ];
        for (body, status) in cases {
            let err = c.replace_from_json(body).unwrap_err();
            assert_eq!(err.status(), status, "{err}");
            assert_eq!(c.cached_json(), devices_json(), "old list kept");
        }
        assert_eq!(MAX_BODY_BYTES, 65_536, "64 KiB, as documented");
        let mut at_limit = b"[]".to_vec();
        at_limit.resize(MAX_BODY_BYTES, b' ');
        assert!(c.replace_from_json(&at_limit).is_ok(), "exactly 64 KiB is accepted");
        assert!(c.replace_from_json(b"[]").is_ok(), "an empty fleet is a valid list");
        assert_eq!(c.cached_json(), &b"[]"[..]);
    }
}
