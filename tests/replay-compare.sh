#!/usr/bin/env bash
# Byte-for-byte replay comparison of two builds of the module (`make replay-compare`).
#
# The acceptance test of a refactor: "a replay of the NASA log gives the same
# HOT.TOP, byte for byte, before and after". This script
#   1. builds the module at BASE in a temporary git worktree (its own target dir,
#      target/replay-compare/base-target, kept between runs so that only hotrank
#      itself is rebuilt; the worktree is removed on exit, failure included), and
#      builds the current tree (`cargo build --release`: a no-op when it is fresh);
#   2. for each of the two .so files ("before" = BASE, "after" = the current tree)
#      starts a private server (HOTRANK_SERVER, default redis-server; free port,
#      --save '' --appendonly no, its own temp dir) with that module loaded, and
#      replays the log into it with examples/replay.rs: the SAME client binary,
#      built once from the current tree, for both runs. The client sends every
#      view as `HOT.VIEW hot:{nasa} <path> <host> AT <log time>` and no
#      HOT.PUBLISH (an article is published at its first counted view), so the
#      state depends on the log alone;
#   3. captures the raw RESP bytes of the replies (a plain socket client, below)
#      of HOT.TOP in many shapes, HOT.STATS of every article, the board ZSET, its
#      publish-time index and board record, under RESP2 and some under RESP3;
#   4. compares "before" with "after" file by file with cmp, prints a verdict,
#      and exits 1 on any difference (0 when everything is identical, 2 on an
#      error: a failed build, a server that does not start, an error reply).
#
# Determinism: every HOT.TOP and HOT.STATS carries `AT` (without it they score
# at the server clock). The AT times are derived from the log (T = its last
# time stamp), never from the clock. What the server clock still touches does
# not reach the replies: dedup strings and per-article keys expire in server
# time (two dedup windows, 90 days), far beyond a replay of a few seconds, and
# the board (381 articles) is never trimmed (max-articles 1000). Left out on
# purpose: the client's port, elapsed time and throughput lines, INFO
# (counters, timings, memory), TTLs (server clock), HOT.VIEW without AT, and
# DUMP payloads (RDB version and HyperLogLog encoding are not replies a
# refactor promises to keep). The HOT.VIEW replies themselves are compared
# only through the client's report (counted / duplicate / suspicious totals,
# its top 20) and the state they leave behind.
#
# Env: BASE (default 0064085, the last commit before the refactor), LOG (default
# data/nasa_19950801.tsv.gz, relative to the repository root),
# HOTRANK_SERVER (redis-server or valkey-server binary), REPLAY_COMPARE_OUT (default
# target/replay-compare/<server name>: the captures, before/ and after/).
# A missing log prints a SKIP line and exits 0.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

BASE="${BASE:-0064085}"
LOG="${LOG:-data/nasa_19950801.tsv.gz}"
SERVER="${HOTRANK_SERVER:-redis-server}"
PYTHON="${PYTHON:-python3}"
CARGO="${CARGO:-cargo}"
BOARD='hot:{nasa}' # the board examples/replay.rs writes
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
OUT="${REPLAY_COMPARE_OUT:-$ROOT/target/replay-compare/$(basename "$SERVER")}"
BASE_TARGET="$ROOT/target/replay-compare/base-target"

say() { printf '[replay-compare] %s\n' "$*"; }
die() { printf '[replay-compare] error: %s\n' "$*" >&2; exit 2; }

if [ ! -f "$LOG" ]; then
  say "NASA log not found at $LOG (relative to $ROOT)"
  echo "SKIP: replay-compare (no log to replay)"
  exit 0
fi
LOG="$(cd "$(dirname "$LOG")" && pwd)/$(basename "$LOG")"
command -v "$SERVER" >/dev/null 2>&1 || die "server binary not found: $SERVER (set HOTRANK_SERVER)"
command -v "$PYTHON" >/dev/null 2>&1 || die "$PYTHON not found"
base_sha="$(git rev-parse --verify --quiet "${BASE}^{commit}")" || die "BASE $BASE is not a commit"
head_sha="$(git rev-parse HEAD)"
dirty=""
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then dirty=" + uncommitted changes"; fi

