//! `bench-client report FILE --table …`: a front-page table of a committed
//! results file, printed as the README shows it (the README's tables are
//! this command's output, and a test renders them again); `--chart …
//! --output PATH` draws one of its charts as the README shows it.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::Outcome;
use crate::model::Scenario;
use crate::report;

/// Which table `report` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FrontTable {
    /// Every route's cost per framework, fastest first: which framework is faster, on what.
    Floors,
    /// The deltas' first columns: what each change saves, with its interval and verdict.
    Changes,
    /// With `suite --count`: each delta timed beside the same change counted.
    Counted,
    /// With the `http2` scenario: the SETTINGS each server granted, then what HTTP/2 saves or
    /// costs against HTTP/1.1 in each framework.
    Http2,
    /// With the `frameworks` scenario: every pair of frameworks head to head, with their ratios
    /// and verdicts (with --confirmed-by, a second session's beside, the verdicts both give).
    Frameworks,
    /// With the `middleware` scenario: what each layer adds per request in each framework (with
    /// --confirmed-by, the second session's mean beside, and where it leaves the first's interval).
    Middleware,
    /// With the `extractors` scenario: what each typed extractor adds over reading the request raw,
    /// in each framework (with --confirmed-by, as for middleware).
    Extractors,
    /// With the `routes` scenario: what 10, 100 and 1,000 routes registered ahead of a route add to
    /// a request of it, in each framework (with --confirmed-by, as for middleware).
    Routes,
}

/// Which chart `report --chart` draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FrontChart {
    /// With the `frameworks` scenario: every pair's ratio of server CPU per request with its
    /// interval, one group per route.
    Frameworks,
    /// Every delta's change with its interval, one group per framework.
    Changes,
    /// With the `middleware` scenario: each layer's change against the bare route, per framework.
    Middleware,
    /// With the `extractors` scenario: each typed extractor's change against its raw route, per
    /// framework.
    Extractors,
    /// With the `routes` scenario: each count of routes ahead against none, per framework.
    Routes,
}

/// Flags of `report`, as typed.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A suite's `results.json` (or the run folder holding it).
    pub file: PathBuf,
    /// The table to print.
    #[arg(long, value_enum, default_value = "floors")]
    pub table: FrontTable,
    /// With --table frameworks: a second session's results, whose verdicts must agree for one to stand.
    #[arg(long, value_name = "FILE")]
    pub confirmed_by: Option<PathBuf>,
    /// Draw this chart as an SVG instead of printing a table.
    #[arg(long, value_enum, requires = "output", conflicts_with = "table")]
    pub chart: Option<FrontChart>,
    /// With --chart: the SVG file to write.
    #[arg(long, short, value_name = "PATH", requires = "chart")]
    pub output: Option<PathBuf>,
}

/// The results in `file` (or the run folder holding them).
fn read_results(file: &std::path::Path) -> anyhow::Result<crate::results::Results> {
    crate::results::read(file)
}

/// Draws the chart `args` asks for into its output.
///
/// # Errors
/// A file that cannot be read, holds nothing to draw, or a chart that cannot be written.
pub(super) fn drawn(args: &ReportArgs, chart: FrontChart, output: &std::path::Path) -> anyhow::Result<()> {
    let results = read_results(&args.file)?;
    let drew = match chart {
        FrontChart::Frameworks => report::charts::draw_frameworks(output, &results)?,
        FrontChart::Changes => report::charts::draw_changes(output, &results)?,
        FrontChart::Middleware => report::charts::draw_middleware(output, &results)?,
        FrontChart::Extractors => report::charts::draw_extractors(output, &results)?,
        FrontChart::Routes => report::charts::draw_routes(output, &results)?,
    };
    anyhow::ensure!(
        drew,
        "{}: nothing to draw (no {} in it)",
        args.file.display(),
        match chart {
            FrontChart::Frameworks => "frameworks scenario",
            FrontChart::Changes => "delta",
            FrontChart::Middleware => "middleware scenario",
            FrontChart::Extractors => "extractors scenario",
            FrontChart::Routes => "routes scenario",
        }
    );
    Ok(())
}

