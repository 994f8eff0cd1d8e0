"""The service (hotrank.service) through real HTTP requests: FastAPI's TestClient for
the routes, and one uvicorn process over a socket. Replies are checked against the
raw commands on the same server."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any, Iterator

import pytest
import redis
from fastapi.testclient import TestClient

from conftest import T0, Server, Service
from hotrank.service import Settings, create_app

PREFIX = "svc:"
HOT, OTHER, LB = "hot:{svc}", "hot:{svc2}", "lb:{svc}"
TOKEN = "s3cret-token"


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def http(request: pytest.FixtureRequest, redis_server: Server, raw: redis.Redis) -> Iterator[TestClient]:
    """The app on a TestClient, its Redis connection speaking RESP2 or RESP3."""
    url = f"redis://127.0.0.1:{redis_server.port}/0?protocol={request.param}"
    settings = Settings(url, [HOT, OTHER], [LB], prefix=PREFIX, token=TOKEN)
    with TestClient(create_app(settings), headers={"Authorization": f"Bearer {TOKEN}"}) as client:
        yield client


def seed(http: TestClient, board: str = HOT) -> None:
    """Five articles with 1 … 5 visitors each, viewed at T0."""
    for i in range(5):
        assert http.post(f"/api/articles?board={board}", json={"articleId": f"a{i}", "publishedAt": T0 - 3600 * i}).json() == {"articleId": f"a{i}", "new": True}
        for v in range(i + 1):
            assert http.post(f"/api/views?board={board}", json={"articleId": f"a{i}", "visitorId": f"v{v}", "at": T0}).status_code == 200


def error(resp: Any, status: int) -> str:
    assert resp.status_code == status, resp.text
    assert resp.headers["content-type"].startswith("application/json")
    body = resp.json()
    assert set(body) == {"error"}
    return str(body["error"])


def test_view_returns_status_and_counters_as_hot_view(http: TestClient, raw: redis.Redis) -> None:
    resp = http.post("/api/views", json={"articleId": "a1", "visitorId": "u1", "at": T0})
    want = raw.execute_command("HOT.VIEW", "twin", "a1", "u1", "AT", T0)
    assert resp.json() == {"articleId": "a1", "status": want[3], "pv": want[0], "uv": want[1], "score": float(want[2])}
    again = http.post("/api/views", json={"articleId": "a1", "visitorId": "u1", "at": T0 + 1}).json()
    assert again["status"] == "duplicate" and again["pv"] == 1
    assert raw.exists(PREFIX + HOT) and not raw.exists(HOT)


def test_visitor_may_come_from_a_header_or_a_cookie(http: TestClient) -> None:
    by_header = http.post("/api/views", json={"articleId": "a"}, headers={"X-Visitor-Id": "h1"}).json()
    assert (by_header["status"], by_header["uv"]) == ("counted", 1)
    http.cookies.set("visitor_id", "c1")
    by_cookie = http.post("/api/views", json={"articleId": "a"}).json()
    assert (by_cookie["status"], by_cookie["uv"]) == ("counted", 2)
    http.cookies.clear()
    assert "visitorId is required" in error(http.post("/api/views", json={"articleId": "a"}), 400)


def test_hot_lists_top_with_counters_as_hot_top_and_stats(http: TestClient, raw: redis.Redis) -> None:
    seed(http)
    body = http.get(f"/api/hot?range=3h&limit=20&at={T0 + 60}").json()
    flat = raw.execute_command("HOT.TOP", PREFIX + HOT, "LIMIT", 20, "WINDOW", 3 * 3600, "WITHSCORES", "AT", T0 + 60)
    assert [(a["articleId"], a["score"]) for a in body["articles"]] == [(m, float(s)) for m, s in zip(flat[0::2], flat[1::2])]
    assert len(body["articles"]) == 3 and body["range"] == 10800  # a3 was published 3 h before T0, 60 s out of range and body["board"] == HOT
    for a in body["articles"]:
        s = raw.execute_command("HOT.STATS", PREFIX + HOT, a["articleId"])
        s = dict(zip(s[0::2], s[1::2]))
        assert (a["pv"], a["uv"], a["publishedAt"]) == (s["pv"], s["uv"], float(s["published_at"]))
    assert [a["rank"] for a in body["articles"]] == [0, 1, 2]
    assert len(http.get(f"/api/hot?limit=2&at={T0 + 60}").json()["articles"]) == 2
    assert http.get(f"/api/hot?board={OTHER}").json()["articles"] == []


def test_bad_input_is_a_json_400(http: TestClient) -> None:
    assert "range must be" in error(http.get("/api/hot?range=3w"), 400)
    assert "range must be between" in error(http.get("/api/hot?range=0"), 400)
    assert "limit" in error(http.get("/api/hot?limit=0"), 400)
    assert "limit" in error(http.get("/api/hot?limit=x"), 400)
    assert "articleId" in error(http.post("/api/views", json={"visitorId": "v"}), 400)
    assert "extra" in error(http.post("/api/views", json={"articleId": "a", "visitorId": "v", "x": 1}), 400).lower()
    assert error(http.post("/api/views", content=b"{not json", headers={"content-type": "application/json"}), 400)
    msg = error(http.post("/api/views", json={"articleId": "a", "visitorId": "v", "at": T0 + 10**8}), 400)
    assert msg == "ERR AT is later than the server clock: writes cannot be in the future"
    assert "score" in error(http.post(f"/api/leaderboards/{LB}/scores", json={"memberId": "m", "score": 1.5}), 400)
    assert "mode" in error(http.post(f"/api/leaderboards/{LB}/scores", json={"memberId": "m", "score": 1, "mode": "max"}), 400)


def test_unknown_boards_routes_and_wrong_methods_are_json(http: TestClient) -> None:
    assert error(http.get("/api/hot?board=hot:{secret}"), 404) == "unknown board 'hot:{secret}'"
    assert "unknown board" in error(http.post("/api/views?board=x", json={"articleId": "a", "visitorId": "v"}), 404)
    assert "unknown leaderboard" in error(http.get("/api/leaderboards/lb:{secret}/top"), 404)
    assert "unknown leaderboard" in error(http.post("/api/leaderboards/x/scores", json={"memberId": "m", "score": 1}), 404)
    assert error(http.get("/api/nope"), 404) == "no route GET /api/nope"
    assert error(http.delete("/api/hot"), 405) == "method DELETE not allowed on /api/hot"
    assert "not allowed" in error(http.get("/api/views"), 405)
    assert "not allowed" in error(http.put("/api/leaderboards/x/scores"), 405)


def test_leaderboard_routes_match_rank_commands(http: TestClient, raw: redis.Redis) -> None:
    key = PREFIX + LB
    url = f"/api/leaderboards/{LB}"
    for member, score in [("ada", 50), ("bob", 70), ("cy", 40), ("dee", 60)]:
        got = http.post(f"{url}/scores", json={"memberId": member, "score": score}).json()
        assert got == {"memberId": member, "score": score, "written": True, "rank": raw.execute_command("RANK.RANK", key, member)}
    kept = http.post(f"{url}/scores", json={"memberId": "bob", "score": 10}).json()
    assert (kept["score"], kept["written"], kept["rank"]) == (70, False, 0)
    assert http.post(f"{url}/scores", json={"memberId": "cy", "score": 25, "mode": "incr"}).json()["score"] == 65
    assert http.post(f"{url}/scores", json={"memberId": "dee", "score": 1, "mode": "set"}).json()["score"] == 1
    flat = raw.execute_command("RANK.RANGE", key, 0, 9, "WITHSCORES")
    top = http.get(f"{url}/top?limit=10").json()["entries"]
    assert [(e["rank"], e["memberId"], e["score"]) for e in top] == [(i, m, s) for i, (m, s) in enumerate(zip(flat[0::2], flat[1::2]))]
    assert http.get(f"{url}/top?limit=2&offset=1").json()["entries"] == top[1:3]
    me = http.get(f"{url}/members/ada?n=1").json()
    around = raw.execute_command("RANK.AROUND", key, "ada", 1)
    assert me["rank"] == raw.execute_command("RANK.RANK", key, "ada") and me["score"] == 50
    assert [(e["rank"], e["memberId"], e["score"]) for e in me["around"]] == [tuple(x) for x in around]
    assert error(http.get(f"{url}/members/nobody"), 404) == f"member 'nobody' is not on leaderboard '{LB}'"


def test_page_and_config_are_served(http: TestClient) -> None:
    page = http.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert '<table id="hot">' in page.text and '<table id="leaderboard">' in page.text and "<script>" in page.text
    assert http.get("/api/config").json() == {"hotBoards": [HOT, OTHER], "trendingBoards": [], "leaderboards": [LB], "hotCacheSeconds": 5.0}


def test_uvicorn_serves_the_routes_over_a_socket(redis_server: Server, raw: redis.Redis) -> None:
    svc = Service(redis_server.port, [HOT], [LB], prefix=PREFIX)
    try:
        req = urllib.request.Request(
            svc.url + "/api/views", data=json.dumps({"articleId": "a1", "visitorId": "v1"}).encode(),
            headers={"content-type": "application/json"}, method="POST",
        )  # fmt: skip
        with urllib.request.urlopen(req, timeout=10) as resp:
            view = json.load(resp)
        assert (view["status"], view["pv"], view["uv"]) == ("counted", 1, 1)
        with urllib.request.urlopen(svc.url + "/api/hot?range=72h&limit=20", timeout=10) as resp:
            hot = json.load(resp)
        assert [a["articleId"] for a in hot["articles"]] == raw.execute_command("HOT.TOP", PREFIX + HOT)
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(urllib.request.Request(svc.url + "/api/hot", method="DELETE"), timeout=10)
        assert e.value.code == 405 and "error" in json.load(e.value)
    finally:
        svc.stop()
