#!/usr/bin/env bash
# What perf costs each server, measured inside one server process: perf is
# attached once with its events disabled (`perf record -D -1 --control
# fifo:…`) and switched on and off every PHASE_S seconds while one
# bench-client load runs, so each process's rate with perf is set against
# its own rate without it, and the layout a process drew (which moves rates
# by ±15 % between processes here: bench/profiler-cost.sh) cancels.
#
# Every run starts the framework's server anew (the `profiling` build,
# pinned to CPU 0, one worker), perf pinned to CPU 1 beside the client and
# started as the suite starts it (`-k monotonic`, `-m 4096`, nice 19). The
# phases go off, on, on, off, off, on, … (so a drift cancels); each
# toggle's time is taken when perf acknowledges it, and a window of the
# load's (WINDOW_MS, 50 ms) counts only when it lies whole inside one phase.
# Many short phases (20 cycles of 0.25 s) average the VM's swings of rate
# over seconds: 4 cycles of 1 s over 3 processes resolve only ±10 to ±35 %
# here (bench/runs/2026-12-01-profiler-cost/toggle). Per run: the mean rate
# of its "on" windows over that of its "off" windows. Per framework and
# candidate: the geometric mean over the runs with a 95 % t interval over
# them (each run a process, so the interval holds the process term), and the
# median perf CPU (% of a CPU). `--analyse` pools the runs of several
# sessions as one sample: it adds no term for the session.
#
# The first "off" phase, before the first toggle, is not counted (its start
# is the load's, not a mark of perf's), so CYCLES cycles count 2·CYCLES − 1
# "off" phases against 2·CYCLES "on" ones: a drift over the run cancels to
# within one phase in 2·CYCLES; with CYCLES=1 nothing is left off.
#
# Candidates are NAME=CALLGRAPH@HZ:DIR ("disk": TMPDIR or /tmp, "shm": /dev/shm).
# Usage: [CANDIDATES="…"] [FRAMEWORKS="actix axum rocket"] [WINDOW_MS=50]
#        bench/profiler-toggle.sh [OUT] [RUNS=8] [CYCLES=20] [PHASE_S=0.25] [ROUTE=/plaintext]
#        bench/profiler-toggle.sh --analyse RUNS_TSV... (the summary again, over
#        the runs of one or more sessions together)
# Needs: perf (linux-perf) 5.10 or newer (--control), taskset, python3.
set -euo pipefail
# summarise RUNS_TSV...: per framework and candidate, over every run of the files.
summarise() {
  python3 - "$@" <<'PY'
import csv, math, statistics, sys
from collections import defaultdict
rows = [r for path in sys.argv[1:] for r in csv.DictReader(open(path), delimiter="\t")]
t975 = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31, 9: 2.26, 10: 2.23, 11: 2.20,
        12: 2.18, 13: 2.16, 14: 2.14, 15: 2.13, 16: 2.12, 17: 2.11, 18: 2.10, 19: 2.09, 20: 2.09}
by = defaultdict(list)
for r in rows:
    by[(r["framework"], r["candidate"])].append(r)
pct = lambda x: 100 * (math.exp(x) - 1)
print(f"{'framework':9} {'candidate':20} {'off req/s':>10} {'on req/s':>10} {'perf on against off (95 %)':>30} {'perf CPU':>9} {'runs':>5}  failures")
for (f, c), runs in by.items():
    logs = [math.log(float(r["on_per_s"]) / float(r["off_per_s"])) for r in runs
            if float(r["on_per_s"]) > 0 and float(r["off_per_s"]) > 0]
    if not logs:
        print(f"{f:9} {c:20} no run with windows both on and off (more CYCLES)")
        continue
    m = statistics.mean(logs)
    h = t975.get(len(logs) - 1, 2.09) * statistics.stdev(logs) / math.sqrt(len(logs)) if len(logs) > 1 else float("nan")
    failures = sorted({r["detail"] for r in runs if r["detail"] != "-"})
    print(f"{f:9} {c:20} {statistics.median(float(r['off_per_s']) for r in runs):10.0f} "
          f"{statistics.median(float(r['on_per_s']) for r in runs):10.0f} "
          f"{f'{pct(m):+.1f} % [{pct(m - h):+.1f} … {pct(m + h):+.1f}]':>30} "
          f"{100 * statistics.median(float(r['perf_cpu']) for r in runs):8.1f}% {len(logs):>5}  {', '.join(failures) or '-'}")
