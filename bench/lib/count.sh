# shellcheck shell=bash
# Counting (and timing) for bench/client-vs-wrk.sh, bench/tls.sh, bench/h2load-compare.sh and
# bench/h2-framing.sh, sourced by them and by bench/test-counting.sh (which feeds these functions canned outputs).
# Needs bash, awk and python3 only.
#
# Each <tool>_counts function reads one run's output and prints one line:
#
#   SUCCESSFUL RATE DETAIL
#
# SUCCESSFUL  responses with status 200 (the only ones that count, as in
#             bench-client's own `successful`)
# RATE        SUCCESSFUL per second of the run's measured time
# DETAIL      "-" for a clean run; otherwise what went wrong, as
#             comma-separated kind=count pairs (only the kinds seen):
#               non200     responses with another status
#               connect, read, write, timeout
#                          wrk's socket errors
#               errors     oha's errors (its errorDistribution)
#               aborted    oha: requests cut at the deadline, when more than
#                          one per connection (see oha_counts)
#               io, timeout, body, protocol, tls, reset, connect, stray, goaway
#                          bench-client's failures by kind
#               incomplete bench-client: the run did not complete
#               no_success no response with status 200 at all
#
# A function that cannot count the output (missing, truncated, inconsistent)
# says why on stderr and returns 1; it never guesses.

# wrk's stdout from `wrk ... -s bench/lib/wrk-count.lua URL`: the counts come
# from the script's `wrk-count:` line. wrk's own lines are cross-checked
# against it: "N requests in ..." must equal the script's responses,
# "Socket errors: ..." (printed only when one is non-zero) its socket
# errors, and "Non-2xx or 3xx responses: N" (statuses > 399 only, printed
# only when non-zero; N is the last field) may not exceed its non-200s.
wrk_counts() {
  [ -r "$1" ] || { echo "wrk_counts: $1: no wrk output" >&2; return 1; }
  awk '
    function fail(msg) { print "wrk_counts: " FILENAME ": " msg > "/dev/stderr"; failed = 1; exit 1 }
    function add(kind, n) { if (n > 0) detail = detail (detail == "" ? "" : ",") kind "=" sprintf("%.0f", n) }
    /^wrk-count:/ {
      lines++
      for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
    }
    / requests in / { native = $1 }
    /^ *Socket errors:/ { sock["connect"] = $4 + 0; sock["read"] = $6 + 0; sock["write"] = $8 + 0; sock["timeout"] = $10 + 0 }
    /^ *Non-2xx or 3xx responses:/ { native_status = $NF + 0 }
    END {
      if (failed) exit 1
      if (lines != 1) fail(lines + 0 " wrk-count: lines instead of 1 (was wrk run with -s bench/lib/wrk-count.lua?)")
      split("status_200 non_200 responses duration_us connect read write timeout status_gt_399", keys, " ")
      for (i = 1; i in keys; i++) if (!(keys[i] in v) || v[keys[i]] !~ /^[0-9]+$/) fail("wrk-count: line without a number for " keys[i])
      if (native == "") fail("no \"requests in\" line: not a complete wrk output")
      if (v["status_200"] + v["non_200"] != v["responses"])
        fail("status_200 " v["status_200"] " + non_200 " v["non_200"] " != responses " v["responses"])
      if (v["responses"] != native) fail("the script saw " v["responses"] " responses, wrk printed " native " requests")
      for (k in sock) if (sock[k] != v[k]) fail("socket errors: wrk printed " k " " sock[k] ", the script got " v[k])
      if (native_status != v["status_gt_399"] + 0) fail("wrk printed " native_status + 0 " non-2xx or 3xx responses, the script got status > 399: " v["status_gt_399"])
      if (v["status_gt_399"] > v["non_200"]) fail("more statuses > 399 (" v["status_gt_399"] ") than non-200 responses (" v["non_200"] ")")
      if (v["duration_us"] <= 0) fail("duration_us is 0")
      add("non200", v["non_200"])
      add("connect", v["connect"]); add("read", v["read"]); add("write", v["write"]); add("timeout", v["timeout"])
      if (v["status_200"] == 0) add("no_success", 1)
      printf "%.0f %.1f %s\n", v["status_200"], v["status_200"] / (v["duration_us"] / 1e6), (detail == "" ? "-" : detail)
    }
  ' "$1"
}

