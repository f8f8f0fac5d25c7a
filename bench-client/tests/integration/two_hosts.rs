//! Two hosts rehearsed on one machine: the server and `watch` in one network
//! namespace, the clients in another, joined by a veth pair addressed inside
//! 127.0.0.0/8 (127.100.N.1 ↔ 127.100.N.2; `route_localnet` lets 127/8
//! travel a real interface, and each namespace's `lo` keeps only
//! 127.0.0.1/32). `load` + `watch` + `merge` run across them as they would
//! across two machines, with `--start-at`.
//!
//! Safety: every target is checked to be inside 127.0.0.0/8 before anything
//! starts, and the namespaces are this test's own: made here, named
//! `bcns-<pid>-<tag>-{srv,cli}`, and deleted (with the veth pair in them) by
//! a guard on drop, so also when an assertion fails; stale ones of dead test
//! processes are removed first. Where namespaces cannot be made (not root,
//! no iproute2), it prints `skipped: <reason>` and passes.
//!
//! The plain rehearsal runs in `make test` (about 5 s). The shaped one
//! (`tbf` rate limit, random loss through a classic-BPF filter, `netem`
//! delay where the kernel has it) takes about 40 s and is `#[ignore]`d: `make
//! two-hosts` runs both and prints, per link, each route's requests per
//! second and µs of server CPU per request.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use bench_client::measure::unix_ms_now;
use bench_client::sys::{CpuList, ServerProcess, process_alive};
use serde_json::Value;

use crate::util::{self, CLIENT};

const DEADLINE: Duration = Duration::from_secs(90);
/// Lead to the start barrier: processes started and preflight done.
const LEAD_MS: u64 = 2_500;

/// Refuses any target outside 127.0.0.0/8: these tests send traffic only to
/// loopback addresses, inside namespaces they made.
fn loopback_only(addr: IpAddr) -> Result<(), String> {
    match addr {
        IpAddr::V4(v4) if v4.is_loopback() => Ok(()),
        other => Err(format!("refusing target {other}: outside 127.0.0.0/8")),
    }
}

