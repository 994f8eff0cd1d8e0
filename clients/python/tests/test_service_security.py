"""Issue 34 through real HTTP: ``python -m hotrank.service`` processes (uvicorn) on a
real redis-server. Privileged routes need the token and write nothing without it;
page views are limited per client address, shared by every process on the Redis;
the body limit and CORS."""

from __future__ import annotations

from typing import Any

import httpx
import redis

from conftest import T0, Server, Service
from hotrank.service._guard import client_address, cluster_storage_args, hop_address, limit_key, parse_networks

HOT, LB = "hot:{sec}", "lb:{sec}"
TOKEN = "tok-3f9a1c"


def stats(raw: redis.Redis, article: str) -> dict[str, int] | None:
    reply = raw.execute_command("HOT.STATS", HOT, article)
    return None if reply is None else dict(zip(reply[0::2], reply[1::2]))


def test_privileged_routes_need_the_token(redis_server: Server, raw: redis.Redis) -> None:
    svc = Service(redis_server.port, [HOT], [LB], token=TOKEN)
    try:
        with httpx.Client(base_url=svc.url, timeout=10) as http:
            publish = {"articleId": "old", "publishedAt": T0}
            score = {"memberId": "cheater", "score": 999999999}
            for headers, status in [({}, 401), ({"Authorization": "Bearer nope"}, 403), ({"Authorization": "Basic " + TOKEN}, 401)]:
                r1 = http.post("/api/articles", json=publish, headers=headers)
                r2 = http.post(f"/api/leaderboards/{LB}/scores", json=score, headers=headers)
                for r in (r1, r2):
                    assert r.status_code == status, r.text
                    assert r.headers["content-type"] == "application/json" and set(r.json()) == {"error"}
            # A bad body without the token is still refused for the token first.
            assert http.post("/api/articles", content=b"{", headers={"content-type": "application/json"}).status_code == 401
            assert stats(raw, "old") is None and raw.execute_command("RANK.SCORE", LB, "cheater") is None
            assert raw.dbsize() == 0

            ok = {"Authorization": f"Bearer {TOKEN}"}
            assert http.post("/api/articles", json=publish, headers=ok).json() == {"articleId": "old", "new": True}
            assert http.post(f"/api/leaderboards/{LB}/scores", json=score, headers=ok).json()["written"] is True
            assert raw.execute_command("HOT.STATS", HOT, "old") is not None
            assert raw.execute_command("RANK.SCORE", LB, "cheater") == 999999999
            # Reads stay public.
            assert http.get("/api/hot").status_code == 200 and http.get(f"/api/leaderboards/{LB}/top").status_code == 200
    finally:
        svc.stop()


def test_without_a_token_the_privileged_routes_are_off(redis_server: Server, raw: redis.Redis) -> None:
    svc = Service(redis_server.port, [HOT], [LB])
    try:
        with httpx.Client(base_url=svc.url, timeout=10) as http:
            for headers in ({}, {"Authorization": "Bearer anything"}):
                r = http.post("/api/articles", json={"articleId": "a", "publishedAt": T0}, headers=headers)
                assert r.status_code == 403 and "HOTRANK_SERVICE_TOKEN" in r.json()["error"] and "--token-file" in r.json()["error"]
                r = http.post(f"/api/leaderboards/{LB}/scores", json={"memberId": "m", "score": 1}, headers=headers)
                assert r.status_code == 403
            assert raw.dbsize() == 0
            assert http.post("/api/views", json={"articleId": "a", "visitorId": "v"}).json()["status"] == "counted"
    finally:
        svc.stop()


def test_views_are_limited_per_address_and_the_rest_is_counted_apart(redis_server: Server, raw: redis.Redis) -> None:
    svc = Service(redis_server.port, [HOT], [LB], token=TOKEN)
    try:
        with httpx.Client(base_url=svc.url, timeout=10) as http:
            codes = []
            for i in range(300):
                r = http.post("/api/views", json={"articleId": "target", "visitorId": f"bot{i}"})
                codes.append(r.status_code)
                if r.status_code == 429:
                    assert 1 <= int(r.headers["retry-after"]) <= 60
                    assert "at most 60 a minute" in r.json()["error"]
            assert codes == [200] * 60 + [429] * 240
            s = stats(raw, "target")
            assert s is not None and (s["pv"], s["uv"]) == (60, 60)
            assert raw.hget(f"{HOT}:rate-limited", "target") == "240"
            row = http.get("/api/hot").json()["articles"][0]
            assert (row["articleId"], row["pv"], row["uv"], row["suspicious"], row["rateLimited"]) == ("target", 60, 60, 240, 240)

            # The site's backend, holding the token, is not limited per address.
            ok = {"Authorization": f"Bearer {TOKEN}"}
            for i in range(300):
                assert http.post("/api/views", json={"articleId": "backend", "visitorId": f"r{i}"}, headers=ok).status_code == 200
            s = stats(raw, "backend")  # UV is a HyperLogLog estimate (0.81 % standard error)
            assert s is not None and s["pv"] == 300 and abs(s["uv"] - 300) <= 9
    finally:
        svc.stop()


