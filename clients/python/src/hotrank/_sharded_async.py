"""The asyncio sharded boards (exported by :mod:`hotrank.asyncio`): the classes of
:mod:`hotrank._sharded`, every method a coroutine; each batch of shard calls is
sent at once with ``asyncio.gather``.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta, tzinfo
from typing import Any, AsyncIterator, Dict, Iterable, List, Optional, Sequence, TypeVar, Union

import redis.exceptions

from . import _calls as c
from . import _shard as s
from ._sharded import default_at, hot_make, hot_settings, rank_make, rank_settings
from ._sync import View, _view
from .asyncio import AsyncRedis, Client, HotBoard, Leaderboard
from ._types import (
    ArticleStats,
    Entry,
    HotArticle,
    Id,
    InfoValue,
    Order,
    Period,
    RankBy,
    Resolution,
    ScoreWithTime,
    Seconds,
    SetResult,
    Time,
    ServerError,
    ViewResult,
    server_error,
)

T = TypeVar("T")


class _Sharded:
    """N boards of one kind, and the plan driver (pipelines: one round trip per node)."""

    kind = ""

    def __init__(self, client: Union[AsyncRedis, Client], name: str, shards: int) -> None:
        prefix = ""
        if isinstance(client, Client):
            prefix = client.prefix
            client = client.redis
        c.check_prefix(prefix)
        #: The board's name as given; its shards are this name with ``{tag:ii}``.
        self.name = name
        #: The number of shards (fixed for the board's life: ids are routed by it).
        self.shards = shards
        #: Every shard's key (with the prefix), shard 0 first.
        self.keys = [prefix + k for k in s.shard_keys(name, shards)]
        self._described = prefix + name
        self._r: Any = client
        self._cache: Dict[str, bool] = {}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, shards={self.shards})"

    def shard_of(self, x: Id) -> int:
        """The shard of an article or member: ``crc32(utf8(x)) % shards``."""
        return s.shard_of(x, self.shards)

    def key_of(self, x: Id) -> str:
        """The key of the shard that holds ``x``."""
        return self.keys[s.shard_of(x, self.shards)]

    async def _one(self, call: c.Call[Any]) -> Any:
        try:
            reply = await self._r.execute_command(*call.args)
        except redis.exceptions.ResponseError as e:
            err = server_error(e)
            if isinstance(call, s.Tolerant):
                return err
            raise err from e
        return call.parse(reply)

    async def _batch(self, calls: s.Batch) -> List[Any]:
        """Runs the calls concurrently (asyncio.gather); raises the first error reply
        after all ran, except a Tolerant call's (returned)."""
        results = await asyncio.gather(*(self._one(call) for call in calls), return_exceptions=True)
        for r in results:
            if isinstance(r, BaseException) and not isinstance(r, ServerError):
                raise r
        for call, r in zip(calls, results):
            if isinstance(r, BaseException) and not isinstance(call, s.Tolerant):
                raise r
        return list(results)

    async def _drive(self, plan: s.Plan[T]) -> T:
        try:
            batch = next(plan)
            while True:
                batch = plan.send(await self._batch(batch))
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]

    async def describe(self) -> s.Description:
        """The board's description (``<name>:sharding``): kind, shards, settings."""
        return await self._drive(s.one_plan(s.read_description(self._described)))


