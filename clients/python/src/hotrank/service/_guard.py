"""The service's door: the token of privileged routes, the client address behind a
trusted proxy, the per-address limit of page views, and the body size limit.

- **Token.** ``POST /api/articles`` and ``POST /api/leaderboards/{board}/scores``
  need ``Authorization: Bearer <token>``, compared in constant time
  (:func:`hmac.compare_digest`). No header: 401; a wrong token: 403; no token
  configured: 403 saying how to turn the routes on. Nothing is written. The
  routes themselves enforce it (a FastAPI dependency, :func:`token_refusal`), so
  no path spelling, ``--root-path`` or mount prefix can skip it; :class:`Guard`
  checks it too, on the route path (the path without the root path, as the router
  sees it), only to refuse before the body is read.
- **Client address.** The peer's address, or, when the peer is in a
  ``--trusted-proxy`` network, the right-most address of ``X-Forwarded-For``
  that is not itself a trusted proxy.
- **View limit.** ``limits``' moving window over Redis, so every process and
  worker of the service shares one count per address.
- **Body limit.** A body past :data:`MAX_BODY_BYTES` is refused with 413,
  whether it announces its length or not.
"""

from __future__ import annotations

import hmac
import ipaddress
import math
import re
import time
from typing import Any, Awaitable, Callable, MutableMapping, Optional, Sequence, Union

import orjson
from limits import RateLimitItemPerMinute
from limits.aio.storage import RedisClusterStorage, RedisStorage
from limits.aio.strategies import MovingWindowRateLimiter
from starlette._utils import get_route_path

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
Network = Union[ipaddress.IPv4Network, ipaddress.IPv6Network]

#: Bodies larger than this (bytes) get 413.
MAX_BODY_BYTES = 16 * 1024
#: Routes that need the token: (method, path pattern).
PRIVILEGED = [("POST", re.compile(r"/api/articles")), ("POST", re.compile(r"/api/leaderboards/[^/]+/scores"))]
TOKEN_OFF = (
    "this route is off: the service has no token; set HOTRANK_SERVICE_TOKEN or start it "
    "with --token-file PATH, then send Authorization: Bearer <token>"
)


def parse_networks(cidrs: Sequence[str]) -> list[Network]:
    """``--trusted-proxy`` values as networks; ValueError names a bad one."""
    out = []
    for cidr in cidrs:
        try:
            out.append(ipaddress.ip_network(cidr.strip(), strict=False))
        except ValueError:
            raise ValueError(f"--trusted-proxy must be an address or a CIDR network such as 10.0.0.0/8, got {cidr!r}") from None
    return out


def _in(addr: str, networks: Sequence[Network]) -> bool:
    try:
        ip = ipaddress.ip_address(addr.strip())
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped  # ::ffff:10.0.0.2 is 10.0.0.2
    return any(ip in n for n in networks)


def hop_address(hop: str) -> str:
    """The address of one ``X-Forwarded-For`` hop, without a port: ``203.0.113.9:5123``
    gives ``203.0.113.9`` and ``[2001:db8::1]:443`` gives ``2001:db8::1``; a bare IPv4
    or IPv6 address (``2001:db8::1``) or anything else is returned stripped of spaces."""
    hop = hop.strip()
    if hop.startswith("["):
        end = hop.find("]")
        return hop[1:end] if end > 0 else hop
    host, sep, port = hop.rpartition(":")
    if sep and ":" not in host and port.isdigit():
        return host
    return hop


def client_address(scope: Scope, trusted: Sequence[Network]) -> str:
    """The client's address: the peer, or the right-most untrusted hop of
    ``X-Forwarded-For`` when the peer is a trusted proxy (a hop's port, if the
    proxy wrote one, dropped: :func:`hop_address`)."""
    client = scope.get("client")
    peer = client[0] if client else "unknown"
    if not trusted or not _in(peer, trusted):
        return str(peer)
    forwarded = [v.decode("latin-1") for k, v in scope.get("headers", ()) if k == b"x-forwarded-for"]
    hops = [hop_address(h) for h in ",".join(forwarded).split(",") if h.strip()]
    for hop in reversed(hops):
        if not _in(hop, trusted):
            return hop
    return hops[0] if hops else str(peer)


def limit_key(addr: str) -> str:
    """What the view limit counts for a client address: an IPv4 address (also when
    written IPv4-mapped, ``::ffff:a.b.c.d``), or the /64 network of an IPv6 address,
    since one IPv6 subscriber usually holds a whole /64 and could rotate through it.
    A port (``a.b.c.d:port``, ``[v6]:port``) is not part of the address."""
    try:
        ip = ipaddress.ip_address(hop_address(addr))
    except ValueError:
        return addr
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


def bearer(scope: Scope) -> Optional[bytes]:
    """The token of ``Authorization: Bearer <token>``, or None."""
    for k, v in scope.get("headers", ()):
        if k == b"authorization":
            scheme, _, token = v.partition(b" ")
            if scheme.lower() == b"bearer" and token.strip():
                return bytes(token.strip())
    return None