def test_two_service_processes_share_one_limit(redis_server: Server, raw: redis.Redis) -> None:
    a = Service(redis_server.port, [HOT], [LB], extra=("--views-per-minute", "10"))
    b = Service(redis_server.port, [HOT], [LB], extra=("--views-per-minute", "10"))
    try:
        with httpx.Client(timeout=10) as http:
            codes = [http.post((a, b)[i % 2].url + "/api/views", json={"articleId": "x", "visitorId": f"v{i}"}).status_code for i in range(30)]
        assert codes.count(200) == 10 and codes[:10] == [200] * 10 and set(codes[10:]) == {429}
        s = stats(raw, "x")
        assert s is not None and s["pv"] == 10 and raw.hget(f"{HOT}:rate-limited", "x") == "20"
    finally:
        a.stop()
        b.stop()


def test_forwarded_for_is_believed_only_from_a_trusted_proxy(redis_server: Server, raw: redis.Redis) -> None:
    proxied = Service(redis_server.port, [HOT], [LB], extra=("--views-per-minute", "3", "--trusted-proxy", "127.0.0.0/8"))
    direct = Service(redis_server.port, [HOT], [LB], extra=("--views-per-minute", "3"))
    try:
        with httpx.Client(timeout=10) as http:

            def view(svc: Service, client: str, i: int) -> int:
                body = {"articleId": "p", "visitorId": f"{client}-{i}"}
                return http.post(svc.url + "/api/views", json=body, headers={"X-Forwarded-For": f"{client}, 127.0.0.2"}).status_code

            # Behind the trusted proxy, each forwarded client has its own count.
            assert [view(proxied, "198.51.100.7", i) for i in range(4)] == [200, 200, 200, 429]
            assert [view(proxied, "203.0.113.9", i) for i in range(4)] == [200, 200, 200, 429]
            # Without --trusted-proxy the header is ignored: every view is from 127.0.0.1.
            raw.flushall()
            assert [view(direct, f"192.0.2.{i}", i) for i in range(4)] == [200, 200, 200, 429]
            # Also a one-hop header from 127.0.0.1, which uvicorn's own proxy-header
            # handling (on by default, trusting 127.0.0.1) would have believed.
            raw.flushall()
            spoofed = [
                http.post(direct.url + "/api/views", json={"articleId": "p", "visitorId": f"s{i}"}, headers={"X-Forwarded-For": f"192.0.2.{i}"}).status_code
                for i in range(4)
            ]  # fmt: skip
            assert spoofed == [200, 200, 200, 429]
    finally:
        proxied.stop()
        direct.stop()


