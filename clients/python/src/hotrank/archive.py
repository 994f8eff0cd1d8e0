"""``python -m hotrank archive``: copies every article's counters from HOT boards into a
SQL table before Redis forgets them (retention, 90 days by default), so PV/UV history
outlives the board.

::

    python -m hotrank archive --redis redis://127.0.0.1:6379/0 --board 'hot:{news}' \\
        [--board 'hot:{sport}' …] [--to sqlite:///hot.db] [--every 1h] [--count 500]

- **Reads** each board with HOT.EXPORT (a cursor over every article the board knows,
  viewed or only published); a sharded board (``hotrank.ShardedHotBoard``, found by
  its record ``<board>:sharding``) is read shard by shard and archived under its own
  name. A Redis Cluster URL is detected (``cluster_enabled``). A module without
  HOT.EXPORT is read with ZSCAN of the board and HOT.STATS of each article instead
  (articles on the board only; ``last_view`` empty).
- **Writes** table ``hot_articles(board, article, published_at, pv, uv, last_view,
  archived_at)``, key ``(board, article)``, with SQLAlchemy Core: SQLite
  (``sqlite:///path``, the default ``sqlite:///hot.db``) or PostgreSQL
  (``postgresql://user@host/db``, driver psycopg 3), the same statements for both.
  The table is created, or migrated (missing columns added), on start.
- **Upserts that never move a counter backwards**: ``pv``, ``uv`` and ``last_view``
  keep the larger of the stored and the new value (``last_view`` has a one-minute
  grain: the module writes it only when the stored one is more than 60 s older than
  a counted view, so it may lag the latest counted view by up to a minute),
  ``published_at`` the first one known; ``archived_at`` is the time of the last run that saw the article. A run
  writes one transaction per HOT.EXPORT page, so a run killed at any point has
  written whole pages only, and the next run (which reads every article again)
  leaves the same rows: nothing lost, nothing twice.
- **Output**: a tqdm progress bar on a terminal; otherwise one summary line per run.

How often: an article's counters expire ``retention`` (default 90 days) after its
last view, so one run within that time after every article's last view is enough;
hourly (``--every 1h``, or cron) is the suggested default. A run costs one HOT.EXPORT
call per ``--count`` articles and one transaction per page.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, List, Optional, Sequence, Tuple

import redis
import redis.cluster
import redis.exceptions

from . import _calls as c
from . import _shard
from ._types import ArticleStats, UnknownCommandError, server_error

#: The table's columns after (board, article), in order.
COLUMNS = ("published_at", "pv", "uv", "last_view", "archived_at")


def parse_every(text: str) -> float:
    """``--every``: seconds, or a number with ``s``, ``m``, ``h`` or ``d`` (``1h``)."""
    units = {"s": 1, "m": 60, "h": 3600, "d": 86_400}
    t = text.strip().lower()
    mult = units.get(t[-1:], None)
    try:
        value = float(t[:-1] if mult else t) * (mult or 1)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--every: expected seconds or e.g. 30m, 1h, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError("--every must be greater than 0")
    return value


# ---------------------------------------------------------------------------
# Reading


def connect(url: str) -> Any:
    """A redis-py client for ``url``: a RedisCluster when the server is a cluster node."""
    r = redis.Redis.from_url(url)
    try:
        info = r.info("cluster")
    finally:
        r.close()
    if info.get("cluster_enabled"):
        return redis.cluster.RedisCluster.from_url(url)
    return redis.Redis.from_url(url)


def board_keys(r: Any, board: str) -> List[str]:
    """The keys holding ``board``: its shards when it is a sharded HOT board, else itself."""
    call = _shard.read_description(board)
    d = call.parse(r.execute_command(*call.args))
    if d.kind is None:
        return [board]
    if d.kind != "hot" or not d.shards:
        raise ValueError(f"{board!r} is a sharded {d.kind} board, not a HOT board")
    return _shard.shard_keys(board, d.shards)


def _run(r: Any, call: c.Call[Any]) -> Any:
    try:
        reply = r.execute_command(*call.args)
    except redis.exceptions.ResponseError as e:
        raise server_error(e) from e
    return call.parse(reply)


def export_pages(r: Any, key: str, count: int) -> Iterator[Tuple[ArticleStats, ...]]:
    """Every article of one board, a HOT.EXPORT page at a time (ZSCAN and HOT.STATS on
    a module without HOT.EXPORT). On a cluster, the node that serves ``key`` is asked."""
    if isinstance(r, redis.cluster.RedisCluster):
        r = r.get_redis_connection(r.get_node_from_key(key))  # type: ignore[no-untyped-call]
    cursor = 0
    try:
        while True:
            page = _run(r, c.hot_export(key, cursor, count))
            yield page.articles
            cursor = page.cursor
            if cursor == 0:
                return
    except UnknownCommandError:
        if cursor != 0:
            raise
    yield from _scan_pages(r, key, count)


def _scan_pages(r: Any, key: str, count: int) -> Iterator[Tuple[ArticleStats, ...]]:
    """The older module's way: the board's members (ZSCAN), then HOT.STATS of each."""
    cursor = 0
    while True:
        cursor, members = r.zscan(key, cursor, count=count)
        names = [c.text(m) for m, _ in members]
        if names:
            pipe = r.pipeline(transaction=False)
            for a in names:
                pipe.execute_command("HOT.STATS", key, a)
            stats = [c.article_stats(a, s) for a, s in zip(names, pipe.execute()) if s is not None]
            yield tuple(stats)
        if int(cursor) == 0:
            return


# ---------------------------------------------------------------------------
# Writing


@dataclass
class Store:
    """The table in a database, and its upsert (one code path for SQLite and PostgreSQL)."""

    url: str
    engine: Any = field(init=False)
    table: Any = field(init=False)

    def __post_init__(self) -> None:
        import sqlalchemy as sa

        url = self.url
        if url.startswith("postgresql://") or url.startswith("postgres://"):
            url = "postgresql+psycopg://" + url.split("://", 1)[1]
        self.engine = sa.create_engine(url)
        meta = sa.MetaData()
        self.table = sa.Table(
            "hot_articles",
            meta,
            sa.Column("board", sa.Text, primary_key=True),
            sa.Column("article", sa.Text, primary_key=True),
            sa.Column("published_at", sa.Float, nullable=True, comment="unix seconds"),
            sa.Column("pv", sa.BigInteger, nullable=False, server_default="0"),
            sa.Column("uv", sa.BigInteger, nullable=False, server_default="0"),
            sa.Column("last_view", sa.Float, nullable=True, comment="unix seconds"),
            sa.Column("archived_at", sa.Float, nullable=False, server_default="0", comment="unix seconds"),
        )
        self.migrate()

    def migrate(self) -> None:
        """Creates the table, or adds the columns an older version of it lacks."""
        import sqlalchemy as sa

        with self.engine.begin() as conn:
            self.table.metadata.create_all(conn)
            have = {col["name"] for col in sa.inspect(conn).get_columns("hot_articles")}
            for col in self.table.columns:
                if col.name not in have:
                    kind = col.type.compile(dialect=conn.dialect)
                    default = f" DEFAULT {col.server_default.arg}" if col.server_default is not None else ""
                    conn.execute(sa.text(f"ALTER TABLE hot_articles ADD COLUMN {col.name} {kind}{default}"))

    def upsert(self, board: str, rows: Sequence[ArticleStats], archived_at: float) -> int:
        """Writes one page in one transaction; counters never move backwards."""
        if not rows:
            return 0
        import sqlalchemy as sa

        dialect = self.engine.dialect.name
        insert: Callable[..., Any]
        if dialect == "postgresql":
            from sqlalchemy.dialects.postgresql import insert as pg_insert

            insert = pg_insert
        elif dialect == "sqlite":
            from sqlalchemy.dialects.sqlite import insert as sqlite_insert

            insert = sqlite_insert
        else:
            raise ValueError(f"unsupported database {dialect!r}: use sqlite:// or postgresql://")
        # GREATEST (PostgreSQL) and the two-argument MAX (SQLite) are the same function.
        bigger: Callable[..., Any] = sa.func.greatest if dialect == "postgresql" else sa.func.max
        t = self.table
        stmt = insert(t).values(
            [
                {
                    "board": board,
                    "article": a.article,
                    "published_at": a.published_at,
                    "pv": a.pv,
                    "uv": a.uv,
                    "last_view": a.last_view,
                    "archived_at": archived_at,
                }
                for a in rows
            ]
        )
        new = stmt.excluded
        stmt = stmt.on_conflict_do_update(
            index_elements=[t.c.board, t.c.article],
            set_={
                "pv": bigger(t.c.pv, new.pv),
                "uv": bigger(t.c.uv, new.uv),
                # NULL (unknown) never replaces a known time.
                "last_view": bigger(
                    sa.func.coalesce(t.c.last_view, new.last_view), sa.func.coalesce(new.last_view, t.c.last_view)
                ),
                "published_at": sa.func.coalesce(t.c.published_at, new.published_at),
                "archived_at": bigger(t.c.archived_at, new.archived_at),
            },
        )
        with self.engine.begin() as conn:
            conn.execute(stmt)
            _test_pause()
        _test_pause()
        return len(rows)

    def rows(self) -> List[Tuple[Any, ...]]:
        """Every row, ordered by (board, article) (for tests and checks)."""
        import sqlalchemy as sa

        with self.engine.connect() as conn:
            q = sa.select(self.table).order_by(self.table.c.board, self.table.c.article)
            return [tuple(r) for r in conn.execute(q)]


def _test_pause() -> None:
    """Tests set HOTRANK_ARCHIVE_TEST_PAUSE (seconds) to slow each page, inside its
    transaction and after it, so a SIGKILL lands in either."""
    pause = os.environ.get("HOTRANK_ARCHIVE_TEST_PAUSE")
    if pause:
        time.sleep(float(pause))


# ---------------------------------------------------------------------------
# A run


@dataclass
class Summary:
    boards: int = 0
    shards: int = 0
    articles: int = 0
    seconds: float = 0.0

    def line(self, to: str) -> str:
        return (
            f"archived {self.articles} articles of {self.boards} board(s) ({self.shards} key(s)) "
            f"into {redact(to)} in {self.seconds:.1f} s"
        )


def redact(url: str) -> str:
    """The URL without its password."""
    if "://" in url and "@" in url.split("://", 1)[1]:
        scheme, rest = url.split("://", 1)
        cred, host = rest.rsplit("@", 1)
        return f"{scheme}://{cred.split(':', 1)[0]}:***@{host}"
    return url


def archive_once(r: Any, boards: Sequence[str], store: Store, count: int = 500, progress: bool = False) -> Summary:
    """Copies every article of every board (every shard of a sharded one) into the store."""
    start = time.monotonic()
    now = time.time()
    s = Summary(boards=len(boards))
    bar: Any = None
    if progress:
        from tqdm import tqdm  # type: ignore[import-untyped]

        bar = tqdm(unit=" articles", desc="archive", dynamic_ncols=True)
    try:
        for board in boards:
            keys = board_keys(r, board)
            s.shards += len(keys)
            for key in keys:
                if bar is not None:
                    bar.set_postfix_str(key)
                for page in export_pages(r, key, count):
                    s.articles += store.upsert(board, page, now)
                    if bar is not None:
                        bar.update(len(page))
    finally:
        if bar is not None:
            bar.close()
    s.seconds = time.monotonic() - start
    return s


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m hotrank archive",
        description="Copy every article's counters (HOT.EXPORT) of HOT boards into SQLite or PostgreSQL.",
    )
    p.add_argument("--redis", default="redis://127.0.0.1:6379/0", help="Redis URL (a cluster node is detected)")
    p.add_argument("--board", action="append", required=True, help="board key (repeatable); a sharded board by its name")
    p.add_argument("--to", default="sqlite:///hot.db", help="sqlite:///path or postgresql://user:pass@host/db")
    p.add_argument("--every", type=parse_every, default=None, help="run again every interval: 3600, 30m, 1h, 1d")
    p.add_argument("--count", type=int, default=500, help="articles per HOT.EXPORT page (one transaction each)")
    p.add_argument("--progress", choices=("auto", "always", "never"), default="auto", help="tqdm progress bar")
    args = p.parse_args(argv)
    progress = args.progress == "always" or (args.progress == "auto" and sys.stderr.isatty())
    r = connect(args.redis)
    store = Store(args.to)
    while True:
        s = archive_once(r, args.board, store, args.count, progress)
        print(s.line(args.to), flush=True)
        if args.every is None:
            return 0
        time.sleep(args.every)

