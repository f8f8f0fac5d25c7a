//! Which charts a results file gets: per scenario, bars of each variant's
//! rate with its interval; per framework, the window series and latency
//! curves; and the layer sweep. The drawing itself is in `plot.rs`.

mod plot;

use std::path::Path;

pub use self::plot::{Bar, Mark, bars, changes, color, latency_curves, ratios, release_lines, window_series, xy_lines};
use crate::analysis::{self, median};
use crate::model::{Framework, Scenario};
use crate::results::{Delta, Held, MemoryReport, Results, RunRecord, sweep};

/// Draws every chart of a suite run into `dir/charts/` and returns their
/// paths relative to `dir`: per scenario, bars of each framework's variants
/// (geometric mean over rounds, 95 % whiskers); per framework and scenario,
/// the window series of every run and the latency percentile curves (the
/// median over rounds at each percentile).
///
/// # Errors
/// When the folder or a file cannot be written.
pub fn suite_charts(dir: &Path, results: &Results) -> anyhow::Result<Vec<String>> {
    std::fs::create_dir_all(dir.join("charts"))?;
    let layers = &results.meta.layers;
    let mut written = Vec::new();
    for &l in layers {
        let runs: Vec<&RunRecord> = results.runs.iter().filter(|r| r.layers == l && r.figures.usable()).collect();
        let suffix = if layers.len() > 1 { format!("-{l}-layers") } else { String::new() };
        written.extend(charts_of_runs(dir, &runs, results.meta.window_s, &suffix)?);
    }
    let sweep = sweep(results);
    if !sweep.is_empty() {
        let series: Vec<(String, Vec<(f64, f64)>)> = sweep
            .iter()
            .map(|line| {
                (
                    format!("{} {}", line.framework.name(), line.variant),
                    line.points.iter().map(|p| (f64::from(p.layers), p.cost_us)).collect(),
                )
            })
            .collect();
        let name = "charts/layer-sweep.svg".to_owned();
        xy_lines(
            &dir.join(&name),
            "server CPU per request by state layers",
            "state layers",
            "µs of server CPU per request",
            &series,
        )?;
        written.insert(0, name);
    }
    if draw_changes(&dir.join(CHANGES_CHART), results)? {
        written.insert(0, CHANGES_CHART.to_owned());
    }
    if draw_frameworks(&dir.join(FRAMEWORKS_CHART), results)? {
        written.insert(0, FRAMEWORKS_CHART.to_owned());
    }
    if draw_middleware(&dir.join(MIDDLEWARE_CHART), results)? {
        written.push(MIDDLEWARE_CHART.to_owned());
    }
    if draw_extractors(&dir.join(EXTRACTORS_CHART), results)? {
        written.push(EXTRACTORS_CHART.to_owned());
    }
    if draw_routes(&dir.join(ROUTES_CHART), results)? {
        written.push(ROUTES_CHART.to_owned());
    }
    if let Some(memory) = &results.memory
        && draw_memory(&dir.join(MEMORY_CHART), memory)?
    {
        written.push(MEMORY_CHART.to_owned());
    }
    Ok(written)
}

/// The chart of the `middleware` scenario, in a run folder.
const MIDDLEWARE_CHART: &str = "charts/middleware.svg";
/// The chart of the `extractors` scenario, in a run folder.
const EXTRACTORS_CHART: &str = "charts/extractors.svg";
/// The chart of the `routes` scenario, in a run folder.
const ROUTES_CHART: &str = "charts/routes.svg";

/// The chart of the `memory` scenario, in a run folder.
const MEMORY_CHART: &str = "charts/memory.svg";

/// The chart of every change, in a run folder.
const CHANGES_CHART: &str = "charts/changes.svg";

/// The chart of the frameworks head to head, in a run folder.
const FRAMEWORKS_CHART: &str = "charts/frameworks.svg";

/// Draws the frameworks head to head into `path`: per route, every pair's
/// ratio of server CPU per successful request, the costlier framework over
/// the other, with its 95 % interval, against 1×; false (nothing drawn)
/// without the `frameworks` scenario.
///
/// # Errors
/// When the file cannot be written.
pub fn draw_frameworks(path: &Path, results: &Results) -> anyhow::Result<bool> {
    let mut routes: Vec<&str> = Vec::new();
    for r in &results.rivals {
        if !routes.contains(&r.route.as_str()) {
            routes.push(&r.route);
        }
    }
    let marks: Vec<Mark> = results
        .rivals
        .iter()
        .map(|r| {
            let (ratio, (costly, cheap)) = if r.cpu_ratio.ratio >= 1.0 {
                (r.cpu_ratio, (r.framework, r.against))
            } else {
                (r.cpu_ratio.inverse(), (r.against, r.framework))
            };
            Mark {
                name: format!("{} / {} {}", costly.name(), cheap.name(), r.route),
                group: routes.iter().position(|p| *p == r.route).unwrap_or(0),
                ratio: ratio.ratio,
                interval: ratio.low.zip(ratio.high),
            }
        })
        .filter(|m| m.ratio > 0.0 && m.interval.is_none_or(|(l, _)| l > 0.0))
        .collect();
    if marks.is_empty() {
        return Ok(false);
    }
    let names: Vec<String> = routes.iter().map(|&r| r.to_owned()).collect();
    ratios(
        path,
        "frameworks head to head: server CPU per request, 95 % CI",
        "costlier framework's server CPU per successful request over the other's (log scale)",
        &names,
        &marks,
    )?;
    Ok(true)
}