TMP="$(mktemp -d "${TMPDIR:-/tmp}/replay-compare.XXXXXX")"
WT="$TMP/base-worktree"
PIDS=()
cleanup() {
  local rc=$?
  for pid in "${PIDS[@]}"; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  if [ -d "$WT" ]; then
    git -C "$ROOT" worktree remove --force "$WT" >/dev/null 2>&1 || true
  fi
  git -C "$ROOT" worktree prune >/dev/null 2>&1 || true
  rm -rf "$TMP"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- RESP helper: raw replies, byte for byte ---------------------------------
cat >"$TMP/resp.py" <<'PY'
"""A plain socket RESP client: sends commands, keeps every reply's raw bytes."""
import os, socket, sys, time

def encode(args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)

class Conn:
    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=60)
        self.buf = b""

    def _fill(self):
        d = self.s.recv(1 << 16)
        if not d:
            raise EOFError("connection closed by the server")
        self.buf += d

    def _end(self, pos):
        """End offset of the one reply that starts at pos, reading as needed."""
        while len(self.buf) <= pos:
            self._fill()
        while (e := self.buf.find(b"\r\n", pos)) < 0:
            self._fill()
        t, head, p = self.buf[pos:pos + 1], self.buf[pos + 1:e], e + 2
        if t in (b"+", b"-", b":", b",", b"_", b"#", b"("):
            return p
        if t in (b"$", b"=", b"!"):
            n = int(head)
            if n < 0:
                return p
            while len(self.buf) < p + n + 2:
                self._fill()
            return p + n + 2
        if t in (b"*", b"~", b">", b"%", b"|"):
            n = int(head)
            for _ in range(max(n, 0) * (2 if t in (b"%", b"|") else 1)):
                p = self._end(p)
            return self._end(p) if t == b"|" else p  # an attribute precedes its reply
        raise ValueError("not a RESP reply: %r" % self.buf[pos:pos + 40])

    def call(self, *args):
        self.s.sendall(encode(args))
        end = self._end(0)
        raw, self.buf = self.buf[:end], self.buf[end:]
        return raw

def bulk_array(raw):
    """A RESP2 array of bulk strings (ZRANGE, HOT.TOP) -> list of bytes."""
    out = []
    if not raw.startswith(b"*"):
        raise ValueError("not an array: %r" % raw[:80])
    rest = raw[raw.index(b"\r\n") + 2:]
    while rest:
        assert rest.startswith(b"$"), rest[:40]
        e = rest.index(b"\r\n")
        n = int(rest[1:e])
        out.append(rest[e + 2:e + 2 + n])
        rest = rest[e + 2 + n + 2:]
    return out

def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False

def ping(port, pid, seconds):
    deadline = time.time() + seconds
    while True:
        if not alive(pid):
            sys.exit("the server (pid %d) exited before answering PING" % pid)
        try:
            if Conn(port).call("PING") == b"+PONG\r\n":
                return
        except OSError:
            pass
        if time.time() > deadline:
            sys.exit("server on port %d did not answer PING within %d s" % (port, seconds))
        time.sleep(0.05)

def shutdown(port):
    try:
        Conn(port).call("SHUTDOWN", "NOSAVE")
    except (OSError, EOFError):
        pass  # the server closes the connection as it exits

def label(args):
    """The command as one readable line (a derived key's zero byte shown as \\x00)."""
    parts = []
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        parts.append(a.decode("latin-1").replace("\x00", "\\x00"))
    return ("> " + " ".join(parts) + "\n").encode("latin-1")