#[test]
fn targets_outside_127_slash_8_are_refused_before_anything_starts() {
    for bad in ["10.0.0.1", "192.0.2.1", "172.16.0.1", "8.8.8.8", "::1"] {
        assert!(loopback_only(bad.parse().unwrap()).is_err(), "{bad}");
    }
    for good in ["127.0.0.1", "127.100.0.2", "127.255.255.254"] {
        assert_eq!(loopback_only(good.parse().unwrap()), Ok(()), "{good}");
    }
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// `ip args…` (or `cmd args…` when `cmd` is given), to its end.
fn run(cmd: &str, args: &[&str]) -> Output {
    util::output_within(Command::new(cmd).args(args), Duration::from_secs(20))
}

/// Runs `cmd args…`; on failure, its output as the error.
fn must(cmd: &str, args: &[&str]) -> Result<(), String> {
    let out = run(cmd, args);
    if out.status.success() { Ok(()) } else { Err(format!("{cmd} {}: {}", args.join(" "), text(&out).trim())) }
}

/// Two namespaces joined by a veth pair, deleted on drop.
struct TwoHosts {
    server_ns: String,
    client_ns: String,
    server_if: String,
    client_if: String,
    server_ip: Ipv4Addr,
}

impl TwoHosts {
    /// Makes them (after removing stale ones), or says why it cannot.
    fn new(tag: &str, subnet: u8) -> Result<Self, String> {
        if run("ip", &["-V"]).status.code().is_none() {
            return Err("ip (iproute2) is not installed".into());
        }
        remove_stale();
        let pid = std::process::id();
        let hosts = Self {
            server_ns: format!("bcns-{pid}-{tag}-srv"),
            client_ns: format!("bcns-{pid}-{tag}-cli"),
            server_if: format!("bc{pid}{tag}s"),
            client_if: format!("bc{pid}{tag}c"),
            server_ip: Ipv4Addr::new(127, 100, subnet, 2),
        };
        // From here on, a failure deletes what was made (drop).
        must("ip", &["netns", "add", &hosts.server_ns])?;
        must("ip", &["netns", "add", &hosts.client_ns])?;
        must("ip", &["link", "add", &hosts.client_if, "type", "veth", "peer", "name", &hosts.server_if])?;
        let client_ip = Ipv4Addr::new(127, 100, subnet, 1);
        for (ns, dev, ip) in
            [(&hosts.client_ns, &hosts.client_if, client_ip), (&hosts.server_ns, &hosts.server_if, hosts.server_ip)]
        {
            loopback_only(IpAddr::V4(ip))?;
            must("ip", &["link", "set", dev, "netns", ns])?;
            must("ip", &["-n", ns, "link", "set", "lo", "up"])?;
            // 127/8 stays local to lo unless lo keeps only 127.0.0.1.
            let _ = run("ip", &["-n", ns, "addr", "del", "127.0.0.1/8", "dev", "lo"]);
            let _ = run("ip", &["-n", ns, "addr", "add", "127.0.0.1/32", "dev", "lo"]);
            for conf in ["all", dev.as_str()] {
                must("ip", &["netns", "exec", ns, "sysctl", "-qw", &format!("net.ipv4.conf.{conf}.route_localnet=1")])?;
            }
            must("ip", &["-n", ns, "addr", "add", &format!("{ip}/24"), "dev", dev])?;
            must("ip", &["-n", ns, "link", "set", dev, "up"])?;
        }
        Ok(hosts)
    }

    /// `tc -n NS args…` on both ends (each end's own device).
    fn tc_both(&self, args: &[&str]) -> Result<(), String> {
        for (ns, dev) in [(&self.server_ns, &self.server_if), (&self.client_ns, &self.client_if)] {
            let mut full = vec!["-n", ns.as_str()];
            for a in args {
                full.push(if *a == "DEV" { dev.as_str() } else { a });
            }
            must("tc", &full)?;
        }
        Ok(())
    }

    /// Removes every qdisc both ends were given.
    fn unshape(&self) {
        for (ns, dev) in [(&self.server_ns, &self.server_if), (&self.client_ns, &self.client_if)] {
            let _ = run("tc", &["-n", ns, "qdisc", "del", "dev", dev, "root"]);
            let _ = run("tc", &["-n", ns, "qdisc", "del", "dev", dev, "clsact"]);
        }
    }

    /// A counter of `/proc/net/snmp`'s Tcp line in the client namespace.
    fn client_tcp(&self, field: &str) -> u64 {
        let out = run("ip", &["netns", "exec", &self.client_ns, "cat", "/proc/net/snmp"]);
        let snmp = String::from_utf8_lossy(&out.stdout).into_owned();
        let lines: Vec<&str> = snmp.lines().filter(|l| l.starts_with("Tcp:")).collect();
        let (names, values) = (lines[0].split_whitespace(), lines[1].split_whitespace());
        names.zip(values).find(|(n, _)| *n == field).and_then(|(_, v)| v.parse().ok()).unwrap_or(0)
    }

    /// Bytes received by the client's end of the link.
    fn client_rx_bytes(&self) -> u64 {
        let path = format!("/sys/class/net/{}/statistics/rx_bytes", self.client_if);
        let out = run("ip", &["netns", "exec", &self.client_ns, "cat", &path]);
        String::from_utf8_lossy(&out.stdout).trim().parse().unwrap_or(0)
    }
}

impl Drop for TwoHosts {
    fn drop(&mut self) {
        // Deleting a namespace deletes the veth end in it, and so the pair.
        for ns in [&self.server_ns, &self.client_ns] {
            let _ = run("ip", &["netns", "del", ns]);
        }
    }
}

/// Deletes namespaces `bcns-<pid>-…` whose test process is gone.
fn remove_stale() {
    let out = run("ip", &["netns", "list"]);
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let name = line.split_whitespace().next().unwrap_or("");
        let pid = name.strip_prefix("bcns-").and_then(|r| r.split('-').next()).and_then(|p| p.parse::<u32>().ok());
        if pid.is_some_and(|p| !process_alive(p)) {
            let _ = run("ip", &["netns", "del", name]);
        }
    }
}

/// The server's CPU (the first this process may use) and the clients' (the last).
fn cpus() -> (CpuList, String) {
    let all = util::all_cpus();
    let (first, last) = (all.cpus()[0], *all.cpus().last().unwrap());
    (first.to_string().parse().unwrap(), last.to_string())
}

