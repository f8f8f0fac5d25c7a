# Sourced by the bench scripts that load the client's built-in canned
# responder: a temporary folder ($tmp, removed at exit) and the responder of
# the client binary $1 pinned to CPU 0 ($responder_pid, stopped at exit),
# its address in $addr.
tmp=$(mktemp -d)
responder_pid=
cleanup() { [ -n "$responder_pid" ] && kill "$responder_pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
taskset -c 0 "$1" responder > "$tmp/responder.out" &
responder_pid=$!
for _ in $(seq 50); do grep -q listening "$tmp/responder.out" 2>/dev/null && break; sleep 0.1; done
addr=$(sed -n 's|listening on http://||p' "$tmp/responder.out")
[ -n "$addr" ] || { echo "error: the responder did not start" >&2; exit 1; }
