"""Sharded boards get every setting recorded, on a 3-master cluster whose masters have
different ``hotrank.*`` configs (as during a rolling CONFIG SET): ``create()`` reads
every setting back from shard 0 (HOT.INFO / RANK.INFO) and records them all, so every
shard, on whichever node, scores with one formula; ``ensure()`` completes a record
written by the older client (only the given settings) and brings every shard to it.
Sync and asyncio."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Dict, Iterator, List

import pytest
import redis
import redis.asyncio.cluster

import hotrank
import hotrank.asyncio as hasync
from conftest import T0, Cluster, require
from hotrank import _shard

#: Each master's configs: every setting differs from one node to the next.
CONFIGS = [
    {"alpha": "1", "beta": "1.2", "base": "2", "gamma": "1.5", "dedup-seconds": "900", "dedup-shards": "4096",
     "visitor-max-views": "60", "visitor-window-seconds": "3600", "max-articles": "1000", "retention-seconds": "7776000", "trending-half-life": "0"},
    {"alpha": "0.5", "beta": "0.8", "base": "3", "gamma": "1.9", "dedup-seconds": "60", "dedup-shards": "1024",
     "visitor-max-views": "5", "visitor-window-seconds": "600", "max-articles": "30", "retention-seconds": "86400", "trending-half-life": "3600"},
    {"alpha": "2", "beta": "2.5", "base": "1", "gamma": "1.1", "dedup-seconds": "10", "dedup-shards": "64",
     "visitor-max-views": "1000", "visitor-window-seconds": "60", "max-articles": "5000", "retention-seconds": "604800", "trending-half-life": "600"},
]  # fmt: skip
SHARDS = 6


@pytest.fixture
def mixed(cluster: Cluster) -> Iterator[Cluster]:
    """The cluster with each master's hotrank.* configs set apart; restored afterwards."""
    clients = [redis.Redis(port=n.port, decode_responses=True) for n in cluster.nodes]
    saved = [r.config_get("hotrank.*") for r in clients]
    for r, conf in zip(clients, CONFIGS):
        for k, v in conf.items():
            r.config_set(f"hotrank.{k}", v)
    yield cluster
    for r, conf in zip(clients, saved):
        for k in CONFIGS[0]:
            r.config_set(f"hotrank.{k}", conf[f"hotrank.{k}"])
        r.close()


def node_client(rc: Any, key: str) -> Any:
    return rc.get_redis_connection(rc.get_node_from_key(key))


def settings_of(info: Dict[str, Any]) -> Dict[str, Any]:
    return _shard.hot_settings_of(info)


def spread(rc: Any, keys: List[str]) -> None:
    """The shards sit on all three masters (else the test proves nothing)."""
    assert len({rc.get_node_from_key(k).name for k in keys}) == 3


def views() -> List[Any]:
    """Views that repeat visitors (dedup), with a visitor over the per-window limit, over
    60 articles published at different times."""
    out = [(f"m{i % 60:02d}", f"u{i % 97}", T0 - 7200 + i * 3) for i in range(2_000)]
    out += [("m07", "heavy", T0 - 100 + i) for i in range(40)]
    return sorted(out, key=lambda v: v[2])


def old_record(rc: Any, board: Any, settings: Dict[str, Any]) -> None:
    """The board as the older client left it: only the given settings recorded, and each
    shard created on its node with the node's configs for the rest."""
    rc.delete(_shard.describe_key(board.name))
    for k in board.keys:
        node_client(rc, k).delete(k)
        node_client(rc, k).execute_command("HOT.DROP", k)
    rc.hset(_shard.describe_key(board.name), mapping={
        "kind": "hot", "shards": board.shards, "hash": "crc32", "settings": json.dumps(settings)})  # fmt: skip
    for k in board.keys:
        node_client(rc, k).execute_command("HOT.CREATE", k, "GAMMA", settings["gamma"])


def test_create_records_every_setting_and_every_shard_gets_them(mixed: Cluster) -> None:
    require(mixed.nodes[0], "HOT.CREATE", "HOT.ALTER", "HOT.DROP")
    rc = mixed.client()
    hb = hotrank.ShardedHotBoard(rc, "hot:{mixed}", shards=SHARDS)
    spread(rc, hb.keys)
    hb.drop()
    hb.create(gamma=1.7, max_articles=2_000)
    recorded = hb.describe().settings
    assert _shard.complete("hot", recorded)
    home = CONFIGS[[n.port for n in mixed.nodes].index(rc.get_node_from_key(hb.keys[0]).port)]
    assert recorded == {**{k.replace("-", "_"): json.loads(v) for k, v in home.items()}, "gamma": 1.7, "max_articles": 2_000}
    infos = [settings_of(i) for i in hb.info()]
    assert all(i == recorded for i in infos), infos
    # Merged top equals one board created with those settings, fed the same views.
    one = hotrank.HotBoard(node_client(rc, "hot:{mixedone}"), "hot:{mixedone}")
    one.drop()
    one.create(**recorded)
    v = views()
    assert hb.view_many(v) == one.view_many(v)
    for at in (T0, T0 + 3_600):
        assert hb.top(60, at=at) == one.top(60, at=at)
    # A shard created later (deleted, then ensure) gets the same settings.
    hotrank.HotBoard(rc, hb.keys[4]).drop()
    assert hb.ensure() == recorded
    assert all(settings_of(i) == recorded for i in hb.info())
    hb.drop()
    one.drop()


