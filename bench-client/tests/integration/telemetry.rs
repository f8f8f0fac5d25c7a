//! Live metrics and results in logs, as the pods of a Kubernetes run use
//! them: `load --metrics-addr` serves OpenMetrics text whose counters equal
//! the run's result once it is done (read with an independent strict parser,
//! Python's `prometheus_client`, when installed); `/ready` turns 200 when
//! preflight has passed; `load --json -` prints the result between marker
//! lines, and `merge` reads a `kubectl logs --prefix` dump of several pods
//! (other lines around) and refuses a cut or altered one in one line.
//! Targets are 127.0.0.1 only; every process is killed on drop and every
//! wait has a deadline.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use bench_client::measure::unix_ms_now;
use bench_client::results::{self, fixtures, write_block};
use bench_client::sys::{CpuList, ServerProcess};
use serde_json::Value;

use crate::util::{self, CLIENT};

const DEADLINE: Duration = Duration::from_secs(60);

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// `GET path` on `addr` (the `Host` header as RFC 3986 writes it, the
/// connection closed after the answer): status, headers and body.
pub(crate) fn get(addr: SocketAddr, path: &str) -> (u16, String, String) {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(s, "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").unwrap();
    let mut response = String::new();
    s.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    let status = head.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    (status, head.to_owned(), body.to_owned())
}

/// The value of the sample `name{labels}` (labels as printed) in `text`.
pub(crate) fn sample(text: &str, name: &str) -> f64 {
    let line = text
        .lines()
        .find(|l| l.split_once(' ').is_some_and(|(n, _)| n == name))
        .unwrap_or_else(|| panic!("{name} in\n{text}"));
    line.rsplit(' ').next().unwrap().parse().unwrap()
}

