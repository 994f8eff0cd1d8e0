"""The client's own rules: time, window and prefix arguments, typed errors (also from
pipelines and ACL refusals), and the prefix keeping a board in its hash tag's slot."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta, timezone

import pytest
import redis
import redis.asyncio

import hotrank
import hotrank.asyncio as hasync
from conftest import T0, Cluster, Server
from hotrank import _calls as c


def test_times_are_aware_datetimes_or_unix_seconds_to_the_millisecond() -> None:
    assert c.time_arg(1700000000) == "1700000000"
    assert c.time_arg(1700000000.123) == "1700000000.123"
    assert c.time_arg(1700000000.5) == "1700000000.5"
    assert c.time_arg(datetime(2023, 11, 14, 22, 13, 20, 123999, tzinfo=timezone.utc)) == "1700000000.123"
    assert c.time_arg(datetime(2023, 11, 15, 0, 13, 20, tzinfo=timezone(timedelta(hours=2)))) == "1700000000"
    with pytest.raises(ValueError, match="naive datetime"):
        c.time_arg(datetime(2023, 11, 14))
    with pytest.raises(ValueError, match="finite"):
        c.time_arg(float("nan"))
    with pytest.raises(TypeError):
        c.time_arg(True)
    with pytest.raises(TypeError):
        c.time_arg("1700000000")  # type: ignore[arg-type]


def test_windows_are_whole_seconds() -> None:
    assert c.seconds_arg("window", timedelta(hours=72)) == 259200
    assert c.seconds_arg("window", 90.0) == 90
    with pytest.raises(ValueError, match="whole number of seconds"):
        c.seconds_arg("window", timedelta(milliseconds=1500))
    with pytest.raises(ValueError, match="whole number of seconds"):
        c.seconds_arg("window", 1.5)


def test_tz_offsets_are_written_as_the_server_reads_them() -> None:
    assert c.tz_arg(timedelta(hours=-3, minutes=-30)) == "-03:30"
    assert c.tz_arg(timezone(timedelta(hours=2))) == "+02:00"
    assert c.tz_arg("+01:00") == "+01:00"


def test_a_prefix_with_a_hash_tag_is_refused() -> None:
    r = redis.Redis()
    for bad in ["{t}", "app:{", "}"]:
        with pytest.raises(ValueError, match="must not contain"):
            hotrank.Client(r, prefix=bad)
        with pytest.raises(ValueError, match="must not contain"):
            hotrank.HotBoard(r, "hot:{x}", prefix=bad)
    assert hotrank.Leaderboard(hotrank.Client(r, prefix="a:"), "lb:{x}", prefix="b:").key == "a:b:lb:{x}"


def test_prefixed_board_stays_in_its_hash_tag_slot_on_a_cluster(cluster: Cluster) -> None:
    rc = cluster.client(3)
    board = hotrank.Client(rc, prefix="tenant-7:").hot("hot:{news}")
    board.view_many([(f"a{i}", f"v{i}", T0) for i in range(5)])
    assert rc.keyslot(board.key) == rc.keyslot("{news}") == rc.keyslot("hot:{news}")
    node = rc.get_node_from_key(board.key)
    keys = rc.execute_command("KEYS", "tenant-7:hot:{news}*", target_nodes=node)
    assert len(keys) >= 5 and all(rc.keyslot(k) == rc.keyslot("{news}") for k in keys)
    assert [a.article for a in board.top(at=T0)] == [f"a{i}" for i in range(5)]
    rc.close()


def test_pipelined_errors_raise_typed_after_every_view_ran(r: redis.Redis) -> None:
    board = hotrank.HotBoard(r, "hot:{pipe}")
    with pytest.raises(hotrank.InvalidArgumentError) as e:
        board.view_many([("a", "v1", T0), ("a", "v2", T0 + 10**8), ("a", "v3", T0 + 1)])
    assert e.value.message == "ERR AT is later than the server clock: writes cannot be in the future"
    stats = board.stats("a")
    assert stats is not None and stats.pv == 2


def test_errors_keep_the_servers_message_and_code(r: redis.Redis) -> None:
    r.set("plain", "x")
    with pytest.raises(hotrank.WrongTypeError) as wrong:
        hotrank.Leaderboard(r, "plain").incr("m", 1)
    assert wrong.value.code == "WRONGTYPE" and str(wrong.value).startswith("WRONGTYPE ")
    assert isinstance(wrong.value, redis.exceptions.ResponseError)
    with pytest.raises(hotrank.InvalidArgumentError) as bad:
        hotrank.Leaderboard(r, "lb:{e}").create(min_score=10, max_score=1)
    assert bad.value.message.startswith("ERR ") and bad.value.code == "ERR"
    with pytest.raises(hotrank.UnknownCommandError):
        hotrank.HotBoard(r, "x")._run(c.Call(("HOT.NO-SUCH-COMMAND", "x"), c.integer))


def test_acl_refusal_is_no_permission_error(server: Server) -> None:
    admin = server.client()
    admin.execute_command("ACL", "SETUSER", "reader", "on", ">pw", "~hot:{ok}*", "+@all")
    try:
        r = redis.Redis(port=server.port, username="reader", password="pw", decode_responses=True)
        hotrank.HotBoard(r, "hot:{ok}").view("a", "v", at=T0)
        with pytest.raises(hotrank.NoPermissionError) as e:
            hotrank.HotBoard(r, "hot:{secret}").view("a", "v", at=T0)
        assert e.value.code == "NOPERM" and e.value.message.startswith("NOPERM ")

        async def main() -> None:
            ar = redis.asyncio.Redis(port=server.port, username="reader", password="pw")
            try:
                with pytest.raises(hotrank.NoPermissionError):
                    await hasync.HotBoard(ar, "hot:{secret}").top()
            finally:
                await ar.aclose()

        asyncio.run(main())
    finally:
        admin.execute_command("ACL", "DELUSER", "reader")
