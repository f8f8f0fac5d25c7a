#!/usr/bin/env bash
# What `make bench` and `make test` need on a fresh machine, checked first:
# each missing tool named in one line with the command that installs it
# (Debian 12), exit 2, instead of a failure deep in a build.
# Usage: bench/prereqs.sh bench|test|count
set -u
need=${1:-bench}
missing() { echo "error: $1 is missing: $2" >&2; exit 2; }
command -v cargo >/dev/null || missing "cargo (the Rust toolchain)" \
  "curl https://sh.rustup.rs -sSf | sh   (Debian's rustc is older than the 1.88 this workspace needs)"
want=$(sed -n 's/^rust-version *= *"\(.*\)"/\1/p' "$(dirname "$0")/../Cargo.toml")
have=$(rustc --version 2>/dev/null | awk '{print $2}')
if [ -n "$want" ] && [ "$(printf '%s\n%s\n' "$want" "$have" | sort -V | head -1)" != "$want" ]; then
  missing "rustc $want or newer (this one is ${have:-none})" "rustup update stable"
fi
command -v cc >/dev/null || missing "a C compiler (linking, ring, the bundled SQLite)" "apt-get install -y build-essential"
if [ "$need" = test ]; then
  cargo fmt --version >/dev/null 2>&1 || missing "rustfmt" "rustup component add rustfmt"
  cargo clippy --version >/dev/null 2>&1 || missing "clippy" "rustup component add clippy"
  command -v python3 >/dev/null || missing "python3 (the tests' independent checkers)" "apt-get install -y python3"
fi
if [ "$need" = count ]; then
  command -v valgrind >/dev/null || missing "valgrind (count runs the servers under callgrind)" "apt-get install -y valgrind"
  [ -n "${NO_PERF:-}" ] || command -v perf >/dev/null ||
    missing "perf (count reads system calls, context switches and page faults with perf stat; NO_PERF=1 counts without)" \
      "apt-get install -y linux-perf"
fi
exit 0
