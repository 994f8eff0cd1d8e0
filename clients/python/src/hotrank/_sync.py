"""The sync client: HotBoard, Leaderboard and Client over redis.Redis or redis.cluster.RedisCluster."""

from __future__ import annotations

from datetime import timedelta, tzinfo
from typing import Any, Iterable, Iterator, List, Literal, Optional, Sequence, Tuple, TypeVar, Union, overload

import redis
import redis.cluster
import redis.exceptions

from . import _calls as c
from ._types import (
    ArticleStats,
    Entry,
    ExportPage,
    HotArticle,
    Id,
    InfoValue,
    Order,
    Period,
    RankBy,
    Resolution,
    ScoredMember,
    ScoreWithTime,
    Seconds,
    SetResult,
    Time,
    ViewResult,
    server_error,
)

T = TypeVar("T")
#: What a board can be bound to: a redis-py client (standalone or cluster) or a hotrank.Client.
SyncRedis = Union[redis.Redis, redis.cluster.RedisCluster]
#: One view for ``view_many``: ``(article, visitor)`` or ``(article, visitor, at)``.
View = Union[Tuple[Id, Id], Tuple[Id, Id, Optional[Time]]]


class Client:
    """A redis-py client and a key prefix, handing out boards.

    ``Client(redis.Redis(...), prefix="app:").hot("hot:{news}")`` is the board
    stored at ``app:hot:{news}``. The prefix is put before every board key; it must
    not contain ``{`` or ``}``, so the board's own hash tag (``{news}``) still picks
    its cluster slot. Results never show the prefix (they hold articles and members,
    not keys).
    """

    def __init__(self, redis: SyncRedis, prefix: str = "") -> None:
        c.check_prefix(prefix)
        self.redis = redis
        self.prefix = prefix

    def hot(self, key: str) -> HotBoard:
        """The HOT board ``prefix + key``."""
        return HotBoard(self, key)

    def leaderboard(self, key: str) -> Leaderboard:
        """The leaderboard ``prefix + key``."""
        return Leaderboard(self, key)

    def hot_boards(self, count: Optional[int] = None) -> Iterator[HotBoard]:
        """Every HOT board under this client's prefix (HOT.BOARDS, followed to the end
        on every master of a cluster). As with SCAN, a board present for the whole walk
        is returned at least once, maybe twice. ``count`` is HOT.BOARDS's COUNT hint."""
        for name in self._boards("HOT.BOARDS", count):
            yield HotBoard(self, name)

    def leaderboards(self, count: Optional[int] = None) -> Iterator[Leaderboard]:
        """Every leaderboard under this client's prefix (RANK.BOARDS), as :meth:`hot_boards`."""
        for name in self._boards("RANK.BOARDS", count):
            yield Leaderboard(self, name)

    def _boards(self, cmd: str, count: Optional[int]) -> Iterator[str]:
        """Board names (the prefix taken off) of every node: one cursor walk per master."""
        r: Any = self.redis  # redis-py's cluster methods are untyped
        if isinstance(self.redis, redis.cluster.RedisCluster):
            nodes: List[Any] = list(r.get_primaries())
        else:
            nodes = [None]
        for node in nodes:
            cursor = 0
            while True:
                call = c.boards(cmd, cursor, count)
                kwargs = {} if node is None else {"target_nodes": node}
                try:
                    reply = r.execute_command(*call.args, **kwargs)
                except redis.exceptions.ResponseError as e:
                    raise server_error(e) from e
                cursor, names = call.parse(reply)
                yield from c.unprefixed(names, self.prefix)
                if cursor == 0:
                    break


