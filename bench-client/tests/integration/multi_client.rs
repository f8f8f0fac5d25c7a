//! Several clients loading one server, merged exactly, on this machine:
//! two and three clients started at one barrier (`--start-at`) merge into
//! counts equal to the sums of their files and percentiles equal to those
//! of their added histograms, checked with an independent HdrHistogram
//! implementation (Python's `hdrhistogram`, when installed); the open-loop
//! schedule splits exactly; `watch` records the server's CPU on the
//! clients' windows; every refusal of `merge` and of the barrier is one line
//! and exit 2. Targets are 127.0.0.1 only; every process is killed on drop
//! and every wait has a deadline.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use bench_client::engine::{EncodedHistogram, LatencySummary, latency_histogram};
use bench_client::measure::unix_ms_now;
use bench_client::results::{self, fixtures};
use bench_client::sys::ServerProcess;
use hdrhistogram::Histogram;
use serde_json::Value;

use crate::util::{self, CLIENT};

/// Longest any one command of these tests may run.
const DEADLINE: Duration = Duration::from_secs(60);
/// Lead from now to the start barrier: enough to start the processes and
/// run their preflight on a busy machine.
const LEAD_MS: u64 = 2_000;
/// `--warmup 1s --duration 2s --window 1s`, for every client and `watch`.
const TIMING: [&str; 6] = ["--warmup", "1s", "--duration", "2s", "--window", "1s"];

/// A command started in a process group of its own (killed with it on
/// drop) with its output in files, for commands that run at the same time.
struct Running {
    child: util::Guarded,
    out: PathBuf,
}

impl Running {
    /// Starts `command` with its output in `<out>.stdout` and `<out>.stderr`.
    fn spawn(command: &mut Command, out: &Path) -> Self {
        let file = |ext: &str| std::fs::File::create(out.with_extension(ext)).expect("an output file");
        command.stdin(Stdio::null()).stdout(file("stdout")).stderr(file("stderr"));
        Self { child: util::Guarded::spawn(command), out: out.to_path_buf() }
    }

    /// Its pid.
    fn id(&self) -> u32 {
        self.child.0.id()
    }

    /// Waits for its end, at most `deadline` (then the test fails and the
    /// group is killed on drop), and returns its output.
    fn output(mut self, deadline: Duration) -> Output {
        let end = Instant::now() + deadline;
        let status = loop {
            if let Some(status) = self.child.0.try_wait().expect("wait for the child") {
                break status;
            }
            assert!(Instant::now() < end, "{} still running after {deadline:?}: killed", self.out.display());
            std::thread::sleep(Duration::from_millis(10));
        };
        let read = |ext: &str| std::fs::read(self.out.with_extension(ext)).unwrap_or_default();
        Output { status, stdout: read("stdout"), stderr: read("stderr") }
    }
}

/// What a test of clients at one barrier starts from.
struct Scene {
    /// The test's lane: the machine to itself, or quiet.
    _lane: util::InLane,
    /// Its folder.
    dir: PathBuf,
    /// server-axum with one worker on 127.0.0.1, pinned to the first CPU this
    /// process may use.
    server: ServerProcess,
    /// The clients' CPU: the last.
    client_cpu: String,
    /// The route's URL on the server.
    url: String,
    /// The barrier, [`LEAD_MS`] ahead, ms since the epoch and as `--start-at`.
    at_ms: u64,
    at: String,
}

fn scene(name: &str, path: &str, lane: fn() -> util::InLane) -> Scene {
    let _lane = lane();
    let all = util::all_cpus();
    let (first, last) = (all.cpus()[0], *all.cpus().last().unwrap());
    let args = ["--addr", "127.0.0.1:0", "--workers", "1"].map(str::to_owned);
    let server =
        ServerProcess::start(&util::server_binary("axum"), &args, &first.to_string().parse().unwrap()).unwrap();
    let url = format!("http://{}{path}", server.addr);
    let at_ms = unix_ms_now() + LEAD_MS;
    let dir = util::temp_dir(&format!("multi-client-{name}"));
    Scene { _lane, dir, server, client_cpu: last.to_string(), url, at_ms, at: start_at(at_ms) }
}