/// Waits until `file` holds `needle`, at most `within`; its text.
pub(crate) fn wait_for(file: &Path, needle: &str, within: Duration) -> String {
    let end = Instant::now() + within;
    loop {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        if text.contains(needle) {
            return text;
        }
        assert!(Instant::now() < end, "{needle} not in {} after {within:?}: {text}", file.display());
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The metrics address a `load` printed on stderr.
pub(crate) fn metrics_addr(stderr: &Path) -> SocketAddr {
    let text = wait_for(stderr, "/metrics\n", DEADLINE);
    let line = text.lines().find(|l| l.starts_with("metrics on http://")).unwrap();
    line.trim_start_matches("metrics on http://").trim_end_matches("/metrics").parse().unwrap()
}

/// Checks `text` with Python's strict OpenMetrics parser; the family names,
/// or `None` (after one printed line) without `prometheus_client`.
fn python_families(text: &str) -> Option<Vec<String>> {
    let probe = util::output_within(Command::new("python3").args(["-c", "import prometheus_client"]), DEADLINE);
    if !probe.status.success() {
        println!("skipped: the strict OpenMetrics parser check (pip install prometheus-client)");
        return None;
    }
    let script = "import sys\nfrom prometheus_client.openmetrics.parser import text_string_to_metric_families as p\n\
                  print('\\n'.join(sorted(f.name for f in p(sys.stdin.read()))))";
    let mut child = Command::new("python3")
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "the strict parser refused the text: {}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8_lossy(&out.stdout).lines().map(str::to_owned).collect())
}

/// server-axum with one worker on the first CPU this process may use, and a
/// `load` of its `path` with the flags `flags` gives for it (split at
/// spaces), its stdout and stderr in files of `dir`: the server, the load
/// (killed on drop) and the two files.
fn serve_and_load(
    dir: &Path,
    path: &str,
    flags: impl FnOnce(&ServerProcess) -> String,
) -> (ServerProcess, util::Guarded, PathBuf, PathBuf) {
    let server_cpus: CpuList = util::all_cpus().cpus()[0].to_string().parse().unwrap();
    let args = ["--addr", "127.0.0.1:0", "--workers", "1"].map(str::to_owned);
    let server = ServerProcess::start(&util::server_binary("axum"), &args, &server_cpus).unwrap();
    let (stdout, stderr) = (dir.join("load.stdout"), dir.join("load.stderr"));
    let mut load = Command::new(CLIENT);
    load.arg("load").arg(format!("http://{}{path}", server.addr)).args(flags(&server).split_whitespace());
    load.stdin(Stdio::null())
        .stdout(std::fs::File::create(&stdout).unwrap())
        .stderr(std::fs::File::create(&stderr).unwrap());
    let child = util::Guarded::spawn(&mut load);
    (server, child, stdout, stderr)
}

#[test]
fn live_metrics_equal_the_result_when_done_and_the_log_carries_the_result_to_merge() {
    let _shared = util::shared();
    let dir = util::temp_dir("telemetry-live");
    let (_server, mut child, stdout, stderr) = serve_and_load(&dir, "/plaintext", |server| {
        let flags = "--connections 4 --warmup 1s --duration 2s --window 1s --metrics-addr 127.0.0.1:0 --linger 3s";
        format!("{flags} --json - --label pod-0 --server-pid {}", server.pid())
    });
    let addr = metrics_addr(&stderr);
    // During the run.
    std::thread::sleep(Duration::from_millis(1_500));
    let (status, head, during) = get(addr, "/metrics");
    assert_eq!(status, 200, "{head}");
    assert!(head.contains("Content-Type: application/openmetrics-text; version=1.0.0"), "{head}");
    assert!(during.ends_with("# EOF\n"), "{during}");
    let phase = |text: &str, p: &str| sample(text, &format!("bench_client_phase{{phase=\"{p}\"}}"));
    assert_eq!(phase(&during, "warmup") + phase(&during, "measuring"), 1.0, "{during}");
    assert!(sample(&during, "bench_client_requests_sent_total") > 0.0);
    // Lingering after the result: the counters are the result's.
    wait_for(&stdout, "-----END BENCH RESULT", DEADLINE);
    let (status, _, done) = get(addr, "/metrics");
    assert_eq!(status, 200);
    let found = results::read_loads(&stdout).unwrap();
    assert_eq!(found.len(), 1);
    let f = &found[0].1.figures;
    assert_eq!(phase(&done, "done"), 1.0, "{done}");
    assert_eq!(
        sample(&done, "bench_client_requests_total{outcome=\"success\",phase=\"measured\"}"),
        f.successful as f64
    );
    assert_eq!(
        sample(&done, "bench_client_requests_total{outcome=\"failure\",phase=\"measured\"}"),
        f.failed_total as f64
    );
    let warmup = sample(&done, "bench_client_requests_total{outcome=\"success\",phase=\"warmup\"}")
        + sample(&done, "bench_client_requests_total{outcome=\"failure\",phase=\"warmup\"}");
    assert_eq!(warmup, f.counts.warmup_completed as f64);
    assert_eq!(sample(&done, "bench_client_requests_sent_total"), f.counts.sent as f64);
    assert_eq!(sample(&done, "bench_client_requests_retried_total"), f.counts.retried as f64);
    assert_eq!(sample(&done, "bench_client_connections_closed_by_server_total"), f.counts.closed_by_server as f64);
    assert_eq!(sample(&done, "bench_client_request_duration_seconds_count"), f.successful as f64);
    assert_eq!(sample(&done, "bench_client_request_duration_seconds_bucket{le=\"+Inf\"}"), f.successful as f64);
    assert_eq!(sample(&done, "bench_client_in_flight"), f.counts.in_flight_at_deadline as f64);
    assert!(sample(&done, "bench_server_cpu_seconds_total{process=\"server-axum\"}") > 0.0, "{done}");
    assert!(f.successful > 0 && f.failed_total == 0, "{f:?}");
    assert_eq!((get(addr, "/ready").0, get(addr, "/nowhere").0), (200, 404));
    if let Some(families) = python_families(&done) {
        for family in [
            "bench_client",
            "bench_client_phase",
            "bench_client_request_duration_seconds",
            "bench_client_requests",
            "process_cpu_seconds",
        ] {
            assert!(families.iter().any(|f| f == family), "{family} in {families:?}");
        }
    }
    let out = child.0.wait().unwrap();
    assert!(out.success(), "{}", std::fs::read_to_string(&stderr).unwrap_or_default());
    // The log as `kubectl logs --prefix` gives it, read by `merge`.
    let log: String = std::fs::read_to_string(&stdout)
        .unwrap()
        .lines()
        .map(|l| format!("[pod/bench-clients-x-0-abcde/client] {l}\n"))
        .collect();
    std::fs::write(dir.join("clients.log"), log).unwrap();
    let mut merge = Command::new(CLIENT);
    merge.current_dir(&dir).args(["merge", "clients.log", "--json", "m.json"]);
    let out = util::output_within(&mut merge, DEADLINE);
    assert!(out.status.success(), "{}", text(&out));
    let m: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("m.json")).unwrap()).unwrap();
    assert_eq!(m["successful"].as_u64(), Some(f.successful));
    assert_eq!(m["merge"]["clients"][0]["file"], "clients.log[pod/bench-clients-x-0-abcde/client]");
}

