//! What each framework's server granted HTTP/2 (its first `SETTINGS`,
//! read in the `http2` scenario's preflight): the defaults the scenario's
//! deltas were measured under, since they differ between the frameworks.

use super::table::Table;
use crate::results::{Http2Grant, Results};

/// `grant` in one line, as the suite says it when a server starts.
pub fn http2_grant_text(grant: &Http2Grant) -> String {
    let [streams, window, frame, table, list] = cells(grant);
    format!(
        "{streams} concurrent streams, initial window {window}, frames up to {frame}, \
         header table {table}, header list {list}"
    )
}

/// The cells of `grant`: concurrent streams, initial window, largest frame,
/// header table, largest header list.
fn cells(grant: &Http2Grant) -> [String; 5] {
    let bound = |n: Option<u32>, as_text: &dyn Fn(u32) -> String| n.map_or_else(|| "unbounded".to_owned(), as_text);
    [
        bound(grant.max_concurrent_streams, &|n| n.to_string()),
        bytes(grant.initial_window_size),
        bytes(grant.max_frame_size),
        bytes(grant.header_table_size),
        bound(grant.max_header_list_size, &bytes),
    ]
}

/// `n` bytes in the largest binary unit that divides it (1 MiB, 16 KiB, 65535 B).
fn bytes(n: u32) -> String {
    match n {
        0 => "0 B".to_owned(),
        n if n % (1 << 20) == 0 => format!("{} MiB", n >> 20),
        n if n % (1 << 10) == 0 => format!("{} KiB", n >> 10),
        n => format!("{n} B"),
    }
}

/// The frameworks' grants as a table, empty without any.
pub fn http2_settings_table(results: &Results) -> String {
    if results.meta.http2_settings.is_empty() {
        return String::new();
    }
    let mut table = Table::new(&[
        "framework",
        "concurrent streams:",
        "initial window:",
        "largest frame:",
        "header table:",
        "largest header list:",
    ]);
    for grant in &results.meta.http2_settings {
        let [streams, window, frame, header_table, list] = cells(grant);
        table.row(&[&grant.framework.name(), &streams, &window, &frame, &header_table, &list]);
    }
    table.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Framework;
    use crate::results::fixtures::results;

    #[test]
    fn a_grant_reads_with_its_bounds_and_unbounded_where_none_was_sent() {
        let axum = Http2Grant {
            framework: Framework::Axum,
            max_concurrent_streams: Some(200),
            initial_window_size: 1_048_576,
            max_frame_size: 16_384,
            header_table_size: 4_096,
            max_header_list_size: Some(16_384),
        };
        let rocket = Http2Grant {
            framework: Framework::Rocket,
            max_concurrent_streams: None,
            initial_window_size: 65_535,
            max_header_list_size: None,
            ..axum
        };
        assert_eq!(
            http2_grant_text(&axum),
            "200 concurrent streams, initial window 1 MiB, frames up to 16 KiB, header table 4 KiB, header list 16 KiB"
        );
        let mut with = results(Vec::new());
        assert_eq!(http2_settings_table(&with), "", "no table without the http2 scenario");
        with.meta.http2_settings = vec![axum, rocket];
        assert_eq!(
            http2_settings_table(&with),
            "| framework | concurrent streams | initial window | largest frame | header table | largest header list |\n\
             |---|--:|--:|--:|--:|--:|\n\
             | axum | 200 | 1 MiB | 16 KiB | 4 KiB | 16 KiB |\n\
             | rocket | unbounded | 65535 B | 16 KiB | 4 KiB | unbounded |\n"
        );
    }
}
