#!/usr/bin/env bash
# The blocking scenario in both modes, one session each, back to back
# (release, `make bench`'s other defaults): at saturation (closed loop), and
# in the open loop at 25 % and at 50 % of the baseline's closed-loop rate.
# Prints each session's delta table and latency table, and copies each
# results.json (gzipped) to OUT, by default a new temporary folder.
#
# Usage: bench/blocking.sh [OUT]
# Needs nothing running beside it (a build or a test would be measured too).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-$(mktemp -d /tmp/blocking.XXXXXX)}
mkdir -p "$out"
cargo build --locked --release -q -p bench-client -p server-actix -p server-axum -p server-rocket
for mode in saturated 25 50; do
  flags=()
  [ "$mode" = saturated ] || flags=(--load-percent "$mode")
  runs=$(mktemp -d /tmp/blocking-runs.XXXXXX)
  start=$(date +%s)
  target/release/bench-client suite --no-build --scenarios blocking "${flags[@]}" --out "$runs" \
    > "$out/$mode.log" 2>&1 || echo "$mode: the suite exited $? (see $out/$mode.log)"
  echo "$mode: $(($(date +%s) - start)) s" >> "$out/wall.txt"
  gzip -c "$runs"/latest/results.json > "$out/$mode.results.json.gz"
  rm -rf "$runs"
  echo "== $mode"
  grep '^| \(framework\|actix\|axum\|rocket\) |' "$out/$mode.log" | grep -v 'µs |.*µs |.*µs |$' || true
done
echo "results: $out"
