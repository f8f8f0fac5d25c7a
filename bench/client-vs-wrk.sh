#!/usr/bin/env bash
# Is the load client faster than the server it measures? Compares
# `bench-client load` with wrk and oha against the same server, side by
# side: server pinned to CPU 0 (1 worker), each client pinned to CPU 1, 64
# connections, no warm-up for any of them (each run pays its own connection
# set-up), PAIRS rounds per framework and route with the order of the three
# clients rotated every round. Prints medians of the successful requests per
# second and of each client's CPU time (user + system, from bash's `times`)
# per 1,000 successful requests, and the ratios client/wrk and client/oha.
# The last row loads the client's built-in canned responder (what
# `bench-client calibrate` uses) instead of a framework: there the server
# is cheaper than any of the clients, so the row compares the clients' own
# ceilings.
#
# Successful means status 200 for every tool (bench-client also checks the
# body): wrk's counts come from bench/lib/wrk-count.lua (a response() that
# counts 200s per thread, summed in done()), oha's from its JSON
# statusCodeDistribution["200"] (run with --redirect 0, as neither wrk nor
# bench-client follows redirects), bench-client's from `successful` in its
# JSON. A run with non-200 responses, socket errors, timeouts, oha errors,
# failed requests or connections, or no 200 at all is flagged in the
# table's last column with its counts. The parsing lives in
# bench/lib/count.sh and is tested by bench/test-counting.sh.
#
# Usage: bench/client-vs-wrk.sh [PAIRS=3] [DURATION_S=5]
# Needs: wrk (apt-get) and oha (cargo install, a few minutes once) — both
# installed when missing — taskset, python3, and the release build (built
# here).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib/server.sh
. bench/lib/server.sh
pairs=${1:-3}
duration_s=${2:-5}
connections=64
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk; }
export PATH="$HOME/.cargo/bin:$PATH"
command -v oha >/dev/null || cargo install --locked oha
build_servers --release
client=target/release/bench-client
scratch

# One run of client $1 on $url (for rounds, bench/lib/count.sh); its output
# goes to $tmp. Returns the tool's exit status (bench-client exits 1 after a
# run with failures, with its JSON written).
run_one() {
  case $1 in
    wrk)
      rm -f "$tmp/wrk.out"
      taskset -c 1 wrk -t1 -c$connections -d"${duration_s}s" -s bench/lib/wrk-count.lua "$url" > "$tmp/wrk.out" ;;
    client)
      rm -f "$tmp/load.json"
      taskset -c 1 "$client" load "$url" --connections $connections --duration "${duration_s}s" --warmup 0s \
        --json "$tmp/load.json" > /dev/null ;;
    oha)
      rm -f "$tmp/oha.json"
      taskset -c 1 oha -z "${duration_s}s" -c $connections --redirect 0 --no-tui --output-format json "$url" \
        > "$tmp/oha.json" ;;
  esac
}

# "SUCCESSFUL RATE DETAIL" of the run of client $1 that just ended
# (bench/lib/count.sh); an output that cannot be counted fails, its reason
# on stderr (rounds then counts "0 - unreadable=1").
count_one() {
  case $1 in
    wrk) wrk_counts "$tmp/wrk.out" ;;
    client) client_counts "$tmp/load.json" ;;
    oha) oha_counts "$tmp/oha.json" "$connections" ;;
  esac
}

printf '%-7s %-12s %11s %11s %11s %7s %7s %10s %10s %10s %7s  %s\n' framework route "wrk req/s" "oha req/s" \
  "client" "c/wrk" "c/oha" "wrk ms/1k" "oha ms/1k" "client" "c/wrk" "errors"
for framework in actix axum rocket responder; do
  if [ "$framework" = responder ]; then
    taskset -c 0 "$client" responder > "$tmp/server.out" &
    routes=/plaintext
  else
    taskset -c 0 "target/release/server-$framework" --workers 1 > "$tmp/server.out" &
    routes="/plaintext /api/devices"
  fi
  server_pid=$!
  for _ in $(seq 50); do grep -q listening "$tmp/server.out" 2>/dev/null && break; sleep 0.1; done
  addr=$(sed -n 's|listening on http://||p' "$tmp/server.out")
  for route in $routes; do
    url="http://$addr$route"
    # Rounds of the order wrk client oha, client oha wrk, oha wrk client, ...
    rounds "$pairs" "$tmp" wrk client oha
    errors=$(errors_line "$tmp" wrk oha client)
    awk -v f="$framework" -v r="$route" -v wr="$(cat "$tmp/wrk.rate")" -v orr="$(cat "$tmp/oha.rate")" \
      -v cr="$(cat "$tmp/client.rate")" -v wc="$(cat "$tmp/wrk.cpu")" -v oc="$(cat "$tmp/oha.cpu")" \
      -v cc="$(cat "$tmp/client.cpu")" -v errors="$errors" '
      function num(x, w, p) { return x == "-" ? sprintf("%" w "s", "-") : sprintf("%" w "." p "f", x) }
      function ratio(a, b) { return (a == "-" || b == "-" || b == 0) ? sprintf("%7s", "-") : sprintf("%6.2fx", a / b) }
      BEGIN {
        printf "%-7s %-12s %s %s %s %s %s %s %s %s %s  %s\n", f, r, num(wr, 11, 0), num(orr, 11, 0), num(cr, 11, 0),
               ratio(cr, wr), ratio(cr, orr), num(wc, 10, 3), num(oc, 10, 3), num(cc, 10, 3), ratio(cc, wc),
               errors == "" ? "-" : "ERRORS " errors
      }'
  done
  stop_server
done
echo "(medians of $pairs rotated rounds, ${duration_s} s each, no warm-up; successful (status 200) requests per second;"
echo " CPU = user + system time of the client process per 1,000 successful requests, ms; errors: runs with"
echo " errors out of all, and their counts summed: non200, socket errors, oha errors, client failures by kind)"
