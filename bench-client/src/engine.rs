//! The load loop: closed-loop HTTP/1.1 over keep-alive connections, one
//! request in flight per connection, every response verified.
//!
//! Design (the one wrk uses, and the one issue "The load engine at the
//! physical limit" names): one current-thread tokio runtime per engine thread,
//! each owning its connections as local tasks; the request is pre-built bytes;
//! responses are framed with `httparse` straight from the read buffer and the
//! body is compared with the expected bytes in place. Nothing on the hot path
//! allocates, takes a lock or touches a timer: the deadline is checked with
//! one clock read per request, and per-request timeouts are enforced by a
//! watchdog that scans the connections a few times per timeout.
//!
//! Accounting: a request belongs to the window in which its response
//! completed; responses completing during the warm-up are counted apart; a
//! request whose response has not completed by the deadline (or completes
//! after it) is reported as in flight, never as a success.

use std::cell::{Cell, RefCell};
use std::net::SocketAddr;
use std::num::NonZeroUsize;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use bytes::{Buf, BytesMut};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::task::{AbortHandle, LocalSet};

use crate::cpu::{self, CpuWindows};
use crate::http::{frame_response, get_request};
use crate::stats::{FailureKind, RunStats};

/// Pause after a failed connection attempt before the next, so a refused
/// port is not hammered in a tight loop.
const CONNECT_BACKOFF: Duration = Duration::from_millis(10);
/// Bytes reserved in a connection's read buffer before each read.
const READ_RESERVE_BYTES: usize = 8 * 1024;

/// The timing and concurrency half of a load plan, shared by `load`,
/// `suite` and `flamegraph`.
#[derive(Debug, Clone, Copy)]
pub struct LoadSettings {
    /// Keep-alive connections held open, each with one request in flight.
    pub connections: NonZeroUsize,
    /// Engine threads (one current-thread runtime each); connections are
    /// dealt to them round-robin.
    pub threads: NonZeroUsize,
    /// Discarded warm-up before the first measured window.
    pub warmup: Duration,
    /// Measured duration: a whole number of windows.
    pub duration: Duration,
    /// Length of one window.
    pub window: Duration,
    /// A request without a complete response after this long fails as a
    /// timeout and its connection is replaced; also the connect timeout.
    pub timeout: Duration,
}

impl LoadSettings {
    /// The plan for loading `path` on `addr` (with `host` as the `Host`
    /// header), expecting `expected_body`; `server_pid` to sample.
    pub fn plan(
        &self,
        addr: SocketAddr,
        host: String,
        path: String,
        expected_body: Vec<u8>,
        server_pid: Option<u32>,
    ) -> LoadPlan {
        LoadPlan { addr, host, path, expected_body, settings: *self, server_pid }
    }
}

/// A checked description of one load run.
#[derive(Debug, Clone)]
pub struct LoadPlan {
    /// Server address to connect to.
    pub addr: SocketAddr,
    /// `Host` header value (`host:port`).
    pub host: String,
    /// Path (and query) of the one URL every request fetches.
    pub path: String,
    /// The exact body a successful response carries (with status 200).
    pub expected_body: Vec<u8>,
    /// Connections, threads and timings.
    pub settings: LoadSettings,
    /// The server's pid, to sample its CPU use per window.
    pub server_pid: Option<u32>,
}

impl LoadPlan {
    /// Number of measured windows (`duration / window`).
    pub fn windows(&self) -> usize {
        usize::try_from(self.settings.duration.as_nanos() / self.settings.window.as_nanos().max(1))
            .unwrap_or(usize::MAX)
    }
}

/// What [`run`] returns.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    /// All threads' measurements, merged.
    pub stats: RunStats,
    /// Measured time actually covered (shorter than planned when interrupted).
    pub measured: Duration,
    /// The stop flag ended the run early.
    pub interrupted: bool,
    /// CPU use of the server and of this client per measured window.
    pub cpu: CpuWindows,
}

