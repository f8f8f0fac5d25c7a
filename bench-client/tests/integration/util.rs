//! Helpers shared by the integration tests: the client and server binaries,
//! the CPUs a test may pin to, temporary folders, and the locks that decide
//! which tests that load a server share the machine (tests of different
//! modules run in parallel in this one binary).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

use bench_client::model::Framework;
use bench_client::sys::{CpuList, affinity_of};

/// The `bench-client` binary Cargo built for these tests.
pub(crate) const CLIENT: &str = env!("CARGO_BIN_EXE_bench-client");

/// Every framework's name, in order.
pub(crate) const FRAMEWORKS: [&str; 3] = [Framework::ALL[0].name(), Framework::ALL[1].name(), Framework::ALL[2].name()];

/// `target/<profile>/` of this test binary, where `cargo test --workspace`
/// also builds the server binaries (each server crate has integration tests,
/// so Cargo builds its binary).
pub(crate) fn bin_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    exe.parent().and_then(|deps| deps.parent()).expect("target/<profile>/deps").to_path_buf()
}

/// The binary of `server-<name>`, asserting it was built.
pub(crate) fn server_binary(name: &str) -> PathBuf {
    let path = bin_dir().join(format!("server-{name}"));
    assert!(
        path.is_file(),
        "{} missing: run `cargo test --workspace` (or `make test`), which builds it",
        path.display()
    );
    path
}

/// `bench-client suite --profile dev --no-build`, on the servers `cargo
/// test` built beside this binary (`CARGO_TARGET_DIR`): the suite of every
/// test that runs one.
pub(crate) fn dev_suite() -> Command {
    let mut command = Command::new(CLIENT);
    command.args(["suite", "--profile", "dev", "--no-build"]).env("CARGO_TARGET_DIR", bin_dir().parent().unwrap());
    command
}

/// A dev-build `suite` that has ended: its folder and what it printed.
pub(crate) struct Suite {
    pub(crate) out: PathBuf,
    pub(crate) output: Output,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

impl Suite {
    /// `suite --profile dev --no-build ARGS --out OUT` (the server and the
    /// client on [`split_cpus`] unless ARGS place them), ended within 10 min.
    pub(crate) fn run(out: &Path, args: &[&str]) -> Self {
        let mut command = dev_suite();
        command.args(args);
        if !args.contains(&"--server-cpus") {
            command.args(split_cpus());
        }
        let output = output_within(command.arg("--out").arg(out), Duration::from_secs(600));
        let (stdout, stderr) = (lossy(&output.stdout), lossy(&output.stderr));
        Self { out: out.to_owned(), output, stdout, stderr }
    }

    /// This suite, which must have exited 0: else the test fails with what it printed.
    pub(crate) fn succeeded(self) -> Self {
        assert!(self.output.status.success(), "suite failed: {}\n{}\n{}", self.output.status, self.stderr, self.stdout);
        self
    }

