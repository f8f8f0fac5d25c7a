//! JUnit XML, the Jenkins format as quick-junit writes it (checked in the
//! tests with xmllint against `bench-client/tests/fixtures/junit.xsd`).

use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};

use super::Judged;
use crate::report::format::change_with_ci;

/// JUnit XML: one test suite named `suite`, one test case per change,
/// failed when it is a significant slowdown beyond `threshold_percent`
/// (the message says by how much), skipped when it is not judged.
///
/// # Errors
/// When the XML cannot be written.
pub(super) fn junit(suite: &str, judged: &[Judged], threshold_percent: f64) -> anyhow::Result<String> {
    let mut test_suite = TestSuite::new(suite);
    for j in judged {
        let verdict = format!("{} ({})", change_with_ci(&j.change), j.change.verdict.label());
        let status = if !j.judged {
            let mut skipped = TestCaseStatus::skipped();
            skipped.set_message(format!("not judged: {verdict}"));
            skipped
        } else if j.regression(threshold_percent) {
            let mut failure = TestCaseStatus::non_success(NonSuccessKind::Failure);
            let worse = if j.better == crate::analysis::Better::Lower { "costlier" } else { "slower" };
            failure.set_message(format!("{worse} beyond {threshold_percent} %: {verdict}")).set_type("regression");
            failure
        } else {
            TestCaseStatus::success()
        };
        let mut case = TestCase::new(j.name.clone(), status);
        case.set_classname(suite).set_system_out(verdict);
        test_suite.add_test_case(case);
    }
    let mut report = Report::new("bench-client");
    report.add_test_suite(test_suite);
    Ok(report.to_string()?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::{Change, Verdict};

    fn change(percent: f64, low: f64, high: f64, verdict: Verdict) -> Change {
        Change { change_percent: percent, ci_low_percent: Some(low), ci_high_percent: Some(high), verdict }
    }

    #[test]
    fn a_regression_fails_its_test_case_and_an_unjudged_row_is_skipped() {
        let judged = [
            Judged {
                name: "axum /a".into(),
                change: change(-5.0, -7.0, -3.0, Verdict::Slower),
                saved_us: None,
                judged: true,
                better: crate::analysis::Better::Higher,
            },
            Judged {
                name: "axum /b".into(),
                change: change(-1.0, -1.5, -0.5, Verdict::Slower),
                saved_us: None,
                judged: true,
                better: crate::analysis::Better::Higher,
            },
            Judged {
                name: "axum /c".into(),
                change: change(-9.0, -12.0, -6.0, Verdict::Slower),
                saved_us: None,
                judged: false,
                better: crate::analysis::Better::Higher,
            },
        ];
        let xml = junit("ab", &judged, 2.0).unwrap();
        let doc = roxmltree::Document::parse(&xml).unwrap();
        let root = doc.root_element();
        assert_eq!(
            (root.tag_name().name(), root.attribute("tests"), root.attribute("failures")),
            ("testsuites", Some("3"), Some("1"))
        );
        let cases: Vec<_> = doc.descendants().filter(|n| n.has_tag_name("testcase")).collect();
        let failed: Vec<_> = cases.iter().filter(|c| c.children().any(|n| n.has_tag_name("failure"))).collect();
        assert_eq!(failed.len(), 1);
        assert_eq!(failed[0].attribute("name"), Some("axum /a"));
        let skipped: Vec<_> = cases.iter().filter(|c| c.children().any(|n| n.has_tag_name("skipped"))).collect();
        assert_eq!(skipped.iter().map(|c| c.attribute("name")).collect::<Vec<_>>(), [Some("axum /c")]);
    }
}
