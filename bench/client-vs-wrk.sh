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
# Usage: bench/client-vs-wrk.sh [PAIRS=3] [DURATION_S=5]
# Needs: wrk (apt-get) and oha (cargo install, a few minutes once) — both
# installed when missing — taskset, and the release build (built here).
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-3}
duration_s=${2:-5}
connections=64
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk; }
export PATH="$HOME/.cargo/bin:$PATH"
command -v oha >/dev/null || cargo install --locked oha
cargo build --locked --release -q -p bench-client -p server-actix -p server-axum -p server-rocket
client=target/release/bench-client
tmp=$(mktemp -d)
server_pid=
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT

# Children's user+sys CPU seconds so far, from bash's `times` (which must
# run in this shell, not in a command substitution's subshell).
children_cpu_s() {
  times > "$tmp/times"
  tail -1 "$tmp/times" | awk '{ for (i = 1; i <= 2; i++) { split($i, a, "m"); s += a[1] * 60 + a[2] } print s }'
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# One run of client $1 on URL $2: writes "successful_requests rate_per_s" to $tmp/run.
run_one() {
  local who=$1 url=$2
  case $who in
    wrk)
      taskset -c 1 wrk -t1 -c$connections -d${duration_s}s "$url" > "$tmp/wrk.out"
      # "N requests in Xs"; non-2xx answers would be listed apart (there are none here).
      awk '/requests in/ { n = $1 } /Requests\/sec/ { r = $2 } /Non-2xx/ { bad = $4 } END { print n - bad, r }' \
        "$tmp/wrk.out" > "$tmp/run" ;;
    client)
      taskset -c 1 "$client" load "$url" --connections $connections --duration ${duration_s}s --warmup 0s \
        --json "$tmp/load.json" > /dev/null
      python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["successful"], r["requests_per_s"])' \
        "$tmp/load.json" > "$tmp/run" ;;
    oha)
      taskset -c 1 oha -z ${duration_s}s -c $connections --no-tui --output-format json "$url" > "$tmp/oha.json"
      python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); n=r["statusCodeDistribution"].get("200",0); print(n, n/r["summary"]["total"])' \
        "$tmp/oha.json" > "$tmp/run" ;;
  esac
}

printf '%-7s %-12s %11s %11s %11s %7s %7s %10s %10s %10s %7s\n' framework route "wrk req/s" "oha req/s" \
  "client" "c/wrk" "c/oha" "wrk ms/1k" "oha ms/1k" "client" "c/wrk"
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
    : > "$tmp/wrk"; : > "$tmp/client"; : > "$tmp/oha"
    for pair in $(seq "$pairs"); do
      case $((pair % 3)) in
        1) order="wrk client oha" ;;
        2) order="client oha wrk" ;;
        0) order="oha wrk client" ;;
      esac
      for who in $order; do
        children_cpu_s > "$tmp/before"
        run_one "$who" "http://$addr$route"
        children_cpu_s > "$tmp/after"
        read -r count rate < "$tmp/run"
        cpu=$(awk -v a="$(cat "$tmp/before")" -v b="$(cat "$tmp/after")" -v n="$count" 'BEGIN { print (b - a) * 1e6 / n }')
        echo "$rate $cpu" >> "$tmp/$who"
      done
    done
    for who in wrk client oha; do
      cut -d' ' -f1 "$tmp/$who" | median > "$tmp/$who.rate"
      cut -d' ' -f2 "$tmp/$who" | median > "$tmp/$who.cpu"
    done
    awk -v f="$framework" -v r="$route" -v wr="$(cat "$tmp/wrk.rate")" -v orr="$(cat "$tmp/oha.rate")" \
      -v cr="$(cat "$tmp/client.rate")" -v wc="$(cat "$tmp/wrk.cpu")" -v oc="$(cat "$tmp/oha.cpu")" \
      -v cc="$(cat "$tmp/client.cpu")" \
      'BEGIN { printf "%-7s %-12s %11.0f %11.0f %11.0f %6.2fx %6.2fx %10.3f %10.3f %10.3f %6.2fx\n",
               f, r, wr, orr, cr, cr / wr, cr / orr, wc, oc, cc, cc / wc }'
  done
  kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=
done
echo "(medians of $pairs rotated rounds, ${duration_s} s each, no warm-up; successful requests per second;"
echo " CPU = user + system time of the client process per 1,000 successful requests, ms)"
