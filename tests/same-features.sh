#!/usr/bin/env bash
# Fails when a dev-dependency changes the features of a crate the library also uses.
# Then `cargo build` (the library alone) and `cargo test` / `cargo run --example` build
# that crate with other features, and each switch between them rebuilds the library
# (make run -> make demo -> make run). Compares each crate of the library's own tree
# (cargo tree -e no-dev) with the same crate in the full tree, separately for crates
# built for the target and for the host (build scripts, proc macros and their
# dependencies), since cargo resolves their features apart.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cargo="${CARGO:-cargo}"
lib=$("$cargo" tree --locked --no-dedupe -e no-dev -f '{p} {f}')
all=$("$cargo" tree --locked --no-dedupe -f '{p} {f}')
LIB="$lib" ALL="$all" python3 - <<'PY'
import os, sys

def units(tree: str) -> set[tuple[str, str]]:
    """(host|target, "crate version features") of every line of a cargo tree."""
    out, parents, headings = set(), {}, {}
    for line in tree.splitlines():
        body = line.lstrip("│├└─  ")
        depth = (len(line) - len(body)) // 4
        headings = {d: h for d, h in headings.items() if d <= depth}
        if body.startswith("["):  # [build-dependencies] / [dev-dependencies]: of the children
            headings[depth + 1] = body  # of the node above, which are one level deeper
            continue
        body = body.removesuffix(" (*)").strip()
        parent_host = parents.get(depth - 1, False)
        host = parent_host or "(proc-macro)" in body or headings.get(depth) == "[build-dependencies]"
        parents = {d: h for d, h in parents.items() if d < depth}
        parents[depth] = host
        out.add(("host" if host else "target", body))
    return out

lib, full = units(os.environ["LIB"]), units(os.environ["ALL"])
changed = sorted(lib - full)
if changed:
    print("error: the dev-dependencies change the features of these library dependencies "
          "(as the library alone builds them):", file=sys.stderr)
    for kind, crate in changed:
        print(f"  {crate} [{kind}]", file=sys.stderr)
    print("each switch between cargo build and cargo test / --example would rebuild them and the "
          "library: see [dev-dependencies] in Cargo.toml", file=sys.stderr)
    sys.exit(1)
print(f"same features: the library's {len(lib)} crate builds are the same for cargo build, "
      "cargo test and the examples")
PY
