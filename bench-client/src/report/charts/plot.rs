//! SVG charts of a suite run, drawn with `plotters`: grouped bars with
//! confidence whiskers, per-window series, and latency percentile curves on
//! a log-scaled percentile axis in the style of HdrHistogram's plots
//! (x = 1 / (1 − percentile), so 90 %, 99 %, 99.9 % are equally spaced).

use std::path::Path;

use anyhow::anyhow;
use plotters::coord::ranged1d::AsRangedCoord;
use plotters::prelude::*;

const SIZE: (u32, u32) = (900, 500);
/// Colours of the series, in order (baseline first): ten distinct hues, so
/// a layer sweep's nine lines (3 frameworks × 3 variants) never share one.
const PALETTE: [RGBColor; 10] = [
    RGBColor(0x4c, 0x72, 0xb0),
    RGBColor(0xdd, 0x84, 0x52),
    RGBColor(0x55, 0xa8, 0x68),
    RGBColor(0xc4, 0x4e, 0x52),
    RGBColor(0x81, 0x72, 0xb3),
    RGBColor(0x93, 0x78, 0x60),
    RGBColor(0xda, 0x8b, 0xc3),
    RGBColor(0x8c, 0x8c, 0x8c),
    RGBColor(0xcc, 0xb9, 0x74),
    RGBColor(0x64, 0xb5, 0xcd),
];

/// The colour of series `i`.
pub fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

fn err<E: std::fmt::Display>(path: &Path) -> impl FnOnce(E) -> anyhow::Error + '_ {
    move |e| anyhow!("cannot draw {}: {e}", path.display())
}

/// The chart every drawing gets: `X` by `Y`, in an SVG.
type Chart<'a, 'b, X, Y> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<X, Y>>;

/// A rate as people read it on an axis: `180k`, `1.2M`.
fn human_rate(v: &f64) -> String {
    match v.abs() {
        a if a >= 1e6 => format!("{:.1}M", v / 1e6),
        a if a >= 1e3 => format!("{:.0}k", v / 1e3),
        _ => format!("{v:.0}"),
    }
}

/// A chart of `x` by `y` on a white canvas under `title`, drawn by `draw`,
/// then its legend at `legend`, written as an SVG to `path`: the one
/// preamble every chart shares.
fn canvas<X: AsRangedCoord, Y: AsRangedCoord>(
    path: &Path,
    title: &str,
    (x, y): (X, Y),
    legend: SeriesLabelPosition,
    draw: impl FnOnce(&mut Chart<'_, '_, X::CoordDescType, Y::CoordDescType>) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    canvas_with(path, title, (x, y), (legend, 80), draw)
}

/// [`canvas`] with a y label area of `y_labels` pixels.
fn canvas_with<X: AsRangedCoord, Y: AsRangedCoord>(
    path: &Path,
    title: &str,
    (x, y): (X, Y),
    (legend, y_labels): (SeriesLabelPosition, u32),
    draw: impl FnOnce(&mut Chart<'_, '_, X::CoordDescType, Y::CoordDescType>) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(err(path))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 20))
            .margin(15)
            .x_label_area_size(40)
            .y_label_area_size(y_labels)
            .build_cartesian_2d(x, y)
            .map_err(err(path))?;
        draw(&mut chart)?;
        chart
            .configure_series_labels()
            .position(legend)
            .border_style(BLACK)
            .background_style(WHITE)
            .draw()
            .map_err(err(path))?;
        root.present().map_err(err(path))?;
    }
    Ok(crate::sys::write_or_keep(path, svg.as_bytes())?)
}

/// One bar: a group (framework), a series (variant), a height and an interval.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    /// Index of the group along the x axis.
    pub group: usize,
    /// Index of the series within the group (its colour).
    pub series: usize,
    /// Height, requests per second.
    pub rate_per_s: f64,
    /// 95 % interval drawn as a whisker, if known.
    pub interval: Option<(f64, f64)>,
}