    /// Its latest `results.json`, checked against the committed schema.
    pub(crate) fn results(&self) -> serde_json::Value {
        let text = std::fs::read_to_string(self.out.join("latest/results.json")).expect("results.json");
        let results = serde_json::from_str(&text).expect("results.json is JSON");
        assert_schema(&results, None);
        results
    }
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Every request written is settled once: in the warm-up, as a success
/// or a failure in a window, in flight at the deadline, or written again.
pub(crate) fn assert_sent_adds_up(s: &bench_client::engine::RunStats) {
    let settled = s.counts.warmup_completed
        + s.successful()
        + s.settled_failures()
        + s.counts.in_flight_at_deadline
        + s.counts.retried;
    assert_eq!(s.counts.sent, settled, "every write counted, every request settled once: {:?}", s.counts);
}

/// Every CPU this process may use, as a list.
pub(crate) fn all_cpus() -> CpuList {
    let cpus = affinity_of(0).expect("own affinity");
    cpus.iter().map(ToString::to_string).collect::<Vec<_>>().join(",").parse().expect("cpu list")
}

/// The server's and the client's CPU in every test that pins them: the
/// first and the last this process may use.
pub(crate) fn cpu_pair() -> (usize, usize) {
    let cpus = all_cpus();
    (cpus.cpus()[0], *cpus.cpus().last().unwrap())
}

/// `--server-cpus FIRST --client-cpus LAST` (see [`cpu_pair`]): the suite's
/// and `ab`'s CPUs in every test that runs them.
pub(crate) fn split_cpus() -> [String; 4] {
    let (first, last) = cpu_pair();
    ["--server-cpus".to_owned(), first.to_string(), "--client-cpus".to_owned(), last.to_string()]
}

/// The exit status of `child`, which must end within `within`; `what`
/// names it when it does not.
pub(crate) fn exit_within(child: &mut Child, within: Duration, what: &str) -> std::process::ExitStatus {
    let deadline = Instant::now() + within;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(Instant::now() < deadline, "{what}: still running {within:?} later");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Asserts of every run of a results file that it has successful requests,
/// no failed one, and windows that add up to them.
pub(crate) fn assert_runs_add_up(runs: &[serde_json::Value]) {
    for run in runs {
        let n = |k: &str| run[k].as_u64().unwrap_or_else(|| panic!("{k} in {run}"));
        assert!(n("successful") > 0, "{run}");
        assert_eq!(n("failed_total"), 0, "{run}");
        let windows: u64 = run["windows"].as_array().unwrap().iter().map(|w| w.as_u64().unwrap()).sum();
        assert_eq!(windows, n("successful"), "windows add up: {run}");
    }
}

/// A fresh folder `name-<pid>` under Cargo's temporary folder for tests.
pub(crate) fn temp_dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temporary folder");
    dir
}

/// Which tests that load a server may run together: up to
/// [`Lane::most`] of one kind, never two kinds at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lane {
    /// Assertions that read how fast or how soon something ran, or a
    /// change to the machine: alone.
    Exclusive,
    /// Assertions that read how soon something ran, from tests that barely
    /// use the CPU (a timeout, a stall, a schedule of a few requests a
    /// second): beside each other, never beside load.
    Quiet,
    /// Assertions on what a run did, never how fast: three at a time.
    Shared,
    /// Counted under valgrind and perf, each server on a core of its own
    /// ([`CpuSlot`]): two at a time, beside no load (a loaded core moves a
    /// count's system calls and context switches).
    Counted,
}

impl Lane {
    /// Every lane, in [`Lane::index`] order.
    const ALL: [Lane; 4] = [Lane::Exclusive, Lane::Quiet, Lane::Shared, Lane::Counted];

    /// How many tests of this lane run at once: three shared ones fill the
    /// two cores (each alone uses about two thirds of them), two counted
    /// ones each take a core of their own, quiet ones leave them nearly idle.
    fn most(self) -> usize {
        match self {
            Lane::Exclusive => 1,
            Lane::Shared => 3,
            Lane::Counted => 2,
            Lane::Quiet => 4,
        }
    }