def capture(port, board, t, outdir):
    """Writes one file per query group: '> command' lines, each followed by the raw reply."""
    os.makedirs(outdir, exist_ok=True)
    b = board.encode()
    files = {}

    def run(conn, name, *args):
        raw = conn.call(*args)
        if raw.startswith(b"-") or raw.startswith(b"!"):
            sys.exit("error reply to %s: %r" % (label(args).decode().strip(), raw[:200]))
        files.setdefault(name, []).append(label(args) + raw)
        return raw

    r2 = Conn(port)
    # HOT.TOP, the acceptance test: one file per shape, every one at a fixed AT.
    tops = [
        ("top-default", []),                                  # LIMIT 20 by default
        ("top-limit20", ["LIMIT", 20]),
        ("top-limit20-withscores", ["LIMIT", 20, "WITHSCORES"]),
        ("top-limit1000", ["LIMIT", 1000]),
        ("top-limit1000-withscores", ["LIMIT", 1000, "WITHSCORES"]),
        ("top-limit10000-withscores", ["LIMIT", 10000, "WITHSCORES"]),  # the cap: every article
        ("top-limit1-withscores", ["LIMIT", 1, "WITHSCORES"]),
        ("top-window72h-limit20-withscores", ["LIMIT", 20, "WINDOW", "72h", "WITHSCORES"]),
        ("top-window7d-limit5", ["LIMIT", 5, "WINDOW", "7d"]),
        ("top-window6h-limit1000-withscores", ["LIMIT", 1000, "WINDOW", "6h", "WITHSCORES"]),
        ("top-window1h-limit20-withscores", ["LIMIT", 20, "WINDOW", "1h", "WITHSCORES"]),
        ("top-window30m-limit1000-withscores", ["LIMIT", 1000, "WINDOW", "30m", "WITHSCORES"]),
        ("top-window900-limit1000-withscores", ["LIMIT", 1000, "WINDOW", 900, "WITHSCORES"]),
    ]
    for name, opts in tops:
        run(r2, name, "HOT.TOP", b, *opts, "AT", t)
    # Other query times, each fixed relative to T: later (pruned by the stored
    # scores), a fractional time, and earlier than the last view (no pruning:
    # every article is scored). The window reaches back to T - 2h (T-6h: 2h back
    # from the query), so that none of these lists is empty.
    for name, at, w in [("top-at-T+1h", t + 3600, 3600 + 7200), ("top-at-T+1d", t + 86400, 86400 + 7200),
                        ("top-at-T+0.250", "%d.250" % t, 7200), ("top-at-T-6h", t - 6 * 3600, 7200)]:
        run(r2, name + "-limit20-withscores", "HOT.TOP", b, "LIMIT", 20, "WITHSCORES", "AT", at)
        run(r2, name + "-window-limit1000-withscores",
            "HOT.TOP", b, "LIMIT", 1000, "WINDOW", w, "WITHSCORES", "AT", at)

    # The board itself: stored scores (at each article's last view), its size,
    # the publish-time index and the board record (README "Key layout").
    zr = run(r2, "board-zrange", "ZRANGE", b, 0, -1, "WITHSCORES")
    run(r2, "board-zrange", "ZCARD", b)
    run(r2, "board-pub-index", "ZRANGE", b + b"\x00pub", 0, -1, "WITHSCORES")
    run(r2, "board-record", "GET", b + b"\x00board")
    articles = bulk_array(zr)[0::2]

    # HOT.STATS of every article on the board (pv, uv, suspicious, published_at,
    # score at T), in board order, and of an unknown article (nil).
    for a in articles:
        run(r2, "stats-all-articles", "HOT.STATS", b, a, "AT", t)
    run(r2, "stats-all-articles", "HOT.STATS", b, "/no/such/article.html", "AT", t)

    # RESP3: HOT.STATS is a map there; HOT.TOP and ZRANGE WITHSCORES too may differ in shape.
    r3 = Conn(port)
    r3.call("HELLO", 3)  # the reply names the server version: not compared
    top20 = bulk_array(r2.call("HOT.TOP", b, "LIMIT", 20, "AT", t))
    run(r3, "resp3-top", "HOT.TOP", b, "LIMIT", 20, "WITHSCORES", "AT", t)
    run(r3, "resp3-top", "HOT.TOP", b, "LIMIT", 1000, "WINDOW", "6h", "WITHSCORES", "AT", t)
    for a in top20[:5]:
        run(r3, "resp3-stats-top5", "HOT.STATS", b, a, "AT", t)
    run(r3, "resp3-zrange", "ZRANGE", b, 0, -1, "WITHSCORES")

    for name, chunks in files.items():
        with open(os.path.join(outdir, name + ".resp"), "wb") as f:
            f.write(b"".join(chunks))
    with open(os.path.join(outdir, "articles.txt"), "wb") as f:
        f.write(b"".join(a + b"\n" for a in articles))
    with open(os.path.join(outdir, "top20.txt"), "wb") as f:
        f.write(b"".join(a + b"\n" for a in top20))

