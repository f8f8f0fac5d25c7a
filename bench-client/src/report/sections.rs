//! The sections of a run's answer, listed once: their order, which of them
//! each rendering shows, and the tables each holds. The terminal output of
//! `suite` and `ab` ([`terminal_answer`]) and `report.md` ([`markdown_sections`],
//! inside [`super::report`], in `page.rs`) both iterate [`sections`], so a new table is a
//! variant here and is shown alike by both; `report.html` is `report.md`
//! rendered ([`super::html_page`]), so it follows.

use std::fmt::Write as _;
use std::path::Path;

use super::deltas::{ab_table, delta_table};
use super::flames::FlameGraphs;
use super::markdown::{flamegraph_table, profiles_table, profiling_cost_table, proportion_table, sweep_table};
use super::notes;
use crate::model::Scenario;
use crate::results::Results;

/// One section of the answer, in the order every rendering shows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    /// With the `frameworks` scenario: every pair of frameworks head to
    /// head, the first question a reader brings.
    Frameworks,
    /// Every change with its interval: the deltas of a suite, or `ab`'s
    /// table. The answer, so it comes first.
    Changes,
    /// The latency percentiles' changes at a fixed load.
    Latency,
    /// With the `http2` scenario: what each server granted HTTP/2.
    Http2Settings,
    /// With `suite --count`: each delta timed beside the same change counted.
    Counted,
    /// With the `middleware` scenario: what each layer adds per request in each framework.
    Middleware,
    /// With the `extractors` scenario: what each typed extractor adds over
    /// reading the request raw, in each framework.
    Extractors,
    /// With the `routes` scenario: what the routes registered ahead of a
    /// route add to a request of it, in each framework.
    Routes,
    /// With the `memory` scenario: what a connection costs each framework in memory.
    Memory,
    /// µs of server CPU per request of every route, and what each delta
    /// saves (a suite's only: `ab` compares builds, not routes).
    Proportion,
    /// The layer sweep.
    Sweep,
    /// The deltas of the other profiles in the results folder beside these.
    Profiles,
    /// What the profiler costs, measured in the session.
    ProfilingCost,
    /// The charts (images, so in `report.md` only).
    Charts,
    /// The flame graphs with their figures, and the differential ones.
    FlameGraphs,
}

/// Where the answer is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Medium {
    /// The terminal, after `suite` or `ab` ends: the tables a reader acts on.
    Terminal,
    /// `report.md` (and the `report.html` made from it): everything.
    Markdown,
}

impl Section {
    /// Every section, in order.
    pub const ALL: [Self; 15] = [
        Self::Frameworks,
        Self::Changes,
        Self::Latency,
        Self::Http2Settings,
        Self::Counted,
        Self::Middleware,
        Self::Extractors,
        Self::Routes,
        Self::Memory,
        Self::Proportion,
        Self::Sweep,
        Self::Profiles,
        Self::ProfilingCost,
        Self::Charts,
        Self::FlameGraphs,
    ];

    /// The section's tables as Markdown, empty when the results hold none
    /// of it (the charts are images: see [`markdown_sections`]).
    fn tables(self, answer: &Answer<'_>) -> String {
        let results = answer.results;
        match self {
            Self::Frameworks => super::rivals_table(results),
            Self::Changes if results.meta.ab.is_some() => ab_table(results),
            Self::Changes => delta_table(results),
            Self::Latency => super::latency_table(results),
            Self::Http2Settings => super::http2_settings_table(results),
            Self::Counted => super::counted_beside_timed(results),
            Self::Middleware => super::scenario_table(results, None, Scenario::Middleware),
            Self::Extractors => super::scenario_table(results, None, Scenario::Extractors),
            Self::Routes => super::scenario_table(results, None, Scenario::Routes),
            Self::Memory => results.memory.as_ref().map(super::memory_table).unwrap_or_default(),
            Self::Proportion => proportion_table(results),
            Self::Sweep => sweep_table(results),
            Self::Profiles => {
                let mut all: Vec<&Results> = vec![results];
                all.extend(answer.other_profiles.iter());
                profiles_table(&all)
            }
            Self::ProfilingCost => profiling_cost_table(results),
            Self::Charts => String::new(),
            Self::FlameGraphs => flamegraph_table(results, answer.flamegraphs),
        }
    }

    /// Its title, the same in every rendering (the change table and the
    /// charts have none).
    fn title(self) -> &'static str {
        match self {
            Self::Frameworks => "Frameworks head to head",
            Self::Latency => "Latency at a fixed load",
            Self::Http2Settings => "HTTP/2 settings each server granted",
            Self::Counted => "Counted beside timed",
            Self::Middleware => "What each layer costs",
            Self::Extractors => "What each extractor costs",
            Self::Routes => "What the routes ahead of a route cost",
            Self::Memory => "What a connection costs in memory",
            Self::Proportion => "In proportion",
            Self::Sweep => "Layer sweep",
            Self::Profiles => "Profiles side by side",
            Self::ProfilingCost => "Cost of profiling",
            Self::FlameGraphs => "Flame graphs",
            Self::Changes | Self::Charts => "",
        }
    }
}

