#!/usr/bin/env bash
# Fails when a dev-dependency changes the features of a crate the library also uses.
# Then `cargo build` (the library alone) and `cargo test` / `cargo run --example` build
# that crate with different features, and each switch between them rebuilds the library
# (make run -> make demo -> make run). Compares the crates and features of the library's
# own dependency tree (cargo tree -e no-dev) with the same crates in the full tree.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cargo="${CARGO:-cargo}"
lib=$("$cargo" tree --locked -e no-dev -f '{p} {f}' --prefix none | sed 's/ (\*)$//' | LC_ALL=C sort -u)
all=$("$cargo" tree --locked -f '{p} {f}' --prefix none | sed 's/ (\*)$//' | LC_ALL=C sort -u)
diff=$(LC_ALL=C comm -23 <(printf '%s\n' "$lib") <(printf '%s\n' "$all"))
if [ -n "$diff" ]; then
  echo "error: the dev-dependencies change the features of these library dependencies (crate, features without dev-dependencies):" >&2
  sed 's/^/  /' <<<"$diff" >&2
  echo "each switch between cargo build and cargo test / --example would rebuild the library: see the comment in Cargo.toml [dev-dependencies]" >&2
  exit 1
fi
echo "same features: the library's $(printf '%s\n' "$lib" | wc -l) crates build alike for cargo build, cargo test and the examples"