def last_time(path):
    """The largest time stamp of the log (the demo's TSV: column 3, unix seconds)."""
    import gzip
    opener = gzip.open if open(path, "rb").read(2) == b"\x1f\x8b" else open
    best = None
    with opener(path, "rt", encoding="latin-1") as f:
        next(f, None)  # header
        for line in f:
            cols = line.split("\t")
            if len(cols) > 2 and cols[2].isdigit():
                v = int(cols[2])
                best = v if best is None or v > best else best
    if best is None:
        sys.exit("no time stamps in %s (want the demo's TSV)" % path)
    print(best)

def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    print(s.getsockname()[1])
    s.close()

if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "free-port":
        free_port()
    elif cmd == "ping":
        ping(int(args[0]), int(args[1]), int(args[2]))
    elif cmd == "shutdown":
        shutdown(int(args[0]))
    elif cmd == "last-time":
        last_time(args[0])
    elif cmd == "capture":
        capture(int(args[0]), args[1], int(args[2]), args[3])
    else:
        sys.exit("unknown command " + cmd)
PY
resp() { "$PYTHON" "$TMP/resp.py" "$@"; }

# --- 1. the two modules and the one client ------------------------------------
say "before: BASE $BASE = $base_sha (worktree $WT, target dir $BASE_TARGET)"
git worktree add --detach --quiet "$WT" "$base_sha"
(cd "$WT" && CARGO_TARGET_DIR="$BASE_TARGET" "$CARGO" build --release --lib) ||
  die "cargo build --release at BASE $BASE failed"
cp "$BASE_TARGET/release/libhotrank.so" "$TMP/before.so"
git worktree remove --force "$WT"

say "after:  the current tree, HEAD $head_sha$dirty"
"$CARGO" build --release --lib --example replay ||
  die "cargo build --release --lib --example replay of the current tree failed"
cp "$TARGET_DIR/release/libhotrank.so" "$TMP/after.so"
cp "$TARGET_DIR/release/examples/replay" "$TMP/replay-client"

T="$(resp last-time "$LOG")"
say "log $LOG, last time stamp T = $T; every query uses AT T (or T +/- a fixed offset)"
say "server $(command -v "$SERVER"): $("$SERVER" --version | head -n1)"
say "client $(sha256sum "$TMP/replay-client" | cut -c1-16) (examples/replay.rs of the current tree, for both runs)"

