# shellcheck shell=bash
# What the bench scripts that start the frameworks' servers one at a time
# share (bench/client-vs-wrk.sh, bench/tls.sh, bench/user-kernel.sh,
# bench/h2-framing.sh, bench/h2load-compare.sh): their arguments, build, a
# temporary folder, the stop of the server running, and the counts of
# bench/lib/count.sh. Sourced from the workspace root; defines functions only.
# shellcheck source=bench/lib/count.sh
. bench/lib/count.sh

# rounds_args NAME [OUT] [PAIRS] [DURATION_S]: a script's arguments, as out
# (made; a new /tmp/NAME.XXXXXX when not given), pairs (3) and duration_s
# (5); profile is $PROFILE, release when unset.
rounds_args() {
  local name=$1
  shift
  out=${1:-$(mktemp -d "/tmp/$name.XXXXXX")}
  pairs=${2:-3}
  duration_s=${3:-5}
  profile=${PROFILE:-release}
  mkdir -p "$out"
}

# build_servers [CARGO_FLAG…]: bench-client and the three servers,
# `cargo build --locked CARGO_FLAG… -q` (e.g. --release).
build_servers() {
  cargo build --locked "$@" -q -p bench-client -p server-actix -p server-axum -p server-rocket
}

# build_profile [CARGO_ARG…]: unless NO_BUILD=1, build_servers in $profile
# (release, or debug: cargo's default), then, given CARGO_ARGs,
# `cargo build --locked CARGO_ARG…` in it too (release is set to the
# profile's cargo flag). Sets bin (the build's folder: CARGO_TARGET_DIR or
# target, then $profile) and client, built or not.
build_profile() {
  if [ "${NO_BUILD:-0}" != 1 ]; then
    release=(); [ "$profile" = release ] && release=(--release)
    build_servers "${release[@]}"
    [ $# -eq 0 ] || cargo build --locked "${release[@]}" "$@"
  fi
  bin=${CARGO_TARGET_DIR:-target}/$profile
  client=$bin/bench-client
}

# scratch: a temporary folder ($tmp) and no server yet ($server_pid empty,
# the caller sets it to the server it starts); at exit (trap cleanup EXIT)
# the server is killed, every child waited for and the folder removed.
scratch() {
  tmp=$(mktemp -d)
  server_pid=
  trap cleanup EXIT
}
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; }

# stop_server: kills the server $server_pid (a failed kill fails the
# script, under set -e), waits for it and empties server_pid.
stop_server() { kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=; }