/// The folder of the binaries to run: `BENCH_BIN_DIR` (`make two-hosts`
/// sets it to the release build), else this test's own build.
fn bin_dir() -> Option<PathBuf> {
    std::env::var_os("BENCH_BIN_DIR").map(PathBuf::from)
}

/// The `bench-client` to run.
fn client_binary() -> PathBuf {
    bin_dir().map_or_else(|| PathBuf::from(CLIENT), |d| d.join("bench-client"))
}

/// server-axum in the server namespace, bound to its veth address.
fn server(hosts: &TwoHosts, cpus: &CpuList) -> ServerProcess {
    let ip = which("ip");
    let binary = bin_dir().map_or_else(|| util::server_binary("axum"), |d| d.join("server-axum")).display().to_string();
    let addr = format!("{}:0", hosts.server_ip);
    let args = ["netns", "exec", &hosts.server_ns, &binary, "--addr", &addr, "--workers", "1"].map(str::to_owned);
    let server = ServerProcess::start(&ip, &args, cpus).unwrap();
    loopback_only(server.addr.ip()).unwrap();
    server
}

fn which(name: &str) -> PathBuf {
    for dir in ["/usr/sbin", "/sbin", "/usr/bin", "/bin"] {
        let p = Path::new(dir).join(name);
        if p.is_file() {
            return p;
        }
    }
    panic!("{name} not found")
}

/// A `bench-client` started in namespace `ns`, output in `<out>.stdout|stderr`.
struct InNs(util::Guarded, PathBuf);

impl InNs {
    fn spawn(ns: &str, dir: &Path, name: &str, args: &[String]) -> Self {
        let out = dir.join(name);
        let file = |ext: &str| std::fs::File::create(out.with_extension(ext)).unwrap();
        let mut command = Command::new("ip");
        command.args(["netns", "exec", ns]).arg(client_binary()).args(args).current_dir(dir);
        command.stdin(Stdio::null()).stdout(file("stdout")).stderr(file("stderr"));
        Self(util::Guarded::spawn(&mut command), out)
    }

    fn finish(mut self) -> Output {
        let end = Instant::now() + DEADLINE;
        let status = loop {
            if let Some(s) = self.0.0.try_wait().unwrap() {
                break s;
            }
            assert!(Instant::now() < end, "{} still running: killed", self.1.display());
            std::thread::sleep(Duration::from_millis(20));
        };
        let read = |ext: &str| std::fs::read(self.1.with_extension(ext)).unwrap_or_default();
        Output { status, stdout: read("stdout"), stderr: read("stderr") }
    }
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| (*s).to_owned()).collect()
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))).unwrap()
}

/// One measured run across the link: `clients` clients in the client
/// namespace, `watch` in the server's, merged; the merged report.
fn across(hosts: &TwoHosts, server: &ServerProcess, route: &str, clients: u32, timing: &[&str], dir: &Path) -> Value {
    let url = format!("http://{}{route}", server.addr);
    let target: SocketAddr = server.addr;
    loopback_only(target.ip()).unwrap();
    let (_, client_cpu) = cpus();
    let at = unix_ms_now() + LEAD_MS;
    let at = format!("{}.{:03}", at / 1000, at % 1000);
    let mut running = Vec::new();
    for i in 0..clients {
        let mut args = strings(&["load", &url, "--connections", "16", "--start-at", &at, "--cpus", &client_cpu]);
        args.extend(strings(timing));
        args.extend(strings(&["--clients", &clients.to_string(), "--segment", &i.to_string()]));
        args.extend(strings(&["--label", &format!("client-{i}"), "--json", &format!("c{i}.json")]));
        running.push(InNs::spawn(&hosts.client_ns, dir, &format!("c{i}"), &args));
    }
    let mut watch =
        strings(&["watch", "--pid", &server.pid().to_string(), "--start-at", &at, "--label", "server-host"]);
    watch.extend(strings(timing));
    watch.extend(strings(&["--json", "s.json"]));
    running.push(InNs::spawn(&hosts.server_ns, dir, "s", &watch));
    for r in running {
        let out = r.finish();
        assert!(out.status.success(), "{}", text(&out));
    }
    let mut merge: Vec<String> = (0..clients).map(|i| format!("c{i}.json")).collect();
    merge.splice(0..0, strings(&["merge"]));
    merge.extend(strings(&["--server", "s.json", "--json", "m.json"]));
    let out = util::output_within(Command::new(client_binary()).current_dir(dir).args(&merge), DEADLINE);
    assert!(out.status.success(), "{}", text(&out));
    json(&dir.join("m.json"))
}

