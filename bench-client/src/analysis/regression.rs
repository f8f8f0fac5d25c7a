//! What a regression is: one rule for every gate (`ab`'s exit, `compare`,
//! the CI files), so a change fails all of them or none.

use super::{Change, Verdict};

/// Which way a measure improves, for [`Change::is_regression`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    /// Throughput: more successful requests per second.
    Higher,
    /// A latency percentile: lower.
    Lower,
}

impl Change {
    /// Whether this change is a regression beyond `threshold_percent`: its
    /// interval says slower (a latency change's verdict already reads higher
    /// as slower) and its estimate moved more than the threshold the worse
    /// way.
    pub fn is_regression(&self, threshold_percent: f64, better: Better) -> bool {
        let worse_by = match better {
            Better::Higher => -self.change_percent,
            Better::Lower => self.change_percent,
        };
        self.verdict == Verdict::Slower && worse_by > threshold_percent
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_regression_is_significantly_slower_beyond_the_threshold_the_worse_way() {
        let change = |percent, verdict| Change {
            change_percent: percent,
            ci_low_percent: Some(percent - 1.0),
            ci_high_percent: Some(percent + 1.0),
            verdict,
        };
        assert!(change(-3.0, Verdict::Slower).is_regression(2.0, Better::Higher));
        assert!(!change(-2.0, Verdict::Slower).is_regression(2.0, Better::Higher), "not beyond");
        assert!(!change(-3.0, Verdict::NoSignificantChange).is_regression(2.0, Better::Higher));
        assert!(change(3.0, Verdict::Slower).is_regression(2.0, Better::Lower), "a percentile that rose");
        assert!(!change(-3.0, Verdict::Slower).is_regression(2.0, Better::Lower));
        assert!(!change(3.0, Verdict::Faster).is_regression(2.0, Better::Higher));
    }
}
