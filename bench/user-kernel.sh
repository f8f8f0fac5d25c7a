#!/usr/bin/env bash
# Why an instruction count can rank two frameworks opposite to their time:
# where a request's server CPU goes, per framework, user space against the
# kernel, and how many system calls it makes.
#
# 1. Timed, under load: each framework's server pinned to CPU 0 (1 worker),
#    the client pinned to CPU 1, 64 keep-alive connections on ROUTE for
#    DURATION_S, REPEATS times per framework, the frameworks in turn. Over
#    each run: the server's user and system CPU time (/proc/PID/stat, utime
#    and stime) and its system calls and context switches (perf stat's
#    software events raw_syscalls:sys_enter and context-switches on the
#    server's pid), each divided by the run's successful requests.
# 2. Counted, one request at a time: each server under callgrind with
#    --separate-threads=yes, N then 2N requests on one connection, and the
#    same on 64 connections (many requests ready at each wake-up, as under
#    load); per thread, the instructions per request of the 2N, and
#    callgrind's simulated cache misses (first-level data, last-level).
#
# Usage: bench/user-kernel.sh [OUT] [REPEATS=5] [DURATION_S=5] [ROUTE=/plaintext] [N=2000]
# Needs: perf (linux-perf), valgrind, taskset, python3, the release build
# (built here). Prints one line per framework and repeat, then the medians;
# the raw lines go to OUT/timed.txt and OUT/counted.txt, the medians to OUT/medians.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-$(mktemp -d /tmp/user-kernel.XXXXXX)}
repeats=${2:-5}
duration_s=${3:-5}
route=${4:-/plaintext}
n=${5:-2000}
frameworks=${FRAMEWORKS:-actix axum rocket}
mkdir -p "$out"
for tool in perf valgrind taskset python3; do
  command -v "$tool" >/dev/null || { echo "user-kernel.sh: $tool is missing (bench/prereqs.sh names the package)" >&2; exit 2; }
done
# shellcheck source=bench/lib/server.sh
. bench/lib/server.sh
build_servers --release
client=target/release/bench-client
scratch
trap 'exit 130' INT

# Starts "$@" on CPU 0 with its output in $tmp/server.out; sets server_pid and url.
start() {
  : > "$tmp/server.out"
  taskset -c 0 "$@" --addr 127.0.0.1:0 --workers 1 > "$tmp/server.out" 2>&1 &
  server_pid=$!
  for _ in $(seq 600); do grep -q 'listening on' "$tmp/server.out" && break; sleep 0.1; done
  url="$(sed -n 's|.*listening on \(http://[^ ]*\).*|\1|p' "$tmp/server.out" | head -1)"
  [ -n "$url" ] || { echo "user-kernel.sh: the server did not say where it listens: $(cat "$tmp/server.out")" >&2; exit 1; }
}
stop() { kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null || true; server_pid=; }
# utime and stime of the server, in clock ticks.
ticks() { awk '{ print $14, $15 }' "/proc/$server_pid/stat"; }

hz=$(getconf CLK_TCK)
: > "$out/timed.txt"
for repeat in $(seq "$repeats"); do
  for framework in $frameworks; do
    start "target/release/server-$framework"
    # Warm the server up: a second of load, not measured.
    taskset -c 1 "$client" load "$url$route" --connections 64 --duration 1s --warmup 0s > /dev/null
    read -r u0 s0 < <(ticks)
    perf stat -x, -e raw_syscalls:sys_enter,context-switches -p "$server_pid" -o "$tmp/perf.csv" &
    perf_pid=$!
    sleep 0.2
    rm -f "$tmp/load.json"
    taskset -c 1 "$client" load "$url$route" --connections 64 --duration "${duration_s}s" --warmup 0s \
      --json "$tmp/load.json" > /dev/null
    read -r u1 s1 < <(ticks)
    kill -INT "$perf_pid"; wait "$perf_pid" 2>/dev/null || true
    stop
    python3 - "$tmp/load.json" "$tmp/perf.csv" "$framework" "$repeat" "$hz" "$u0" "$s0" "$u1" "$s1" >> "$out/timed.txt" <<'EOF'
