"""Every client method against the raw command's reply, on redis-server and
valkey-server, over RESP2 and RESP3.

Writes go twice: through the client on one board and as the raw command on a twin
board (with the same AT), and the replies must agree; reads go through the client
and raw on the same board."""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
import redis

import hotrank
from conftest import DT0, T0, Server, require
from hotrank import ArticleStats, Entry, HotArticle, ScoredMember, ScoreWithTime, SetResult, ViewResult

HOT, TWIN = "hot:{raw}", "hot:{raw}:twin"
LB, LB_TWIN = "lb:{raw}", "lb:{raw}:twin"


def pairs(reply: Any) -> dict[str, Any]:
    """A field/value reply (RESP2 list or RESP3 map) as a dict."""
    return dict(reply) if isinstance(reply, dict) else dict(zip(reply[0::2], reply[1::2]))


def stats_of(article: str, reply: Any) -> ArticleStats:
    """The reference parse of HOT.STATS."""
    f = pairs(reply)
    return ArticleStats(
        article, int(f["pv"]), int(f["uv"]), int(f["suspicious"]), float(f["published_at"]), float(f["score"])
    )


@pytest.fixture
def hot(r: redis.Redis) -> hotrank.HotBoard:
    """A HOT board with three articles and a few views, built both ways (client and raw twin)."""
    board = hotrank.HotBoard(r, HOT)
    for i, article in enumerate(["a1", "a2", "a3"]):
        assert board.publish(article, T0 - 3600 * (i + 1)) == (r.execute_command("HOT.PUBLISH", TWIN, article, T0 - 3600 * (i + 1)) == 1)
    for n in range(6):
        article, visitor = f"a{1 + n % 3}", f"v{n % 4}"
        got = board.view(article, visitor, at=T0 + n)
        pv, uv, score, status = r.execute_command("HOT.VIEW", TWIN, article, visitor, "AT", T0 + n)
        assert got == ViewResult(pv, uv, float(score), status)
    return board


def test_publish_matches_raw(r: redis.Redis) -> None:
    board = hotrank.HotBoard(r, HOT)
    assert board.publish("a", DT0) is True
    assert r.execute_command("HOT.PUBLISH", TWIN, "a", T0) == 1
    assert board.publish("a", T0 + 0.5) is False
    assert r.execute_command("HOT.PUBLISH", TWIN, "a", "%d.5" % T0) == 0
    raw = r.execute_command("HOT.STATS", HOT, "a", "AT", T0 + 60)  # published, never viewed
    assert board.stats("a", at=T0 + 60) == (None if raw is None else stats_of("a", raw))
    assert r.execute_command("HOT.STATS", HOT, "a") == r.execute_command("HOT.STATS", TWIN, "a")


def test_view_statuses_match_raw(r: redis.Redis) -> None:
    board = hotrank.HotBoard(r, HOT)
    r.config_set("hotrank.visitor-max-views", 2)
    try:
        for n in range(4):
            got = board.view("a", "bot", at=T0 + n)
            pv, uv, score, status = r.execute_command("HOT.VIEW", TWIN, "a", "bot", "AT", T0 + n)
            assert got == ViewResult(pv, uv, float(score), status)
            assert got.counted == (status == "counted")
        assert [board.view("a", "bot", at=T0 + 9).status] == ["suspicious"]
    finally:
        r.config_set("hotrank.visitor-max-views", 60)


def test_view_many_matches_raw_views(r: redis.Redis) -> None:
    board = hotrank.HotBoard(r, HOT)
    views = [("a1", "v1", T0), ("a1", "v1", T0 + 1), ("a2", "v2", DT0 + timedelta(seconds=2)), ("a1", "v3", T0 + 3)]
    got = board.view_many(views)
    raw = [r.execute_command("HOT.VIEW", TWIN, a, v, "AT", T0 + i if i != 2 else T0 + 2) for i, (a, v, _) in enumerate(views)]
    assert got == [ViewResult(p, u, float(s), st) for p, u, s, st in raw]
    assert [v.status for v in got] == ["counted", "duplicate", "counted", "counted"]
    assert board.view_many([]) == []


