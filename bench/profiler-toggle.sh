#!/usr/bin/env bash
# What perf costs each server, measured inside one server process: perf is
# attached once with its events disabled (`perf record -D -1 --control
# fifo:…`) and switched on and off every PHASE_S seconds while one
# bench-client load runs, so each process's rate with perf is set against
# its own rate without it, and the layout a process drew (which moves rates
# by ±15 % between processes here: bench/profiler-cost.sh) cancels.
#
# Every run starts the framework's server anew (the `profiling` build,
# pinned to CPU 0, one worker), perf pinned to CPU 1 beside the client as
# the suite's perf is. The phases go off, on, on, off, off, on, … (so a
# drift cancels); each toggle's time is taken when perf acknowledges it,
# and a window of the load's (250 ms) counts only when it lies whole inside
# one phase. Per run: the mean rate of its "on" windows over that of its
# "off" windows. Per framework and candidate: the geometric mean over the
# runs with a 95 % t interval over them (each run a process, so the
# interval holds the process term), and the median perf CPU (% of a CPU).
#
# The first "off" phase, before the first toggle, is not counted (its start
# is the load's, not a mark of perf's): with CYCLES=1 nothing is left off.
#
# Candidates are NAME=CALLGRAPH@HZ:DIR ("disk": TMPDIR or /tmp, "shm": /dev/shm).
# Usage: [CANDIDATES="…"] [FRAMEWORKS="actix axum rocket"]
#        bench/profiler-toggle.sh [OUT] [RUNS=3] [CYCLES=4] [PHASE_S=1] [ROUTE=/plaintext]
# Needs: perf (linux-perf) 5.10 or newer (--control), taskset, python3.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-$(mktemp -d /tmp/profiler-toggle.XXXXXX)}
runs=${2:-3}
cycles=${3:-4}
phase_s=${4:-1}
route=${5:-/plaintext}
mkdir -p "$out"
# shellcheck source=bench/lib/profiled.sh
. bench/lib/profiled.sh
build_profiled
client=target/release/bench-client
candidates=${CANDIDATES:-dwarf64k-999-disk=dwarf,65528@999:disk dwarf64k-249-disk=dwarf,65528@249:disk \
fp-999-disk=fp@999:disk}
read -r -a candidates <<< "$candidates"
frameworks=${FRAMEWORKS:-actix axum rocket}
tmp=$(mktemp -d)
shm=$(mktemp -d /dev/shm/profiler-toggle.XXXXXX)
server_pid= perf_pid= load_pid=
cleanup() {
  [ -n "$load_pid" ] && kill "$load_pid" 2>/dev/null
  [ -n "$perf_pid" ] && kill -INT "$perf_pid" 2>/dev/null
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null
  wait 2>/dev/null; rm -rf "$tmp" "$shm"
}
trap cleanup EXIT
trap 'exit 130' INT
mkfifo "$tmp/ctl" "$tmp/ack"
hz=$(getconf CLK_TCK)
phases=$((cycles * 2))
duration_s=$(awk -v p="$phases" -v s="$phase_s" 'BEGIN { print p * s + 1 }')

printf 'run\tframework\tcandidate\ton_per_s\toff_per_s\ton_windows\toff_windows\tperf_cpu\tdetail\n' > "$out/runs.tsv"
n=${#candidates[@]}
for run in $(seq "$runs"); do
  for framework in $frameworks; do
    for i in $(seq 0 $((n - 1))); do
      candidate=${candidates[$(((i + run) % n))]}
      parse_candidate "$candidate" "$shm"
      start_server "$framework" "$tmp/server.out"
      exec 3<> "$tmp/ctl" 4<> "$tmp/ack"
      taskset -c 1 perf record -e cpu-clock --call-graph "$call_graph" -F "$freq" -D -1 \
        --control "fifo:$tmp/ctl,$tmp/ack" -p "$server_pid" -o "$dir/perf.data" > /dev/null 2> "$tmp/perf.err" &
      perf_pid=$!
      sleep 0.3
      rm -f "$tmp/load.json"
      taskset -c 1 "$client" load "$url" --connections 64 --warmup 1s --duration "${duration_s}s" --window 250ms \
        --json "$tmp/load.json" > /dev/null 2>&1 &
      load_pid=$!
      sleep 1.5
      : > "$tmp/toggles"
      state=off
      perf_ticks=0
      for k in $(seq 0 $((phases - 1))); do
        # off on on off, off on on off, …
        case $((k % 4)) in 0 | 3) want=off ;; *) want=on ;; esac
        if [ "$want" != "$state" ]; then
          before=$(ticks "$perf_pid")
          [ "$want" = on ] && echo enable >&3 || echo disable >&3
          read -r -t 5 -u 4 _ack || echo "no ack from perf" >&2
          echo "$(date +%s%N) $want" >> "$tmp/toggles"
          state=$want
        fi
        sleep "$phase_s"
      done
      echo "$(date +%s%N) end" >> "$tmp/toggles"
      wait "$load_pid" || true; load_pid=
      perf_s=$(awk -v t="$(ticks "$perf_pid")" -v hz="$hz" 'BEGIN { print t / hz }')
      kill -INT "$perf_pid"; wait "$perf_pid" 2>/dev/null || true; perf_pid=
      exec 3>&- 4>&-
      rm -f "$dir/perf.data"
      kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=
      python3 - "$tmp/load.json" "$tmp/toggles" "$run" "$framework" "$name" "$perf_s" "$phase_s" >> "$out/runs.tsv" <<'PY'