print(f"(from {len(sys.argv) - 1} file(s), their runs pooled; each run a new server process on CPU 0,"
      " perf (nice 19) and the client on CPU 1; the interval is a t interval over the runs)")
PY
}

if [ "${1:-}" = --analyse ]; then
  shift
  [ $# -ge 1 ] || { echo "usage: $0 --analyse RUNS_TSV..." >&2; exit 2; }
  summarise "$@"
  exit 0
fi
cd "$(dirname "$0")/.."
out=${1:-$(mktemp -d /tmp/profiler-toggle.XXXXXX)}
runs=${2:-8}
cycles=${3:-20}
phase_s=${4:-0.25}
window_ms=${WINDOW_MS:-50}
route=${5:-/plaintext}
mkdir -p "$out"
# shellcheck source=bench/lib/profiled.sh
. bench/lib/profiled.sh
# shellcheck source=bench/lib/count.sh
. bench/lib/count.sh
build_profiled
client=target/release/bench-client
candidates=${CANDIDATES:-dwarf64k-249-disk=dwarf,65528@249:disk dwarf64k-999-disk=dwarf,65528@999:disk}
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
duration_ms=$(awk -v p="$phases" -v s="$phase_s" -v w="$window_ms" 'BEGIN { d = p * s * 1000 + 1000; print w * int((d + w - 1) / w) }')

printf 'run\tframework\tcandidate\ton_per_s\toff_per_s\ton_windows\toff_windows\tperf_cpu\tdetail\n' > "$out/runs.tsv"
for run in $(seq "$runs"); do
  for framework in $frameworks; do
    for i in "${!candidates[@]}"; do
      start_candidate "$i" "$run" "$framework"
      exec 3<> "$tmp/ctl" 4<> "$tmp/ack"
      nice -n 19 taskset -c 1 perf record -e cpu-clock -k monotonic --call-graph "$call_graph" -F "$freq" -m 4096 -D -1 \
        --control "fifo:$tmp/ctl,$tmp/ack" -p "$server_pid" -o "$dir/perf.data" > /dev/null 2> "$tmp/perf.err" &
      perf_pid=$!
      sleep 0.3
      rm -f "$tmp/load.json"
      taskset -c 1 "$client" load "$url" --connections 64 --warmup 1s --duration "${duration_ms}ms" --window "${window_ms}ms" \
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
      status=0
      wait "$load_pid" || status=$?
      load_pid=
      perf_s=$(awk -v t="$(ticks "$perf_pid")" -v hz="$hz" 'BEGIN { print t / hz }')
      kill -INT "$perf_pid"; wait "$perf_pid" 2>/dev/null || true; perf_pid=
      exec 3>&- 4>&-
      rm -f "$dir/perf.data"
      kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=
      # Flagged as client_run flags it: a failure of any kind, an incomplete run, no success, an exit status not 0.
      read -r _ _ detail <<< "$(client_run "$tmp/load.json" "$status")"
      python3 - "$tmp/load.json" "$tmp/toggles" "$run" "$framework" "$name" "$perf_s" "$phase_s" "$detail" \
        >> "$out/runs.tsv" <<'PY'
import json, sys
path, toggles, run, framework, name, perf_s, phase_s, detail = sys.argv[1:]
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
print(f"{run}\t{framework}\t{name}\t{mean(rates['on']):.1f}\t{mean(rates['off']):.1f}\t{len(rates['on'])}\t"
      f"{len(rates['off'])}\t{float(perf_s) / on_s if on_s else 0:.4f}\t{detail}")
PY
      tail -1 "$out/runs.tsv" >&2
    done
  done
done

summarise "$out/runs.tsv" | tee "$out/summary.txt"
echo "(GET $route, 64 connections, perf switched every $phase_s s, $cycles cycles, windows of $window_ms ms whole inside a phase)" \
  | tee -a "$out/summary.txt"
echo "results: $out"
