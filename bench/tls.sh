#!/usr/bin/env bash
# What HTTPS costs per request, per framework, and whether the client keeps
# up over TLS. Two parts, back to back, nothing else running:
#
# 1. The client against wrk over TLS: each framework's server pinned to
#    CPU 0 (1 worker, `--tls`, a certificate generated at its start), each
#    client pinned to CPU 1, 64 keep-alive connections, `/plaintext`, PAIRS
#    rounds with the order of the two clients swapped every round, no
#    warm-up for either. Medians of the successful requests per second and
#    of each client's CPU time (user + system) per 1,000 successful
#    requests, and their ratios (client/wrk). Counted as in
#    bench/client-vs-wrk.sh (bench/lib/count.sh).
# 2. The `tls` scenario (`/plaintext` over HTTP and over TLS on the same
#    server process, alternated in slices), `make bench`'s other defaults,
#    one session per mode: keep-alive; a new connection for every request
#    with sessions resumed (`resumed`), and without resumption, every
#    handshake full (`full`), both with the servers' defaults; and the same
#    two with the servers started with --tcp-nodelay (`resumed-nodelay`,
#    `full-nodelay`). Each session's delta table and In proportion table are
#    printed, and its results.json copied (gzipped) to OUT.
#
# Usage: [MODES="keep-alive resumed …"] [WRK=0] bench/tls.sh [OUT] [PAIRS=3] [DURATION_S=5]
# (MODES: the sessions to run, all five by default; WRK=0 skips part 1.)
# Needs: wrk (installed when missing), taskset, python3, the release build
# (built here).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib/server.sh
. bench/lib/server.sh
rounds_args tls "$@"
connections=64
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk; }
build_servers --release
client=target/release/bench-client
scratch

# Part 1: the run of client $1 on $url, and its counts (for rounds, bench/lib/count.sh).
run_one() {
  case $1 in
    wrk) taskset -c 1 wrk -t1 -c$connections -d"${duration_s}s" -s bench/lib/wrk-count.lua "$url" > "$tmp/wrk.out" ;;
    client) rm -f "$tmp/load.json"
            taskset -c 1 "$client" load "$url" --insecure --connections $connections \
              --duration "${duration_s}s" --warmup 0s --json "$tmp/load.json" > /dev/null ;;
  esac
}
count_one() { if [ "$1" = wrk ]; then wrk_counts "$tmp/wrk.out"; else client_counts "$tmp/load.json"; fi; }

modes=${MODES:-keep-alive resumed full resumed-nodelay full-nodelay}
[ "${WRK:-1}" = 0 ] || {
  printf '%-7s %11s %11s %7s %10s %10s %7s  %s\n' framework "wrk req/s" "client" "c/wrk" "wrk ms/1k" "client" "c/wrk" errors
  for framework in actix axum rocket; do
    taskset -c 0 "target/release/server-$framework" --workers 1 --tls > "$tmp/server.out" &
    server_pid=$!
    for _ in $(seq 50); do grep -q listening "$tmp/server.out" 2>/dev/null && break; sleep 0.1; done
    url="https://$(sed -n 's|listening on https://||p' "$tmp/server.out")/plaintext"
    rounds "$pairs" "$tmp" wrk client
    errors=$(errors_line "$tmp" wrk client)
    awk -v f="$framework" -v wr="$(cat "$tmp/wrk.rate")" -v cr="$(cat "$tmp/client.rate")" \
      -v wc="$(cat "$tmp/wrk.cpu")" -v cc="$(cat "$tmp/client.cpu")" -v errors="$errors" '
      function num(x, w, p) { return x == "-" ? sprintf("%" w "s", "-") : sprintf("%" w "." p "f", x) }
      function ratio(a, b) { return (a == "-" || b == "-" || b == 0) ? sprintf("%7s", "-") : sprintf("%6.2fx", a / b) }
      BEGIN {
        printf "%-7s %s %s %s %s %s %s  %s\n", f, num(wr, 11, 0), num(cr, 11, 0), ratio(cr, wr), num(wc, 10, 3),
               num(cc, 10, 3), ratio(cc, wc), errors == "" ? "-" : "ERRORS " errors
      }'
    stop_server
  done
  echo "(medians of $pairs rounds, ${duration_s} s each, no warm-up, GET /plaintext over TLS, $connections keep-alive"
  echo " connections; successful (status 200) requests per second; CPU = user + system time of the client process"
  echo " per 1,000 successful requests, ms)"
} | tee "$out/client-vs-wrk.txt"

for mode in $modes; do
  flags=()
  case $mode in
    keep-alive) ;;
    resumed) flags=(--requests-per-connection 1 --tls-resumption on) ;;
    full) flags=(--requests-per-connection 1 --tls-resumption off) ;;
    resumed-nodelay) flags=(--requests-per-connection 1 --tls-resumption on --tcp-nodelay) ;;
    full-nodelay) flags=(--requests-per-connection 1 --tls-resumption off --tcp-nodelay) ;;
    *) echo "unknown mode $mode" >&2; exit 2 ;;
  esac
  runs=$(mktemp -d /tmp/tls-runs.XXXXXX)
  start=$(date +%s)
  "$client" suite --no-build --scenarios tls "${flags[@]}" --out "$runs" > "$out/$mode.log" 2>&1 ||
    echo "$mode: the suite exited $? (see $out/$mode.log)"
  echo "$mode: $(($(date +%s) - start)) s" >> "$out/wall.txt"
  gzip -c "$runs"/latest/results.json > "$out/$mode.results.json.gz"
  rm -rf "$runs"
  echo "== $mode"
  grep '^| \(framework\|actix\|axum\|rocket\) |' "$out/$mode.log" || true
done
echo "results: $out"