# Runs the Python counting on stdin for NAME on the JSON FILE (ARG… follow
# as sys.argv[3:]), given `path`, `read()` (the parsed file; OSError and
# ValueError left to the caller) and `fail(msg)` (says NAME: FILE: msg on
# stderr and exits 1).
json_counts() {
  python3 -c "import json, sys
name, path = sys.argv[1], sys.argv[2]
def fail(msg):
    print(f'{name}: {path}: {msg}', file=sys.stderr)
    sys.exit(1)
def read():
    with open(path) as f:
        return json.load(f)
$(cat)" "$@"
}

# oha's `--output-format json` output. Successful: statusCodeDistribution["200"];
# every other status is a non-200. errorDistribution counts requests that got
# no response, by message; one message is not an error: with -z, oha cuts
# the requests still in flight at the deadline and records each as "aborted
# due to deadline" (hatoo/oha, src/client.rs, ClientError::Deadline), at
# most one per connection, like bench-client's in_flight_at_deadline, which
# is neither a success nor a failure. With MAX_ABORTED (the connections),
# more aborts than that are flagged. oha's summary.total is the run's
# length in seconds (src/printer.rs, print_json).
oha_counts() {
  json_counts oha_counts "$1" "${2:-}" <<'PY'
max_aborted = sys.argv[3]
try:
    r = read()
    codes = r["statusCodeDistribution"]
    errors = dict(r["errorDistribution"])
    total_s = float(r["summary"]["total"])
except (OSError, ValueError, KeyError, TypeError) as e:
    fail(f"not an oha JSON output: {e!r}")
if total_s <= 0:
    fail("summary.total is 0")
ok = int(codes.get("200", 0))
non200 = sum(int(n) for code, n in codes.items() if code != "200")
aborted = int(errors.pop("aborted due to deadline", 0))
detail = []
if non200:
    detail.append(f"non200={non200}")
if sum(errors.values()):
    detail.append(f"errors={sum(errors.values())}")
if max_aborted and aborted > int(max_aborted):
    detail.append(f"aborted={aborted}")
if ok == 0:
    detail.append("no_success=1")
print(f"{ok} {ok / total_s:.1f} {','.join(detail) or '-'}")
for message, n in sorted(errors.items()):
    print(f"oha_counts: {path}: {n} x {message}", file=sys.stderr)
PY
}

# bench-client's `load --json` output (docs/RESULTS.md): `successful` counts
# status 200 with the exact body; `failed_total` the failed requests, by kind
# in `failed` (io, timeout, status by code, body, protocol, tls), which must add
# up to it; `failed.connect` the failed connection attempts, `stray` the
# connections given bytes of no response and `goaway` those a server ended with
# an error code (not in failed_total: no request of theirs failed); `complete` false when the run was cut
# short. Any of them flags the run, as `load` itself does (exit 1).
client_counts() {
  json_counts client_counts "$1" <<'PY'
try:
    r = read()
    ok, failed_total, f, complete = int(r["successful"]), int(r["failed_total"]), r["failed"], r["complete"]
    duration_s = float(r["duration_s"])
    kinds = {
        "non200": sum(int(n) for n in f["status"].values()),
        "io": int(f["io"]),
        "timeout": int(f["timeout"]),
        "body": int(f["body"]),
        "protocol": int(f["protocol"]),
        "tls": int(f.get("tls", 0)),
        "reset": sum(int(n) for n in f.get("reset", {}).values()),
    }
    # Failures of no request, outside failed_total, that fail the run all the same.
    apart = {
        "connect": int(f["connect"]),
        "stray": int(f.get("stray", 0)),
        "goaway": sum(int(n) for n in f.get("goaway", {}).values()),
    }
except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
    fail(f"not a bench-client load --json output: {e!r}")
# The warm-up's protocol failures are among the kinds, not in failed_total.
if sum(kinds.values()) - int(r.get("warmup_failed_protocol", 0)) != failed_total:
    fail(f"failures by kind {kinds} add up to {sum(kinds.values())}, failed_total is {failed_total}")
if duration_s <= 0:
    fail("duration_s is 0")
detail = [f"{k}={n}" for k, n in {**kinds, **apart}.items() if n]
if not complete:
    detail.append("incomplete=1")
if ok == 0:
    detail.append("no_success=1")
print(f"{ok} {ok / duration_s:.1f} {','.join(detail) or '-'}")
PY
}

