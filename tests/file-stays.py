#!/usr/bin/env python3
"""File stays of one HOT.VIEW: how often the view path moves between source files.

Run by hand or by `make stays` (not part of `make test`):

    cargo build                        # unoptimized: no inlining hides a call
    python3 tests/file-stays.py [--server redis-server] [--module target/debug/libhotrank.so]
                                [--case plain|trending|all] [--verbose]

What it does (docs/design.md, "File stays", has the definition):
- starts the server with the module, fills a board (articles viewed at fixed
  `AT` times), then attaches gdb (batch, Python: this same file, run inside
  gdb) with a breakpoint on the entry of every function of the crate whose
  source file is under `src/`;
- sends one steady-state `HOT.VIEW` (an article seen before, a new visitor,
  one second after the board's last view: no `lastView`, record or upkeep
  write) and records, at each breakpoint hit inside the handler
  (`view_impl`, from its entry to its exit), the crate's frames of the stack;
- rebuilds from consecutive stacks the sequence of files execution is in,
  returns included, and prints its stays, distinct files, returns and
  climbs. Case `trending` does the same on a board with a trending ranking.

Counted files are the glue (`src/commands/*`, but `mod.rs`, the glue's floor
that every handler stands on, and `name_cache.rs`) and the core (`src/hot/*`,
`src/rank/*`); time in any other file of `src/` (leaf helpers: `ffi.rs`,
`keys.rs`, `parse.rs`, `detmath/`, …) counts as part of its caller's stay.
The numbers with `mod.rs` counted too are printed beside them, and a leaf
seen calling a counted file is reported (`leaf calls up`).

Needs gdb, redis-py (system python3) and a server binary. Exit 0 with the
numbers, 1 on a failure (one line), 2 on a bad option.
"""

import argparse
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time

HANDLER = "hotrank::commands::view::view_impl"
# The glue's own floor: `mod.rs` (BoardCtx: naming, ACL checks, opening;
# Args; each write's exact replicated effect) and the name cache. They call
# no counted file during a view (checked: see `leaf_calls_up`), as ffi.rs.
LEAF_NOT_COUNTED = ["src/commands/mod.rs", "src/commands/name_cache.rs"]


def counted(path):
    """Whether a file (relative to the crate, `src/...`) counts as a stay of its own."""
    if path in LEAF_NOT_COUNTED:
        return False
    return path.startswith(("src/commands/", "src/hot/", "src/rank/"))


def is_core(path):
    return path.startswith(("src/hot/", "src/rank/"))


def is_glue(path):
    return path.startswith("src/commands/")


# ---------------------------------------------------------------------------
# The gdb side: run inside gdb (`gdb -batch -p PID -x tests/file-stays.py`).
# ---------------------------------------------------------------------------


def gdb_main():
    import gdb  # noqa: F401 (only inside gdb)

    root = os.environ["STAYS_ROOT"].rstrip("/") + "/"
    funcs = json.load(open(os.environ["STAYS_FUNCS"]))
    out_path = os.environ["STAYS_OUT"]
    ready_path = os.environ["STAYS_READY"]
    gdb.execute("set pagination off")
    gdb.execute("set confirm off")
    # Thousands of breakpoints: keep them in memory while stopped, or gdb
    # removes and inserts every one of them at each hit.
    gdb.execute("set breakpoint always-inserted on")
    base = None
    for line in gdb.execute("info proc mappings", to_string=True).splitlines():
        parts = line.split()
        if parts and parts[-1] == os.environ["STAYS_SO"] and len(parts) >= 5:
            start, offset = int(parts[0], 16), int(parts[3], 16)
            if offset == 0:
                base = start
                break
    if base is None:
        raise SystemExit("module not mapped in the server")

    stacks = []
    state = {"on": False, "done": False}

    def rel(path):
        if path and path.startswith(root):
            return path[len(root):]
        return None

    def stack():
        """The crate's frames, outermost (the handler) first: (id, file, name)."""
        frames = []
        f = gdb.newest_frame()
        while f is not None:
            sal = f.find_sal()
            path = rel(sal.symtab.fullname()) if sal.symtab else None
            name = f.name() or "?"
            if path is not None and path.startswith("src/"):
                older = f.older()
                # A frame instance: its function and its caller's stack
                # pointer (the frame's CFA), the same at its entry and later.
                ident = (name, int(older.read_register("rsp")) if older else 0)
                frames.append((ident, path, name))
            if name == HANDLER:
                return list(reversed(frames))
            f = f.older()
        return None

    class Entry(gdb.Breakpoint):
        def stop(self):
            if state["done"]:
                return False
            s = stack()
            if s is None:
                return False
            first = not state["on"] and len(s) == 1 and s[0][2] == HANDLER
            state["on"] = state["on"] or first
            if state["on"]:
                stacks.append([[list(i), p, n] for i, p, n in s])
            # Stop once at the handler's entry, to set the breakpoint at its exit.
            return first

    class Exit(gdb.FinishBreakpoint):
        def stop(self):
            state["done"] = True
            with open(out_path, "w") as fh:
                json.dump(stacks, fh)
            return True

        def out_of_scope(self):
            pass

    for addr in funcs:
        Entry("*0x%x" % (base + addr), internal=True)
    open(ready_path, "w").close()
    exit_set = False
    while not state["done"]:
        gdb.execute("continue")
        if state["on"] and not exit_set:
            Exit(gdb.newest_frame(), internal=True)
            exit_set = True
    gdb.execute("detach")