    fn index(self) -> usize {
        Lane::ALL.iter().position(|&l| l == self).unwrap_or_default()
    }
}

/// Which lane runs, how many of its tests, and how many wait for each lane.
struct Lanes {
    held: Option<Lane>,
    running: usize,
    waiting: [usize; 4],
}

impl Lanes {
    /// May a test of `lane` start now? Into a lane already running while
    /// it has room; into an idle machine only for the lane that most tests
    /// wait for, so that the lanes of two run full rather than one by one.
    fn admits(&self, lane: Lane) -> bool {
        match self.held {
            Some(held) if self.running > 0 => held == lane && self.running < lane.most(),
            _ => {
                let most = self.waiting.iter().max().copied().unwrap_or_default();
                Lane::ALL.iter().find(|l| self.waiting[l.index()] == most) == Some(&lane)
            }
        }
    }
}

/// The lanes of this test process.
static LANES: (Mutex<Lanes>, Condvar) = (Mutex::new(Lanes { held: None, running: 0, waiting: [0; 4] }), Condvar::new());

/// A test's place in its [`Lane`], given up when dropped (a panicking
/// holder gives it up too).
pub(crate) struct InLane {
    lane: Lane,
    entered: Instant,
}

impl InLane {
    fn enter(lane: Lane) -> Self {
        // The process's first entry waits for the tests its threads started at
        // once to say their lanes, so the first lane chosen is the one most wait
        // for (with a thread per test, nearly all of them), not the first asked.
        static GATHERED: std::sync::Once = std::sync::Once::new();
        GATHERED.call_once(|| std::thread::sleep(Duration::from_millis(300)));
        let (lanes, changed) = &LANES;
        let mut state = lanes.lock().unwrap_or_else(PoisonError::into_inner);
        state.waiting[lane.index()] += 1;
        while !state.admits(lane) {
            state = changed.wait(state).unwrap_or_else(PoisonError::into_inner);
        }
        state.waiting[lane.index()] -= 1;
        state.held = Some(lane);
        state.running += 1;
        changed.notify_all();
        let entered = Instant::now();
        FIRST_ENTRY.get_or_init(|| entered);
        Self { lane, entered }
    }
}

/// When the first test of this process entered a lane.
static FIRST_ENTRY: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();

/// With `LANE_TIMES=FILE`, each test's lane and the seconds it held it
/// (from the run's first entry) are appended to FILE: where the binary's
/// time goes, for docs/TESTING.md.
fn log_lane_time(lane: Lane, entered: Instant) {
    let Some(file) = std::env::var_os("LANE_TIMES") else { return };
    let start = *FIRST_ENTRY.get_or_init(|| entered);
    let test = std::thread::current().name().unwrap_or("?").to_owned();
    let line = format!(
        "{:>7.1} {:>6.1} {lane:?} {test}\n",
        entered.saturating_duration_since(start).as_secs_f64(),
        entered.elapsed().as_secs_f64()
    );
    let appended = std::fs::OpenOptions::new().create(true).append(true).open(file);
    let _ = appended.and_then(|mut f| f.write_all(line.as_bytes()));
}

impl Drop for InLane {
    fn drop(&mut self) {
        let (lanes, changed) = &LANES;
        let mut state = lanes.lock().unwrap_or_else(PoisonError::into_inner);
        state.running -= 1;
        changed.notify_all();
        drop(state);
        log_lane_time(self.lane, self.entered);
    }
}

/// Held by tests whose assertions read how fast or how soon something ran
/// (a change called, a latency, a timeout, a rate, perf's samples), or that
/// change the machine for the others: nothing else that loads a server runs
/// beside them.
pub(crate) fn exclusive() -> InLane {
    InLane::enter(Lane::Exclusive)
}

/// Held by tests whose assertions read how soon something ran but that
/// barely use the CPU while they wait (under 5 % of the machine's alone):
/// up to four of them at once, beside nothing that loads a server.
pub(crate) fn quiet() -> InLane {
    InLane::enter(Lane::Quiet)
}

/// Held by tests that load a server (or run a browser) but assert only
/// what the run did (counts that add up, files, exit codes, bodies), never
/// how fast: three of them share the two cores. Their runs are windows of
/// fixed length, so a share of the CPU costs them requests, not time; what
/// they check holds at any rate.
pub(crate) fn shared() -> InLane {
    InLane::enter(Lane::Shared)
}

/// Held by the tests that count under valgrind and perf: two of them at a
/// time, each with a [`CpuSlot`] for its server, beside no load.
pub(crate) fn counted() -> InLane {
    InLane::enter(Lane::Counted)
}

/// Which of [`cpu_pair`]'s two CPUs are taken by a [`CpuSlot`].
static CPU_SLOTS: (Mutex<[bool; 2]>, Condvar) = (Mutex::new([false; 2]), Condvar::new());

/// One of [`cpu_pair`]'s CPUs for a test's one busy process (a server under
/// valgrind is one thread of work), free again when dropped: two such tests
/// under [`counted`] run each on a core of its own.
pub(crate) struct CpuSlot(usize);

impl CpuSlot {
    /// Waits until one of the two CPUs is free and takes it.
    pub(crate) fn take() -> Self {
        let (taken, freed) = &CPU_SLOTS;
        let mut taken = taken.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if let Some(slot) = taken.iter().position(|t| !t) {
                taken[slot] = true;
                return Self(slot);
            }
            taken = freed.wait(taken).unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// The CPU's number.
    pub(crate) fn cpu(&self) -> usize {
        let (first, last) = cpu_pair();
        if self.0 == 0 { first } else { last }
    }
}

impl Drop for CpuSlot {
    fn drop(&mut self) {
        let (taken, freed) = &CPU_SLOTS;
        taken.lock().unwrap_or_else(PoisonError::into_inner)[self.0] = false;
        freed.notify_one();
    }
}

/// A child in a process group of its own, killed with its whole group
/// (servers it started included) when dropped: a failing test leaves
/// nothing running.
pub(crate) struct Guarded(pub(crate) Child);

impl Guarded {
    /// Spawns `command` in a new process group.
    pub(crate) fn spawn(command: &mut Command) -> Self {
        Self(command.process_group(0).spawn().expect("the command starts"))
    }
}

impl Drop for Guarded {
    fn drop(&mut self) {
        if matches!(self.0.try_wait(), Ok(None)) {
            let _ = killpg(Pid::from_raw(self.0.id() as i32), Signal::SIGKILL);
            let _ = self.0.wait();
        }
    }
}

/// Runs `command` to its end like `Command::output`, in a process group of
/// its own; past `deadline` the group is killed and the test fails naming
/// the command, instead of hanging `make test`.
pub(crate) fn output_within(command: &mut Command, deadline: Duration) -> Output {
    let shown = format!("{command:?}");
    let mut child = Guarded::spawn(command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()));
    let mut stdout = child.0.stdout.take().expect("piped stdout");
    let mut stderr = child.0.stderr.take().expect("piped stderr");
    let out_reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = stdout.read_to_end(&mut v);
        v
    });
    let err_reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = stderr.read_to_end(&mut v);
        v
    });
    let end = Instant::now() + deadline;
    let status = loop {
        if let Some(status) = child.0.try_wait().expect("wait for the child") {
            break status;
        }
        assert!(Instant::now() < end, "{shown} still running after {deadline:?}: killed");
        std::thread::sleep(Duration::from_millis(20));
    };
    Output { status, stdout: out_reader.join().unwrap_or_default(), stderr: err_reader.join().unwrap_or_default() }
}

