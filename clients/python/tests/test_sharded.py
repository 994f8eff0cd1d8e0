"""Sharded boards on a real 3-master Redis Cluster (the module on every node): 16 shards
against one unsharded board fed the same workload, through the sync client (cluster
pipelines) and the asyncio one (gather).

- HOT: 50,000 views over 5,000 articles with a long tail (Zipf-like), publish times
  spread over three days; ``top`` equal for 300 queries (limits, windows, times).
- RANK: 20,000 members with many ties of score and of (score, time); ``rank`` (plain
  and ``ties``), ``range`` (including negative indexes) and ``around`` equal for 600
  queries; an ``asc`` board too.
- The shard rule (CRC-32 of the UTF-8 id mod N, ``{tag:ii}`` keys), the record of the
  board (a client with another N is refused), settings on every shard and on a shard
  created again later.
"""

from __future__ import annotations

import asyncio
import random
import zlib
from typing import Any, Iterator, List, Tuple

import pytest
import redis.asyncio.cluster

import hotrank
import hotrank.asyncio as hasync
from conftest import T0, Cluster, require
from hotrank._calls import Call

SHARDS = 16
N_ARTICLES = 5_000
N_VIEWS = 50_000
N_MEMBERS = 20_000


def test_the_shard_rule_is_crc32_of_utf8_mod_n_and_keys_get_a_tag_suffix() -> None:
    assert zlib.crc32(b"123456789") == 0xCBF43926  # the CRC-32 every zlib computes
    assert hotrank.ShardedHotBoard.__mro__  # imported at the top level
    b = hotrank.ShardedHotBoard(None, "hot:{news}", shards=16)  # type: ignore[arg-type]
    assert b.keys[0] == "hot:{news:00}" and b.keys[7] == "hot:{news:07}" and len(b.keys) == 16
    assert b.shard_of("a42") == zlib.crc32(b"a42") % 16
    assert b.shard_of("été") == zlib.crc32("été".encode()) % 16 == b.shard_of("été".encode())
    assert hotrank.ShardedLeaderboard(None, "lb:{g}:x", shards=120).keys[5] == "lb:{g:005}:x"  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="hash tag"):
        hotrank.ShardedHotBoard(None, "hot:news", shards=4)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="shards"):
        hotrank.ShardedHotBoard(None, "hot:{news}", shards=0)  # type: ignore[arg-type]


