#!/usr/bin/env python3
"""A small HTTP service over the hotrank module, with the standard library and redis-py.

Endpoints (every reply is JSON; every error is ``{"error": "..."}``):

- ``GET  /hot?range=72h&limit=20[&at=t]``: the hot articles published within
  ``range`` (seconds, or a number with a unit ``s``, ``m``, ``h`` or ``d``),
  from HOT.TOP with their PV, UV and publish time from HOT.STATS
  (one pipelined round trip for all of them). ``at`` (unix seconds) sets the
  query time; the server clock by default.
- ``POST /view`` ``{"article": ..., "visitor": ..., "at": optional}``: one page
  view (HOT.VIEW); replies ``{pv, uv, score, status}``.
- ``POST /publish`` ``{"article": ..., "published_at": ...}``: HOT.PUBLISH;
  replies ``{"new": true}`` when the publish time was not set before.
- ``GET  /leaderboard/{board}?around=member&n=5``: RANK.AROUND.
- ``GET  /leaderboard/{board}?start=0&stop=99``: RANK.RANGE (indexes as in ZRANGE).
  Both reply with a list of ``{rank, member, score}``; ranks are 0-based.

Bad input is a 400, an unknown path, member or board a 404, and an error
reply from the module (``ERR …``, ``WRONGTYPE …``) a 400 with its message.

Run: ``python3 hot_service.py --redis-url redis://127.0.0.1:6379/0 --port 8080``.
``--port 0`` picks a free port. The first line printed on stdout is
``listening on http://HOST:PORT``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable
from urllib.parse import parse_qs, unquote, urlsplit

try:
    import redis
except ImportError:  # pragma: no cover - depends on the machine
    sys.exit(
        "error: redis-py is not installed; run `make deps` "
        "(or: python3 -m pip install -r examples/python/requirements.txt)"
    )

# A range: whole seconds, optionally with one unit suffix.
RANGE_RE = re.compile(r"^([0-9]{1,12})([smhd]?)$")
UNIT_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}
MAX_RANGE_SECONDS = 100 * 365 * 86400  # HOT.TOP's own limit for WINDOW
MAX_TOP_LIMIT = 10_000  # HOT.TOP's limit for LIMIT
MAX_AROUND = 1_000  # RANK.AROUND's limit for n
MAX_BODY_BYTES = 64 * 1024


class HttpError(Exception):
    """An error that becomes a JSON reply ``{"error": message}`` with ``status``."""

    def __init__(self, status: HTTPStatus, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def parse_range(raw: str) -> int:
    """Parses ``72h``, ``30m``, ``7d``, ``90s`` or ``3600`` into seconds (> 0)."""
    m = RANGE_RE.match(raw)
    if not m:
        raise HttpError(
            HTTPStatus.BAD_REQUEST,
            f"range must be seconds or a number with a unit s, m, h or d (e.g. 72h), got {raw!r}",
        )
    seconds = int(m.group(1)) * UNIT_SECONDS[m.group(2)]
    if not 0 < seconds <= MAX_RANGE_SECONDS:
        raise HttpError(
            HTTPStatus.BAD_REQUEST, f"range must be between 1s and 100 years, got {raw!r}"
        )
    return seconds


def parse_int(name: str, raw: str, lo: int, hi: int | None = None) -> int:
    """Parses an integer query parameter and checks it lies in ``[lo, hi]``."""
    if not re.fullmatch(r"-?[0-9]{1,18}", raw):
        raise HttpError(HTTPStatus.BAD_REQUEST, f"{name} must be an integer, got {raw!r}")
    value = int(raw)
    if value < lo or (hi is not None and value > hi):
        bound = f"between {lo} and {hi}" if hi is not None else f"at least {lo}"
        raise HttpError(HTTPStatus.BAD_REQUEST, f"{name} must be {bound}, got {value}")
    return value


def number(text: str | bytes) -> int | float:
    """A number from a reply string: an int when it is whole (``"1700000000"``), else a float."""
    value = float(text)
    return int(value) if value.is_integer() and abs(value) < 2**53 else value


def results(pipe: redis.client.Pipeline) -> list[Any]:
    """Executes a pipeline; raises the first error reply as the server wrote it.

    (``execute()`` would raise it prefixed with "Command # n (…) of pipeline caused error".)
    """
    replies = pipe.execute(raise_on_error=False)
    for reply in replies:
        if isinstance(reply, Exception):
            raise reply
    return replies


def pairs(reply: list[Any]) -> dict[str, Any]:
    """A flat ``[field, value, field, value, …]`` reply (RESP2) as a dict."""
    return dict(zip(reply[0::2], reply[1::2]))


class HotRank:
    """The hotrank calls the endpoints make, on one redis-py client."""

    def __init__(self, client: redis.Redis, board: str) -> None:
        self.r = client
        self.board = board

    def hot(self, window_s: int, limit: int, at: str | None) -> list[dict[str, Any]]:
        """HOT.TOP with WINDOW/LIMIT/WITHSCORES, then HOT.STATS of each article in one pipeline."""
        when = ["AT", at] if at is not None else []
        top = self.r.execute_command(
            "HOT.TOP", self.board, "LIMIT", limit, "WINDOW", window_s, "WITHSCORES", *when
        )
        ranked = list(zip(top[0::2], top[1::2]))
        pipe = self.r.pipeline(transaction=False)
        for article, _ in ranked:
            pipe.execute_command("HOT.STATS", self.board, article, *when)
        out = []
        for (article, score), stats in zip(ranked, results(pipe)):
            # An article trimmed between the two calls has no stats (nil).
            s = stats if isinstance(stats, dict) else pairs(stats or [])
            out.append(
                {
                    "article": article,
                    "score": float(score),
                    "pv": s.get("pv"),
                    "uv": s.get("uv"),
                    "published_at": number(s["published_at"]) if "published_at" in s else None,
                }
            )
        return out

    def view(self, article: str, visitor: str, at: str | None) -> dict[str, Any]:
        """HOT.VIEW: one page view; its reply ``[pv, uv, score, status]`` as a dict."""
        when = ["AT", at] if at is not None else []
        pv, uv, score, status = self.r.execute_command(
            "HOT.VIEW", self.board, article, visitor, *when
        )
        return {"pv": pv, "uv": uv, "score": float(score), "status": status}

    def publish(self, article: str, published_at: str) -> dict[str, Any]:
        """HOT.PUBLISH: sets the article's publish time."""
        created = self.r.execute_command("HOT.PUBLISH", self.board, article, published_at)
        return {"new": created == 1}

    def around(self, board: str, member: str, n: int) -> list[dict[str, Any]]:
        """RANK.AROUND: the member and up to ``n`` neighbours on each side."""
        rows = self.r.execute_command("RANK.AROUND", board, member, n)
        if not rows:
            raise HttpError(
                HTTPStatus.NOT_FOUND, f"member {member!r} is not on leaderboard {board!r}"
            )
        return [{"rank": rank, "member": m, "score": score} for rank, m, score in rows]

    def range(self, board: str, start: int, stop: int) -> list[dict[str, Any]]:
        """RANK.RANGE with WITHSCORES, by index as in ZRANGE.

        RANK.CARD, in the same transaction, turns negative indexes into ranks.
        """
        pipe = self.r.pipeline(transaction=True)
        pipe.execute_command("RANK.CARD", board)
        pipe.execute_command("RANK.RANGE", board, start, stop, "WITHSCORES")
        card, flat = results(pipe)
        if card == 0:
            raise HttpError(
                HTTPStatus.NOT_FOUND, f"leaderboard {board!r} is empty or does not exist"
            )
        first = start if start >= 0 else max(card + start, 0)
        return [
            {"rank": first + i, "member": m, "score": score}
            for i, (m, score) in enumerate(zip(flat[0::2], flat[1::2]))
        ]