def test_top_matches_raw(r: redis.Redis, hot: hotrank.HotBoard) -> None:
    for kwargs, raw_args in [
        ({"at": T0 + 60}, ["LIMIT", 20, "WITHSCORES", "AT", T0 + 60]),
        ({"limit": 2, "at": T0 + 60}, ["LIMIT", 2, "WITHSCORES", "AT", T0 + 60]),
        ({"window": timedelta(hours=2), "at": T0 + 60}, ["LIMIT", 20, "WINDOW", 7200, "WITHSCORES", "AT", T0 + 60]),
        ({"window": 10_000, "at": DT0 + timedelta(minutes=1)}, ["LIMIT", 20, "WINDOW", "10000", "WITHSCORES", "AT", T0 + 60]),
    ]:
        flat = r.execute_command("HOT.TOP", HOT, *raw_args)
        want = [HotArticle(i, a, float(s)) for i, (a, s) in enumerate(zip(flat[0::2], flat[1::2]))]
        assert hot.top(**kwargs) == want
        assert want  # not vacuous
    assert [a.article for a in hot.top()] == r.execute_command("HOT.TOP", HOT)


def test_stats_match_raw(r: redis.Redis, hot: hotrank.HotBoard) -> None:
    for article in ["a1", "a2", "a3"]:
        want = stats_of(article, r.execute_command("HOT.STATS", HOT, article, "AT", T0 + 60))
        got = hot.stats(article, at=T0 + 60)
        assert got == want
        assert got is not None and got.published == datetime.fromtimestamp(got.published_at or 0, tz=timezone.utc)
    assert hot.stats("none") is None and r.execute_command("HOT.STATS", HOT, "none") is None
    assert hot.stats_many(["a1", "none", "a3"], at=T0 + 60) == [
        hot.stats("a1", at=T0 + 60),
        None,
        hot.stats("a3", at=T0 + 60),
    ]


@pytest.fixture
def lb(r: redis.Redis) -> hotrank.Leaderboard:
    """A leaderboard with periods and five members, written both ways."""
    board = hotrank.Leaderboard(r, LB)
    assert board.create(periods=["day", "week"], tz=timedelta(hours=0), keep=3) is None
    assert r.execute_command("RANK.CREATE", LB_TWIN, "PERIODS", "day", "week", "TZ", "+00:00", "KEEP", 3) == "OK"
    for i, (member, score) in enumerate([("ada", 50), ("bob", 50), ("cy", 40), ("dee", 70), ("eve", 10)]):
        assert board.incr(member, score, at=T0 + i) == r.execute_command("RANK.INCR", LB_TWIN, member, score, "AT", T0 + i)
    return board


def test_leaderboard_writes_match_raw(r: redis.Redis, lb: hotrank.Leaderboard) -> None:
    assert lb.set("fay", 30, at=T0 + 9) == r.execute_command("RANK.SET", LB_TWIN, "fay", 30, "AT", T0 + 9) == 30
    for flag, score in [("gt", 20), ("gt", 35), ("lt", 90), ("lt", 25), ("best", 60), ("best", 1)]:
        got = lb.set("fay", score, at=T0 + 10, **{flag: True})
        s, w = r.execute_command("RANK.SET", LB_TWIN, "fay", score, flag.upper(), "AT", T0 + 10)
        assert got == SetResult(s, w == 1)
    assert lb.mincr(["ada", "zed"], 3) == r.execute_command("RANK.MINCR", LB_TWIN, 3, "ada", "zed")
    assert lb.rem("zed", "nobody") == r.execute_command("RANK.REM", LB_TWIN, "zed", "nobody") == 1
    assert r.execute_command("RANK.RANGE", LB, 0, -1, "WITHSCORES") == r.execute_command("RANK.RANGE", LB_TWIN, 0, -1, "WITHSCORES")


def test_leaderboard_reads_match_raw(r: redis.Redis, lb: hotrank.Leaderboard) -> None:
    for m in ["ada", "bob", "eve", "nobody"]:
        assert lb.score(m) == r.execute_command("RANK.SCORE", LB, m)
        raw = r.execute_command("RANK.SCORE", LB, m, "WITHTIME")
        assert lb.score_with_time(m) == (None if raw is None else ScoreWithTime(raw[0], float(raw[1])))
        assert lb.rank(m) == r.execute_command("RANK.RANK", LB, m)
        assert lb.rank(m, ties=True) == r.execute_command("RANK.RANK", LB, m, "TIES")
        around = r.execute_command("RANK.AROUND", LB, m, 1)
        assert lb.around(m, 1) == [Entry(k, mm, s) for k, mm, s in around]
    assert lb.score_with_time("ada") == ScoreWithTime(50, float(T0))
    assert lb.score_with_time("ada").reached == DT0  # type: ignore[union-attr]
    for start, stop in [(0, -1), (1, 2), (-2, -1), (-100, 1), (3, 1), (10, 20)]:
        flat = r.execute_command("RANK.RANGE", LB, start, stop, "WITHSCORES")
        first = start if start >= 0 else max(5 + start, 0)
        assert lb.range(start, stop) == [Entry(first + i, m, s) for i, (m, s) in enumerate(zip(flat[0::2], flat[1::2]))]
    for low, high, limit in [(-math.inf, math.inf, None), (40, 50, None), (0, 100, (1, 2))]:
        extra = ["LIMIT", *limit] if limit else []
        lo = "-inf" if low == -math.inf else low
        hi = "+inf" if high == math.inf else high
        flat = r.execute_command("RANK.RANGEBYSCORE", LB, lo, hi, *extra, "WITHSCORES")
        kw = {"offset": limit[0], "count": limit[1]} if limit else {}
        assert lb.range_by_score(low, high, **kw) == [ScoredMember(m, s) for m, s in zip(flat[0::2], flat[1::2])]
    assert lb.card() == r.execute_command("RANK.CARD", LB) == 5


