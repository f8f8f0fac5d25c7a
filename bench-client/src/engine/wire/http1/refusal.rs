//! What the framer says when it refuses a response: the part of the
//! grammar broken and the line that broke it, quoted. Off the per-response
//! path: only a refusal comes here.

use super::FrameError;

/// Bytes of an offending line quoted in a refusal.
const QUOTED_BYTES: usize = 80;

/// Up to [`QUOTED_BYTES`] of `bytes` as text (`…` when cut).
pub(super) fn quote(bytes: &[u8]) -> String {
    let mut text = String::from_utf8_lossy(&bytes[..bytes.len().min(QUOTED_BYTES)]).into_owned();
    if bytes.len() > QUOTED_BYTES {
        text.push('…');
    }
    text
}

/// The lines of `buf`, each without its CRLF (or bare LF, RFC 9112 §2.2).
fn lines(buf: &[u8]) -> impl Iterator<Item = &[u8]> {
    buf.split(|&b| b == b'\n').map(|l| l.strip_suffix(b"\r").unwrap_or(l))
}

/// The status line at the start of `buf`, refused.
pub(super) fn status_line(buf: &[u8]) -> FrameError {
    FrameError::StatusLine(quote(lines(buf).next().unwrap_or_default()))
}

/// The chunk-size line (or what stands where a delimiter should) at the
/// start of `rest`, refused.
pub(super) fn bad_chunk(rest: &[u8]) -> FrameError {
    FrameError::BadChunk(quote(lines(rest).next().unwrap_or_default()))
}

/// The head at the start of `buf`, which `httparse` refused with `e`: the
/// status line, or the first header line out of the grammar.
pub(super) fn out_of_grammar(buf: &[u8], e: httparse::Error) -> FrameError {
    if matches!(e, httparse::Error::Status | httparse::Error::Version) {
        return status_line(buf);
    }
    let mut first = true;
    for line in lines(buf).skip(1).take_while(|l| !l.is_empty()) {
        if !is_field_line(line, !first) {
            return FrameError::HeaderLine(quote(line));
        }
        first = false;
    }
    FrameError::Head(e)
}

/// Whether `line` is a field line, `field-name ":" OWS field-value OWS`
/// (RFC 9112 §5; 9110 §5.1, §5.5), or, when `may_continue` (a field line
/// precedes it), the continuation of a folded one: whitespace first, then
/// field-value bytes (obs-fold, RFC 9112 §5.2).
pub(super) fn is_field_line(line: &[u8], may_continue: bool) -> bool {
    let is_value = |v: &[u8]| v.iter().all(|&b| b == b'\t' || b == b' ' || (0x21..=0x7e).contains(&b) || b >= 0x80);
    if may_continue && matches!(line.first(), Some(b' ' | b'\t')) {
        return is_value(line);
    }
    let Some(colon) = line.iter().position(|&b| b == b':') else { return false };
    let name = &line[..colon];
    !name.is_empty() && name.iter().all(|&b| is_tchar(b)) && is_value(&line[colon + 1..])
}

/// `tchar` of RFC 9110 §5.6.2: the bytes of a token (a field name).
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}