def token_refusal(expected: Optional[bytes], given: Optional[bytes]) -> Optional[tuple[int, str, dict[str, str]]]:
    """Why a privileged request is refused, as (status, message, headers), or None
    when ``given`` (the bearer token sent, :func:`bearer`) is ``expected`` (the
    configured token; None: the privileged routes are off)."""
    if expected is None:
        return 403, TOKEN_OFF, {}
    if given is None:
        return 401, "this route needs Authorization: Bearer <token>", {"WWW-Authenticate": "Bearer"}
    if not hmac.compare_digest(given, expected):
        return 403, "wrong token", {}
    return None


async def _json_error(send: Send, status: int, message: str, headers: Sequence[tuple[bytes, bytes]] = ()) -> None:
    body = orjson.dumps({"error": message})
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *headers],
        }
    )
    await send({"type": "http.response.body", "body": body})


class Guard:
    """Pure ASGI middleware: body limit, token of privileged routes, client address.

    Sets ``scope["state"]["client"]`` (the client address) and
    ``scope["state"]["token_ok"]`` (the request carries the right token). Refusing a
    privileged route here spares reading its body; the route's own dependency
    (:func:`token_refusal`) is what guarantees the refusal.
    """

    def __init__(self, app: ASGIApp, token: Optional[str], trusted: Sequence[Network], max_body: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.token = token.encode() if token else None
        self.trusted = list(trusted)
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = bearer(scope)
        token_ok = self.token is not None and given is not None and hmac.compare_digest(given, self.token)
        state = scope.setdefault("state", {})
        state["client"] = client_address(scope, self.trusted)
        state["token_ok"] = token_ok
        # The route path, as the router matches it (a --root-path or mount prefix stripped).
        # The routes check the token again, so a path that slips past this cannot skip it.
        method, path = scope["method"], get_route_path(scope)
        if any(method == m and p.fullmatch(path) for m, p in PRIVILEGED):
            refusal = token_refusal(self.token, given)
            if refusal is not None:
                status, message, headers = refusal
                await _json_error(send, status, message, [(k.lower().encode(), v.encode()) for k, v in headers.items()])
                return
        for k, v in scope.get("headers", ()):
            if k == b"content-length" and v.isdigit() and int(v) > self.max_body:
                await _json_error(send, 413, f"body is larger than {self.max_body} bytes")
                return
        if method in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        # Read the body (at most max_body bytes, chunked or not) before the app sees it.
        chunks, size, more = [], 0, True
        while more:
            msg = await receive()
            if msg["type"] != "http.request":
                return  # the client went away
            chunk = msg.get("body", b"")
            size += len(chunk)
            if size > self.max_body:
                await _json_error(send, 413, f"body is larger than {self.max_body} bytes")
                return
            chunks.append(chunk)
            more = msg.get("more_body", False)
        body = b"".join(chunks)
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


def cluster_storage_args(redis_url: str) -> tuple[str, dict[str, Any]]:
    """``limits``' cluster storage URI (the startup node) and the options it hands to
    :class:`redis.asyncio.cluster.RedisCluster`, from the service's ``redis_url``:
    everything ``RedisCluster.from_url`` would take from it (username, password,
    ``rediss`` as ``ssl=True``, the ``ssl_*`` and other query options), so the
    limiter connects as the service's own client does."""
    import redis.asyncio.connection

    options: dict[str, Any] = dict(redis.asyncio.connection.parse_url(redis_url))
    if options.pop("connection_class", None) is redis.asyncio.connection.SSLConnection:
        options["ssl"] = True
    host, port = options.pop("host", "127.0.0.1"), options.pop("port", 6379)
    return f"async+redis+cluster://{host}:{port}", options


class ViewLimit:
    """At most ``per_minute`` views per client address in any 60 s (moving window),
    counted in Redis (``limits``), so every service process shares the count."""

    def __init__(self, redis_url: str, cluster: bool, per_minute: int, key_prefix: str) -> None:
        import redis.asyncio

        self.item = RateLimitItemPerMinute(per_minute)
        self.per_minute = per_minute
        storage: Union[RedisStorage, RedisClusterStorage]
        if cluster:
            uri, options = cluster_storage_args(redis_url)
            storage = RedisClusterStorage(uri, implementation="redispy", key_prefix=key_prefix, **options)
        else:
            # limits' typing lists only scalar options; a pool is one it documents.
            pool: dict[str, Any] = {"connection_pool": redis.asyncio.ConnectionPool.from_url(redis_url)}
            storage = RedisStorage("async+redis://", implementation="redispy", key_prefix=key_prefix, **pool)
        self.storage = storage
        self.limiter = MovingWindowRateLimiter(storage)

    async def hit(self, client: str) -> Optional[int]:
        """Counts one view of ``client`` (counted by :func:`limit_key`): None when
        allowed, else the seconds until the next view would be (for ``Retry-After``,
        at least 1)."""
        key = limit_key(client)
        if await self.limiter.hit(self.item, "views", key):
            return None
        stats = await self.limiter.get_window_stats(self.item, "views", key)
        return max(1, math.ceil(stats.reset_time - time.time()))
