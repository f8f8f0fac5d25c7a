#!/usr/bin/env bash
# What attaching perf costs each server, per way of recording: the
# candidates of issue 28 measured side by side, nothing else running.
#
# Every run starts the framework's server anew (the `profiling` build,
# pinned to CPU 0, one worker, as the suite starts it), loads `ROUTE` with
# bench-client (pinned to CPU 1, 64 keep-alive connections, 1 s warm-up,
# DURATION_S measured) and, for a profiled run, attaches
# `perf record -e cpu-clock -p PID` before the load starts, pinned to CPU 1
# as the suite's perf is (it inherits the client's CPUs). Each round runs
# every candidate once, in an order rotated by one every round, so that the
# unprofiled run ("none") and each profiled one are paired by round. The
# summary gives, per framework and candidate:
#
#   rate        median successful requests per second
#   vs none     geometric mean over the rounds of rate / the round's "none"
#               rate, with a 95 % t interval over the rounds (on the logs)
#   server      median share of CPU 0 the server used during the load
#   perf CPU    median CPU perf record used (user + system), % of one CPU
#   kept        median share of the samples the server's CPU time gives at
#               the frequency that perf wrote (a lower share: samples lost)
#   MB/s        median perf.data written per second of the run
#
# Candidates are NAME=CALLGRAPH@HZ:DIR (DIR: where perf.data is written;
# "disk" is TMPDIR or /tmp, "shm" is /dev/shm), or "none".
#
# Usage: [CANDIDATES="none dwarf-shm=dwarf,65528@999:shm …"] [FRAMEWORKS="actix axum rocket"]
#        bench/profiler-cost.sh [OUT] [ROUNDS=4] [DURATION_S=3] [ROUTE=/plaintext]
# Needs: perf (linux-perf), taskset, python3, the profiling build of the
# servers and the release client (built here).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib/count.sh
. bench/lib/count.sh
out=${1:-$(mktemp -d /tmp/profiler-cost.XXXXXX)}
rounds=${2:-4}
duration_s=${3:-3}
route=${4:-/plaintext}
mkdir -p "$out"
# shellcheck source=bench/lib/profiled.sh
. bench/lib/profiled.sh
build_profiled
client=target/release/bench-client
candidates=${CANDIDATES:-none dwarf64k-999-disk=dwarf,65528@999:disk dwarf64k-999-shm=dwarf,65528@999:shm \
dwarf64k-249-shm=dwarf,65528@249:shm dwarf64k-99-shm=dwarf,65528@99:shm fp-999-disk=fp@999:disk}
read -r -a candidates <<< "$candidates"
frameworks=${FRAMEWORKS:-actix axum rocket}
tmp=$(mktemp -d)
shm=$(mktemp -d /dev/shm/profiler-cost.XXXXXX)
server_pid= perf_pid=
cleanup() {
  [ -n "$perf_pid" ] && kill -INT "$perf_pid" 2>/dev/null
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null
  wait 2>/dev/null; rm -rf "$tmp" "$shm"
}
trap cleanup EXIT
trap 'exit 130' INT

hz=$(getconf CLK_TCK)