import json, sys
load, perf, framework, repeat, hz = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
u0, s0, u1, s1 = map(int, sys.argv[6:10])
ok = json.load(open(load))["successful"]
events = {}
for line in open(perf):
    cells = line.strip().split(",")
    if len(cells) > 2 and cells[0].replace(".", "").isdigit():
        events[cells[2]] = float(cells[0])
per = lambda ticks: ticks / hz / ok * 1e6
print(f"{framework} {repeat} successful={ok} user_us={per(u1 - u0):.3f} system_us={per(s1 - s0):.3f} "
      f"syscalls={events.get('raw_syscalls:sys_enter', 0) / ok:.3f} "
      f"context_switches={events.get('context-switches', 0) / ok:.4f}")
EOF
    tail -1 "$out/timed.txt"
  done
done

# One callgrind dump after N requests and one after 2N more: per thread, the slope.
: > "$out/counted.txt"
for connections in 1 64; do
for framework in $frameworks; do
  rm -f "$tmp"/callgrind.out.*
  start valgrind --tool=callgrind --separate-threads=yes --cache-sim=yes --dump-instr=no "--callgrind-out-file=$tmp/callgrind.out.%p" \
    "target/release/server-$framework"
  "$client" load "$url$route" --connections "$connections" --requests "$n" --warmup 0s > /dev/null
  callgrind_control --dump=first "$server_pid" > /dev/null
  "$client" load "$url$route" --connections "$connections" --requests $((2 * n)) --warmup 0s > /dev/null
  callgrind_control --dump=second "$server_pid" > /dev/null
  stop
  python3 - "$framework" "$n" "$tmp" "$connections" >> "$out/counted.txt" <<'EOF'
import glob, re, sys
framework, n, tmp, connections = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
# Each dump file holds one thread's instructions since the previous dump ("summary:" or "totals:").
by_thread = {}
for path in glob.glob(f"{tmp}/callgrind.out.*"):
    text = open(path).read()
    part = re.search(r"^part: *(\d+)", text, re.M)
    thread = re.search(r"^thread: *(\d+)", text, re.M)
    events = re.search(r"^events: *(.+)$", text, re.M)
    total = re.search(r"^(?:summary|totals): *(.+)$", text, re.M)
    if part and thread and events and total:
        counts = dict(zip(events.group(1).split(), map(int, total.group(1).split())))
        by_thread.setdefault(int(thread.group(1)), {})[int(part.group(1))] = counts
cells = []
for thread in sorted(by_thread):
    parts = by_thread[thread]
    # Part 2 is the 2N requests after the first dump: its instructions over 2N.
    c = parts.get(2)
    if c and c.get("Ir"):
        # Instructions, then first-level data cache misses and last-level misses (simulated).
        d1 = c.get("D1mr", 0) + c.get("D1mw", 0)
        ll = c.get("ILmr", 0) + c.get("DLmr", 0) + c.get("DLmw", 0)
        cells.append(f"thread{thread}={c['Ir'] / (2 * n):.0f} d1_misses={d1 / (2 * n):.1f} ll_misses={ll / (2 * n):.1f}")
print(framework, f"connections={connections}", "instructions_per_request", " ".join(cells))
EOF
  tail -1 "$out/counted.txt"
done
done

echo "medians over $repeats repeats (per successful request):" | tee "$out/medians.txt"
python3 - "$out/timed.txt" <<'EOF' | tee -a "$out/medians.txt"
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    cells = line.split()
    f = cells[0]
    values = dict(c.split("=") for c in cells[2:])
    for k, v in values.items():
        rows.setdefault(f, {}).setdefault(k, []).append(float(v))
for f, values in rows.items():
    m = {k: statistics.median(v) for k, v in values.items()}
    print(f"{f:7} user {m['user_us']:.2f} µs  system {m['system_us']:.2f} µs  "
          f"syscalls {m['syscalls']:.2f}  context switches {m['context_switches']:.3f}")
EOF
