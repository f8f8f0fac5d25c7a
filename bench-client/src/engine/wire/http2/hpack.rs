//! HPACK (RFC 7541) as the session needs it beyond the decoder: whether a
//! header block leaves the dynamic table as it was, so that a repeat of it
//! can be read by comparing bytes instead of decoding it again.

/// Whether decoding a header block leaves the dynamic table as it is
/// (RFC 7541 §6): every field indexed (`1xxxxxxx`) or a literal without
/// indexing or never indexed (`000xxxxx`, a 4-bit prefix), none with
/// incremental indexing (`01xxxxxx`) and no size update (`001xxxxx`).
/// A malformed block is not (it is decoded, and refused there).
pub(super) fn table_unchanged(block: &[u8]) -> bool {
    /// An integer of an `n`-bit prefix at `i` (§5.1): where it ends.
    fn integer(block: &[u8], i: usize, n: u32) -> Option<(usize, usize)> {
        let max = (1usize << n) - 1;
        let first = usize::from(*block.get(i)?) & max;
        if first < max {
            return Some((first, i + 1));
        }
        let (mut value, mut shift, mut j) = (max, 0u32, i + 1);
        loop {
            let b = *block.get(j)?;
            value = value.checked_add(usize::from(b & 0x7f).checked_shl(shift)?)?;
            j += 1;
            shift += 7;
            if b & 0x80 == 0 || shift > 28 {
                return (b & 0x80 == 0).then_some((value, j));
            }
        }
    }
    /// A string literal at `i` (§5.2): where it ends.
    fn string(block: &[u8], i: usize) -> Option<usize> {
        let (len, j) = integer(block, i, 7)?;
        (j + len <= block.len()).then_some(j + len)
    }
    let mut i = 0;
    while i < block.len() {
        let b = block[i];
        let next = if b & 0x80 != 0 {
            integer(block, i, 7).map(|(_, j)| j)
        } else if b & 0xe0 != 0 {
            // Incremental indexing or a size update: the table changes.
            return false;
        } else {
            integer(block, i, 4)
                .and_then(|(name, j)| if name == 0 { string(block, j) } else { Some(j) })
                .and_then(|j| string(block, j))
        };
        match next {
            Some(j) => i = j,
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::table_unchanged;

    #[test]
    fn only_blocks_that_index_nothing_new_leave_the_table_as_it_is() {
        // :status 200 (static 8), and an index of two bytes (127 + 1 = 128).
        assert!(table_unchanged(&[0x88]) && table_unchanged(&[0x88, 0xff, 0x01]) && table_unchanged(&[]));
        // content-length (static 28) as a literal without indexing, value "13" raw; and never indexed, a new name.
        assert!(table_unchanged(&[0x88, 0x0f, 0x0d, 0x02, b'1', b'3']));
        assert!(table_unchanged(&[0x10, 0x01, b'x', 0x01, b'y', 0x88]));
        // A literal with incremental indexing (01xxxxxx), a size update (001xxxxx).
        assert!(!table_unchanged(&[0x88, 0x61, 0x01, b'x']));
        assert!(!table_unchanged(&[0x3f, 0xe1, 0x1f, 0x88]));
        // Cut short: not known to be harmless.
        assert!(!table_unchanged(&[0x0f, 0x0d, 0x05, b'1']));
        assert!(!table_unchanged(&[0xff]));
    }
}
