//! The OpenMetrics text of one scrape: a snapshot of the run's counters,
//! encoded by `prometheus-client` as a [`Collector`].

use std::time::Instant;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::{Registry, Unit};

use super::{Identity, Phase, Shared};
use crate::engine::{COUNTERS, KINDS, LIVE_LATENCY_BUCKETS_S, LiveTotals};
use crate::sys::{process_cpu_s, rss_bytes};

/// Everything one scrape reports, read once.
#[derive(Debug)]
struct Snapshot {
    identity: Identity,
    phase: Phase,
    start_unix_s: Option<f64>,
    totals: Option<LiveTotals>,
    server_cpu: Option<(String, f64)>,
    own_cpu_s: Option<f64>,
    own_rss_bytes: u64,
}

/// The OpenMetrics text for `shared` now.
pub(super) fn render(shared: &Shared) -> String {
    let snapshot = Snapshot {
        identity: shared.identity.clone(),
        phase: shared.phase(Instant::now()),
        start_unix_s: shared.started.get().map(|s| s.unix_ms).or(shared.planned_unix_ms).map(|ms| ms as f64 / 1000.0),
        totals: shared.live.as_ref().map(crate::engine::Live::totals),
        server_cpu: shared.server.as_ref().and_then(|(pid, name)| process_cpu_s(Some(*pid)).map(|s| (name.clone(), s))),
        own_cpu_s: process_cpu_s(None),
        own_rss_bytes: rss_bytes(),
    };
    let mut registry = Registry::default();
    registry.register_collector(Box::new(snapshot));
    let mut text = String::new();
    // Writing to a String fails only if a collector does, and ours never does.
    let _ = prometheus_client::encoding::text::encode(&mut text, &registry);
    text
}

/// Encodes one counter family: `(labels, value)` rows.
fn counter(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    unit: Option<&Unit>,
    rows: &[(Vec<(&str, &str)>, u64)],
) -> Result<(), std::fmt::Error> {
    let mut family = encoder.encode_descriptor(name, help, unit, MetricType::Counter)?;
    for (labels, value) in rows {
        ConstCounter::new(*value).encode(family.encode_family(labels)?)?;
    }
    Ok(())
}

/// Encodes one gauge family without labels.
fn gauge(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    unit: Option<&Unit>,
    value: f64,
) -> Result<(), std::fmt::Error> {
    let family = encoder.encode_descriptor(name, help, unit, MetricType::Gauge)?;
    ConstGauge::new(value).encode(family)
}

impl Collector for Snapshot {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let e = &mut encoder;
        let id = &self.identity;
        let (clients, segment) = (id.clients.to_string(), id.segment.map(|s| s.to_string()).unwrap_or_default());
        let info = [
            ("command", id.command),
            ("url", id.url.as_str()),
            ("mode", id.mode),
            ("clients", clients.as_str()),
            ("segment", segment.as_str()),
            ("label", id.label.as_str()),
            ("version", env!("CARGO_PKG_VERSION")),
        ];
        e.encode_descriptor("bench_client", "What this bench-client runs", None, MetricType::Info)?
            .encode_info(&info)?;
        let mut phase = e.encode_descriptor(
            "bench_client_phase",
            "Where the run is: 1 on the current phase",
            None,
            MetricType::Gauge,
        )?;
        for p in Phase::ALL {
            ConstGauge::new(i64::from(p == self.phase)).encode(phase.encode_family(&[("phase", p.name())])?)?;
        }
        if let Some(s) = self.start_unix_s {
            gauge(
                e,
                "bench_client_start_time",
                "The run's start (planned until it starts), Unix time",
                Some(&Unit::Seconds),
                s,
            )?;
        }
        if let Some(t) = &self.totals {
            encode_totals(e, t, id.mode == "open")?;
        }
        if let Some((process, seconds)) = &self.server_cpu {
            let mut family = e.encode_descriptor(
                "bench_server_cpu",
                "CPU time of the server process (user + system)",
                Some(&Unit::Seconds),
                MetricType::Counter,
            )?;
            ConstCounter::new(*seconds).encode(family.encode_family(&[("process", process.as_str())])?)?;
        }
        if let Some(s) = self.own_cpu_s {
            let family = e.encode_descriptor(
                "process_cpu",
                "CPU time of this bench-client",
                Some(&Unit::Seconds),
                MetricType::Counter,
            )?;
            ConstCounter::new(s).encode(family)?;
        }
        gauge(
            e,
            "process_resident_memory",
            "Resident memory of this bench-client",
            Some(&Unit::Bytes),
            self.own_rss_bytes as f64,
        )?;
        Ok(())
    }
}

