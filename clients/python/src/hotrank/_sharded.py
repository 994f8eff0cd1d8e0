"""Sharded boards: one logical HOT board or leaderboard over N ordinary boards
(shards), each with its own hash tag so a Redis Cluster spreads them over its
masters. The logic is in :mod:`hotrank._shard` (plans); here are the sync
classes, and in :mod:`hotrank.asyncio` the same over redis.asyncio.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta, tzinfo
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, TypeVar, Union

import redis.cluster
import redis.exceptions

from . import _calls as c
from . import _shard as s
from ._sync import Client, HotBoard, Leaderboard, SyncRedis, View, _view
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
    ViewResult,
    server_error,
)

T = TypeVar("T")


def hot_make(key: str, settings: Dict[str, Any], alter: bool) -> c.Call[None]:
    """HOT.CREATE (or HOT.ALTER) of one shard with the board's settings."""
    return c.hot_create("HOT.ALTER" if alter else "HOT.CREATE", key, settings)


def rank_make(key: str, settings: Dict[str, Any], alter: bool) -> c.Call[None]:
    """RANK.CREATE of one shard with the board's layout (a layout never changes)."""
    return c.rank_create(
        key,
        settings.get("resolution"),
        settings.get("min_score"),
        settings.get("max_score"),
        settings.get("order"),
        settings.get("periods"),
        settings.get("tz"),
        settings.get("keep"),
    )


def hot_settings(local: Dict[str, Any]) -> Dict[str, Any]:
    """The given HOT settings (None left out; durations as whole seconds)."""
    out: Dict[str, Any] = {}
    for k, v in local.items():
        if k == "self" or v is None:
            continue
        out[k] = c.seconds_arg(k, v) if k.endswith("_seconds") or k == "trending_half_life" else v
    return out


def rank_settings(
    resolution: Optional[Resolution],
    min_score: Optional[int],
    max_score: Optional[int],
    order: Optional[Order],
    periods: Optional[Sequence[Period]],
    tz: Union[str, timedelta, tzinfo, None],
    keep: Optional[int],
) -> Dict[str, Any]:
    """RANK.CREATE's options as JSON-able settings (None left out)."""
    raw: Dict[str, Any] = {
        "resolution": resolution,
        "min_score": min_score,
        "max_score": max_score,
        "order": order,
        "periods": list(periods) if periods is not None else None,
        "tz": c.tz_arg(tz) if tz is not None else None,
        "keep": keep,
    }
    return {k: v for k, v in raw.items() if v is not None}


def default_at(at: Optional[Time]) -> Time:
    """The one query time every shard is asked at: ``at``, or this machine's clock
    floored to the second."""
    return int(time.time()) if at is None else at


