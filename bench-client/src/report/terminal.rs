//! What the commands print to the terminal besides Markdown tables: the
//! summary of `load` (and of `merge`, with its table of clients), the
//! summary of `watch`, the suite's line per run, the client's ceiling, and
//! the shape and top of a profile's self time.

use std::collections::BTreeMap;
use std::io::{self, Write};

use super::flames::{Shape, top_self};
use super::format::or_absent;
use crate::calibrate::Ceiling;
use crate::engine::{COUNTERS, Clean, KINDS, LATE_SEND_TOLERANCE, LatencySummary, Protocol, Spec};
use crate::measure::RunFigures;
use crate::results::{LoadReport, MergeInfo, WatchReport};

/// Windows listed one by one in the summary; more are summed up in one line
/// (all of them are in `--json`).
const WINDOWS_PRINTED: usize = 60;

/// Above this coefficient of variation of its windows, a run's rate is
/// said to be noisy.
const NOISY_WINDOWS_CV_PERCENT: f64 = 5.0;

/// `label count` of each labelled counter that `pick` takes, in the table's order.
fn labelled(f: &RunFigures, pick: impl Fn(&Spec) -> bool) -> String {
    let said = COUNTERS.iter().filter(|s| pick(s));
    said.filter_map(|s| s.label.map(|label| format!("{label} {}", f.counts.get(s.counter))))
        .collect::<Vec<_>>()
        .join("; ")
}

/// The summary `load` prints: counts, failures by kind, connections,
/// windows, CPU use and latency of the run of `url`; `merge` prints the same
/// for the merged run, followed by its table of clients.
///
/// # Errors
/// When `w` cannot be written.
pub fn load_summary(w: &mut impl Write, r: &LoadReport) -> io::Result<()> {
    let f = &r.figures;
    headline(w, r)?;
    counts_lines(w, f)?;
    windows_and_cpu_lines(w, f)?;
    latency_line(w, "latency (ms)", f.latency_us.as_ref())?;
    // The open loop says which latency is which, measured or not.
    if f.rate_per_s.is_some() {
        writeln!(w, "  {:<20} (from when each request was due: corrected for coordinated omission)", "")?;
        latency_line(w, "uncorrected (ms)", f.latency_uncorrected_us.as_ref())?;
    }
    if let Some(stray) = stray(f) {
        writeln!(w, "  {stray}")?;
    }
    for shortfall in f.shortfalls() {
        writeln!(w, "  SHORT: {shortfall}")?;
    }
    match &r.merge {
        Some(m) => clients_table(w, m),
        None => Ok(()),
    }
}

/// The run's first line: URL, connections, protocol, mode, clients, how
/// long it measured and whether it is complete.
fn headline(w: &mut impl Write, r: &LoadReport) -> io::Result<()> {
    let (url, f) = (&r.url, &r.figures);
    let mode = match f.rate_per_s {
        Some(rate) => format!("open loop at {} requests/s", super::per_s(rate)),
        None => "closed loop".to_owned(),
    };
    let incomplete = if f.complete {
        ""
    } else if f.server_lost {
        " (INCOMPLETE: the server exited; the run ended with that window)"
    } else if f.failed.connect > 0 {
        " (INCOMPLETE: connections failed; the server may have died)"
    } else if let Some((spec, n)) = f.counts.above_zero(Clean::Incomplete).next() {
        &format!(" (INCOMPLETE: the windows began short of the load asked for; {} {n})", spec.name)
    } else {
        " (interrupted)"
    };
    let who = match (&r.merge, r.segment) {
        (Some(m), _) => format!(" · {} clients merged{}", m.clients.len(), if m.aligned { "" } else { " (FORCED)" }),
        (None, Some(i)) => format!(" · client {i} of {} ({})", r.clients, f.label),
        (None, None) => String::new(),
    };
    writeln!(
        w,
        "{} · {} connections · {} {} · {mode}{who} · {:.1} s measured{incomplete}",
        url,
        f.connections_requested,
        match f.protocol {
            Protocol::Http1 => "pipeline",
            Protocol::Http2 => "HTTP/2, streams",
        },
        f.pipeline,
        f.duration_s
    )
}

