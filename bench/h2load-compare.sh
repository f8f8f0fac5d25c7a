#!/usr/bin/env bash
# HTTP/2's rate and cost, the client against h2load (nghttp2) on the same
# pinned server (issue 46, item 3): each framework's server pinned to CPU 0
# (1 worker, h2c on its plain listener and h2 by ALPN on its TLS one, a
# certificate generated at its start), each client pinned to CPU 1,
# GET /plaintext at 64 connections x 1 stream and 8 connections x 16 streams,
# over h2c and over TLS, PAIRS rounds with the order of the two clients
# swapped every round, no warm-up for either. Prints, per framework,
# transport and shape, the medians of the successful requests per second and
# of each client's CPU time (user + system) per 1,000 successful requests,
# with their ratios (client/h2load): the issue asks for at least 1.0x the
# rate at no more CPU per request. Counted as in bench/client-vs-wrk.sh
# (bench/lib/count.sh: h2load_counts, client_counts).
#
# Usage: [FRAMEWORKS="actix axum rocket"] [PROFILE=release|debug] [NO_BUILD=1] \
#          bench/h2load-compare.sh [OUT] [PAIRS=3] [DURATION_S=5]
# (PROFILE=debug NO_BUILD=1 with CARGO_TARGET_DIR set runs what a test build left, to check the
# script itself: such figures measure nothing.)
# Needs: h2load (nghttp2-client, installed when missing), taskset, python3, the build (made here).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib/server.sh
. bench/lib/server.sh
rounds_args h2load "$@"
command -v h2load >/dev/null || { apt-get update -qq && apt-get install -y -qq nghttp2-client; }
build_profile
scratch

# The run of client $1 on $url at $connections x $streams (trusting any
# certificate: $trust), and its counts (for rounds, bench/lib/count.sh).
run_one() {
  case $1 in
    h2load) taskset -c 1 h2load -t 1 -c "$connections" -m "$streams" -D "$duration_s" "$url" \
              > "$tmp/h2load.out" 2>&1 ;;
    client) rm -f "$tmp/load.json"
            taskset -c 1 "$client" load "$url" --http2 --streams "$streams" --connections "$connections" \
              "${trust[@]}" --duration "${duration_s}s" --warmup 0s --json "$tmp/load.json" > /dev/null 2> "$tmp/client.err" ;;
  esac
}
count_one() { if [ "$1" = h2load ]; then h2load_counts "$tmp/h2load.out"; else client_counts "$tmp/load.json"; fi; }

{
  printf '%-7s %-4s %-5s %11s %11s %8s %12s %10s %8s  %s\n' \
    framework via shape "h2load r/s" "client" "c/h2load" "h2load ms/1k" "client" "c/h2load" errors
  for framework in ${FRAMEWORKS:-actix axum rocket}; do
    taskset -c 0 "$bin/server-$framework" --workers 1 --addr 127.0.0.1:0 --tls-addr 127.0.0.1:0 > "$tmp/server.out" &
    server_pid=$!
    for _ in $(seq 50); do [ "$(grep -c listening "$tmp/server.out" 2>/dev/null)" -ge 2 ] && break; sleep 0.1; done
    plain=$(sed -n 's|listening on http://||p' "$tmp/server.out")
    tls=$(sed -n 's|listening on https://||p' "$tmp/server.out")
    for via in h2c tls; do
      if [ "$via" = h2c ]; then url="http://$plain/plaintext"; trust=(); else url="https://$tls/plaintext"; trust=(--insecure); fi
      for shape in 64x1 8x16; do
        connections=${shape%x*}; streams=${shape#*x}
        rounds "$pairs" "$tmp" h2load client
        errors=$(errors_line "$tmp" h2load client)
        awk -v f="$framework" -v via="$via" -v shape="$shape" -v hr="$(cat "$tmp/h2load.rate")" \
          -v cr="$(cat "$tmp/client.rate")" -v hc="$(cat "$tmp/h2load.cpu")" -v cc="$(cat "$tmp/client.cpu")" \
          -v errors="$errors" '
          function num(x, w, p) { return x == "-" ? sprintf("%" w "s", "-") : sprintf("%" w "." p "f", x) }
          function ratio(a, b) { return (a == "-" || b == "-" || b == 0) ? sprintf("%8s", "-") : sprintf("%7.2fx", a / b) }
          BEGIN {
            printf "%-7s %-4s %-5s %s %s %s %s %s %s  %s\n", f, via, shape, num(hr, 11, 0), num(cr, 11, 0), ratio(cr, hr),
                   num(hc, 12, 3), num(cc, 10, 3), ratio(cc, hc), errors == "" ? "-" : "ERRORS " errors
          }'
      done
    done
    stop_server
  done
  echo "(medians of $pairs rounds, ${duration_s} s each, no warm-up, GET /plaintext over HTTP/2, connections x streams"
  echo " per connection; successful (status 200) requests per second; CPU = user + system time of the client process"
  echo " per 1,000 successful requests, ms; $profile build)"
} | tee "$out/h2load-compare.txt"
echo "results: $out"
