"""``make bench``'s sharded row: a ShardedHotBoard and a ShardedLeaderboard of 16 shards on
a local 3-master Redis Cluster (started here, the module on every node) against one
board on the same cluster, through the sync client.

On the project's 2-core machine the three masters and the client share two cores, so
this measures what sharding *costs* per view and per query (N shard calls, the merge
in Python), not how it scales: scaling needs one machine (or core) per master.

Prints a Markdown table. ``BENCH_QUICK=1`` makes it ten times smaller.
"""

from __future__ import annotations

import os
import random
import sys
import time
from pathlib import Path
from typing import Any, Callable, List, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import conftest  # noqa: E402  (the tests' Cluster: redis-server nodes with the module)

import hotrank  # noqa: E402

QUICK = os.environ.get("BENCH_QUICK") == "1"
SHARDS = 16
VIEWS = 20_000 if QUICK else 200_000
ARTICLES = 5_000 if QUICK else 50_000
MEMBERS = 10_000 if QUICK else 100_000
QUERIES = 50 if QUICK else 300


def timed(f: Callable[[], Any], n: int) -> float:
    """Mean seconds per call over ``n`` calls."""
    start = time.perf_counter()
    for _ in range(n):
        f()
    return (time.perf_counter() - start) / n


def main() -> None:
    c = conftest.Cluster()
    try:
        rc = c.client()
        for node in c.nodes:
            node.client().config_set("hotrank.max-articles", 0)  # no trimming (0: unlimited)
        t0 = int(time.time()) - 7_200
        rng = random.Random(1)
        weights = [1.0 / (i + 1) for i in range(ARTICLES)]
        picks = rng.choices(range(ARTICLES), weights=weights, k=VIEWS)
        views = [(f"a{i}", f"v{rng.randrange(VIEWS)}", t0 + n * 3_600 // VIEWS) for n, i in enumerate(picks)]
        rows: List[Tuple[str, str, str]] = []

        sharded = hotrank.ShardedHotBoard(rc, "hot:{bsh}", shards=SHARDS)
        node = rc.get_redis_connection(rc.get_node_from_key("hot:{bone}"))
        one = hotrank.HotBoard(node, "hot:{bone}")
        for name, board in (("one board", one), (f"{SHARDS} shards", sharded)):
            start = time.perf_counter()
            for k in range(0, VIEWS, 1_000):
                board.view_many(views[k : k + 1_000])
            rate = VIEWS / (time.perf_counter() - start)
            rows.append((f"HOT.VIEW, pipelines of 1000, {name}", f"{rate:,.0f} views/s", f"{1e6 / rate:.1f} µs/view"))
        at = t0 + 3_600
        for name, board in (("one board", one), (f"{SHARDS} shards", sharded)):
            # HOT.TOP on an untrimmed board of ARTICLES articles is slow: fewer calls.
            s = timed(lambda: board.top(20, at=at), max(QUERIES // 10, 5))
            rows.append((f"top(20), {name}", f"{1 / s:,.0f} queries/s", f"{s * 1e3:.2f} ms"))

        lb = hotrank.ShardedLeaderboard(rc, "lb:{bsh}", shards=SHARDS)
        lb.create()
        lone = hotrank.Leaderboard(rc.get_redis_connection(rc.get_node_from_key("lb:{bone}")), "lb:{bone}")
        members = [f"p{i}" for i in range(MEMBERS)]
        calls = [hotrank._calls.rank_set(lb.key_of(m), m, rng.randrange(10_000), False, False, False, t0) for m in members]
        lb._batch(list(calls))
        lone._run_many([hotrank._calls.rank_set(lone.key, m, rng.randrange(10_000), False, False, False, t0) for m in members])
        sample = rng.sample(members, QUERIES)
        for name, b in (("one board", lone), (f"{SHARDS} shards", lb)):
            it = iter(sample * 2)
            s = timed(lambda: b.rank(next(it)), QUERIES)
            rows.append((f"rank(m), {name}", f"{1 / s:,.0f} queries/s", f"{s * 1e3:.2f} ms"))
            s = timed(lambda: b.range(0, 99), QUERIES)
            rows.append((f"range(0, 99), {name}", f"{1 / s:,.0f} queries/s", f"{s * 1e3:.2f} ms"))
            it2 = iter(sample * 2)
            s = timed(lambda: b.around(next(it2), 5), QUERIES)
            rows.append((f"around(m, 5), {name}", f"{1 / s:,.0f} queries/s", f"{s * 1e3:.2f} ms"))
        print(f"\n### Sharded boards: {SHARDS} shards on a local 3-master cluster vs one board (Python sync client)\n")
        print(f"{VIEWS:,} views over {ARTICLES:,} articles (Zipf), {MEMBERS:,} members; {QUERIES} queries each.\n")
        print("| workload | rate | per call |\n|---|---:|---:|")
        for r in rows:
            print(f"| {r[0]} | {r[1]} | {r[2]} |")
    finally:
        c.stop()


if __name__ == "__main__":
    main()
