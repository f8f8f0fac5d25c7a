//! The answers of the scenarios that pair one change per row in every
//! framework: what each middleware layer adds to a request, and what each
//! typed extractor adds over reading the same request raw, what the routes
//! registered ahead of a route add to it, in µs of server
//! CPU with its interval over the rounds and as a share of the baseline
//! route's cost; with a second session, whether it lands where the first did.

use std::fmt::Write as _;

use super::format::{verdict_kind, verdict_within};
use super::table::Table;
use crate::model::{Framework, Scenario, Variant};
use crate::results::{CountDelta, CountReport, Delta, Results, route_costs};

/// What a scenario's table holds: a row per pair of variants.
struct Rows {
    /// The scenario.
    scenario: Scenario,
    /// Each row: its name, the baseline variant, the changed one.
    rows: Vec<(String, Variant, Variant)>,
    /// The baseline every row shares, given a row of its own (the bare
    /// route of `middleware`); `None`: each row's own.
    shared: Option<Variant>,
    /// The first column's heading.
    heading: &'static str,
    /// What the table says above it.
    intro: &'static str,
}

impl Rows {
    /// The table of `scenario`, if it has one.
    fn of(scenario: Scenario) -> Option<Self> {
        match scenario {
            Scenario::Middleware => Some(Self {
                scenario,
                rows: Variant::MIDDLEWARE[1..]
                    .iter()
                    .map(|&v| (v.label().split(' ').next().unwrap_or_default().to_owned(), Variant::Bare, v))
                    .collect(),
                shared: Some(Variant::Bare),
                heading: "layer",
                intro: "What each layer adds to a request of `/api/devices/preserialized`: µs of server CPU per \
                        successful request, the layered server's cost minus the bare one's (`--middleware none`) \
                        in the same alternation, mean over the rounds with its 95 % interval, and (in \
                        parentheses) as a share of the bare route's cost. Every request sends `Accept-Encoding: \
                        gzip` and an `Origin`; every response is verified (a gzip body decoded, each header the \
                        layers add present).",
            }),
            Scenario::Extractors => {
                let json = |body: &[u8]| format!("Json<T>, {} bytes", thousands(body.len() as f64));
                let names = [
                    json(common::extract::small_json()),
                    json(common::extract::large_json()),
                    "Path".to_owned(),
                    "Query".to_owned(),
                    "Form".to_owned(),
                ];
                Some(Self {
                    scenario,
                    rows: names.into_iter().zip(scenario.pairs()).map(|(n, (raw, typed))| (n, raw, typed)).collect(),
                    shared: None,
                    heading: "extractor",
                    intro: "What each typed extractor adds over reading the same request raw and parsing it by \
                            hand (`serde_json::from_slice` on the body's bytes; the path, query or form split at \
                            `/`, `&` and `=`), on one server: µs of server CPU per successful request, the typed \
                            route's cost minus the raw one's in the same alternation, mean over the rounds with \
                            its 95 % interval, and (in parentheses) as a share of the raw route's cost. Both \
                            routes of a row take the same request and give the same answer, verified byte for byte.",
                })
            }
            Scenario::Routes => Some(Self {
                scenario,
                rows: scenario
                    .pairs()
                    .into_iter()
                    .map(|(none, many)| {
                        let kind = if none.route() == Some(common::RouteId::ScaleStatic) { "static" } else { "param" };
                        (format!("{kind}, {} ahead", many.filler_routes().unwrap_or_default()), none, many)
                    })
                    .collect(),
                shared: None,
                heading: "route",
                intro: "What the routes registered ahead of a route add to a request of it: µs of server CPU per \
                        successful request of `/scale/target` (static) or `/scale/target/42` (a path parameter) \
                        on a server with N filler routes of each kind registered first (`--filler-routes N`) \
                        minus its cost on the framework's own server (none), in the same alternation, mean over \
                        the rounds with its 95 % interval, and (in parentheses) as a share of the route's cost \
                        without them. Every answer is verified byte for byte.",
            }),
            _ => None,
        }
    }

    /// Whether `framework` offers what `to` loads (a layer it has none of is not measured).
    fn offered(&self, framework: Framework, to: Variant) -> bool {
        self.scenario != Scenario::Middleware || to.middleware(framework).is_some()
    }

