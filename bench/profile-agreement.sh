#!/usr/bin/env bash
# Do two profiling sessions name the same hottest functions? For every
# flame graph the two run folders share (flamegraphs/<framework>-<variant>.folded),
# the ten functions with the most self time (a stack's last frame, weighted
# by its ns) of each session, and:
#
#   shared      how many of session A's top 10 are in session B's
#   same order  how many of the top 10 hold the same rank in both
#   largest gap the largest difference in self-time share (percentage
#               points) among the functions of either top 10
#   samples     each session's samples (ns / the sample period)
#
# Usage: bench/profile-agreement.sh RUN_FOLDER_A RUN_FOLDER_B [PERIOD_NS=4016064]
# (PERIOD_NS: 1e9 / the sampling frequency; 249 Hz by default.) Needs python3.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 RUN_FOLDER_A RUN_FOLDER_B [PERIOD_NS]" >&2; exit 2; }
python3 - "$1" "$2" "${3:-4016064}" <<'PY'
import pathlib, sys
from collections import Counter
a, b, period = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), int(sys.argv[3])

def self_time(path):
    c = Counter()
    for line in path.read_text().splitlines():
        stack, _, ns = line.rpartition(" ")
        if stack:
            c[stack.rsplit(";", 1)[-1]] += int(ns)
    total = sum(c.values())
    return {f: 100 * ns / total for f, ns in c.items()}, total

names = sorted(p.name for p in (a / "flamegraphs").glob("*.folded")
               if not p.name.startswith("diff-") and (b / "flamegraphs" / p.name).is_file())
if not names:
    sys.exit(f"no flame graph in both {a} and {b}")
print(f"{'flame graph':32} {'shared':>7} {'same order':>11} {'largest gap':>12} {'samples A · B':>16}")
shared_all = []
for name in names:
    sa, ta = self_time(a / "flamegraphs" / name)
    sb, tb = self_time(b / "flamegraphs" / name)
    top = lambda s: [f for f, _ in sorted(s.items(), key=lambda kv: -kv[1])[:10]]
    top_a, top_b = top(sa), top(sb)
    shared = len(set(top_a) & set(top_b))
    same = sum(1 for x, y in zip(top_a, top_b) if x == y)
    gap = max(abs(sa.get(f, 0) - sb.get(f, 0)) for f in set(top_a) | set(top_b))
    shared_all.append(shared)
    print(f"{name.removesuffix('.folded'):32} {shared:>4}/10 {same:>8}/10 {gap:>9.1f} pt "
          f"{ta // period:>7} · {tb // period}")
print(f"(median shared: {sorted(shared_all)[len(shared_all) // 2]}/10 over {len(names)} flame graphs; "
      f"A = {a.name}, B = {b.name})")
PY
