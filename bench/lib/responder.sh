# Sourced by the bench scripts that load the client's built-in canned
# responder: a temporary folder ($tmp, removed at exit) and the responder of
# the client binary $1 pinned to CPU 0 ($responder_pid, stopped at exit),
# its address in $addr; `plaintext_load BIN JSON [WRAPPER…]` runs BIN's
# `load` on its /plaintext for $duration_s seconds, pinned to CPU 1 (under
# WRAPPER, e.g. valgrind), the report in JSON, its exit status in
# JSON.status (a failed run goes on); `alternate N RUN` calls `RUN WHO BIN I`
# for I in 1..N, WHO old ($old) then new ($new), the order reversed every
# other I so that a drift favours neither, each run's report in
# $tmp/WHO-I.json; then it names the runs `flagged_runs` flags, in
# $tmp/flagged and in an ERRORS line on stderr (their figures stay in).
# shellcheck source=bench/lib/count.sh
. "$(dirname "${BASH_SOURCE[0]}")/count.sh"
tmp=$(mktemp -d)
responder_pid=
cleanup() { [ -n "$responder_pid" ] && kill "$responder_pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
taskset -c 0 "$1" responder > "$tmp/responder.out" &
responder_pid=$!
for _ in $(seq 50); do grep -q listening "$tmp/responder.out" 2>/dev/null && break; sleep 0.1; done
addr=$(sed -n 's|listening on http://||p' "$tmp/responder.out")
[ -n "$addr" ] || { echo "error: the responder did not start" >&2; exit 1; }
plaintext_load() {
  local bin=$1 json=$2 status
  shift 2
  taskset -c 1 "$@" "$bin" load "http://$addr/plaintext" --connections 64 --duration "${duration_s}s" --warmup 1s \
    --json "$json" > /dev/null && status=0 || status=$?
  echo "$status" > "$json.status"
}
# flagged_runs JSON…: the name (without .json) of each run that with_status
# flags (bench/lib/count.sh: a failure of any kind, an incomplete run, no
# success, an exit status not 0), one a line.
flagged_runs() {
  local f detail
  for f in "$@"; do
    read -r _ _ detail <<< "$(client_run "$f" "$(cat "$f.status")")"
    [ "$detail" = - ] || basename "$f" .json
  done
}
alternate() {
  for i in $(seq "$1"); do
    if [ $((i % 2)) -eq 1 ]; then order="old new"; else order="new old"; fi
    for who in $order; do
      if [ "$who" = old ]; then "$2" old "$old" "$i"; else "$2" new "$new" "$i"; fi
    done
  done
  flagged_runs "$tmp"/old-*.json "$tmp"/new-*.json > "$tmp/flagged"
  if [ -s "$tmp/flagged" ]; then
    echo "ERRORS in runs $(paste -sd" " "$tmp/flagged") (a failure, a short or incomplete run, or an exit status not 0)" >&2
  fi
}
