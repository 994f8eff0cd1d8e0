"""Boards ride through a reshard (issue 37) on the real 3-master cluster: while a
thread moves a board's slot in ``MIGRATE`` batches (``CLUSTER SETSLOT`` IMPORTING /
MIGRATING, ``GETKEYSINSLOT``, ``MIGRATE … KEYS``, ``SETSLOT … NODE``), the hotrank
client over redis-py's ``RedisCluster`` keeps writing to it: a HOT board, a
leaderboard with periods and one shard of a ``ShardedHotBoard``. ``RedisCluster``
follows ASK and MOVED and retries TRYAGAIN itself; a write it gives up on (the
slot still moving) wrote nothing, and the test sends it again, as an application
would. At the end every acknowledged view and increment counted exactly once.
"""

from __future__ import annotations

import threading
from typing import Callable, Dict, List, Tuple

import redis
import redis.exceptions

import hotrank
from conftest import T0, Cluster


def _owner(c: Cluster, slot: int) -> Tuple[int, str]:
    """The index and node id of the master that owns ``slot``."""
    for i, n in enumerate(c.nodes):
        r = redis.Redis(port=n.port, decode_responses=True)
        for start, end, *nodes in r.execute_command("CLUSTER", "SLOTS"):
            if start <= slot <= end and int(nodes[0][1]) == n.port:
                return i, str(r.execute_command("CLUSTER", "MYID"))
    raise AssertionError(f"no owner for slot {slot}")


def _move_slot(c: Cluster, slot: int, src: int, dst: int, batch: int = 20) -> int:
    """Moves ``slot`` from node ``src`` to node ``dst`` as ``redis-cli --cluster reshard``
    does; returns the number of MIGRATE batches (each must succeed)."""
    s = redis.Redis(port=c.nodes[src].port)
    d = redis.Redis(port=c.nodes[dst].port)
    src_id = s.execute_command("CLUSTER", "MYID").decode()
    dst_id = d.execute_command("CLUSTER", "MYID").decode()
    d.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", src_id)
    s.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", dst_id)
    batches = 0
    while True:
        keys = s.execute_command("CLUSTER", "GETKEYSINSLOT", slot, batch)
        if not keys:
            break
        out = s.execute_command("MIGRATE", "127.0.0.1", c.nodes[dst].port, "", 0, 5000, "KEYS", *keys)
        assert out in (b"OK", b"NOKEY"), out
        batches += 1
    for n in c.nodes:
        redis.Redis(port=n.port).execute_command("CLUSTER", "SETSLOT", slot, "NODE", dst_id)
    assert s.execute_command("CLUSTER", "COUNTKEYSINSLOT", slot) == 0
    return batches


def _until_acked(write: Callable[[], object], refused: List[int]) -> None:
    """Sends ``write`` until it is acknowledged: a TRYAGAIN that redis-py gave up on
    (``TryAgainError``, or ``ClusterError`` once its redirection budget is spent)
    wrote nothing, so sending it again counts it once."""
    for _ in range(1000):
        try:
            write()
            return
        except (redis.exceptions.TryAgainError, redis.exceptions.ClusterError):
            refused[0] += 1
        except hotrank.ServerError as e:
            if e.code != "TRYAGAIN":
                raise
            refused[0] += 1
    raise AssertionError("a write refused 1000 times")


def test_hot_and_rank_boards_ride_through_a_slot_move(cluster: Cluster) -> None:
    rc = cluster.client()
    hot = hotrank.HotBoard(rc, "hot:{reshard-py}")
    lb = hotrank.Leaderboard(rc, "lb:{reshard-py}")
    sharded = hotrank.ShardedHotBoard(rc, "hot:{reshard-sh}", shards=4)
    sharded.ensure()
    lb.create(periods=["day", "week"])
    slot = int(rc.keyslot("hot:{reshard-py}"))
    moved_shard = sharded.keys[0]
    assert int(rc.keyslot(moved_shard)) != slot
    at = T0 + 86_400 - 60
    pv: Dict[str, int] = {}
    score: Dict[str, int] = {}
    spv: Dict[str, int] = {}
    refused = [0]
    n = [0]

    def write_some(k: int) -> None:
        for _ in range(k):
            i = n[0]
            n[0] += 1
            a, m, sa = f"a{i % 25}", f"m{i % 20}", f"s{i % 12}"
            _until_acked(lambda: hot.view(a, f"v{i}", at=at), refused)
            pv[a] = pv.get(a, 0) + 1
            _until_acked(lambda: lb.incr(m, 1 + i % 7, at=at), refused)
            score[m] = score.get(m, 0) + 1 + i % 7
            _until_acked(lambda: sharded.view(sa, f"v{i}", at=at), refused)
            spv[sa] = spv.get(sa, 0) + 1

    write_some(300)
    batches: List[int] = []
    failed: List[BaseException] = []

    def mover() -> None:
        try:
            for board_slot in (slot, int(rc.keyslot(moved_shard))):
                src, _ = _owner(cluster, board_slot)
                batches.append(_move_slot(cluster, board_slot, src, (src + 1) % len(cluster.nodes)))
        except BaseException as e:  # re-raised by the test below
            failed.append(e)

    t = threading.Thread(target=mover)
    t.start()
    while t.is_alive():
        write_some(5)
    t.join()
    if failed:
        raise failed[0]
    write_some(20)
    assert len(batches) == 2 and min(batches) >= 5, batches
    for a, views in pv.items():
        st = hot.stats(a, at=at)
        assert st is not None and (st.pv, st.uv) == (views, views), (a, st, views)
    for m, total in score.items():
        assert lb.score(m) == total, (m, lb.score(m), total)
    for a, views in spv.items():
        st = sharded.stats(a, at=at)
        assert st is not None and (st.pv, st.uv) == (views, views), (a, st, views)
    print(f"{n[0]} rounds, {batches} MIGRATE batches, {refused[0]} writes sent again")
