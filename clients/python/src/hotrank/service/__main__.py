"""``python -m hotrank.service``: runs the service with uvicorn.

Settings come from the arguments, else the environment: ``HOTRANK_REDIS_URL``,
``HOTRANK_HOT_BOARDS`` and ``HOTRANK_LEADERBOARDS`` (comma-separated),
``HOTRANK_PREFIX``, ``HOTRANK_SERVICE_TOKEN`` (the token of the privileged routes,
unless ``--token-file`` gives one). The first line printed is
``listening on http://HOST:PORT`` (with the real port when ``--port 0`` picks a free
one). A bad option exits 2 (argparse's usage line); a port in use or a Redis that
does not answer PING exits 1 with one line (``--debug``: with the traceback).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import errno
import os
import socket
import sys
import traceback
from typing import Any, Callable, NoReturn, Optional, Sequence, TypeVar, Union

import redis
import redis.cluster
import redis.exceptions
import uvicorn

from uvicorn.supervisors import Multiprocess

from . import SETTINGS_ENV, Settings, create_app
from ._guard import parse_networks


def _list(raw: str) -> list[str]:
    return [x.strip() for x in raw.split(",") if x.strip()]


N = TypeVar("N", int, float)


def _ranged(convert: Callable[[str], N], lo: N, hi: N, what: str) -> Callable[[str], N]:
    """An argparse type: ``convert(raw)`` within ``[lo, hi]`` (nan is refused)."""

    def parse(raw: str) -> N:
        try:
            x = convert(raw)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {what}, got {raw!r}") from None
        if not lo <= x <= hi:
            raise argparse.ArgumentTypeError(f"must be from {lo} to {hi}, got {raw!r}")
        return x

    return parse


def main(argv: Optional[Sequence[str]] = None) -> None:
    """Parses the arguments and serves until interrupted."""
    p = argparse.ArgumentParser(prog="python -m hotrank.service", description="The hotrank HTTP service.")
    p.add_argument("--redis-url", default=os.environ.get("HOTRANK_REDIS_URL", "redis://127.0.0.1:6379/0"))
    p.add_argument("--cluster", action="store_true", help="the URL is a Redis Cluster node")
    p.add_argument(
        "--hot-board", action="append", dest="hot_boards",
        help="an allowed HOT board (repeatable; the first is the default); $HOTRANK_HOT_BOARDS or hot:{news}",
    )  # fmt: skip
    p.add_argument(
        "--leaderboard", action="append", dest="leaderboards",
        help="an allowed leaderboard (repeatable); $HOTRANK_LEADERBOARDS or lb:{game1}",
    )  # fmt: skip
    p.add_argument("--prefix", default=os.environ.get("HOTRANK_PREFIX", ""), help="key prefix of every board")
    p.add_argument(
        "--token-file", metavar="PATH",
        help="file holding the bearer token of the privileged routes (default $HOTRANK_SERVICE_TOKEN; none: those routes are off)",
    )  # fmt: skip
    p.add_argument(
        "--views-per-minute", type=_ranged(int, 0, 10**9, "a whole number"), metavar="N", default=60,
        help="page views allowed per client address in any 60 s (default 60; 0: no limit)",
    )  # fmt: skip
    p.add_argument(
        "--trusted-proxy", action="append", metavar="CIDR", default=[],
        help="a proxy network whose X-Forwarded-For gives the client address (repeatable)",
    )  # fmt: skip
    p.add_argument("--cors-origin", action="append", metavar="ORIGIN", default=[], help="an origin allowed by CORS (repeatable; none by default)")
    p.add_argument(
        "--hot-cache-seconds", type=_ranged(float, 0.0, 3600.0, "a number of seconds"), default=5.0, metavar="S",
        help="serve a computed GET /api/hot for S seconds, shared by every worker through Redis (default 5; 0: exact on every request; at most 3600)",
    )  # fmt: skip
    p.add_argument("--workers", type=_ranged(int, 1, 64, "a whole number"), default=1, metavar="N", help="worker processes (default 1, at most 64)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8080, help="0 picks a free port")
    p.add_argument("--log-level", default="info")
    p.add_argument("--access-log", action="store_true", help="log every request (uvicorn's access log; off by default: it costs CPU per request)")
    p.add_argument("--debug", action="store_true", help="show the traceback of a failure at start")
    args = p.parse_args(argv)
    try:
        parse_networks(args.trusted_proxy)
    except ValueError as e:
        p.error(str(e))
    token = os.environ.get("HOTRANK_SERVICE_TOKEN") or None
    if args.token_file:
        try:
            with open(args.token_file, encoding="utf-8") as f:
                token = f.read().strip()
        except OSError as e:
            p.error(f"--token-file: cannot read {args.token_file}: {e.strerror}")
        if not token:
            p.error(f"--token-file: {args.token_file} is empty")
    settings = Settings(
        redis_url=args.redis_url,
        hot_boards=args.hot_boards or _list(os.environ.get("HOTRANK_HOT_BOARDS", "hot:{news}")),
        leaderboards=args.leaderboards or _list(os.environ.get("HOTRANK_LEADERBOARDS", "lb:{game1}")),
        prefix=args.prefix,
        cluster=args.cluster,
        token=token,
        views_per_minute=args.views_per_minute,
        trusted_proxies=args.trusted_proxy,
        cors_origins=args.cors_origin,
        hot_cache_seconds=args.hot_cache_seconds,
    )
    def fail(message: str) -> NoReturn:
        """An expected failure: one line on stderr, exit 1 (the traceback too with --debug)."""
        if args.debug:
            traceback.print_exc()
        print(f"{p.prog}: error: {message}", file=sys.stderr, flush=True)
        sys.exit(1)

    try:
        check_redis(settings)
    except ValueError as e:
        p.error(f"--redis-url: {e}")
    except redis.exceptions.RedisError as e:
        fail(f"cannot reach Redis at {settings.redis_url}: {e}")
    try:
        sock = listen(args.host, args.port)
    except OSError as e:
        if e.errno == errno.EADDRINUSE:
            fail(f"port {args.port} on {args.host} is already in use (another service? pick another with --port)")
        fail(f"cannot listen on {args.host}:{args.port}: {e.strerror or e}")
    host, port = sock.getsockname()[:2]
    print(f"listening on http://{host}:{port}", flush=True)
    serve(settings, sock, args.workers, args.log_level, args.access_log)
    sys.exit(0)


#: uvicorn settings of every process the launcher starts (and of make bench's hello
#: world, so both sides of that comparison run alike):
#:
#: - ``loop`` and ``http`` "auto": uvloop and httptools when installed (the
#:   ``[service]`` extra installs both; about 40 % less CPU per request than asyncio's
#:   loop and h11, BENCHMARKS.md), else asyncio's loop and h11.
#: - ``proxy_headers`` off: uvicorn would otherwise believe ``X-Forwarded-For`` from
#:   127.0.0.1 and rewrite the peer before the service sees it; the client address is
#:   the service's own business (``--trusted-proxy``, :mod:`hotrank.service._guard`).
#: - no ``Server`` header; no access log unless ``--access-log``.
UVICORN_SETTINGS: dict[str, Any] = {"loop": "auto", "http": "auto", "proxy_headers": False, "server_header": False}


def serve_app(app: Any, sock: socket.socket, log_level: str = "warning", access_log: bool = False) -> None:
    """Serves ``app`` on ``sock`` in this process until it is stopped (uvicorn's
    ``Server.run``, which makes the event loop ``UVICORN_SETTINGS`` names)."""
    config = uvicorn.Config(app, log_level=log_level, access_log=access_log, **UVICORN_SETTINGS)
    uvicorn.Server(config).run(sockets=[sock])


def serve(settings: Settings, sock: socket.socket, workers: int, log_level: str, access_log: bool = False) -> None:
    """Serves on ``sock`` until interrupted: in this process, or in ``workers``
    processes sharing the socket (each builds the app from ``$HOTRANK_SERVICE_SETTINGS``)."""
    try:
        if workers == 1:
            serve_app(create_app(settings), sock, log_level, access_log)
        else:
            os.environ[SETTINGS_ENV] = json.dumps(dataclasses.asdict(settings))
            config = uvicorn.Config(
                "hotrank.service:app_from_env", factory=True, workers=workers, log_level=log_level,
                access_log=access_log, **UVICORN_SETTINGS,
            )  # fmt: skip
            Multiprocess(config, sockets=[sock]).run()
    except KeyboardInterrupt:
        pass


def check_redis(settings: Settings) -> None:
    """PING the Redis (or cluster) the service will use; RedisError if it cannot."""
    client: Union[redis.Redis, redis.cluster.RedisCluster]
    if settings.cluster:
        client = redis.cluster.RedisCluster.from_url(settings.redis_url, socket_connect_timeout=5, socket_timeout=5)
    else:
        client = redis.Redis.from_url(settings.redis_url, socket_connect_timeout=5, socket_timeout=5)
    try:
        client.ping()
    finally:
        client.close()


def listen(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (port 0: a free one); OSError if it cannot.

    Its proto is IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on accepted
    sockets whose proto says TCP, and without it Nagle's algorithm meets the
    client's delayed ACK and every response waits 40 ms.
    """
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(1024)  # connections queue from now on, before uvicorn accepts them
    except OSError:
        sock.close()
        raise
    return sock


if __name__ == "__main__":
    main()