/// What the answer is made of: a run's results and what was written beside
/// them.
#[derive(Debug, Clone, Copy)]
pub struct Answer<'a> {
    /// The run's results.
    pub results: &'a Results,
    /// The newest results of the other profiles in the same folder.
    pub other_profiles: &'a [Results],
    /// The flame graphs written (empty without a profiler).
    pub flamegraphs: &'a FlameGraphs,
}

/// The sections `on` shows for `results`, in order. The terminal leaves out
/// what it cannot show (charts) and the cost of profiling, and for `ab`
/// keeps to the change and its latency (the rest of `ab`'s answer is in its
/// `report.md`); no medium shows `ab` the routes in proportion, nor a suite
/// that timed no scenario (`memory` alone) a change table.
pub fn sections(results: &Results, on: Medium) -> Vec<Section> {
    let ab = results.meta.ab.is_some();
    // The `memory` scenario alone times nothing: no change table to show.
    let timed = ab || !results.meta.scenarios.is_empty();
    Section::ALL
        .into_iter()
        .filter(|section| match (section, on) {
            (Section::Changes | Section::Latency | Section::Http2Settings, _) => timed,
            (
                Section::Frameworks
                | Section::Counted
                | Section::Middleware
                | Section::Extractors
                | Section::Routes
                | Section::Memory
                | Section::Proportion,
                _,
            ) => !ab,
            (Section::ProfilingCost | Section::Charts, Medium::Terminal) => false,
            (Section::Sweep | Section::Profiles | Section::FlameGraphs, Medium::Terminal) => !ab,
            (_, Medium::Markdown) => true,
        })
        .collect()
}

/// The answer as `suite` and `ab` print it when they end: the change table,
/// then each other section that has a table under its one-line title; the
/// flame graphs' paths are under `dir`, the run folder.
pub fn terminal_answer(answer: &Answer<'_>, dir: &Path) -> String {
    let mut out = String::new();
    for section in sections(answer.results, Medium::Terminal) {
        let tables = section.tables(answer);
        if section == Section::Changes {
            let _ = writeln!(out, "\n{tables}");
            continue;
        }
        if tables.is_empty() {
            continue;
        }
        let title = section.title();
        let _ = match section {
            // Its table says what it is.
            Section::Latency => writeln!(out, "{tables}"),
            Section::Profiles => writeln!(out, "{title} (latest of each in the results folder):\n\n{tables}"),
            Section::FlameGraphs => writeln!(out, "{title} (paths under {}):\n\n{tables}", dir.display()),
            Section::Frameworks => writeln!(out, "\n{title}:\n\n{tables}"),
            Section::Changes | Section::ProfilingCost | Section::Charts => Ok(()),
            _ => writeln!(out, "{title}:\n\n{tables}"),
        };
    }
    out
}

/// The charts a section of `report.md` sets above its table: the ending of
/// their paths and their alt text (any other chart goes under "Charts").
const SECTION_CHARTS: [(Section, &str, &str); 6] = [
    (Section::Changes, "/changes.svg", "every change with its 95 % interval"),
    (Section::Frameworks, "/frameworks.svg", "every pair of frameworks head to head, 95 % intervals"),
    (Section::Memory, "/memory.svg", "each framework's memory against the keep-alive connections"),
    (Section::Middleware, "/middleware.svg", "each layer's change of successful requests per second, 95 % intervals"),
    (
        Section::Extractors,
        "/extractors.svg",
        "each typed extractor's change of successful requests per second over the raw route, 95 % intervals",
    ),
    (
        Section::Routes,
        "/routes.svg",
        "each count of filler routes' change of successful requests per second over none, 95 % intervals",
    ),
];

/// `section`'s charts among `charts` as Markdown images, each followed by a blank line.
fn section_images(section: Section, charts: &[String]) -> String {
    let mut out = String::new();
    for (_, ending, alt) in SECTION_CHARTS.iter().filter(|(s, ..)| *s == section) {
        for c in charts.iter().filter(|c| c.ends_with(ending)) {
            let _ = writeln!(out, "![{alt}]({c})\n");
        }
    }
    out
}

