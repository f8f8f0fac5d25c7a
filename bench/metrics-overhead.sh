#!/usr/bin/env bash
# Does serving live metrics slow the client down? Runs `bench-client load`
# against server-axum /plaintext (release, 1 worker, CPU 0; the client on
# CPU 1) in ROUNDS paired rounds: each round one run without
# --metrics-addr and one with it, scraped every second by curl (as
# Prometheus would), in alternating order. Prints both rates per round,
# their paired differences, and whether the mean difference is within the
# noise: the 95 % interval of the paired differences (t distribution)
# against the round-to-round spread of the unscraped runs.
#
# The engine publishes its counters on its timer (at most every 50 ms, the
# latency buckets once per window), never per request, and the metrics
# thread only reads atomics when scraped; this script is the measurement
# that shows it. Run it on a quiet machine.
#
# Usage: bench/metrics-overhead.sh [ROUNDS=6] [DURATION_S=5] [CONNECTIONS=64]
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib/count.sh
. bench/lib/count.sh
rounds=${1:-6}
duration_s=${2:-5}
connections=${3:-64}
target_dir=${CARGO_TARGET_DIR:-target}
cargo build --locked --release -q -p bench-client -p server-axum
client=$target_dir/release/bench-client
server=$target_dir/release/server-axum
tmp=$(mktemp -d)
server_pid=
scraper_pid=
cleanup() {
  [ -n "$scraper_pid" ] && kill "$scraper_pid" 2>/dev/null
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null
  wait 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
taskset -c 0 "$server" --addr 127.0.0.1:0 --workers 1 > "$tmp/server.out" &
server_pid=$!
for _ in $(seq 100); do grep -q listening "$tmp/server.out" 2>/dev/null && break; sleep 0.1; done
url="$(sed -n 's|listening on ||p' "$tmp/server.out")/plaintext"

# One run; prints its successful requests per second. $1: plain|scraped.
run() {
  local json="$tmp/$1.json" metrics=()
  if [ "$1" = scraped ]; then
    metrics=(--metrics-addr 127.0.0.1:0)
  fi
  "$client" load "$url" --connections "$connections" --warmup 1s --duration "${duration_s}s" --cpus 1 \
    --server-pid "$server_pid" --json "$json" "${metrics[@]}" > "$tmp/$1.out" 2> "$tmp/$1.err" &
  local load_pid=$!
  if [ "$1" = scraped ]; then
    for _ in $(seq 100); do grep -q "metrics on" "$tmp/$1.err" 2>/dev/null && break; sleep 0.05; done
    local murl
    murl=$(sed -n 's|metrics on ||p' "$tmp/$1.err")
    # The scraper on the client's CPU, as a sidecar Prometheus would not be:
    # the harder case for the client.
    (while kill -0 "$load_pid" 2>/dev/null; do
       taskset -c 1 curl -s -o /dev/null "$murl" || true
       sleep 1
     done) &
    scraper_pid=$!
  fi
  local status=0
  wait "$load_pid" || status=$?
  if [ -n "$scraper_pid" ]; then
    kill "$scraper_pid" 2>/dev/null || true
    wait "$scraper_pid" 2>/dev/null || true
    scraper_pid=
  fi
  # Flagged as client_run flags it: a failure of any kind, an incomplete run, no success, an exit status not 0.
  read -r _ _ detail <<< "$(client_run "$json" "$status")"
  [ "$detail" = - ] || { echo "error: run failed: $detail" >&2; exit 1; }
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["requests_per_s"])' "$json"
}

printf '%6s %14s %14s %9s\n' round "plain req/s" "scraped req/s" "diff %"
: > "$tmp/pairs"
for r in $(seq "$rounds"); do
  if [ $((r % 2)) -eq 1 ]; then
    plain=$(run plain); scraped=$(run scraped)
  else
    scraped=$(run scraped); plain=$(run plain)
  fi
  echo "$plain $scraped" >> "$tmp/pairs"
  awk -v r="$r" -v p="$plain" -v s="$scraped" 'BEGIN { printf "%6d %14.0f %14.0f %+8.2f%%\n", r, p, s, (s / p - 1) * 100 }'
done

python3 - "$tmp/pairs" <<'EOF'
import math, statistics, sys
pairs = [tuple(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
plain = [p for p, _ in pairs]
diffs = [(s / p - 1) * 100 for p, s in pairs]
n = len(diffs)
# Two-sided 95 % t quantiles for n - 1 degrees of freedom.
t95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262,
       10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 19: 2.093, 24: 2.064, 29: 2.045}
mean = statistics.mean(diffs)
if n < 2:
    print(f"mean difference {mean:+.2f} % (one round: no interval)")
    sys.exit(0)
sd = statistics.stdev(diffs)
t = t95.get(n - 1, 1.96 if n > 30 else t95[max(k for k in t95 if k <= n - 1)])
half = t * sd / math.sqrt(n)
noise = statistics.stdev(plain) / statistics.mean(plain) * 100
print(f"scraped vs plain: {mean:+.2f} % [{mean - half:+.2f} … {mean + half:+.2f}] (95 % CI, {n} paired rounds)")
print(f"noise: round-to-round CV of the plain runs {noise:.2f} %, SD of the paired differences {sd:.2f} %")
if mean - half <= 0 <= mean + half:
    print(f"verdict: no measurable cost (the interval contains 0; |mean| {abs(mean):.2f} % vs noise {noise:.2f} %)")
elif abs(mean) < noise:
    print(f"verdict: a difference below the noise (|mean| {abs(mean):.2f} % < CV {noise:.2f} %)")
else:
    print(f"verdict: scraping costs {-mean:.2f} % of the rate, more than the noise ({noise:.2f} %)")
EOF
