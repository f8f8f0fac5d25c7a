//! The integration tests of `bench-client`, in one test binary (one link on
//! a 2-core machine instead of one per file). Tests that load a server hold
//! `util::exclusive()` when what they assert depends on how fast it ran, or
//! `util::shared()`, two at a time, when it does not.

// Absent is not zero: no latency measured is `null` and `-`, through `merge`.
mod absent;
// Every loopback address form typed reaches its listener ([::1], localhost); others refused.
mod addresses;
// Every request accounted for: late answers, resets, backlogs, ramps, churn, Ctrl-C in any phase.
mod accounting;
// `bench-client ab` end to end: new server processes every round, one delta per route.
mod ab;
// A realtime clock step at the start barrier, under libfaketime: refused, nothing measured.
mod clock_step;
// `bench-client compare`: exit codes and verdicts, unreadable files.
mod compare;
// The docs' commands work as written: make -n, clap, git apply --check; nothing run.
mod doc_commands;
// The docs' relative links, anchors and prose pointers to sections lead somewhere.
mod docs;
// Every server answers every route of the table alike, refusals included.
mod conformance;
// `bench-client count`: instructions and allocations per request under callgrind.
mod count;
// The engine against raw-socket doubles: failures by kind, accounting.
mod double;
// Servers killed, stalled, lying or closing; the suite goes on.
mod faults;
// Every valid HTTP/1.1 framing counted; preflight refuses what the engine cannot count.
mod framing;
// RFC 9112's grammar under load: obs-fold counted, bytes of no response a failure by kind.
mod grammar;
// HTTP/2 on the servers (h2c and h2 over TLS) byte for byte against HTTP/1.1, through curl.
mod http2;
// `load --http2`: every server over h2c and TLS; GOAWAY, RST_STREAM, one stream, a stalled window, no h2.
mod load_http2;
// Ctrl-C during `make bench`: partial results, no process left.
mod interrupt;
// `k8s render`: golden manifests, typed round trips, kubernetes-validate, refusals.
mod k8s;
// The import graph of `src/` has no upward arrow.
mod layers;
// `suite --load-percent`: latency deltas at a fixed load, with intervals.
mod latency_at_fixed_load;
// `load` for any API: -m, -H, --body, -D byte for byte; -n N successes exactly; -z; bad input.
mod load_api;
// `load` modes: open loop, pipelining, fd limits, calibrate, bad input.
mod load_modes;
// Malformed and unusual requests to each server.
mod malformed;
// `--middleware`: a response verified through its layers (gzip decoded, headers); the middleware scenario.
mod middleware;
// The extractors scenario: each typed extractor against its raw twin, every body verified.
mod extractors;
// `memory`: a known 64 KiB per connection measured as such; a dying server, Ctrl-C, the fd limit.
mod memory;
// Every output flag checked before the run, folders made; a file failing at the end kept and named.
mod outputs;
// Several clients at one start barrier, merged exactly; watch, refusals.
mod multi_client;
// The rendered pods under the restricted Pod Security Standard; images and `watch` as non-root.
mod pod_security;
// A suite whose perf is missing or may not attach: said once quoting perf, no run claimed profiled.
mod perf_unavailable;
// A profiled suite in slices with the real perf: each sample to its slice's variant; the cost in-session.
mod perf_slices;
// Flame graphs from a committed perf-script fixture: folded, drawn, their shape, a differential.
mod profiling;
// report.html in headless Chromium: no console message, not blank.
mod report_html;
// Start-up errors: missing binary, failing build, port in use.
mod startup_errors;
// Live metrics of `load --metrics-addr`, /ready, results in logs read by `merge`.
mod telemetry;
// TLS: the servers' HTTPS listeners, `load https://`, handshake failures by kind.
mod tls;
// Two hosts rehearsed in network namespaces (veth, 127/8); shaped links with `make two-hosts`.
mod two_hosts;
// The suite end to end, and a layer sweep.
mod suite_end_to_end;
mod util;