def _views(rng: random.Random) -> Tuple[List[Tuple[str, int]], List[Tuple[str, str, int]]]:
    """Articles with publish times over three days, and views with a long tail: article
    i is viewed with weight 1 / (i + 1) (Zipf), by 20,000 visitors, in time order."""
    articles = [(f"art{i:05d}", T0 - 3 * 86_400 + rng.randrange(3 * 86_400 - 3_600)) for i in range(N_ARTICLES)]
    weights = [1.0 / (i + 1) for i in range(N_ARTICLES)]
    picks = rng.choices(range(N_ARTICLES), weights=weights, k=N_VIEWS)
    views = []
    for n, i in enumerate(picks):
        name, published = articles[i]
        at = max(published + 1, T0 - 3_600 + n * 3_600 // N_VIEWS)
        views.append((name, f"v{rng.randrange(20_000)}", at))
    views.sort(key=lambda v: v[2])
    return articles, views


def _raw(sharded: Any, commands: List[Tuple[Any, ...]]) -> List[Any]:
    """Raw commands through the sharded board's driver: one pipeline per node, never
    retried (redis-py's cluster pipeline re-sends commands after a timeout, which
    would count a view twice)."""
    return list(sharded._batch([Call(tuple(cmd), lambda r: r) for cmd in commands]))


def node_client(rc: Any, key: str) -> Any:
    """The plain client of the node that serves ``key`` (a reference board is fed
    through it: no cluster pipeline retries)."""
    return rc.get_redis_connection(rc.get_node_from_key(key))


def _chunks(xs: List[Any], n: int) -> Iterator[List[Any]]:
    for i in range(0, len(xs), n):
        yield xs[i : i + n]


@pytest.fixture(scope="module")
def hot_pair(cluster: Cluster) -> Iterator[Tuple[hotrank.ShardedHotBoard, hotrank.HotBoard]]:
    rc = cluster.client()
    # No trimming: a board keeps hotrank.max-articles (default 1000) articles, and a
    # sharded board as many per shard, so the two would forget different articles.
    for node in cluster.nodes:
        node.client().config_set("hotrank.max-articles", 100_000)
    sharded = hotrank.ShardedHotBoard(rc, "hot:{shnews}", shards=SHARDS)
    one = hotrank.HotBoard(node_client(rc, "hot:{onenews}"), "hot:{onenews}")
    rng = random.Random(24)
    articles, views = _views(rng)
    cmds = [("HOT.PUBLISH", sharded.key_of(a), a, t) for a, t in articles]
    _raw(sharded, cmds + [("HOT.PUBLISH", one.key, a, t) for a, t in articles])
    for chunk in _chunks(views, 5_000):
        got = sharded.view_many(chunk)
        want = one.view_many(chunk)
        assert got == want  # the same counters, score and status for every view
    yield sharded, one
    for node in cluster.nodes:
        node.client().config_set("hotrank.max-articles", 1000)


def test_shards_spread_over_every_master(cluster: Cluster, hot_pair: Any) -> None:
    rc = cluster.client()
    sharded, one = hot_pair
    nodes = {rc.get_node_from_key(k).name for k in sharded.keys}
    assert len(nodes) == 3
    sizes = [rc.execute_command("ZCARD", k) for k in sharded.keys]
    viewed = rc.execute_command("ZCARD", one.key)
    assert sum(sizes) == viewed > 4_000 and min(sizes) > viewed / SHARDS / 2


def test_sharded_top_equals_one_board(hot_pair: Any) -> None:
    sharded, one = hot_pair
    rng = random.Random(7)
    windows = [None, 3_600, 6 * 3_600, 86_400, 3 * 86_400]
    for q in range(300):
        limit = rng.choice([1, 2, 5, 10, 20, 50, 100, 500])
        window = rng.choice(windows)
        at = T0 + rng.randrange(-1_800, 4 * 86_400)
        got = sharded.top(limit, window=window, at=at)
        assert got == one.top(limit, window=window, at=at), (q, limit, window, at)


def test_equal_scores_merge_by_article_id(cluster: Cluster) -> None:
    rc = cluster.client()
    sharded = hotrank.ShardedHotBoard(rc, "hot:{ties}", shards=SHARDS)
    one = hotrank.HotBoard(node_client(rc, "hot:{tiesone}"), "hot:{tiesone}")
    # Distinct visitors: a visitor's limit (visitor_max_views) counts per shard.
    views = [(f"t{i}", f"u{i}", T0) for i in range(300)] + [(f"t{i}", f"w{i}", T0) for i in range(0, 300, 3)]
    for a, _, _ in views[:300]:
        sharded.publish(a, T0 - 600)
        one.publish(a, T0 - 600)
    assert sharded.view_many(views) == one.view_many(views)
    for limit in (1, 7, 50, 100, 101, 250, 400):
        got = sharded.top(limit, at=T0 + 60)
        assert got == one.top(limit, at=T0 + 60)
    top = sharded.top(400, at=T0 + 60)
    assert [a.article for a in top[:100]] == sorted(f"t{i}" for i in range(0, 300, 3))


def test_sharded_stats_and_export_follow_the_article(hot_pair: Any) -> None:
    sharded, one = hot_pair
    names = [f"art{i:05d}" for i in (0, 1, 17, 4_999)] + ["nope"]
    assert sharded.stats_many(names, at=T0 + 60) == one.stats_many(names, at=T0 + 60)


def _members(rng: random.Random, n: int) -> List[Tuple[str, int, str]]:
    """(member, score, at): scores from 300 values and times from 40 seconds, so many
    members share a score and many a score and a second (ordered by name)."""
    return [(f"p{rng.randrange(10**9):09d}", rng.randrange(300) * 7, str(T0 - 40 + rng.randrange(40))) for _ in range(n)]


def _fill(sharded: Any, one: Any, members: List[Tuple[str, int, str]]) -> None:
    cmds = []
    for m, score, at in members:
        cmds.append(("RANK.SET", sharded.key_of(m), m, score, "AT", at))
        cmds.append(("RANK.SET", one.key, m, score, "AT", at))
    _raw(sharded, cmds)


@pytest.fixture(scope="module")
def rank_pair(cluster: Cluster) -> Tuple[hotrank.ShardedLeaderboard, hotrank.Leaderboard, List[str]]:
    rc = cluster.client()
    sharded = hotrank.ShardedLeaderboard(rc, "lb:{shgame}", shards=SHARDS)
    one = hotrank.Leaderboard(rc, "lb:{onegame}")
    sharded.create(periods=["day"])
    one.create(periods=["day"])
    members = _members(random.Random(5), N_MEMBERS)
    _fill(sharded, one, members)
    return sharded, one, sorted({m for m, _, _ in members})


def test_sharded_rank_range_around_equal_one_board(rank_pair: Any) -> None:
    sharded, one, members = rank_pair
    total = one.card()
    assert sharded.card() == total > 19_000
    rng = random.Random(11)
    checked = 0
    for m in rng.sample(members, 200) + ["absent"]:
        assert sharded.rank(m) == one.rank(m), m
        assert sharded.rank(m, ties=True) == one.rank(m, ties=True), m
        checked += 2
    # A range reads about N x (stop + 1) entries: mostly near the top, a few deep
    # (negative indexes resolve near the end: whole shards).
    for q in range(150):
        if q % 30 == 0:
            start, stop = rng.randrange(-total, 0), rng.choice([-1, rng.randrange(-50, 0)])
        elif q % 30 == 1:
            start = rng.randrange(3_000)
            stop = start + rng.randrange(40)
        else:
            start = rng.choice([0, rng.randrange(50), rng.randrange(300)])
            stop = rng.choice([start + rng.randrange(40), rng.randrange(300), start - 1])
        assert sharded.range(start, stop) == one.range(start, stop), (start, stop)
        checked += 1
    for m in rng.sample(members, 150) + ["absent", members[0]]:
        n = rng.choice([0, 1, 3, 10])
        assert sharded.around(m, n) == one.around(m, n), (m, n)
        checked += 1
    assert sharded.range(total - 3, total + 5) == one.range(total - 3, total + 5)
    # The same reads on today's period board (every write was within the last day or two).
    for ago in (0, 1):
        assert sharded.range(0, 30, period="day", ago=ago) == one.range(0, 30, period="day", ago=ago)
        m = members[ago]
        assert sharded.rank(m, period="day", ago=ago) == one.rank(m, period="day", ago=ago)
        checked += 2
    assert checked >= 500


def test_asc_board_and_asyncio_client_agree(cluster: Cluster, rank_pair: Any, hot_pair: Any) -> None:
    rc = cluster.client()
    asc = hotrank.ShardedLeaderboard(rc, "lap:{shasc}", shards=5)
    one = hotrank.Leaderboard(rc, "lap:{oneasc}")
    asc.create(order="asc", resolution="ms", min_score=0, max_score=100_000)
    one.create(order="asc", resolution="ms", min_score=0, max_score=100_000)
    rng = random.Random(3)
    members = [(f"d{i}", rng.randrange(50), f"{T0 - 5}.{rng.choice(['000', '250'])}") for i in range(2_000)]
    _fill(asc, one, members)
    for m, _, _ in members[:60]:
        assert asc.rank(m) == one.rank(m) and asc.around(m, 4) == one.around(m, 4)
    assert asc.range(0, 99) == one.range(0, 99)

    sharded, ref, names = rank_pair
    hot, hot_ref = hot_pair

    async def main() -> None:
        arc = redis.asyncio.cluster.RedisCluster(host="127.0.0.1", port=cluster.port, decode_responses=True)
        try:
            ab = hasync.ShardedLeaderboard(arc, sharded.name, shards=SHARDS)
            for m in names[:40]:
                assert await ab.rank(m) == ref.rank(m)
                assert await ab.around(m, 2) == ref.around(m, 2)
            assert await ab.range(100, 160) == ref.range(100, 160)
            assert await ab.card() == ref.card()
            ah = hasync.ShardedHotBoard(arc, hot.name, shards=SHARDS)
            assert await ah.top(50, at=T0 + 3_600) == hot_ref.top(50, at=T0 + 3_600)
            assert await ah.stats("art00001", at=T0) == hot_ref.stats("art00001", at=T0)
            with pytest.raises(ValueError, match="16 shards, not 8"):
                await hasync.ShardedLeaderboard(arc, sharded.name, shards=8).ensure()
        finally:
            await arc.aclose()

    asyncio.run(main())


def test_the_record_refuses_another_shard_count_and_ensure_recreates_a_shard(cluster: Cluster) -> None:
    rc = cluster.client()
    lb = hotrank.ShardedLeaderboard(rc, "lb:{rec}", shards=4)
    lb.create(order="asc", min_score=0, max_score=1000)
    with pytest.raises(hotrank.BoardExistsError):
        lb.create()
    with pytest.raises(ValueError, match="4 shards, not 6"):
        hotrank.ShardedLeaderboard(rc, "lb:{rec}", shards=6).ensure()
    with pytest.raises(ValueError, match="rank board, not a hot board"):
        hotrank.ShardedHotBoard(rc, "lb:{rec}", shards=4).ensure()
    # A shard deleted by hand comes back with the board's layout.
    hotrank.Leaderboard(rc, lb.keys[2]).drop()
    assert lb.ensure()["order"] == "asc"
    lb.set("zed", 5)
    lb.set("amy", 9)
    assert [e.member for e in lb.range()] == ["zed", "amy"]
    assert lb.drop() >= 5


def test_hot_settings_go_to_every_shard_and_to_a_shard_created_later(cluster: Cluster) -> None:
    """Settings change scores (gamma): a sharded board created with them scores every
    view as one board created with them does, after an alter too, and a shard
    deleted and created again by ensure() gets the recorded settings back."""
    require(cluster.nodes[0], "HOT.CREATE", "HOT.ALTER")
    rc = cluster.client()
    hb = hotrank.ShardedHotBoard(rc, "hot:{set}", shards=4)
    one = hotrank.HotBoard(node_client(rc, "hot:{setone}"), "hot:{setone}")
    hb.create(gamma=1.9, max_articles=5_000)
    one.create(gamma=1.9, max_articles=5_000)
    views = [(f"s{i % 40}", f"u{i}", T0 + i) for i in range(200)]
    assert hb.view_many(views[:100]) == one.view_many(views[:100])
    hb.alter(gamma=1.2)
    one.alter(gamma=1.2)
    assert hb.describe().settings.items() >= {"gamma": 1.2, "max_articles": 5_000}.items()
    assert hb.view_many(views[100:150]) == one.view_many(views[100:150])
    assert hb.top(40, at=T0 + 400) == one.top(40, at=T0 + 400)
    # Shard 1 is deleted (every key of its hash tag); ensure() creates it again with
    # the recorded settings, so its articles score as on one board created with them.
    lost = hb.keys[1]
    node = node_client(rc, lost)
    for k in node.scan_iter(match="*" + lost[lost.index("{") : lost.index("}") + 1] + "*"):
        node.delete(k)
    gone = [v for v in views if hb.key_of(v[0]) == lost]
    assert gone
    assert hb.ensure().items() >= {"gamma": 1.2, "max_articles": 5_000}.items()
    again = hotrank.HotBoard(node_client(rc, "hot:{setagain}"), "hot:{setagain}")
    again.create(gamma=1.2, max_articles=5_000)
    assert [hb.view(*v) for v in gone] == [again.view(*v) for v in gone]
    # A client with another N is refused.
    with pytest.raises(ValueError, match="4 shards, not 5"):
        hotrank.ShardedHotBoard(rc, "hot:{set}", shards=5).ensure()