/// Grouped bars: one group per name of `groups`, one bar per series of
/// `series` in each, whiskers for the intervals. Writes an SVG to `path`.
///
/// # Errors
/// When the file cannot be written.
pub fn bars(path: &Path, title: &str, groups: &[String], series: &[String], bars: &[Bar]) -> anyhow::Result<()> {
    let top = bars.iter().map(|b| b.interval.map_or(b.rate_per_s, |i| i.1.max(b.rate_per_s))).fold(1.0, f64::max) * 1.3;
    canvas(path, title, (0.0..groups.len() as f64, 0.0..top), SeriesLabelPosition::UpperRight, |chart| {
        let names = groups.to_vec();
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(groups.len() * 2 + 1)
            .x_label_formatter(&|x| {
                let centre = x - x.floor();
                if (centre - 0.5).abs() < 1e-6 {
                    names.get(x.floor() as usize).cloned().unwrap_or_default()
                } else {
                    String::new()
                }
            })
            .y_desc("successful requests per second")
            .y_label_formatter(&human_rate)
            .draw()
            .map_err(err(path))?;
        let width = 0.8 / series.len().max(1) as f64;
        for (s, name) in series.iter().enumerate() {
            let mine: Vec<&Bar> = bars.iter().filter(|b| b.series == s).collect();
            let x0 = |b: &Bar| b.group as f64 + 0.1 + width * b.series as f64;
            chart
                .draw_series(
                    mine.iter().map(|b| {
                        Rectangle::new([(x0(b), 0.0), (x0(b) + width * 0.9, b.rate_per_s)], color(s).filled())
                    }),
                )
                .map_err(err(path))?
                .label(name.as_str())
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], color(s).filled()));
            chart
                .draw_series(mine.iter().filter_map(|b| {
                    let (lo, hi) = b.interval?;
                    let xc = x0(b) + width * 0.45;
                    Some(PathElement::new(vec![(xc, lo), (xc, hi)], BLACK.stroke_width(2)))
                }))
                .map_err(err(path))?;
        }
        Ok(())
    })
}

/// Lines over the measured windows: one per series of requests per second
/// per window (`window_s` seconds each), coloured by its group; the legend
/// names each group once.
///
/// # Errors
/// When the file cannot be written.
pub fn window_series(
    path: &Path,
    title: &str,
    window_s: f64,
    groups: &[String],
    series: &[(usize, Vec<f64>)],
) -> anyhow::Result<()> {
    let windows = series.iter().map(|s| s.1.len()).max().unwrap_or(1).max(1);
    let top = series.iter().flat_map(|s| s.1.iter().copied()).fold(1.0, f64::max) * 1.15;
    canvas(path, title, (0.0..windows as f64 * window_s, 0.0..top), SeriesLabelPosition::LowerRight, |chart| {
        chart
            .configure_mesh()
            .x_desc("seconds since the end of the warm-up (window end)")
            .y_desc("successful requests per second")
            .y_label_formatter(&human_rate)
            .draw()
            .map_err(err(path))?;
        let mut named = vec![false; groups.len()];
        for (group, rates) in series {
            let (g, points) = (*group, rates.iter().enumerate().map(|(w, r)| ((w + 1) as f64 * window_s, *r)));
            let drawn = chart.draw_series(LineSeries::new(points, color(g).stroke_width(2))).map_err(err(path))?;
            if let Some(done) = named.get_mut(g).filter(|d| !**d) {
                *done = true;
                drawn
                    .label(groups[g].as_str())
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 12, y)], color(g).stroke_width(2)));
            }
        }
        Ok(())
    })
}

/// One change of the deltas chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Mark {
    /// What changed, e.g. `axum arc` (the row's label).
    pub name: String,
    /// Its framework's index (its colour and legend entry).
    pub group: usize,
    /// After over before, successful requests per second.
    pub ratio: f64,
    /// Its 95 % interval, if known.
    pub interval: Option<(f64, f64)>,
}

/// The changes the changes chart labels, percent, those in its range.
const CHANGE_TICKS_PERCENT: [f64; 21] = [
    -90.0, -75.0, -50.0, -25.0, -10.0, -5.0, -2.0, -1.0, 0.0, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 300.0,
    500.0, 1000.0, 2000.0,
];

/// Every change as its ratio (log scale) with its 95 % interval, one row
/// each, coloured by group, beside a line at 1× (no change): a change is
/// called when its interval stays on one side of the line. Writes an SVG.
///
/// # Errors
/// When the file cannot be written.
pub fn changes(path: &Path, title: &str, groups: &[String], marks: &[Mark]) -> anyhow::Result<()> {
    let axis = RatioAxis {
        desc: "change in successful requests per second (log scale) with its 95 % interval",
        label: |x| format!("{:+.0} %", (x - 1.0) * 100.0),
    };
    ratio_rows(path, title, &axis, groups, marks)
}