/// Runs the load described by `plan`; returns early (marked interrupted) when
/// `stop` becomes true.
///
/// # Errors
/// When the duration is not a whole number of windows, or an engine thread
/// or its runtime cannot be started.
pub fn run(plan: &LoadPlan, stop: &AtomicBool) -> anyhow::Result<RunOutcome> {
    anyhow::ensure!(
        !plan.settings.window.is_zero()
            && plan.settings.duration.as_nanos().is_multiple_of(plan.settings.window.as_nanos())
            && plan.settings.duration >= plan.settings.window,
        "the measured duration must be a whole number of windows"
    );
    let start = Instant::now();
    let measure_start = start + plan.settings.warmup;
    let end = measure_start + plan.settings.duration;
    let threads = plan.settings.threads.get();
    let (results, cpu): (Vec<anyhow::Result<(RunStats, bool)>>, CpuWindows) = std::thread::scope(|scope| {
        let sampler = scope
            .spawn(|| cpu::sample_windows(plan.server_pid, measure_start, plan.settings.window, plan.windows(), stop));
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let connections = (plan.settings.connections.get() + threads - 1 - t) / threads;
                std::thread::Builder::new()
                    .name(format!("load-{t}"))
                    .spawn_scoped(scope, move || run_thread(plan, connections, measure_start, end, stop))
            })
            .collect();
        let results = handles
            .into_iter()
            .map(|h| match h {
                Ok(h) => h.join().unwrap_or_else(|_| Err(anyhow::anyhow!("an engine thread panicked"))),
                Err(e) => Err(anyhow::Error::new(e).context("cannot spawn an engine thread")),
            })
            .collect();
        (results, sampler.join().unwrap_or_default())
    });
    let mut merged = RunStats::new(plan.windows());
    let mut interrupted = false;
    for r in results {
        let (stats, stopped) = r?;
        merged.merge(&stats);
        interrupted |= stopped;
    }
    let measured = if interrupted {
        Instant::now().min(end).saturating_duration_since(measure_start)
    } else {
        plan.settings.duration
    };
    Ok(RunOutcome { stats: merged, measured, interrupted, cpu })
}

/// State one engine thread shares among its connection tasks.
struct Shared {
    addr: SocketAddr,
    request: Vec<u8>,
    expected_body: Vec<u8>,
    measure_start: Instant,
    end: Instant,
    timeout: Duration,
    window_ns: u128,
    last_window: usize,
    stats: RefCell<RunStats>,
    in_flight: Cell<u64>,
}

/// Per connection: when its outstanding request was sent, for the watchdog.
#[derive(Default)]
struct Slot {
    sent_at: Cell<Option<Instant>>,
}

enum Flow {
    Deadline,
    Reconnect,
}

impl Shared {
    /// The window a completion at `at` belongs to; `None` during the warm-up.
    fn window_of(&self, at: Instant) -> Option<usize> {
        let since = at.checked_duration_since(self.measure_start)?;
        Some(usize::try_from(since.as_nanos() / self.window_ns).unwrap_or(usize::MAX).min(self.last_window))
    }

    fn begin(&self, slot: &Slot, at: Instant) {
        self.stats.borrow_mut().sent += 1;
        self.in_flight.set(self.in_flight.get() + 1);
        slot.sent_at.set(Some(at));
    }

    /// Settles the request outstanding on `slot`, completed at `done`.
    fn finish(&self, slot: &Slot, done: Instant, outcome: Result<u64, FailureKind>) {
        self.in_flight.set(self.in_flight.get() - 1);
        slot.sent_at.set(None);
        let mut stats = self.stats.borrow_mut();
        match (self.window_of(done), outcome) {
            (None, _) => stats.warmup_completed += 1,
            (Some(w), Ok(latency_us)) => stats.record_success(w, latency_us),
            (Some(w), Err(kind)) => stats.record_failure(Some(w), kind),
        }
    }

    /// Settles a failed request unless the deadline has passed, in which case
    /// it stays in flight.
    fn fail(&self, slot: &Slot, kind: FailureKind) -> Flow {
        let now = Instant::now();
        if now >= self.end {
            return Flow::Deadline;
        }
        self.finish(slot, now, Err(kind));
        Flow::Reconnect
    }
}