    /// Its table over `frameworks`, a column each: the shared baseline's row
    /// first (its label, and each framework's cell of it), then a row per
    /// pair, each framework's cell `cell(framework, row name, from, to)`:
    /// "none offered" where it does not offer `to`, "-" where `cell` has
    /// nothing.
    fn table(
        &self,
        frameworks: &[Framework],
        (shared_label, shared): (&str, impl Fn(Framework, Variant) -> Option<String>),
        mut cell: impl FnMut(Framework, &str, Variant, Variant) -> Option<String>,
    ) -> String {
        let mut columns = vec![self.heading.to_owned()];
        columns.extend(frameworks.iter().map(|f| format!("{}:", f.name())));
        let columns: Vec<&str> = columns.iter().map(String::as_str).collect();
        let mut table = Table::new(&columns);
        let dash = || "-".to_owned();
        if let Some(baseline) = self.shared {
            let mut cells = vec![shared_label.to_owned()];
            cells.extend(frameworks.iter().map(|&f| shared(f, baseline).unwrap_or_else(dash)));
            table.row(&cells.iter().map(|c| c as &dyn std::fmt::Display).collect::<Vec<_>>());
        }
        for (name, from, to) in &self.rows {
            let mut cells = vec![name.clone()];
            for &f in frameworks {
                let text = if self.offered(f, *to) {
                    cell(f, name, *from, *to).unwrap_or_else(dash)
                } else {
                    "none offered".to_owned()
                };
                cells.push(text);
            }
            table.row(&cells.iter().map(|c| c as &dyn std::fmt::Display).collect::<Vec<_>>());
        }
        table.finish()
    }
}

/// What a layer adds per request in one session: the mean over rounds and
/// its 95 % interval, µs (the negated saving of its delta).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Added {
    /// µs of server CPU added per successful request.
    mean_us: f64,
    /// Its interval over the rounds; `None` under two rounds.
    interval_us: Option<(f64, f64)>,
}

impl Added {
    /// Of `delta` (bare → layered); `None` without the server's CPU.
    fn of(delta: &Delta) -> Option<Self> {
        let saved = delta.saved_us?;
        Some(Self { mean_us: -saved, interval_us: delta.saved_ci_us.map(|(low, high)| (-high, -low)) })
    }

    /// Whether `other`'s mean lies within this interval (a second session
    /// landing in the first).
    fn holds(&self, other: &Self) -> bool {
        self.interval_us.is_some_and(|(low, high)| (low..=high).contains(&other.mean_us))
    }
}

/// The frameworks of `results` with a delta of `scenario`, in order.
fn frameworks(results: &Results, scenario: Scenario) -> Vec<Framework> {
    let mut frameworks: Vec<Framework> =
        results.deltas.iter().filter(|d| d.scenario == scenario).map(|d| d.framework).collect();
    frameworks.sort();
    frameworks.dedup();
    frameworks
}

/// The delta `from` → `to` in `framework` in `results`, at the session's
/// first layer count (the table is of one).
fn delta_of(results: &Results, framework: Framework, from: Variant, to: Variant) -> Option<&Delta> {
    let layers = results.meta.layers.first().copied();
    results.deltas.iter().find(|d| {
        d.framework == framework && d.from == from.label() && d.to == to.label() && layers.is_none_or(|l| d.layers == l)
    })
}

/// What `to` adds over `from` in `framework` in `results`.
fn added(results: &Results, framework: Framework, from: Variant, to: Variant) -> Option<Added> {
    delta_of(results, framework, from, to).and_then(Added::of)
}

