#!/usr/bin/env bash
# Two builds of the load client side by side against the same pinned
# responder (the built-in canned /plaintext server `calibrate` uses, where
# the server is cheaper than any client, so the client's own cost shows):
# PAIRS pairs of DURATION_S runs, the order alternating, each client pinned
# to CPU 1, the responder to CPU 0. Prints the medians of successful
# requests per second and of the client's CPU per 1,000 successful requests
# for each binary, and their ratios: of the medians, and paired (the ratio
# within each pair, geometric mean with a 95 % interval). Sessions here move
# by ±5 %; bench/engine-instructions.sh counts instructions instead.
#
# Usage: bench/engine-ab.sh OLD_CLIENT NEW_CLIENT [PAIRS=5] [DURATION_S=5]
# Needs nothing running beside it.
set -euo pipefail
old=$1 new=$2 pairs=${3:-5} duration_s=${4:-5}
. "$(dirname "$0")/lib/responder.sh" "$new"
one() { plaintext_load "$2" "$tmp/$1-$3.json"; }
alternate "$pairs" one
python3 - "$tmp" "$pairs" <<'EOF'
import json, statistics, sys
tmp, pairs = sys.argv[1], int(sys.argv[2])
med = {}
for who in ("old", "new"):
    runs = [json.load(open(f"{tmp}/{who}-{p}.json")) for p in range(1, pairs + 1)]
    med[who] = (statistics.median(r["requests_per_s"] for r in runs),
                statistics.median(r["client_cpu_ms_per_1k"] for r in runs))
    print(f"{who}: {med[who][0]:10.0f} successful requests/s, {med[who][1]:.4f} ms of client CPU per 1,000")
print(f"new/old: rate {med['new'][0] / med['old'][0]:.3f}x, client CPU per request {med['new'][1] / med['old'][1]:.3f}x "
      f"(medians of {pairs} alternating pairs)")
# Paired: the ratio within each pair (run back to back), geometric mean and
# its 95 % interval (Student's t over the pairs' log ratios).
import math
T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
       2.131, 2.120, 2.110, 2.101, 2.093, 2.086]
def paired(key):
    logs = [math.log(json.load(open(f"{tmp}/new-{p}.json"))[key] / json.load(open(f"{tmp}/old-{p}.json"))[key])
            for p in range(1, pairs + 1)]
    mean = statistics.mean(logs)
    half = T95[min(len(logs) - 2, len(T95) - 1)] * statistics.stdev(logs) / math.sqrt(len(logs)) if len(logs) > 1 else float("nan")
    return f"{math.exp(mean):.3f}x [{math.exp(mean - half):.3f} … {math.exp(mean + half):.3f}]"
print(f"paired new/old: rate {paired('requests_per_s')}, client CPU per request {paired('client_cpu_ms_per_1k')} "
      f"(geometric mean of {pairs} pairs, 95 % interval)")
EOF