/// `--start-at` for `ms` since the epoch, in Unix seconds with milliseconds.
fn start_at(ms: u64) -> String {
    format!("{}.{:03}", ms / 1000, ms % 1000)
}

fn json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

fn n(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("{key} in {v}"))
}

fn counts(v: &Value, key: &str) -> Vec<u64> {
    v[key].as_array().unwrap_or_else(|| panic!("{key} in {v}")).iter().map(|x| x.as_u64().unwrap()).collect()
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// Runs `bench-client args…` in `dir` (so files are named as given) to its end.
fn client(dir: &Path, args: &[&str]) -> Output {
    util::output_within(Command::new(CLIENT).current_dir(dir).args(args), DEADLINE)
}

/// The one line of stderr of a refused command (exit 2, nothing on stdout).
fn refusal(out: &Output) -> String {
    util::one_line_exit(out, 2)
}

/// The histogram `key` of `file`, decoded.
fn decoded(file: &Value, key: &str) -> Histogram<u64> {
    let text = file[key].as_str().unwrap_or_else(|| panic!("{key} in {file}")).to_owned();
    EncodedHistogram::from(text).decode().unwrap()
}

/// The sum of the histograms `key` of `files`, decoded and added by this crate.
fn summed(files: &[&Value], key: &str) -> Histogram<u64> {
    let mut sum = latency_histogram();
    for f in files {
        sum.add(decoded(f, key)).unwrap();
    }
    sum
}

/// Decodes with Python's `hdrhistogram` (an independent implementation) the
/// histograms of each file, and their sum, with Rust's percentile rule.
const PYTHON_CHECK: &str = r#"
import json, math, sys
from hdrh.histogram import HdrHistogram

def summary(h):
    total = h.get_total_count()
    def at(q):
        target = max(1, math.ceil(q * total))
        running = 0
        for i in range(h.counts_len):
            running += h.get_count_at_index(i)
            if running >= target:
                return h.get_highest_equivalent_value(h.get_value_from_index(i))
        return 0
    return {"count": total, "max": h.get_max_value(), "p50": at(0.5), "p90": at(0.9), "p99": at(0.99), "p999": at(0.999)}

out = {"files": [], "sum": {}}
sums = {}
for path in sys.argv[1:]:
    run = json.load(open(path))
    one = {}
    for key in ("latency_hdr", "latency_uncorrected_hdr"):
        if run.get(key):
            h = HdrHistogram.decode(run[key])
            one[key] = summary(h)
            if key in sums:
                sums[key].add(h)
            else:
                sums[key] = HdrHistogram.decode(run[key])
    out["files"].append(one)
out["sum"] = {k: summary(h) for k, h in sums.items()}
print(json.dumps(out))
"#;

/// What [`PYTHON_CHECK`] says of `files`; `None` (after one printed line)
/// when Python's `hdrhistogram` cannot be imported.
fn python_check(files: &[PathBuf]) -> Option<Value> {
    let imported = util::output_within(Command::new("python3").args(["-c", "import hdrh.histogram"]), DEADLINE);
    if !imported.status.success() {
        println!(
            "skipped: the independent decoder check (python3 cannot import hdrh: pip install hdrhistogram): {}",
            String::from_utf8_lossy(&imported.stderr).lines().last().unwrap_or("")
        );
        return None;
    }
    let out = util::output_within(Command::new("python3").arg("-c").arg(PYTHON_CHECK).args(files), DEADLINE);
    assert!(out.status.success(), "the Python decoder failed: {}", text(&out));
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

/// The Python summary `p` equals the run's `latency` object and count.
fn assert_same(p: &Value, latency: &Value, count: u64, what: &str) {
    assert_eq!(p["count"].as_u64(), Some(count), "{what}: count");
    for k in ["max", "p50", "p90", "p99", "p999"] {
        assert_eq!(p[k], latency[k], "{what}: {k} (Python {p}, Rust {latency})");
    }
}

/// The percentiles of `h` as a run's `latency_us` object.
fn percentiles(h: &Histogram<u64>) -> Value {
    serde_json::to_value(LatencySummary::of(h)).unwrap()
}

#[test]
fn two_clients_at_one_barrier_merge_into_the_sum_of_their_files_with_the_servers_cpu_from_watch() {
    let Scene { _lane, dir, server, client_cpu, url, at_ms, at } = scene("two", "/api/devices", util::exclusive);
    let pid = server.pid().to_string();
    let file = |name: &str| dir.join(name);
    let mut running = Vec::new();
    for i in 0..2 {
        let (segment, label) = (i.to_string(), format!("client-{i}"));
        let mut command = Command::new(CLIENT);
        command.args(["load", &url, "--clients", "2", "--segment", &segment, "--connections", "8"]);
        command.args(["--start-at", &at, "--cpus", &client_cpu, "--label", &label]).args(TIMING);
        command.arg("--json").arg(file(&format!("c{i}.json")));
        if i == 0 {
            // The same host: this client also samples the server, to compare with `watch`.
            command.args(["--server-pid", &pid]);
        }
        running.push(Running::spawn(&mut command, &file(&format!("c{i}"))));
    }
    let mut watch = Command::new(CLIENT);
    watch.args(["watch", "--pid", &pid, "--start-at", &at, "--label", "server-host"]).args(TIMING);
    watch.arg("--json").arg(file("s.json"));
    running.push(Running::spawn(&mut watch, &file("s")));
    for (i, r) in running.into_iter().enumerate() {
        let out = r.output(DEADLINE);
        assert!(out.status.success(), "process {i}: {}", text(&out));
    }
    let (c0, c1, s) = (json(&file("c0.json")), json(&file("c1.json")), json(&file("s.json")));
    let merge_out = client(&dir, &["merge", "c0.json", "c1.json", "--server", "s.json", "--json", "m.json"]);
    assert!(merge_out.status.success(), "{}", text(&merge_out));
    let m = json(&file("m.json"));

    // Counts and windows are the sums of the clients'.
    for key in ["successful", "failed_total", "sent", "warmup_completed", "in_flight_at_deadline", "reconnects"] {
        assert_eq!(n(&m, key), n(&c0, key) + n(&c1, key), "{key}");
    }
    let (w0, w1, wm) = (counts(&c0, "windows"), counts(&c1, "windows"), counts(&m, "windows"));
    assert_eq!(wm.len(), 2);
    assert_eq!(wm, [w0[0] + w1[0], w0[1] + w1[1]], "windows summed by index");
    assert_eq!((n(&c0, "connections_requested"), n(&c1, "connections_requested")), (4, 4));
    assert_eq!(n(&m, "connections_requested"), 8);
    assert_eq!(
        n(&m, "sent"),
        n(&m, "warmup_completed") + n(&m, "successful") + n(&m, "failed_total") + n(&m, "in_flight_at_deadline")
    );
    assert!(n(&m, "successful") > 0 && n(&m, "failed_total") == 0, "{m}");
    assert_eq!(m["complete"], true);
    // Percentiles are those of the added histograms (not averages).
    let sum = summed(&[&c0, &c1], "latency_hdr");
    assert_eq!(m["latency_us"], percentiles(&sum));
    assert_eq!(decoded(&m, "latency_hdr"), sum, "the merged histogram is the sum, bucket by bucket");
    // The barrier: both started at it, and their windows line up.
    for c in [&c0, &c1] {
        assert_eq!(n(c, "start_at_unix_ms"), at_ms);
        let late = n(c, "measure_start_unix_ms") - at_ms - 1_000;
        assert!(late < 50, "measured {late} ms after start-at + warm-up");
        assert!(c["latency_hdr"].as_str().unwrap().starts_with("HISTFAAA"));
    }
    let info = &m["merge"];
    assert_eq!(info["clients"].as_array().unwrap().len(), 2);
    assert_eq!(info["aligned"], true);
    assert!(n(info, "start_spread_ms") < 50, "{info}");
    assert_eq!(info["clients"][1]["label"], "client-1");
    // The server's CPU: watch's windows, beside the clients', flagged as the suite does.
    let watched: Vec<f64> =
        s["server_cpu_percent_windows"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    assert_eq!(watched.len(), 2, "{s}");
    assert_eq!(m["server_cpu_percent_windows"], s["server_cpu_percent_windows"]);
    assert_eq!(m["server_cpus"], 1);
    let mean = m["server_cpu_percent"].as_f64().unwrap();
    assert_eq!(m["client_bound"], mean < 95.0, "{m}");
    let sampled_by_load: Vec<f64> =
        c0["server_cpu_percent_windows"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    for (w, l) in watched.iter().zip(&sampled_by_load) {
        assert!((w - l).abs() <= 5.0, "watch {watched:?} vs load --server-pid {sampled_by_load:?}");
    }
    let printed = String::from_utf8_lossy(&merge_out.stdout);
    assert!(
        printed.contains("2 clients merged") && printed.contains("c1.json") && printed.contains("client-0"),
        "{printed}"
    );
    util::assert_schema(&c0, Some("load_report"));
    util::assert_schema(&m, Some("load_report"));
    util::assert_schema(&s, Some("watch_report"));

    // An independent decoder reads the same counts, maxima and percentiles,
    // and its sum of the two histograms gives the merged percentiles.
    if let Some(py) = python_check(&[file("c0.json"), file("c1.json")]) {
        for (i, c) in [&c0, &c1].into_iter().enumerate() {
            assert_same(&py["files"][i]["latency_hdr"], &c["latency_us"], n(c, "successful"), &format!("c{i}"));
        }
        assert_same(&py["sum"]["latency_hdr"], &m["latency_us"], n(&m, "successful"), "sum");
    }
}

#[test]
fn three_clients_split_the_open_loop_schedule_exactly_one_by_its_kubernetes_index() {
    // 600 requests a second in all, under a tenth of the machine: quiet; the split is exact at any pace.
    let Scene { _lane, dir, server: _server, client_cpu, url, at, .. } = scene("three", "/plaintext", util::quiet);
    let mut running = Vec::new();
    for i in 0..3 {
        let mut command = Command::new(CLIENT);
        command.current_dir(&dir);
        command.args(["load", &url, "--clients", "3", "--connections", "7", "--rate", "600", "--start-at", &at]);
        command.args(["--cpus", &client_cpu]).args(TIMING).args(["--json", &format!("c{i}.json")]);
        if i == 2 {
            // As in a pod of a Kubernetes Indexed Job.
            command.args(["--segment", "auto"]).env("JOB_COMPLETION_INDEX", "2");
        } else {
            command.args(["--segment", &i.to_string()]).env_remove("JOB_COMPLETION_INDEX");
        }
        running.push(Running::spawn(&mut command, &dir.join(format!("c{i}"))));
    }
    for (i, r) in running.into_iter().enumerate() {
        let out = r.output(DEADLINE);
        // Three debug clients share one CPU: one may write over 1 % of its
        // requests late (a shortfall, exit 1), which is not what is tested
        // here; how the schedule was split is, and holds either way.
        assert!(out.status.success() || util::only_late(&out), "client {i}: {}", text(&out));
    }
    let out = client(&dir, &["merge", "c0.json", "c1.json", "c2.json", "--json", "m.json"]);
    assert!(out.status.success() || util::only_late(&out), "{}", text(&out));
    let c: Vec<Value> = (0..3).map(|i| json(&dir.join(format!("c{i}.json")))).collect();
    let m = json(&dir.join("m.json"));
    assert_eq!(c.iter().map(|c| c["segment"].as_u64().unwrap()).collect::<Vec<_>>(), [0, 1, 2]);
    assert_eq!(c.iter().map(|c| n(c, "connections_requested")).collect::<Vec<_>>(), [3, 2, 2], "7 dealt round-robin");
    // The schedule of 3 s at 600/s has requests k = 0 … 1800 due by each
    // client's deadline; client i owns k ≡ i (mod 3): 601, 600, 600. Each was
    // written or counted as unsent, none twice, none lost.
    let due: Vec<u64> = c.iter().map(|c| n(c, "sent") + n(c, "unsent_at_deadline")).collect();
    assert_eq!(due, [601, 600, 600]);
    assert_eq!(n(&m, "sent") + n(&m, "unsent_at_deadline"), 1801, "one schedule at 600/s");
    for c in &c {
        assert_eq!(c["rate_per_s"].as_f64(), Some(200.0), "each client's share");
        assert_eq!(n(c, "failed_total"), 0, "{c}");
    }
    assert_eq!(m["rate_per_s"].as_f64(), Some(600.0));
    assert_eq!(n(&m, "connections_requested"), 7);
    for key in ["successful", "late_sends", "unsent_at_deadline", "in_flight_at_deadline"] {
        assert_eq!(n(&m, key), c.iter().map(|c| n(c, key)).sum::<u64>(), "{key}");
    }
    let all: Vec<&Value> = c.iter().collect();
    assert_eq!(m["latency_us"], percentiles(&summed(&all, "latency_hdr")));
    assert_eq!(m["latency_uncorrected_us"], percentiles(&summed(&all, "latency_uncorrected_hdr")));
    assert_eq!(m["merge"]["clients"].as_array().unwrap().len(), 3);
    util::assert_schema(&m, Some("load_report"));
    if let Some(py) = python_check(&(0..3).map(|i| dir.join(format!("c{i}.json"))).collect::<Vec<_>>()) {
        for (i, c) in c.iter().enumerate() {
            assert_same(&py["files"][i]["latency_hdr"], &c["latency_us"], n(c, "successful"), &format!("c{i}"));
            let uncorrected = &py["files"][i]["latency_uncorrected_hdr"];
            assert_same(uncorrected, &c["latency_uncorrected_us"], n(c, "successful"), &format!("c{i} uncorrected"));
        }
        assert_same(&py["sum"]["latency_hdr"], &m["latency_us"], n(&m, "successful"), "sum");
        assert_same(&py["sum"]["latency_uncorrected_hdr"], &m["latency_uncorrected_us"], n(&m, "successful"), "sum");
    }
}

/// The fixture clients' first measured start, ms since the Unix epoch.
const FIXTURE_START: u64 = 1_796_119_201_000;

/// Writes fixture load reports `c0.json` and `c1.json` (segments 0 and 1
/// of 2) into `dir`, each edited by `edit` (`None`: as built).
fn fixture_pair(dir: &Path, edit: impl Fn(usize, &mut Value)) {
    let t = FIXTURE_START;
    for i in 0..2u32 {
        let latencies: Vec<u64> = (1..=100u64).map(|k| k * (u64::from(i) + 3)).collect();
        let report = fixtures::load_report(i, 2, t + u64::from(i) * 10, &latencies);
        let mut value = serde_json::to_value(&report).unwrap();
        edit(i as usize, &mut value);
        results::write(&dir.join(format!("c{i}.json")), &value).unwrap();
    }
}

#[test]
fn merge_refuses_inputs_that_are_not_one_load_in_one_line_naming_both_files() {
    let dir = util::temp_dir("multi-client-refusals");
    let two_digits = two_digit_histogram();
    // Client 1's field set to the value (its measured start is FIXTURE_START + 10 ms).
    let cases: [(&str, Value, &str); 7] = [
        ("window_s", 2.into(), "disagree on --window: 1 s vs 2 s"),
        ("warmup_s", 0.into(), "disagree on --warmup: 1 s vs 0 s"),
        ("url", "http://127.0.0.1:8080/plaintext".into(), "disagree on the URL"),
        ("start_at_unix_ms", 1_796_119_300_000u64.into(), "disagree on --start-at"),
        ("measure_start_unix_ms", (FIXTURE_START + 2_000).into(), "clients started 2.0 s apart (tolerance 0.1 s)"),
        ("latency_hdr", two_digits.into(), "disagree on the histogram layout"),
        ("rate_per_s", 100.into(), "disagree on the mode"),
    ];
    for (name, value, expected) in cases {
        fixture_pair(&dir, |i, v| {
            if i == 1 {
                v[name] = value.clone();
            }
        });
        let err = refusal(&client(&dir, &["merge", "c0.json", "c1.json", "--json", "m.json"]));
        assert!(err.contains(expected), "{name}: {err}");
        assert!(err.contains("c0.json") && err.contains("c1.json"), "{name} names both files: {err}");
        assert!(!dir.join("m.json").exists(), "{name}: nothing written");
        // --force merges, and says it did.
        let out = client(&dir, &["merge", "c0.json", "c1.json", "--force", "--json", "m.json"]);
        assert_eq!(out.status.code(), Some(0), "{name} --force: {}", text(&out));
        let m = json(&dir.join("m.json"));
        assert_eq!(
            (m["merge"]["aligned"].clone(), m["merge"]["forced"].clone()),
            (Value::Bool(false), Value::Bool(true))
        );
        assert!(String::from_utf8_lossy(&out.stdout).contains("FORCED"), "{name}");
        std::fs::remove_file(dir.join("m.json")).unwrap();
    }
    // The same file twice.
    fixture_pair(&dir, |_, _| {});
    let err = refusal(&client(&dir, &["merge", "c0.json", "c0.json"]));
    assert!(err.contains("c0.json and c0.json are the same run"), "{err}");
    // A file of schema 4: no histogram, nothing to add, even with --force.
    fixture_pair(&dir, |i, v| {
        if i == 1 {
            v["schema_version"] = 4.into();
            v.as_object_mut().unwrap().remove("latency_hdr");
        }
    });
    let err = refusal(&client(&dir, &["merge", "c0.json", "c1.json", "--force"]));
    assert!(err.contains("c1.json has no latency histogram (schema 4); rerun"), "{err}");
    // A missing file, and a file that is not a load report.
    assert!(refusal(&client(&dir, &["merge", "c0.json", "nowhere.json"])).contains("nowhere.json"));
    std::fs::write(dir.join("other.json"), "{\"schema_version\": 5, \"runs\": []}").unwrap();
    let err = refusal(&client(&dir, &["merge", "c0.json", "other.json"]));
    assert!(err.contains("other.json does not match the layout of `load --json`"), "{err}");
}

/// A 2-significant-digit histogram, encoded: another layout than the engine's.
/// A histogram of 2 significant digits holding as many requests as a
/// fixture client's 100 successful ones.
fn two_digit_histogram() -> String {
    let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000, 2).unwrap();
    h.record_n(250, 100).unwrap();
    EncodedHistogram::encode(&h).as_str().to_owned()
}

#[test]
fn a_client_that_misses_the_start_barrier_measures_nothing_and_exits_2() {
    let dir = util::temp_dir("multi-client-barrier");
    let json_out = dir.join("late.json");
    // Late by 5 s and the client's own start (a second or more while every test starts at once).
    let late_by = |err: &str| -> f64 {
        let after = err.split("missed the start barrier by ").nth(1).unwrap_or_else(|| panic!("{err}"));
        after.split(' ').next().unwrap().parse().unwrap_or_else(|e| panic!("{e}: {err}"))
    };
    let late = |at: u64| {
        let mut load = Command::new(CLIENT);
        load.args(["load", "http://127.0.0.1:1/plaintext", "--start-at", &start_at(at), "--json"]).arg(&json_out);
        refusal(&util::output_within(&mut load, DEADLINE))
    };
    let err = late(unix_ms_now() - 5_000);
    assert!((5.0..10.0).contains(&late_by(&err)), "{err}");
    let err = late(unix_ms_now() + 7_200_000);
    assert!(err.contains("ahead"), "{err}");
    let mut watch = Command::new(CLIENT);
    watch.args(["watch", "--pid", &std::process::id().to_string(), "--start-at", &start_at(unix_ms_now() - 5_000)]);
    let err = refusal(&util::output_within(&mut watch, DEADLINE));
    assert!((5.0..10.0).contains(&late_by(&err)), "{err}");
    // On time when started, late after a preflight that took 1 s: refused
    // on arrival, before any window.
    let addr = util::slow_server(Duration::from_millis(1_000));
    let mut load = Command::new(CLIENT);
    load.args(["load", &format!("http://{addr}/slow"), "--connections", "1", "--duration", "1s", "--warmup", "0s"]);
    load.args(["--start-at", &start_at(unix_ms_now() + 300), "--start-tolerance", "100ms", "--json"]).arg(&json_out);
    let err = refusal(&util::output_within(&mut load, DEADLINE));
    assert!(err.contains("missed the start barrier by"), "{err}");
    assert!(!json_out.exists(), "no JSON written");
}

#[test]
fn watch_marks_a_server_that_exits_and_merge_marks_the_merged_run() {
    let dir = util::temp_dir("multi-client-lost");
    let mut sleeper = Command::new("sleep");
    sleeper.arg("1.2");
    let sleeper = Running::spawn(&mut sleeper, &dir.join("sleep"));
    let mut watch = Command::new(CLIENT);
    watch.current_dir(&dir).args(["watch", "--pid", &sleeper.id().to_string(), "--label", "server-host"]);
    watch.args(["--warmup", "0s", "--duration", "3s", "--window", "500ms", "--json", "s.json"]);
    let out = util::output_within(&mut watch, DEADLINE);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("INCOMPLETE"), "{}", text(&out));
    let s = json(&dir.join("s.json"));
    assert_eq!((s["server_lost"].clone(), s["complete"].clone()), (Value::Bool(true), Value::Bool(false)), "{s}");
    let windows = s["server_cpu_percent_windows"].as_array().unwrap().len();
    assert!((1..6).contains(&windows), "sampling ended with the window it died in: {s}");
    assert_eq!(s["process"], "sleep");
    util::assert_schema(&s, Some("watch_report"));
    // Clients on the same windows as this watch.
    let start = n(&s, "measure_start_unix_ms");
    fixture_pair(&dir, |i, v| {
        v["warmup_s"] = 0.into();
        v["window_s"] = 0.5.into();
        v["windows"] = serde_json::json!([50, 50, 0, 0, 0, 0]);
        v["windows_failed"] = serde_json::json!([0, 0, 0, 0, 0, 0]);
        v["start_at_unix_ms"] = Value::Null;
        v["measure_start_unix_ms"] = (start + i as u64).into();
    });
    let out = client(&dir, &["merge", "c0.json", "c1.json", "--server", "s.json", "--json", "m.json"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let m = json(&dir.join("m.json"));
    assert_eq!((m["server_lost"].clone(), m["complete"].clone()), (Value::Bool(true), Value::Bool(false)), "{m}");
    assert_eq!(m["merge"]["server"]["label"], "server-host");
}
