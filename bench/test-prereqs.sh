#!/usr/bin/env bash
# bench/prereqs.sh passes here and names each missing tool in one line with
# its install command, exit 2: a PATH without a C compiler, without python3
# (for `make test`), with a rustc older than the workspace's rust-version.
set -euo pipefail
cd "$(dirname "$0")/.."
bash bench/prereqs.sh test
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A PATH of links to everything the check reads but the tool taken away.
without() {
  rm -rf "$tmp/bin" && mkdir "$tmp/bin"
  for t in cargo rustc sed awk sort head cc python3 valgrind dirname; do
    [ "$t" = "$1" ] && continue
    p=$(command -v "$t" || true)
    [ -n "$p" ] && ln -s "$p" "$tmp/bin/$t"
  done
  return 0
}
expect() { # expect NEED TOOL TEXT
  without "$2"
  set +e
  out=$(PATH="$tmp/bin" "$BASH" bench/prereqs.sh "$1" 2>&1)
  rc=$?
  set -e
  [ "$rc" = 2 ] || { echo "error: without $2, prereqs.sh $1 exited $rc: $out" >&2; exit 1; }
  [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] || { echo "error: not one line: $out" >&2; exit 1; }
  case "$out" in *"$3"*) ;; *) echo "error: without $2: $out" >&2; exit 1 ;; esac
}
expect bench cc "apt-get install -y build-essential"
expect test python3 "apt-get install -y python3"
expect count valgrind "apt-get install -y valgrind"
# An old rustc: a stand-in printing 1.63.0, Debian 12's.
without rustc
printf '#!/bin/sh\necho "rustc 1.63.0 (4b91a6ea7 2022-08-08)"\n' > "$tmp/bin/rustc" && chmod +x "$tmp/bin/rustc"
set +e
out=$(PATH="$tmp/bin" "$BASH" bench/prereqs.sh bench 2>&1)
rc=$?
set -e
[ "$rc" = 2 ] && case "$out" in *"rustc 1.88 or newer (this one is 1.63.0)"*) true ;; *) false ;; esac ||
  { echo "error: an old rustc: $rc $out" >&2; exit 1; }
echo "ok    bench/prereqs.sh names a missing C compiler, python3, valgrind and an old rustc in one line, exit 2"
