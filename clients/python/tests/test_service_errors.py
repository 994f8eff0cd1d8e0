"""Issue 30 part 4 and the launcher's start failures: replies a person can read,
integral times as integers, one duration parser for the clients and the service,
and one line (exit 1) for a port in use or a Redis that is down."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
from typing import Any, Iterator

import pytest
import redis
import redis.asyncio
from fastapi.testclient import TestClient

import hotrank
import hotrank.asyncio as hasync
from conftest import T0, Server, free_port
from hotrank._duration import parse_duration
from hotrank.service import Settings, create_app

HOT, LB = "hot:{err}", "lb:{err}"
TOKEN = "t"


@pytest.fixture
def http(server: Server) -> Iterator[TestClient]:
    """The app on redis-server and on valkey-server."""
    server.client().flushall()
    settings = Settings(f"redis://127.0.0.1:{server.port}/0", [HOT], [LB], token=TOKEN)
    with TestClient(create_app(settings), headers={"Authorization": f"Bearer {TOKEN}"}) as client:
        yield client


def error(resp: Any) -> str:
    assert resp.status_code == 400, resp.text
    return str(resp.json()["error"])


def test_errors_read_like_sentences(http: TestClient) -> None:
    post = lambda body: http.post("/api/views", content=body, headers={"content-type": "application/json"})  # noqa: E731
    assert error(post(b"{not json")) == "body is not valid JSON"
    assert error(post(b"[1, 2]")) == "body must be a JSON object"
    assert error(http.post("/api/views", json={"articleId": "a", "visitorId": "v", "at": "noon"})) == "at must be unix seconds (a number)"
    assert error(http.post("/api/articles", json={"articleId": "a", "publishedAt": [1]})) == "publishedAt must be unix seconds (a number)"
    assert error(http.post("/api/articles", json={"publishedAt": 1})) == "articleId is required"
    assert error(http.post("/api/views", json={"articleId": "", "visitorId": "v"})) == "articleId must be a non-empty string"
    assert error(http.post("/api/views", json={"articleId": "a", "visitorId": "v", "x": 1})) == "x is not a known field (extra fields are not allowed)"
    assert error(http.get("/api/hot?limit=0")) == "limit must be a whole number from 1 to 10000"
    assert error(http.get("/api/hot?at=yesterday")) == "at must be unix seconds (a number)"
    assert error(http.get("/api/hot?range=3w")) == parse_error("3w", "range")
    score = http.post(f"/api/leaderboards/{LB}/scores", json={"memberId": "m", "score": 1.5, "mode": "max"})
    assert error(score) == "score must be a whole number; mode must be one of best, incr or set"
    for resp in [post(b"{"), http.get("/api/hot?limit=x"), http.post("/api/views", json={"articleId": 1, "at": {}})]:
        text = error(resp)
        for parser_words in ("decode", "int_parsing", "Input should", "at.int", "0:", "loc"):
            assert parser_words not in text


def parse_error(raw: str, name: str) -> str:
    with pytest.raises(ValueError) as e:
        parse_duration(raw, name)
    return str(e.value)


def test_integral_times_are_integers(http: TestClient) -> None:
    assert http.post("/api/articles", json={"articleId": "whole", "publishedAt": T0}).status_code == 200
    assert http.post("/api/articles", json={"articleId": "half", "publishedAt": T0 + 0.5}).status_code == 200
    for a in ("whole", "half"):
        assert http.post("/api/views", json={"articleId": a, "visitorId": "v", "at": T0 + 60}).status_code == 200
    rows = {r["articleId"]: r for r in http.get(f"/api/hot?at={T0 + 120}").json()["articles"]}
    assert rows["whole"]["publishedAt"] == T0 and type(rows["whole"]["publishedAt"]) is int
    assert rows["half"]["publishedAt"] == T0 + 0.5
    text = http.get(f"/api/hot?at={T0 + 120}").text.replace(" ", "")
    assert f'"publishedAt":{T0}' in text and f"{T0}.0" not in text


def test_a_long_list_comes_in_one_script_call(server: Server, http: TestClient) -> None:
    hot = hotrank.HotBoard(server.client(), HOT)
    hot.view_many([(f"x{i:04d}", f"v{i}", T0) for i in range(1500)])  # more ids than Lua's unpack takes at once
    hot.view_many([("x0007", f"w{i}", T0) for i in range(3)])
    rows = http.get(f"/api/hot?range=7d&limit=10000&at={T0 + 60}").json()["articles"]
    assert len(rows) == 1500 and rows[0]["articleId"] == "x0007" and rows[0]["pv"] == 4
    assert [r["articleId"] for r in rows] == [a.article for a in hot.top(10000, window="7d", at=T0 + 60)]


def test_one_duration_parser_for_clients_and_service(server: Server, http: TestClient) -> None:
    assert [parse_duration(x) for x in ("90", "90s", "15m", "72h", "7d", " 2h ")] == [90, 90, 900, 259200, 604800, 7200]
    for bad in ("3w", "1.5h", "-5", "", "h", "72 h"):
        with pytest.raises(ValueError, match="window must be seconds or a number with a unit"):
            parse_duration(bad, "window")
    r = server.client()
    hot = hotrank.HotBoard(r, HOT)
    hot.publish("new", T0 - 3600)
    hot.publish("old", T0 - 80 * 3600)
    hot.view_many([("new", "v1", T0), ("old", "v1", T0), ("old", "v2", T0)])
    want = [a.article for a in hot.top(10, window=72 * 3600, at=T0)]
    assert want == ["new"] and [a.article for a in hot.top(10, window="72h", at=T0)] == want
    assert [a.article for a in hot.top(10, window="4d", at=T0)] == ["new", "old"]
    with pytest.raises(ValueError, match="window must be seconds or a number with a unit"):
        hot.top(10, window="3w")
    sharded = hotrank.ShardedHotBoard(r, "hot:{errsh}", shards=3)
    sharded.publish("new", T0 - 3600)
    sharded.view("new", "v1", at=T0)
    assert [a.article for a in sharded.top(10, window="72h", at=T0)] == ["new"]

    async def via_asyncio() -> tuple[list[str], list[str]]:
        ar = redis.asyncio.Redis(port=server.port, decode_responses=True)
        try:
            one = await hasync.HotBoard(ar, HOT).top(10, window="72h", at=T0)
            sh = await hasync.ShardedHotBoard(ar, "hot:{errsh}", shards=3).top(10, window="15m", at=T0 + 60)
            return [a.article for a in one], [a.article for a in sh]
        finally:
            await ar.aclose()

    assert asyncio.run(via_asyncio()) == (want, [])
    # The service reads the same strings the same way.
    assert http.get(f"/api/hot?range=72h&at={T0}").json()["range"] == parse_duration("72h")


def launch(*args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "hotrank.service", "--log-level", "warning", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60)


def test_launcher_says_one_line_for_a_port_in_use_or_redis_down(redis_server: Server) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        out = launch("--redis-url", f"redis://127.0.0.1:{redis_server.port}/0", "--port", str(port))
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr.strip().splitlines() == [f"python -m hotrank.service: error: port {port} on 127.0.0.1 is already in use (another service? pick another with --port)"]
    down = free_port()
    out = launch("--redis-url", f"redis://127.0.0.1:{down}/0", "--port", "0")
    lines = out.stderr.strip().splitlines()
    assert out.returncode == 1 and len(lines) == 1 and lines[0].startswith(f"python -m hotrank.service: error: cannot reach Redis at redis://127.0.0.1:{down}/0")
    out = launch("--redis-url", f"redis://127.0.0.1:{down}/0", "--port", "0", "--debug")
    assert out.returncode == 1 and "Traceback" in out.stderr
    out = launch("--views-per-minute", "-1")
    assert out.returncode == 2 and out.stderr.startswith("usage:")
