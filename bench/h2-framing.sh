#!/usr/bin/env bash
# Why the engine frames HTTP/2 itself (issue 46, item 2): the engine's own
# framing on its mio loop against the `h2` crate on a tokio runtime of one
# thread (bench-client's example h2_crate_load, which reads and checks every
# body as the engine does), on the same pinned server: each framework's
# server pinned to CPU 0 (1 worker, h2c on its plain listener), each client
# pinned to CPU 1, GET /plaintext at 64 connections x 1 stream and
# 8 connections x 16 streams, PAIRS rounds with the two clients' order
# swapped every round, no warm-up for either. Prints, per framework and
# shape, the medians of the successful requests per second and of each
# client's CPU time (user + system) per 1,000 successful requests, with their
# ratios (engine/h2 crate). Counted as in bench/h2load-compare.sh
# (bench/lib/count.sh: h2crate_counts, client_counts).
#
# Usage: [FRAMEWORKS="actix axum rocket"] [PROFILE=release|debug] [NO_BUILD=1] \
#          bench/h2-framing.sh [OUT] [PAIRS=3] [DURATION_S=5]
# Needs: taskset, python3, the build (made here: the servers, bench-client and its example).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib/server.sh
. bench/lib/server.sh
rounds_args h2-framing "$@"
build_profile -q -p bench-client --example h2_crate_load
h2crate=$bin/examples/h2_crate_load
scratch

# The run of client $1 on $url at $connections x $streams, and its counts (for
# rounds, bench/lib/count.sh).
run_one() {
  case $1 in
    h2crate) taskset -c 1 "$h2crate" "$url" "$connections" "$streams" "$duration_s" \
               > "$tmp/h2crate.out" 2> "$tmp/h2crate.err" ;;
    engine) rm -f "$tmp/load.json"
            taskset -c 1 "$client" load "$url" --http2 --streams "$streams" --connections "$connections" \
              --duration "${duration_s}s" --warmup 0s --json "$tmp/load.json" > /dev/null 2> "$tmp/client.err" ;;
  esac
}
count_one() { if [ "$1" = h2crate ]; then h2crate_counts "$tmp/h2crate.out"; else client_counts "$tmp/load.json"; fi; }

{
  printf '%-7s %-5s %11s %11s %9s %12s %10s %9s  %s\n' \
    framework shape "h2 crate r/s" "engine" "e/h2crate" "h2 crate ms/1k" "engine" "e/h2crate" errors
  for framework in ${FRAMEWORKS:-actix axum rocket}; do
    taskset -c 0 "$bin/server-$framework" --workers 1 --addr 127.0.0.1:0 > "$tmp/server.out" &
    server_pid=$!
    for _ in $(seq 50); do grep -q listening "$tmp/server.out" 2>/dev/null && break; sleep 0.1; done
    url="http://$(sed -n 's|listening on http://||p' "$tmp/server.out")/plaintext"
    for shape in 64x1 8x16; do
      connections=${shape%x*}; streams=${shape#*x}
      rounds "$pairs" "$tmp" h2crate engine
      errors=$(errors_line "$tmp" h2crate engine)
      awk -v f="$framework" -v shape="$shape" -v hr="$(cat "$tmp/h2crate.rate")" \
        -v er="$(cat "$tmp/engine.rate")" -v hc="$(cat "$tmp/h2crate.cpu")" -v ec="$(cat "$tmp/engine.cpu")" \
        -v errors="$errors" '
        function num(x, w, p) { return x == "-" ? sprintf("%" w "s", "-") : sprintf("%" w "." p "f", x) }
        function ratio(a, b) { return (a == "-" || b == "-" || b == 0) ? sprintf("%9s", "-") : sprintf("%8.2fx", a / b) }
        BEGIN {
          printf "%-7s %-5s %s %s %s %s %s %s  %s\n", f, shape, num(hr, 12, 0), num(er, 11, 0), ratio(er, hr),
                 num(hc, 14, 3), num(ec, 10, 3), ratio(ec, hc), errors == "" ? "-" : "ERRORS " errors
        }'
    done
    stop_server
  done
  echo "(medians of $pairs rounds, ${duration_s} s each, no warm-up, GET /plaintext over h2c, connections x streams"
  echo " per connection; successful requests (status 200, body checked) per second; CPU = user + system time of"
  echo " the client process per 1,000 successful requests, ms; $profile build)"
} | tee "$out/h2-framing.txt"
echo "results: $out"