import json, sys
path, toggles, run, framework, name, perf_s, phase_s = sys.argv[1:]
r = json.load(open(path))
w_ms = float(r["window_s"]) * 1e3
start = float(r["measure_start_unix_ms"])
marks = [(int(t) / 1e6, s) for t, s in (line.split() for line in open(toggles))]
segments = [(marks[i][0], marks[i + 1][0], marks[i][1]) for i in range(len(marks) - 1)]
rates = {"on": [], "off": []}
for i, n in enumerate(r["windows"]):
    a, b = start + i * w_ms, start + (i + 1) * w_ms
    for lo, hi, s in segments:
        if lo <= a and b <= hi and s in rates:
            rates[s].append(n / (w_ms / 1e3))
mean = lambda v: sum(v) / len(v) if v else 0.0
on_s = sum(hi - lo for lo, hi, s in segments if s == "on") / 1e3
detail = "-" if int(r["failed_total"]) == 0 else f"failed={r['failed_total']}"
print(f"{run}\t{framework}\t{name}\t{mean(rates['on']):.1f}\t{mean(rates['off']):.1f}\t{len(rates['on'])}\t"
      f"{len(rates['off'])}\t{float(perf_s) / on_s if on_s else 0:.4f}\t{detail}")
PY
      tail -1 "$out/runs.tsv" >&2
    done
  done
done

python3 - "$out/runs.tsv" "$route" "$phase_s" "$cycles" <<'PY' | tee "$out/summary.txt"
import csv, math, statistics, sys
from collections import defaultdict
path, route, phase_s, cycles = sys.argv[1:]
rows = list(csv.DictReader(open(path), delimiter="\t"))
t975 = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31, 9: 2.26}
by = defaultdict(list)
for r in rows:
    by[(r["framework"], r["candidate"])].append(r)
pct = lambda x: 100 * (math.exp(x) - 1)
print(f"{'framework':9} {'candidate':20} {'off req/s':>10} {'on req/s':>10} {'perf on against off (95 %)':>30} {'perf CPU':>9}  failures")
for (f, c), runs in by.items():
    logs = [math.log(float(r["on_per_s"]) / float(r["off_per_s"])) for r in runs
            if float(r["on_per_s"]) > 0 and float(r["off_per_s"]) > 0]
    if not logs:
        print(f"{f:9} {c:20} no run with windows both on and off (more CYCLES)")
        continue
    m = statistics.mean(logs)
    h = t975.get(len(logs) - 1, 1.96) * statistics.stdev(logs) / math.sqrt(len(logs)) if len(logs) > 1 else float("nan")
    failures = sorted({r["detail"] for r in runs if r["detail"] != "-"})
    print(f"{f:9} {c:20} {statistics.median(float(r['off_per_s']) for r in runs):10.0f} "
          f"{statistics.median(float(r['on_per_s']) for r in runs):10.0f} "
          f"{f'{pct(m):+.1f} % [{pct(m - h):+.1f} … {pct(m + h):+.1f}]':>30} "
          f"{100 * statistics.median(float(r['perf_cpu']) for r in runs):8.1f}%  {', '.join(failures) or '-'}")
print(f"({len({r['run'] for r in rows})} runs per row, each a new server process on CPU 0; GET {route}, 64 connections;"
      f" perf switched every {phase_s} s, {cycles} cycles, windows of 250 ms whole inside a phase; perf and the client on CPU 1)")
PY
echo "results: $out"
