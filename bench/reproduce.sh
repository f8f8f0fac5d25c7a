#!/usr/bin/env bash
# Does a re-run land in the interval? Runs the default suite N times back to
# back (release, `make bench`'s settings) and prints, for every delta and every
# pair of sessions, the difference of the two estimates over its joint
# standard error (z = (a − b) / √(se_a² + se_b²), on log ratios; each se from
# its session's 95 % interval, half-width ÷ 1.96), and the share of pairs
# within ±1.96: about 95 % when the intervals say what a re-run does.
#
# Usage: bench/reproduce.sh [N=3] [suite flags…]
#        ALTERNATE="--keep-server|--rounds 12 --duration 1500ms" bench/reproduce.sh 3
#          also runs N sessions of each alternate (flags separated by `|`),
#          interleaved with the default ones (the order rotating each time),
#          and reports the methods side by side, measured in the same hours.
#        bench/reproduce.sh --analyse FOLDER   (analyse an earlier run again: the
#          measured folder, or a kept copy holding wall.txt, methods.txt and
#          METHOD-I.results.json.gz, as under bench/runs/)
# Needs nothing running beside it (a build or a test would be measured too).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--analyse" ]; then
  out=$2
else
  n=${1:-3}
  shift || true
  out=$(mktemp -d /tmp/reproduce.XXXXXX)
  cargo build --locked --release -q -p bench-client -p server-actix -p server-axum -p server-rocket
  client=target/release/bench-client
  methods=("")
  if [ -n "${ALTERNATE:-}" ]; then IFS='|' read -r -a alternates <<< "$ALTERNATE"; methods+=("${alternates[@]}"); fi
  for k in "${!methods[@]}"; do echo "method $k: ${methods[$k]:-(default)}" >> "$out/methods.txt"; done
  for i in $(seq "$n"); do
    count=${#methods[@]}
    for j in $(seq 0 $((count - 1))); do
      k=$(( (i - 1 + j) % count ))
      method=m$k
      # shellcheck disable=SC2206 # the method's flags, split on purpose
      flags=(${methods[$k]})
      start=$(date +%s)
      rc=0
      "$client" suite --no-build "$@" "${flags[@]}" --out "$out/$method-$i" > /dev/null 2> "$out/$method-$i.log" || rc=$?
      echo "$method $i $(( $(date +%s) - start ))" >> "$out/wall.txt"
      # 1: measured, but a run or a framework failed (analysed all the same); else stop here.
      if [ "$rc" -ne 0 ]; then
        echo "session $method-$i exited $rc: $(tail -n 1 "$out/$method-$i.log")" >&2
        [ "$rc" -eq 1 ] || exit "$rc"
      fi
    done
  done
  echo "sessions in $out"
fi
python3 - "$out" <<'PY'
import glob, gzip, itertools, json, math, os, sys

out = sys.argv[1]
wall = {}
for line in open(os.path.join(out, "wall.txt")):
    method, i, s = line.split()
    wall.setdefault(method, []).append(int(s))
names = {}
if os.path.exists(os.path.join(out, "methods.txt")):
    for line in open(os.path.join(out, "methods.txt")):
        k, flags = line.rstrip("\n").split(": ", 1)
        names["m" + k.split()[1]] = flags
for method in sorted(wall):
    sessions = []
    # A measured folder, or a kept one (bench/runs/…: each session's results.json gzipped).
    paths = glob.glob(os.path.join(out, f"{method}-*", "latest", "results.json"))
    paths += glob.glob(os.path.join(out, f"{method}-*.results.json.gz"))
    for path in sorted(paths):
        sessions.append(json.load(gzip.open(path) if path.endswith(".gz") else open(path)))
    if not sessions:
        continue
    meta = sessions[0]["meta"]
    print(f"\n## {names.get(method, method)}: {len(sessions)} sessions, {sum(wall[method]) / len(wall[method]):.0f} s each "
          f"(server per round: {meta.get('server_per_round', False)}, {meta['rounds']} rounds of {meta['duration_s']} s)\n")
    est = {}
    for k, r in enumerate(sessions):
        for d in r["deltas"]:
            c = d
            if c["ci_low_percent"] is None:
                continue
            key = (d["framework"], d["layers"], d["from"], d["to"])
            e = math.log1p(c["change_percent"] / 100)
            lo, hi = math.log1p(c["ci_low_percent"] / 100), math.log1p(c["ci_high_percent"] / 100)
            est.setdefault(key, {})[k] = (c["change_percent"], c["ci_low_percent"], c["ci_high_percent"], e, (hi - lo) / 2 / 1.959964)
    within = total = 0
    print("| delta | " + " | ".join(f"session {k + 1}" for k in range(len(sessions))) + " | largest \\|z\\| |")
    print("|---|" + "---|" * len(sessions) + "---|")
    for key in sorted(est):
        row = est[key]
        zs = []
        for a, b in itertools.combinations(sorted(row), 2):
            se = math.hypot(row[a][4], row[b][4])
            z = (row[a][3] - row[b][3]) / se if se > 0 else float("inf")
            zs.append(abs(z))
            total += 1
            within += abs(z) <= 1.959964
        cells = [f"{row[k][0]:+.1f} % [{row[k][1]:+.1f} … {row[k][2]:+.1f}]" if k in row else "–" for k in range(len(sessions))]
        fw, layers, frm, to = key
        print(f"| {fw} `{frm}` → `{to}` | " + " | ".join(cells) + f" | {max(zs) if zs else float('nan'):.2f} |")
    if total:
        print(f"\n{within} of {total} session pairs × deltas within ±1.96 joint standard errors ({100 * within / total:.0f} %).")
    # Precision: the wider side of each interval; under 20 % in points, from 20 % on as % of the ratio.
    small = [max(c - lo, hi - c) for row in est.values() for (c, lo, hi, _, _) in row.values() if abs(c) < 20]
    large = [100 * max(math.log1p(hi / 100) - e, e - math.log1p(lo / 100))
             for row in est.values() for (c, lo, hi, e, _) in row.values() if abs(c) >= 20]
    med = lambda v: sorted(v)[len(v) // 2] if v else float("nan")
    print(f"Half-widths (wider side): deltas under 20 %: median ±{med(small):.1f} points, largest ±{max(small, default=float('nan')):.1f}; "
          f"20 % and over: median ±{med(large):.1f} % of the ratio, largest ±{max(large, default=float('nan')):.1f} %.")
PY