/// Exit 1 for a run short of its open-loop schedule only (requests written
/// late, none left incomplete), which a debug client may be when the machine
/// is busy: for tests whose subject is not punctuality.
pub(crate) fn only_late(out: &Output) -> bool {
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    out.status.code() == Some(1) && text.contains("SHORT: the schedule was offered") && !text.contains("INCOMPLETE")
}

/// The one line on stderr of a run that exited with `code` and printed
/// nothing on stdout (a refusal: nothing measured).
pub(crate) fn one_line_exit(out: &Output, code: i32) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let text = format!("{}{err}", String::from_utf8_lossy(&out.stdout));
    assert_eq!(out.status.code(), Some(code), "{text}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(out.stdout.is_empty(), "nothing printed on stdout: {text}");
    err
}

/// `bench-client ARGS…` to its end (killed, and the test failed, after 2 min).
pub(crate) fn client(args: &[&str]) -> Output {
    output_within(Command::new(CLIENT).args(args), Duration::from_secs(120))
}

/// `Hello, World!` as every test responder answers it.
pub(crate) const HELLO: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\nHello, World!";

/// A server on 127.0.0.1:0, a thread per connection, each running `serve`
/// on its stream; returns where it listens.
pub(crate) fn serve_each(serve: impl Fn(TcpStream) + Send + Clone + 'static) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let serve = serve.clone();
            std::thread::spawn(move || serve(stream));
        }
    });
    addr
}

