//! What a successful response carries beyond its status and its bytes,
//! when a server answers through middleware: a body compressed with gzip
//! (compared once decoded) and headers the layers add. Checked on every
//! response of such a route by the load loop, and in preflight, by this one
//! function.

use std::io::Read;

/// The shape of a successful response: plain ([`Shape::default`]), or as
/// a server behind middleware answers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Shape {
    /// `Content-Encoding: gzip`, the body compared with the expected bytes
    /// once decoded; without it, no `Content-Encoding` at all.
    pub gzip: bool,
    /// Headers (lower-case names) every response must carry.
    pub headers: Vec<&'static str>,
}

/// How a response differs from its shape, by kind.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Misshapen {
    /// A header the shape requires is absent.
    #[error("no {0} header")]
    Missing(&'static str),
    /// `Content-Encoding` other than the shape says (`None`: absent).
    #[error("Content-Encoding {got:?} where {wanted:?} was expected")]
    Coding {
        /// What the response said.
        got: Option<String>,
        /// What the shape wants (`None`: no coding).
        wanted: Option<&'static str>,
    },
    /// A gzip body that does not decode.
    #[error("a gzip body that does not decode: {0}")]
    Undecodable(String),
    /// The body (decoded) is not the expected bytes.
    #[error("a body of {got} bytes (decoded) other than the {expected} expected")]
    Body {
        /// Its length, decoded (at most one byte past the expected length: decoding stops there).
        got: usize,
        /// The expected length.
        expected: usize,
    },
}

impl Shape {
    /// Whether nothing but the status and the bytes is checked.
    pub fn is_plain(&self) -> bool {
        !self.gzip && self.headers.is_empty()
    }

    /// Checks a response whose header fields are `fields` (name, value) and
    /// whose body, decoded from chunked, is `body`, against this shape and
    /// the `expected` bytes; `scratch` holds the decoded body (kept between
    /// calls, so the loop does not allocate per response). Decoding stops one
    /// byte past the expected length: a body that inflates without bound
    /// costs no more memory than a right one.
    ///
    /// # Errors
    /// The first difference, by kind.
    pub fn check(
        &self,
        fields: &[(&[u8], &[u8])],
        body: &[u8],
        expected: &[u8],
        scratch: &mut Vec<u8>,
    ) -> Result<(), Misshapen> {
        let field = |name: &str| fields.iter().find(|(n, _)| n.eq_ignore_ascii_case(name.as_bytes())).map(|(_, v)| *v);
        if let Some(missing) = self.headers.iter().find(|name| field(name).is_none()) {
            return Err(Misshapen::Missing(missing));
        }
        let coding = field("content-encoding");
        let wanted = self.gzip.then_some("gzip");
        if coding.map(|c| c.trim_ascii().to_ascii_lowercase()) != wanted.map(|w| w.as_bytes().to_vec()) {
            let got = coding.map(|c| String::from_utf8_lossy(c).into_owned());
            return Err(Misshapen::Coding { got, wanted });
        }
        let decoded = if self.gzip {
            scratch.clear();
            let limit = u64::try_from(expected.len()).unwrap_or(u64::MAX).saturating_add(1);
            flate2::read::GzDecoder::new(body)
                .take(limit)
                .read_to_end(scratch)
                .map_err(|e| Misshapen::Undecodable(e.to_string()))?;
            scratch.as_slice()
        } else {
            body
        };
        if decoded != expected {
            return Err(Misshapen::Body { got: decoded.len(), expected: expected.len() });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        encoder.write_all(bytes).unwrap();
        encoder.finish().unwrap()
    }

    #[test]
    fn a_gzip_shape_decodes_the_body_and_every_difference_is_named_by_kind() {
        let shape = Shape { gzip: true, headers: vec!["x-request-id"] };
        let expected = b"[{\"id\":1}]";
        let body = gzip(expected);
        let fields: [(&[u8], &[u8]); 2] = [(b"Content-Encoding", b"gzip"), (b"X-Request-Id", b"7")];
        let mut scratch = Vec::new();
        assert_eq!(shape.check(&fields, &body, expected, &mut scratch), Ok(()));
        assert_eq!(shape.check(&fields[..1], &body, expected, &mut scratch), Err(Misshapen::Missing("x-request-id")));
        let plain: [(&[u8], &[u8]); 1] = [(b"x-request-id", b"7")];
        assert_eq!(
            shape.check(&plain, expected, expected, &mut scratch),
            Err(Misshapen::Coding { got: None, wanted: Some("gzip") })
        );
        // A corrupted stream: its last bytes (CRC and length) changed.
        let mut corrupt = body.clone();
        let n = corrupt.len();
        corrupt[n - 5] ^= 0xff;
        assert!(matches!(shape.check(&fields, &corrupt, expected, &mut scratch), Err(Misshapen::Undecodable(_))));
        // Another body, well compressed; and one that inflates far past the expected bytes.
        assert_eq!(
            shape.check(&fields, &gzip(b"[{\"id\":2}]"), expected, &mut scratch),
            Err(Misshapen::Body { got: 10, expected: 10 })
        );
        let bomb = gzip(&vec![b'a'; 1 << 20]);
        assert_eq!(shape.check(&fields, &bomb, expected, &mut scratch), Err(Misshapen::Body { got: 11, expected: 10 }));
        assert!(scratch.capacity() < 4096, "decoding stopped past the expected length");
    }

    #[test]
    fn a_plain_shape_refuses_a_coding_and_compares_the_bytes() {
        let shape = Shape::default();
        assert!(shape.is_plain());
        let mut scratch = Vec::new();
        assert_eq!(shape.check(&[], b"OK", b"OK", &mut scratch), Ok(()));
        let gz: [(&[u8], &[u8]); 1] = [(b"content-encoding", b"gzip")];
        assert!(matches!(shape.check(&gz, b"OK", b"OK", &mut scratch), Err(Misshapen::Coding { .. })));
    }
}