/// What became of the requests and the connections: successes, failures by
/// kind, in flight, the schedule (open loop), connections, TLS handshakes.
fn counts_lines(w: &mut impl Write, f: &RunFigures) -> io::Result<()> {
    let rate = or_absent(f.requests_per_s, super::per_s);
    writeln!(w, "  successful requests  {:>12}   ({rate} requests/s)", f.successful)?;
    // Every kind of the one table: the requests' kinds, then the connections' (a map by code only when not empty).
    let shown = |request: bool, sep: &str| {
        KINDS
            .iter()
            .enumerate()
            .filter(|(i, k)| k.request == request && !(k.by_code && f.failed.by_kind()[*i] == 0))
            .map(|(i, k)| format!("{} {}", k.label, f.failed.shown(i)))
            .collect::<Vec<_>>()
            .join(sep)
    };
    writeln!(w, "  failed requests      {:>12}   ({}; {})", f.failed_total, shown(true, ", "), shown(false, "; "))?;
    writeln!(w, "  in flight at end     {:>12}", f.counts.in_flight_at_deadline)?;
    // The declared counters with a label: the schedule's (open loop), then the others.
    if f.rate_per_s.is_some() {
        let schedule = labelled(f, |s| s.clean == Clean::Schedule);
        writeln!(
            w,
            "  schedule             {schedule}   (late: written over {} ms after due)",
            LATE_SEND_TOLERANCE.as_millis()
        )?;
        if let Some(line) = waiting_line(f) {
            writeln!(w, "  waiting              {line}")?;
        }
    }
    writeln!(
        w,
        "  connections          {:>12} established of {} requested; {}",
        f.counts.connections_established,
        f.connections_requested,
        labelled(f, |s| s.clean != Clean::Schedule)
    )?;
    if f.counts.tls_handshakes > 0 {
        writeln!(w, "  TLS handshakes       {:>12}   ({} resumed)", f.counts.tls_handshakes, f.counts.tls_resumed)?;
    }
    Ok(())
}

/// The windows and how much they vary, the server's CPU (saturated or
/// not) and the client's.
fn windows_and_cpu_lines(w: &mut impl Write, f: &RunFigures) -> io::Result<()> {
    if f.windows.len() <= WINDOWS_PRINTED {
        writeln!(w, "  per window           {:?}", f.windows)?;
    } else {
        let (lo, hi) = (f.windows.iter().min().unwrap_or(&0), f.windows.iter().max().unwrap_or(&0));
        writeln!(w, "  per window           {} windows of {} to {} (every window in --json)", f.windows.len(), lo, hi)?;
    }
    if let Some(cv) = f.window_cv_percent.filter(|cv| *cv > NOISY_WINDOWS_CV_PERCENT) {
        writeln!(
            w,
            "  noise                the windows vary by {cv:.1} % (CV): a second run may read another rate by as much; \
             to compare two versions, `bench-client ab` measures them side by side"
        )?;
    }
    match f.server_cpu_percent {
        Some(p) => writeln!(
            w,
            "  server CPU           {p:>11.1} %   of {} CPU(s){}",
            or_absent(f.server_cpus, |n| n.to_string()),
            if f.client_bound { "  CLIENT-BOUND: the server was not saturated" } else { "  (saturated)" }
        )?,
        None => writeln!(w, "  server CPU                 unknown   (pass --server-pid to check saturation)")?,
    }
    writeln!(
        w,
        "  client CPU           {:>13}   {} per 1,000 successful requests; peak RSS {:.1} MiB",
        or_absent(f.client_cpu_percent, |p| format!("{p:.1} %")),
        or_absent(f.client_cpu_ms_per_1k, |ms| format!("{ms:.2} ms")),
        f.client_peak_rss_bytes as f64 / (1024.0 * 1024.0)
    )
}

/// One line of latency percentiles, milliseconds; `-` for each when none
/// was measured.
fn latency_line(w: &mut impl Write, name: &str, l: Option<&LatencySummary>) -> io::Result<()> {
    let ms = |pick: fn(&LatencySummary) -> u64| or_absent(l, |l| format!("{:.3}", pick(l) as f64 / 1e3));
    writeln!(
        w,
        "  {name:<20} p50 {}  p90 {}  p99 {}  p99.9 {}  max {}",
        ms(|l| l.p50),
        ms(|l| l.p90),
        ms(|l| l.p99),
        ms(|l| l.p999),
        ms(|l| l.max)
    )
}

/// A merged run's clients, one line each, and what `--force` overrode.
fn clients_table(w: &mut impl Write, m: &MergeInfo) -> io::Result<()> {
    writeln!(
        w,
        "  clients              started within {} ms of each other (tolerance {} ms); latency from their added histograms",
        m.start_spread_ms, m.tolerance_ms
    )?;
    writeln!(
        w,
        "    {:<7} {:<24} {:>5} {:>12} {:>11} {:>8} {:>9} {:>7} {:>7}  file",
        "segment", "label", "conns", "successful", "requests/s", "failed", "p99 (ms)", "CPU %", "start"
    )?;
    for c in &m.clients {
        writeln!(
            w,
            "    {:<7} {:<24} {:>5} {:>12} {:>11} {:>8} {:>9} {:>7} {:>5} ms  {}{}",
            or_absent(c.segment, |i| i.to_string()),
            c.label,
            c.connections_requested,
            c.successful,
            or_absent(c.requests_per_s, |r| format!("{r:.0}")),
            c.failed_total,
            or_absent(c.latency_p99_us, |us| format!("{:.3}", us as f64 / 1e3)),
            or_absent(c.client_cpu_percent, |p| format!("{p:.1}")),
            format!("+{}", c.start_offset_ms),
            c.file,
            if c.complete { "" } else { "  INCOMPLETE" }
        )?;
    }
    if let Some(s) = &m.server {
        writeln!(w, "  server CPU from      {} ({} pid {} on {})", s.file, s.process, s.pid, s.label)?;
    }
    for o in &m.overridden {
        writeln!(w, "  FORCED: {o}")?;
    }
    Ok(())
}