/// The table of `scenario` in `results` (`middleware`, `extractors`; empty
/// for another or without it): a row per pair, a column per framework; with
/// `second`, each cell also gives the second session's mean and the verdict
/// of the paired change of successful requests per second (in bold where
/// both sessions give it), and lines under the table count the verdicts
/// both give and name every cell whose second mean falls outside the first
/// session's interval.
pub fn scenario_table(results: &Results, second: Option<&Results>, scenario: Scenario) -> String {
    let (Some(spec), frameworks) = (Rows::of(scenario), frameworks(results, scenario)) else {
        return String::new();
    };
    if frameworks.is_empty() {
        return String::new();
    }
    let costs = route_costs(results);
    let layers = results.meta.layers.first().copied();
    let cost = |f: Framework, v: Variant| {
        costs
            .iter()
            .find(|c| c.framework == f && c.variant == v && layers.is_none_or(|l| c.layers == l))
            .map(|c| c.cost_us)
    };
    let mut outside = Vec::new();
    let (mut cells, mut agreed) = (0, 0);
    let shared = |f: Framework, v: Variant| cost(f, v).map(|us| format!("{us:.2}"));
    let table = spec.table(&frameworks, ("bare route, µs per request", shared), |f, name, from, to| {
        let a = added(results, f, from, to)?;
        let mut cell = format!("{:+.2} µs", a.mean_us);
        if let Some((low, high)) = a.interval_us {
            let _ = write!(cell, " [{low:+.2} … {high:+.2}]");
        }
        if let Some(us) = cost(f, from) {
            let _ = write!(cell, " ({:+.0} %)", a.mean_us / us * 100.0);
        }
        let first = delta_of(results, f, from, to);
        let other = second.and_then(|s| delta_of(s, f, from, to));
        let threshold = results.meta.threshold_percent;
        if let Some(look) = first.zip(other).and_then(|(one, two)| SecondLook::of(one, two, threshold)) {
            cell.push_str(&look.text);
            cells += 1;
            agreed += usize::from(look.agreed);
            if look.outside {
                outside.push(format!("{} {name}", f.name()));
            }
        }
        Some(cell)
    });
    let mut out = String::from(spec.intro);
    if second.is_some() {
        out.push_str(
            " After the first semicolon: the second session's mean; after the second, the verdict of the paired \
             change of successful requests per second, in bold where both sessions give it.",
        );
    }
    out.push_str("\n\n");
    out.push_str(&table);
    if second.is_some() {
        out.push_str(&agreement_lines(agreed, cells, &outside));
    }
    out
}

/// A cell's second session beside its first.
struct SecondLook {
    /// What the cell adds: "; " the second mean, "; " the verdict both give,
    /// or each session's where they differ.
    text: String,
    /// Both sessions give the same verdict.
    agreed: bool,
    /// The second mean lies outside the first session's interval (never
    /// with one round in the first: no interval to hold it to).
    outside: bool,
}

impl SecondLook {
    /// The second session's `second` beside the first's `first`, each
    /// judged against `threshold_percent`; `None` without a cost in either.
    fn of(first: &Delta, second: &Delta, threshold_percent: Option<f64>) -> Option<Self> {
        let (a, b) = (Added::of(first)?, Added::of(second)?);
        let (one, two) =
            (verdict_within(&first.change, threshold_percent), verdict_within(&second.change, threshold_percent));
        let agreed = verdict_kind(&first.change, threshold_percent) == verdict_kind(&second.change, threshold_percent);
        let verdicts = if one == two { one } else { format!("{} / {}", one.replace("**", ""), two.replace("**", "")) };
        Some(Self {
            text: format!("; {:+.2}; {verdicts}", b.mean_us),
            agreed,
            outside: a.interval_us.is_some() && !a.holds(&b),
        })
    }
}

/// The lines under a table of two sessions: in how many of its `cells` both
/// give the same verdict, and which cells' second mean lies outside the
/// first's interval.
fn agreement_lines(agreed: usize, cells: usize, outside: &[String]) -> String {
    let mut out = format!("\nBoth sessions give the same verdict in {agreed} of {cells} cells.\n");
    if outside.is_empty() {
        out.push_str("The second session's mean lies within the first session's interval in every cell.\n");
    } else {
        let _ =
            writeln!(out, "The second session's mean lies outside the first's interval in: {}.", outside.join(", "));
    }
    out
}

