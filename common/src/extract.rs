//! What the extractor routes receive and answer, so that each framework's
//! typed extractor (`Json<T>`, `Path`, `Query`, `Form`) can be set against
//! reading the same raw bytes by hand, with the same answer byte for byte.
//!
//! Each pair of routes takes the same request: a JSON body of 100 bytes or
//! of 10 KiB ([`Batch`]), a device and a reading in the path, the query or
//! an urlencoded form ([`Params`]). The typed route hands it to the
//! framework's extractor; the raw route reads the bytes as they came and
//! parses them here ([`batch_from_slice`], [`Params::from_path`],
//! [`Params::from_pairs`]). Both answer `text/plain`: [`Batch::answer`],
//! [`Params::answer`].

use lazy_static::lazy_static;
use serde::{Deserialize, Serialize};

/// The device every extractor request names.
pub const DEVICE: &str = "sensor-0042";
/// The reading every path, query and form request names.
pub const READING: u32 = 7;

/// Where the typed path route's parameters start: `/extract/path/{device}/{reading}`.
pub const PATH_PREFIX: &str = "/extract/path/";
/// Where the raw path route's parameters start.
pub const PATH_RAW_PREFIX: &str = "/extract/path-raw/";
/// The typed query route's path.
pub const QUERY_PATH: &str = "/extract/query";
/// The raw query route's path.
pub const QUERY_RAW_PATH: &str = "/extract/query-raw";

/// What the JSON routes receive: a device's batch of readings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Batch {
    /// The device that sent it.
    pub device: String,
    /// Its readings, oldest first.
    pub readings: Vec<Reading>,
}

/// One reading of a [`Batch`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reading {
    /// When it was taken, milliseconds since the Unix epoch.
    pub at_ms: u64,
    /// Temperature.
    pub celsius: f64,
    /// Relative humidity, percent.
    pub humidity: f64,
    /// Whether the sensor called it valid.
    pub ok: bool,
}

impl Batch {
    /// The batch of `n` readings the client sends.
    fn of(n: usize) -> Self {
        let readings = (0..n as u64)
            .map(|i| Reading {
                at_ms: 1_733_500_000_000 + i * 1_000,
                celsius: 20.0 + (i % 10) as f64 * 0.25,
                humidity: 40.0 + (i % 7) as f64 * 1.5,
                ok: i % 13 != 12,
            })
            .collect();
        Self { device: DEVICE.to_owned(), readings }
    }

    /// The answer to it, as every server gives it: `sensor-0042: 1 readings`.
    pub fn answer(&self) -> String {
        format!("{}: {} readings", self.device, self.readings.len())
    }
}

/// Reads a JSON batch from raw bytes, as a raw route does by hand.
///
/// # Errors
/// Bytes that are not a [`Batch`] in JSON.
pub fn batch_from_slice(bytes: &[u8]) -> Result<Batch, serde_json::Error> {
    serde_json::from_slice(bytes)
}

/// Readings in the small body: 1, for 102 bytes.
const SMALL_READINGS: usize = 1;
/// Readings in the large body: the fewest past 10 KiB.
const LARGE_READINGS: usize = 156;

lazy_static! {
    static ref SMALL_BODY: Vec<u8> = serde_json::to_vec(&Batch::of(SMALL_READINGS)).expect("a batch serializes");
    static ref LARGE_BODY: Vec<u8> = serde_json::to_vec(&Batch::of(LARGE_READINGS)).expect("a batch serializes");
}

/// The JSON body of `POST /extract/json` and `/extract/json-raw` (102 bytes).
pub fn small_json() -> &'static [u8] {
    &SMALL_BODY
}

/// The JSON body of `POST /extract/json-10k` and `/extract/json-10k-raw`
/// (10,267 bytes: 156 readings).
pub fn large_json() -> &'static [u8] {
    &LARGE_BODY
}

/// What the path, query and form routes receive: a device and a reading.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Params {
    /// The device.
    pub device: String,
    /// The reading's number.
    pub reading: u32,
}

/// Why raw bytes were not [`Params`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParamsError {
    /// A field missing, unknown, given twice or escaped (`%`, `+`).
    #[error("expected device=NAME&reading=N, unescaped")]
    Shape,
    /// A reading that is not a number.
    #[error("reading is not a number")]
    Reading,
}

impl Params {
    /// The params every path, query and form request carries.
    pub fn sent() -> Self {
        Self { device: DEVICE.to_owned(), reading: READING }
    }

