#!/bin/bash
# Why compression costs what it does: page faults and system calls per request of each
# framework's server on /api/devices/preserialized, bare (--middleware none) and with
# compression, loaded alone (server on CPU 0, client on CPU 1, 64 connections, 6 s; perf stat
# counts the server's software events over 3 s in the middle), and actix-web and Rocket again with
# glibc's malloc told to keep 4 MiB before it returns memory to the kernel or maps a block of its
# own. Needs the release builds (make bench builds them) and perf. Prints one line per server.
set -euo pipefail
cd "$(dirname "$0")/.."
tunables="glibc.malloc.trim_threshold=4194304:glibc.malloc.mmap_threshold=4194304"
run() { # framework middleware [GLIBC_TUNABLES]
  local out; out=$(mktemp)
  env ${3:+GLIBC_TUNABLES=$3} taskset -c 0 target/release/server-"$1" --middleware "$2" >"$out" 2>&1 &
  local server=$!
  for _ in $(seq 50); do grep -q 'listening on' "$out" && break; sleep 0.1; done
  local addr; addr=$(grep -o 'http://[0-9.:]*' "$out" | head -1)
  taskset -c 1 target/release/bench-client load "$addr/api/devices/preserialized" \
    -H 'Accept-Encoding: gzip' -H 'Origin: http://localhost:3000' -c 64 -d 6s >"$out.load" 2>&1 &
  local load=$!
  sleep 2
  local events; events=$(perf stat -x, -e page-faults,raw_syscalls:sys_enter -p "$server" -- sleep 3 2>&1 | cut -d, -f1 | tr '\n' ' ')
  wait "$load"
  local rate; rate=$(grep -o '([0-9]* requests/s)' "$out.load" | head -1 | tr -dc '0-9')
  kill "$server"; wait "$server" 2>/dev/null || true
  # shellcheck disable=SC2086
  set -- "$1" "$2" "${3:+malloc tuned}" $events "$rate"
  awk -v f="$1" -v m="$2" -v t="$3" -v pf="$4" -v sc="$5" -v r="$6" 'BEGIN {
    n = r * 3; printf "%-6s %-11s %-12s %8d requests/s  %6.1f page faults  %5.2f system calls per request\n", f, m, t, r, pf / n, sc / n }'
  rm -f "$out" "$out.load"
}
for framework in actix axum rocket; do
  run "$framework" none
  run "$framework" compression
done
run actix compression "$tunables"
run rocket compression "$tunables"