/// Draws the chart that answers first into `path`: every delta's change
/// with its interval, by framework, against no change; false (nothing
/// drawn) without a delta.
///
/// # Errors
/// When the file cannot be written.
pub fn draw_changes(path: &Path, results: &Results) -> anyhow::Result<bool> {
    let swept = results.meta.layers.len() > 1;
    let all: Vec<&Delta> = results.deltas.iter().collect();
    // Routes by their paths, as every table names them.
    let name = |d: &Delta| {
        let layers = if swept { format!(" ({} layers)", d.layers) } else { String::new() };
        format!("{} {}{layers}", d.framework.name(), d.to)
    };
    changes_by_framework(path, "every change, 95 % CI: called when it stays off the 0 % line", &all, name)
}

/// Draws the `middleware` scenario into `path`: per framework, each
/// layer's change of successful requests per second over the bare server,
/// with its interval; `false` (nothing written) without the scenario.
///
/// # Errors
/// When the file cannot be written.
pub fn draw_middleware(path: &Path, results: &Results) -> anyhow::Result<bool> {
    let of: Vec<&Delta> = results.deltas.iter().filter(|d| d.scenario == Scenario::Middleware).collect();
    // The layer's name: its label up to the path.
    let name = |d: &Delta| format!("{} {}", d.framework.name(), d.to.split(' ').next().unwrap_or_default());
    changes_by_framework(path, "each layer against the bare route (/api/devices/preserialized), 95 % CI", &of, name)
}

/// Draws the `extractors` scenario into `path`: per framework, each typed
/// route's change of successful requests per second over its raw route,
/// with its interval; `false` (nothing written) without the scenario.
///
/// # Errors
/// When the file cannot be written.
pub fn draw_extractors(path: &Path, results: &Results) -> anyhow::Result<bool> {
    let of: Vec<&Delta> = results.deltas.iter().filter(|d| d.scenario == Scenario::Extractors).collect();
    // The typed route's path without its values: `/extract/json-10k`, `/extract/query`.
    let name = |d: &Delta| {
        let path = d.to.split('?').next().unwrap_or_default().trim_end_matches("/sensor-0042/7");
        format!("{} {path}", d.framework.name())
    };
    changes_by_framework(path, "each typed extractor against reading the request raw, 95 % CI", &of, name)
}

/// Draws the `routes` scenario into `path`: per framework, each count of
/// filler routes' change of successful requests per second over none, on
/// each target, with its interval; `false` (nothing written) without the
/// scenario.
///
/// # Errors
/// When the file cannot be written.
pub fn draw_routes(path: &Path, results: &Results) -> anyhow::Result<bool> {
    let of: Vec<&Delta> = results.deltas.iter().filter(|d| d.scenario == Scenario::Routes).collect();
    // `axum 1000 ahead /scale/target/42`: the label says the count and the target.
    let name = |d: &Delta| format!("{} {}", d.framework.name(), d.to);
    changes_by_framework(path, "each count of routes ahead against none, on the same route, 95 % CI", &of, name)
}

/// Draws `deltas` into `path` under `title`, one group per framework, each
/// mark named by `name`: its change with its interval (as a ratio);
/// `false` (nothing written) when none has one to draw.
///
/// # Errors
/// When the file cannot be written.
fn changes_by_framework(
    path: &Path,
    title: &str,
    deltas: &[&Delta],
    name: impl Fn(&Delta) -> String,
) -> anyhow::Result<bool> {
    let mut groups: Vec<Framework> = deltas.iter().map(|d| d.framework).collect();
    groups.sort();
    groups.dedup();
    let ratio = |p: f64| 1.0 + p / 100.0;
    let marks: Vec<Mark> = deltas
        .iter()
        .map(|d| Mark {
            name: name(d),
            group: groups.iter().position(|f| *f == d.framework).unwrap_or(0),
            ratio: ratio(d.change.change_percent),
            interval: d.change.ci_low_percent.zip(d.change.ci_high_percent).map(|(l, h)| (ratio(l), ratio(h))),
        })
        .filter(|m| m.ratio > 0.0 && m.interval.is_none_or(|(l, _)| l > 0.0))
        .collect();
    if marks.is_empty() {
        return Ok(false);
    }
    let names: Vec<String> = groups.iter().map(|f| f.name().to_owned()).collect();
    changes(path, title, &names, &marks)?;
    Ok(true)
}