/// Thousands with commas, e.g. `16,076`.
fn thousands(n: f64) -> String {
    let digits = format!("{:.0}", n.abs());
    let mut out = String::new();
    for (k, c) in digits.chars().enumerate() {
        if k > 0 && (digits.len() - k) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0.0 { format!("-{out}") } else { out }
}

/// The counted table of `scenario` (`middleware`: a `count --middleware`
/// report; `extractors`: a count of their routes; empty without them): a
/// row per pair, a column per framework, each cell the instructions a
/// request of the changed side adds to its baseline's, that change in
/// percent with Welch's interval over the repeats, and the allocations it
/// adds; `middleware` first gives the bare route's instructions.
pub fn counted_table(report: &CountReport, scenario: Scenario) -> String {
    let Some(spec) = Rows::of(scenario) else { return String::new() };
    // A variant's row: its server (`axum cors`) on the layers' route, or its route on the framework's server.
    let row = |f: Framework, v: Variant| {
        report.rows.iter().find(|r| match scenario {
            Scenario::Middleware => {
                r.framework == format!("{} {}", f.name(), v.label().split(' ').next().unwrap_or_default())
            }
            Scenario::Routes => {
                r.framework == counted_name(f, v.filler_routes().unwrap_or_default()) && r.route == v.path()
            }
            _ => r.framework == f.name() && r.route == v.label(),
        })
    };
    let frameworks: Vec<Framework> = Framework::ALL
        .into_iter()
        .filter(|&f| spec.rows.iter().any(|&(_, from, to)| row(f, from).is_some() && row(f, to).is_some()))
        .collect();
    if frameworks.is_empty() {
        return String::new();
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let shared = |f: Framework, v: Variant| row(f, v).map(|r| thousands(mean(&r.instructions_per_request)));
    let table = spec.table(&frameworks, ("bare route, instructions per request", shared), |f, _, from, to| {
        let (b, a) = (row(f, from)?, row(f, to)?);
        let c = CountDelta::of(b, a).instructions;
        let added = mean(&a.instructions_per_request) - mean(&b.instructions_per_request);
        let sign = if added >= 0.0 { "+" } else { "" };
        let mut cell = format!("{sign}{} ({:+.1} %", thousands(added), c.change_percent);
        if let (Some(low), Some(high)) = (c.ci_low_percent, c.ci_high_percent) {
            let _ = write!(cell, " [{low:+.1} … {high:+.1}]");
        }
        let allocations = mean(&a.allocations_per_request) - mean(&b.allocations_per_request);
        let _ = write!(cell, "); {allocations:+.1} allocations");
        Some(cell)
    });
    let what = match scenario {
        Scenario::Middleware => {
            "What each layer adds to a request of `/api/devices/preserialized`, counted: user-space instructions \
             per request over the bare server's (`--middleware none`)"
        }
        Scenario::Routes => {
            "What the filler routes registered ahead of a route add to a request of it, counted: user-space \
             instructions per request over the same route's on the framework's own server"
        }
        _ => {
            "What each typed extractor adds over reading the request raw, counted: user-space instructions per \
              request of the typed route over its raw twin's"
        }
    };
    format!(
        "{what}, that change in percent with Welch's 95 % interval over the repeats, and the allocations per \
         request it adds.\n\n{table}"
    )
}

/// How `count --filler-routes` names a framework's server with `fillers`
/// filler routes of each kind: `axum` without, `axum 1000 ahead`.
pub fn counted_name(framework: Framework, fillers: u16) -> String {
    match fillers {
        0 => framework.name().to_owned(),
        n => format!("{} {n} ahead", framework.name()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Pairing;
    use crate::results::{Over, deltas, fixtures};
    use std::path::{Path, PathBuf};

    /// actix's bare and trace servers over three rounds at these rates (one
    /// server CPU, always busy: a request costs 10⁶ ÷ rate µs).
    fn session(bare: [u64; 3], trace: [u64; 3]) -> Results {
        let mut runs = Vec::new();
        for (i, (b, t)) in bare.into_iter().zip(trace).enumerate() {
            let round = u32::try_from(i).unwrap() + 1;
            runs.push(fixtures::run(Framework::Actix, "middleware", "bare", round, b, true));
            runs.push(fixtures::run(Framework::Actix, "middleware", "trace", round, t, true));
        }
        let mut results = fixtures::results(runs.clone());
        let over = Over { pairing: Pairing::Rounds, processes: true };
        results.deltas = deltas(&runs, &[Framework::Actix], &[Scenario::Middleware], &[10], over);
        results
    }

    #[test]
    fn each_layer_reads_as_the_cost_it_adds_and_a_second_session_is_held_to_the_first_interval() {
        let first = session([1000, 1000, 1000], [800, 790, 810]);
        let added = added(&first, Framework::Actix, Variant::Bare, Variant::Trace).unwrap();
        assert!((added.mean_us - 250.0).abs() < 10.0, "{added:?}");
        let (low, high) = added.interval_us.unwrap();
        assert!(low < added.mean_us && added.mean_us < high);
        let table = scenario_table(&first, None, Scenario::Middleware);
        assert!(table.contains("| bare route, µs per request | 1000.00 |"), "{table}");
        assert!(
            table.contains(&format!("| trace | {:+.2} µs [{low:+.2} … {high:+.2}] (+25 %) |", added.mean_us)),
            "{table}"
        );
        assert!(table.contains("| request-id | none offered |"), "{table}");
        assert!(table.contains("| cors | - |"), "offered, not measured: {table}");
        let same = scenario_table(&first, Some(&session([1000, 1000, 1000], [801, 799, 800])), Scenario::Middleware);
        assert!(same.contains("lies within the first session's interval in every cell"), "{same}");
        assert!(same.contains("; +250.") || same.contains("; +251.") || same.contains("; +249."), "{same}");
        assert!(same.contains("Both sessions give the same verdict in 1 of 1 cells."), "{same}");
        let off = scenario_table(&first, Some(&session([1000, 1000, 1000], [500, 500, 500])), Scenario::Middleware);
        assert!(off.contains("lies outside the first's interval in: actix trace."), "{off}");
        assert_eq!(
            scenario_table(&fixtures::results(Vec::new()), None, Scenario::Middleware),
            "",
            "no middleware scenario"
        );
    }

    #[test]
    fn thousands_group_by_three_with_the_sign_kept() {
        assert_eq!(thousands(515_390.6), "515,391");
        assert_eq!(thousands(999.0), "999");
        assert_eq!(thousands(-1_234_567.0), "-1,234,567");
    }

    #[test]
    fn the_counted_layers_add_what_their_rows_say_over_the_bare_one() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench/runs/2026-12-06-middleware/count.json");
        let report = crate::results::read_count(&path).unwrap();
        let table = counted_table(&report, Scenario::Middleware);
        let mean = |name: &str| {
            let row = report.rows.iter().find(|r| r.framework == name).unwrap();
            row.instructions_per_request.iter().sum::<f64>() / row.instructions_per_request.len() as f64
        };
        for (f, column) in [("actix", 1), ("axum", 2), ("rocket", 3)] {
            let line = table.lines().find(|l| l.starts_with("| compression |")).unwrap();
            let cell = line.split('|').nth(column + 1).unwrap().trim();
            let shown: f64 = cell.split(' ').next().unwrap().replace([',', '+'], "").parse().unwrap();
            let added = mean(&format!("{f} compression")) - mean(&format!("{f} bare"));
            assert!((shown - added).abs() / added < 0.001, "{f}: {cell} against {added}");
        }
        assert!(table.contains("| request-id | none offered |"), "{table}");
        let plain = path.with_file_name("../2026-12-03-counted/make-count.json");
        assert_eq!(
            counted_table(&crate::results::read_count(&plain).unwrap(), Scenario::Middleware),
            "",
            "no bare rows"
        );
    }

    #[test]
    fn the_fault_and_profile_figures_said_are_those_of_their_files() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let run = root.join("bench/runs/2026-12-06-middleware");
        let read = |name: &str| std::fs::read_to_string(run.join(name)).unwrap();
        let (readme, findings) =
            (flat(&read("README.md")), flat(&std::fs::read_to_string(root.join("docs/FINDINGS.md")).unwrap()));
        // faults.txt: framework, middleware, [tuned], rate, page faults, system calls per request.
        let faults = read("faults.txt");
        let line = |f: &str, what: &str| -> (f64, f64) {
            let l =
                faults.lines().find(|l| l.starts_with(f) && l.contains(what)).unwrap_or_else(|| panic!("{f} {what}"));
            let numbers: Vec<f64> = l.split_whitespace().filter_map(|w| w.parse().ok()).collect();
            (numbers[0], numbers[1])
        };
        let (actix, rocket) =
            (line("actix  compression  ", "compression"), line("rocket compression  ", "compression"));
        let (actix_tuned, rocket_tuned) = (line("actix ", "malloc tuned"), line("rocket ", "malloc tuned"));
        let said = format!("{:.0} and {:.0} page faults per request", actix.1, rocket.1);
        assert!(readme.contains(&said), "the run's README does not say: {said}");
        let said = format!("{:.0} and {:.0} page faults per compressed response", actix.1, rocket.1);
        assert!(findings.contains(&said), "FINDINGS does not say: {said}");
        let rises = format!(
            "{:.1} times (actix-web) and {:.1} times (Rocket)",
            actix_tuned.0 / actix.0,
            rocket_tuned.0 / rocket.0
        );
        assert!(findings.contains(&rises), "FINDINGS does not say: {rises}");
        let rises = format!(
            "{:.1} times in actix-web and {:.1} times in Rocket",
            actix_tuned.0 / actix.0,
            rocket_tuned.0 / rocket.0
        );
        assert!(readme.contains(&rises), "the run's README does not say: {rises}");
        // The profile: the page fault handler's share, the kernel's, deflate's (every miniz_oxide symbol).
        let perf = read("actix-compression-perf.txt");
        let share = |pick: &dyn Fn(&str) -> bool| -> f64 {
            perf.lines().filter(|l| pick(l)).filter_map(|l| l.split('%').next()?.parse::<f64>().ok()).sum()
        };
        let faults_share = share(&|l: &str| l.ends_with("exc_page_fault"));
        let kernel = share(&|l: &str| l.ends_with("[kernel.kallsyms]"));
        // Its own section lists every miniz_oxide symbol (the top 12 repeat some).
        let every = perf.split("every miniz_oxide symbol").nth(1).expect("the deflate section");
        let deflate: f64 = every.lines().filter_map(|l| l.split('%').next()?.parse::<f64>().ok()).sum();
        let profile = format!(
            "{faults_share:.0} % of its samples in the page fault handler ({kernel:.0} % in the kernel in all)"
        );
        assert!(readme.contains(&profile), "the run's README does not say: {profile}");
        assert!(readme.contains(&format!("against {deflate:.0} % in deflate itself")), "{deflate}");
        assert!(findings.contains(&format!(
            "{faults_share:.0} % of its samples in the page fault handler, {deflate:.0} % in deflate"
        )));
    }

    /// The committed run `name` of `scenario`: the repository's root, the run's folder, its two
    /// sessions (each validated against the schema), their table and the run's README, which must
    /// hold the table as rendered.
    fn committed(name: &str, scenario: Scenario) -> (PathBuf, PathBuf, [Results; 2], String, String) {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let run = root.join("bench/runs").join(name);
        let files = ["session-1.results.json.gz", "session-2.results.json.gz"];
        assert_valid(&run, &files);
        let [first, second] = files.map(|f| crate::results::read(&run.join(f)).unwrap());
        let table = scenario_table(&first, Some(&second), scenario);
        let run_readme = std::fs::read_to_string(run.join("README.md")).unwrap();
        assert!(run_readme.contains(table.trim()), "the run's README differs from:\n{table}");
        (root, run, [first, second], table, run_readme)
    }

    /// Asserts that each gzipped results file of `run` validates against the committed schema.
    fn assert_valid(run: &Path, files: &[&str]) {
        let schema: serde_json::Value =
            serde_json::from_str(include_str!("../../../docs/results.schema.json")).expect("the schema is JSON");
        let validator = jsonschema::validator_for(&schema).expect("a valid schema");
        for file in files {
            let value: serde_json::Value =
                serde_json::from_reader(flate2::read::GzDecoder::new(std::fs::File::open(run.join(file)).unwrap()))
                    .unwrap();
            let errors: Vec<String> =
                validator.iter_errors(&value).map(|e| format!("{e} at {}", e.instance_path())).collect();
            assert!(errors.is_empty(), "{file}: {errors:#?}");
        }
    }

    /// Text with every run of whitespace one space (a sentence wrapped over lines reads whole).
    fn flat(text: &str) -> String {
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn the_committed_sessions_validate_render_in_their_readme_and_every_figure_said_is_theirs() {
        let (root, _, [first, second], table, run_readme) = committed("2026-12-06-middleware", Scenario::Middleware);
        let (readme, run_text) = (flat(&std::fs::read_to_string(root.join("README.md")).unwrap()), flat(&run_readme));
        // The verdicts both sessions give, as the table counts them.
        let agreed = table.lines().find_map(|l| l.strip_prefix("Both sessions give the same verdict in ")).unwrap();
        let (agreed, cells) = agreed.trim_end_matches(" cells.").split_once(" of ").unwrap();
        assert!(
            readme.contains(&format!("Two sessions agree on {agreed} of {cells} verdicts, each a cost.")),
            "{readme}"
        );
        assert!(run_text.contains(&format!("({agreed} of {cells} verdicts agree)")));
        // Compression: each framework's first-session mean on the front page, both sessions' in the run's README.
        let mean = |r: &Results, f: Framework| added(r, f, Variant::Bare, Variant::Compression).unwrap().mean_us;
        let bare = route_costs(&first)
            .iter()
            .find(|c| c.framework == Framework::Actix && c.variant == Variant::Bare)
            .unwrap()
            .cost_us;
        let (actix, rocket, axum) =
            (mean(&first, Framework::Actix), mean(&first, Framework::Rocket), mean(&first, Framework::Axum));
        assert_eq!(common::devices_json().len(), 271);
        let front = format!(
            "Compression of 271 bytes adds {actix:.0} µs of server CPU per request in actix-web ({:.0}× the bare route), {rocket:.0} in Rocket, {axum:.0} in axum (session 1)",
            actix / bare
        );
        assert!(readme.contains(&front), "README does not say: {front}");
        let two = |f: Framework| {
            let (a, b) = (mean(&first, f), mean(&second, f));
            (a.min(b), a.max(b))
        };
        let (a, r, x) = (two(Framework::Actix), two(Framework::Rocket), two(Framework::Axum));
        for said in [
            format!("{:.0} and {:.0} µs in actix-web", mean(&first, Framework::Actix), mean(&second, Framework::Actix)),
            format!("{:.0} to {:.0} µs in Rocket, {:.0} to {:.0} µs in axum", r.0, r.1, x.0, x.1),
        ] {
            assert!(run_text.contains(&said), "the run's README does not say: {said}");
        }
        assert!(a.0 > 100.0, "{a:?}");
        // The bare routes' rates of the two sessions.
        for f in Framework::ALL {
            let rate = |r: &Results| {
                let d = delta_of(r, f, Variant::Bare, Variant::Trace).unwrap();
                let n = d.before_per_s.round() as u64;
                format!("{},{:03}", n / 1000, n % 1000)
            };
            let said = format!("{} against {}", rate(&first), rate(&second));
            assert!(run_text.contains(&said), "the run's README does not give {f:?}'s bare rates: {said}");
        }
    }

    #[test]
    fn the_committed_routes_sessions_render_in_their_readme_and_every_figure_said_is_theirs() {
        let (root, run, [first, second], _, run_readme) = committed("2026-12-07-routes", Scenario::Routes);
        let report = crate::results::read_count(&run.join("count.json")).unwrap();
        let counted = counted_table(&report, Scenario::Routes);
        assert!(run_readme.contains(counted.trim()), "the run's README differs from:\n{counted}");
        // The front page: 1,000 routes ahead of the static target, both sessions; axum's bound.
        let mean = |r: &Results, f: Framework, to: Variant| added(r, f, Variant::Static0, to).unwrap().mean_us;
        let both = |f| (mean(&first, f, Variant::Static1000), mean(&second, f, Variant::Static1000));
        let ((a1, a2), (r1, r2)) = (both(Framework::Actix), both(Framework::Rocket));
        let axum = Scenario::Routes
            .pairs()
            .into_iter()
            .flat_map(|(from, to)| [&first, &second].map(|r| added(r, Framework::Axum, from, to).unwrap().mean_us))
            .fold(0.0_f64, |m, v| m.max(v.abs()));
        let said = format!(
            "with 1,000 routes of each kind registered ahead of `/scale/target`, actix-web adds {} µs of server CPU per request ({} in session 2), Rocket {r1:.0} ({r2:.0}); axum stays within ±{axum:.1} µs in both sessions",
            thousands(a1),
            thousands(a2)
        );
        let readme = flat(&std::fs::read_to_string(root.join("README.md")).unwrap());
        assert!(readme.contains(&said), "README does not say: {said}");
        assert!(flat(&run_readme).contains(&said), "the run's README does not say: {said}");
        // Counted: what each route ahead costs actix-web and Rocket in instructions.
        let row = |f: Framework, n: u16, v: Variant| {
            let server = counted_name(f, n);
            report.rows.iter().find(|r| r.framework == server && r.route == v.path()).unwrap()
        };
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        // actix-web tries all 2,000 in order; Rocket the 1,000 static ones (by rank, static paths first).
        let per_route = |f, tried: f64| {
            let (none, many) = (row(f, 0, Variant::Static0), row(f, 1000, Variant::Static1000));
            (mean(&many.instructions_per_request) - mean(&none.instructions_per_request)) / tried
        };
        let counted = format!(
            "each route tried ahead of the static target costs actix-web {:.0} instructions (all 2,000) and Rocket {:.0} (the 1,000 static ones)",
            per_route(Framework::Actix, 2_000.0),
            per_route(Framework::Rocket, 1_000.0)
        );
        assert!(flat(&run_readme).contains(&counted), "the run's README does not say: {counted}");
        let findings = flat(&std::fs::read_to_string(root.join("docs/FINDINGS.md")).unwrap());
        assert!(findings.contains(&counted), "FINDINGS does not say: {counted}");
        // actix-web built without `unicode` (regex-lite), counted in the same way.
        let lite = crate::results::read_count(&run.join("count-regex-lite.json")).unwrap();
        let instructions = |server: &str, v: Variant| {
            mean(
                &lite
                    .rows
                    .iter()
                    .find(|r| r.framework == server && r.route == v.path())
                    .unwrap()
                    .instructions_per_request,
            )
        };
        let more = instructions("actix 1000 ahead", Variant::Static1000) - instructions("actix", Variant::Static0);
        let said = format!("{} more instructions per request at 1,000 routes ahead", thousands(more));
        assert!(findings.contains(&said), "FINDINGS does not say: {said}");
        // regex-lite against regex, the same route and count, in the run's README.
        let regex = per_route(Framework::Actix, 1.0);
        let times = format!(
            "{} more instructions per request at 1,000 routes ahead, {:.1} times the `regex` build's",
            thousands(more),
            more / regex
        );
        assert!(flat(&run_readme).contains(&times), "the run's README does not say: {times}");
        // FINDINGS' timed figures: both sessions of actix-web and Rocket, and axum's none.
        let timed = format!(
            "{} and {} µs of server CPU per request in actix-web, {r1:.0} and {r2:.0} in Rocket",
            thousands(a1),
            thousands(a2)
        );
        assert!(findings.contains(&timed), "FINDINGS does not say: {timed}");
        assert!(axum < 0.5, "FINDINGS says none in axum: ±{axum:.2} µs");
    }

    #[test]
    fn the_committed_extractor_sessions_render_in_their_readme_and_every_figure_said_is_theirs() {
        let (root, run, [first, second], _, run_readme) = committed("2026-12-06-extractors", Scenario::Extractors);
        let counted =
            counted_table(&crate::results::read_count(&run.join("count.json")).unwrap(), Scenario::Extractors);
        assert!(run_readme.contains(counted.trim()), "the run's README differs from:\n{counted}");
        // The front page: axum's Json<T> on the large body, both sessions; every other cell's bound.
        let (raw, typed) = (Variant::Json10kRaw, Variant::Json10k);
        let mean = |r: &Results, f: Framework, from, to| added(r, f, from, to).unwrap().mean_us;
        let (one, two) = (mean(&first, Framework::Axum, raw, typed), mean(&second, Framework::Axum, raw, typed));
        let cost =
            route_costs(&first).iter().find(|c| c.framework == Framework::Axum && c.variant == raw).unwrap().cost_us;
        let others = Scenario::Extractors
            .pairs()
            .into_iter()
            .flat_map(|pair| Framework::ALL.map(|f| (f, pair)))
            .filter(|&(f, pair)| !(f == Framework::Axum && pair == (raw, typed)))
            .flat_map(|(f, (from, to))| [mean(&first, f, from, to), mean(&second, f, from, to)])
            .fold(0.0_f64, |m, v| m.max(v.abs()));
        let readme = flat(&std::fs::read_to_string(root.join("README.md")).unwrap());
        let said = format!(
            "axum's `Json<T>` adds {one:.0} µs of server CPU per request on a 10,267-byte body ({:.0} % of the raw route; {two:.0} in session 2); every other extractor stays within ±{others:.1} µs in both sessions",
            one / cost * 100.0
        );
        assert!(readme.contains(&said), "README does not say: {said}");
        assert!(flat(&run_readme).contains(&said), "the run's README does not say: {said}");
        // The counts said: axum's typed JSON over its raw twin, actix's typed Path.
        let report = crate::results::read_count(&run.join("count.json")).unwrap();
        let row = |f: &str, v: Variant| report.rows.iter().find(|r| r.framework == f && r.route == v.label()).unwrap();
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        let (b, a) = (row("axum", raw), row("axum", typed));
        let more = mean(&a.instructions_per_request) - mean(&b.instructions_per_request);
        let allocations = mean(&a.allocations_per_request) - mean(&b.allocations_per_request);
        let percent = CountDelta::of(b, a).instructions.change_percent;
        let counted = format!(
            "runs {} more instructions per request ({percent:+.0} %) and makes {} more allocations",
            thousands(more),
            thousands(allocations)
        );
        assert!(flat(&run_readme).contains(&counted), "the run's README does not say: {counted}");
        let findings = flat(&std::fs::read_to_string(root.join("docs/FINDINGS.md")).unwrap());
        let said = format!(
            "adds {one:.0} and {two:.0} µs of server CPU per request to `serde_json::from_slice` of the same bytes; counted, {percent:+.0} % instructions, {} more allocations",
            thousands(allocations)
        );
        assert!(findings.contains(&said), "FINDINGS does not say: {said}");
        let (b, a) = (row("actix", Variant::PathRaw), row("actix", Variant::PathParams));
        let fewer = thousands(mean(&b.instructions_per_request) - mean(&a.instructions_per_request));
        assert!(flat(&run_readme).contains(&format!("runs {fewer} fewer than splitting the raw path")));
    }
}