def test_period_reads_match_raw(r: redis.Redis, lb: hotrank.Leaderboard) -> None:
    day_ago = (datetime.now(timezone.utc).date() - DT0.date()).days
    raw_card = r.execute_command("RANK.CARD", LB, "PERIOD", "day", "AGO", day_ago)
    assert lb.card(period="day", ago=day_ago) == raw_card == 5
    assert lb.card(period="day") == r.execute_command("RANK.CARD", LB, "PERIOD", "day")
    assert lb.score("dee", period="day", ago=day_ago) == r.execute_command("RANK.SCORE", LB, "dee", "PERIOD", "day", "AGO", day_ago)
    assert lb.rank("cy", period="week", ago=0) == r.execute_command("RANK.RANK", LB, "cy", "PERIOD", "week", "AGO", 0)
    flat = r.execute_command("RANK.RANGE", LB, 0, 2, "WITHSCORES", "PERIOD", "day", "AGO", day_ago)
    assert [(e.member, e.score) for e in lb.range(0, 2, period="day", ago=day_ago)] == list(zip(flat[0::2], flat[1::2]))
    with pytest.raises(hotrank.InvalidArgumentError, match="^ERR board has no month period$"):
        lb.card(period="month")
    with pytest.raises(ValueError):
        lb.card(ago=1)


def test_drop_matches_raw(r: redis.Redis, lb: hotrank.Leaderboard) -> None:
    assert lb.drop() == r.execute_command("RANK.DROP", LB_TWIN)
    assert lb.drop() == 0 and lb.card() == 0


def test_decoded_and_raw_bytes_clients_agree(server: Server, protocol: int) -> None:
    text, raw = server.client(protocol), server.client(protocol, decode_responses=False)
    text.flushall()
    board = hotrank.Leaderboard(text, LB)
    board.incr("ünï", 5, at=T0)
    board.incr(b"\xff\xfe", 4, at=T0)  # not UTF-8: surrogate-escaped in results
    assert hotrank.Leaderboard(raw, LB).range() == [Entry(0, "ünï", 5), Entry(1, "\udcff\udcfe", 4)]


def test_new_hot_commands_match_raw(server: Server, r: redis.Redis) -> None:
    require(server, "HOT.CREATE", "HOT.ALTER", "HOT.INFO", "HOT.REM", "HOT.EXPORT", "HOT.DROP")
    board = hotrank.HotBoard(r, HOT)
    assert board.create(gamma=1.8, dedup_seconds=timedelta(minutes=10), max_articles=50) is None
    assert r.execute_command("HOT.CREATE", TWIN, "GAMMA", "1.8", "DEDUP-SECONDS", 600, "MAX-ARTICLES", 50) in ("OK", True)
    with pytest.raises(hotrank.BoardExistsError):
        board.create()
    board.alter(alpha=2, retention_seconds=timedelta(days=2))
    r.execute_command("HOT.ALTER", TWIN, "ALPHA", 2, "RETENTION-SECONDS", 172800)
    for n in range(5):
        board.view(f"a{n % 3}", f"v{n}", at=T0 + n)
        r.execute_command("HOT.VIEW", TWIN, f"a{n % 3}", f"v{n}", "AT", T0 + n)
    info, raw_info = board.info(), pairs(r.execute_command("HOT.INFO", HOT))
    assert set(info) == set(raw_info) and info
    for k, v in raw_info.items():
        assert info[k] == (v if not isinstance(v, str) else hotrank._calls.value(v))
    page = board.export(0, count=100)
    nxt, rows = r.execute_command("HOT.EXPORT", HOT, 0, "COUNT", 100)
    assert page.cursor == int(nxt)
    assert [a.article for a in page.articles] == [row[0] for row in rows]
    for got, (_, f) in zip(page.articles, rows):
        f = pairs(f)
        assert (got.pv, got.uv, got.suspicious) == (int(f["pv"]), int(f["uv"]), int(f["suspicious"]))
        assert got.last_view == float(f["last_view"])
    assert sorted(a.article for a in board.export_all(count=1)) == ["a0", "a1", "a2"]
    assert board.rem("a0", "none") == r.execute_command("HOT.REM", TWIN, "a0", "none")
    assert board.drop() == r.execute_command("HOT.DROP", TWIN)


