#!/usr/bin/env bash
# Is the load client faster than the server it measures? Compares
# `bench-client load` with wrk against the same server, side by side:
# server pinned to CPU 0 (1 worker), each client pinned to CPU 1, 64
# connections, PAIRS alternating pairs per framework and route (order
# flipped every pair), then prints medians of the rates and of the client
# CPU time per 1,000 successful requests, and the ratios.
#
# Usage: bench/client-vs-wrk.sh [PAIRS=3] [DURATION_S=5]
# Needs: wrk (installed with apt-get when missing), taskset, the release build.
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-3}
duration_s=${2:-5}
connections=64
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk; }
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

printf '%-7s %-12s %12s %12s %7s %16s %16s %7s\n' framework route "wrk req/s" "client req/s" ratio "wrk cpu ms/1k" "client cpu ms/1k" ratio
for framework in actix axum rocket; do
  taskset -c 0 "target/release/server-$framework" --workers 1 > "$tmp/server.out" &
  server_pid=$!
  for _ in $(seq 50); do grep -q listening "$tmp/server.out" 2>/dev/null && break; sleep 0.1; done
  addr=$(sed -n 's|listening on http://||p' "$tmp/server.out")
  for route in /plaintext /api/devices; do
    : > "$tmp/wrk"; : > "$tmp/client"
    for pair in $(seq "$pairs"); do
      for who in wrk client; do
        # Alternate which client goes first.
        if [ $((pair % 2)) -eq 0 ]; then who=$([ "$who" = wrk ] && echo client || echo wrk); fi
        children_cpu_s > "$tmp/before"
        if [ "$who" = wrk ]; then
          rate=$(taskset -c 1 wrk -t1 -c$connections -d${duration_s}s "http://$addr$route" | awk '/Requests\/sec/ { print $2 }')
          count=$(awk -v r="$rate" -v d="$duration_s" 'BEGIN { print r * d }')
        else
          taskset -c 1 "$client" load "http://$addr$route" --connections $connections \
            --duration ${duration_s}s --warmup 1s --json "$tmp/load.json" > /dev/null
          rate=$(sed -n 's/.*"requests_per_s": \([0-9.]*\).*/\1/p' "$tmp/load.json")
          count=$(sed -n 's/.*"sent": \([0-9]*\).*/\1/p' "$tmp/load.json")
        fi
        children_cpu_s > "$tmp/after"
        cpu=$(awk -v a="$(cat "$tmp/before")" -v b="$(cat "$tmp/after")" -v n="$count" 'BEGIN { print (b - a) * 1e6 / n }')
        echo "$rate $cpu" >> "$tmp/$who"
      done
    done
    wrk_rate=$(cut -d' ' -f1 "$tmp/wrk" | median); client_rate=$(cut -d' ' -f1 "$tmp/client" | median)
    wrk_cpu=$(cut -d' ' -f2 "$tmp/wrk" | median); client_cpu=$(cut -d' ' -f2 "$tmp/client" | median)
    awk -v f="$framework" -v r="$route" -v wr="$wrk_rate" -v cr="$client_rate" -v wc="$wrk_cpu" -v cc="$client_cpu" \
      'BEGIN { printf "%-7s %-12s %12.0f %12.0f %6.2fx %16.3f %16.3f %6.2fx\n", f, r, wr, cr, cr / wr, wc, cc, cc / wc }'
  done
  kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=
done
echo "(medians of $pairs alternating pairs, ${duration_s} s each; CPU per 1,000 requests sent, warm-up included for the client)"
