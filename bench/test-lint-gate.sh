#!/usr/bin/env bash
# `make test` checks clippy's lints while it builds the tests, with clippy-driver as Cargo's
# workspace wrapper (the Makefile's LINTED). This proves, before the build, that the wrapper
# as the Makefile sets it fails a lint: a file with one clippy warning (len_zero) must not
# compile under it, and compiles under plain rustc. Run as `$(LINTED) bash bench/test-lint-gate.sh`.
set -euo pipefail
: "${RUSTC_WORKSPACE_WRAPPER:?run through the Makefile: make test}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'fn main() {\n    let v: Vec<u8> = Vec::new();\n    if v.len() == 0 {\n        println!("empty");\n    }\n}\n' >"$tmp/probe.rs"
rustc --edition 2024 --crate-type bin -o "$tmp/plain" "$tmp/probe.rs" ||
  { echo "error: the probe does not compile under plain rustc" >&2; exit 1; }
if out=$("$RUSTC_WORKSPACE_WRAPPER" rustc --edition 2024 --crate-type bin -o "$tmp/linted" "$tmp/probe.rs" 2>&1); then
  echo "error: $RUSTC_WORKSPACE_WRAPPER with CLIPPY_ARGS='${CLIPPY_ARGS:-}' let a clippy warning through: make test would lint nothing" >&2
  exit 1
fi
case "$out" in
  *len_zero* | *len-zero*) echo "lint gate: $RUSTC_WORKSPACE_WRAPPER fails clippy's warnings (probe refused by len_zero)" ;;
  *) echo "error: the probe failed for another reason than its lint: $out" >&2; exit 1 ;;
esac