def test_rank_info_matches_raw(server: Server, r: redis.Redis, lb: hotrank.Leaderboard) -> None:
    require(server, "RANK.INFO")
    info = lb.info()
    raw = pairs(r.execute_command("RANK.INFO", LB))
    assert info and set(info) == set(raw)


def test_create_and_alter_match_raw(server: Server, r: redis.Redis) -> None:
    """HOT.CREATE / HOT.ALTER alone (HOT.INFO and the rest are tested above once they exist)."""
    require(server, "HOT.CREATE", "HOT.ALTER")
    board = hotrank.HotBoard(r, HOT)
    assert board.create(gamma=1.8, dedup_seconds=timedelta(minutes=10), max_articles=50, dedup_shards=8) is None
    assert r.execute_command("HOT.CREATE", TWIN, "GAMMA", "1.8", "DEDUP-SECONDS", 600, "MAX-ARTICLES", 50, "DEDUP-SHARDS", 8) in (
        "OK",
        True,
        b"OK",
    )
    with pytest.raises(hotrank.BoardExistsError):
        board.create()
    board.alter(alpha=2, retention_seconds=timedelta(days=2), visitor_max_views=3, visitor_window_seconds=600)
    r.execute_command("HOT.ALTER", TWIN, "ALPHA", 2, "RETENTION-SECONDS", 172800, "VISITOR-MAX-VIEWS", 3, "VISITOR-WINDOW-SECONDS", 600)
    for n in range(8):
        got = board.view(f"a{n % 3}", "v0" if n % 2 else f"v{n}", at=T0 + n)
        raw = r.execute_command("HOT.VIEW", TWIN, f"a{n % 3}", "v0" if n % 2 else f"v{n}", "AT", T0 + n)
        assert (got.pv, got.uv, got.status) == (int(raw[0]), int(raw[1]), hotrank._calls.text(raw[3]))
    assert [a.article for a in board.top(limit=10, at=T0 + 60)] == [
        hotrank._calls.text(a) for a in r.execute_command("HOT.TOP", TWIN, "LIMIT", 10, "AT", T0 + 60)
    ]
    with pytest.raises(hotrank.InvalidArgumentError):
        board.alter(gamma=11)


def test_lifecycle_commands_match_raw(server: Server, r: redis.Redis) -> None:
    """HOT.REM, HOT.EXPORT, HOT.INFO and HOT.DROP (no HOT.CREATE needed)."""
    require(server, "HOT.INFO", "HOT.REM", "HOT.EXPORT", "HOT.DROP")
    board = hotrank.HotBoard(r, HOT)
    for n in range(5):
        board.view(f"a{n % 3}", f"v{n}", at=T0 + n)
        r.execute_command("HOT.VIEW", TWIN, f"a{n % 3}", f"v{n}", "AT", T0 + n)
    info, raw_info = board.info(), pairs(r.execute_command("HOT.INFO", HOT))
    raw_info = {hotrank._calls.text(k): v for k, v in raw_info.items()}
    assert set(info) == set(raw_info) and info
    for k, v in raw_info.items():
        assert info[k] == hotrank._calls.value(v), k
    assert info["articles"] == 3 and info["replication"] == "effects"
    page = board.export(0, count=100)
    nxt, rows = r.execute_command("HOT.EXPORT", HOT, 0, "COUNT", 100)
    assert page.cursor == int(nxt) == 0
    assert [a.article for a in page.articles] == [hotrank._calls.text(row[0]) for row in rows]
    for got, (_, f) in zip(page.articles, rows):
        f = {hotrank._calls.text(k): v for k, v in pairs(f).items()}
        assert (got.pv, got.uv, got.suspicious) == (int(f["pv"]), int(f["uv"]), int(f["suspicious"]))
        assert got.last_view == float(f["last_view"])
        st = board.stats(got.article)
        assert st is not None and (st.pv, st.uv, st.suspicious, st.published_at) == (
            got.pv,
            got.uv,
            got.suspicious,
            got.published_at,
        )
    assert sorted(a.article for a in board.export_all(count=1)) == ["a0", "a1", "a2"]
    assert board.rem("a0", "none") == r.execute_command("HOT.REM", TWIN, "a0", "none") == 1
    removed = board.view("a0", "v9", at=T0 + 10)
    assert removed.status == "removed" and (removed.pv, removed.uv) == (0, 0)
    assert board.drop() == r.execute_command("HOT.DROP", TWIN)
