"""The seed's cached hot list: one computed reply per (board, ranking, range, limit), kept in
Redis for ``seconds`` so every process and worker of the service serves the same
bytes, and recomputed by one request per key and period.

- A process keeps the entry it last saw until the entry's own expiry, so a cached
  reply costs no Redis call at all.
- On a miss, one coroutine per process asks Redis (the others of the process wait
  for it); across processes, ``SET lock NX PX`` elects the one request that
  recomputes, and the others poll the entry until it appears (no stampede when it
  expires). A request that waited too long (the elected one died) computes the
  reply itself without storing it.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import time
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Optional

#: How long a request waits for another one's recompute before computing itself (s).
WAIT_SECONDS = 2.0
POLL_SECONDS = 0.005
#: Entries a process keeps in memory at most.
MAX_LOCAL = 1024


@dataclass(frozen=True)
class Entry:
    """One computed reply: its JSON ``body``, quoted ``etag``, and unix seconds
    ``computed_at`` and ``expires_at`` (equal for an uncached reply)."""

    body: bytes
    etag: str
    computed_at: float
    expires_at: float

    def max_age(self, now: float) -> int:
        """Whole seconds this reply stays fresh (for ``Cache-Control: max-age``)."""
        return max(0, int(self.expires_at - now))


def etag_of(content: bytes) -> str:
    """A weak entity tag of ``content`` (quoted, as the header wants it): weak because
    the reply's ``computedAt`` may differ while the list it tags is the same."""
    return 'W/"' + hashlib.blake2b(content, digest_size=12).hexdigest() + '"'


def matches(if_none_match: Optional[str], etag: str) -> bool:
    """Whether an ``If-None-Match`` header names ``etag`` (weak comparison, or ``*``)."""
    if not if_none_match:
        return False
    tags = [t.strip().removeprefix("W/") for t in if_none_match.split(",")]
    return "*" in tags or etag.removeprefix("W/") in tags


#: Builds a reply for the unix time ``now``: its JSON body and its entity tag.
Compute = Callable[[float], Awaitable[tuple[bytes, str]]]


class HotCache:
    """Cached replies in Redis (``client`` must be an asyncio Redis or RedisCluster
    client with ``decode_responses=True``), fresh for ``seconds`` (> 0)."""

    def __init__(self, client: Any, seconds: float, key_prefix: str) -> None:
        self.client = client
        self.seconds = seconds
        self.key_prefix = key_prefix
        self.local: dict[str, Entry] = {}
        self.inflight: dict[str, asyncio.Future[Entry]] = {}
        self.recomputes = 0

    def key(self, board_key: str, window: int, limit: int, by: str = "hot") -> str:
        """The Redis key of one cached list (board key length first: no two boards
        collide; ``by`` is the ranking, ``hot`` or ``trending``)."""
        return f"{self.key_prefix}hotrank-service:hot:{len(board_key)}:{board_key}:{by}:{window}:{limit}"

    async def get(self, key: str, compute: Compute) -> Entry:
        """The fresh entry of ``key``, computing it (once) when there is none.
        ``compute(now)`` builds the JSON body for the unix time ``now``."""
        entry = self.local.get(key)
        if entry is not None and entry.expires_at > time.time():
            return entry
        running = self.inflight.get(key)
        if running is not None:
            return await asyncio.shield(running)
        future: asyncio.Future[Entry] = asyncio.get_running_loop().create_future()
        self.inflight[key] = future
        try:
            entry = await self._shared(key, compute)
            future.set_result(entry)
        except BaseException as e:
            future.set_exception(e)
            future.exception()  # retrieved: no "never retrieved" warning when nobody waited
            raise
        finally:
            del self.inflight[key]
        if len(self.local) >= MAX_LOCAL:
            self.local.clear()  # many (range, limit) pairs asked: start over, Redis still holds them
        self.local[key] = entry
        return entry

    async def _shared(self, key: str, compute: Compute) -> Entry:
        found = await self._read(key)
        if found is not None:
            return found
        lock = key + ":lock"
        me = os.urandom(8).hex()
        deadline = time.monotonic() + WAIT_SECONDS
        while True:
            if await self.client.set(lock, me, nx=True, px=int(WAIT_SECONDS * 1000)):
                try:
                    # Another request may have stored it between our read and the lock.
                    found = await self._read(key)
                    return found if found is not None else await self._store(key, compute)
                finally:
                    await self.client.delete(lock)
            await asyncio.sleep(POLL_SECONDS)
            found = await self._read(key)
            if found is not None:
                return found
            if time.monotonic() > deadline:
                now = time.time()
                body, etag = await compute(now)
                return Entry(body, etag, now, now)

    async def _read(self, key: str) -> Optional[Entry]:
        raw = await self.client.get(key)
        if raw is None:
            return None
        computed, expires, etag, body = raw.split(" ", 3)
        return Entry(body.encode(), etag, float(computed), float(expires))

    async def _store(self, key: str, compute: Compute) -> Entry:
        now = time.time()
        body, etag = await compute(now)
        self.recomputes += 1
        entry = Entry(body, etag, now, now + self.seconds)
        value = f"{entry.computed_at:.3f} {entry.expires_at:.3f} {entry.etag} {body.decode()}"
        await self.client.set(key, value, px=max(1, int(self.seconds * 1000)))
        return entry