/// The table `args` asks for, under the line saying what it was measured on.
///
/// # Errors
/// A file that cannot be read or is not a suite's results.
pub(super) fn rendered(args: &ReportArgs) -> anyhow::Result<String> {
    let path = crate::results::results_file(&args.file);
    let results = read_results(&args.file)?;
    anyhow::ensure!(
        args.confirmed_by.is_none()
            || matches!(
                args.table,
                FrontTable::Frameworks | FrontTable::Middleware | FrontTable::Extractors | FrontTable::Routes
            ),
        "--confirmed-by holds two sessions against each other: it goes with --table frameworks, middleware, \
         extractors or routes"
    );
    let table = match args.table {
        FrontTable::Floors => {
            anyhow::ensure!(
                results.meta.ab.is_none(),
                "{}: an `ab` file measures BEFORE and AFTER on the same routes; --table changes sets them against each other",
                path.display()
            );
            report::floors_table(&results)
        }
        FrontTable::Changes => report::changes_excerpt(&results),
        FrontTable::Counted => {
            let table = report::counted_beside_timed(&results);
            anyhow::ensure!(
                !table.is_empty(),
                "{}: no counted deltas (a suite run with --count has them)",
                path.display()
            );
            table
        }
        FrontTable::Http2 => {
            let settings = report::http2_settings_table(&results);
            anyhow::ensure!(
                !settings.is_empty(),
                "{}: no http2 scenario (suite --scenarios http2 has it)",
                path.display()
            );
            let mut http2 = results.clone();
            http2.deltas.retain(|d| d.scenario == Scenario::Http2);
            format!("{settings}\n{}", report::changes_excerpt(&http2))
        }
        FrontTable::Middleware | FrontTable::Extractors | FrontTable::Routes => {
            let scenario = match args.table {
                FrontTable::Middleware => Scenario::Middleware,
                FrontTable::Routes => Scenario::Routes,
                _ => Scenario::Extractors,
            };
            let second = args.confirmed_by.as_deref().map(read_results).transpose()?;
            let table = report::scenario_table(&results, second.as_ref(), scenario);
            anyhow::ensure!(
                !table.is_empty(),
                "{}: no {scenario} scenario (suite --scenarios {scenario} has it)",
                path.display()
            );
            return Ok(match &second {
                None => format!("{}\n\n{table}", report::machine_line(&results)),
                Some(other) => format!(
                    "First session: {}\n\nSecond session: {}\n\n{table}",
                    report::machine_line(&results),
                    report::machine_line(other)
                ),
            });
        }
        FrontTable::Frameworks => {
            anyhow::ensure!(
                !results.rivals.is_empty(),
                "{}: no frameworks scenario (suite --scenarios frameworks has it)",
                path.display()
            );
            match &args.confirmed_by {
                None => report::rivals_table(&results),
                Some(second) => {
                    let other = read_results(second)?;
                    anyhow::ensure!(
                        !other.rivals.is_empty(),
                        "{}: no frameworks scenario (suite --scenarios frameworks has it)",
                        second.display()
                    );
                    let table = report::confirmed_table(&results, &other);
                    return Ok(format!(
                        "First session: {}\n\nSecond session: {}\n\n{table}",
                        report::machine_line(&results),
                        report::machine_line(&other)
                    ));
                }
            }
        }
    };
    Ok(format!("{}\n\n{}", report::machine_line(&results), table))
}

