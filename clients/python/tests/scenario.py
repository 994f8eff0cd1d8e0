"""One fixed sequence of calls on a HOT board and a leaderboard, run by a sync or an
async driver, so sync, asyncio and cluster clients over RESP2 and RESP3 can be shown
to give equal results. Every write has an explicit time (AT), so two runs on fresh
boards give the same replies."""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone
from typing import Any, Union

import hotrank
import hotrank.asyncio as hasync

from conftest import T0

Op = tuple[str, str, tuple[Any, ...], dict[str, Any]]


def periods_ago() -> tuple[int, int]:
    """How many days and ISO weeks lie between T0 and now (UTC): the AGO of T0's period."""
    now = datetime.now(timezone.utc).date()
    then = datetime.fromtimestamp(T0, tz=timezone.utc).date()
    monday = lambda d: d - timedelta(days=d.weekday())  # noqa: E731
    return (now - then).days, (monday(now) - monday(then)).days // 7


def ops(new_commands: bool) -> list[Op]:
    """The calls, in order. ``new_commands``: also HOT.CREATE/ALTER/INFO/REM/EXPORT/DROP
    and RANK.INFO (when the server has them)."""
    t = T0
    day_ago, week_ago = periods_ago()
    out: list[Op] = []
    if new_commands:
        out += [
            ("hot", "create", (), {"gamma": 1.8, "dedup_seconds": timedelta(minutes=10), "max_articles": 100}),
            ("hot", "alter", (), {"base": 2.5}),
        ]
    out += [
        ("hot", "publish", ("a1", t - 3600), {}),
        ("hot", "publish", ("a2", datetime.fromtimestamp(t - 5 * 3600, tz=timezone.utc)), {}),
        ("hot", "publish", ("a1", t - 3000.5), {}),
        ("hot", "view", ("a1", "v1"), {"at": t}),
        ("hot", "view", ("a1", "v1"), {"at": t + 1}),
        ("hot", "view_many", ([("a2", "v1", t), ("a2", "v2", t + 2), ("a3", "v3", t + 3.5), ("a1", "v2", t + 4)],), {}),
        ("hot", "view", ("a1", "v9"), {"at": t + 10**7}),
        ("hot", "top", (), {"at": t + 60}),
        ("hot", "top", (2,), {"window": timedelta(hours=2), "at": t + 60}),
        ("hot", "top", (10,), {"window": 3 * 3600, "at": t + 60.25}),
        ("hot", "stats", ("a2",), {"at": t + 60}),
        ("hot", "stats", ("nope",), {"at": t + 60}),
        ("hot", "stats_many", (["a2", "a3", "nope"],), {"at": t + 60}),
        ("lb", "create", (), {"periods": ["day", "week"], "keep": 3}),
        ("lb", "create", (), {}),
        ("lb", "incr", ("p1", 5), {"at": t}),
        ("lb", "set", ("p2", 7), {"at": t}),
        ("lb", "set", ("p2", 9), {"best": True, "at": t + 1}),
        ("lb", "set", ("p2", 3), {"gt": True, "at": t + 2}),
        ("lb", "set", ("p4", 3), {"lt": True, "at": t + 2}),
        ("lb", "incr", ("p3", 9), {"at": t + 5}),
        ("lb", "mincr", (["p1", "p4"], 2), {}),
        ("lb", "incr", ("p1", 1), {"at": t + 10**7}),
        ("lb", "score", ("p1",), {}),
        ("lb", "score", ("nobody",), {}),
        ("lb", "score_with_time", ("p2",), {}),
        ("lb", "score_with_time", ("nobody",), {}),
        ("lb", "rank", ("p3",), {}),
        ("lb", "rank", ("p3",), {"ties": True}),
        ("lb", "rank", ("nobody",), {}),
        ("lb", "range", (), {}),
        ("lb", "range", (-2,), {}),
        ("lb", "range", (1, 2), {}),
        ("lb", "around", ("p1", 1), {}),
        ("lb", "around", ("nobody",), {}),
        ("lb", "range_by_score", (0, math.inf), {}),
        ("lb", "range_by_score", (-math.inf, 8), {"offset": 1, "count": 1}),
        ("lb", "card", (), {}),
        ("lb", "card", (), {"period": "day", "ago": day_ago}),
        ("lb", "score", ("p2",), {"period": "day", "ago": day_ago}),
        ("lb", "range", (), {"period": "week", "ago": week_ago}),
        ("lb", "card", (), {"period": "month"}),
        ("lb", "rem", ("p3", "nobody"), {}),
        ("lb", "card", (), {}),
    ]
    if new_commands:
        out += [
            ("hot", "info", (), {}),
            ("lb", "info", (), {}),
            ("hot", "export", (0,), {"count": 100, "at": t + 60}),
            ("hot", "export_all", (), {"count": 1, "at": t + 60}),
            ("hot", "rem", ("a3", "nope"), {}),
            ("hot", "drop", (), {}),
        ]
    out += [("lb", "drop", (), {})]
    return out


Result = Union[Any, tuple[str, str]]


def normalize(result: Any) -> Any:
    """Drops what legitimately differs between runs: HOT.INFO/RANK.INFO sizes in
    bytes (memory depends on the server), nothing else."""
    if isinstance(result, dict):
        return {k: v for k, v in result.items() if "memory" not in k and "bytes" not in k}
    return result


def run_sync(client: Any, hot_key: str, lb_key: str, new_commands: bool = False) -> list[Result]:
    """Runs the scenario through ``hotrank`` (a redis.Redis, RedisCluster or hotrank.Client)."""
    boards = {"hot": hotrank.HotBoard(client, hot_key), "lb": hotrank.Leaderboard(client, lb_key)}
    results: list[Result] = []
    for kind, method, args, kwargs in ops(new_commands):
        try:
            got = getattr(boards[kind], method)(*args, **kwargs)
            if method == "export_all":
                got = list(got)
            results.append(normalize(got))
        except hotrank.ServerError as e:
            results.append((type(e).__name__, e.message))
    return results


async def run_async(client: Any, hot_key: str, lb_key: str, new_commands: bool = False) -> list[Result]:
    """The same scenario through ``hotrank.asyncio``."""
    boards = {"hot": hasync.HotBoard(client, hot_key), "lb": hasync.Leaderboard(client, lb_key)}
    results: list[Result] = []
    for kind, method, args, kwargs in ops(new_commands):
        try:
            call = getattr(boards[kind], method)(*args, **kwargs)
            if method == "export_all":
                got = [x async for x in call]
            else:
                got = await call
            results.append(normalize(got))
        except hotrank.ServerError as e:
            results.append((type(e).__name__, e.message))
    return results