#[test]
fn ready_turns_200_when_preflight_has_passed_and_the_client_waits_at_the_barrier() {
    let dir = util::temp_dir("telemetry-ready");
    let addr = util::slow_server(Duration::from_millis(700));
    let stderr = dir.join("load.stderr");
    let at = unix_ms_now() + 5_000;
    let mut load = Command::new(CLIENT);
    load.args(["load", &format!("http://{addr}/slow"), "--connections", "1", "--warmup", "0s", "--duration", "1s"]);
    load.args(["--start-at", &format!("{}.{:03}", at / 1000, at % 1000), "--metrics-addr", "127.0.0.1:0"]);
    load.stdin(Stdio::null()).stdout(Stdio::null()).stderr(std::fs::File::create(&stderr).unwrap());
    let mut child = util::Guarded::spawn(&mut load);
    let metrics = metrics_addr(&stderr);
    let (status, _, body) = get(metrics, "/ready");
    assert_eq!(status, 503, "during preflight: {body}");
    let (_, _, text) = get(metrics, "/metrics");
    assert_eq!(sample(&text, "bench_client_phase{phase=\"preflight\"}"), 1.0, "{text}");
    assert_eq!(sample(&text, "bench_client_start_time_seconds"), at as f64 / 1000.0, "the planned start");
    let end = Instant::now() + DEADLINE;
    while get(metrics, "/ready").0 != 200 {
        assert!(Instant::now() < end, "/ready never turned 200");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(unix_ms_now() < at, "ready before the barrier");
    let (_, _, text) = get(metrics, "/metrics");
    assert_eq!(sample(&text, "bench_client_phase{phase=\"waiting\"}"), 1.0, "{text}");
    assert_eq!(get(metrics, "/other").0, 404);
    let status = loop {
        if let Some(status) = child.0.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < end, "load still running");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{}", std::fs::read_to_string(&stderr).unwrap_or_default());
}

#[test]
fn merge_reads_several_pods_from_one_log_dump_and_refuses_a_cut_one_in_one_line() {
    let dir = util::temp_dir("telemetry-dump");
    let t = 1_796_119_201_000;
    let mut dump = String::from("[pod/bench-server-1/watch] unrelated line\n");
    let mut total = 0;
    for i in 0..3u32 {
        let latencies: Vec<u64> = (1..=50u64).map(|k| k * u64::from(i + 2)).collect();
        let report = fixtures::load_report(i, 3, t + u64::from(i) * 5, &latencies);
        total += report.figures.successful;
        let mut block = Vec::new();
        write_block(&mut block, &report).unwrap();
        let pod = format!("[pod/bench-clients-axum-{i}-x/client] ");
        dump.push_str(&format!("{pod}metrics on http://0.0.0.0:9464/metrics\n"));
        for line in String::from_utf8(block).unwrap().lines() {
            dump.push_str(&format!("{pod}{line}\n"));
        }
    }
    std::fs::write(dir.join("clients.log"), &dump).unwrap();
    let merge = |file: &str| {
        let mut c = Command::new(CLIENT);
        c.current_dir(&dir).args(["merge", file, "--json", "m.json"]);
        util::output_within(&mut c, DEADLINE)
    };
    let out = merge("clients.log");
    assert!(out.status.success(), "{}", text(&out));
    let m: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("m.json")).unwrap()).unwrap();
    assert_eq!(m["successful"].as_u64(), Some(total));
    assert_eq!(m["merge"]["clients"].as_array().unwrap().len(), 3);
    assert_eq!(m["merge"]["clients"][2]["file"], "clients.log[pod/bench-clients-axum-2-x/client]");
    // The last pod's log cut short; another with a changed count.
    let cut: String = dump.lines().take(dump.lines().count() - 4).map(|l| format!("{l}\n")).collect();
    std::fs::write(dir.join("cut.log"), cut).unwrap();
    let altered = dump.replacen("\"successful\": ", "\"successful\": 1", 1);
    std::fs::write(dir.join("altered.log"), altered).unwrap();
    for (file, expected) in [
        ("cut.log", "of [pod/bench-clients-axum-2-x/client] has no END marker"),
        ("altered.log", "of [pod/bench-clients-axum-0-x/client] fails its checksum"),
    ] {
        let out = merge(file);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{file}: {}", text(&out));
        assert_eq!(err.trim_end().lines().count(), 1, "{file}: {err}");
        assert!(err.contains(file) && err.contains(expected), "{file}: {err}");
    }
}