/// Reads request heads (each ending in an empty line) from `stream` and
/// hands the n-th (from 0) to `answer`, which writes and says whether to go
/// on; returns when it says not to or the peer closes.
pub(crate) fn answer_heads(stream: &mut TcpStream, mut answer: impl FnMut(&mut TcpStream, u64) -> bool) {
    let (mut buf, mut chunk, mut n) = (Vec::new(), [0u8; 4096], 0);
    loop {
        while let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            buf.drain(..end + 4);
            if !answer(stream, n) {
                return;
            }
            n += 1;
        }
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(k) => buf.extend_from_slice(&chunk[..k]),
        }
    }
}

/// A server that answers each request on a connection (`Hello, World!`)
/// after `delay`, one at a time: at most `1 / delay` requests per second
/// per connection, and preflight against it takes that long.
pub(crate) fn slow_server(delay: Duration) -> SocketAddr {
    serve_each(move |mut stream| {
        answer_heads(&mut stream, |s, _| {
            std::thread::sleep(delay);
            s.write_all(HELLO).is_ok()
        });
    })
}

/// Validates `value` against the committed JSON Schema: the whole results
/// file (`def` `None`) or `$defs/<def>`.
pub(crate) fn assert_schema(value: &serde_json::Value, def: Option<&str>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/results.schema.json");
    let mut schema: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    if let Some(def) = def {
        let root = schema.as_object_mut().unwrap();
        for key in ["type", "required", "additionalProperties", "properties"] {
            root.remove(key);
        }
        root.insert("$ref".to_owned(), serde_json::Value::from(format!("#/$defs/{def}")));
    }
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    let errors: Vec<String> = validator.iter_errors(value).map(|e| format!("{e} at {}", e.instance_path())).collect();
    assert!(errors.is_empty(), "{def:?} violates the schema: {errors:#?}");
}

/// The Python interpreter itself (`sys.executable`), not a shim that execs
/// it (pyenv's `python3` is a shell script): a server run under valgrind
/// must be the program valgrind starts.
pub(crate) fn python() -> &'static str {
    static PYTHON: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
        let out =
            Command::new("python3").args(["-c", "import sys; print(sys.executable)"]).output().expect("python3 runs");
        String::from_utf8(out.stdout).expect("a path").trim().to_owned()
    });
    &PYTHON
}

/// The program `name` on the PATH, if any.
pub(crate) fn on_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| std::env::split_paths(&paths).map(|p| p.join(name)).find(|p| p.is_file()))
}

/// The server of framework `name` started on every CPU with an HTTPS
/// listener beside its HTTP one: the process and the HTTPS address.
pub(crate) fn with_tls_listener(name: &str) -> (bench_client::sys::ServerProcess, SocketAddr) {
    let args = ["--tls-addr".to_owned(), "127.0.0.1:0".to_owned()];
    let server = bench_client::sys::ServerProcess::start(&server_binary(name), &args, &all_cpus()).unwrap();
    let tls_addr = server.tls_addr.expect("the second listening line, https");
    assert_ne!(tls_addr, server.addr, "{name}: two listeners");
    (server, tls_addr)
}

/// The program `name` on the PATH; without it, `None` after a line saying
/// `what` is skipped (`.ci/run` installs every such program with apt).
pub(crate) fn tool_or_skip(name: &str, what: &str) -> Option<PathBuf> {
    let found = on_path(name);
    if found.is_none() {
        println!("skipped: {what} (apt-get install {name}; .ci/run does)");
    }
    found
}

/// A server answering `Hello, World!` to every request: its `/hello` URL and
/// the requests it saw.
pub(crate) fn counted_server() -> (String, std::sync::Arc<std::sync::atomic::AtomicU64>) {
    use std::sync::atomic::{AtomicU64, Ordering};
    let requests = std::sync::Arc::new(AtomicU64::new(0));
    let seen = std::sync::Arc::clone(&requests);
    let addr = serve_each(move |mut stream| {
        answer_heads(&mut stream, |s, _| {
            seen.fetch_add(1, Ordering::Relaxed);
            s.write_all(HELLO).is_ok()
        });
    });
    (format!("http://{addr}/hello"), requests)
}