/// Ratios as `2.0×` (log scale) with their 95 % intervals, one row each,
/// coloured by group, beside a line at 1× (the two alike); the x axis
/// described by `desc`. Writes an SVG.
///
/// # Errors
/// When the file cannot be written.
pub fn ratios(path: &Path, title: &str, desc: &str, groups: &[String], marks: &[Mark]) -> anyhow::Result<()> {
    let axis = RatioAxis { desc, label: |x| format!("{x:.2}×") };
    ratio_rows(path, title, &axis, groups, marks)
}

/// How the x axis of a chart of ratios reads.
struct RatioAxis<'a> {
    /// Its description.
    desc: &'a str,
    /// A tick's label.
    label: fn(f64) -> String,
}

/// The ticks of a log axis from `lo` to `hi`: round changes within the range
/// (the log axis alone labels powers of ten, so a range of a few percent
/// showed only its 0 %), outward from no change, each at least a 14th of the
/// axis from the last, so that no two labels overlap.
fn ticks_within(lo: f64, hi: f64) -> Vec<f64> {
    let gap = (hi.ln() - lo.ln()) / 14.0;
    let round: Vec<f64> =
        CHANGE_TICKS_PERCENT.iter().map(|p| 1.0 + p / 100.0).filter(|r| (lo..=hi).contains(r)).collect();
    let mut ticks = vec![1.0];
    for side in [
        round.iter().copied().filter(|&r| r > 1.0).collect::<Vec<_>>(),
        round.iter().rev().copied().filter(|&r| r < 1.0).collect(),
    ] {
        let mut last = 1.0_f64;
        for r in side {
            if (r.ln() - last.ln()).abs() >= gap {
                ticks.push(r);
                last = r;
            }
        }
    }
    ticks.sort_by(f64::total_cmp);
    ticks
}

/// The rows of [`changes`] and [`ratios`].
fn ratio_rows(path: &Path, title: &str, axis: &RatioAxis<'_>, groups: &[String], marks: &[Mark]) -> anyhow::Result<()> {
    let ends =
        marks.iter().flat_map(|m| [m.ratio, m.interval.map_or(m.ratio, |i| i.0), m.interval.map_or(m.ratio, |i| i.1)]);
    let (lo, hi) = ends.fold((1.0_f64, 1.0_f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let rows = marks.len() as f64;
    let names: Vec<String> = marks.iter().map(|m| m.name.clone()).collect();
    let (lo, hi) = (lo * 0.97, hi * 1.03);
    let x = (lo..hi).log_scale().with_key_points(ticks_within(lo, hi));
    canvas_with(path, title, (x, 0.0..rows), (SeriesLabelPosition::LowerRight, 170), |chart| {
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(marks.len() * 2 + 1)
            .y_label_formatter(&|y| {
                let row = rows - y - 0.5;
                if (row - row.round()).abs() < 1e-6 {
                    names.get(row.round() as usize).cloned().unwrap_or_default()
                } else {
                    String::new()
                }
            })
            .x_label_formatter(&|x| (axis.label)(*x))
            .x_desc(axis.desc)
            .draw()
            .map_err(err(path))?;
        chart
            .draw_series(std::iter::once(PathElement::new(vec![(1.0, 0.0), (1.0, rows)], BLACK.stroke_width(1))))
            .map_err(err(path))?;
        let y_of = |i: usize| rows - i as f64 - 0.5;
        for (g, group) in groups.iter().enumerate() {
            let mine: Vec<(usize, &Mark)> = marks.iter().enumerate().filter(|(_, m)| m.group == g).collect();
            chart
                .draw_series(mine.iter().filter_map(|(i, m)| {
                    let (l, h) = m.interval?;
                    Some(PathElement::new(vec![(l, y_of(*i)), (h, y_of(*i))], color(g).stroke_width(3)))
                }))
                .map_err(err(path))?;
            chart
                .draw_series(mine.iter().map(|(i, m)| Circle::new((m.ratio, y_of(*i)), 5, color(g).filled())))
                .map_err(err(path))?
                .label(group.as_str())
                .legend(move |(x, y)| Circle::new((x + 6, y), 5, color(g).filled()));
        }
        Ok(())
    })
}

/// Latency by percentile, one curve per named series of (percentile in
/// percent, latency in µs) points; percentiles of 100 are left out.
///
/// # Errors
/// When the file cannot be written.
pub fn latency_curves(path: &Path, title: &str, series: &[(String, Vec<(f64, f64)>)]) -> anyhow::Result<()> {
    let x_of = |p: f64| 1.0 / (1.0 - p / 100.0);
    let top_ms = series.iter().flat_map(|s| s.1.iter().map(|p| p.1 / 1000.0)).fold(0.1, f64::max) * 1.15;
    canvas(path, title, ((1.0..1e5).log_scale(), 0.0..top_ms), SeriesLabelPosition::UpperLeft, |chart| {
        chart
            .configure_mesh()
            .x_desc("percentile")
            .y_desc("latency (ms)")
            .x_label_formatter(&|x| {
                let text = format!("{:.4}", (1.0 - 1.0 / x) * 100.0);
                format!("{}%", text.trim_end_matches('0').trim_end_matches('.'))
            })
            .draw()
            .map_err(err(path))?;
        for (i, (name, points)) in series.iter().enumerate() {
            let pts = points.iter().filter(|p| p.0 < 100.0).map(|(p, us)| (x_of(*p), us / 1000.0));
            chart
                .draw_series(LineSeries::new(pts, color(i).stroke_width(2)))
                .map_err(err(path))?
                .label(name.as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 12, y)], color(i).stroke_width(2)));
        }
        Ok(())
    })
}