def test_ensure_completes_a_record_of_the_older_client(mixed: Cluster) -> None:
    require(mixed.nodes[0], "HOT.CREATE", "HOT.ALTER", "HOT.DROP")
    rc = mixed.client()
    hb = hotrank.ShardedHotBoard(rc, "hot:{older}", shards=SHARDS)
    spread(rc, hb.keys)
    old_record(rc, hb, {"gamma": 1.7})
    before = [settings_of(i) for i in hb.info()]
    assert len({json.dumps(b, sort_keys=True) for b in before}) == 3  # three formulas
    full = hb.ensure()
    assert _shard.complete("hot", full) and full["gamma"] == 1.7
    assert hb.describe().settings == full == before[0] | {"gamma": 1.7}
    assert all(settings_of(i) == full for i in hb.info())
    one = hotrank.HotBoard(node_client(rc, "hot:{olderone}"), "hot:{olderone}")
    one.drop()
    one.create(**full)
    v = views()
    assert hb.view_many(v) == one.view_many(v)
    assert hb.top(60, at=T0) == one.top(60, at=T0)
    hb.drop()
    one.drop()


def test_a_sharded_leaderboard_records_its_whole_layout(mixed: Cluster) -> None:
    require(mixed.nodes[0], "RANK.CREATE", "RANK.INFO", "RANK.DROP")
    rc = mixed.client()
    lb = hotrank.ShardedLeaderboard(rc, "lb:{mixed}", shards=SHARDS)
    lb.drop()
    lb.create(order="asc")
    want = {"resolution": "s", "min_score": -(2**30), "max_score": 2**30 - 1, "order": "asc",
            "periods": None, "tz": None, "keep": None}  # fmt: skip
    assert lb.describe().settings == want
    assert all(_shard.rank_settings_of(lb.board(i).info()) == want for i in range(SHARDS))
    lb.drop()
    lb.create(periods=["day", "week"], min_score=0, max_score=10**6)
    rec = lb.describe().settings
    assert _shard.complete("rank", rec) and rec["periods"] == ["day", "week"] and rec["tz"] == "+00:00"
    assert all(_shard.rank_settings_of(lb.board(i).info()) == rec for i in range(SHARDS))
    # An older record (given settings only) is completed by ensure().
    rc.hset(_shard.describe_key(lb.name), "settings", json.dumps({"periods": ["day", "week"], "min_score": 0, "max_score": 10**6}))
    lb.board(3).drop()
    assert lb.ensure() == rec == lb.describe().settings
    assert _shard.rank_settings_of(lb.board(3).info()) == rec
    lb.drop()


def test_asyncio_mirrors_create_and_ensure(mixed: Cluster) -> None:
    require(mixed.nodes[0], "HOT.CREATE", "HOT.ALTER", "HOT.DROP")
    rc = mixed.client()

    async def main() -> None:
        arc = redis.asyncio.cluster.RedisCluster(host="127.0.0.1", port=mixed.port, decode_responses=True)
        try:
            hb = hasync.ShardedHotBoard(arc, "hot:{amixed}", shards=SHARDS)
            spread(rc, hb.keys)
            await hb.drop()
            await hb.create(beta=1.4)
            rec = (await hb.describe()).settings
            assert _shard.complete("hot", rec) and rec["beta"] == 1.4
            assert all(settings_of(i) == rec for i in await hb.info())
            old_record(rc, hb, {"gamma": 1.3})
            full = await hb.ensure()
            assert _shard.complete("hot", full) and full["gamma"] == 1.3
            assert all(settings_of(i) == full for i in await hb.info())
            await hb.drop()
            lb = hasync.ShardedLeaderboard(arc, "lb:{amixed}", shards=SHARDS)
            await lb.drop()
            await lb.create(resolution="ms")
            rec = (await lb.describe()).settings
            assert _shard.complete("rank", rec) and rec["resolution"] == "ms"
            await lb.drop()
        finally:
            await arc.aclose()

    asyncio.run(main())
