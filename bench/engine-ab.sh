#!/usr/bin/env bash
# Two builds of the load client side by side against the same pinned
# responder (the built-in canned /plaintext server `calibrate` uses, where
# the server is cheaper than any client, so the client's own cost shows):
# PAIRS pairs of DURATION_S runs, the order alternating, each client pinned
# to CPU 1, the responder to CPU 0. Prints the medians of successful
# requests per second and of the client's CPU per 1,000 successful requests
# for each binary, and their ratios.
#
# Usage: bench/engine-ab.sh OLD_CLIENT NEW_CLIENT [PAIRS=5] [DURATION_S=5]
# Needs nothing running beside it.
set -euo pipefail
old=$1 new=$2 pairs=${3:-5} duration_s=${4:-5}
tmp=$(mktemp -d)
responder_pid=
cleanup() { [ -n "$responder_pid" ] && kill "$responder_pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
taskset -c 0 "$new" responder > "$tmp/responder.out" &
responder_pid=$!
for _ in $(seq 50); do grep -q listening "$tmp/responder.out" 2>/dev/null && break; sleep 0.1; done
addr=$(sed -n 's|listening on http://||p' "$tmp/responder.out")
[ -n "$addr" ] || { echo "error: the responder did not start" >&2; exit 1; }
for pair in $(seq "$pairs"); do
  if [ $((pair % 2)) -eq 1 ]; then order="old new"; else order="new old"; fi
  for who in $order; do
    bin=$old; [ "$who" = new ] && bin=$new
    taskset -c 1 "$bin" load "http://$addr/plaintext" --connections 64 --duration "${duration_s}s" --warmup 1s \
      --json "$tmp/$who-$pair.json" > /dev/null
  done
done
python3 - "$tmp" "$pairs" <<'EOF'
import json, statistics, sys
tmp, pairs = sys.argv[1], int(sys.argv[2])
med = {}
for who in ("old", "new"):
    runs = [json.load(open(f"{tmp}/{who}-{p}.json")) for p in range(1, pairs + 1)]
    bad = [r for r in runs if r["failed_total"] or not r["complete"]]
    med[who] = (statistics.median(r["requests_per_s"] for r in runs),
                statistics.median(r["client_cpu_ms_per_1k"] for r in runs))
    print(f"{who}: {med[who][0]:10.0f} successful requests/s, {med[who][1]:.4f} ms of client CPU per 1,000"
          + (f"  ERRORS in {len(bad)} runs" if bad else ""))
print(f"new/old: rate {med['new'][0] / med['old'][0]:.3f}x, client CPU per request {med['new'][1] / med['old'][1]:.3f}x "
      f"(medians of {pairs} alternating pairs)")
EOF
