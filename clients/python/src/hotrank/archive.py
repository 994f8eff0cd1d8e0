"""``python -m hotrank archive``: copies every article's counters from HOT boards into a
SQL table before Redis forgets them (retention, 90 days by default), so PV/UV history
outlives the board. docs/archive.md is the user's guide.

::

    python -m hotrank archive --redis redis://127.0.0.1:6379/0 --board 'hot:{news}' \\
        [--board 'hot:{sport}' …] [--to sqlite:///hot.db] [--every 1h] [--count 500]

- **Checks its options before it connects**: ``--every`` is a finite number of
  seconds from :data:`EVERY_MIN` (1 s) to :data:`EVERY_MAX` (30 days), or such a
  duration with a unit (``90``, ``30m``, ``1h``, ``1d``); ``--count`` is 1 … 10000
  (HOT.EXPORT's COUNT); ``--to`` is ``sqlite://`` or ``postgresql://`` with its
  driver installed; ``--redis`` is a ``redis://``, ``rediss://`` or ``unix://`` URL. A bad option exits 2 with argparse's usage line.
- **Checks each board just before it reads it**: a board that does not exist
  (HOT.INFO reports no keys, or under an ``allkeys-*`` policy no HOT board record), a
  leaderboard, any key that is not a HOT board, or an error reply for it (NOPERM) is
  one line on stderr; that board is skipped, the others are archived, and the exit
  status is 1. A Redis or database that cannot be reached ends the run with one line
  and exit status 1. ``--debug`` adds the traceback of such a failure.
- **Reads** each board with HOT.EXPORT (a cursor over every article the board knows,
  viewed or only published); a sharded board (``hotrank.ShardedHotBoard``, found by
  its record ``<board>:sharding``) is read shard by shard and archived under its own
  name. A Redis Cluster URL is detected (``cluster_enabled``) and every call is
  routed by the cluster client, which follows MOVED and ASK: a board whose slot
  moved is read from its new node. A module without
  HOT.EXPORT is read with ZSCAN of the board and HOT.STATS of each article instead
  (articles on the board only; ``last_view`` empty).
- **Writes** table ``hot_articles(board, article_id, article, published_at, pv, uv,
  last_view, archived_at)``, key ``(board, article_id)``, with SQLAlchemy Core:
  SQLite (``sqlite:///path``, the default ``sqlite:///hot.db``) or PostgreSQL
  (``postgresql://user@host/db``, driver psycopg 3), the same statements for both.
  ``article_id`` holds the id's exact bytes (BLOB / bytea: any bytes, NUL included,
  round-trip and sort bytewise); ``article`` is the same id as text when it is valid
  UTF-8 without NUL, else NULL. The table is created on start; a table of the
  previous layout (``article`` text as the key) is upgraded in place, in one
  transaction; missing columns are added.
- **Upserts that never move a counter backwards**: ``pv``, ``uv`` and ``last_view``
  keep the larger of the stored and the new value (``last_view`` has a one-minute
  grain: the module writes it only when the stored one is more than 60 s older than
  a counted view, so it may lag the latest counted view by up to a minute),
  ``published_at`` the first one known; ``archived_at`` is the time of the last run that saw the article. A run
  writes one transaction per HOT.EXPORT page, so a run killed at any point has
  written whole pages only, and the next run (which reads every article again)
  leaves the same rows: nothing lost, nothing twice.
- **A row the database refuses** (a constraint, a trigger) does not stop the run: the
  page is written again row by row, each refused row is reported on stderr with its
  board and id and counted, the run goes on, and the exit status is 1.
- **Output**: a tqdm progress bar on a terminal; otherwise one summary line per run.

How often: an article's counters expire ``retention`` (default 90 days) after its
last view, so one run within that time after every article's last view is enough;
hourly (``--every 1h``, or cron) is the suggested default. A run costs one HOT.EXPORT
call per ``--count`` articles and one transaction per page.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Type, cast

import redis
import redis.cluster
import redis.exceptions

from . import _calls as c
from . import _shard
from ._types import (
    ArticleStats,
    InvalidArgumentError,
    ServerError,
    UnknownCommandError,
    WrongTypeError,
    server_error,
)

#: The table's columns, in order (the key is ``(board, article_id)``).
COLUMNS = ("board", "article_id", "article", "published_at", "pv", "uv", "last_view", "archived_at")
#: ``--every``'s range in seconds: 1 second to 30 days.
EVERY_MIN = 1.0
EVERY_MAX = 30 * 86_400.0
#: ``--count``'s range: HOT.EXPORT's COUNT.
COUNT_MIN = 1
COUNT_MAX = 10_000
#: Database schemes the archiver writes (its upsert is ON CONFLICT, which both have).
SCHEMES = ("sqlite", "postgresql")

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86_400}


class ArchiveError(Exception):
    """An expected failure (unknown board, wrong kind of board, unreachable server):
    the command line prints its message as one line and exits 1."""


# ---------------------------------------------------------------------------
# Options


def parse_every(text: str) -> float:
    """``--every``: seconds, or a number with ``s``, ``m``, ``h`` or ``d`` (``1h``),
    finite and from :data:`EVERY_MIN` to :data:`EVERY_MAX` seconds.

    Raises argparse.ArgumentTypeError otherwise (nan, inf, 0, -1, 1e400, ``1x``).
    """
    t = text.strip().lower()
    mult = _UNITS.get(t[-1:])
    try:
        value = float(t[:-1] if mult else t) * (mult or 1)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds or a duration such as 30m, 1h, 1d, got {text!r}") from None
    if not math.isfinite(value) or not EVERY_MIN <= value <= EVERY_MAX:
        raise argparse.ArgumentTypeError(
            f"must be from {EVERY_MIN:g} second to {EVERY_MAX / 86_400:g} days (e.g. 3600, 30m, 1h, 1d), got {text!r}"
        )
    return value


def parse_count(text: str) -> int:
    """``--count``: an integer from 1 to 10000 (HOT.EXPORT's COUNT); ArgumentTypeError otherwise."""
    try:
        n = int(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if not COUNT_MIN <= n <= COUNT_MAX:
        raise argparse.ArgumentTypeError(f"must be from {COUNT_MIN} to {COUNT_MAX}, got {text!r}")
    return n


def parse_redis(text: str) -> str:
    """``--redis``: a ``redis://``, ``rediss://`` or ``unix://`` URL redis-py can parse
    (checked without connecting); ArgumentTypeError otherwise."""
    import redis.connection

    try:
        redis.connection.parse_url(text)  # type: ignore[no-untyped-call]
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"{e} (e.g. redis://127.0.0.1:6379/0)") from None
    return text


def database_url(url: str) -> str:
    """The SQLAlchemy URL for ``--to``: ``postgresql://`` (and ``postgres://``) get the
    psycopg 3 driver; other URLs are kept as they are."""
    for scheme in ("postgresql://", "postgres://"):
        if url.startswith(scheme):
            return "postgresql+psycopg://" + url[len(scheme) :]
    return url


def parse_to(text: str) -> str:
    """``--to``: a ``sqlite://`` or ``postgresql://`` URL whose driver is installed,
    checked without connecting (the engine is made, no connection opened).

    Raises argparse.ArgumentTypeError for another scheme, a URL SQLAlchemy cannot
    parse, or a driver that is not installed.
    """
    try:
        import sqlalchemy as sa
        import sqlalchemy.exc
    except ImportError:
        raise argparse.ArgumentTypeError(
            "the archiver needs SQLAlchemy: pip install 'hotrank[archive]' (SQLAlchemy, psycopg, tqdm)"
        ) from None
    try:
        url = sa.engine.make_url(database_url(text))
    except sqlalchemy.exc.ArgumentError:
        raise argparse.ArgumentTypeError(f"not a database URL: {redact(text)!r} (use sqlite:///path or postgresql://…)") from None
    backend = url.get_backend_name()
    if backend not in SCHEMES:
        raise argparse.ArgumentTypeError(
            f"unsupported database {backend!r}: use sqlite:///path or postgresql://user@host/db"
        )
    try:
        sa.create_engine(url).dispose()
    except (ImportError, sqlalchemy.exc.NoSuchModuleError) as e:
        raise argparse.ArgumentTypeError(
            f"the {backend} driver {url.get_driver_name()!r} is not installed ({e}); "
            "postgresql:// uses psycopg 3 (pip install 'psycopg[binary]')"
        ) from None
    except sqlalchemy.exc.ArgumentError as e:
        raise argparse.ArgumentTypeError(f"bad database URL {redact(text)!r}: {e}") from None
    return text


# ---------------------------------------------------------------------------
# Reading


def connect(url: str) -> Any:
    """A redis-py client for ``url`` (replies as bytes, so ids keep their bytes): a
    RedisCluster when the server is a cluster node. redis-py's ConnectionError when
    the server cannot be reached."""
    r = redis.Redis.from_url(url)
    try:
        # redis-py types a sync client's reply as "Awaitable | Any" (one stub for both APIs).
        info = cast("dict[str, Any]", r.info("cluster"))
    finally:
        r.close()
    if info.get("cluster_enabled"):
        return redis.cluster.RedisCluster.from_url(url)
    return redis.Redis.from_url(url)


def _node(r: Any, key: str) -> Any:
    """The connection that serves ``key`` (``r`` itself unless it is a cluster client)."""
    if isinstance(r, redis.cluster.RedisCluster):
        return r.get_redis_connection(r.get_node_from_key(key))  # type: ignore[no-untyped-call]
    return r


def _run(r: Any, call: c.Call[Any]) -> Any:
    try:
        reply = r.execute_command(*call.args)
    except redis.exceptions.ResponseError as e:
        raise server_error(e) from e
    return call.parse(reply)


def check_hot_board(r: Any, key: str, name: Optional[str] = None) -> None:
    """Raises ArchiveError unless ``key`` is a HOT board that exists (HOT.INFO reports
    keys): a leaderboard, another type, or no board at all is one clear message. On a
    cluster the cluster client routes the calls (following MOVED and ASK)."""
    shown = name or key
    try:
        info = _run(r, c.info("HOT.INFO", key))
    except UnknownCommandError:
        if not r.exists(key):
            raise ArchiveError(f"board {shown!r} does not exist (no such key): check the name") from None
        return
    except (WrongTypeError, InvalidArgumentError) as e:
        evicted = _EVICTED.search(e.message)
        if evicted:
            # HOT.INFO under an allkeys-* policy: no key at all, so no board (or one evicted whole).
            raise ArchiveError(
                f"board {shown!r} does not exist (no HOT board record; maxmemory-policy {evicted.group(1)} "
                "may have evicted it whole): check the name"
            ) from None
        try:
            _run(r, c.info("RANK.INFO", key))
        except ServerError:
            raise ArchiveError(f"{shown!r} is not a HOT board: {e.message}") from None
        raise ArchiveError(f"{shown!r} is a leaderboard (RANK), not a HOT board") from None
    if info.get("keys", 1) == 0:
        raise ArchiveError(f"board {shown!r} does not exist (HOT.INFO reports no keys): check the name")


#: The module's error for a board with no key at all under an ``allkeys-*`` policy
#: (src/commands/identity.rs ``missing``), with the policy's name.
_EVICTED = re.compile(r"board identity missing: .* has no HOT board record, and maxmemory-policy (\S+) may have evicted")


def board_keys(r: Any, board: str, check: bool = False) -> List[str]:
    """The keys holding ``board``: its shards when it is a sharded HOT board, else itself.

    With ``check``, raises ArchiveError unless ``board`` is a HOT board that exists
    (see :func:`check_hot_board`); a sharded leaderboard always raises it.
    """
    call = _shard.read_description(board)
    d = call.parse(r.execute_command(*call.args))
    if d.kind is None:
        if check:
            check_hot_board(r, board)
        return [board]
    if d.kind != "hot" or not d.shards:
        kind = "leaderboard (RANK)" if d.kind == "rank" else f"{d.kind} board"
        raise ArchiveError(f"{board!r} is a sharded {kind}, not a HOT board")
    return _shard.shard_keys(board, d.shards)


def export_pages(r: Any, key: str, count: int) -> Iterator[Tuple[ArticleStats, ...]]:
    """Every article of one board, a HOT.EXPORT page at a time (ZSCAN and HOT.STATS on
    a module without HOT.EXPORT). On a cluster, HOT.EXPORT goes through the cluster
    client, which routes it by ``key`` and follows MOVED (refreshing its slot map) and
    ASK, so a board whose slot moved is read from its new node; the older module's
    ZSCAN fallback asks the node that serves ``key``."""
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
    yield from _scan_pages(_node(r, key), key, count)


def _scan_pages(r: Any, key: str, count: int) -> Iterator[Tuple[ArticleStats, ...]]:
    """The older module's way: the board's members (ZSCAN), then HOT.STATS of each."""
    cursor = 0
    while True:
        cursor, members = r.zscan(key, cursor, count=count)
        names = [c.text(m) for m, _ in members]
        if names:
            pipe = r.pipeline(transaction=False)
            for a in names:
                pipe.execute_command("HOT.STATS", key, _shard.id_bytes(a))
            stats = [c.article_stats(a, s) for a, s in zip(names, pipe.execute()) if s is not None]
            yield tuple(stats)
        if int(cursor) == 0:
            return


# ---------------------------------------------------------------------------
# Writing


def id_text(article_id: bytes) -> Optional[str]:
    """The id as text for the ``article`` column: None unless it is valid UTF-8 without NUL
    (PostgreSQL's text refuses NUL; one rule for both databases)."""
    try:
        t = article_id.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return None if "\x00" in t else t


def show_id(article_id: bytes) -> str:
    """An id for a message: its text quoted when it is readable, else its bytes' repr."""
    t = id_text(article_id)
    return repr(t) if t is not None and t.isprintable() else repr(article_id)


@dataclass(frozen=True)
class Refused:
    """A row the database refused: its board, id (bytes) and the database's message."""

    board: str
    article_id: bytes
    error: str

    def line(self) -> str:
        return f"error: board {self.board!r}: article {show_id(self.article_id)} refused by the database: {self.error}"


def _db_message(e: BaseException) -> str:
    """A database error's own message, first line only (without SQLAlchemy's statement dump)."""
    orig = getattr(e, "orig", None)
    text = str(orig if orig is not None else e).strip()
    return text.splitlines()[0] if text else type(e).__name__


@dataclass
class Store:
    """The table in a database, and its upsert (one code path for SQLite and PostgreSQL)."""

    url: str
    engine: Any = field(init=False)
    table: Any = field(init=False)

    def __post_init__(self) -> None:
        import sqlalchemy as sa

        self.engine = sa.create_engine(database_url(self.url))
        if self.engine.dialect.name not in SCHEMES:
            raise ArchiveError(f"unsupported database {self.engine.dialect.name!r}: use sqlite:// or postgresql://")
        meta = sa.MetaData()
        self.table = sa.Table(
            "hot_articles",
            meta,
            sa.Column("board", sa.Text, primary_key=True),
            sa.Column("article_id", sa.LargeBinary, primary_key=True, comment="the id's exact bytes"),
            sa.Column("article", sa.Text, nullable=True, comment="the id as text when valid UTF-8 without NUL"),
            sa.Column("published_at", sa.Float, nullable=True, comment="unix seconds"),
            sa.Column("pv", sa.BigInteger, nullable=False, server_default="0"),
            sa.Column("uv", sa.BigInteger, nullable=False, server_default="0"),
            sa.Column("last_view", sa.Float, nullable=True, comment="unix seconds"),
            sa.Column("archived_at", sa.Float, nullable=False, server_default="0", comment="unix seconds"),
        )
        self.migrate()

    def migrate(self) -> None:
        """Creates the table, or brings an older one to this layout in one transaction:
        missing columns added, and a table keyed by the ``article`` text (the first
        layout) re-keyed by ``article_id``, filled from the text's UTF-8 bytes."""
        import sqlalchemy as sa

        with self.engine.begin() as conn:
            if not sa.inspect(conn).has_table("hot_articles"):
                self.table.metadata.create_all(conn)
                return
            have = {col["name"] for col in sa.inspect(conn).get_columns("hot_articles")}
            for col in self.table.columns:
                if col.name not in have and col.name != "article_id":
                    kind = col.type.compile(dialect=conn.dialect)
                    default = f" DEFAULT {col.server_default.arg}" if col.server_default is not None else ""
                    conn.execute(sa.text(f"ALTER TABLE hot_articles ADD COLUMN {col.name} {kind}{default}"))
            if "article_id" not in have:
                self._rekey(conn)

    def _rekey(self, conn: Any) -> None:
        """The first layout's key was ``(board, article)`` with ``article`` text: every id
        it holds is valid UTF-8 (that archiver stopped on any other), so ``article_id`` is
        the text's UTF-8 bytes. PostgreSQL changes the table in place; SQLite, which
        cannot change a primary key, copies it into a new table (its documented way)."""
        import sqlalchemy as sa

        if conn.dialect.name == "postgresql":
            for stmt in (
                "ALTER TABLE hot_articles ADD COLUMN article_id bytea",
                "UPDATE hot_articles SET article_id = convert_to(article, 'UTF8')",
                "ALTER TABLE hot_articles ALTER COLUMN article_id SET NOT NULL",
                "ALTER TABLE hot_articles DROP CONSTRAINT hot_articles_pkey",
                "ALTER TABLE hot_articles ADD PRIMARY KEY (board, article_id)",
                "ALTER TABLE hot_articles ALTER COLUMN article DROP NOT NULL",
            ):
                conn.execute(sa.text(stmt))
            return
        conn.execute(sa.text("ALTER TABLE hot_articles RENAME TO hot_articles_layout1"))
        self.table.metadata.create_all(conn)
        rest = ", ".join(COLUMNS[3:])
        conn.execute(
            sa.text(
                f"INSERT INTO hot_articles (board, article_id, article, {rest}) "
                f"SELECT board, CAST(article AS BLOB), article, {rest} FROM hot_articles_layout1"
            )
        )
        conn.execute(sa.text("DROP TABLE hot_articles_layout1"))

    def _statement(self, values: List[Dict[str, Any]]) -> Any:
        """The upsert of ``values``: counters never move backwards."""
        import sqlalchemy as sa

        from sqlalchemy.dialects.postgresql import insert as pg_insert
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert

        insert: Callable[..., Any] = pg_insert if self.engine.dialect.name == "postgresql" else sqlite_insert
        # GREATEST (PostgreSQL) and the two-argument MAX (SQLite) are the same function.
        bigger: Callable[..., Any] = sa.func.greatest if self.engine.dialect.name == "postgresql" else sa.func.max
        t = self.table
        stmt = insert(t).values(values)
        new = stmt.excluded
        return stmt.on_conflict_do_update(
            index_elements=[t.c.board, t.c.article_id],
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

    def upsert(self, board: str, rows: Sequence[ArticleStats], archived_at: float) -> Tuple[int, List[Refused]]:
        """Writes one page in one transaction; counters never move backwards.

        If the database refuses the page, it is written again row by row, each in its
        own transaction: returns (rows written, rows refused). A lost connection is
        raised (it is not one row's fault).
        """
        if not rows:
            return 0, []
        import sqlalchemy.exc

        values: List[Dict[str, Any]] = []
        for a in rows:
            b = _shard.id_bytes(a.article)
            values.append(
                {
                    "board": board,
                    "article_id": b,
                    "article": id_text(b),
                    "published_at": a.published_at,
                    "pv": a.pv,
                    "uv": a.uv,
                    "last_view": a.last_view,
                    "archived_at": archived_at,
                }
            )
        try:
            with self.engine.begin() as conn:
                conn.execute(self._statement(values))
                _test_pause()
            _test_pause()
            return len(values), []
        except sqlalchemy.exc.DBAPIError as e:
            if e.connection_invalidated or isinstance(e, sqlalchemy.exc.InterfaceError):
                raise
        written, refused = 0, []
        for v in values:
            try:
                with self.engine.begin() as conn:
                    conn.execute(self._statement([v]))
                written += 1
            except sqlalchemy.exc.DBAPIError as e:
                if e.connection_invalidated or isinstance(e, sqlalchemy.exc.InterfaceError):
                    raise
                refused.append(Refused(board, v["article_id"], _db_message(e)))
        return written, refused

    def rows(self) -> List[Tuple[Any, ...]]:
        """Every row as :data:`COLUMNS`, ordered by (board, article_id) (for tests and checks)."""
        import sqlalchemy as sa

        t = self.table
        with self.engine.connect() as conn:
            q = sa.select(*(t.c[name] for name in COLUMNS)).order_by(t.c.board, t.c.article_id)
            return [tuple(bytes(v) if isinstance(v, memoryview) else v for v in r) for r in conn.execute(q)]


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
    """One run: boards and keys read, articles written, rows refused, boards that
    failed (reported and skipped), seconds taken."""

    boards: int = 0
    shards: int = 0
    articles: int = 0
    refused: int = 0
    failed: int = 0
    seconds: float = 0.0

    def line(self, to: str) -> str:
        text = (
            f"archived {self.articles} articles of {self.boards} board(s) ({self.shards} key(s)) "
            f"into {redact(to)} in {self.seconds:.1f} s"
        )
        if self.refused:
            text += f"; {self.refused} row(s) refused by the database"
        return text + (f"; {self.failed} board(s) failed" if self.failed else "")


def redact(url: str) -> str:
    """The URL without its password."""
    if "://" in url and "@" in url.split("://", 1)[1]:
        scheme, rest = url.split("://", 1)
        cred, host = rest.rsplit("@", 1)
        if ":" in cred:
            return f"{scheme}://{cred.split(':', 1)[0]}:***@{host}"
    return url


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def archive_once(
    r: Any,
    boards: Sequence[str],
    store: Store,
    count: int = 500,
    progress: bool = False,
    report: Callable[[str], None] = _stderr,
) -> Summary:
    """Copies every article of every board (every shard of a sharded one) into the store.

    Each board is checked just before it is read. A board that fails (it does not
    exist, is not a HOT board, or Redis refuses a call on it: NOPERM, MOVED after the
    cluster client's retries) is passed to ``report`` as one line, counted in
    ``Summary.failed`` and skipped: the other boards are archived. A row the database
    refuses is passed to ``report`` (one line with its board and id) and counted in
    ``Summary.refused``; the run goes on. A Redis that cannot be reached, or a
    database error that is not one row's, ends the run (raised).
    """
    start = time.monotonic()
    now = time.time()
    s = Summary()
    bar: Any = None
    if progress:
        try:
            from tqdm import tqdm  # type: ignore[import-untyped]
        except ImportError:  # the bar is a nicety: run without it
            tqdm = None
        if tqdm is not None:
            bar = tqdm(unit=" articles", desc="archive", dynamic_ncols=True)
    try:
        for board in boards:
            try:
                keys = board_keys(r, board, check=True)
                for key in keys:
                    if bar is not None:
                        bar.set_postfix_str(key)
                    for page in export_pages(r, key, count):
                        written, refused = store.upsert(board, page, now)
                        s.articles += written
                        s.refused += len(refused)
                        for x in refused:
                            report(x.line())
                        if bar is not None:
                            bar.update(len(page))
            except _BOARD_FAILURES as e:
                s.failed += 1
                report(_board_failure(e, board))
                continue
            s.boards += 1
            s.shards += len(keys)
    finally:
        if bar is not None:
            bar.close()
    s.seconds = time.monotonic() - start
    return s


#: The failures of one board (reported, the board skipped, the run goes on): not a
#: HOT board, or an error reply for it. A ConnectionError is not one board's fault.
_BOARD_FAILURES: Tuple[Type[BaseException], ...] = (ArchiveError, ServerError, redis.exceptions.ResponseError)


def _board_failure(e: BaseException, board: str) -> str:
    """One line for a board that failed."""
    if isinstance(e, redis.exceptions.ResponseError):
        e = server_error(e)
    if isinstance(e, ServerError):
        return f"error: board {board!r}: Redis replied: {e.message.splitlines()[0]}"
    return _failure(e, "", "")


def _expected() -> Tuple[Type[BaseException], ...]:
    """The failures the command line reports as one line (exit 1): its own, Redis's
    (unreachable, refused command), the database's, the OS's."""
    import sqlalchemy.exc

    return (ArchiveError, redis.exceptions.RedisError, sqlalchemy.exc.SQLAlchemyError, OSError)


def _failure(e: BaseException, redis_url: str, to: str) -> str:
    """One line for an expected failure."""
    import sqlalchemy.exc

    if isinstance(e, (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)):
        first = (str(e).splitlines() or [type(e).__name__])[0]
        return f"error: cannot reach Redis at {redact(redis_url)}: {first}"
    if isinstance(e, sqlalchemy.exc.SQLAlchemyError):
        return f"error: database {redact(to)}: {_db_message(e)}"
    if isinstance(e, ServerError):
        return f"error: Redis replied: {e.message}"
    first = (str(e).splitlines() or [type(e).__name__])[0]
    return f"error: {first}"


def parser() -> argparse.ArgumentParser:
    """The command line's options (``python -m hotrank archive --help``)."""
    p = argparse.ArgumentParser(
        prog="python -m hotrank archive",
        description="Copy every article's counters (HOT.EXPORT) of HOT boards into SQLite or PostgreSQL.",
    )
    p.add_argument(
        "--redis", type=parse_redis, default="redis://127.0.0.1:6379/0", help="Redis URL (a cluster node is detected)"
    )
    p.add_argument("--board", action="append", required=True, help="board key (repeatable); a sharded board by its name")
    p.add_argument(
        "--to", type=parse_to, default="sqlite:///hot.db", help="sqlite:///path (default hot.db) or postgresql://user:pass@host/db"
    )
    p.add_argument(
        "--every", type=parse_every, default=None,
        help="run again every interval, 1 s to 30 days: 3600, 30m, 1h, 1d (default: run once)",
    )  # fmt: skip
    p.add_argument(
        "--count", type=parse_count, default=500, help="articles per HOT.EXPORT page, 1 to 10000 (one transaction each)"
    )
    p.add_argument("--progress", choices=("auto", "always", "never"), default="auto", help="tqdm progress bar")
    p.add_argument("--debug", action="store_true", help="print the traceback of a failure")
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    """The command line: 0 when every row of every board was written; 1 when a board
    failed (reported, skipped, the others archived), a row was refused, or Redis or
    the database failed; 2 for a bad option. With ``--every``, a failed board or row
    is reported and the next run goes on schedule; the first run ends the archiver
    (exit 1) when it archived no board at all or Redis or the database failed, a
    later run's failure is reported and the next one runs on schedule."""
    args = parser().parse_args(argv)
    progress = args.progress == "always" or (args.progress == "auto" and sys.stderr.isatty())
    expected = _expected()
    runs = 0
    try:
        r = connect(args.redis)
        store = Store(args.to)
        while True:
            try:
                s = archive_once(r, args.board, store, args.count, progress)
            except expected as e:
                if runs == 0 or args.every is None:
                    raise
                if args.debug:
                    traceback.print_exc()
                _stderr(_failure(e, args.redis, args.to))
            else:
                if s.boards:  # every board failed: its lines are the run's whole output
                    print(s.line(args.to), flush=True)
                if args.every is None or (runs == 0 and not s.boards):
                    return 1 if s.refused or s.failed else 0
            runs += 1
            time.sleep(args.every)
    except KeyboardInterrupt:
        return 130
    except expected as e:
        if args.debug:
            traceback.print_exc()
        _stderr(_failure(e, args.redis, args.to))
        return 1