/// The routes `all` ran in `scenario`, in the order of their slots (each
/// route by its path: an `ab` session's own routes share one variant).
fn route_variants<'r>(all: &[&'r RunRecord], scenario: Scenario) -> Vec<&'r str> {
    let mut v: Vec<(u32, &str)> = all
        .iter()
        .copied()
        .filter(|r| r.scenario == scenario && r.round == 1)
        .map(|r| (r.position, r.route.as_str()))
        .collect();
    v.sort_unstable();
    v.dedup_by(|a, b| a.1 == b.1);
    v.into_iter().map(|x| x.1).collect()
}

/// The bar of one route in one framework: the geometric mean of its runs'
/// successful requests per second, with its 95 % interval; `None` without a rate.
fn rate_bar(group: usize, series: usize, runs: &[&RunRecord]) -> Option<Bar> {
    let rates: Vec<f64> = runs.iter().filter_map(|r| r.figures.requests_per_s).collect();
    if rates.is_empty() {
        return None;
    }
    let (rate_per_s, interval) = analysis::geometric_mean_interval(&rates);
    Some(Bar { group, series, rate_per_s, interval })
}

/// The latency curve of one route: at each percentile of its first run, the
/// median over its runs, microseconds; `None` without runs.
fn median_latency_curve(runs: &[&RunRecord]) -> Option<Vec<(f64, f64)>> {
    let first = runs.first()?;
    let points = first
        .figures
        .latency_percentiles_us
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let at: Vec<f64> = runs
                .iter()
                .filter_map(|r| r.figures.latency_percentiles_us.get(i))
                .map(|q| q.latency_us as f64)
                .collect();
            (p.percentile, median(&at))
        })
        .collect();
    Some(points)
}

/// Each scenario's charts of the runs `all`: the bars of every framework's
/// routes, and per framework the windows' rates and the latency curves.
fn charts_of_runs(dir: &Path, all: &[&RunRecord], window_s: f64, suffix: &str) -> anyhow::Result<Vec<String>> {
    let mut written = Vec::new();
    let frameworks: Vec<Framework> = {
        let mut f: Vec<Framework> = all.iter().copied().map(|r| r.framework).collect();
        f.sort();
        f.dedup();
        f
    };
    let scenarios: Vec<Scenario> = {
        let mut s: Vec<Scenario> =
            all.iter().copied().filter(|r| r.scenario != Scenario::Floor).map(|r| r.scenario).collect();
        s.sort_by_key(|s| s.name());
        s.dedup();
        s
    };
    for scenario in &scenarios {
        // Each route by its path (an `ab` session's own routes share one variant).
        let runs_of = |f: Framework, route: &str| -> Vec<&RunRecord> {
            all.iter().copied().filter(|r| r.framework == f && r.scenario == *scenario && r.route == route).collect()
        };
        let variants = route_variants(all, *scenario);
        let names: Vec<String> = variants.iter().map(|&v| v.to_owned()).collect();
        let mut all_bars = Vec::new();
        for (g, &f) in frameworks.iter().enumerate() {
            all_bars.extend(variants.iter().enumerate().filter_map(|(s, &v)| rate_bar(g, s, &runs_of(f, v))));
            let series: Vec<(usize, Vec<f64>)> = variants
                .iter()
                .enumerate()
                .flat_map(|(variant, &v)| runs_of(f, v).into_iter().map(move |r| (variant, r)))
                .map(|(variant, r)| {
                    (variant, r.figures.windows.iter().map(|w| *w as f64 / r.figures.window_s.max(1e-9)).collect())
                })
                .collect();
            // The runs' own windows (an alternation's are its slices).
            let run_window_s =
                all.iter().find(|r| r.framework == f && r.scenario == *scenario).map(|r| r.figures.window_s);
            if !series.is_empty() {
                let name = format!("charts/windows-{}-{scenario}{suffix}.svg", f.name());
                let title = format!("{} · {scenario} · per-window rate, one line per run", f.name());
                window_series(&dir.join(&name), &title, run_window_s.unwrap_or(window_s), &names, &series)?;
                written.push(name);
            }
            let curves: Vec<(String, Vec<(f64, f64)>)> =
                variants.iter().filter_map(|&v| Some((v.to_owned(), median_latency_curve(&runs_of(f, v))?))).collect();
            if !curves.is_empty() {
                let name = format!("charts/latency-{}-{scenario}{suffix}.svg", f.name());
                latency_curves(
                    &dir.join(&name),
                    &format!("{} · {scenario} · latency by percentile", f.name()),
                    &curves,
                )?;
                written.push(name);
            }
        }
        if !all_bars.is_empty() {
            let name = format!("charts/bars-{scenario}{suffix}.svg");
            let groups: Vec<String> = frameworks.iter().map(|f| f.name().to_owned()).collect();
            bars(
                &dir.join(&name),
                &format!("{scenario}: successful requests per second (95 % CI)"),
                &groups,
                &names,
                &all_bars,
            )?;
            written.insert(0, name);
        }
    }
    Ok(written)
}