fn run_thread(
    plan: &LoadPlan,
    connections: usize,
    measure_start: Instant,
    end: Instant,
    stop: &AtomicBool,
) -> anyhow::Result<(RunStats, bool)> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let shared = Rc::new(Shared {
        addr: plan.addr,
        request: get_request(&plan.host, &plan.path),
        expected_body: plan.expected_body.clone(),
        measure_start,
        end,
        timeout: plan.settings.timeout,
        window_ns: plan.settings.window.as_nanos().max(1),
        last_window: plan.windows().saturating_sub(1),
        stats: RefCell::new(RunStats::new(plan.windows())),
        in_flight: Cell::new(0),
    });
    let local = LocalSet::new();
    let spawn = |shared: &Rc<Shared>, reconnect: bool| {
        let slot = Rc::new(Slot::default());
        let handle = local.spawn_local(connection(Rc::clone(shared), Rc::clone(&slot), reconnect));
        (slot, handle.abort_handle())
    };
    let mut conns: Vec<(Rc<Slot>, AbortHandle)> = (0..connections).map(|_| spawn(&shared, false)).collect();
    let tick = (plan.settings.timeout / 4).clamp(Duration::from_millis(1), Duration::from_millis(50));
    let stopped = local.block_on(&runtime, async {
        loop {
            let now = Instant::now();
            if now >= end {
                return false;
            }
            if stop.load(Ordering::Relaxed) {
                return true;
            }
            for conn in &mut conns {
                let timed_out =
                    conn.0.sent_at.get().is_some_and(|t| now.saturating_duration_since(t) >= plan.settings.timeout);
                if timed_out {
                    conn.1.abort();
                    shared.finish(&conn.0, now, Err(FailureKind::Timeout));
                    *conn = spawn(&shared, true);
                }
            }
            tokio::time::sleep_until((now + tick).min(end).into()).await;
        }
    });
    drop(local);
    drop(runtime);
    let mut stats = shared.stats.replace(RunStats::new(0));
    stats.in_flight_at_deadline = shared.in_flight.get();
    Ok((stats, stopped))
}

/// One connection slot: connects (again after errors or `Connection: close`)
/// and runs requests back to back until the deadline.
async fn connection(shared: Rc<Shared>, slot: Rc<Slot>, mut reconnect: bool) {
    let mut buf = BytesMut::with_capacity(READ_RESERVE_BYTES);
    while Instant::now() < shared.end {
        let mut stream = match tokio::time::timeout(shared.timeout, TcpStream::connect(shared.addr)).await {
            Ok(Ok(s)) => s,
            Ok(Err(_)) | Err(_) => {
                if Instant::now() >= shared.end {
                    return;
                }
                shared.stats.borrow_mut().record_failure(None, FailureKind::Connect);
                tokio::time::sleep(CONNECT_BACKOFF).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        {
            let mut stats = shared.stats.borrow_mut();
            stats.connections_established += 1;
            stats.reconnects += u64::from(reconnect);
        }
        reconnect = true;
        buf.clear();
        match requests(&shared, &slot, &mut stream, &mut buf).await {
            Flow::Deadline => return,
            Flow::Reconnect => {}
        }
    }
}

/// Sends requests on one established connection until it must be replaced
/// or the deadline passes.
async fn requests(shared: &Shared, slot: &Slot, stream: &mut TcpStream, buf: &mut BytesMut) -> Flow {
    loop {
        let sent_at = Instant::now();
        if sent_at >= shared.end {
            return Flow::Deadline;
        }
        shared.begin(slot, sent_at);
        if stream.write_all(&shared.request).await.is_err() {
            return shared.fail(slot, FailureKind::Io);
        }
        let framed = loop {
            if !buf.is_empty() {
                match frame_response(buf) {
                    Ok(Some(framed)) => break framed,
                    Ok(None) => {}
                    Err(_) => return shared.fail(slot, FailureKind::Protocol),
                }
            }
            buf.reserve(READ_RESERVE_BYTES);
            match stream.read_buf(buf).await {
                Ok(0) | Err(_) => return shared.fail(slot, FailureKind::Io),
                Ok(_) => {}
            }
        };
        let done = Instant::now();
        if done >= shared.end {
            return Flow::Deadline;
        }
        let outcome = if framed.status != 200 {
            Err(FailureKind::Status(framed.status))
        } else if buf[framed.body.clone()] != shared.expected_body[..] {
            Err(FailureKind::Body)
        } else {
            Ok(u64::try_from(done.duration_since(sent_at).as_micros()).unwrap_or(u64::MAX))
        };
        shared.finish(slot, done, outcome);
        buf.advance(framed.len);
        if framed.close {
            return Flow::Reconnect;
        }
    }
}