class _Board:
    """A board bound to a connection: runs calls and turns error replies into typed errors."""

    def __init__(self, client: Union[SyncRedis, Client], key: str, prefix: str = "") -> None:
        if isinstance(client, Client):
            prefix = client.prefix + prefix
            client = client.redis
        #: The board's name as given (without the prefix).
        self.name = key
        #: The key the server sees: ``prefix + name``.
        self.key = c.key_with_prefix(prefix, key)
        self._r: Any = client

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.key!r})"

    def _run(self, call: c.Call[T]) -> T:
        try:
            reply = self._r.execute_command(*call.args)
        except redis.exceptions.ResponseError as e:
            raise server_error(e) from e
        return call.parse(reply)

    def _run_many(self, calls: Sequence[c.Call[T]]) -> List[T]:
        """The calls in one round trip (a non-transactional pipeline); raises the first
        error reply after every call has run."""
        if not calls:
            return []
        pipe = self._r.pipeline(transaction=False)
        for call in calls:
            pipe.execute_command(*call.args)
        try:
            replies = pipe.execute(raise_on_error=False)
        except redis.exceptions.ResponseError as e:
            raise server_error(e) from e
        for reply in replies:
            if isinstance(reply, redis.exceptions.ResponseError):
                raise server_error(reply) from reply
        return [call.parse(reply) for call, reply in zip(calls, replies)]


class HotBoard(_Board):
    """One HOT board (hot articles): ``HotBoard(redis_client, "hot:{news}")``.

    ``client`` is a ``redis.Redis``, a ``redis.cluster.RedisCluster`` or a
    :class:`Client` (whose prefix is used); ``prefix`` is put before ``key``.
    Server errors raise :class:`hotrank.ServerError` subclasses.
    """

    def create(
        self,
        *,
        alpha: Optional[float] = None,
        beta: Optional[float] = None,
        base: Optional[float] = None,
        gamma: Optional[float] = None,
        dedup_seconds: Optional[Seconds] = None,
        dedup_shards: Optional[int] = None,
        visitor_max_views: Optional[int] = None,
        visitor_window_seconds: Optional[Seconds] = None,
        max_articles: Optional[int] = None,
        retention_seconds: Optional[Seconds] = None,
        trending_half_life: Optional[Seconds] = None,
    ) -> None:
        """HOT.CREATE: stores the board's settings (unset ones take the module's configs).

        ``trending_half_life`` (seconds, a timedelta or ``"6h"``; 60 s to 10 years, 0: none)
        keeps a trending ranking beside the hot one (``top(by="trending")``).

        Raises BoardExistsError if the board has settings already.
        """
        self._run(c.hot_create("HOT.CREATE", self.key, _settings(locals())))

    def alter(
        self,
        *,
        alpha: Optional[float] = None,
        beta: Optional[float] = None,
        base: Optional[float] = None,
        gamma: Optional[float] = None,
        dedup_seconds: Optional[Seconds] = None,
        dedup_shards: Optional[int] = None,
        visitor_max_views: Optional[int] = None,
        visitor_window_seconds: Optional[Seconds] = None,
        max_articles: Optional[int] = None,
        retention_seconds: Optional[Seconds] = None,
        trending_half_life: Optional[Seconds] = None,
    ) -> None:
        """HOT.ALTER: changes the given settings of the board.

        ``trending_half_life`` adds trending (empty from now), 0 removes it (and its
        scores); changing one non-zero half-life to another is refused
        (InvalidArgumentError) while the board has trending data: set 0 first."""
        self._run(c.hot_create("HOT.ALTER", self.key, _settings(locals())))

    def publish(self, article: Id, published_at: Time) -> bool:
        """HOT.PUBLISH: sets the article's publish time; True if it had none before."""
        return self._run(c.hot_publish(self.key, article, published_at))

    def view(self, article: Id, visitor: Id, at: Optional[Time] = None) -> ViewResult:
        """HOT.VIEW: one page view at ``at`` (the server clock by default; never later)."""
        return self._run(c.hot_view(self.key, article, visitor, at))

    def view_many(self, views: Iterable[View]) -> List[ViewResult]:
        """Many HOT.VIEWs in one round trip, results in order.

        Each view is ``(article, visitor)`` or ``(article, visitor, at)``. The views
        are pipelined, not a transaction: if one fails, the others still count, and
        the first error is raised after all have run.
        """
        return self._run_many([c.hot_view(self.key, *_view(v)) for v in views])

    def top(
        self, limit: int = 20, window: Optional[Seconds] = None, at: Optional[Time] = None, *, by: RankBy = "hot"
    ) -> List[HotArticle]:
        """HOT.TOP: the ``limit`` (1 … 10000) best articles scored at ``at``, best first.

        ``window`` keeps only the articles published in ``[at - window, at]``: seconds, a
        timedelta or a duration such as ``"72h"`` (``90``, ``15m``, ``72h``, ``7d``).

        ``by="trending"`` ranks by trending score instead (HOT.TOP BY trending: each
        counted view decayed by its own age with the board's trending half-life; ties by
        article id); InvalidArgumentError on a board without trending. ``by="hot"`` (the
        default) is the gravity ranking.
        """
        return self._run(c.hot_top(self.key, limit, window, at, by))

    def stats(self, article: Id, at: Optional[Time] = None) -> Optional[ArticleStats]:
        """HOT.STATS: the article's counters and score at ``at``; None if unknown."""
        return self._run(c.hot_stats(self.key, article, at))

    def stats_many(self, articles: Iterable[Id], at: Optional[Time] = None) -> List[Optional[ArticleStats]]:
        """HOT.STATS of many articles in one round trip, in order."""
        return self._run_many([c.hot_stats(self.key, a, at) for a in articles])

    def rem(self, *articles: Id) -> int:
        """HOT.REM: removes articles and all their keys; the number removed."""
        return self._run(c.hot_rem(self.key, articles))

    def drop(self) -> int:
        """HOT.DROP: deletes the board and every key derived from it; the number of keys."""
        return self._run(c.drop("HOT.DROP", self.key))

    def info(self) -> dict[str, InfoValue]:
        """HOT.INFO: the board's settings and sizes as a dict."""
        return self._run(c.info("HOT.INFO", self.key))

    def export(
        self, cursor: int = 0, count: Optional[int] = None, at: Optional[Time] = None
    ) -> ExportPage:
        """HOT.EXPORT: one page of every article's stats (scores at ``at``, the
        server clock by default); ``page.cursor`` 0 means done."""
        return self._run(c.hot_export(self.key, cursor, count, at))

    def export_all(
        self, count: Optional[int] = None, at: Optional[Time] = None
    ) -> Iterator[ArticleStats]:
        """Every article's stats, following HOT.EXPORT's cursor to the end."""
        cursor = 0
        while True:
            page = self.export(cursor, count, at)
            yield from page.articles
            cursor = page.cursor
            if cursor == 0:
                return


