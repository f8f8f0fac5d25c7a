#!/usr/bin/env bash
# Precision per minute: the suite's two pairing methods side by side in one
# session, on every delta of `make bench`. REPEATS times, alternating which
# goes first, it runs the default suite (6 rounds of 3 s, 64 connections)
# with `--pairing rounds` (one run per variant, one pair per round) and with
# `--pairing slices` (variants alternating every 250 ms within one run per
# scenario, one pair per block of slices), and prints for each delta the
# width of its 95 % interval under each method, the wall time of each suite,
# and the client's CPU per 1,000 successful requests (what switching routes
# costs the engine).
#
# Usage: bench/pairing-precision.sh [REPEATS=3]
# Needs nothing running beside it (a build or a test would be measured too).
set -euo pipefail
cd "$(dirname "$0")/.."
repeats=${1:-3}
out=$(mktemp -d /tmp/pairing-precision.XXXXXX)
cargo build --locked --release -q -p bench-client
cargo build --locked --release -q -p server-actix -p server-axum -p server-rocket
client=target/release/bench-client

for i in $(seq "$repeats"); do
  if [ $((i % 2)) -eq 1 ]; then order="rounds slices"; else order="slices rounds"; fi
  for pairing in $order; do
    start=$(date +%s)
    "$client" suite --no-build --pairing "$pairing" --out "$out/$pairing-$i" > /dev/null 2> "$out/$pairing-$i.log"
    echo "$pairing $i $(( $(date +%s) - start ))" >> "$out/wall.txt"
  done
done

python3 - "$out" "$repeats" <<'EOF'
import json, statistics, sys
out, repeats = sys.argv[1], int(sys.argv[2])
wall = {}
for line in open(f"{out}/wall.txt"):
    pairing, i, s = line.split()
    wall.setdefault(pairing, []).append(int(s))
rows, cost = {}, {}
for pairing in ("rounds", "slices"):
    for i in range(1, repeats + 1):
        r = json.load(open(f"{out}/{pairing}-{i}/latest/results.json"))
        for d in r["deltas"]:
            key = f'{d["framework"]:<6} {d["scenario"]:<7} {d["to"]:<27}'
            lo, hi = d["ci_low_percent"], d["ci_high_percent"]
            cell = "    n/a" if lo is None else f'{d["change_percent"]:+6.1f} ±{(hi - lo) / 2:4.1f}'
            rows.setdefault(key, {}).setdefault(pairing, []).append(cell)
        cost.setdefault(pairing, []).extend(
            run["client_cpu_ms_per_1k"] for run in r["runs"]
            if run["client_cpu_ms_per_1k"] is not None and run["scenario"] != "floor")
print(f"{'delta':<42} {'rounds: change ± half-width, per repeat':<48} slices: change ± half-width, per repeat")
for key, by in rows.items():
    print(f"{key:<42} {'  '.join(by.get('rounds', [])):<48} {'  '.join(by.get('slices', []))}")
for pairing in ("rounds", "slices"):
    print(f"{pairing}: wall time per suite {statistics.median(wall[pairing])} s (median), "
          f"client CPU per 1,000 successful requests {statistics.median(cost[pairing]):.3f} ms (median of runs)")
print(f"(results under {out})")
EOF
