//! Live metrics of a run for Prometheus (`load --metrics-addr`, `watch
//! --metrics-addr`): a small HTTP listener on its own thread answers
//! `GET /metrics` with the OpenMetrics text of what the run has counted so
//! far, `GET /ready` with 200 once preflight has passed (503 before: a
//! Kubernetes readiness probe shows which clients are at the start barrier),
//! and anything else with 404.
//!
//! Telemetry is a live view; results are not (the design note's split,
//! after kubernetes-sigs/inference-perf #797): the request counters are the
//! engine threads' totals, published into atomics on their timers
//! ([`Live`]), and the latency histogram has coarse fixed buckets that add
//! across pods (`sum by (le)`), where the result files carry exact
//! HdrHistograms for `merge`. The exposition format comes from
//! `prometheus-client` (escaping, `_total` suffixes, `# EOF`); the families
//! are listed in `docs/RESULTS.md`.
//!
//! Imports the engine's live counters and `sys` (CPU time from `/proc`); the
//! command line starts it and tells it the phase.

mod exposition;
mod listener;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::engine::Live;

/// The `Content-Type` of `/metrics`.
pub const OPENMETRICS_CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// What a run is, for the info family (`bench_client_info`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Identity {
    /// `load` or `watch`.
    pub command: &'static str,
    /// The URL loaded (empty for `watch`).
    pub url: String,
    /// `closed`, `open` (with `--rate-per-s`), or empty for `watch`.
    pub mode: &'static str,
    /// Clients the load is split over.
    pub clients: u32,
    /// This client's segment; `None` alone.
    pub segment: Option<u32>,
    /// The `--label` (host or pod name).
    pub label: String,
}

/// Where a run is, as `bench_client_phase{phase=…}` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Checking the target before anything is timed (`load` only).
    Preflight,
    /// Preflight passed; waiting for the start barrier.
    Waiting,
    /// The discarded warm-up.
    Warmup,
    /// The measured windows.
    Measuring,
    /// The run ended (results printed).
    Done,
}

impl Phase {
    /// Every phase, in order.
    pub const ALL: [Self; 5] = [Self::Preflight, Self::Waiting, Self::Warmup, Self::Measuring, Self::Done];

    /// The label value.
    pub fn name(self) -> &'static str {
        match self {
            Self::Preflight => "preflight",
            Self::Waiting => "waiting",
            Self::Warmup => "warmup",
            Self::Measuring => "measuring",
            Self::Done => "done",
        }
    }
}

/// The instants of a started run.
#[derive(Debug, Clone, Copy)]
struct Started {
    measure_start: Instant,
    unix_ms: u64,
}

/// What the listener thread and the run share.
#[derive(Debug)]
struct Shared {
    identity: Identity,
    /// The engine's counters (`load`); `None` for `watch`.
    live: Option<Live>,
    /// The server process whose CPU time is exported, with its name.
    server: Option<(u32, String)>,
    /// The planned start (`--start-at`), milliseconds since the Unix epoch.
    planned_unix_ms: Option<u64>,
    ready: AtomicBool,
    started: OnceLock<Started>,
    done: AtomicBool,
}

impl Shared {
    fn phase(&self, now: Instant) -> Phase {
        if self.done.load(Ordering::Relaxed) {
            return Phase::Done;
        }
        match self.started.get() {
            None if self.ready.load(Ordering::Relaxed) => Phase::Waiting,
            None => Phase::Preflight,
            Some(s) if now < s.measure_start => Phase::Warmup,
            Some(_) => Phase::Measuring,
        }
    }
}