/// The sections of `report.md`: the chart of every change (its path in
/// `charts` ends in `/changes.svg`) above the change table, then each other
/// section that has something under its `##` heading, the other `charts`
/// under "Charts".
pub(super) fn markdown_sections(answer: &Answer<'_>, charts: &[String]) -> String {
    let mut out = String::new();
    let others: Vec<&String> =
        charts.iter().filter(|c| !SECTION_CHARTS.iter().any(|(_, ending, _)| c.ends_with(ending))).collect();
    for section in sections(answer.results, Medium::Markdown) {
        if section == Section::Charts {
            if !others.is_empty() {
                out.push_str("\n## Charts\n\n");
                for c in &others {
                    let _ = writeln!(out, "![{c}]({c})\n");
                }
            }
            continue;
        }
        let tables = section.tables(answer);
        let images = section_images(section, charts);
        if section == Section::Changes {
            out.push_str(&images);
            out.push_str(&tables);
            continue;
        }
        if tables.is_empty() {
            continue;
        }
        let title = section.title();
        // Each a heading, its charts, then its table.
        let _ = match section {
            Section::Frameworks => write!(out, "{images}## {title}\n\n{tables}\n"),
            Section::Http2Settings => write!(out, "\n## {title}\n\n{}{tables}", notes::HTTP2_SETTINGS),
            Section::Profiles => {
                write!(out, "\n## {title}\n\nThe latest results of each profile in this results folder.\n\n{tables}")
            }
            Section::ProfilingCost => write!(out, "\n## {title}\n\n{}{tables}", notes::PROFILING_COST),
            Section::Changes | Section::Charts => Ok(()),
            _ => write!(out, "\n## {title}\n\n{images}{tables}"),
        };
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Framework;
    use crate::results::AbMeta;
    use crate::results::fixtures::{results, two_rounds};

    fn suite() -> Results {
        let variants = [
            ("floor", "plaintext", 100_000),
            ("payload", "per_request", 80_000),
            ("payload", "preserialized", 100_000),
        ];
        results(two_rounds(Framework::Actix, &variants))
    }

    fn ab(mut results: Results) -> Results {
        results.meta.ab = Some(AbMeta {
            before: "main".into(),
            before_commit: "a".into(),
            before_layers: 10,
            after: "HEAD".into(),
            after_commit: "b".into(),
            after_layers: 10,
            expect_status: 200,
            changes: Vec::new(),
        });
        results
    }

    #[test]
    fn each_medium_shows_its_sections_in_the_one_order() {
        use Section::*;
        let (suite, ab) = (suite(), ab(suite()));
        assert_eq!(sections(&suite, Medium::Markdown), Section::ALL);
        // The terminal: every section but the profiler's cost and the charts (images).
        let terminal: Vec<Section> =
            Section::ALL.into_iter().filter(|s| !matches!(s, ProfilingCost | Charts)).collect();
        assert_eq!(sections(&suite, Medium::Terminal), terminal);
        assert_eq!(sections(&ab, Medium::Terminal), [Changes, Latency, Http2Settings]);
        assert_eq!(
            sections(&ab, Medium::Markdown),
            [Changes, Latency, Http2Settings, Sweep, Profiles, ProfilingCost, Charts, FlameGraphs]
        );
    }

    #[test]
    fn the_memory_scenario_shows_its_table_under_its_chart_and_in_the_terminal() {
        let mut results = suite();
        results.memory = Some(crate::results::fixtures::memory_report());
        let table = super::super::memory_table(results.memory.as_ref().unwrap());
        assert!(table.contains("| axum | 1.0 | 10.0 | 20.0 | 0.10 | 1 |"), "{table}");
        let flamegraphs = FlameGraphs::default();
        let answer = Answer { results: &results, other_profiles: &[], flamegraphs: &flamegraphs };
        let charts = ["charts/memory.svg".to_owned(), "charts/rate.svg".to_owned()];
        let page = markdown_sections(&answer, &charts);
        let chart = "![each framework's memory against the keep-alive connections](charts/memory.svg)";
        let section = format!("\n## What a connection costs in memory\n\n{chart}\n\n{table}");
        assert!(page.contains(&section), "{page}");
        assert_eq!(page.matches("charts/memory.svg").count(), 1, "not again under Charts: {page}");
        assert!(page.contains("![charts/rate.svg](charts/rate.svg)"), "{page}");
        let text = terminal_answer(&answer, Path::new("out"));
        assert!(text.contains(&format!("What a connection costs in memory:\n\n{table}")), "{text}");
        // `ab` has none of it.
        assert!(!sections(&ab(results.clone()), Medium::Markdown).contains(&Section::Memory));
        // The memory scenario alone: its table, no change table.
        let mut alone = results.clone();
        (alone.meta.scenarios, alone.runs, alone.deltas) = (Vec::new(), Vec::new(), Vec::new());
        let answer = Answer { results: &alone, ..answer };
        assert_eq!(
            terminal_answer(&answer, Path::new("out")),
            format!("What a connection costs in memory:\n\n{table}\n")
        );
    }

    #[test]
    fn the_terminal_prints_the_change_table_then_each_table_under_its_title() {
        let results = suite();
        let flamegraphs = FlameGraphs::default();
        let answer = Answer { results: &results, other_profiles: &[], flamegraphs: &flamegraphs };
        let text = terminal_answer(&answer, Path::new("out"));
        let proportion = proportion_table(&results);
        assert!(!proportion.is_empty());
        assert_eq!(text, format!("\n{}\nIn proportion:\n\n{proportion}\n", delta_table(&results)));
        let ab = ab(suite());
        let answer = Answer { results: &ab, ..answer };
        assert_eq!(terminal_answer(&answer, Path::new("out")), format!("\n{}\n", ab_table(&ab)));
    }
}
