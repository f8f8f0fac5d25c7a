#!/usr/bin/env bash
# Checks how bench/client-vs-wrk.sh counts each tool's successful responses
# and flags runs with errors, without wrk, oha or a build: the counting
# functions of bench/lib/count.sh get canned outputs from bench/testdata/
# and must give the exact successful count, rate and error detail, or refuse
# an output they cannot count. One line per case; exits 1 on any mismatch.
# Needs bash, awk and python3; with luajit (or lua) installed it also runs
# bench/lib/wrk-count.lua through a replay of wrk's Lua API.
#
# Usage: bench/test-counting.sh   (or `make test-scripts`)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=bench/lib/count.sh
. bench/lib/count.sh
data=bench/testdata
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

pass() { printf 'ok    %s\n' "$1"; }
fail() { printf 'FAIL  %s\n' "$1"; failures=$((failures + 1)); }

# counts NAME EXPECTED FUNCTION ARGS...: FUNCTION must print EXPECTED
# ("SUCCESSFUL RATE DETAIL") and succeed.
counts() {
  local name=$1 expected=$2 got rc=0
  shift 2
  got=$("$@" 2> "$tmp/stderr") || rc=$?
  if [ "$rc" -eq 0 ] && [ "$got" = "$expected" ]; then
    local detail=${got#* * }
    if [ "$detail" = - ]; then pass "$name: ${got% *}, clean"; else pass "$name: ${got% *}, ERRORS $detail"; fi
  else
    fail "$name: expected '$expected', got '$got' (exit $rc; stderr: $(tr '\n' ' ' < "$tmp/stderr"))"
  fi
}

# refuses NAME PATTERN FUNCTION ARGS...: FUNCTION must fail, saying PATTERN
# on stderr, and print nothing on stdout.
refuses() {
  local name=$1 pattern=$2 got rc=0
  shift 2
  got=$("$@" 2> "$tmp/stderr") || rc=$?
  if [ "$rc" -ne 0 ] && [ -z "$got" ] && grep -q -- "$pattern" "$tmp/stderr"; then
    pass "$name: refused ($(head -1 "$tmp/stderr"))"
  else
    fail "$name: expected a refusal saying '$pattern', got exit $rc, stdout '$got', stderr '$(tr '\n' ' ' < "$tmp/stderr")'"
  fi
}

# wrk: the issue's case. 500,000 requests, 400,000 of them non-2xx, and
# socket errors: 100,000 successful in 5 s, flagged with every count.
counts "wrk 500,000 requests, 400,000 non-2xx, socket errors" \
  "100000 20000.0 non200=400000,read=12,timeout=7" wrk_counts "$data/wrk-errors.out"
counts "wrk clean run" "550123 109997.5 -" wrk_counts "$data/wrk-clean.out"
refuses "wrk output without the counting script's line" "wrk-count: lines instead of 1" \
  wrk_counts "$data/wrk-no-script.out"
refuses "wrk script line disagreeing with wrk's own totals" "wrk printed 500000 requests" \
  wrk_counts "$data/wrk-inconsistent.out"
refuses "wrk output missing" "wrk_counts" wrk_counts "$tmp/no-such-file"

# The Lua script itself, replayed through wrk's API: it must print the very
# line the canned output above carries.
lua=$(command -v luajit || command -v lua || command -v lua5.1 || true)
if [ -n "$lua" ]; then
  expected=$(grep '^wrk-count:' "$data/wrk-errors.out")
  got=$("$lua" "$data/wrk-lua-harness.lua" bench/lib/wrk-count.lua 2>&1)
  if [ "$got" = "$expected" ]; then
    pass "wrk-count.lua through wrk's Lua API ($(basename "$lua")): 2 threads summed, prints the canned line"
  else
    fail "wrk-count.lua through wrk's Lua API: expected '$expected', got '$got'"
  fi
else
  printf 'skip  wrk-count.lua through wrk Lua API: no luajit or lua installed\n'
fi

# oha: 200s only; 500 and 404 are non-200; "aborted due to deadline" (one
# per connection at the end of -z) is not an error, any other message is.
counts "oha 90,000 x 200, 10,000 x 500/404, 5 errors, 64 deadline aborts" \
  "90000 18000.0 non200=10000,errors=5" oha_counts "$data/oha-errors.json" 64
counts "oha clean run (64 deadline aborts only)" "455000 90963.6 -" oha_counts "$data/oha-clean.json" 64
counts "oha more deadline aborts than connections" \
  "455000 90963.6 aborted=64" oha_counts "$data/oha-clean.json" 32
refuses "oha output that is not JSON" "not an oha JSON output" oha_counts "$data/wrk-clean.out" 64

# bench-client: successful as it counts it; failed_total by kind, the
# failures of no request (connect, stray bytes, a GOAWAY's error code) and an
# incomplete run flagged.
counts "client 120,000 successful, 30 failed, 2 connect failures" \
  "120000 24000.0 non200=20,io=10,connect=2,incomplete=1" client_counts "$data/client-failures.json"
counts "client clean run" "600500 120100.0 -" client_counts "$data/client-clean.json"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); r["failed"].update(stray=3, goaway={"11": 2}); json.dump(r,open(sys.argv[2],"w"))' \
  "$data/client-clean.json" "$tmp/client-stray.json"