/// Lines through (x, y) points, one per named series, on linear axes.
///
/// # Errors
/// When the file cannot be written.
pub fn xy_lines(
    path: &Path,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[(String, Vec<(f64, f64)>)],
) -> anyhow::Result<()> {
    let x_max = series.iter().flat_map(|s| s.1.iter().map(|p| p.0)).fold(1.0, f64::max);
    let y_max = series.iter().flat_map(|s| s.1.iter().map(|p| p.1)).fold(0.1, f64::max) * 1.15;
    canvas(path, title, (0.0..x_max, 0.0..y_max), SeriesLabelPosition::UpperLeft, |chart| {
        chart.configure_mesh().x_desc(x_desc).y_desc(y_desc).draw().map_err(err(path))?;
        for (i, (name, points)) in series.iter().enumerate() {
            line_with_points(chart, path, i, name, points)?;
        }
        Ok(())
    })
}

/// Lines through one value per release, `releases` named on the x axis
/// oldest first, one line per named series (a value per release).
///
/// # Errors
/// When the file cannot be written.
pub fn release_lines(
    path: &Path,
    title: &str,
    y_desc: &str,
    releases: &[String],
    series: &[(String, Vec<f64>)],
) -> anyhow::Result<()> {
    let values = || series.iter().flat_map(|s| s.1.iter().copied());
    let (low, high) = values().fold((f64::MAX, 0.0_f64), |(l, h), v| (l.min(v), h.max(v)));
    let pad = ((high - low) * 0.15).max(high * 0.005);
    let x = -0.5..releases.len() as f64 - 0.5;
    canvas(path, title, (x, (low - pad).max(0.0)..high + pad), SeriesLabelPosition::UpperRight, |chart| {
        let name = |x: &f64| releases.get(x.round() as usize).cloned().unwrap_or_default();
        let mesh = &mut chart.configure_mesh();
        mesh.x_labels(releases.len()).x_label_formatter(&name).x_desc("release").y_desc(y_desc);
        mesh.draw().map_err(err(path))?;
        for (i, (label, values)) in series.iter().enumerate() {
            let points: Vec<(f64, f64)> = values.iter().enumerate().map(|(k, &v)| (k as f64, v)).collect();
            line_with_points(chart, path, i, label, &points)?;
        }
        Ok(())
    })
}