/// The engine's live families, from its totals `t`: requests by outcome and
/// phase, failures by kind, in flight, connections open, every declared
/// counter with a live metric (those of the schedule only in the
/// `open_loop`), and the latency histogram.
fn encode_totals(e: &mut DescriptorEncoder, t: &LiveTotals, open_loop: bool) -> Result<(), std::fmt::Error> {
    let requests = [
        (vec![("outcome", "success"), ("phase", "warmup")], t.warmup_successful),
        (vec![("outcome", "failure"), ("phase", "warmup")], t.warmup_failed),
        (vec![("outcome", "success"), ("phase", "measured")], t.successful),
        (vec![("outcome", "failure"), ("phase", "measured")], t.failed()),
    ];
    counter(e, "bench_client_requests", "Requests settled, by outcome and phase", None, &requests)?;
    let failures: Vec<_> = KINDS.iter().zip(t.failures).map(|(k, n)| (vec![("kind", k.name)], n)).collect();
    counter(
        e,
        "bench_client_failures",
        "Measured failures by kind (protocol: the warm-up's too; connect: attempts; stray: connections given bytes of no response; no request)",
        None,
        &failures,
    )?;
    gauge(e, "bench_client_in_flight", "Requests written and not yet settled", None, t.in_flight as f64)?;
    gauge(e, "bench_client_connections", "Connections open", None, t.connections_open as f64)?;
    // Every declared counter with a live metric (the closed loop has no schedule to be late on).
    for spec in COUNTERS {
        let Some(metric) = spec.metric.filter(|m| open_loop || !m.open_loop_only) else { continue };
        counter(e, metric.name, spec.help, None, &[(vec![], t.counts.get(spec.counter))])?;
    }
    let buckets: Vec<(f64, u64)> =
        LIVE_LATENCY_BUCKETS_S.iter().copied().chain([f64::INFINITY]).zip(t.latency_buckets).collect();
    let count = t.latency_buckets.iter().sum();
    e.encode_descriptor(
        "bench_client_request_duration",
        "Latency of measured successful requests from when each was due (as of the last window)",
        Some(&Unit::Seconds),
        MetricType::Histogram,
    )?
    .encode_histogram::<prometheus_client::encoding::NoLabelSet>(
        t.latency_sum_us as f64 / 1e6,
        count,
        &buckets,
        None,
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Counts;

    /// The text a scrape of an open- or closed-loop load reports for `counts`.
    fn scrape(mode: &'static str, counts: Counts) -> String {
        let snapshot = Snapshot {
            identity: Identity { command: "load", mode, ..Identity::default() },
            phase: Phase::Measuring,
            start_unix_s: None,
            totals: Some(LiveTotals { counts, ..LiveTotals::default() }),
            server_cpu: None,
            own_cpu_s: None,
            own_rss_bytes: 0,
        };
        let mut registry = Registry::default();
        registry.register_collector(Box::new(snapshot));
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
        text
    }

    #[test]
    fn every_declared_counter_with_a_metric_is_published_with_its_value() {
        let mut counts = Counts::default();
        for (i, spec) in COUNTERS.iter().enumerate() {
            *counts.get_mut(spec.counter) = 1_000 + i as u64;
        }
        let (open, closed) = (scrape("open", counts), scrape("closed", counts));
        let mut published = 0;
        for (i, spec) in COUNTERS.iter().enumerate() {
            let Some(metric) = spec.metric else { continue };
            published += 1;
            let sample = format!("\n{}_total {}\n", metric.name, 1_000 + i);
            assert!(open.contains(&sample), "{sample:?} in {open}");
            assert_eq!(closed.contains(&sample), !metric.open_loop_only, "{sample:?} in {closed}");
            assert!(open.contains(&format!("# HELP {} {}\n", metric.name, spec.help)), "{}", metric.name);
        }
        assert!(published >= 5, "sent, retried, closed by the server, reconnects and late sends are live");
    }
}
