//! The run's counters, declared once: each with its name (the results
//! field), its unit, one line of help, where it is kept (per route or for
//! the run's connections), whether it can make a run not clean, its label in
//! the terminal and its live metric. The engine's statistics, `merge`, the
//! live metrics, the terminal and the results all read this table, so a new
//! counter is one line here plus the place that counts it.
//!
//! Every counter merges by summing (over engine threads, and over the
//! clients `merge` adds): each counts events, and events add up.

use serde::{Deserialize, Serialize};

/// Where a counter is kept in a run whose routes alternate in slices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Per route: a request counts for the route it was written to.
    Request,
    /// For the run's connections as a whole (a connection serves every route
    /// of a sliced run in turn).
    Connection,
}

/// What a counter above zero says of the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clean {
    /// Nothing: it is shown, the run stays clean.
    Shown,
    /// The run did not measure the load asked for: it is incomplete.
    Incomplete,
    /// The server churned connections: not clean unless `--allow-churn`.
    Churn,
    /// Open loop: judged with the other `Schedule` counters against the
    /// share of the schedule that may be offered late.
    Schedule,
}

/// A live metric (OpenMetrics counter) that publishes a counter while the
/// run goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Metric {
    /// The family's name (OpenMetrics adds `_total`).
    pub name: &'static str,
    /// Only in the open loop (the closed loop has no schedule).
    pub open_loop_only: bool,
}

/// One declared counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spec {
    /// The counter.
    pub counter: Counter,
    /// Its name: the field of `results.json` and `load --json`.
    pub name: &'static str,
    /// What it counts: `requests` or `connections`.
    pub unit: &'static str,
    /// One line of help (the results' documentation, the metric's HELP).
    pub help: &'static str,
    /// Where it is kept.
    pub scope: Scope,
    /// What a count above zero says of the run.
    pub clean: Clean,
    /// Its label on the terminal's connections line (`None`: said elsewhere).
    pub label: Option<&'static str>,
    /// A shortfall's sentence, `{n}` the count (`Incomplete` and `Churn`).
    pub shortfall: Option<&'static str>,
    /// Its live metric, if it has one.
    pub metric: Option<Metric>,
}

impl Spec {
    /// The shortfall's sentence for a count of `n`.
    pub fn shortfall_line(&self, n: u64) -> Option<String> {
        self.shortfall.map(|s| s.replace("{n}", &n.to_string()))
    }
}

/// The value of an optional column of the table: `None` where a row leaves it out.
macro_rules! or_none {
    () => {
        None
    };
    ($value:expr) => {
        $value
    };
}

/// Declares the counters: the [`Counts`] struct (a field each), the
/// [`Counter`] names and the [`COUNTERS`] table, from one list (a row's
/// `label`, `shortfall` and `metric` are `None` where it leaves them out).
macro_rules! counters {
    ($(
        $field:ident: $variant:ident, $unit:literal, $scope:ident, $clean:ident, $help:literal
        $(, label: $label:expr)? $(, shortfall: $shortfall:expr)? $(, metric: $metric:expr)?;
    )+) => {
        /// The counters of one run (or of one engine thread, or one route):
        /// each declared in [`COUNTERS`].
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
        pub struct Counts {
            $(
                #[doc = $help]
                #[serde(default)]
                pub $field: u64,
            )+
        }

        /// A counter's name.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Counter {
            $(
                #[doc = $help]
                $variant,
            )+
        }

        /// Every counter, in the order of [`Counts`]' fields.
        pub const COUNTERS: &[Spec] = &[$(
            Spec {
                counter: Counter::$variant,
                name: stringify!($field),
                unit: $unit,
                help: $help,
                scope: Scope::$scope,
                clean: Clean::$clean,
                label: or_none!($($label)?),
                shortfall: or_none!($($shortfall)?),
                metric: or_none!($($metric)?),
            },
        )+];

        impl Counts {
            /// The count of `counter`, to change.
            pub fn get_mut(&mut self, counter: Counter) -> &mut u64 {
                match counter {
                    $(Counter::$variant => &mut self.$field,)+
                }
            }
        }

        /// Adds another thread's (or client's) counts: every counter sums.
        impl std::ops::AddAssign<&Counts> for Counts {
            fn add_assign(&mut self, other: &Self) {
                $(self.$field += other.$field;)+
            }
        }
    };
}

