"""``python -m hotrank archive`` against real servers: a board on redis-server and a
sharded board on the 3-master cluster, archived into SQLite and into a real PostgreSQL
(Debian's ``postgresql``, started here in a temporary directory as a non-root user).

- The rows equal what HOT.EXPORT gives (on a module without HOT.EXPORT, the
  archiver's own reader, ZSCAN + HOT.STATS, and the HOT.EXPORT test is skipped).
- Killed with SIGKILL in the middle of a run and started again, it ends with the
  same rows: none missing, none twice.
- An article gone from Redis (retention) keeps its last counters in the table, and a
  counter that went down in Redis never goes down in the table.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Iterator, List, Tuple

import pytest

import hotrank
from conftest import T0, Cluster, Server, free_port, require
from hotrank import archive
from hotrank._calls import Call
from hotrank._shard import id_bytes
from hotrank._types import ArticleStats

N_ARTICLES = 1_200


def pg_bin() -> str:
    """The directory of Debian's PostgreSQL binaries (the newest version)."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    if not found:
        pytest.fail("PostgreSQL not found in /usr/lib/postgresql/*/bin: run `make deps-postgres` (apt install postgresql)")
    return os.path.dirname(found[-1])


class Postgres:
    """A PostgreSQL server in a temporary directory, run as a non-root user
    (initdb refuses root): ``postgres`` if it exists, else ``nobody``."""

    def __init__(self) -> None:
        bin_dir = pg_bin()
        self.dir = tempfile.mkdtemp(prefix="hotrank-pg-")
        self.port = free_port()
        data = os.path.join(self.dir, "data")
        prefix: List[str] = []
        if os.geteuid() == 0:
            user = "postgres"
            try:
                pwd.getpwnam(user)
            except KeyError:
                user = "nobody"
            pw = pwd.getpwnam(user)
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)
            prefix = ["runuser", "-u", user, "--"]
        subprocess.run(
            [*prefix, f"{bin_dir}/initdb", "-D", data, "-A", "trust", "-U", "postgres", "--no-sync"],
            check=True, capture_output=True, timeout=120,
        )  # fmt: skip
        self.log = open(os.path.join(self.dir, "log"), "wb")
        self.proc = subprocess.Popen(
            [*prefix, f"{bin_dir}/postgres", "-D", data, "-p", str(self.port), "-k", self.dir,
             "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off"],
            stdout=self.log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"
        import psycopg

        deadline = time.monotonic() + 60
        while True:
            try:
                psycopg.connect(f"host=127.0.0.1 port={self.port} user=postgres dbname=postgres").close()
                break
            except psycopg.OperationalError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    pytest.fail("postgres did not start: " + Path(self.dir, "log").read_text(errors="replace"))
                time.sleep(0.2)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture(scope="module")
def postgres() -> Iterator[Postgres]:
    pg = Postgres()
    yield pg
    pg.stop()


def fill(board: Any, prefix: str) -> None:
    """Articles with views (a long tail) and some only published."""
    views = []
    for i in range(N_ARTICLES):
        board_views = 1 + (50 // (i + 1))
        views += [(f"{prefix}{i:04d}", f"u{j}", T0 + i % 600) for j in range(board_views)]
    for i in range(0, N_ARTICLES, 50):
        board.publish(f"{prefix}{i:04d}", T0 - 3600)
    board.publish(f"{prefix}only-published", T0 - 60)
    for k in range(0, len(views), 2_000):
        board.view_many(views[k : k + 2_000])


@pytest.fixture(scope="module")
def boards(redis_server: Server, cluster: Cluster) -> Iterator[Tuple[Any, Any, Any, Any]]:
    """(plain client, its board, cluster client, a 4-shard board on the cluster)."""
    r = redis_server.client()
    for s in [redis_server, *cluster.nodes]:
        s.client().config_set("hotrank.max-articles", 100_000)
    # A board ZSET in a hash table, so the reader without HOT.EXPORT (ZSCAN) pages too.
    r.config_set("zset-max-listpack-entries", 0)
    plain = hotrank.HotBoard(r, "hot:{arch}")
    plain.drop() if redis_server.has_command("HOT.DROP") else r.delete(plain.key)
    fill(plain, "a")
    rc = cluster.client()
    sharded = hotrank.ShardedHotBoard(rc, "hot:{archsh}", shards=4)
    sharded._batch([Call(("DEL", "hot:{archsh}:sharding"), lambda x: x)])
    sharded._batch([Call(("HSET", "hot:{archsh}:sharding", "kind", "hot", "shards", 4, "hash", "crc32", "settings", "{}"), lambda x: x)])
    fill(sharded, "s")
    r.config_set("zset-max-listpack-entries", 128)
    yield r, plain, rc, sharded
    for s in [redis_server, *cluster.nodes]:
        s.client().config_set("hotrank.max-articles", 1000)


def expected(r: Any, board: str) -> List[Tuple[Any, ...]]:
    """(board, article id bytes, published_at, pv, uv, last_view) of every article, as
    the archiver's reader (HOT.EXPORT when the module has it) gives them."""
    out = []
    for key in archive.board_keys(r, board):
        for page in archive.export_pages(r, key, 100):
            out += [(board, id_bytes(a.article), a.published_at, a.pv, a.uv, a.last_view) for a in page]
    return sorted(out)


def stored(store: archive.Store) -> List[Tuple[Any, ...]]:
    """(board, article_id, published_at, pv, uv, last_view) of every row."""
    return sorted((row[0], row[1], *row[3:7]) for row in store.rows())


@pytest.mark.parametrize("db", ["sqlite", "postgresql"])
def test_rows_equal_the_export_plain_and_sharded(
    db: str, boards: Any, redis_server: Server, cluster: Cluster, tmp_path: Path, request: Any
) -> None:
    r, plain, rc, sharded = boards
    url = f"sqlite:///{tmp_path}/hot.db" if db == "sqlite" else request.getfixturevalue("postgres").url
    store = archive.Store(url)
    s1 = archive.archive_once(r, [plain.key], store, count=100)
    s2 = archive.archive_once(rc, [sharded.name], store, count=100)
    assert (s1.shards, s2.shards) == (1, 4)
    want = expected(r, plain.key) + expected(rc, sharded.name)
    # HOT.EXPORT lists every article; the older reader only those on the board ZSET.
    has_export = all(s.has_command("HOT.EXPORT") for s in [redis_server, *cluster.nodes])
    assert len(want) == 2 * (N_ARTICLES + 1) if has_export else len(want) >= 100
    assert stored(store) == sorted(want)
    # Running again changes nothing but archived_at.
    archive.archive_once(r, [plain.key], store, count=100)
    assert stored(store) == sorted(want)


def test_rows_equal_hot_export_itself(boards: Any, redis_server: Server, tmp_path: Path) -> None:
    require(redis_server, "HOT.EXPORT")
    r, plain, _, _ = boards
    store = archive.Store(f"sqlite:///{tmp_path}/x.db")
    archive.archive_once(r, [plain.key], store)
    rows = {(a.article): (a.published_at, a.pv, a.uv, a.last_view) for a in plain.export_all()}
    assert {row[2]: tuple(row[3:7]) for row in store.rows()} == rows


def test_counters_never_go_back_and_a_forgotten_article_stays(tmp_path: Path) -> None:
    store = archive.Store(f"sqlite:///{tmp_path}/m.db")
    a = ArticleStats("x", pv=10, uv=7, suspicious=0, published_at=100.0, score=1.0, last_view=500.0)
    store.upsert("b", [a], 1.0)
    lower = ArticleStats("x", pv=3, uv=2, suspicious=0, published_at=None, score=0.1, last_view=None)
    store.upsert("b", [lower], 2.0)
    assert store.rows() == [("b", b"x", "x", 100.0, 10, 7, 500.0, 2.0)]
    higher = ArticleStats("x", pv=12, uv=6, suspicious=0, published_at=90.0, score=0.1, last_view=900.0)
    store.upsert("b", [higher], 3.0)
    assert store.rows() == [("b", b"x", "x", 100.0, 12, 7, 900.0, 3.0)]


def test_an_article_gone_from_redis_keeps_its_last_counters(redis_server: Server, tmp_path: Path) -> None:
    r = redis_server.client()
    board = hotrank.HotBoard(r, "hot:{gone}")
    board.view_many([("old", f"u{i}", T0) for i in range(5)] + [("new", "u1", T0)])
    store = archive.Store(f"sqlite:///{tmp_path}/g.db")
    archive.archive_once(r, [board.key], store)
    # Retention ran out for "old": its keys are gone (as HOT.REM or expiry leave it).
    if redis_server.has_command("HOT.REM"):
        board.rem("old")
    else:
        r.zrem(board.key, "old")
        for k in r.scan_iter(match="*old*"):
            r.delete(k)
    assert board.stats("old") is None or board.stats("old").pv == 0  # type: ignore[union-attr]
    archive.archive_once(r, [board.key], store)
    rows = {row[2]: row[4:6] for row in store.rows()}
    assert rows == {"old": (5, 5), "new": (1, 1)}


@pytest.mark.parametrize("db", ["sqlite", "postgresql"])
def test_killed_mid_run_and_run_again_ends_with_the_same_rows(
    db: str, boards: Any, redis_server: Server, tmp_path: Path, request: Any
) -> None:
    r, plain, _, _ = boards
    if db == "sqlite":
        url = f"sqlite:///{tmp_path}/kill.db"
    else:
        url = request.getfixturevalue("postgres").url
        archive.Store(url).engine.dispose()
        import sqlalchemy as sa

        with archive.Store(url).engine.begin() as conn:
            conn.execute(sa.text("DELETE FROM hot_articles"))
    store = archive.Store(url)
    args = [sys.executable, "-m", "hotrank", "archive", "--redis", f"redis://127.0.0.1:{redis_server.port}/0",
            "--board", plain.key, "--to", url, "--count", "10"]  # fmt: skip
    want = expected(r, plain.key)
    killed_at = []
    # Each page pauses inside its transaction and after it: the kills land in both.
    env = {**os.environ, "HOTRANK_ARCHIVE_TEST_PAUSE": "0.01"}
    for extra in (0.0, 0.013, 0.027):
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + 60
        # Kill it once some pages are written and before it is done.
        while time.monotonic() < deadline and len(store.rows()) < 20 + 10 * len(killed_at) and proc.poll() is None:
            time.sleep(0.005)
        time.sleep(extra)
        assert proc.poll() is None, "finished before it was killed"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        killed_at.append(len(store.rows()))
        assert killed_at[-1] < len(want), f"not killed mid-run: {killed_at} of {len(want)}"
    out = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.startswith(f"archived {len(want)} articles of 1 board(s) (1 key(s))"), out.stdout
    rows = stored(store)
    assert rows == want
    assert len({(b, a) for b, a, *_ in rows}) == len(rows)


# ---------------------------------------------------------------------------
# Ids of any bytes, the first layout's upgrade, a refused row

#: Ids a HOT board takes and a text column would not: Latin-1 (not UTF-8), a NUL,
#: the empty id, look-alikes of it, 300-byte ids, emoji.
ODD_IDS = [
    b"caf\xe9",
    b"a\x00b",
    b"",
    b" ",
    "\u200b".encode(),
    b"x" * 300,
    ("\u00e9" * 150).encode(),
    b"\xff" * 300,
    "\U0001f525 news".encode(),
    "\U0001f44d\U0001f3fd".encode(),
    b"plain",
]


def db_url(db: str, tmp_path: Path, request: Any, name: str) -> str:
    """A fresh SQLite file, or the PostgreSQL fixture's database with hot_articles dropped."""
    if db == "sqlite":
        return f"sqlite:///{tmp_path}/{name}.db"
    url: str = request.getfixturevalue("postgres").url
    import sqlalchemy as sa

    engine = sa.create_engine(archive.database_url(url))
    with engine.begin() as conn:
        conn.execute(sa.text("DROP TABLE IF EXISTS hot_articles"))
    engine.dispose()
    return url


def raw_ids(db: str, url: str) -> List[Tuple[bytes, Any]]:
    """(article_id, article) of every row, read with the database's own driver."""
    if db == "sqlite":
        import sqlite3

        with sqlite3.connect(url.removeprefix("sqlite:///")) as conn:
            return sorted((bytes(a), t) for a, t in conn.execute("SELECT article_id, article FROM hot_articles"))
    import psycopg

    with psycopg.connect(url.removeprefix("postgresql://").join(["postgresql://", ""])) as conn:
        return sorted((bytes(a), t) for a, t in conn.execute("SELECT article_id, article FROM hot_articles"))


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hotrank", "archive", *args], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("db", ["sqlite", "postgresql"])
def test_ids_of_any_bytes_round_trip_exactly(db: str, server: Server, tmp_path: Path, request: Any) -> None:
    redis_server = server  # redis-server and valkey-server
    r = redis_server.client(decode_responses=False)
    board = hotrank.HotBoard(r, "hot:{odd}")
    r.delete(board.key)
    board.view_many([(a, b"v1", T0) for a in ODD_IDS] + [(b"caf\xe9", b"v2", T0)])
    url = db_url(db, tmp_path, request, "odd")
    argv = ["--redis", f"redis://127.0.0.1:{redis_server.port}/0", "--board", board.key, "--to", url]
    out = run_cli(*argv)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.startswith(f"archived {len(ODD_IDS)} articles"), out.stdout
    want = sorted((a, archive.id_text(a)) for a in ODD_IDS)
    assert raw_ids(db, url) == want
    assert dict(raw_ids(db, url))[b"caf\xe9"] is None and dict(raw_ids(db, url))[b"a\x00b"] is None
    assert dict(raw_ids(db, url))["\U0001f525 news".encode()] == "\U0001f525 news"
    store = archive.Store(url)
    first = store.rows()
    assert {row[1]: row[4:6] for row in first}[b"caf\xe9"] == (2, 2)
    # Run again: the same rows (only archived_at moves).
    out = run_cli(*argv)
    assert out.returncode == 0, out.stdout + out.stderr
    assert [row[:7] for row in store.rows()] == [row[:7] for row in first]
    assert raw_ids(db, url) == want
    store.engine.dispose()


def first_layout(url: str) -> Any:
    """The table as the first archiver made it: keyed by (board, article) text."""
    import sqlalchemy as sa

    engine = sa.create_engine(archive.database_url(url))
    meta = sa.MetaData()
    t = sa.Table(
        "hot_articles", meta,
        sa.Column("board", sa.Text, primary_key=True),
        sa.Column("article", sa.Text, primary_key=True),
        sa.Column("published_at", sa.Float, nullable=True),
        sa.Column("pv", sa.BigInteger, nullable=False, server_default="0"),
        sa.Column("uv", sa.BigInteger, nullable=False, server_default="0"),
        sa.Column("last_view", sa.Float, nullable=True),
        sa.Column("archived_at", sa.Float, nullable=False, server_default="0"),
    )  # fmt: skip
    with engine.begin() as conn:
        meta.create_all(conn)
        conn.execute(t.insert(), [
            {"board": "b", "article": "x", "published_at": 1.0, "pv": 10, "uv": 5, "last_view": 9.0, "archived_at": 9.0},
            {"board": "b", "article": "caf\u00e9 \U0001f525", "published_at": None, "pv": 3, "uv": 3,
             "last_view": None, "archived_at": 9.0},
        ])  # fmt: skip
    return engine


@pytest.mark.parametrize("db", ["sqlite", "postgresql"])
def test_a_first_layout_table_is_upgraded_in_place(db: str, tmp_path: Path, request: Any) -> None:
    url = db_url(db, tmp_path, request, "old")
    first_layout(url).dispose()
    store = archive.Store(url)
    assert store.rows() == [
        ("b", "caf\u00e9 \U0001f525".encode(), "caf\u00e9 \U0001f525", None, 3, 3, None, 9.0),
        ("b", b"x", "x", 1.0, 10, 5, 9.0, 9.0),
    ]
    # Keyed by the bytes now: an upsert of the same id merges, a non-UTF-8 id is a new row.
    store.upsert("b", [ArticleStats("x", 12, 4, 0, None, 0.0, 10.0), ArticleStats(b"x\xff".decode("utf-8", "surrogateescape"), 1, 1, 0, None, 0.0)], 10.0)
    rows = {row[1]: row for row in store.rows()}
    assert rows[b"x"] == ("b", b"x", "x", 1.0, 12, 5, 10.0, 10.0)
    assert rows[b"x\xff"][2] is None
    # Opening it again changes nothing.
    assert archive.Store(url).rows() == store.rows()
    store.engine.dispose()


@pytest.mark.parametrize("db", ["sqlite", "postgresql"])
def test_a_refused_row_is_reported_and_the_run_goes_on(db: str, redis_server: Server, tmp_path: Path, request: Any) -> None:
    r = redis_server.client(decode_responses=False)
    board = hotrank.HotBoard(r, "hot:{refuse}")
    r.delete(board.key)
    ids = [f"ok{i:02d}".encode() for i in range(30)] + [b"bad"]
    board.view_many([(a, b"v", T0) for a in ids])
    url = db_url(db, tmp_path, request, "refuse")
    store = archive.Store(url)
    import sqlalchemy as sa

    with store.engine.begin() as conn:
        if db == "sqlite":
            conn.execute(sa.text(
                "CREATE TRIGGER no_bad BEFORE INSERT ON hot_articles WHEN NEW.article = 'bad' "
                "BEGIN SELECT RAISE(ABORT, 'no bad articles here'); END"
            ))  # fmt: skip
        else:
            conn.execute(sa.text("ALTER TABLE hot_articles ADD CONSTRAINT no_bad CHECK (article <> 'bad')"))
    out = run_cli("--redis", f"redis://127.0.0.1:{redis_server.port}/0", "--board", board.key, "--to", url, "--count", "7")
    assert out.returncode == 1, out.stdout + out.stderr
    assert "Traceback" not in out.stderr
    errors = out.stderr.strip().splitlines()
    assert len(errors) == 1 and errors[0].startswith("error: board 'hot:{refuse}': article 'bad' refused by the database")
    assert ("no bad articles here" if db == "sqlite" else "no_bad") in errors[0]
    assert out.stdout.startswith("archived 30 articles") and "1 row(s) refused" in out.stdout, out.stdout
    assert sorted(row[1] for row in store.rows()) == ids[:-1]
    store.engine.dispose()


def test_a_board_whose_slot_moved_is_read_from_its_new_node(cluster: Cluster, tmp_path: Path) -> None:
    """A reshard between two runs of one archiver: the second run reads the board from
    its new node (the cluster client follows MOVED and refreshes its slot map) instead
    of failing with MOVED until the archiver restarts."""
    from test_reshard import _move_slot, _owner

    key = "hot:{archive-moves}"
    r = archive.connect(f"redis://127.0.0.1:{cluster.port}/0")
    writer = cluster.client(decode_responses=False)
    writer.delete(key)
    board = hotrank.HotBoard(writer, key)
    board.view("a", "v", T0)
    store = archive.Store(f"sqlite:///{tmp_path}/moves.db")
    assert archive.archive_once(r, [key], store).articles == 1
    slot = int(r.keyslot(key))
    src, _ = _owner(cluster, slot)
    dst = (src + 1) % len(cluster.nodes)
    _move_slot(cluster, slot, src, dst)
    try:
        assert _owner(cluster, slot)[0] == dst
        board.view("b", "v", T0)
        s = archive.archive_once(r, [key], store)  # the same client: its slot map is stale
        assert (s.articles, s.failed) == (2, 0)
        assert [(row[2], row[4]) for row in store.rows()] == [("a", 1), ("b", 1)]
    finally:
        _move_slot(cluster, slot, dst, src)