# --- 2 and 3. replay and capture, once per module -----------------------------
rm -rf "$OUT"
mkdir -p "$OUT"
run_one() {
  local side=$1 so=$2 dir="$TMP/$1" port pid
  mkdir -p "$dir"
  port="$(resp free-port)"
  "$SERVER" --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
    --dir "$dir" --logfile "$dir/server.log" --loadmodule "$so" \
    </dev/null >/dev/null 2>&1 &
  pid=$!
  PIDS+=("$pid")
  if ! resp ping "$port" "$pid" 15; then
    if [ -f "$dir/server.log" ]; then sed -n '1,40p' "$dir/server.log" >&2; fi
    die "$side: $SERVER did not start with $so"
  fi
  # HOTRANK_TRENDING=0: the board the client makes is the one older modules make too.
  if ! HOTRANK_TRENDING=0 HOTRANK_SPAWN=0 HOTRANK_PORT="$port" "$TMP/replay-client" "$LOG" >"$dir/replay.out" 2>&1; then
    cat "$dir/replay.out" >&2
    die "$side: the replay failed"
  fi
  mkdir -p "$OUT/$side"
  # The client's report without what depends on the run (port, elapsed, throughput).
  grep -v -E '^(replaying |elapsed |throughput )' "$dir/replay.out" >"$OUT/$side/replay-report.txt"
  resp capture "$port" "$BOARD" "$T" "$OUT/$side"
  resp shutdown "$port"
  wait "$pid" 2>/dev/null || true
  PIDS=()
  say "$side: replayed and captured $(ls "$OUT/$side" | wc -l) files, $(cat "$OUT/$side"/* | wc -c) bytes ($(wc -l <"$OUT/$side/articles.txt") articles on the board)"
}
run_one before "$TMP/before.so"
run_one after "$TMP/after.so"

# --- sanity: a comparison of empty or trivial captures proves nothing ---------
n_articles="$(wc -l <"$OUT/before/articles.txt")"
n_top="$(wc -l <"$OUT/before/top20.txt")"
[ "$n_articles" -ge 20 ] || die "only $n_articles articles on the board after the replay"
[ "$n_top" -eq 20 ] || die "HOT.TOP LIMIT 20 listed $n_top articles, want 20"
for f in "$OUT"/before/*; do [ -s "$f" ] || die "empty capture: $f"; done

# --- 4. compare ----------------------------------------------------------------
echo
say "comparing $OUT/before and $OUT/after byte for byte"
differ=0
same=0
bytes=0
if ! diff <(cd "$OUT/before" && ls) <(cd "$OUT/after" && ls) >/dev/null; then
  say "the two runs captured different sets of files"
  differ=$((differ + 1))
fi
for f in "$OUT"/before/*; do
  name="$(basename "$f")"
  size="$(wc -c <"$f")"
  bytes=$((bytes + size))
  if cmp -s "$f" "$OUT/after/$name"; then
    printf '  same    %-48s %8d bytes\n' "$name" "$size"
    same=$((same + 1))
  else
    printf '  DIFFER  %-48s %8d bytes before, %d after\n' "$name" "$size" \
      "$(wc -c <"$OUT/after/$name" 2>/dev/null || echo 0)"
    cmp "$f" "$OUT/after/$name" 2>&1 | sed 's/^/          /' || true
    diff -a -u --label "before/$name" --label "after/$name" \
      <(tr -d '\r' <"$f") <(tr -d '\r' <"$OUT/after/$name" 2>/dev/null) | sed -n '1,30p' | sed 's/^/          /' || true
    differ=$((differ + 1))
  fi
done
top_files="$(cd "$OUT/before" && ls top-*.resp | wc -l)"
top_bytes="$(cat "$OUT"/before/top-*.resp | wc -c)"
echo
summary="$same files same, $differ differ ($bytes bytes compared; $top_files HOT.TOP captures, $top_bytes bytes; $n_articles articles) on $(basename "$SERVER")"
if [ "$differ" -eq 0 ]; then
  echo "VERDICT: IDENTICAL — BASE $BASE ($(git rev-parse --short "$base_sha")) and HEAD $(git rev-parse --short "$head_sha")$dirty give the same replies byte for byte: $summary"
  exit 0
fi
echo "VERDICT: DIFFERENT — BASE $BASE ($(git rev-parse --short "$base_sha")) and HEAD $(git rev-parse --short "$head_sha")$dirty: $summary; captures kept in $OUT" >&2
exit 1