const fn metric(name: &'static str) -> Option<Metric> {
    Some(Metric { name, open_loop_only: false })
}

counters! {
    sent: Sent, "requests", Request, Shown,
        "Requests written, warm-up included; a request written again after its connection closed counts once per write",
        metric: metric("bench_client_requests_sent");
    closed_by_server: ClosedByServer, "connections", Connection, Churn,
        "Connections the server closed between responses (Connection: close, or an end of stream or reset after a response): churn",
        label: Some("closed by the server"),
        shortfall: Some("connections churned: the server closed {n} connections between responses (--allow-churn accepts it)"),
        metric: metric("bench_client_connections_closed_by_server");
    retried: Retried, "requests", Request, Churn,
        "Requests written again on a new connection because the server closed or reset the one they were written on before answering them (whole run; each retry also in sent)",
        label: Some("requests retried"),
        shortfall: Some("{n} requests written again after the server closed or reset their connection (--allow-churn accepts it)"),
        metric: metric("bench_client_requests_retried");
    closed_idle: ClosedIdle, "connections", Connection, Shown,
        "Connections the server closed with no request outstanding, 20 ms or more after the last response (its keep-alive timeout, whatever it is): not churn",
        label: Some("closed idle");
    goaway_received: GoawayReceived, "connections", Connection, Churn,
        "HTTP/2: connections the server ended with GOAWAY (its streams above the last it names written again on a new connection, in retried)",
        label: Some("ended by GOAWAY"),
        shortfall: Some("the server ended {n} HTTP/2 connections with GOAWAY (--allow-churn accepts it)");
    window_stalls: WindowStalls, "requests", Request, Shown,
        "HTTP/2: requests whose body still waited for the server's flow-control window when they timed out (a stall, among the timeouts)",
        label: Some("stalled on the server's window");
    closed_by_client: ClosedByClient, "connections", Connection, Shown,
        "Connections the client closed after --requests-per-connection responses: churn asked for",
        label: Some("closed by the client");
    tls_handshakes: TlsHandshakes, "connections", Connection, Shown,
        "TLS handshakes of connections that answered a request (0 over plain HTTP)";
    tls_resumed: TlsResumed, "connections", Connection, Shown,
        "Of tls_handshakes, those that resumed a session";
    connections_short: ConnectionsShort, "connections", Connection, Incomplete,
        "Connections asked for that were not yet established once when the measured windows began (with no warm-up: when the first window ended)",
        shortfall: Some("{n} connections were not open when the windows began (the run is incomplete)");
    warmup_completed: WarmupCompleted, "requests", Request, Shown,
        "Requests settled during the warm-up, by a response or a failure of any kind (not measured)";
    warmup_failed_protocol: WarmupFailedProtocol, "requests", Request, Shown,
        "Of warmup_completed, the requests that failed as protocol: also in failed.protocol (a server's broken protocol rule counts whatever the phase), not in failed_total",
        label: Some("protocol failures in the warm-up");
    in_flight_at_deadline: InFlightAtDeadline, "requests", Request, Shown,
        "Requests without a complete response at the deadline (or whose response completed after it): neither successes nor failures";
    connections_established: ConnectionsEstablished, "connections", Connection, Shown,
        "Connections established, reconnections included";
    reconnects: Reconnects, "connections", Connection, Shown,
        "Reconnections after the server closed a connection or an error",
        label: Some("reconnections"), metric: metric("bench_client_reconnects");
    late_sends: LateSends, "requests", Connection, Schedule,
        "Open loop: requests written during the measured windows more than the late-send tolerance (2 ms) after they were due, whatever the phase they were due in",
        label: Some("late sends"),
        metric: Some(Metric { name: "bench_client_late_sends", open_loop_only: true });
    unsent_at_deadline: UnsentAtDeadline, "requests", Connection, Schedule,
        "Open loop: requests due by the deadline that were never written",
        label: Some("never written by the end");
    waited_on_server: WaitedOnServer, "requests", Connection, Schedule,
        "Open loop: of the late sends and the requests never written, those that fell due while every connection was waiting on the server (its latency, in the corrected percentiles: not a shortfall of the client)",
        label: Some("of them waiting on the server"),
        metric: Some(Metric { name: "bench_client_waited_on_server", open_loop_only: true });
}

