"""Issue 35 through real HTTP: no Nagle stall (TCP_NODELAY on accepted sockets),
``--workers``, and the cached hot list (one recompute per key and period across
workers, ``computedAt``, ``Cache-Control``, ``ETag`` and 304). Speed itself is
measured by ``make bench`` (clients/python/bench/service.py), not here."""

from __future__ import annotations

import asyncio
import http.client
import os
import socket
import statistics
import threading
import time
import urllib.parse
from typing import Any

import httpx
import redis

from conftest import T0, Server, Service
from hotrank.service.__main__ import listen

HOT = "hot:{cache}"


def nodelay_of_accepted(sock: socket.socket) -> int:
    """TCP_NODELAY of a connection accepted by an asyncio server on ``sock``, as uvicorn accepts."""

    async def run() -> int:
        seen: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            seen.set_result(writer.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(handle, sock=sock)
        port = sock.getsockname()[1]
        _, w = await asyncio.open_connection("127.0.0.1", port)
        got = await asyncio.wait_for(seen, 10)
        w.close()
        server.close()
        return got

    return asyncio.run(run())


def test_accepted_connections_have_tcp_nodelay() -> None:
    assert nodelay_of_accepted(listen("127.0.0.1", 0)) != 0
    # What the launcher did before: proto 0, so asyncio left Nagle on (the 40 ms stall).
    old = socket.socket(socket.AF_INET)
    old.bind(("127.0.0.1", 0))
    old.listen(8)
    assert nodelay_of_accepted(old) == 0


def test_a_trivial_route_answers_without_the_40_ms_stall(redis_server: Server) -> None:
    svc = Service(redis_server.port, [HOT], [])
    try:
        u = urllib.parse.urlsplit(svc.url)
        conn = http.client.HTTPConnection(u.hostname or "", u.port, timeout=10)
        took = []
        for _ in range(40):  # one keep-alive connection, as a browser or wrk uses
            t = time.perf_counter()
            conn.request("GET", "/api/config")
            assert conn.getresponse().read().startswith(b'{"hotBoards"')
            took.append(time.perf_counter() - t)
        conn.close()
        # Loose: the stall made every reply take >= 40 ms; a reply takes ~1 ms here.
        assert statistics.median(took) < 0.035, took
    finally:
        svc.stop()


def test_the_launcher_serves_with_uvloop_and_httptools(redis_server: Server) -> None:
    # The [service] extra installs both and uvicorn's "auto" picks them: their compiled
    # modules are loaded in the serving process (one worker, and each of two workers).
    for workers in ("1", "2"):
        svc = Service(redis_server.port, [HOT], [], extra=("--workers", workers))
        try:
            assert httpx.get(svc.url + "/api/config", timeout=10).status_code == 200
            pids = [svc.proc.pid] if workers == "1" else wait_for_workers(svc, 2)
            for pid in pids:
                with open(f"/proc/{pid}/maps") as f:
                    maps = f.read()
                assert "/uvloop/loop." in maps and "/httptools/parser/" in maps, pid
        finally:
            svc.stop()


def test_the_access_log_is_off_unless_asked(redis_server: Server) -> None:
    def log_of(*extra: str) -> str:
        svc = Service(redis_server.port, [HOT], [], extra=("--log-level", "info", *extra))
        try:
            assert httpx.get(svc.url + "/api/config?probe=1", timeout=10).status_code == 200
        finally:
            svc.stop()
        assert svc.proc.stdout is not None
        return svc.proc.stdout.read()

    quiet = log_of()
    assert "Application startup complete" in quiet and "/api/config?probe=1" not in quiet
    assert '"GET /api/config?probe=1 HTTP/1.1" 200' in log_of("--access-log")


def hot_calls(raw: redis.Redis) -> int:
    return int(raw.info("hotrank")["hotrank_top_calls"])


def test_hot_list_is_cached_with_etag_and_304(redis_server: Server, raw: redis.Redis) -> None:
    svc = Service(redis_server.port, [HOT], [], extra=("--hot-cache-seconds", "1.5"))
    exact = Service(redis_server.port, [HOT], [], extra=("--hot-cache-seconds", "0"))
    try:
        with httpx.Client(timeout=10) as http:
            raw.execute_command("HOT.VIEW", HOT, "a", "v1")
            first = http.get(svc.url + "/api/hot")
            assert first.status_code == 200 and [a["articleId"] for a in first.json()["articles"]] == ["a"]
            etag, computed = first.headers["etag"], first.json()["computedAt"]
            assert abs(computed - time.time()) < 30 and first.headers["cache-control"] in ("public, max-age=1", "public, max-age=0", "no-cache")
            raw.execute_command("HOT.VIEW", HOT, "b", "v1")
            raw.execute_command("HOT.VIEW", HOT, "b", "v2")
            again = http.get(svc.url + "/api/hot")
            # Within the period: the same bytes, even though b now leads.
            if time.time() < computed + 1.4:
                assert again.content == first.content and again.headers["etag"] == etag
                assert http.get(svc.url + "/api/hot", headers={"If-None-Match": etag}).status_code == 304
            # Other (range, limit) pairs are other entries.
            assert [a["articleId"] for a in http.get(svc.url + "/api/hot?limit=5").json()["articles"]] == ["b", "a"]
            time.sleep(max(0.0, computed + 1.6 - time.time()))
            later = http.get(svc.url + "/api/hot", headers={"If-None-Match": etag})
            assert later.status_code == 200 and later.json()["computedAt"] > computed
            assert [a["articleId"] for a in later.json()["articles"]] == ["b", "a"] and later.headers["etag"] != etag

            # --hot-cache-seconds 0: exact on every request (scores decay, so replies differ).
            one = http.get(exact.url + "/api/hot")
            assert one.headers["cache-control"] == "no-cache" and one.headers["etag"]
            raw.execute_command("HOT.VIEW", HOT, "a", "v2")
            raw.execute_command("HOT.VIEW", HOT, "a", "v3")
            assert [a["articleId"] for a in http.get(exact.url + "/api/hot").json()["articles"]] == ["a", "b"]
            # An explicit `at` is never cached.
            assert http.get(svc.url + f"/api/hot?at={T0}").json()["articles"] == []
    finally:
        svc.stop()
        exact.stop()


def workers_of(svc: Service) -> list[int]:
    """Worker processes of the service (uvicorn spawns them as its children; not
    multiprocessing's resource tracker)."""
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read()
        except OSError:
            continue
        if ppid == svc.proc.pid and b"spawn_main" in cmd:
            out.append(int(pid))
    return out


def wait_for_workers(svc: Service, n: int) -> list[int]:
    """The service's ``n`` workers, once uvicorn has started them (up to 30 s)."""
    deadline = time.monotonic() + 30
    while len(workers_of(svc)) < n and time.monotonic() < deadline:
        time.sleep(0.1)
    pids = workers_of(svc)
    assert len(pids) == n
    return pids


def test_workers_share_one_recompute_per_period(redis_server: Server, raw: redis.Redis) -> None:
    svc = Service(redis_server.port, [HOT], [], extra=("--workers", "2", "--hot-cache-seconds", "30"))
    try:
        wait_for_workers(svc, 2)
        for i in range(5):
            raw.execute_command("HOT.VIEW", HOT, f"a{i}", "v")
        before = hot_calls(raw)
        replies: list[Any] = []

        def fetch() -> None:
            with httpx.Client(timeout=60) as http:  # a connection each: both workers answer
                replies.append(http.get(svc.url + "/api/hot?range=7d&limit=3"))

        threads = [threading.Thread(target=fetch) for _ in range(40)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert [r.status_code for r in replies] == [200] * 40
        assert len({r.content for r in replies}) == 1 and len({r.headers["etag"] for r in replies}) == 1
        assert hot_calls(raw) - before == 1  # one HOT.TOP for 40 requests on 2 workers
    finally:
        svc.stop()


def test_on_a_cluster_the_script_cache_and_limit_work(cluster: Any) -> None:
    from fastapi.testclient import TestClient

    from hotrank.service import Settings, create_app

    settings = Settings(f"redis://127.0.0.1:{cluster.port}/0", [HOT], cluster=True, views_per_minute=3, hot_cache_seconds=30)
    with TestClient(create_app(settings)) as http:
        codes = [http.post("/api/views", json={"articleId": "c", "visitorId": f"v{i}"}).status_code for i in range(5)]
        assert codes == [200, 200, 200, 429, 429]
        body = http.get("/api/hot").json()
        assert [(a["articleId"], a["pv"], a["suspicious"]) for a in body["articles"]] == [("c", 3, 2)]
        assert http.get("/api/hot").json()["computedAt"] == body["computedAt"]