/// µs of server CPU per successful request of a merged report.
fn server_us_per_request(m: &Value) -> f64 {
    let cpu = m["server_cpu_percent"].as_f64().unwrap_or(0.0) / 100.0;
    cpu * m["duration_s"].as_f64().unwrap() * 1e6 / m["successful"].as_f64().unwrap().max(1.0)
}

#[test]
fn load_watch_and_merge_across_two_namespaces_joined_by_a_veth_pair() {
    let _exclusive = util::exclusive();
    let hosts = match TwoHosts::new("a", 1) {
        Ok(h) => h,
        Err(reason) => return println!("skipped: two hosts in network namespaces ({reason})"),
    };
    let names = (hosts.server_ns.clone(), hosts.client_if.clone());
    {
        let dir = util::temp_dir("two-hosts");
        let (server_cpus, _) = cpus();
        let server = server(&hosts, &server_cpus);
        assert_eq!(server.addr.ip(), IpAddr::V4(hosts.server_ip));
        // Not reachable from this (the root) namespace: 127/8 is local here.
        assert!(std::net::TcpStream::connect_timeout(&server.addr, Duration::from_millis(500)).is_err());
        let m =
            across(&hosts, &server, "/api/devices", 2, &["--warmup", "1s", "--duration", "2s", "--window", "1s"], &dir);
        assert!(m["successful"].as_u64().unwrap() > 0 && m["failed_total"] == 0, "{m}");
        assert_eq!(m["merge"]["clients"].as_array().unwrap().len(), 2);
        assert_eq!(
            m["server_cpu_percent_windows"].as_array().unwrap().len(),
            2,
            "watch's windows, from the server's namespace"
        );
        assert_eq!(m["merge"]["server"]["label"], "server-host");
        assert!(m["merge"]["start_spread_ms"].as_u64().unwrap() < 100, "{}", m["merge"]);
        println!(
            "two hosts: {:.0} requests/s, {:.2} µs of server CPU per request",
            m["requests_per_s"].as_f64().unwrap(),
            server_us_per_request(&m)
        );
    }
    drop(hosts);
    let listed = String::from_utf8_lossy(&run("ip", &["netns", "list"]).stdout).into_owned();
    assert!(!listed.contains(&names.0), "namespace left: {listed}");
    let links = String::from_utf8_lossy(&run("ip", &["-br", "link"]).stdout).into_owned();
    assert!(!links.contains(&names.1), "link left: {links}");
}

/// A classic-BPF program for `tc … bpf da`: drops a packet with probability
/// `p` (load a random number; below p·2³² → TC_ACT_SHOT, else TC_ACT_OK).
fn random_drop(p: f64) -> String {
    let k = (p * 4_294_967_296.0) as u64;
    format!("4,32 0 0 4294963256,53 0 1 {k},6 0 0 0,6 0 0 2")
}

