# shellcheck shell=bash
# What bench/profiler-cost.sh and bench/profiler-toggle.sh share: the builds
# they measure, the candidates' syntax and their order in each round, and
# starting one server of the profiling build on CPU 0. Sourced from the
# workspace root.

# perf (Debian's linux-perf), the release client and the profiling servers
# (with the frame pointers the suite builds them with).
build_profiled() {
  command -v perf >/dev/null || { apt-get update -qq && apt-get install -y -qq linux-perf; }
  cargo build --locked --release -q -p bench-client
  RUSTFLAGS="-C force-frame-pointers=yes" \
    cargo build --locked --profile profiling -q -p server-actix -p server-axum -p server-rocket
}

# parse_candidate NAME=CALLGRAPH@HZ:WHERE SHM_DIR: sets name, call_graph, freq
# and dir (WHERE "shm": SHM_DIR, "disk": TMPDIR or /tmp); "none": name only.
parse_candidate() {
  name=${1%%=*} call_graph= freq=0 dir=
  [ "$1" = none ] && return 0
  local spec=${1#*=} rest
  call_graph=${spec%@*}; rest=${spec#*@}; freq=${rest%:*}
  dir=${TMPDIR:-/tmp}; [ "${rest#*:}" = shm ] && dir=$2
  return 0
}

# start_server FRAMEWORK OUTFILE: the profiling build pinned to CPU 0 with one
# worker, as the suite starts it; sets server_pid and url (ROUTE's).
start_server() {
  taskset -c 0 "target/profiling/server-$1" --workers 1 > "$2" 2>&1 &
  server_pid=$!
  for _ in $(seq 100); do grep -q listening "$2" 2>/dev/null && break; sleep 0.05; done
  url="http://$(sed -n 's|listening on http://||p' "$2")$route"
}

# start_candidate I ROUND FRAMEWORK: sets candidate to candidate I of round
# ROUND (the candidates, $candidates, rotated by one every round, so that each
# round runs every one once), parses it (parse_candidate, SHM_DIR $shm) and
# starts FRAMEWORK's server (start_server, its output in $tmp/server.out).
start_candidate() {
  candidate=${candidates[$((($1 + $2) % ${#candidates[@]}))]}
  parse_candidate "$candidate" "$shm"
  start_server "$3" "$tmp/server.out"
}

# user + system ticks of process $1 (fields 14 and 15 of /proc/PID/stat).
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