/// `GET path_and_query` on `addr` with `Connection: close`: the body;
/// `None` while nothing listens there.
fn get_closed(addr: SocketAddr, path_and_query: &str) -> Option<String> {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(s, "GET {path_and_query} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").ok()?;
    let mut response = Vec::new();
    s.read_to_end(&mut response).ok()?;
    let response = String::from_utf8_lossy(&response).into_owned();
    let body = response.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    // Chunked (Prometheus's API answers so): the JSON is the one line that starts with `{`.
    Some(body.lines().find(|l| l.starts_with('{')).unwrap_or(body).to_owned())
}

/// The one value of the instant query `promql` on the Prometheus at `addr`;
/// `None` while it has no sample (or is not up yet).
fn prometheus_value(addr: SocketAddr, promql: &str) -> Option<f64> {
    let query: String = url::form_urlencoded::byte_serialize(promql.as_bytes()).collect();
    let body = get_closed(addr, &format!("/api/v1/query?query={query}"))?;
    let v: Value = serde_json::from_str(&body).ok()?;
    assert_eq!(v["status"], "success", "{promql}: {v}");
    v["data"]["result"][0]["value"][1].as_str().map(|s| s.parse().unwrap())
}

#[test]
fn a_real_prometheus_scraping_load_reads_the_runs_counts_and_its_p99_bucket() {
    let Some(prometheus) = util::tool_or_skip("prometheus", "a real Prometheus scraping load") else { return };
    let _shared = util::shared();
    let dir = util::temp_dir("telemetry-prometheus");
    let (_server, _load, stdout, stderr) = serve_and_load(&dir, "/api/devices", |_| {
        "--connections 4 --warmup 1s --duration 3s --window 1s --metrics-addr 127.0.0.1:0 --linger 30s --json -"
            .to_owned()
    });
    let metrics = metrics_addr(&stderr);
    // Prometheus on a free loopback port, scraping every 500 ms.
    let web = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let config = dir.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 500ms\n  scrape_timeout: 400ms\nscrape_configs:\n  - job_name: bench\n    static_configs:\n      - targets: ['{metrics}']\n"
        ),
    )
    .unwrap();
    let mut prom = Command::new(&prometheus);
    prom.arg(format!("--config.file={}", config.display()))
        .arg(format!("--storage.tsdb.path={}", dir.join("data").display()))
        .arg(format!("--web.listen-address={web}"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join("prometheus.log")).unwrap());
    let _prom = util::Guarded::spawn(&mut prom);
    wait_for(&stdout, "-----END BENCH RESULT", DEADLINE);
    let found = results::read_loads(&stdout).unwrap();
    let f = &found[0].1.figures;
    assert!(f.successful > 0 && f.failed_total == 0, "{f:?}");
    // Until Prometheus has scraped the final counters (load lingers 30 s).
    let success = "bench_client_requests_total{outcome=\"success\",phase=\"measured\"}";
    let end = Instant::now() + Duration::from_secs(25);
    loop {
        let ready = prometheus_value(web, success);
        if ready == Some(f.successful as f64) {
            break;
        }
        let log = std::fs::read_to_string(dir.join("prometheus.log")).unwrap_or_default();
        assert!(Instant::now() < end, "Prometheus read {ready:?}, the run {}:\n{log}", f.successful);
        std::thread::sleep(Duration::from_millis(250));
    }
    assert_eq!(prometheus_value(web, "bench_client_request_duration_seconds_count"), Some(f.successful as f64));
    // histogram_quantile interpolates within the bucket that holds the 99th
    // percentile: the run's own p99 (HDR, 3 digits) lies in that bucket too.
    let p99_s = prometheus_value(web, "histogram_quantile(0.99, bench_client_request_duration_seconds_bucket)")
        .expect("a p99 from the buckets");
    let bounds: Vec<f64> = [0.0].into_iter().chain(bench_client::engine::LIVE_LATENCY_BUCKETS_S).collect();
    let bucket = |s: f64| bounds.windows(2).position(|w| s > w[0] && s <= w[1]);
    let run_p99_s = f.latency_us.expect("a measured latency").p99 as f64 / 1e6;
    // The run's p99 is known to 0.1 % (HDR, 3 digits): within that of a
    // bound (1.001 ms against 1 ms), either bucket beside it may hold it.
    let (low, high) = (bucket(run_p99_s * 0.999), bucket(run_p99_s * 1.001));
    let prometheus = bucket(p99_s);
    assert!(
        prometheus.is_some() && (prometheus == low || prometheus == high),
        "Prometheus {p99_s} s (bucket {prometheus:?}), the run {run_p99_s} s (bucket {low:?} … {high:?}), buckets {bounds:?}"
    );
}