/// A running metrics endpoint; stopped (its thread joined) on drop.
#[derive(Debug)]
pub struct Telemetry {
    shared: Arc<Shared>,
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// What a [`Telemetry`] serves.
#[derive(Debug, Clone, Default)]
pub struct Serve {
    /// The run's identity.
    pub identity: Identity,
    /// Engine threads whose counters are served (`load`); `None`: no
    /// request families (`watch`).
    pub engine_threads: Option<usize>,
    /// The server process whose CPU time is served, with its name.
    pub server: Option<(u32, String)>,
    /// The planned start, milliseconds since the Unix epoch.
    pub planned_unix_ms: Option<u64>,
}

impl Telemetry {
    /// Listens on `addr` (port 0: any free port) and serves from a thread of
    /// its own, which inherits this thread's CPU affinity: call it after
    /// pinning, so that scrapes cost the client's CPUs, not the server's.
    ///
    /// # Errors
    /// When `addr` cannot be bound, or the thread cannot start.
    pub fn serve(addr: SocketAddr, serve: Serve) -> std::io::Result<Self> {
        let listener = std::net::TcpListener::bind(addr)?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            identity: serve.identity,
            live: serve.engine_threads.map(Live::new),
            server: serve.server,
            planned_unix_ms: serve.planned_unix_ms,
            ready: AtomicBool::new(false),
            started: OnceLock::new(),
            done: AtomicBool::new(false),
        });
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (shared, stop) = (Arc::clone(&shared), Arc::clone(&stop));
            std::thread::Builder::new()
                .name("metrics".into())
                .spawn(move || listener::serve(&listener, &shared, &stop))?
        };
        Ok(Self { shared, addr, stop, thread: Some(thread) })
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The counters the engine threads publish into (`load`).
    pub fn live(&self) -> Option<&Live> {
        self.shared.live.as_ref()
    }

    /// Preflight passed: `/ready` answers 200 from now on.
    pub fn ready(&self) {
        self.shared.ready.store(true, Ordering::Relaxed);
    }

    /// The run started: its warm-up began at the realtime `unix_ms`, and its
    /// measured windows begin at `measure_start`.
    pub fn started(&self, measure_start: Instant, unix_ms: u64) {
        let _ = self.shared.started.set(Started { measure_start, unix_ms });
    }

    /// The run ended.
    pub fn done(&self) {
        self.shared.done.store(true, Ordering::Relaxed);
    }

    /// The OpenMetrics text `/metrics` serves now.
    pub fn render(&self) -> String {
        exposition::render(&self.shared)
    }
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// How long the listener sleeps when no connection is waiting; also how
/// soon it sees the stop flag.
const ACCEPT_NAP: Duration = Duration::from_millis(20);

#[cfg(test)]
mod tests {
    use super::*;

    fn phase(t: &Telemetry) -> Phase {
        let text = t.render();
        let on: Vec<Phase> = Phase::ALL
            .into_iter()
            .filter(|p| text.contains(&format!("bench_client_phase{{phase=\"{}\"}} 1\n", p.name())))
            .collect();
        assert_eq!(on.len(), 1, "one phase at a time: {text}");
        on[0]
    }

    #[test]
    fn the_phase_follows_the_run_and_only_load_has_request_families() {
        let identity = Identity { command: "load", mode: "closed", clients: 1, ..Identity::default() };
        let serve = Serve { identity, engine_threads: Some(2), ..Serve::default() };
        let t = Telemetry::serve("127.0.0.1:0".parse().unwrap(), serve).unwrap();
        assert_ne!(t.addr().port(), 0);
        assert_eq!(phase(&t), Phase::Preflight);
        t.ready();
        assert_eq!(phase(&t), Phase::Waiting);
        t.started(Instant::now() + Duration::from_secs(60), 1_796_119_200_000);
        assert_eq!(phase(&t), Phase::Warmup);
        let text = t.render();
        assert!(text.contains("bench_client_start_time_seconds 1796119200.0\n"), "{text}");
        assert!(text.contains("bench_client_requests_total{outcome=\"success\",phase=\"measured\"} 0\n"), "{text}");
        assert!(!text.contains("bench_client_late"), "closed loop: {text}");
        assert!(text.ends_with("# EOF\n"));
        t.done();
        assert_eq!(phase(&t), Phase::Done);
        let watch = Serve { identity: Identity { command: "watch", ..Identity::default() }, ..Serve::default() };
        let w = Telemetry::serve("127.0.0.1:0".parse().unwrap(), watch).unwrap();
        assert!(!w.render().contains("bench_client_requests"), "no engine, no request families");
    }
}