/// The summary `watch` prints: the process, its CPU use per window, and
/// whether it lived through them.
///
/// # Errors
/// When `w` cannot be written.
pub fn watch_summary(w: &mut impl Write, r: &WatchReport) -> io::Result<()> {
    let state = if r.server_lost {
        " (INCOMPLETE: the process exited; sampling ended with that window)"
    } else if r.complete {
        ""
    } else {
        " (interrupted)"
    };
    writeln!(
        w,
        "watch {} (pid {}) on {} · {} of {} windows of {} s{state}",
        r.process,
        r.pid,
        r.label,
        r.server_cpu_percent_windows.len(),
        r.planned_windows(),
        r.window_s
    )?;
    match r.server_cpu_percent {
        Some(p) => writeln!(
            w,
            "  server CPU           {p:>11.1} %   of {} CPU(s)",
            or_absent(r.server_cpus, |n| n.to_string())
        )?,
        None => writeln!(w, "  server CPU                    -")?,
    }
    let windows: Vec<String> = r.server_cpu_percent_windows.iter().map(|p| format!("{p:.1}")).collect();
    writeln!(w, "  per window (%)       [{}]", windows.join(", "))
}

/// One line: the client's ceiling, both CPU uses, and which side limited it.
pub fn ceiling_line(ceiling: &Ceiling) -> String {
    let f = &ceiling.figures;
    let limit = if f.client_bound {
        "the client's ceiling"
    } else {
        "a lower bound: the responder, not the client, was saturated"
    };
    format!(
        "client ceiling: {} successful requests/s ({} connections, pipeline {}, canned /plaintext from the \
         built-in responder on CPU(s) {}; client on CPU(s) {} at {} % busy, responder {} %): {limit}",
        or_absent(f.requests_per_s, |r| format!("{r:.0}")),
        f.connections_requested,
        f.pipeline,
        ceiling.server_cpus,
        ceiling.client_cpus,
        or_absent(f.client_cpu_percent, |p| format!("{p:.0}")),
        or_absent(f.server_cpu_percent, |p| format!("{p:.0}")),
    )
}

/// The suite's line for one finished run, after its `label` (framework,
/// layers, round, scenario and variant, padded by the caller).
pub fn run_line(label: &str, f: &RunFigures) -> String {
    let mut line = format!(
        "  {label} {:>9} successful {:>9}/s  {:>5} failed  p99 {:>7} ms  server CPU {:>5} %{}",
        f.successful,
        or_absent(f.requests_per_s, |r| format!("{r:.0}")),
        f.failed_total,
        or_absent(f.latency_us, |l| format!("{:.2}", l.p99 as f64 / 1000.0)),
        or_absent(f.server_cpu_percent, |p| format!("{p:.1}")),
        if f.client_bound { "  CLIENT-BOUND" } else { "" }
    );
    if let Some(stray) = stray(f) {
        line.push_str(&format!("  {stray}"));
    }
    if f.counts.warmup_failed_protocol > 0 {
        line.push_str(&format!("  WARM-UP: {} protocol failures", f.counts.warmup_failed_protocol));
    }
    for shortfall in f.shortfalls() {
        line.push_str(&format!("  SHORT: {shortfall}"));
    }
    line
}

/// What a run whose server sent bytes of no response says of them (a
/// failure of the run beside its failed requests), if it did.
fn stray(f: &RunFigures) -> Option<String> {
    (f.failed.stray > 0).then(|| {
        format!(
            "STRAY: the server sent bytes that belong to no response on {} connections, each closed (RFC 9112 \
             section 6.3)",
            f.failed.stray
        )
    })
}

/// The `n` functions with the most self time in `stacks` (folded stacks,
/// sample weights in nanoseconds of CPU), under a heading naming `what`,
/// each line indented by `indent` spaces.
pub fn top_self_time(what: &str, stacks: &BTreeMap<String, u64>, n: usize, indent: usize) -> String {
    let cpu_ms = stacks.values().sum::<u64>() as f64 / 1e6;
    let mut text = format!("{:indent$}top self time{what} ({cpu_ms:.0} ms of server CPU sampled):", "");
    for (function, percent) in top_self(stacks, n) {
        text.push_str(&format!("\n{:indent$}  {percent:5.1} %  {function}", ""));
    }
    text
}