/// Draws a `memory` session into `path`: each server's mean resident MiB
/// against the connections asked for, idle and busy, and its live heap MiB
/// idle where counted, one line each; false
/// (nothing drawn) without a point.
///
/// # Errors
/// When the file cannot be written.
pub fn draw_memory(path: &Path, report: &MemoryReport) -> anyhow::Result<bool> {
    let series: Vec<(String, Vec<(f64, f64)>)> = report
        .servers
        .iter()
        .flat_map(|s| [(s, Held::Idle, "idle"), (s, Held::Busy, "busy")])
        .map(|(s, held, what)| {
            let points = s.mean_mib(held, &report.connections).into_iter().map(|(n, mib)| (n as f64, mib)).collect();
            (format!("{} {what}", s.name), points)
        })
        .filter(|(_, points): &(String, Vec<(f64, f64)>)| !points.is_empty())
        .collect();
    if series.is_empty() {
        return Ok(false);
    }
    let heap: Vec<(String, Vec<(f64, f64)>)> = report
        .servers
        .iter()
        .map(|s| {
            let points = s.mean_heap_mib(&report.connections).into_iter().map(|(n, mib)| (n as f64, mib)).collect();
            (format!("{} heap idle", s.name), points)
        })
        .filter(|(_, points): &(String, Vec<(f64, f64)>)| !points.is_empty())
        .collect();
    let (title, y) = if heap.is_empty() {
        ("resident memory", "resident memory (MiB)")
    } else {
        ("resident memory (idle, busy) and live heap (idle)", "MiB")
    };
    xy_lines(
        path,
        &format!("{title} against keep-alive connections on {}, mean of the repeats", report.route),
        "keep-alive connections asked for",
        y,
        &[series, heap].concat(),
    )?;
    Ok(true)
}

/// Draws a `versions` sweep into `path`: instructions per request of each
/// route over the releases, oldest first (each server named `FRAMEWORK
/// RELEASE`, as `versions` names them); false (nothing drawn) for a count
/// of anything else.
///
/// # Errors
/// When the file cannot be written.
pub fn draw_versions(path: &Path, report: &crate::results::CountReport) -> anyhow::Result<bool> {
    let mut releases: Vec<(&str, &str)> = Vec::new();
    let mut routes: Vec<&str> = Vec::new();
    for row in &report.rows {
        let Some((framework, release)) = row.framework.split_once(' ') else { return Ok(false) };
        // A release (`0.8.1`, or `hyper=1.7.0` for another crate), not a layer (`axum trace`).
        if !(release.starts_with(|c: char| c.is_ascii_digit()) || release.contains('=')) {
            return Ok(false);
        }
        if !releases.contains(&(framework, release)) {
            releases.push((framework, release));
        }
        if !routes.contains(&row.route.as_str()) {
            routes.push(&row.route);
        }
    }
    let framework = releases.first().map(|r| r.0);
    if releases.len() < 2 || releases.iter().any(|r| Some(r.0) != framework) {
        return Ok(false);
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let mut series = Vec::new();
    for route in routes {
        let of = |(f, r): &(&str, &str)| {
            report.rows.iter().find(|row| row.framework == format!("{f} {r}") && row.route == route)
        };
        let values: Option<Vec<f64>> =
            releases.iter().map(|r| of(r).map(|row| mean(&row.instructions_per_request))).collect();
        if let Some(values) = values {
            series.push((route.to_owned(), values));
        }
    }
    if series.is_empty() {
        return Ok(false);
    }
    let names: Vec<String> = releases.iter().map(|r| r.1.to_owned()).collect();
    let title = format!("{}: instructions per request per release, mean of the repeats", framework.unwrap_or_default());
    release_lines(path, &title, "instructions per request", &names, &series)?;
    Ok(true)
}
