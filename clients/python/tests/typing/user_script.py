"""A user's script that calls every documented method of hotrank and hotrank.asyncio,
with the result types spelled out. tests/test_typing.py runs ``mypy --strict`` on it
(it must pass) and also runs it against a real server."""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone
from typing import Optional

import redis
import redis.asyncio

import hotrank
import hotrank.asyncio


def sync_demo(r: redis.Redis, t: int) -> list[object]:
    """Every sync method once; returns what they gave."""
    app = hotrank.Client(r, prefix="demo:")
    hot: hotrank.HotBoard = app.hot("hot:{typed}")
    lb: hotrank.Leaderboard = hotrank.Leaderboard(r, "lb:{typed}", prefix="demo:")
    new: bool = hot.publish("a1", datetime.fromtimestamp(t - 3600, tz=timezone.utc))
    view: hotrank.ViewResult = hot.view("a1", "v1", at=t)
    status: hotrank.ViewStatus = view.status
    pv: int = view.pv
    many: list[hotrank.ViewResult] = hot.view_many([("a1", "v2"), ("a2", "v1", t + 1), (b"a3", b"v3", None)])
    top: list[hotrank.HotArticle] = hot.top(10, window=timedelta(hours=72), at=t + 60)
    first: str = top[0].article
    stats: Optional[hotrank.ArticleStats] = hot.stats("a1", at=t + 60)
    published: Optional[datetime] = stats.published if stats else None
    listed: list[Optional[hotrank.ArticleStats]] = hot.stats_many(["a1", "a2"])
    lb.create(order="desc", periods=["day", "week"], tz="+00:00", keep=2)
    incr: int = lb.incr("p1", 10, at=t)
    scores: list[int] = lb.mincr(["p1", "p2"], 1)
    plain: int = lb.set("p3", 5)
    best: hotrank.SetResult = lb.set("p3", 7, best=True)
    gt: hotrank.SetResult = lb.set("p3", 6, gt=True, at=t)
    lt: hotrank.SetResult = lb.set("p3", 6, lt=True)
    score: Optional[int] = lb.score("p1")
    timed: Optional[hotrank.ScoreWithTime] = lb.score_with_time("p1", period="day")
    rank: Optional[int] = lb.rank("p1", ties=True, period="week", ago=0)
    entries: list[hotrank.Entry] = lb.range(0, 9)
    around: list[hotrank.Entry] = lb.around("p1", 5)
    by_score: list[hotrank.ScoredMember] = lb.range_by_score(0, math.inf, offset=0, count=10)
    card: int = lb.card(period="day")
    removed: int = lb.rem("p2")
    try:
        lb.create()
    except hotrank.BoardExistsError as e:
        message: str = e.message
        code: str = e.code
    dropped: int = lb.drop()
    return [new, view, status, pv, many, first, published, listed, incr, scores, plain, best, gt, lt,
            score, timed, rank, entries, around, by_score, card, removed, message, code, dropped]  # fmt: skip


def lifecycle_demo(r: redis.Redis) -> list[object]:
    """The board lifecycle methods (HOT.CREATE/ALTER/INFO/EXPORT/REM/DROP, RANK.INFO)."""
    hot = hotrank.HotBoard(r, "hot:{life}")
    hot.create(alpha=1.0, beta=1.2, base=2, gamma=1.5, dedup_seconds=timedelta(minutes=15), dedup_shards=64,
               visitor_max_views=60, visitor_window_seconds=3600, max_articles=1000,
               retention_seconds=timedelta(days=90))  # fmt: skip
    hot.alter(gamma=1.8)
    info: dict[str, hotrank.InfoValue] = hot.info()
    page: hotrank.ExportPage = hot.export(0, count=100)
    cursor: int = page.cursor
    everything: list[hotrank.ArticleStats] = list(hot.export_all(count=100))
    last: Optional[float] = everything[0].last_view if everything else None
    rem: int = hot.rem("a1", "a2")
    dropped: int = hot.drop()
    lb_info: dict[str, hotrank.InfoValue] = hotrank.Leaderboard(r, "lb:{life}").info()
    return [info, cursor, last, rem, dropped, lb_info]


async def async_demo(r: redis.asyncio.Redis, t: int) -> list[object]:
    """The same calls through hotrank.asyncio."""
    app = hotrank.asyncio.Client(r, prefix="ademo:")
    hot: hotrank.asyncio.HotBoard = app.hot("hot:{typed}")
    lb: hotrank.asyncio.Leaderboard = app.leaderboard("lb:{typed}")
    new: bool = await hot.publish("a1", t - 3600)
    view: hotrank.ViewResult = await hot.view("a1", "v1", at=t)
    many: list[hotrank.ViewResult] = await hot.view_many([("a1", "v2", t)])
    top: list[hotrank.HotArticle] = await hot.top(at=t + 60)
    stats: Optional[hotrank.ArticleStats] = await hot.stats("a1")
    listed: list[Optional[hotrank.ArticleStats]] = await hot.stats_many(["a1"])
    await lb.create(periods=["month"])
    incr: int = await lb.incr("p1", 10)
    scores: list[int] = await lb.mincr(["p1"], 1)
    plain: int = await lb.set("p2", 5)
    best: hotrank.SetResult = await lb.set("p2", 7, best=True)
    score: Optional[int] = await lb.score("p1", period="month")
    timed: Optional[hotrank.ScoreWithTime] = await lb.score_with_time("p1")
    rank: Optional[int] = await lb.rank("p1")
    entries: list[hotrank.Entry] = await lb.range(-10)
    around: list[hotrank.Entry] = await lb.around("p1")
    by_score: list[hotrank.ScoredMember] = await lb.range_by_score(-math.inf, 100)
    card: int = await lb.card()
    removed: int = await lb.rem("p2")
    dropped: int = await lb.drop()
    return [new, view, many, top, stats, listed, incr, scores, plain, best, score, timed, rank, entries, around,
            by_score, card, removed, dropped]  # fmt: skip


async def async_lifecycle_demo(r: redis.asyncio.Redis) -> list[object]:
    """The asyncio lifecycle methods."""
    hot = hotrank.asyncio.HotBoard(r, "hot:{alife}")
    await hot.create(gamma=1.5)
    await hot.alter(max_articles=10)
    info: dict[str, hotrank.InfoValue] = await hot.info()
    page: hotrank.ExportPage = await hot.export()
    everything: list[hotrank.ArticleStats] = [a async for a in hot.export_all()]
    rem: int = await hot.rem("a1")
    dropped: int = await hot.drop()
    lb_info: dict[str, hotrank.InfoValue] = await hotrank.asyncio.Leaderboard(r, "lb:{alife}").info()
    return [info, page, everything, rem, dropped, lb_info]