impl Counts {
    /// The count of `counter`.
    pub fn get(&self, counter: Counter) -> u64 {
        let mut copy = *self;
        *copy.get_mut(counter)
    }

    /// A route's counts in a run whose routes alternate: its own
    /// `requests` counts, and the run's `connections` counts.
    pub fn of_route(requests: &Counts, connections: &Counts) -> Counts {
        let mut out = Counts::default();
        for spec in COUNTERS {
            let from = if spec.scope == Scope::Request { requests } else { connections };
            *out.get_mut(spec.counter) = from.get(spec.counter);
        }
        out
    }

    /// The counters above zero whose rule is `clean`, with their counts.
    pub fn above_zero(&self, clean: Clean) -> impl Iterator<Item = (&'static Spec, u64)> + '_ {
        COUNTERS.iter().filter(move |s| s.clean == clean).map(|s| (s, self.get(s.counter))).filter(|&(_, n)| n > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_and_the_struct_agree() {
        let mut c = Counts::default();
        for (i, spec) in COUNTERS.iter().enumerate() {
            *c.get_mut(spec.counter) = i as u64 + 1;
        }
        let json = serde_json::to_value(c).unwrap();
        let fields = json.as_object().unwrap();
        assert_eq!(fields.len(), COUNTERS.len(), "a field per counter");
        for (i, spec) in COUNTERS.iter().enumerate() {
            assert_eq!(fields[spec.name], i as u64 + 1, "{} is its own field", spec.name);
            assert!(!spec.help.is_empty() && matches!(spec.unit, "requests" | "connections"), "{}", spec.name);
            assert_eq!(
                spec.shortfall.is_some(),
                matches!(spec.clean, Clean::Incomplete | Clean::Churn),
                "{}",
                spec.name
            );
        }
        let back: Counts = serde_json::from_value(json).unwrap();
        assert_eq!(back, c);
        assert_eq!(serde_json::from_str::<Counts>("{}").unwrap(), Counts::default(), "absent counts read as 0");
    }

    #[test]
    fn counts_sum_and_routes_take_their_scope() {
        let numbered = |from: u64| {
            let mut c = Counts::default();
            for (i, spec) in COUNTERS.iter().enumerate() {
                *c.get_mut(spec.counter) = from + i as u64;
            }
            c
        };
        let mut x = numbered(2);
        x += &numbered(10);
        x += &numbered(10);
        for (i, spec) in COUNTERS.iter().enumerate() {
            assert_eq!(x.get(spec.counter), 22 + 3 * i as u64, "{}", spec.name);
        }
        let route = Counts::of_route(&numbered(100), &numbered(0));
        for (i, spec) in COUNTERS.iter().enumerate() {
            let expected = if spec.scope == Scope::Request { 100 } else { 0 } + i as u64;
            assert_eq!(route.get(spec.counter), expected, "{}", spec.name);
        }
        let churn: Vec<_> = Counts { retried: 2, ..Counts::default() }.above_zero(Clean::Churn).collect();
        assert_eq!(churn.len(), 1);
        assert_eq!(
            churn[0].0.shortfall_line(churn[0].1).unwrap(),
            "2 requests written again after the server closed or reset their connection (--allow-churn accepts it)"
        );
    }

    #[test]
    fn every_counter_is_in_the_results_schema_and_documented() {
        let docs = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/");
        let schema = std::fs::read_to_string(format!("{docs}results.schema.json")).unwrap();
        let results_md = std::fs::read_to_string(format!("{docs}RESULTS.md")).unwrap();
        for spec in COUNTERS {
            assert!(schema.contains(&format!("\"{}\"", spec.name)), "{} in docs/results.schema.json", spec.name);
            let documented = [format!("`{}`", spec.name), format!("runs[].{}`", spec.name)];
            assert!(documented.iter().any(|d| results_md.contains(d)), "{} in docs/RESULTS.md", spec.name);
        }
    }
}