/// A flame graph's figures in a phrase: its samples, the share whose stack
/// is cut before its thread entry, the share with `[unknown]` frames.
pub fn shape_line(shape: &Shape) -> String {
    format!(
        "{} samples, {:.1} % cut stacks, {:.1} % [unknown]",
        shape.samples,
        shape.cut_percent(),
        shape.unknown_percent()
    )
}

/// Open loop, requests that fell due while every connection waited on the
/// server: how many, and the connections that would have kept up (Little's
/// law: the rate times the time a request held its connection, at p99).
fn waiting_line(f: &RunFigures) -> Option<String> {
    let rate = f.rate_per_s?;
    let waited = f.counts.waited_on_server;
    if waited == 0 {
        return None;
    }
    let held_us = f.latency_uncorrected_us.as_ref().or(f.latency_us.as_ref())?.p99;
    let needed = (rate * held_us as f64 / 1e6 / f.pipeline as f64).ceil() as u64;
    Some(format!(
        "{waited} requests fell due while all {} connections waited on the server (its latency, not a shortfall); \
         about {needed} connections would keep up (rate × p99 time per request)",
        f.connections_requested
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::fixtures::load_report;

    fn summary(r: &LoadReport) -> String {
        let mut out = Vec::new();
        load_summary(&mut out, r).unwrap();
        String::from_utf8(out).unwrap()
    }

    fn line<'a>(text: &'a str, starts: &str) -> &'a str {
        text.lines().find(|l| l.trim_start().starts_with(starts)).unwrap_or_else(|| panic!("{starts}: {text}"))
    }

    #[test]
    fn a_figure_not_measured_prints_as_a_dash_never_as_zero() {
        let served = load_report(0, 1, 1_796_119_201_000, &[100, 200, 300]);
        let text = summary(&served);
        assert_eq!(
            line(&text, "latency (ms)"),
            "  latency (ms)         p50 0.200  p90 0.300  p99 0.300  p99.9 0.300  max 0.300"
        );
        assert!(line(&text, "client CPU").contains("11.0 %"), "{text}");

        let mut nothing = load_report(0, 1, 1_796_119_201_000, &[]);
        assert_eq!(nothing.figures.latency_us, None);
        let text = summary(&nothing);
        assert_eq!(line(&text, "latency (ms)"), "  latency (ms)         p50 -  p90 -  p99 -  p99.9 -  max -");
        assert!(line(&text, "successful requests").ends_with("(0 requests/s)"), "a measured rate of 0: {text}");

        // No time measured and no CPU sampled: no rate, no CPU.
        (nothing.figures.requests_per_s, nothing.figures.client_cpu_percent) = (None, None);
        nothing.figures.rate_per_s = Some(100.0);
        let text = summary(&nothing);
        assert!(line(&text, "successful requests").ends_with("(- requests/s)"), "{text}");
        assert!(line(&text, "client CPU").starts_with("  client CPU                       -   - per 1,000"), "{text}");
        assert_eq!(line(&text, "uncorrected (ms)"), "  uncorrected (ms)     p50 -  p90 -  p99 -  p99.9 -  max -");
        assert!(!text.contains("0.000") && !text.contains("NaN"), "{text}");
        let run = run_line("axum", &nothing.figures);
        assert!(run.contains("successful         -/s") && run.contains("p99       - ms"), "{run}");
        assert!(run.contains("server CPU     - %") && !run.contains("NaN"), "{run}");

        let mut ceiling =
            Ceiling { figures: served.figures, server_cpus: "0".parse().unwrap(), client_cpus: "1".parse().unwrap() };
        ceiling.figures.requests_per_s = Some(1234.4);
        let text = ceiling_line(&ceiling);
        assert!(text.starts_with("client ceiling: 1234 successful requests/s"), "{text}");
        assert!(text.contains("at 11 % busy, responder - %)"), "the responder's CPU not sampled: {text}");
        ceiling.figures.requests_per_s = None;
        assert!(ceiling_line(&ceiling).starts_with("client ceiling: - successful requests/s"));
    }

    #[test]
    fn a_suite_run_with_a_protocol_failure_in_its_warm_up_says_so_on_its_line() {
        let mut f = load_report(0, 1, 1_796_119_201_000, &[100]).figures;
        assert!(!run_line("axum", &f).contains("WARM-UP"));
        (f.counts.warmup_failed_protocol, f.failed.protocol) = (1, 1);
        let run = run_line("axum", &f);
        assert!(run.contains("      0 failed") && run.ends_with("  WARM-UP: 1 protocol failures"), "{run}");
    }
}
