#!/usr/bin/env bash
# Does the client's memory stay flat under many connections? Runs
# `bench-client load` with 4096 connections for DURATION_S seconds against
# the client's built-in canned responder (CPU 0; client on CPU 1) and prints
# the client's resident set size (VmRSS, /proc) every 10 s, then the run's
# summary with its peak RSS. Latency lives in per-thread HDR histograms,
# so memory must not grow with the number of requests.
#
# Usage: bench/memory-4096.sh [DURATION_S=60]
set -euo pipefail
cd "$(dirname "$0")/.."
duration_s=${1:-60}
cargo build --locked --release -q -p bench-client
client=target/release/bench-client
. bench/lib/responder.sh "$client"
"$client" load "http://$addr/plaintext" --connections 4096 --warmup 1s --duration "${duration_s}s" \
  --window 10s --cpus 1 > "$tmp/load.out" &
load_pid=$!
sleep 1
printf '%8s %12s\n' "t (s)" "VmRSS (KiB)"
for t in $(seq 0 10 "$duration_s"); do
  kb=$(awk '/VmRSS/ { print $2 }' "/proc/$load_pid/status" 2>/dev/null || echo "-")
  printf '%8s %12s\n' "$t" "$kb"
  [ "$t" -lt "$duration_s" ] && sleep 10
done
wait "$load_pid" || true
cat "$tmp/load.out"