class Leaderboard(_Board):
    """One RANK board: ``Leaderboard(redis_client, "lb:{game1}")``. Ranks are 0-based.

    Reads take ``period=`` (``"day"``, ``"week"``, ``"month"``) and ``ago=`` to read a
    period board instead of the all-time one.
    """

    def create(
        self,
        *,
        resolution: Optional[Resolution] = None,
        min_score: Optional[int] = None,
        max_score: Optional[int] = None,
        order: Optional[Order] = None,
        periods: Optional[Sequence[Period]] = None,
        tz: Union[str, timedelta, tzinfo, None] = None,
        keep: Optional[int] = None,
    ) -> None:
        """RANK.CREATE: the board's layout, order and periods. BoardExistsError if it exists."""
        self._run(c.rank_create(self.key, resolution, min_score, max_score, order, periods, tz, keep))

    def incr(self, member: Id, delta: int, at: Optional[Time] = None) -> int:
        """RANK.INCR: adds ``delta``; the new score."""
        return self._run(c.rank_incr(self.key, member, delta, at))

    def mincr(self, members: Sequence[Id], delta: int) -> List[int]:
        """RANK.MINCR: adds ``delta`` to each member, all or nothing; the new scores."""
        return self._run(c.rank_mincr(self.key, members, delta))

    @overload
    def set(self, member: Id, score: int, *, at: Optional[Time] = None) -> int: ...
    @overload
    def set(self, member: Id, score: int, *, gt: Literal[True], at: Optional[Time] = None) -> SetResult: ...
    @overload
    def set(self, member: Id, score: int, *, lt: Literal[True], at: Optional[Time] = None) -> SetResult: ...
    @overload
    def set(self, member: Id, score: int, *, best: Literal[True], at: Optional[Time] = None) -> SetResult: ...
    @overload
    def set(
        self, member: Id, score: int, *, gt: bool = ..., lt: bool = ..., best: bool = ..., at: Optional[Time] = None
    ) -> Union[int, SetResult]: ...
    def set(
        self,
        member: Id,
        score: int,
        *,
        gt: bool = False,
        lt: bool = False,
        best: bool = False,
        at: Optional[Time] = None,
    ) -> Union[int, SetResult]:
        """RANK.SET: the score; with ``gt``, ``lt`` or ``best``, a SetResult saying if it was written."""
        return self._run(c.rank_set(self.key, member, score, gt, lt, best, at))

    def score(self, member: Id, *, period: Optional[Period] = None, ago: Optional[int] = None) -> Optional[int]:
        """RANK.SCORE: the member's score, or None."""
        return self._run(c.rank_score(self.key, member, period, ago))

    def score_with_time(
        self, member: Id, *, period: Optional[Period] = None, ago: Optional[int] = None
    ) -> Optional[ScoreWithTime]:
        """RANK.SCORE … WITHTIME: the score and when it was reached, or None."""
        return self._run(c.rank_score_with_time(self.key, member, period, ago))

    def rank(
        self, member: Id, *, ties: bool = False, period: Optional[Period] = None, ago: Optional[int] = None
    ) -> Optional[int]:
        """RANK.RANK: the 0-based rank, or None; ``ties=True`` gives the competition rank."""
        return self._run(c.rank_rank(self.key, member, ties, period, ago))

    def range(
        self, start: int = 0, stop: int = -1, *, period: Optional[Period] = None, ago: Optional[int] = None
    ) -> List[Entry]:
        """RANK.RANGE … WITHSCORES: entries by index, best first (negative counts from the end).

        A negative ``start`` is first resolved with RANK.CARD, so every entry's rank is exact.
        """
        if start < 0:
            start = c.first_rank(start, self.card(period=period, ago=ago))
        return self._run(c.rank_range(self.key, start, stop, period, ago))

    def around(
        self, member: Id, n: int = 5, *, period: Optional[Period] = None, ago: Optional[int] = None
    ) -> List[Entry]:
        """RANK.AROUND: the member and up to ``n`` (≤ 1000) neighbours each side; [] if absent."""
        return self._run(c.rank_around(self.key, member, n, period, ago))

    def range_by_score(
        self,
        low: float,
        high: float,
        *,
        offset: Optional[int] = None,
        count: Optional[int] = None,
        period: Optional[Period] = None,
        ago: Optional[int] = None,
    ) -> List[ScoredMember]:
        """RANK.RANGEBYSCORE … WITHSCORES: members with ``low <= score <= high``, best first
        (``low`` is the lower number on every board; ±math.inf for open ends)."""
        return self._run(c.rank_range_by_score(self.key, low, high, offset, count, period, ago))

    def rem(self, *members: Id) -> int:
        """RANK.REM: removes members from the all-time board; the number removed."""
        return self._run(c.rank_rem(self.key, members))

    def card(self, *, period: Optional[Period] = None, ago: Optional[int] = None) -> int:
        """RANK.CARD: the number of members."""
        return self._run(c.rank_card(self.key, period, ago))

    def drop(self) -> int:
        """RANK.DROP: deletes the board, its layout and its period boards; the number of keys."""
        return self._run(c.drop("RANK.DROP", self.key))

    def info(self) -> dict[str, InfoValue]:
        """RANK.INFO: the board's layout and sizes as a dict."""
        return self._run(c.info("RANK.INFO", self.key))


def _settings(local: dict[str, Any]) -> dict[str, Any]:
    """The keyword settings of create/alter from the method's locals."""
    return {k: v for k, v in local.items() if k != "self"}


def _view(v: View) -> Tuple[Id, Id, Optional[Time]]:
    """A ``view_many`` item as (article, visitor, at)."""
    if len(v) == 2:
        return v[0], v[1], None
    if len(v) == 3:
        return v[0], v[1], v[2]
    raise ValueError(f"a view is (article, visitor) or (article, visitor, at), got {v!r}")