# ---------------------------------------------------------------------------
# The driver.
# ---------------------------------------------------------------------------


def crate_functions(so, root):
    """Addresses (relative to the load base) of the functions whose source is
    under root/src (`nm -l`, about a minute; kept next to the module, for
    that build only)."""
    st = os.stat(so)
    cache = f"{so}.stays-{st.st_mtime_ns}-{st.st_size}.json"
    if os.path.exists(cache):
        return json.load(open(cache))
    out = subprocess.run(
        ["nm", "--defined-only", "-l", so], capture_output=True, text=True, check=True
    ).stdout
    src = os.path.join(root, "src") + "/"
    addrs = set()
    for line in out.splitlines():
        m = re.match(r"([0-9a-f]+) [tTwW] \S+\t(.+):\d+$", line)
        if m and m.group(2).startswith(src):
            addrs.add(int(m.group(1), 16))
    for old in os.listdir(os.path.dirname(so)):
        if old.startswith(os.path.basename(so) + ".stays-"):
            os.remove(os.path.join(os.path.dirname(so), old))
    json.dump(sorted(addrs), open(cache, "w"))
    return sorted(addrs)


def free_port():
    # Below the ephemeral range, as the tests pick.
    for _ in range(100):
        port = 12000 + int.from_bytes(os.urandom(2), "little") % 20000
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
                return port
            except OSError:
                continue
    raise SystemExit("no free port")


def sequence(stacks):
    """The files execution is in, returns included, each with the function
    that entered it (or `<ret`), consecutive repeats merged: the stays."""

    def eff(s):
        files, cur = [], None
        for _, path, _ in s:
            cur = path if counted(path) or cur is None else cur
            files.append(cur)
        return files

    seq = []

    def visit(path, why):
        if not seq or seq[-1][0] != path:
            seq.append((path, why))

    prev = None
    for s in stacks:
        e = eff(s)
        if prev is None:
            visit(e[0], s[0][2])
            for k in range(1, len(s)):
                visit(e[k], s[k][2])
        else:
            pe = eff(prev)
            c = 0
            while c < min(len(prev), len(s)) and prev[c][0] == s[c][0]:
                c += 1
            for k in range(len(prev) - 1, c - 1, -1):
                if k >= 1:
                    visit(pe[k - 1], "<ret " + prev[k][2])
            for k in range(c, len(s)):
                visit(e[k], s[k][2])
        prev = s
    if prev is not None:
        pe = eff(prev)
        for k in range(len(prev) - 1, 0, -1):
            visit(pe[k - 1], "<ret " + prev[k][2])
    return seq


def leaf_calls_up(stacks):
    """Leaf files seen calling a counted file (they should not: then they
    are not leaves), as `leaf > counted` pairs."""
    bad = set()
    for st in stacks:
        for (_, a, _), (_, b, _) in zip(st, st[1:]):
            if a.startswith("src/") and not counted(a) and counted(b) and a != b:
                bad.add(f"{a} > {b}")
    return sorted(bad)


def measures(seq):
    files = [p for p, _ in seq]
    stays = len(files)
    distinct = len(set(files))
    climbs = sum(1 for a, b in zip(files, files[1:]) if is_core(a) and is_glue(b))
    core_entries = sum(1 for a, b in zip(files, files[1:]) if is_glue(a) and is_core(b))
    return {
        "glue_stays": sum(1 for p in files if is_glue(p)),
        "stays": stays,
        "files": distinct,
        "returns": stays - distinct,
        "climbs": climbs,
        "core_entries": core_entries,
    }


def at(ms):
    """`AT`'s text (unix seconds, to the millisecond) of a time in unix ms."""
    return f"{ms // 1000}.{ms % 1000:03d}"