counts "client run with stray bytes and GOAWAY errors (no request failed)" "600500 120100.0 stray=3,goaway=2" \
  client_counts "$tmp/client-stray.json"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); r["failed_total"]=0; json.dump(r,open(sys.argv[2],"w"))' \
  "$data/client-failures.json" "$tmp/client-inconsistent.json"
refuses "client failures not adding up to failed_total" "add up to 30, failed_total is 0" \
  client_counts "$tmp/client-inconsistent.json"

# A run as the scripts that read load's file alone judge it (client_run):
# load's exit status named when its file counts no failure (churn it was not
# allowed, connections short, a schedule not kept fail a run outside the
# failure counts); the failure kinds when it does; an unreadable file flagged.
counts "client clean run, exit 0" "600500 120100.0 -" client_run "$data/client-clean.json" 0
counts "client clean counts, exit 1" "600500 120100.0 exit_status=1" client_run "$data/client-clean.json" 1
counts "client failures, exit 1" "120000 24000.0 non200=20,io=10,connect=2,incomplete=1" \
  client_run "$data/client-failures.json" 1
counts "client file unreadable" "0 0.0 unreadable=1" client_run "$tmp/no-such.json" 0

# plaintext_load and alternate (bench/lib/responder.sh, as engine-ab.sh and
# engine-instructions.sh run them under set -e): a stand-in client whose
# `responder` listens and whose `load` writes a clean file and exits 1 on
# its second run. The loop goes on past the failed run, and it is flagged.
cat > "$tmp/client" <<EOF
#!/usr/bin/env bash
case \$1 in
  responder) echo "listening on http://127.0.0.1:9"; exec sleep 60 ;;
  load) json=\${*: -1}; cp "$PWD/$data/client-clean.json" "\$json"; n=\$(cat "$tmp/loads" 2> /dev/null || echo 0)
    echo \$((n + 1)) > "$tmp/loads"; [ "\$n" -ne 1 ] ;;