class _Sharded:
    """N boards of one kind, and the plan driver (pipelines: one round trip per node)."""

    kind = ""

    def __init__(self, client: Union[SyncRedis, Client], name: str, shards: int) -> None:
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
        self._pool: Optional[ThreadPoolExecutor] = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, shards={self.shards})"

    def shard_of(self, x: Id) -> int:
        """The shard of an article or member: ``crc32(utf8(x)) % shards``."""
        return s.shard_of(x, self.shards)

    def key_of(self, x: Id) -> str:
        """The key of the shard that holds ``x``."""
        return self.keys[s.shard_of(x, self.shards)]

    def _groups(self, calls: s.Batch) -> List[Tuple[Any, List[int]]]:
        """The calls' indexes grouped by the connection that serves their key: one
        group per cluster node (a plain client is one group)."""
        if not isinstance(self._r, redis.cluster.RedisCluster):
            return [(self._r, list(range(len(calls))))]
        groups: Dict[str, Tuple[Any, List[int]]] = {}
        for i, call in enumerate(calls):
            node = self._r.get_node_from_key(call.args[1])  # type: ignore[no-untyped-call]
            if node.name not in groups:
                groups[node.name] = (self._r.get_redis_connection(node), [])
            groups[node.name][1].append(i)
        return list(groups.values())

    def _pipeline(self, conn: Any, calls: List[c.Call[Any]]) -> List[Any]:
        """One node's calls in one pipeline, never retried (a retried HOT.VIEW would
        count twice); a MOVED/ASK reply (slots moving) is sent again through the
        cluster client, which follows the redirection (the command did not run)."""
        pipe = conn.pipeline(transaction=False)
        for call in calls:
            pipe.execute_command(*call.args)
        replies: List[Any] = pipe.execute(raise_on_error=False)
        for i, r in enumerate(replies):
            if isinstance(r, (redis.exceptions.MovedError, redis.exceptions.AskError)):
                try:
                    replies[i] = self._r.execute_command(*calls[i].args)
                except redis.exceptions.ResponseError as e:
                    replies[i] = e
        return replies

    def _batch(self, calls: s.Batch) -> List[Any]:
        """Runs the calls with one pipeline per node, the nodes at the same time;
        raises the first error reply, except a Tolerant call's (returned)."""
        if not calls:
            return []
        groups = self._groups(calls)
        replies: List[Any] = [None] * len(calls)
        if len(groups) == 1:
            done = [self._pipeline(groups[0][0], [calls[i] for i in groups[0][1]])]
        else:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="hotrank-shards")
            futures = [self._pool.submit(self._pipeline, conn, [calls[i] for i in idx]) for conn, idx in groups]
            done = [f.result() for f in futures]
        for (_, idx), rs in zip(groups, done):
            for i, r in zip(idx, rs):
                replies[i] = r
        out: List[Any] = []
        first: Optional[Exception] = None
        for call, reply in zip(calls, replies):
            if isinstance(reply, redis.exceptions.ResponseError):
                err = server_error(reply)
                if isinstance(call, s.Tolerant):
                    out.append(err)
                    continue
                first = first or err
                out.append(None)
            else:
                out.append(call.parse(reply))
        if first is not None:
            raise first
        return out

    def _drive(self, plan: s.Plan[T]) -> T:
        try:
            batch = next(plan)
            while True:
                batch = plan.send(self._batch(batch))
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]

    def describe(self) -> s.Description:
        """The board's description (``<name>:sharding``): kind, shards, settings."""
        return self._drive(s.one_plan(s.read_description(self._described)))


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
        """HOT.CREATEs shard 0 with the given settings, reads every setting back from its
        HOT.INFO (the node's ``hotrank.*`` configs fill the ones not given), records them
        all in ``<name>:sharding``, then HOT.CREATEs every other shard with them: shards
        on nodes whose configs differ still score alike (``max_articles`` is per shard;
        ``trending_half_life`` gives every shard a trending ranking: ``top(by="trending")``).
        BoardExistsError if already recorded."""
        settings = hot_settings(locals())
        self._drive(s.create_plan(self._described, self.kind, self.keys, settings, hot_make))

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
        """Records the changed settings, then HOT.ALTERs every shard (rerun, or
        :meth:`ensure`, finishes an interrupted alter)."""
        change = hot_settings(locals())
        d = self.describe()
        s.check(self._described, self.kind, self.shards, d)
        merged = {**d.settings, **change}
        self._drive(s.routed_plan([s.write_description(self._described, self.kind, self.shards, merged)]))
        self._drive(s.routed_plan([hot_make(k, change, True) for k in self.keys]))

    def ensure(self) -> Dict[str, Any]:
        """Gives every shard the recorded settings (a shard deleted or never created gets
        HOT.CREATE, the others HOT.ALTER); returns them. A record that lacks settings (the
        older client recorded only those it was given) is first completed from shard 0's
        HOT.INFO and written back. ValueError if the board is recorded with another number
        of shards. Run it when a process starts."""
        return self._drive(s.ensure_plan(self._described, self.kind, self.keys, hot_make))

    def publish(self, article: Id, published_at: Time) -> bool:
        """HOT.PUBLISH on the article's shard."""
        return self._drive(s.one_plan(c.hot_publish(self.key_of(article), article, published_at)))

    def view(self, article: Id, visitor: Id, at: Optional[Time] = None) -> ViewResult:
        """HOT.VIEW on the article's shard."""
        return self._drive(s.one_plan(c.hot_view(self.key_of(article), article, visitor, at)))

    def view_many(self, views: Iterable[View]) -> List[ViewResult]:
        """Many views in one pipeline (one round trip per node), results in order; not a
        transaction: the first error is raised after all ran."""
        calls = []
        for v in views:
            a, vis, at = _view(v)
            calls.append(c.hot_view(self.key_of(a), a, vis, at))
        return self._drive(s.routed_plan(calls))

    def top(
        self, limit: int = 20, window: Optional[Seconds] = None, at: Optional[Time] = None, *, by: RankBy = "hot"
    ) -> List[HotArticle]:
        """The ``limit`` best articles at ``at`` (default: this machine's clock, floored to
        the second, the same for every shard): each shard's HOT.TOP, merged exactly
        (score descending, then article id ascending). Costs N shard calls and up to
        N × limit rows. ``by="trending"`` merges the shards' trending scores at that one
        ``at`` (each shard's landmark does not matter: the scores are the decayed sums
        at the same moment)."""
        return self._drive(s.top_plan(self.keys, limit, window, default_at(at), by))

    def stats(self, article: Id, at: Optional[Time] = None) -> Optional[ArticleStats]:
        """HOT.STATS on the article's shard."""
        return self._drive(s.one_plan(c.hot_stats(self.key_of(article), article, at)))

    def stats_many(self, articles: Iterable[Id], at: Optional[Time] = None) -> List[Optional[ArticleStats]]:
        """HOT.STATS of many articles, in order, one pipeline."""
        return self._drive(s.routed_plan([c.hot_stats(self.key_of(a), a, at) for a in articles]))

    def rem(self, *articles: Id) -> int:
        """HOT.REM of each article on its shard; the number removed."""
        return self._drive(s.sum_plan([c.hot_rem(self.key_of(a), [a]) for a in articles]))

    def drop(self) -> int:
        """HOT.DROP of every shard, then the record; the number of keys deleted."""
        n = self._drive(s.sum_plan([c.drop("HOT.DROP", k) for k in self.keys]))
        return n + self._drive(s.sum_plan([c.Call(("DEL", s.describe_key(self._described)), c.integer)]))

    def info(self) -> List[Dict[str, InfoValue]]:
        """HOT.INFO of every shard, shard 0 first."""
        return self._drive(s.routed_plan([c.info("HOT.INFO", k) for k in self.keys]))

    def export_all(self, count: Optional[int] = None) -> Iterator[ArticleStats]:
        """Every article of every shard (HOT.EXPORT, shard after shard)."""
        for i in range(self.shards):
            yield from self.board(i).export_all(count)


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
        """RANK.CREATEs shard 0, reads its whole layout back (RANK.INFO), records it in
        ``<name>:sharding`` and RANK.CREATEs every other shard with it."""
        settings = rank_settings(resolution, min_score, max_score, order, periods, tz, keep)
        self._drive(s.create_plan(self._described, self.kind, self.keys, settings, rank_make))

    def ensure(self) -> Dict[str, Any]:
        """RANK.CREATEs the recorded layout on every shard that has none; returns it (a
        record without the whole layout is completed from shard 0 first)."""
        return self._drive(s.ensure_plan(self._described, self.kind, self.keys, rank_make))

    def incr(self, member: Id, delta: int, at: Optional[Time] = None) -> int:
        """RANK.INCR on the member's shard."""
        return self._drive(s.one_plan(c.rank_incr(self.key_of(member), member, delta, at)))

    def mincr(self, members: Sequence[Id], delta: int) -> List[int]:
        """RANK.MINCR per shard (all or nothing within a shard, not across shards)."""
        if isinstance(members, (str, bytes)) or not members:
            raise ValueError("mincr needs a non-empty list of members")
        groups: Dict[int, List[int]] = {}
        for i, m in enumerate(members):
            groups.setdefault(self.shard_of(m), []).append(i)
        order = list(groups.items())
        calls = [c.rank_mincr(self.keys[sh], [members[i] for i in idx], delta) for sh, idx in order]
        replies = self._drive(s.routed_plan(calls))
        out = [0] * len(members)
        for (_, idx), scores in zip(order, replies):
            for i, v in zip(idx, scores):
                out[i] = v
        return out

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
        """RANK.SET on the member's shard."""
        return self._drive(s.one_plan(c.rank_set(self.key_of(member), member, score, gt, lt, best, at)))

    def score(self, member: Id, *, period: Optional[Period] = None, ago: Optional[int] = None) -> Optional[int]:
        """RANK.SCORE on the member's shard."""
        return self._drive(s.one_plan(c.rank_score(self.key_of(member), member, period, ago)))

    def score_with_time(
        self, member: Id, *, period: Optional[Period] = None, ago: Optional[int] = None
    ) -> Optional[ScoreWithTime]:
        """RANK.SCORE … WITHTIME on the member's shard."""
        return self._drive(s.one_plan(c.rank_score_with_time(self.key_of(member), member, period, ago)))

    def rank(
        self, member: Id, *, ties: bool = False, period: Optional[Period] = None, ago: Optional[int] = None
    ) -> Optional[int]:
        """The member's 0-based rank on the whole board (None if absent): 1 + N shard calls."""
        return self._drive(s.rank_plan(self.keys, self.key_of(member), member, ties, period, ago))

    def range(
        self, start: int = 0, stop: int = -1, *, period: Optional[Period] = None, ago: Optional[int] = None
    ) -> List[Entry]:
        """Ranks ``start`` … ``stop`` of the whole board (ZRANGE indexes): every shard's
        top ``stop + 1`` merged, about N × (stop + 1) entries read."""
        return self._drive(s.range_plan(self._described, self._cache, self.keys, start, stop, period, ago))

    def top(self, n: int = 10, *, period: Optional[Period] = None, ago: Optional[int] = None) -> List[Entry]:
        """The ``n`` best: ``range(0, n - 1)``."""
        return self.range(0, n - 1, period=period, ago=ago) if n > 0 else []

    def around(
        self, member: Id, n: int = 5, *, period: Optional[Period] = None, ago: Optional[int] = None
    ) -> List[Entry]:
        """The member and up to ``n`` (≤ 1000) neighbours each side, exact ranks; [] if absent.
        Three round trips: the member's place, the counts ahead in each shard, then
        2n + 1 entries from each shard."""
        return self._drive(s.around_plan(self._described, self._cache, self.keys, self.key_of(member), member, n, period, ago))

    def card(self, *, period: Optional[Period] = None, ago: Optional[int] = None) -> int:
        """The number of members: the sum of the shards'."""
        return self._drive(s.card_plan(self.keys, period, ago))

    def rem(self, *members: Id) -> int:
        """RANK.REM of each member on its shard; the number removed."""
        return self._drive(s.sum_plan([c.rank_rem(self.key_of(m), [m]) for m in members]))

    def drop(self) -> int:
        """RANK.DROP of every shard, then the record; the number of keys deleted."""
        self._cache.clear()
        n = self._drive(s.sum_plan([c.drop("RANK.DROP", k) for k in self.keys]))
        return n + self._drive(s.sum_plan([c.Call(("DEL", s.describe_key(self._described)), c.integer)]))


__all__ = ["ShardedHotBoard", "ShardedLeaderboard"]