def run_case(args, case, funcs_path, workdir):
    port = free_port()
    server = subprocess.Popen(
        [args.server, "--port", str(port), "--dir", workdir, "--save", "", "--appendonly", "no",
         "--loadmodule", os.path.abspath(args.module)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        import redis

        r = redis.Redis(port=port)
        for _ in range(200):
            try:
                r.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.05)
        if int(r.info("server")["process_id"]) != server.pid:
            raise SystemExit(f"port {port} is answered by another server")
        # Fixed view times: a minute-aligned hour ago, then the measured view
        # one second after the board's last one (same minute: no record or
        # lastView write; the article is on the board: no upkeep). One dedup
        # shard, so the pair's shard string exists (as on a busy board);
        # the visitor has viewed other articles (its counter exists), not
        # this one (the HyperLogLog takes it).
        t0 = (int(time.time() * 1000) // 60_000) * 60_000 - 3_600_000 + 5_000
        key = "hot:{t}" if case == "trending" else "hot:{b}"
        create = ["HOT.CREATE", key, "DEDUP-SHARDS", "1"]
        if case == "trending":
            create += ["TRENDING-HALF-LIFE", "6h"]
        r.execute_command(*create)
        for i in range(20):
            for a in range(5):
                if a != 1 or i < 10:
                    r.execute_command("HOT.VIEW", key, f"art:{a}", f"vis:{i}", "AT", at(t0 + i))
        measured = ("HOT.VIEW", key, "art:1", "vis:15", "AT", at(t0 + 1_000))
        out = os.path.join(workdir, f"stacks-{case}.json")
        ready = os.path.join(workdir, f"ready-{case}")
        env = dict(os.environ, STAYS_ROOT=os.path.abspath(args.root), STAYS_FUNCS=funcs_path,
                   STAYS_OUT=out, STAYS_READY=ready, STAYS_SO=os.path.realpath(args.module))
        gdb = subprocess.Popen(
            ["gdb", "-nx", "-batch", "-p", str(server.pid), "-x", os.path.abspath(__file__)],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )
        while not os.path.exists(ready):
            if gdb.poll() is not None:
                raise SystemExit("gdb stopped before the view: " + gdb.stdout.read()[-2000:])
            time.sleep(0.2)
        reply = r.execute_command(*measured)
        log = gdb.communicate(timeout=600)[0]
        if not os.path.exists(out):
            raise SystemExit("gdb recorded nothing: " + log[-2000:])
        status = reply[3].decode() if isinstance(reply[3], bytes) else str(reply[3])
        if status != "counted":
            raise SystemExit(f"the measured view was {status}, not counted")
        stacks = json.load(open(out))
        return stacks, reply
    finally:
        server.kill()
        server.wait()


def main():
    p = argparse.ArgumentParser(description="File stays of one HOT.VIEW (see docs/design.md).")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    p.add_argument("--server", default="redis-server")
    p.add_argument("--module", default=os.path.join(root, "target/debug/libhotrank.so"))
    p.add_argument("--root", default=root, help="the crate's root (its src/ is measured)")
    p.add_argument("--case", choices=["plain", "trending", "all"], default="all")
    p.add_argument("--verbose", action="store_true", help="print each stay's entering function")
    p.add_argument("--json", action="store_true", help="print the numbers as JSON")
    p.add_argument("--leaf", action="append", default=[], metavar="FILE",
                   help="count FILE (src/...) as a leaf too, to compare definitions")
    args = p.parse_args()
    LEAF_NOT_COUNTED.extend(args.leaf)
    if not os.path.exists(args.module):
        print(f"file-stays: no module at {args.module} (run cargo build)", file=sys.stderr)
        return 1
    try:
        funcs = crate_functions(args.module, os.path.abspath(args.root))
        with tempfile.TemporaryDirectory(prefix="stays-") as workdir:
            funcs_path = os.path.join(workdir, "funcs.json")
            json.dump(funcs, open(funcs_path, "w"))
            cases = ["plain", "trending"] if args.case == "all" else [args.case]
            results = {}
            for case in cases:
                stacks, _ = run_case(args, case, funcs_path, workdir)
                seq = sequence(stacks)
                m = measures(seq)
                m["hits"] = len(stacks)
                # The same with mod.rs counted as a glue file of its own.
                saved = LEAF_NOT_COUNTED[:]
                LEAF_NOT_COUNTED.remove("src/commands/mod.rs")
                m["with_mod"] = measures(sequence(stacks))
                bad = leaf_calls_up(stacks)
                LEAF_NOT_COUNTED[:] = saved
                m["leaf_calls_up"] = bad
                results[case] = m
                if args.json:
                    continue
                w = m["with_mod"]
                print(f"{case}: {m['stays']} stays in {m['files']} files, {m['returns']} returns, "
                      f"{m['climbs']} climbs (core -> glue), {m['core_entries']} core entries, "
                      f"{m['glue_stays']} stays in glue files; "
                      f"counting commands/mod.rs too: {w['stays']} stays in {w['files']} files, "
                      f"{w['returns']} returns, {w['climbs']} climbs "
                      f"({m['hits']} function entries, {len(funcs)} breakpoints)")
                for pair in bad:
                    print(f"  leaf calls up: {pair}")
                if args.verbose:
                    for path, why in seq:
                        print(f"  {path:32} {why}")
                else:
                    print("  " + " > ".join(p.removeprefix("src/").removesuffix(".rs") for p, _ in seq))
            if args.json:
                print(json.dumps(results))
    except (SystemExit, OSError, subprocess.SubprocessError) as e:
        print(f"file-stays: {e}", file=sys.stderr)
        return 1
    except Exception as e:  # a server error reply, a lost connection
        print(f"file-stays: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    return 0


def inside_gdb():
    try:
        import gdb  # noqa: F401
    except ImportError:
        return False
    return True


if __name__ == "__main__":
    if inside_gdb():
        gdb_main()
    else:
        sys.exit(main())