#[test]
#[ignore = "about 40 s: run by `make two-hosts`"]
fn a_shaped_link_limits_the_rate_but_not_the_server_cpu_per_request() {
    let _exclusive = util::exclusive();
    let hosts = match TwoHosts::new("b", 2) {
        Ok(h) => h,
        Err(reason) => return println!("skipped: two hosts in network namespaces ({reason})"),
    };
    let secs = std::env::var("TWO_HOSTS_DURATION_S").ok().and_then(|s| s.parse::<u32>().ok()).unwrap_or(3);
    let duration = format!("{secs}s");
    let timing = ["--warmup", "1s", "--duration", duration.as_str(), "--window", "1s"];
    let dir = util::temp_dir("two-hosts-shaped");
    let (server_cpus, _) = cpus();
    let server = server(&hosts, &server_cpus);
    let routes = ["/api/devices", "/api/devices/preserialized"];
    let mut table = Vec::new();
    let measure = |link: &str, table: &mut Vec<String>| -> Vec<Value> {
        let mut merged = Vec::new();
        for route in routes {
            let (rx, retrans) = (hosts.client_rx_bytes(), hosts.client_tcp("RetransSegs"));
            let mut m = across(&hosts, &server, route, 1, &timing, &dir);
            let wire = (hosts.client_rx_bytes() - rx) as f64;
            let settled = m["warmup_completed"].as_f64().unwrap() + m["successful"].as_f64().unwrap();
            m["wire_bytes_per_response"] = (wire / settled.max(1.0)).into();
            m["retransmitted_segments"] = (hosts.client_tcp("RetransSegs") - retrans).into();
            table.push(format!(
                "{link:<22} {route:<28} {:>9.0}/s {:>8.2} µs  p99 {:>7} µs  p99.9 {:>7} µs  failed {}  retransmitted {}",
                m["requests_per_s"].as_f64().unwrap(),
                server_us_per_request(&m),
                m["latency_us"]["p99"],
                m["latency_us"]["p999"],
                m["failed_total"],
                m["retransmitted_segments"],
            ));
            merged.push(m);
        }
        merged
    };
    let free = measure("veth, unshaped", &mut table);
    // Rate: tbf on both ends.
    hosts
        .tc_both(&["qdisc", "add", "dev", "DEV", "root", "tbf", "rate", "8mbit", "burst", "80kb", "latency", "50ms"])
        .unwrap();
    let slow = measure("tbf 8mbit both ways", &mut table);
    hosts.unshape();
    for (f, s) in free.iter().zip(&slow) {
        let (fr, sr) = (f["requests_per_s"].as_f64().unwrap(), s["requests_per_s"].as_f64().unwrap());
        let mbit = sr * f["wire_bytes_per_response"].as_f64().unwrap() * 8.0 / 1e6;
        assert!(mbit <= 8.8, "{mbit:.2} Mbit/s through an 8 Mbit/s link");
        assert!(
            mbit >= 5.6 && sr < fr,
            "the link is the limit: {mbit:.2} Mbit/s, {sr:.0}/s against {fr:.0}/s unshaped"
        );
        assert_eq!(s["failed_total"], 0, "{s}");
    }
    // Loss: 1 % of packets dropped at random on both ends.
    hosts.tc_both(&["qdisc", "add", "dev", "DEV", "clsact"]).unwrap();
    hosts.tc_both(&["filter", "add", "dev", "DEV", "egress", "bpf", "da", "bytecode", &random_drop(0.01)]).unwrap();
    let lossy = measure("1 % loss both ways", &mut table);
    hosts.unshape();
    for m in &lossy {
        assert_eq!(m["failed_total"], 0, "TCP recovers every loss: {m}");
        assert!(m["retransmitted_segments"].as_u64().unwrap() > 0, "{m}");
    }
    // Delay: netem, where the kernel has it.
    match hosts.tc_both(&["qdisc", "add", "dev", "DEV", "root", "netem", "delay", "5ms"]) {
        Ok(()) => {
            let delayed = measure("netem 5 ms each way", &mut table);
            hosts.unshape();
            for m in &delayed {
                assert!(m["latency_us"]["p50"].as_u64().unwrap() >= 10_000, "{m}");
            }
        }
        Err(e) => println!("skipped: netem ({})", e.lines().last().unwrap_or("").trim()),
    }
    println!("{:<22} {:<28} {:>11} {:>11}", "link", "route", "requests", "server CPU/request");
    for row in &table {
        println!("{row}");
    }
    let delta = |ms: &[Value], f: &dyn Fn(&Value) -> f64| (f(&ms[1]) / f(&ms[0]) - 1.0) * 100.0;
    let rate = |m: &Value| m["requests_per_s"].as_f64().unwrap();
    for (link, ms) in [("unshaped", &free), ("tbf 8mbit", &slow), ("1 % loss", &lossy)] {
        println!(
            "preserialized vs per request, {link:<10}: requests/s {:+.1} %, µs of server CPU per request {:+.1} %",
            delta(ms, &rate),
            delta(ms, &server_us_per_request)
        );
    }
}