# with_status COUNTS STATUS: the <tool>_counts line COUNTS with the tool's
# exit status named in its DETAIL (exit_status=N) when the counts saw nothing
# wrong: a run the tool itself failed (bench-client's `load` exits 1 for what
# its file has no failure count of: churn it was not allowed, connections
# short when the windows began, an open-loop schedule not kept) is flagged.
with_status() {
  local count rate detail
  read -r count rate detail <<< "$1"
  if [ "$2" -ne 0 ] && [ "$detail" = - ]; then detail="exit_status=$2"; fi
  echo "$count $rate $detail"
}

# client_run JSON STATUS: one bench-client `load --json` run as client_counts
# counts it, its exit status STATUS folded in by with_status; "0 0.0 unreadable=1"
# when the file cannot be counted (client_counts says why on stderr).
client_run() {
  with_status "$(client_counts "$1" || echo "0 0.0 unreadable=1")" "$2"
}

# h2load's stdout (nghttp2's HTTP/2 load generator, `h2load -D SECONDS …`):
# successes are its 2xx responses (every route loaded here answers 200), the
# rate those over its "finished in" time; its failed, errored and timed-out
# requests and non-2xx responses flag the run.
h2load_counts() {
  [ -r "$1" ] || { echo "h2load_counts: $1: no h2load output" >&2; return 1; }
  awk '
    function fail(msg) { print "h2load_counts: " FILENAME ": " msg > "/dev/stderr"; failed = 1; exit 1 }
    function add(kind, n) { if (n > 0) detail = detail (detail == "" ? "" : ",") kind "=" sprintf("%.0f", n) }
    /^finished in / { t = $3; sub(/,$/, "", t); if (t ~ /ms$/) { sub(/ms$/, "", t); t /= 1000 } else sub(/s$/, "", t); seconds = t + 0 }
    /^requests: / { total = $2; done = $6; ok = $8; bad = $10; errored = $12; timeout = $14; seen_requests = 1 }
    /^status codes: / { s2 = $3; s3 = $5; s4 = $7; s5 = $9; seen_codes = 1 }
    END {
      if (failed) exit 1
      if (!seen_requests || !seen_codes) fail("no requests: or status codes: line: not a complete h2load output")
      if (seconds <= 0) fail("no \"finished in\" time")
      add("non200", s3 + s4 + s5); add("failed", bad); add("errored", errored); add("timeout", timeout)
      if (s2 == 0) add("no_success", 1)
      printf "%d %.1f %s\n", s2, s2 / seconds, detail == "" ? "-" : detail
    }
  ' "$1"
}

# The h2 crate's load client (bench-client's example h2_crate_load, run by
# bench/h2-framing.sh): its one line "successful=N failed=M duration_us=D";
# a failed request (status not 200, body not the route's, a stream or
# connection error) is flagged as failed=M.
h2crate_counts() {
  [ -r "$1" ] || { echo "h2crate_counts: $1: no h2_crate_load output" >&2; return 1; }
  awk '
    function fail(msg) { print "h2crate_counts: " FILENAME ": " msg > "/dev/stderr"; failed = 1; exit 1 }
    /^successful=[0-9]+ failed=[0-9]+ duration_us=[0-9]+$/ {
      lines++
      for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] + 0 }
    }
    END {
      if (failed) exit 1
      if (lines != 1) fail(lines + 0 " successful=... lines instead of 1: not an h2_crate_load output")
      if (v["duration_us"] <= 0) fail("duration_us is 0")
      detail = v["failed"] > 0 ? "failed=" v["failed"] : ""
      if (v["successful"] == 0) detail = detail (detail == "" ? "" : ",") "no_success=1"
      printf "%d %.1f %s\n", v["successful"], v["successful"] * 1e6 / v["duration_us"], detail == "" ? "-" : detail
    }
  ' "$1"
}

