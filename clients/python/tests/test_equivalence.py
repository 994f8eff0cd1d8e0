"""Sync, asyncio and RedisCluster clients, over RESP2 and RESP3, on redis-server and
valkey-server, give equal results for the same calls (tests/scenario.py)."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import pytest
import redis.asyncio
import redis.asyncio.cluster

import hotrank
import hotrank.asyncio as hasync
from conftest import Cluster, Server
from scenario import Result, run_async, run_sync

_names = itertools.count()
NEW = ("HOT.CREATE", "HOT.ALTER", "HOT.INFO", "HOT.REM", "HOT.EXPORT", "HOT.DROP", "RANK.INFO")


def keys() -> tuple[str, str]:
    """Fresh board keys, each run with its own hash tag (so a cluster spreads them)."""
    n = next(_names)
    return f"hot:{{eq{n}}}", f"lb:{{eq{n}}}"


@pytest.fixture(scope="module")
def new_commands(servers: Any) -> bool:
    """Whether the module has the commands other work is adding (both servers must)."""
    return all(servers(kind).has_command(name) for kind in ("redis", "valkey") for name in NEW)


@pytest.fixture(scope="module")
def reference(servers: Any, new_commands: bool) -> list[Result]:
    """The scenario through the sync client on redis-server over RESP2."""
    client = servers("redis").client(2)
    return run_sync(client, *keys(), new_commands=new_commands)


def test_reference_covers_every_kind_of_result(reference: list[Result]) -> None:
    kinds = {type(x).__name__ for x in reference}
    for name in ("ViewResult", "list", "ArticleStats", "NoneType", "int", "bool", "SetResult", "ScoreWithTime"):
        assert name in kinds, f"the scenario never returns a {name}"
    errors = [x for x in reference if isinstance(x, tuple)]
    assert ("InvalidArgumentError", "ERR AT is later than the server clock: writes cannot be in the future") in errors
    assert ("BoardExistsError", "ERR board already exists") in errors
    assert ("InvalidArgumentError", "ERR board has no month period") in errors


def test_sync_standalone_matches(server: Server, protocol: int, new_commands: bool, reference: list[Result]) -> None:
    client = server.client(protocol, decode_responses=False)
    assert run_sync(hotrank.Client(client, prefix="app:"), *keys(), new_commands=new_commands) == reference


def test_async_standalone_matches(server: Server, protocol: int, new_commands: bool, reference: list[Result]) -> None:
    async def main() -> list[Result]:
        client = redis.asyncio.Redis(port=server.port, protocol=protocol, decode_responses=True)
        try:
            return await run_async(hasync.Client(client, prefix="app:"), *keys(), new_commands=new_commands)
        finally:
            await client.aclose()

    assert asyncio.run(main()) == reference


def test_sync_cluster_matches(cluster: Cluster, protocol: int, new_commands: bool, reference: list[Result]) -> None:
    client = cluster.client(protocol)
    try:
        assert run_sync(client, *keys(), new_commands=new_commands) == reference
    finally:
        client.close()


def test_async_cluster_matches(cluster: Cluster, protocol: int, new_commands: bool, reference: list[Result]) -> None:
    async def main() -> list[Result]:
        client = redis.asyncio.cluster.RedisCluster(host="127.0.0.1", port=cluster.port, protocol=protocol)
        try:
            return await run_async(client, *keys(), new_commands=new_commands)
        finally:
            await client.aclose()

    assert asyncio.run(main()) == reference