/// Prints the table; 2 when the file cannot be read.
pub(super) fn run(args: &ReportArgs) -> Outcome {
    if let (Some(chart), Some(output)) = (args.chart, &args.output) {
        return super::print_or_usage(drawn(args, chart, output).map(|()| format!("wrote {}\n", output.display())));
    }
    super::print_or_usage(rendered(args))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::{FrontTable, ReportArgs, rendered};

    /// The committed sessions whose tables the README and the run's own README show: the file,
    /// its table and the page it is on.
    const README_TABLES: [(&str, FrontTable, &str, &str); 4] = [
        (SESSIONS[0], FrontTable::Floors, "floors", "bench/runs/2026-12-07-frameworks/README.md"),
        (
            "bench/runs/2026-12-04-frameworks/session-1.results.json.gz",
            FrontTable::Floors,
            "floors",
            "bench/runs/2026-12-04-frameworks/README.md",
        ),
        (
            "bench/runs/2026-12-03-counted/bench-count.results.json.gz",
            FrontTable::Counted,
            "counted",
            "bench/runs/2026-12-03-counted/README.md",
        ),
        (
            "bench/runs/2026-12-01-own-change/ex2.results.json.gz",
            FrontTable::Changes,
            "changes",
            "bench/runs/2026-12-01-own-change/README.md",
        ),
    ];

    /// The two sessions of `make bench` whose verdicts the front page gives, first and second.
    const SESSIONS: [&str; 2] = [
        "bench/runs/2026-12-07-frameworks/session-1.results.json.gz",
        "bench/runs/2026-12-07-frameworks/session-2.results.json.gz",
    ];

    /// A verdict cell as its kind: the costlier framework of an order, else `tie` or `unresolved`.
    fn kind(verdict: &str) -> String {
        match verdict.strip_prefix("**") {
            Some(order) => order.split(' ').next().unwrap().to_owned(),
            None if verdict.starts_with("tie within") => "tie".to_owned(),
            None => verdict.to_owned(),
        }
    }

    /// Each row of a frameworks table as (route, the pair's two names sorted) → its verdict's kind.
    fn verdicts(text: &str) -> std::collections::BTreeMap<(String, String), String> {
        text.lines()
            .filter(|l| l.starts_with("| `/"))
            .map(|line| {
                let cells: Vec<&str> = line.split('|').map(str::trim).collect();
                let mut pair: Vec<&str> = cells[2].split(" / ").collect();
                pair.sort_unstable();
                ((cells[1].to_owned(), pair.join(" ")), kind(cells[cells.len() - 2]))
            })
            .collect()
    }

    #[test]
    fn the_front_page_answers_which_is_faster_with_the_verdicts_both_committed_sessions_give() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
        let [first, second] = SESSIONS.map(|f| root.join(f));
        let page = rendered(&table(&first, FrontTable::Frameworks, Some(&second))).unwrap();
        assert!(readme.contains(page.trim()), "README's verdicts differ from:\n{page}");
        let command = format!("bench-client report {} --table frameworks --confirmed-by {}", SESSIONS[0], SESSIONS[1]);
        assert!(readme.contains(&command), "README does not say it renders with `{command}`");
        // Each session on its own, then the page: a verdict stands where both give it.
        let one = verdicts(&rendered(&table(&first, FrontTable::Frameworks, None)).unwrap());
        let two = verdicts(&rendered(&table(&second, FrontTable::Frameworks, None)).unwrap());
        let both = verdicts(&page);
        assert_eq!(one.len(), 12, "4 routes × 3 pairs: {one:?}");
        assert_eq!(one.keys().collect::<Vec<_>>(), two.keys().collect::<Vec<_>>());
        assert_eq!(one.keys().collect::<Vec<_>>(), both.keys().collect::<Vec<_>>());
        let mut agreed = 0;
        for (key, verdict) in &one {
            if *verdict == two[key] && verdict != "unresolved" {
                agreed += 1;
                assert_eq!(both[key], *verdict, "{key:?}: both sessions say {verdict}");
            } else {
                assert_eq!(both[key], "unresolved on this machine", "{key:?}: {verdict} against {}", two[key]);
            }
        }
        assert!(page.contains(&format!("({agreed} of 12 pairs)")), "{page}");
        assert!(agreed > 0, "the front page answers with at least one verdict: {page}");
    }

    #[test]
    fn the_front_page_charts_are_the_first_session_drawn_again() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
        let run_readme = std::fs::read_to_string(root.join("bench/runs/2026-12-07-frameworks/README.md")).unwrap();
        let dir = std::env::temp_dir().join(format!("bench-client-front-page-charts-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (chart, name) in [(super::FrontChart::Frameworks, "frameworks"), (super::FrontChart::Changes, "changes")] {
            let committed = format!("bench/runs/2026-12-07-frameworks/{name}.svg");
            let output = dir.join(format!("{name}.svg"));
            let args = ReportArgs {
                chart: Some(chart),
                output: Some(output.clone()),
                ..table(&root.join(SESSIONS[0]), FrontTable::Floors, None)
            };
            super::drawn(&args, chart, &output).unwrap();
            let drawn = std::fs::read(&output).unwrap();
            assert!(drawn == std::fs::read(root.join(&committed)).unwrap(), "{committed} is not what report draws");
            assert!(readme.contains(&format!("]({committed})")), "README shows {committed}");
            let command = format!("bench-client report {} --chart {name} -o {committed}", SESSIONS[0]);
            assert!(run_readme.contains(&command), "the run's README says it draws with `{command}`");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_readme_shows_the_committed_sessions_as_report_renders_them() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        for (file, table, name, page) in README_TABLES {
            let text =
                rendered(&ReportArgs { file: root.join(file), table, confirmed_by: None, chart: None, output: None })
                    .unwrap();
            let shown = std::fs::read_to_string(root.join(page)).unwrap();
            assert!(shown.contains(text.trim()), "{page}'s {name} table of {file} differs from:\n{text}");
            let command = format!("bench-client report {file} --table {name}");
            assert!(shown.contains(&command), "{page} does not say it renders with `{command}`");
        }
    }

    fn table(file: &Path, table: FrontTable, confirmed_by: Option<&Path>) -> ReportArgs {
        ReportArgs {
            file: file.to_owned(),
            table,
            confirmed_by: confirmed_by.map(Path::to_owned),
            chart: None,
            output: None,
        }
    }

    #[test]
    fn a_session_without_the_frameworks_scenario_is_refused_in_one_line_for_its_table_and_chart() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let dir = std::env::temp_dir().join(format!("bench-client-front-charts-{}", std::process::id()));
        let front = root.join("bench/runs/2026-12-01-front-page/results.json.gz");
        let output = dir.join("x.svg");
        let args = ReportArgs {
            chart: Some(super::FrontChart::Frameworks),
            output: Some(output.clone()),
            ..table(&front, FrontTable::Floors, None)
        };
        let err = super::drawn(&args, super::FrontChart::Frameworks, &output).unwrap_err();
        assert!(format!("{err:#}").contains("no frameworks scenario"), "{err:#}");
        assert!(!output.exists(), "nothing drawn");
        let err = rendered(&table(&front, FrontTable::Frameworks, None)).unwrap_err();
        assert!(format!("{err:#}").contains("no frameworks scenario"), "{err:#}");
        let own_change = root.join("bench/runs/2026-12-01-own-change/ex2.results.json.gz");
        let err = rendered(&table(&own_change, FrontTable::Floors, None)).unwrap_err();
        assert!(format!("{err:#}").contains("--table changes sets them against each other"), "{err:#}");
        let err = rendered(&table(&front, FrontTable::Floors, Some(&front))).unwrap_err();
        assert!(format!("{err:#}").contains("goes with --table frameworks"), "{err:#}");
        // The changes chart of the same file is drawn.
        std::fs::create_dir_all(&dir).unwrap();
        let changes = dir.join("changes.svg");
        let args = ReportArgs { chart: Some(super::FrontChart::Changes), output: Some(changes.clone()), ..args };
        super::drawn(&args, super::FrontChart::Changes, &changes).unwrap();
        let svg = std::fs::read_to_string(&changes).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("axum /state/arc"), "{svg}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_run_folder_reads_its_gzipped_results_and_a_missing_file_is_named_once() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let text = rendered(&table(&root.join("bench/runs/2026-12-01-front-page"), FrontTable::Floors, None)).unwrap();
        assert!(text.starts_with("Measured on AMD EPYC"), "{text}");
        let err = rendered(&table(Path::new("/nonexistent/results.json"), FrontTable::Floors, None)).unwrap_err();
        let err = format!("{err:#}");
        assert_eq!(err.matches("cannot read").count(), 1, "{err}");
        assert!(err.contains("/nonexistent/results.json"), "{err}");
    }

    #[test]
    fn the_committed_http2_session_shows_its_table_as_report_renders_it() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let page = std::fs::read_to_string(root.join("docs/CLIENT.md")).unwrap();
        let file = "bench/runs/2026-12-03-http2/results.json.gz";
        let text = rendered(&ReportArgs {
            file: root.join(file),
            table: FrontTable::Http2,
            confirmed_by: None,
            chart: None,
            output: None,
        })
        .unwrap();
        let run = std::fs::read_to_string(root.join("bench/runs/2026-12-03-http2/README.md")).unwrap();
        assert!(run.contains(text.trim()), "the run's http2 table of {file} differs from:\n{text}");
        assert!(page.contains(&format!("bench-client report {file} --table http2")));
        // Every framework's four pairs, after the SETTINGS each granted.
        for framework in ["actix", "axum", "rocket"] {
            assert!(text.contains(&format!("| {framework} | ")), "{framework}: {text}");
            assert_eq!(text.matches(&format!("| {framework} | `h")).count(), 4, "{framework}: {text}");
        }
        let err = rendered(&ReportArgs {
            file: root.join("bench/runs/2026-12-01-front-page/results.json.gz"),
            table: FrontTable::Http2,
            confirmed_by: None,
            chart: None,
            output: None,
        })
        .unwrap_err();
        assert!(format!("{err:#}").contains("no http2 scenario"), "{err:#}");
    }

    #[test]
    fn each_route_lists_its_frameworks_fastest_first_with_the_machine_line() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let file = root.join(README_TABLES[0].0);
        let text =
            rendered(&ReportArgs { file, table: FrontTable::Floors, confirmed_by: None, chart: None, output: None })
                .unwrap();
        assert!(
            text.starts_with(
                "Measured on AMD EPYC (2 CPUs; server on CPU [0], client on CPU [1]; client ceiling 153563"
            )
        );
        let mut by_route: std::collections::BTreeMap<&str, Vec<f64>> = std::collections::BTreeMap::new();
        for line in text.lines().filter(|l| l.starts_with("| /")) {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            let mean: f64 = cells[3].split(' ').next().unwrap().parse().unwrap();
            by_route.entry(cells[1]).or_default().push(mean);
            assert_eq!(cells[5], "6", "six rounds each: {line}");
        }
        assert_eq!(by_route.len(), 6, "every route of the session: {text}");
        for (route, means) in by_route {
            assert_eq!(means.len(), 3, "{route}: three frameworks");
            assert!(means.windows(2).all(|w| w[0] <= w[1]), "{route}: fastest first: {means:?}");
        }
    }
}