esac
EOF
chmod +x "$tmp/client"
got=$(bash -c 'set -euo pipefail; old=$1 new=$1 duration_s=1; . bench/lib/responder.sh "$1"
  one() { plaintext_load "$2" "$tmp/$1-$3.json"; }; alternate 2 one
  tr "\n" " " < "$tmp/flagged"' _ "$tmp/client" 2> "$tmp/stderr")
# Runs in order: old-1, new-1, new-2 (the second pair reversed), old-2: the second is new-1.
if [ "$got" = "new-1 " ] && grep -q "^ERRORS in runs new-1 " "$tmp/stderr"; then
  pass "plaintext_load goes on past a failed run; flagged and said: $got"; else
  fail "plaintext_load/alternate: expected 'new-1 ', got '$got' (stderr: $(tr '\n' ' ' < "$tmp/stderr"))"; fi

# h2load: 2xx only, over its "finished in" time; failed, errored, timed-out
# requests and other statuses flagged (captured from nghttp2 1.52's h2load).
counts "h2load clean run" "4156 4156.0 -" h2load_counts "$data/h2load-clean.out"
counts "h2load every answer a 404" "0 0.0 non200=4539,failed=4539,no_success=1" h2load_counts "$data/h2load-404.out"
refuses "output that is not h2load's" "not a complete h2load output" h2load_counts "$data/wrk-clean.out"
# The h2 crate's load client (bench/h2-framing.sh): its one line.
counts "h2_crate_load clean run" "40120 10030.0 -" h2crate_counts "$data/h2crate-clean.out"
counts "h2_crate_load every request failed" "0 0.0 failed=17,no_success=1" h2crate_counts "$data/h2crate-failed.out"
refuses "output that is not h2_crate_load's" "not an h2_crate_load output" h2crate_counts "$data/h2load-clean.out"

# The table's errors cell: per tool, flagged runs out of all, counts summed.
printf '%s\n' "20000.0 9.100 non200=400000,read=12,timeout=7" "109997.5 8.000 -" "20000.0 9.000 non200=400000" \
  > "$tmp/wrk-runs"
got=$(errors_cell wrk "$tmp/wrk-runs")
expected="wrk 2/3 runs: non200=800000 read=12 timeout=7"
if [ "$got" = "$expected" ]; then pass "errors cell: $got"; else fail "errors cell: expected '$expected', got '$got'"; fi
printf '%s\n' "120100.0 7.000 -" "120000.0 7.100 -" > "$tmp/client-runs"
got=$(errors_cell client "$tmp/client-runs")
if [ -z "$got" ]; then pass "errors cell of clean runs: empty"; else fail "errors cell of clean runs: got '$got'"; fi

# One run's line: rate, CPU per 1,000 successful requests from two `times`
# outputs (children's user + system: 1.5 s before, 4.5 s after), detail.
printf '0m0.010s 0m0.020s\n0m1.000s 0m0.500s\n' > "$tmp/before"
printf '0m0.010s 0m0.020s\n0m3.000s 0m1.500s\n' > "$tmp/after"
got=$(round_line "2000 500.0 -" 0 "$tmp/before" "$tmp/after")
if [ "$got" = "500.0 1500 -" ]; then pass "round line: $got"; else fail "round line: expected '500.0 1500 -', got '$got'"; fi
got=$(round_line "0 0.0 -" 3 "$tmp/before" "$tmp/after")
if [ "$got" = "0.0 - exit_status=3" ]; then pass "round line of a failed run: $got"; else fail "round line of a failed run: expected '0.0 - exit_status=3', got '$got'"; fi
printf '%s\n' "300.0 2.5 -" "100.0 - no_success=1" "200.0 1.5 -" > "$tmp/tool"
medians "$tmp" tool
got="$(cat "$tmp/tool.rate") $(cat "$tmp/tool.cpu")"
if [ "$got" = "200.0 2" ]; then pass "medians: rate and CPU $got"; else fail "medians: expected '200.0 2', got '$got'"; fi

# The wiring: client-vs-wrk.sh runs wrk with the script, oha without
# following redirects, and reads every tool through these functions.
for needle in 'h2load_counts "' 'client_counts "' 'rounds "' '--http2 --streams'; do
  if grep -qF -- "$needle" bench/h2load-compare.sh; then
    pass "h2load-compare.sh uses: $needle"
  else
    fail "h2load-compare.sh does not use: $needle"
  fi
done
for needle in 'h2crate_counts "' 'client_counts "' 'rounds "' '--http2 --streams' 'examples/h2_crate_load'; do
  if grep -qF -- "$needle" bench/h2-framing.sh; then
    pass "h2-framing.sh uses: $needle"
  else
    fail "h2-framing.sh does not use: $needle"
  fi
done
for needle in '-s bench/lib/wrk-count.lua' '--redirect 0' 'wrk_counts "' 'oha_counts "' 'client_counts "' 'errors_line ' 'rounds "'; do
  if grep -qF -- "$needle" bench/client-vs-wrk.sh; then
    pass "client-vs-wrk.sh uses: $needle"
  else
    fail "client-vs-wrk.sh does not use: $needle"
  fi
done
# The rounds every comparison script runs (bench/lib/count.sh): each run through round_line, the
# medians of every tool at the end.
rounds_body=$(sed -n '/^rounds() {/,/^}/p' bench/lib/count.sh)
for needle in 'round_line "' 'medians "'; do
  if printf '%s\n' "$rounds_body" | grep -qF -- "$needle"; then
    pass "lib/count.sh rounds uses: $needle"
  else
    fail "lib/count.sh rounds does not use: $needle"
  fi
done

if [ "$failures" -gt 0 ]; then
  printf '%d case(s) failed\n' "$failures"
  exit 1
fi
printf 'all counting cases passed\n'
