#!/usr/bin/env bash
# The load client's user-space instructions per completed request, two builds
# side by side, counted by valgrind's callgrind (instructions, not seconds:
# the same for the same binary and input whatever else the machine does,
# where bench/engine-ab.sh's rates move by ±5 % between sessions here). Each
# binary loads the pinned canned responder (`responder`, as engine-ab.sh)
# for DURATION_S under callgrind, RUNS times, the order alternating; prints
# instructions per completed request (warm-up included) for each run and the
# ratio of the means. Kernel time (most of the client's CPU) is not counted.
#
# Usage: bench/engine-instructions.sh OLD_CLIENT NEW_CLIENT [RUNS=2] [DURATION_S=5]
set -euo pipefail
old=$1 new=$2 runs=${3:-2} duration_s=${4:-5}
command -v valgrind >/dev/null || { echo "error: valgrind is not installed" >&2; exit 2; }
. "$(dirname "$0")/lib/responder.sh" "$new"
one() { plaintext_load "$2" "$tmp/$1-$3.json" valgrind --tool=callgrind --callgrind-out-file="$tmp/$1-$3.cg" 2> "$tmp/$1-$3.err"; }
alternate "$runs" one
python3 - "$tmp" "$runs" <<'PY'
import json, statistics, sys
tmp, runs = sys.argv[1], int(sys.argv[2])
per = {}
for who in ("old", "new"):
    per[who] = []
    for r in range(1, runs + 1):
        ir = next(int(l.split()[1]) for l in open(f"{tmp}/{who}-{r}.cg") if l.startswith("summary:"))
        f = json.load(open(f"{tmp}/{who}-{r}.json"))
        per[who].append(ir / (f["successful"] + f["warmup_completed"]))
    print(f"{who}: " + ", ".join(f"{v:.0f}" for v in per[who]) + " instructions per completed request")
print(f"new/old: {statistics.mean(per['new']) / statistics.mean(per['old']):.3f}x instructions per request (user space)")
PY