/// Series `i`, named `label` in the legend: a line through `points`, each marked.
fn line_with_points<X: Ranged<ValueType = f64>, Y: Ranged<ValueType = f64>>(
    chart: &mut Chart<'_, '_, X, Y>,
    path: &Path,
    i: usize,
    label: &str,
    points: &[(f64, f64)],
) -> anyhow::Result<()> {
    chart
        .draw_series(LineSeries::new(points.iter().copied(), color(i).stroke_width(2)))
        .map_err(err(path))?
        .label(label)
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 12, y)], color(i).stroke_width(2)));
    chart.draw_series(points.iter().map(|p| Circle::new(*p, 3, color(i).filled()))).map_err(err(path))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(path: &Path) -> String {
        let text = std::fs::read_to_string(path).unwrap();
        roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("{} is not XML: {e}", path.display()));
        text
    }

    #[test]
    fn the_changes_chart_has_a_mark_per_change_by_framework_and_a_no_change_line() {
        let dir = std::env::temp_dir().join(format!("charts-changes-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("changes.svg");
        let groups = vec!["actix".to_owned(), "axum".to_owned()];
        let marks = vec![
            Mark { name: "actix arc".into(), group: 0, ratio: 1.4, interval: Some((1.3, 1.5)) },
            Mark { name: "axum arc".into(), group: 1, ratio: 3.9, interval: Some((3.7, 4.2)) },
            Mark { name: "axum cached".into(), group: 1, ratio: 0.98, interval: Some((0.9, 1.05)) },
        ];
        changes(&path, "every change", &groups, &marks).unwrap();
        let text = parse(&path);
        let doc = roxmltree::Document::parse(&text).unwrap();
        let circles_of = |g: usize| {
            let c = color(g);
            let fill = format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2);
            doc.descendants()
                .filter(|n| {
                    n.has_tag_name("circle") && n.attribute("fill").is_some_and(|f| f.eq_ignore_ascii_case(&fill))
                })
                .count()
        };
        assert_eq!((circles_of(0), circles_of(1)), (1 + 1, 2 + 1), "a mark per change plus the legend's");
        let texts: Vec<&str> =
            doc.descendants().filter(|n| n.has_tag_name("text")).filter_map(|n| n.text()).map(str::trim).collect();
        for label in ["actix arc", "axum arc", "axum cached", "every change"] {
            assert!(texts.contains(&label), "{label} drawn as text: {texts:?}");
        }
        assert!(texts.iter().any(|t| t.ends_with(" %") && t.starts_with('+')), "ticks as changes: {texts:?}");
        // A range of a few percent still reads in round changes.
        let narrow =
            vec![Mark { name: "axum preserialized".into(), group: 1, ratio: 1.08, interval: Some((1.05, 1.11)) }];
        changes(&path, "every change", &groups, &narrow).unwrap();
        let text = parse(&path);
        let doc = roxmltree::Document::parse(&text).unwrap();
        let ticks: Vec<&str> = doc
            .descendants()
            .filter(|n| n.has_tag_name("text"))
            .filter_map(|n| n.text())
            .map(str::trim)
            .filter(|t| t.ends_with(" %"))
            .collect();
        assert_eq!(ticks, ["-2 %", "+0 %", "+2 %", "+5 %", "+10 %"], "{text}");
    }

    #[test]
    fn bar_chart_has_one_bar_per_group_and_series_and_parses() {
        let dir = std::env::temp_dir().join(format!("charts-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("bars.svg");
        let groups = vec!["actix".to_owned(), "axum".to_owned(), "rocket".to_owned()];
        let series = vec!["fat".to_owned(), "arc".to_owned()];
        let bars_in: Vec<Bar> = (0..3)
            .flat_map(|g| {
                (0..2).map(move |s| Bar {
                    group: g,
                    series: s,
                    rate_per_s: 1000.0 * (g + s + 1) as f64,
                    interval: Some((900.0, 1100.0)),
                })
            })
            .collect();
        bars(&path, "state", &groups, &series, &bars_in).unwrap();
        let text = parse(&path);
        let doc = roxmltree::Document::parse(&text).unwrap();
        for s in 0..2 {
            let c = color(s);
            let fill = format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2);
            let rects = doc
                .descendants()
                .filter(|n| {
                    n.has_tag_name("rect") && n.attribute("fill").is_some_and(|f| f.eq_ignore_ascii_case(&fill))
                })
                .count();
            assert_eq!(rects, 3 + 1, "series {s}: one bar per framework plus its legend swatch");
        }
        let texts: Vec<&str> =
            doc.descendants().filter(|n| n.has_tag_name("text")).filter_map(|n| n.text()).map(str::trim).collect();
        for label in ["actix", "axum", "rocket", "fat", "arc", "state"] {
            assert!(texts.contains(&label), "{label} drawn as text: {texts:?}");
        }
        let lat = dir.join("lat.svg");
        latency_curves(&lat, "latency", &[("arc".to_owned(), vec![(50.0, 800.0), (99.0, 1500.0), (99.9, 2500.0)])])
            .unwrap();
        let lat_text = parse(&lat);
        assert!(lat_text.contains("99.9%") && lat_text.contains("90%"), "percentile axis labels");
        let win = dir.join("win.svg");
        window_series(
            &win,
            "windows",
            1.0,
            &["fat".to_owned()],
            &[(0, vec![10.0, 12.0, 11.0]), (0, vec![9.0, 9.5, 9.0])],
        )
        .unwrap();
        parse(&win);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
