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
#   beyond noise how many functions of either top 10 differ in share between
#               the sessions by more than sampling explains (a two-proportion
#               test at 95 %, shares as binomial over each session's samples;
#               about one in twenty by chance, somewhat more since these are
#               the functions that ranked high, by chance too). A function in one
#               top 10 and not the other whose share does not differ is a tie
#               at the boundary, not a disagreement of the profiles
#   for 10/10   the samples one session needs so that its 10th and 11th
#               functions (shares pooled over both sessions) stand 1.96
#               standard errors apart: what a stable top 10 would take
#               ("tie": the two hold the same samples; left out of the median)
#   resolved    the largest k ≤ 10 whose k-th and (k+1)-th functions (pooled)
#               stand 1.96 standard errors apart at the smaller session's
#               samples, and whether both sessions' top k are the same set
#               ("-" when not even the first function stands apart)
#
# A flame graph with fewer than 11 functions or no samples in either folder
# is listed as such and left out.
# Usage: bench/profile-agreement.sh RUN_FOLDER_A RUN_FOLDER_B [PERIOD_NS=4016064]
# (PERIOD_NS: 1e9 / the sampling frequency; 249 Hz by default.) Needs python3.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 RUN_FOLDER_A RUN_FOLDER_B [PERIOD_NS]" >&2; exit 2; }
python3 - "$1" "$2" "${3:-4016064}" <<'PY'
import math, pathlib, statistics, sys
from collections import Counter
a, b, period = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), int(sys.argv[3])

def self_time(path):
    c = Counter()
    for line in path.read_text().splitlines():
        stack, _, ns = line.rpartition(" ")
        if stack:
            c[stack.rsplit(";", 1)[-1]] += int(ns)
    total = sum(c.values())
    return {f: 100 * ns / total for f, ns in c.items()} if total else {}, total

names = sorted(p.name for p in (a / "flamegraphs").glob("*.folded")
               if not p.name.startswith("diff-") and (b / "flamegraphs" / p.name).is_file())
if not names:
    sys.exit(f"no flame graph in both {a} and {b}")
print(f"{'flame graph':32} {'shared':>7} {'same order':>11} {'largest gap':>12} {'samples A · B':>16}"
      f" {'beyond noise':>13} {'for 10/10':>10} {'resolved':>9}")
shared_all, beyond_all, tested_all, needed_all, resolved_all = [], [], [], [], []
for name in names:
    sa, ta = self_time(a / "flamegraphs" / name)
    sb, tb = self_time(b / "flamegraphs" / name)
    if ta == 0 or tb == 0 or len(set(sa) | set(sb)) < 11:
        print(f"{name.removesuffix('.folded'):32} (no samples, or fewer than 11 functions: left out)")
        continue
    top = lambda s: [f for f, _ in sorted(s.items(), key=lambda kv: -kv[1])[:10]]
    top_a, top_b = top(sa), top(sb)
    shared = len(set(top_a) & set(top_b))
    same = sum(1 for x, y in zip(top_a, top_b) if x == y)
    gap = max(abs(sa.get(f, 0) - sb.get(f, 0)) for f in set(top_a) | set(top_b))
    na, nb = ta / period, tb / period
    union = set(top_a) | set(top_b)
    beyond = 0
    for f in union:
        pa, pb = sa.get(f, 0) / 100, sb.get(f, 0) / 100
        pooled = (pa * na + pb * nb) / (na + nb)
        se = math.sqrt(pooled * (1 - pooled) * (1 / na + 1 / nb))
        beyond += se > 0 and abs(pa - pb) > 1.96 * se
    both = Counter({f: (sa.get(f, 0) * na + sb.get(f, 0) * nb) / (na + nb) / 100 for f in set(sa) | set(sb)})
    ranked = both.most_common(11)
    (_, p10), (_, p11) = ranked[9:11]
    needed = 1.96 ** 2 * (p10 + p11) / (p10 - p11) ** 2 if p10 > p11 else None
    n = min(na, nb)
    k = max((k for k in range(1, 11)
             if ranked[k - 1][1] - ranked[k][1] > 1.96 * math.sqrt((ranked[k - 1][1] + ranked[k][1]) / n)), default=0)
    same_k = k > 0 and set(top_a[:k]) == set(top_b[:k])
    resolved_all.append((k, same_k))
    shared_all.append(shared)
    beyond_all.append(beyond)
    tested_all.append(len(union))
    if needed is not None:
        needed_all.append(needed)
    print(f"{name.removesuffix('.folded'):32} {shared:>4}/10 {same:>8}/10 {gap:>9.1f} pt "
          f"{ta // period:>7} · {tb // period:<6} {beyond:>5} of {len(union):<4} "
          f"{'tie' if needed is None else f'{needed:,.0f}':>10} {k:>4} {'-' if k == 0 else 'same' if same_k else 'differ'}")
if not shared_all:
    sys.exit("no flame graph with samples and 11 functions in both folders")
median = lambda v: statistics.median(v) if v else float("nan")
resolved = [s for k, s in resolved_all if k > 0]
print(f"(median shared: {median(shared_all):.0f}/10 over {len(shared_all)} flame graphs; functions beyond noise: "
      f"{sum(beyond_all)} of {sum(tested_all)} in all; samples for 10/10: median {median(needed_all):,.0f} over the "
      f"{len(needed_all)} without a tie; resolved top k: median {median([k for k, _ in resolved_all]):.0f}, at least the top 1 in"
      f" {len(resolved)}, the same set in both sessions in {sum(resolved)} of those; A = {a.name}, B = {b.name})")
PY