def test_body_limit_and_cors(redis_server: Server, raw: redis.Redis) -> None:
    svc = Service(redis_server.port, [HOT], [LB], token=TOKEN, extra=("--cors-origin", "https://news.example"))
    plain = Service(redis_server.port, [HOT], [LB])
    try:
        with httpx.Client(timeout=10) as http:
            big = b'{"articleId": "' + b"a" * (1 << 20) + b'", "visitorId": "v"}'
            r = http.post(svc.url + "/api/views", content=big, headers={"content-type": "application/json"})
            assert r.status_code == 413 and "16384 bytes" in r.json()["error"]
            # Without a Content-Length (chunked), the limit holds as the body is read.
            r = http.post(svc.url + "/api/views", content=iter([big[i : i + 4096] for i in range(0, len(big), 4096)]),
                          headers={"content-type": "application/json"})  # fmt: skip
            assert r.status_code == 413
            assert raw.dbsize() == 0
            small = {"articleId": "a", "visitorId": "v"}
            r = http.post(svc.url + "/api/views", json=small, headers={"Origin": "https://news.example"})
            assert r.status_code == 200 and r.headers["access-control-allow-origin"] == "https://news.example"
            r = http.post(svc.url + "/api/views", json=small, headers={"Origin": "https://evil.example"})
            assert "access-control-allow-origin" not in r.headers
            pre = http.options(svc.url + "/api/views", headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"})
            assert "access-control-allow-origin" not in pre.headers
            r = http.get(plain.url + "/api/hot", headers={"Origin": "https://news.example"})
            assert r.status_code == 200 and "access-control-allow-origin" not in r.headers
    finally:
        svc.stop()
        plain.stop()


def test_the_limit_counts_an_ipv6_client_by_its_64() -> None:
    assert limit_key("203.0.113.9") == "203.0.113.9" == limit_key("::ffff:203.0.113.9")
    assert limit_key("2001:db8:1:2:aaaa::1") == limit_key("2001:db8:1:2:ffff::9") == "2001:db8:1:2::/64"
    assert limit_key("2001:db8:1:3::1") != limit_key("2001:db8:1:2::1")
    assert limit_key("unknown") == "unknown"


def test_a_path_prefix_never_skips_the_token(redis_server: Server, raw: redis.Redis) -> None:
    """Under a Starlette Mount or a root path (uvicorn --root-path) the request's path
    carries the prefix that the router strips; the token must hold there too."""
    from contextlib import asynccontextmanager
    from typing import AsyncIterator, Iterator

    from fastapi.testclient import TestClient
    from starlette.applications import Starlette
    from starlette.routing import Mount

    from hotrank.service import Settings, create_app

    url = f"redis://127.0.0.1:{redis_server.port}/0"
    publish = {"articleId": "old", "publishedAt": T0}
    score = {"memberId": "cheater", "score": 999999999}
    def clients(token: str | None) -> Iterator[tuple[TestClient, str]]:
        """The app under a Mount at /x, then the app given root_path /x (as uvicorn
        --root-path does: the path carries the prefix, the router strips it)."""
        inner = create_app(Settings(url, [HOT], [LB], token=token))

        @asynccontextmanager
        async def lifespan(app: Starlette) -> AsyncIterator[None]:
            async with inner.router.lifespan_context(inner):
                yield

        with TestClient(Starlette(routes=[Mount("/x", app=inner)], lifespan=lifespan)) as http:
            yield http, "/x"
        with TestClient(create_app(Settings(url, [HOT], [LB], token=token)), root_path="/x") as http:
            yield http, ""

    for token in (TOKEN, None):
        for http, prefix in clients(token):
            assert http.get(prefix + "/api/hot").status_code == 200  # the prefix does route
            for headers in ({}, {"Authorization": "Bearer nope"}):
                want = 403 if token is None or headers else 401
                r1 = http.post(prefix + "/api/articles", json=publish, headers=headers)
                r2 = http.post(f"{prefix}/api/leaderboards/{LB}/scores", json=score, headers=headers)
                for r in (r1, r2):
                    assert r.status_code == want, r.text
                    assert set(r.json()) == {"error"}
            assert stats(raw, "old") is None and raw.execute_command("RANK.SCORE", LB, "cheater") is None
            if token is not None:
                ok = {"Authorization": f"Bearer {TOKEN}"}
                assert http.post(prefix + "/api/articles", json=publish, headers=ok).json() == {"articleId": "old", "new": True}
                assert http.post(f"{prefix}/api/leaderboards/{LB}/scores", json=score, headers=ok).json()["written"] is True
                raw.flushall()


def test_refused_views_of_made_up_ids_cannot_grow_the_hash(redis_server: Server, raw: redis.Redis) -> None:
    """A refused view gets its own field only for an article on the board; any other id
    adds up in the field "" so the hash stays within the board's size + 1 fields."""
    import uuid

    svc = Service(redis_server.port, [HOT], [LB], extra=("--views-per-minute", "2"))
    try:
        for a in ("p1", "p2", "p3"):  # on the board: a member of its ZSET, as after a counted view
            raw.execute_command("HOT.VIEW", HOT, a, "reader", "AT", T0)
        raw.execute_command("HOT.PUBLISH", HOT, "unviewed", T0)  # known, not on the board
        with httpx.Client(base_url=svc.url, timeout=10) as http:
            assert [http.post("/api/views", json={"articleId": "p1", "visitorId": f"v{i}"}).status_code for i in range(2)] == [200, 200]
            for i in range(200):
                article = (uuid.uuid4().hex * 100, "unviewed")[i % 2] if i % 4 else ("p2", "p3")[i % 8 // 4]
                r = http.post("/api/views", json={"articleId": article, "visitorId": f"w{i}"})
                assert r.status_code == 429, r.text
        key = f"{HOT}:rate-limited"
        assert raw.zcard(HOT) == 3 and raw.hlen(key) <= raw.zcard(HOT) + 1
        assert raw.hgetall(key) == {"p2": "25", "p3": "25", "": "150"}
        assert 0 < raw.ttl(key) <= 30 * 86400
        s = stats(raw, "p2")  # refused views are not a reader's
        assert s is not None and (s["pv"], s["uv"]) == (1, 1)
    finally:
        svc.stop()


def test_a_forwarded_hop_with_a_port_is_its_address() -> None:
    assert hop_address(" 203.0.113.9:5123 ") == "203.0.113.9" == hop_address("203.0.113.9")
    assert hop_address("[2001:db8::1]:443") == "2001:db8::1" == hop_address("2001:db8::1") == hop_address("[2001:db8::1]")
    assert hop_address("2001:db8::1:443") == "2001:db8::1:443"  # a bare IPv6 address keeps its last group
    assert limit_key("203.0.113.9:5123") == "203.0.113.9" and limit_key("[2001:db8:1:2::9]:80") == "2001:db8:1:2::/64"
    trusted = parse_networks(["127.0.0.0/8", "10.0.0.0/8"])

    def scope(xff: str) -> dict[str, Any]:
        return {"client": ("127.0.0.1", 40000), "headers": [(b"x-forwarded-for", xff.encode())]}

    assert client_address(scope("198.51.100.7:5123, 10.0.0.2:80"), trusted) == "198.51.100.7"
    assert client_address(scope("[2001:db8::7]:5123, [::ffff:10.0.0.2]:80"), trusted) == "2001:db8::7"
    # A trusted proxy written with a port is still recognised as trusted, not taken for the client.
    assert client_address(scope("198.51.100.7, 10.0.0.2:8080"), trusted) == "198.51.100.7"


def test_the_cluster_limiter_keeps_credentials_and_tls() -> None:
    import asyncio

    from hotrank.service._guard import ViewLimit

    url = "rediss://svc:p%40ss@10.0.0.5:7000/0?ssl_cert_reqs=none"
    uri, options = cluster_storage_args(url)
    assert uri == "async+redis+cluster://10.0.0.5:7000"
    assert (options["username"], options["password"], options["ssl"], options["ssl_cert_reqs"]) == ("svc", "p@ss", True, "none")

    async def built() -> dict[str, Any]:
        limit = ViewLimit(url, True, 60, "t")
        client = limit.storage.bridge.storage  # type: ignore[attr-defined]
        kw: dict[str, Any] = client.connection_kwargs  # built, not connected
        return kw

    kw = asyncio.run(built())
    assert (kw["username"], kw["password"], kw["connection_class"].__name__, kw["ssl_cert_reqs"]) == ("svc", "p@ss", "SSLConnection", "none")
    assert "ssl" not in cluster_storage_args("redis://127.0.0.1:7000")[1]


def test_on_a_cluster_the_limiter_logs_in_as_the_service(cluster: Any) -> None:
    """The default user may not touch the limiter's keys; the service's URL names a user
    who may. Before the fix the limiter connected as the default user (NOPERM)."""
    from fastapi.testclient import TestClient

    from hotrank.service import Settings, create_app

    nodes = [redis.Redis(port=n.port, decode_responses=True) for n in cluster.nodes]
    try:
        for n in nodes:
            n.acl_setuser("svc-limit", enabled=True, passwords=["+pw"], keys=["*"], commands=["+@all"])
            n.execute_command("ACL", "SETUSER", "default", "resetkeys", "~hot:*", "~lb:*")
        # Its own prefix: the limit's count is not shared with other tests on this cluster.
        url = f"redis://svc-limit:pw@127.0.0.1:{cluster.port}/0"
        settings = Settings(url, [HOT], prefix="acl:", cluster=True, views_per_minute=3, hot_cache_seconds=0)
        with TestClient(create_app(settings)) as http:
            codes = [http.post("/api/views", json={"articleId": "acl", "visitorId": f"v{i}"}).status_code for i in range(5)]
            assert codes == [200, 200, 200, 429, 429]
    finally:
        for n in nodes:
            n.execute_command("ACL", "SETUSER", "default", "resetkeys", "~*")
            n.acl_deluser("svc-limit")
            n.close()
