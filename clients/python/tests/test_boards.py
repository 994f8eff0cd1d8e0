"""Client.hot_boards() and Client.leaderboards() (HOT.BOARDS / RANK.BOARDS): sync and
asyncio, RESP2 and RESP3, redis-server and valkey-server, and a 3-master cluster where
every master is walked."""

from __future__ import annotations

import asyncio
from typing import Any, List

import redis
import redis.asyncio
import redis.asyncio.cluster

import hotrank
import hotrank.asyncio as hasync
from conftest import T0, Cluster, Server, require

#: Board names spread over slots (each its own hash tag).
HOT_NAMES = [f"hot:{{b{i}}}" for i in range(12)]
RANK_NAMES = [f"lb:{{g{i}}}" for i in range(12)]


def _fill(client: hotrank.Client) -> None:
    for name in HOT_NAMES:
        client.hot(name).view("a", "v", at=T0)
    for name in RANK_NAMES:
        client.leaderboard(name).incr("m", 1)


def test_boards_lists_every_board_under_the_prefix(server: Server, r: redis.Redis) -> None:
    require(server, "HOT.BOARDS", "RANK.BOARDS")
    _fill(hotrank.Client(r, prefix="app:"))
    # Other keys: a board without the prefix, a plain ZSET, a counter.
    hotrank.HotBoard(r, "other:{x}").view("a", "v", at=T0)
    r.zadd("app:plain", {"m": 1})
    r.set("app:counter", 1)
    client = hotrank.Client(r, prefix="app:")
    hot = sorted({b.name for b in client.hot_boards(count=3)})
    ranks = sorted({b.name for b in client.leaderboards(count=3)})
    assert hot == sorted(HOT_NAMES)
    assert ranks == sorted(RANK_NAMES)
    assert all(isinstance(b, hotrank.HotBoard) for b in client.hot_boards())
    assert {b.key for b in client.hot_boards()} == {"app:" + n for n in HOT_NAMES}
    # Without a prefix: every board, the other one too.
    everything = {b.name for b in hotrank.Client(r).hot_boards()}
    assert everything == {"app:" + n for n in HOT_NAMES} | {"other:{x}"}


def test_async_boards_equal_the_sync_ones(server: Server, r: redis.Redis, protocol: int) -> None:
    require(server, "HOT.BOARDS", "RANK.BOARDS")
    _fill(hotrank.Client(r))

    async def run() -> tuple[List[str], List[str]]:
        ar = redis.asyncio.Redis(port=server.port, protocol=protocol)
        try:
            client = hasync.Client(ar)
            hot = [b.name async for b in client.hot_boards(count=2)]
            ranks = [b.name async for b in client.leaderboards()]
            return hot, ranks
        finally:
            await ar.aclose()

    hot, ranks = asyncio.run(run())
    sync = hotrank.Client(r)
    assert sorted(set(hot)) == sorted({b.name for b in sync.hot_boards()}) == sorted(HOT_NAMES)
    assert sorted(set(ranks)) == sorted({b.name for b in sync.leaderboards()}) == sorted(RANK_NAMES)


def test_boards_walks_every_master_of_a_cluster(cluster: Cluster) -> None:
    rc = cluster.client()
    rc.flushall()
    _fill(hotrank.Client(rc))
    rca: Any = rc  # redis-py's cluster methods are untyped
    slots = {rca.keyslot(n) for n in HOT_NAMES}
    owners = {rca.get_node_from_key(n).name for n in HOT_NAMES}
    assert len(slots) == len(HOT_NAMES) and len(owners) > 1, "the boards are spread over masters"
    assert sorted({b.name for b in hotrank.Client(rc).hot_boards()}) == sorted(HOT_NAMES)
    assert sorted({b.name for b in hotrank.Client(rc).leaderboards()}) == sorted(RANK_NAMES)

    async def run() -> List[str]:
        arc = redis.asyncio.cluster.RedisCluster(host="127.0.0.1", port=cluster.port, decode_responses=True)
        try:
            return [b.name async for b in hasync.Client(arc).hot_boards()]
        finally:
            await arc.aclose()

    assert sorted(set(asyncio.run(run()))) == sorted(HOT_NAMES)
    rc.flushall()
    rc.close()
