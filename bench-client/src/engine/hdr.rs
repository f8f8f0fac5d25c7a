//! A latency histogram as text: HdrHistogram's V2 + DEFLATE encoding in
//! base64, the `HISTFAAA…` strings that other HdrHistogram implementations
//! (Java, C, Go, Python's `hdrhistogram`) read and write. Results carry
//! their histograms in this form so that several clients' runs can be added
//! exactly (bucket by bucket) instead of averaging percentiles.
//!
//! The histogram's bounds and significant digits travel in the encoding's
//! header, so a decoded histogram says how it was recorded.

use std::fmt;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{DeserializeError, Deserializer, Serializer, V2DeflateSerializer};
use serde::{Deserialize, Serialize};

/// A histogram encoded as HdrHistogram V2 + DEFLATE, base64 (standard
/// alphabet, padded): it starts with `HISTFAAA`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct EncodedHistogram(String);

/// Why an [`EncodedHistogram`] does not decode.
#[derive(Debug, thiserror::Error)]
pub enum HdrError {
    /// The text is not base64.
    #[error("the histogram is not base64: {0}")]
    Base64(#[source] base64::DecodeError),
    /// The bytes are not an HdrHistogram V2 (+ DEFLATE) encoding.
    #[error("the histogram is not an HdrHistogram V2 encoding: {0}")]
    Encoding(#[source] DeserializeError),
}

impl EncodedHistogram {
    /// Encodes `h`.
    pub fn encode(h: &Histogram<u64>) -> Self {
        let mut bytes = Vec::new();
        // Writing to a Vec cannot fail, and V2 fails only on counts above
        // i64::MAX, which no run records.
        V2DeflateSerializer::new().serialize(h, &mut bytes).expect("a histogram of counts below i64::MAX encodes");
        Self(STANDARD.encode(bytes))
    }

    /// The histogram, with the bounds and significant digits it was recorded with.
    ///
    /// # Errors
    /// [`HdrError`]: not base64, or not an HdrHistogram encoding.
    pub fn decode(&self) -> Result<Histogram<u64>, HdrError> {
        let bytes = STANDARD.decode(self.0.trim()).map_err(HdrError::Base64)?;
        Deserializer::new().deserialize(&mut bytes.as_slice()).map_err(HdrError::Encoding)
    }

    /// The base64 text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<String> for EncodedHistogram {
    /// Wraps text read from elsewhere; [`EncodedHistogram::decode`] checks it.
    fn from(text: String) -> Self {
        Self(text)
    }
}

impl fmt::Display for EncodedHistogram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};

    use super::*;
    use crate::engine::latency_histogram;

    #[test]
    fn an_encoding_starts_histfaaa_and_decodes_to_the_same_histogram() {
        let mut h = latency_histogram();
        for v in [1, 250, 251, 999, 1_000_000, 60_000_000] {
            h.record(v).unwrap();
        }
        let e = EncodedHistogram::encode(&h);
        assert!(e.as_str().starts_with("HISTFAAA"), "{e}");
        let back = e.decode().unwrap();
        assert_eq!(back, h);
        assert_eq!((back.low(), back.high(), back.sigfig()), (h.low(), h.high(), h.sigfig()));
        assert_eq!(back.max(), h.max());
        assert!(EncodedHistogram::from("HISTFAAA!".to_owned()).decode().is_err());
        assert!(EncodedHistogram::from("AAAA".to_owned()).decode().is_err(), "base64, but no cookie");
    }

    #[test]
    fn two_halves_encoded_decoded_and_added_equal_the_whole_at_every_quantile() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(17);
        let (mut whole, mut a, mut b) = (latency_histogram(), latency_histogram(), latency_histogram());
        for i in 0..100_000u32 {
            // Log-uniform over 1 µs … 10 s: every magnitude of the histogram.
            let v = 10f64.powf(rng.random_range(0.0..7.0)) as u64;
            whole.record(v.max(1)).unwrap();
            if i % 2 == 0 { &mut a } else { &mut b }.record(v.max(1)).unwrap();
        }
        let mut sum = EncodedHistogram::encode(&a).decode().unwrap();
        sum.add(EncodedHistogram::encode(&b).decode().unwrap()).unwrap();
        assert_eq!(sum, whole, "bucket counts equal");
        for q in (0..=1000).map(|k| f64::from(k) / 1000.0) {
            assert_eq!(sum.value_at_quantile(q), whole.value_at_quantile(q), "q = {q}");
        }
        assert_eq!((sum.len(), sum.max(), sum.min()), (whole.len(), whole.max(), whole.min()));
    }
}
