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
# Usage: bench/pairing-precision.sh [REPEATS=3] [FOLDER of an earlier run, analysed again]
# Needs nothing running beside it (a build or a test would be measured too).
set -euo pipefail
cd "$(dirname "$0")/.."
repeats=${1:-3}
# A second argument: the folder of an earlier run, analysed again without measuring.
if [ -n "${2:-}" ]; then
  out=$2
else
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
fi

python3 - "$out" "$repeats" <<'EOF'
import json, statistics, sys
out, repeats = sys.argv[1], int(sys.argv[2])
wall = {}
for line in open(f"{out}/wall.txt"):
    pairing, i, s = line.split()
    wall.setdefault(pairing, []).append(int(s))
rows, cpu = {}, {}
for pairing in ("rounds", "slices"):
    for i in range(1, repeats + 1):
        r = json.load(open(f"{out}/{pairing}-{i}/latest/results.json"))
        for d in r["deltas"]:
            key = f'{d["framework"]} `{d["from"]}` → `{d["to"]}`'
            lo, hi, c = d["ci_low_percent"], d["ci_high_percent"], d["change_percent"]
            # The wider half of the interval about the estimate, points.
            half = None if lo is None else max(c - lo, hi - c)
            rows.setdefault(key, {}).setdefault(pairing, []).append((c, half))
        for run in r["runs"]:
            if run["client_cpu_ms_per_1k"] is not None and run["scenario"] != "floor":
                cpu.setdefault((run["framework"], run["variant"]), {}).setdefault(pairing, []).append(run["client_cpu_ms_per_1k"])
def cell(values):
    return " · ".join("n/a" if h is None else f"{c:+.1f} ±{h:.1f}" for c, h in values)
print("| delta | by rounds (sessions) | by slices (sessions) | slices narrower by |")
print("|---|---|---|--:|")
for key, by in rows.items():
    halves = {p: [h for _, h in by.get(p, []) if h is not None] for p in ("rounds", "slices")}
    ratio = statistics.median(halves["rounds"]) / statistics.median(halves["slices"]) if all(halves.values()) else float("nan")
    print(f"| {key} | {cell(by.get('rounds', []))} | {cell(by.get('slices', []))} | {ratio:.1f}× |")
print("(change ± the wider half of its 95 % interval, points; narrower by: median half-width by rounds over by slices)")
for pairing in ("rounds", "slices"):
    print(f"{pairing}: wall time per suite {statistics.median(wall[pairing])} s (median)")
ratios = [statistics.median(v["slices"]) / statistics.median(v["rounds"]) for v in cpu.values() if "slices" in v and "rounds" in v]
print(f"client CPU per 1,000 successful requests, slices over rounds per variant: median {statistics.median(ratios):.3f}, "
      f"range {min(ratios):.3f}–{max(ratios):.3f}")
print(f"(results under {out})")
EOF