class Handler(BaseHTTPRequestHandler):
    """Routes requests to :class:`HotRank` and writes JSON replies."""

    api: HotRank  # set on the class by main()
    quiet = False

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        """GET /hot and GET /leaderboard/{board}."""
        self.dispatch(self.get)

    def do_POST(self) -> None:  # noqa: N802
        """POST /view and POST /publish."""
        self.dispatch(self.post)

    def get(self, path: str, query: dict[str, str]) -> Any:
        """The GET routes."""
        if path == "/hot":
            window = parse_range(query.get("range", "72h"))
            limit = parse_int("limit", query.get("limit", "20"), 1, MAX_TOP_LIMIT)
            return self.api.hot(window, limit, query.get("at"))
        if path.startswith("/leaderboard/") and len(path) > len("/leaderboard/"):
            board = unquote(path[len("/leaderboard/"):])
            if "around" in query and "start" not in query and "stop" not in query:
                n = parse_int("n", query.get("n", "5"), 0, MAX_AROUND)
                return self.api.around(board, query["around"], n)
            if "start" in query and "stop" in query and "around" not in query:
                start = parse_int("start", query["start"], -(2**62), 2**62)
                stop = parse_int("stop", query["stop"], -(2**62), 2**62)
                return self.api.range(board, start, stop)
            raise HttpError(
                HTTPStatus.BAD_REQUEST, "give either around=member[&n=5] or start=..&stop=.."
            )
        raise HttpError(HTTPStatus.NOT_FOUND, f"no route GET {path}")

    def post(self, path: str, query: dict[str, str]) -> Any:
        """The POST routes."""
        if path == "/view":
            body = self.json_body()
            at = optional_time(body, "at")
            return self.api.view(text_field(body, "article"), text_field(body, "visitor"), at)
        if path == "/publish":
            body = self.json_body()
            published_at = optional_time(body, "published_at")
            if published_at is None:
                raise HttpError(HTTPStatus.BAD_REQUEST, "published_at is required (unix seconds)")
            return self.api.publish(text_field(body, "article"), published_at)
        raise HttpError(HTTPStatus.NOT_FOUND, f"no route POST {path}")

    def dispatch(self, route: Callable[[str, dict[str, str]], Any]) -> None:
        """Runs a route and turns its result or error into a JSON reply."""
        url = urlsplit(self.path)
        try:
            query = {k: v[-1] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
            self.reply(HTTPStatus.OK, route(url.path, query))
        except HttpError as e:
            self.reply(e.status, {"error": e.message})
        except redis.exceptions.ResponseError as e:
            # An error reply from the module: bad argument, wrong key type, …
            self.reply(HTTPStatus.BAD_REQUEST, {"error": str(e)})
        except redis.exceptions.ConnectionError as e:
            self.reply(HTTPStatus.SERVICE_UNAVAILABLE, {"error": f"redis unavailable: {e}"})
        except Exception as e:  # noqa: BLE001 - the service must answer, whatever failed
            self.reply(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": f"{type(e).__name__}: {e}"})

    def json_body(self) -> dict[str, Any]:
        """The request body, which must be a JSON object."""
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            raise HttpError(HTTPStatus.BAD_REQUEST, "bad Content-Length") from None
        if length < 0:
            raise HttpError(HTTPStatus.BAD_REQUEST, "bad Content-Length")
        if length > MAX_BODY_BYTES:
            raise HttpError(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "body too large")
        try:
            body = json.loads(self.rfile.read(length) or b"null")
        except ValueError:
            raise HttpError(HTTPStatus.BAD_REQUEST, "body must be JSON") from None
        if not isinstance(body, dict):
            raise HttpError(HTTPStatus.BAD_REQUEST, "body must be a JSON object")
        return body

    def reply(self, status: HTTPStatus, payload: Any) -> None:
        """Writes ``payload`` as a JSON reply."""
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (base class name)
        """Logs each request to stderr unless ``--quiet``."""
        if not self.quiet:
            super().log_message(format, *args)


def text_field(body: dict[str, Any], name: str) -> str:
    """A required, non-empty string field of a JSON body."""
    value = body.get(name)
    if not isinstance(value, str) or not value:
        raise HttpError(HTTPStatus.BAD_REQUEST, f"{name} must be a non-empty string")
    return value


def optional_time(body: dict[str, Any], name: str) -> str | None:
    """An optional time field (unix seconds, number or string); the module checks its range."""
    value = body.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise HttpError(HTTPStatus.BAD_REQUEST, f"{name} must be unix seconds")
    return str(value)


def main(argv: list[str] | None = None) -> None:
    """Parses the arguments and serves until interrupted."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--redis-url",
        default=os.environ.get("HOTRANK_REDIS_URL", "redis://127.0.0.1:6379/0"),
        help="redis-py URL (default $HOTRANK_REDIS_URL or redis://127.0.0.1:6379/0)",
    )
    p.add_argument(
        "--board",
        default=os.environ.get("HOTRANK_BOARD", "hot:{news}"),
        help="HOT board key of /hot, /view and /publish (default $HOTRANK_BOARD or hot:{news})",
    )
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8080, help="0 picks a free port")
    p.add_argument("--quiet", action="store_true", help="do not log each request")
    args = p.parse_args(argv)

    client = redis.Redis.from_url(args.redis_url, decode_responses=True)
    Handler.api = HotRank(client, args.board)
    Handler.quiet = args.quiet
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    host, port = server.server_address[:2]
    print(f"listening on http://{host}:{port}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