runs="$out/runs.tsv"
printf 'round\tframework\tcandidate\trate_per_s\tdetail\tserver_busy\tperf_cpu\tsamples\texpected_samples\tmb\tseconds\n' > "$runs"
for round in $(seq "$rounds"); do
  for framework in $frameworks; do
    for i in "${!candidates[@]}"; do
      start_candidate "$i" "$round" "$framework"
      samples=0 expected=0 mb=0 perf_cpu=0
      if [ "$candidate" != none ]; then
        taskset -c 1 perf record -e cpu-clock --call-graph "$call_graph" -F "$freq" -p "$server_pid" \
          -o "$dir/perf.data" > /dev/null 2> "$tmp/perf.err" &
        perf_pid=$!
        sleep 0.2
      fi
      before=$(ticks "$server_pid"); start_ns=$(date +%s%N)
      rm -f "$tmp/load.json"
      taskset -c 1 "$client" load "$url" --connections 64 --warmup 1s --duration "${duration_s}s" \
        --json "$tmp/load.json" > /dev/null 2>&1 && status=0 || status=$?
      after=$(ticks "$server_pid"); seconds=$(awk -v a="$start_ns" -v b="$(date +%s%N)" 'BEGIN { print (b - a) / 1e9 }')
      if [ -n "$perf_pid" ]; then
        perf_ticks=$(ticks "$perf_pid")
        kill -INT "$perf_pid"; wait "$perf_pid" 2>/dev/null || true; perf_pid=
        perf_cpu=$(awk -v t="$perf_ticks" -v hz="$hz" -v s="$seconds" 'BEGIN { print t / hz / s }')
        read -r mb samples < <(sed -n 's/.*Captured and wrote \([0-9.]*\) MB .*(\([0-9]*\) samples).*/\1 \2/p' "$tmp/perf.err")
        rm -f "$dir/perf.data"
      fi
      busy=$(awk -v a="$before" -v b="$after" -v hz="$hz" -v s="$seconds" 'BEGIN { print (b - a) / hz / s }')
      expected=$(awk -v a="$before" -v b="$after" -v hz="$hz" -v f="$freq" 'BEGIN { print (b - a) / hz * f }')
      read -r _count rate detail <<< "$(client_run "$tmp/load.json" "$status")"
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$framework" "$name" "$rate" "$detail" \
        "$busy" "$perf_cpu" "${samples:-0}" "$expected" "${mb:-0}" "$seconds" >> "$runs"
      kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=
      echo "round $round $framework $name: $rate req/s, $detail" >&2
    done
  done
done

python3 - "$runs" "$route" "$duration_s" <<'PY' | tee "$out/summary.txt"
import csv, math, statistics, sys
from collections import defaultdict

path, route, duration_s = sys.argv[1:]
rows = list(csv.DictReader(open(path), delimiter="\t"))
t975 = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31, 9: 2.26}
by = defaultdict(dict)
for r in rows:
    by[(r["framework"], r["candidate"])][r["round"]] = r
frameworks = list(dict.fromkeys(r["framework"] for r in rows))
names = list(dict.fromkeys(r["candidate"] for r in rows))
print(f"{'framework':9} {'candidate':20} {'rate':>8} {'vs none (95 %)':>28} {'server':>7} {'perf CPU':>9} {'kept':>6} {'MB/s':>7}  failures")
for f in frameworks:
    base = by[(f, "none")]
    for c in names:
        runs = by[(f, c)]
        med = lambda k: statistics.median(float(r[k]) for r in runs.values())
        logs = [math.log(float(r["rate_per_s"]) / float(base[k]["rate_per_s"]))
                for k, r in runs.items() if k in base and float(r["rate_per_s"]) > 0 and float(base[k]["rate_per_s"]) > 0]
        if c == "none":
            vs = "-"
        elif len(logs) >= 2:
            m, h = statistics.mean(logs), t975.get(len(logs) - 1, 1.96) * statistics.stdev(logs) / math.sqrt(len(logs))
            pct = lambda x: 100 * (math.exp(x) - 1)
            vs = f"{pct(m):+.1f} % [{pct(m - h):+.1f} … {pct(m + h):+.1f}]"
        else:
            vs = "n/a"
        kept = [float(r["samples"]) / float(r["expected_samples"]) for r in runs.values() if float(r["expected_samples"]) > 0]
        mbps = [float(r["mb"]) / float(r["seconds"]) for r in runs.values()]
        failures = sorted({r["detail"] for r in runs.values() if r["detail"] != "-"})
        print(f"{f:9} {c:20} {med('rate_per_s'):8.0f} {vs:>28} {100 * med('server_busy'):6.1f}% "
              f"{100 * med('perf_cpu'):8.1f}% {(100 * statistics.median(kept)) if kept else 0:5.1f}% "
              f"{statistics.median(mbps):7.1f}  {', '.join(failures) or '-'}")
n = len({r['round'] for r in rows})
print(f"({n} rounds; each run a new server process on CPU 0, GET {route}, 64 connections, 1 s warm-up + {duration_s} s;"
      " perf and the client on CPU 1)")
PY
echo "results: $out"