# The errors cell of one tool for the table: FILE holds one line per run,
# "RATE CPU DETAIL" (DETAIL as above). Prints nothing when every run was
# clean, else "NAME K/N runs: kind=sum ..." (sums over the flagged runs).
errors_cell() {
  awk -v name="$1" '
    { runs++ }
    $3 != "-" {
      bad++
      m = split($3, pairs, ",")
      for (i = 1; i <= m; i++) {
        split(pairs[i], kv, "=")
        if (!(kv[1] in sum)) order[++kinds] = kv[1]
        sum[kv[1]] += kv[2]
      }
    }
    END {
      if (!bad) exit
      s = name " " bad "/" runs " runs:"
      for (i = 1; i <= kinds; i++) s = s " " order[i] "=" sprintf("%.0f", sum[order[i]])
      print s
    }
  ' "$2"
}

# errors_line DIR WHO...: the errors cells of the tools WHO, in that order
# (errors_cell of DIR/WHO), joined by "; "; empty when every run was clean.
errors_line() {
  local dir=$1 who
  shift
  for who in "$@"; do errors_cell "$who" "$dir/$who"; done | awk '{ s = s (NR > 1 ? "; " : "") $0 } END { print s }'
}

# round_line COUNTS STATUS BEFORE AFTER: one run's line for a table's
# files, "RATE CPU DETAIL" (as errors_cell and medians read it): COUNTS is a
# <tool>_counts line, STATUS the tool's exit status (named in DETAIL when the
# counts saw nothing wrong), BEFORE and AFTER the outputs of `times` around
# the run; CPU is the reaped children's user + system time per 1,000
# successful requests, ms ("-" when none succeeded).
round_line() {
  local count rate detail cpu
  read -r count rate detail <<< "$(with_status "$1" "$2")"
  cpu=$(awk -v a="$(children_cpu_s "$3")" -v b="$(children_cpu_s "$4")" -v n="$count" \
    'BEGIN { if (n > 0) print (b - a) * 1e6 / n; else print "-" }')
  echo "$rate $cpu $detail"
}
# medians DIR WHO...: for each tool, the medians of its runs' rates and CPU
# (DIR/WHO, lines from round_line) into DIR/WHO.rate and DIR/WHO.cpu.
medians() {
  local dir=$1 who
  shift
  for who in "$@"; do
    cut -d' ' -f1 "$dir/$who" | median > "$dir/$who.rate"
    cut -d' ' -f2 "$dir/$who" | median > "$dir/$who.cpu"
  done
}
# rounds PAIRS DIR WHO...: PAIRS rounds of one run of each tool WHO, their
# order rotated by one every round (the first round in the order given), then
# the medians (DIR/WHO.rate, DIR/WHO.cpu). A run is the caller's `run_one WHO`
# (its exit status kept) between two `times` (DIR/before, DIR/after), counted
# by the caller's `count_one WHO` (a <tool>_counts line; "0 - unreadable=1"
# when it fails): its round_line goes to DIR/WHO, emptied first.
rounds() {
  local pairs=$1 dir=$2 pair i who status counts
  shift 2
  local tools=("$@")
  for who in "${tools[@]}"; do : > "$dir/$who"; done
  for pair in $(seq "$pairs"); do
    for ((i = 0; i < ${#tools[@]}; i++)); do
      who=${tools[(pair - 1 + i) % ${#tools[@]}]}
      times > "$dir/before"
      status=0
      run_one "$who" || status=$?
      times > "$dir/after"
      counts=$(count_one "$who" || echo "0 - unreadable=1")
      round_line "$counts" "$status" "$dir/before" "$dir/after" >> "$dir/$who"
    done
  done
  medians "$dir" "$@"
}
# Children's user+sys CPU seconds in a file written by bash's `times` (which
# must run in this shell, not in a command substitution's subshell). Both
# snapshots of a run are taken before either is parsed, so that only the
# tool's own CPU time falls between them.
children_cpu_s() {
  tail -1 "$1" | awk '{ for (i = 1; i <= 2; i++) { split($i, a, "m"); s += a[1] * 60 + a[2] } print s }'
}

# Median of the numbers on stdin; "-" lines (runs that could not be
# counted) are left out; "-" when none is left.
median() {
  awk '$1 != "-"' | sort -g |
    awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
