//! The one writer of the report's Markdown tables: the header and its
//! divider are written once, from the columns and their alignment, and each
//! row from its cells (hyperfine renders its exports through one small
//! table writer the same way), so no table spells its own `|---|--:|`.

use std::fmt::{Display, Write as _};

/// How a column's cells align: text left, numbers right.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Align {
    /// Text.
    Left,
    /// Numbers.
    Right,
}

pub(super) use Align::{Left, Right};

/// A Markdown table being written.
#[derive(Debug)]
pub(super) struct Table {
    text: String,
    columns: usize,
}

impl Table {
    /// A table of `headings`; a heading ending in `:` is right-aligned (the
    /// colon, as in Markdown's `--:`, is not shown).
    pub(super) fn new(headings: &[&str]) -> Self {
        Self::of(headings.iter().map(|h| match h.strip_suffix(':') {
            Some(h) => (h, Right),
            None => (*h, Left),
        }))
    }

    /// A table of `columns`, each a heading and its alignment.
    pub(super) fn of<S: AsRef<str>>(columns: impl IntoIterator<Item = (S, Align)>) -> Self {
        let (mut head, mut divider) = (String::from("|"), String::from("|"));
        let mut n = 0;
        for (heading, align) in columns {
            let _ = write!(head, " {} |", heading.as_ref());
            divider.push_str(match align {
                Left => "---|",
                Right => "--:|",
            });
            n += 1;
        }
        Self { text: format!("{head}\n{divider}\n"), columns: n }
    }

    /// Adds a row of `cells`, one per column.
    ///
    /// # Panics
    /// When the row has another number of cells than the table has columns
    /// (a bug of the caller).
    pub(super) fn row(&mut self, cells: &[&dyn Display]) {
        assert_eq!(cells.len(), self.columns, "a row of {} cells in a table of {} columns", cells.len(), self.columns);
        self.text.push('|');
        for cell in cells {
            let _ = write!(self.text, " {cell} |");
        }
        self.text.push('\n');
    }

    /// The table's Markdown.
    pub(super) fn finish(self) -> String {
        self.text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_divider_and_rows_are_written_once_each() {
        let mut t = Table::new(&["framework", "rate:"]);
        t.row(&[&"axum", &format!("{:.0}", 1234.4)]);
        t.row(&[&"actix", &7]);
        assert_eq!(t.finish(), "| framework | rate |\n|---|--:|\n| axum | 1234 |\n| actix | 7 |\n");
    }

    #[test]
    #[should_panic(expected = "a row of 1 cells in a table of 2 columns")]
    fn a_row_of_the_wrong_width_is_a_bug() {
        Table::of([("a", Left), ("b", Left)]).row(&[&1]);
    }
}