    /// The answer to them, as every server gives it: `sensor-0042: reading 7`.
    pub fn answer(&self) -> String {
        answer(&self.device, self.reading)
    }

    /// Reads `PREFIX{device}/{reading}` from a request's raw path.
    ///
    /// # Errors
    /// A path not under `prefix`, or not two segments below it.
    pub fn from_path(path: &str, prefix: &str) -> Result<Self, ParamsError> {
        let tail = path.strip_prefix(prefix).ok_or(ParamsError::Shape)?;
        let (device, reading) = tail.split_once('/').ok_or(ParamsError::Shape)?;
        Self::of(device, reading)
    }

    /// Reads `device=NAME&reading=N` (either order) from a raw query string
    /// or urlencoded body, without unescaping: an escaped value is refused.
    ///
    /// # Errors
    /// A field missing, unknown, twice or escaped; a reading not a number.
    pub fn from_pairs(bytes: &[u8]) -> Result<Self, ParamsError> {
        let text = std::str::from_utf8(bytes).map_err(|_| ParamsError::Shape)?;
        let (mut device, mut reading) = (None, None);
        for pair in text.split('&') {
            let slot = match pair.split_once('=') {
                Some(("device", v)) => (&mut device, v),
                Some(("reading", v)) => (&mut reading, v),
                _ => return Err(ParamsError::Shape),
            };
            if slot.0.replace(slot.1).is_some() {
                return Err(ParamsError::Shape);
            }
        }
        Self::of(device.ok_or(ParamsError::Shape)?, reading.ok_or(ParamsError::Shape)?)
    }

    fn of(device: &str, reading: &str) -> Result<Self, ParamsError> {
        if device.is_empty() || device.contains(['%', '+', '/']) {
            return Err(ParamsError::Shape);
        }
        let reading = reading.parse().map_err(|_| ParamsError::Reading)?;
        Ok(Self { device: device.to_owned(), reading })
    }
}

/// The answer to a device and a reading (a framework's own params type,
/// such as Rocket's borrowed ones, answers through it).
pub fn answer(device: &str, reading: u32) -> String {
    format!("{device}: reading {reading}")
}

/// `device=sensor-0042&reading=7`: the query and the form body sent.
pub const PAIRS: &str = "device=sensor-0042&reading=7";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bodies_are_their_sizes_and_read_back_as_sent() {
        assert_eq!(small_json().len(), 102, "{}", String::from_utf8_lossy(small_json()));
        assert_eq!(large_json().len(), 10_267);
        let fewer = serde_json::to_vec(&Batch::of(LARGE_READINGS - 1)).unwrap();
        assert!(fewer.len() < 10_240 && large_json().len() >= 10_240, "the fewest readings past 10 KiB");
        let small = batch_from_slice(small_json()).unwrap();
        assert_eq!(small, Batch::of(1));
        assert_eq!(small.answer(), "sensor-0042: 1 readings");
        assert_eq!(batch_from_slice(large_json()).unwrap().answer(), "sensor-0042: 156 readings");
        assert!(batch_from_slice(b"{\"device\":1}").is_err());
    }

    #[test]
    fn params_read_by_hand_as_an_extractor_reads_them() {
        assert_eq!(PAIRS, format!("device={DEVICE}&reading={READING}"));
        assert_eq!(Params::from_pairs(PAIRS.as_bytes()), Ok(Params::sent()));
        assert_eq!(Params::from_pairs(b"reading=7&device=sensor-0042"), Ok(Params::sent()));
        assert_eq!(Params::from_path("/extract/path-raw/sensor-0042/7", "/extract/path-raw/"), Ok(Params::sent()));
        assert_eq!(Params::sent().answer(), "sensor-0042: reading 7");
        for bad in ["device=a", "device=a&reading=1&reading=2", "device=a%20b&reading=1", "x=1", ""] {
            assert_eq!(Params::from_pairs(bad.as_bytes()), Err(ParamsError::Shape), "{bad}");
        }
        assert_eq!(Params::from_pairs(b"device=a&reading=x"), Err(ParamsError::Reading));
        assert_eq!(Params::from_path("/extract/path-raw/a/b/c", "/extract/path-raw/"), Err(ParamsError::Reading));
        assert_eq!(Params::from_path("/elsewhere/a/1", "/extract/path-raw/"), Err(ParamsError::Shape));
    }
}