class ShardedHotBoard(_Sharded):
    """One HOT board over ``shards`` boards: ``ShardedHotBoard(cluster, "hot:{news}", shards=16)``.

    An article lives in shard ``crc32(utf8(article)) % shards``, whose key is the
    name with ``{news}`` made ``{news:07}``. Writes and per-article reads go to
    that shard; ``top`` asks every shard at one shared ``at`` and merges them,
    equal to one board fed the same views. Every client of a board must use the
    same ``shards``: :meth:`create` records it and :meth:`ensure` checks it.
    Visitor limits (``visitor_max_views``) count per shard.
    """

    kind = "hot"

    def board(self, i: int) -> HotBoard:
        """Shard ``i`` as an ordinary HotBoard."""
        return HotBoard(self._r, self.keys[i])

    async def create(
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
        """HOT.CREATEs shard 0 with the given settings, reads every setting back from its
        HOT.INFO (the node's ``hotrank.*`` configs fill the ones not given), records them
        all in ``<name>:sharding``, then HOT.CREATEs every other shard with them: shards
        on nodes whose configs differ still score alike (``max_articles`` is per shard;
        ``trending_half_life`` gives every shard a trending ranking: ``top(by="trending")``).
        BoardExistsError if already recorded."""
        settings = hot_settings(locals())
        await self._drive(s.create_plan(self._described, self.kind, self.keys, settings, hot_make))

    async def alter(
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
        """Records the changed settings, then HOT.ALTERs every shard (rerun, or
        :meth:`ensure`, finishes an interrupted alter)."""
        change = hot_settings(locals())
        d = await self.describe()
        s.check(self._described, self.kind, self.shards, d)
        merged = {**d.settings, **change}
        await self._drive(s.routed_plan([s.write_description(self._described, self.kind, self.shards, merged)]))
        await self._drive(s.routed_plan([hot_make(k, change, True) for k in self.keys]))

    async def ensure(self) -> Dict[str, Any]:
        """Gives every shard the recorded settings (a shard deleted or never created gets
        HOT.CREATE, the others HOT.ALTER); returns them. A record that lacks settings (the
        older client recorded only those it was given) is first completed from shard 0's
        HOT.INFO and written back. ValueError if the board is recorded with another number
        of shards. Run it when a process starts."""
        return await self._drive(s.ensure_plan(self._described, self.kind, self.keys, hot_make))

    async def publish(self, article: Id, published_at: Time) -> bool:
        """HOT.PUBLISH on the article's shard."""
        return await self._drive(s.one_plan(c.hot_publish(self.key_of(article), article, published_at)))

    async def view(self, article: Id, visitor: Id, at: Optional[Time] = None) -> ViewResult:
        """HOT.VIEW on the article's shard."""
        return await self._drive(s.one_plan(c.hot_view(self.key_of(article), article, visitor, at)))

    async def view_many(self, views: Iterable[View]) -> List[ViewResult]:
        """Many views in one pipeline (one round trip per node), results in order; not a
        transaction: the first error is raised after all ran."""
        calls = []
        for v in views:
            a, vis, at = _view(v)
            calls.append(c.hot_view(self.key_of(a), a, vis, at))
        return await self._drive(s.routed_plan(calls))

    async def top(
        self, limit: int = 20, window: Optional[Seconds] = None, at: Optional[Time] = None, *, by: RankBy = "hot"
    ) -> List[HotArticle]:
        """The ``limit`` best articles at ``at`` (default: this machine's clock, floored to
        the second, the same for every shard): each shard's HOT.TOP, merged exactly
        (score descending, then article id ascending). Costs N shard calls and up to
        N × limit rows. ``by="trending"`` merges the shards' trending scores at that one
        ``at`` (each shard's landmark does not matter: the scores are the decayed sums
        at the same moment)."""
        return await self._drive(s.top_plan(self.keys, limit, window, default_at(at), by))

    async def stats(self, article: Id, at: Optional[Time] = None) -> Optional[ArticleStats]:
        """HOT.STATS on the article's shard."""
        return await self._drive(s.one_plan(c.hot_stats(self.key_of(article), article, at)))

    async def stats_many(self, articles: Iterable[Id], at: Optional[Time] = None) -> List[Optional[ArticleStats]]:
        """HOT.STATS of many articles, in order, one pipeline."""
        return await self._drive(s.routed_plan([c.hot_stats(self.key_of(a), a, at) for a in articles]))

    async def rem(self, *articles: Id) -> int:
        """HOT.REM of each article on its shard; the number removed."""
        return await self._drive(s.sum_plan([c.hot_rem(self.key_of(a), [a]) for a in articles]))

    async def drop(self) -> int:
        """HOT.DROP of every shard, then the record; the number of keys deleted."""
        n = await self._drive(s.sum_plan([c.drop("HOT.DROP", k) for k in self.keys]))
        return n + await self._drive(s.sum_plan([c.Call(("DEL", s.describe_key(self._described)), c.integer)]))

    async def info(self) -> List[Dict[str, InfoValue]]:
        """HOT.INFO of every shard, shard 0 first."""
        return await self._drive(s.routed_plan([c.info("HOT.INFO", k) for k in self.keys]))

    async def export_all(self, count: Optional[int] = None) -> AsyncIterator[ArticleStats]:
        """Every article of every shard (HOT.EXPORT, shard after shard)."""
        for i in range(self.shards):
            async for a in self.board(i).export_all(count):
                yield a


class ShardedLeaderboard(_Sharded):
    """One leaderboard over ``shards`` boards: ``ShardedLeaderboard(cluster, "lb:{game}", shards=16)``.

    A member lives in shard ``crc32(utf8(member)) % shards``. ``rank`` is the sum of
    every shard's RANK.COUNT at the member's score, time and name; ``range`` and
    ``around`` merge the shards in the board's order (score, then the time it was
    reached, then member name): all equal to one board fed the same writes. Call
    :meth:`create` (or :meth:`ensure`) before writing, so every shard has the
    board's layout; ``order`` comes from that record (desc if none).
    """

    kind = "rank"

    def board(self, i: int) -> Leaderboard:
        """Shard ``i`` as an ordinary Leaderboard."""
        return Leaderboard(self._r, self.keys[i])

    async def create(
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
        """RANK.CREATEs shard 0, reads its whole layout back (RANK.INFO), records it in
        ``<name>:sharding`` and RANK.CREATEs every other shard with it."""
        settings = rank_settings(resolution, min_score, max_score, order, periods, tz, keep)
        await self._drive(s.create_plan(self._described, self.kind, self.keys, settings, rank_make))

    async def ensure(self) -> Dict[str, Any]:
        """RANK.CREATEs the recorded layout on every shard that has none; returns it (a
        record without the whole layout is completed from shard 0 first)."""
        return await self._drive(s.ensure_plan(self._described, self.kind, self.keys, rank_make))

    async def incr(self, member: Id, delta: int, at: Optional[Time] = None) -> int:
        """RANK.INCR on the member's shard."""
        return await self._drive(s.one_plan(c.rank_incr(self.key_of(member), member, delta, at)))

    async def mincr(self, members: Sequence[Id], delta: int) -> List[int]:
        """RANK.MINCR per shard (all or nothing within a shard, not across shards)."""
        if isinstance(members, (str, bytes)) or not members:
            raise ValueError("mincr needs a non-empty list of members")
        groups: Dict[int, List[int]] = {}
        for i, m in enumerate(members):
            groups.setdefault(self.shard_of(m), []).append(i)
        order = list(groups.items())
        calls = [c.rank_mincr(self.keys[sh], [members[i] for i in idx], delta) for sh, idx in order]
        replies = await self._drive(s.routed_plan(calls))
        out = [0] * len(members)
        for (_, idx), scores in zip(order, replies):
            for i, v in zip(idx, scores):
                out[i] = v
        return out

    async def set(
        self,
        member: Id,
        score: int,
        *,
        gt: bool = False,
        lt: bool = False,
        best: bool = False,
        at: Optional[Time] = None,
    ) -> Union[int, SetResult]:
        """RANK.SET on the member's shard."""
        return await self._drive(s.one_plan(c.rank_set(self.key_of(member), member, score, gt, lt, best, at)))

    async def score(self, member: Id, *, period: Optional[Period] = None, ago: Optional[int] = None) -> Optional[int]:
        """RANK.SCORE on the member's shard."""
        return await self._drive(s.one_plan(c.rank_score(self.key_of(member), member, period, ago)))

    async def score_with_time(
        self, member: Id, *, period: Optional[Period] = None, ago: Optional[int] = None
    ) -> Optional[ScoreWithTime]:
        """RANK.SCORE … WITHTIME on the member's shard."""
        return await self._drive(s.one_plan(c.rank_score_with_time(self.key_of(member), member, period, ago)))

    async def rank(
        self, member: Id, *, ties: bool = False, period: Optional[Period] = None, ago: Optional[int] = None
    ) -> Optional[int]:
        """The member's 0-based rank on the whole board (None if absent): 1 + N shard calls."""
        return await self._drive(s.rank_plan(self.keys, self.key_of(member), member, ties, period, ago))

    async def range(
        self, start: int = 0, stop: int = -1, *, period: Optional[Period] = None, ago: Optional[int] = None
    ) -> List[Entry]:
        """Ranks ``start`` … ``stop`` of the whole board (ZRANGE indexes): every shard's
        top ``stop + 1`` merged, about N × (stop + 1) entries read."""
        return await self._drive(s.range_plan(self._described, self._cache, self.keys, start, stop, period, ago))

    async def top(self, n: int = 10, *, period: Optional[Period] = None, ago: Optional[int] = None) -> List[Entry]:
        """The ``n`` best: ``range(0, n - 1)``."""
        return await self.range(0, n - 1, period=period, ago=ago) if n > 0 else []

    async def around(
        self, member: Id, n: int = 5, *, period: Optional[Period] = None, ago: Optional[int] = None
    ) -> List[Entry]:
        """The member and up to ``n`` (≤ 1000) neighbours each side, exact ranks; [] if absent.
        Three round trips: the member's place, the counts ahead in each shard, then
        2n + 1 entries from each shard."""
        return await self._drive(s.around_plan(self._described, self._cache, self.keys, self.key_of(member), member, n, period, ago))

    async def card(self, *, period: Optional[Period] = None, ago: Optional[int] = None) -> int:
        """The number of members: the sum of the shards'."""
        return await self._drive(s.card_plan(self.keys, period, ago))

    async def rem(self, *members: Id) -> int:
        """RANK.REM of each member on its shard; the number removed."""
        return await self._drive(s.sum_plan([c.rank_rem(self.key_of(m), [m]) for m in members]))

    async def drop(self) -> int:
        """RANK.DROP of every shard, then the record; the number of keys deleted."""
        self._cache.clear()
        n = await self._drive(s.sum_plan([c.drop("RANK.DROP", k) for k in self.keys]))
        return n + await self._drive(s.sum_plan([c.Call(("DEL", s.describe_key(self._described)), c.integer)]))


__all__ = ["ShardedHotBoard", "ShardedLeaderboard"]

