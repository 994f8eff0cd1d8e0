"""The seed's HTTP API on hotrank: an async FastAPI service over ``hotrank.asyncio``
(docs/service.md has the whole story).

Routes (every reply is JSON; every error is ``{"error": sentence}`` with status 400
for bad input or an error reply from the module, 401/403 for a privileged route
without the right token, 404 for an unknown route, board or member, 405 for a wrong
method, 413 for a body past 16 KB, 429 for a view over the per-address limit, 503
when Redis is unreachable):

- ``POST /api/views`` ``{"articleId", "visitorId"}`` (optional ``"at"``, unix seconds):
  one page view; public, limited per client address (``views_per_minute``) unless
  the request carries the token. The visitor may instead come from the
  ``X-Visitor-Id`` header or the ``visitor_id`` cookie (the body wins, then the
  header, then the cookie). A view over the limit is counted apart in the board's
  ``<board key>:rate-limited`` hash (see :func:`rate_limited_key`): per article for
  an article on the board, else in the one field ``""``.
- ``POST /api/articles`` ``{"articleId", "publishedAt"}``: sets the publish time
  (needs ``Authorization: Bearer <token>``).
- ``GET /api/hot?range=72h&limit=20`` (optional ``board``, ``at``, ``by``): the hot
  articles published within ``range``, best first, with score, PV, UV, suspicious,
  rateLimited and publish time; cached for ``hot_cache_seconds`` (``computedAt``,
  ``Cache-Control``, ``ETag``, 304). ``by=trending`` lists by trending score instead
  (a board with a trending half-life; 400 with the module's message on one without).
- ``POST /api/leaderboards/{board}/scores`` ``{"memberId", "score", "mode"}``: submit a
  score (needs the token); ``mode`` is ``"best"`` (keep the best, the default),
  ``"incr"`` or ``"set"``.
- ``GET /api/leaderboards/{board}/top?limit=10&offset=0``: the top of a leaderboard.
- ``GET /api/leaderboards/{board}/members/{member}?n=5``: a member's rank and neighbours.
- ``GET /api/config``: the boards served, which of them keep trending, and the cache
  period. ``GET /``: the live page.

Boards come from an allowlist (``hot_boards`` and ``leaderboards``); any other board
name is a 404. The ``board`` of ``/api/hot`` and ``/api/views`` defaults to the first
HOT board. Run it with ``python -m hotrank.service`` (see ``--help``).
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from contextlib import asynccontextmanager
from dataclasses import dataclass
from importlib import resources
from typing import Any, AsyncIterator, Literal, Optional, Sequence, Union

import orjson
import redis.asyncio
import redis.asyncio.cluster
import redis.exceptions
from fastapi import Depends, FastAPI, Header, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import HTMLResponse, JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException

from .. import asyncio as hotrank
from .._duration import parse_duration
from .._types import Entry as RankEntry
from .._types import ServerError, server_error
from ._cache import Entry, HotCache, matches
from ._errors import readable
from ._guard import Guard, ViewLimit, bearer, parse_networks, token_refusal
from ._hot import RATE_LIMITED_OFF_BOARD, RATE_LIMITED_TTL_SECONDS, hot_list, rate_limited_key

MAX_RANGE_SECONDS = 100 * 365 * 86400
#: The rankings ``GET /api/hot?by=`` takes (HOT.TOP's BY).
RANKINGS = ("hot", "trending")
Time = Union[int, float]


@dataclass(frozen=True)
class Settings:
    """What the service serves and who may write.

    - ``redis_url``, ``cluster``: the Redis (or a Redis Cluster node) holding the boards.
    - ``hot_boards``, ``leaderboards``: the allowed boards (the first HOT board is the default).
    - ``prefix``: key prefix of every board.
    - ``token``: the bearer token of the privileged routes (``POST /api/articles``, the
      score route); None turns them off (403).
    - ``views_per_minute``: page views allowed per client address in any 60 s
      (0: no limit); a token holder is not limited.
    - ``trusted_proxies``: networks (CIDR) whose ``X-Forwarded-For`` is believed.
    - ``cors_origins``: origins allowed by CORS (none by default).
    - ``hot_cache_seconds``: how long a computed ``GET /api/hot`` reply is served
      (0 to 3600; 0: computed for every request). Shared by every process through Redis.
    """

    redis_url: str
    hot_boards: Sequence[str]
    leaderboards: Sequence[str] = ()
    prefix: str = ""
    cluster: bool = False
    token: Optional[str] = None
    views_per_minute: int = 60
    trusted_proxies: Sequence[str] = ()
    cors_origins: Sequence[str] = ()
    hot_cache_seconds: float = 5.0


class ViewIn(BaseModel):
    """The body of ``POST /api/views``."""

    model_config = ConfigDict(extra="forbid")
    articleId: str = Field(min_length=1)
    visitorId: Optional[str] = Field(default=None, min_length=1)
    at: Optional[Time] = None


class ArticleIn(BaseModel):
    """The body of ``POST /api/articles``."""

    model_config = ConfigDict(extra="forbid")
    articleId: str = Field(min_length=1)
    publishedAt: Time


class ScoreIn(BaseModel):
    """The body of ``POST /api/leaderboards/{board}/scores``."""

    model_config = ConfigDict(extra="forbid")
    memberId: str = Field(min_length=1)
    score: int
    mode: Literal["best", "incr", "set"] = "best"


def parse_range(raw: str) -> int:
    """``72h`` … as seconds (1 s to 100 years, :func:`hotrank._duration.parse_duration`);
    HTTPException 400 otherwise."""
    try:
        seconds = parse_duration(raw, "range")
    except ValueError as e:
        raise HTTPException(400, str(e)) from None
    if not 0 < seconds <= MAX_RANGE_SECONDS:
        raise HTTPException(400, f"range must be between 1s and 100 years, got {raw!r}")
    return seconds


#: The optional inputs of ``POST /api/views`` besides its body, as OpenAPI parameters.
VIEW_PARAMETERS: list[dict[str, Any]] = [
    {"name": "board", "in": "query", "required": False, "schema": {"type": "string"},
     "description": "the HOT board (default: the first one served)"},
    {"name": "X-Visitor-Id", "in": "header", "required": False, "schema": {"type": "string"},
     "description": "the visitor, when the body has no visitorId"},
    {"name": "visitor_id", "in": "cookie", "required": False, "schema": {"type": "string"},
     "description": "the visitor, when neither the body nor X-Visitor-Id names one"},
]  # fmt: skip


class OrjsonResponse(JSONResponse):
    """JSON rendered by orjson (FastAPI's own ORJSONResponse is deprecated)."""

    def render(self, content: Any) -> bytes:
        return orjson.dumps(content)


def create_app(settings: Settings) -> FastAPI:
    """The service for ``settings``; it connects to Redis when it starts (lifespan).

    Raises ValueError for settings that cannot work (no HOT board, a bad proxy network).
    """
    if not settings.hot_boards:
        raise ValueError("give at least one HOT board")
    if settings.views_per_minute < 0:
        raise ValueError("views_per_minute must be 0 (no limit) or more")
    if not 0 <= settings.hot_cache_seconds <= 3600:
        raise ValueError("hot_cache_seconds must be from 0 to 3600")
    trusted = parse_networks(settings.trusted_proxies)
    state: dict[str, Any] = {}

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        client: Union[redis.asyncio.Redis, redis.asyncio.cluster.RedisCluster]
        if settings.cluster:
            client = redis.asyncio.cluster.RedisCluster.from_url(settings.redis_url, decode_responses=True)
        else:
            client = redis.asyncio.Redis.from_url(settings.redis_url, decode_responses=True)
        state["redis"] = client
        state["boards"] = hotrank.Client(client, prefix=settings.prefix)
        limit = None
        if settings.views_per_minute:
            limit = ViewLimit(settings.redis_url, settings.cluster, settings.views_per_minute, f"{settings.prefix}hotrank-service")
        state["limit"] = limit
        cache = HotCache(client, settings.hot_cache_seconds, settings.prefix) if settings.hot_cache_seconds else None
        state["cache"] = cache
        try:
            yield
        finally:
            await client.aclose()

    app = FastAPI(title="hotrank service", lifespan=lifespan, default_response_class=OrjsonResponse)
    app.add_middleware(Guard, token=settings.token, trusted=trusted)
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware, allow_origins=list(settings.cors_origins), allow_methods=["GET", "POST"],
            allow_headers=["Authorization", "Content-Type", "X-Visitor-Id"],
        )  # fmt: skip

    expected_token = settings.token.encode() if settings.token else None

    async def need_token(request: Request) -> None:
        """The privileged routes' own token check: 401/403 whatever path reached them."""
        refusal = token_refusal(expected_token, bearer(request.scope))
        if refusal is not None:
            status, message, headers = refusal
            raise HTTPException(status, message, headers=headers or None)

    privileged = [Depends(need_token)]

    def boards() -> hotrank.Client:
        return state["boards"]  # type: ignore[no-any-return]

    def hot_board(name: Optional[str]) -> hotrank.HotBoard:
        board = settings.hot_boards[0] if name is None else name
        if board not in settings.hot_boards:
            raise HTTPException(404, f"unknown board {board!r}")
        return boards().hot(board)

    def leaderboard(name: str) -> hotrank.Leaderboard:
        if name not in settings.leaderboards:
            raise HTTPException(404, f"unknown leaderboard {name!r}")
        return boards().leaderboard(name)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
        detail = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
        if exc.status_code == 404 and detail == "Not Found":
            detail = f"no route {request.method} {request.url.path}"
        if exc.status_code == 405:
            detail = f"method {request.method} not allowed on {request.url.path}"
        return JSONResponse({"error": detail}, status_code=exc.status_code, headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse({"error": readable(exc.errors())}, status_code=400)

    @app.exception_handler(redis.exceptions.ResponseError)
    async def reply_error(request: Request, exc: redis.exceptions.ResponseError) -> JSONResponse:
        message = exc.message if isinstance(exc, ServerError) else server_error(exc).message
        return JSONResponse({"error": message}, status_code=400)

    @app.exception_handler(redis.exceptions.ConnectionError)
    async def unavailable(request: Request, exc: redis.exceptions.ConnectionError) -> JSONResponse:
        return JSONResponse({"error": f"redis unavailable: {exc}"}, status_code=503)

    @app.exception_handler(ValueError)
    async def value_error(request: Request, exc: ValueError) -> JSONResponse:
        return JSONResponse({"error": str(exc)}, status_code=400)

    @app.get("/", response_class=HTMLResponse)
    async def page() -> HTMLResponse:
        """The live page: top 20 hot and top 20 trending articles and a leaderboard's top 10, refreshing."""
        html = resources.files("hotrank.service").joinpath("page.html").read_text(encoding="utf-8")
        return HTMLResponse(html)

    async def trending_boards() -> list[str]:
        """The served HOT boards that keep a trending ranking, asked now (HOT.ALTER adds
        or removes trending at any time): a board that exists and answers
        ``HOT.TOP key BY trending LIMIT 1`` with a list, not the "no trending ranking"
        error. Two cheap commands in one pipeline per board (HOT.INFO costs far more);
        a board that cannot be read (Redis down) is left out: the config never fails."""

        async def has_trending(name: str) -> bool:
            key = boards().hot(name).key
            try:
                async with state["redis"].pipeline(transaction=False) as pipe:
                    pipe.exists(key)
                    pipe.execute_command("HOT.TOP", key, "BY", "trending", "LIMIT", 1)
                    exists, top = await pipe.execute(raise_on_error=False)
            except (redis.exceptions.RedisError, OSError):
                return False
            return bool(exists) and not isinstance(exists, Exception) and not isinstance(top, Exception)

        found = await asyncio.gather(*(has_trending(b) for b in settings.hot_boards))
        return [b for b, on in zip(settings.hot_boards, found) if on]

    @app.get("/api/config")
    async def config() -> Response:
        """The boards this service serves (the first of each is the default), the HOT
        boards that keep a trending ranking (``trendingBoards``) and the hot list's cache
        period (seconds)."""
        body = {
            "hotBoards": list(settings.hot_boards),
            "trendingBoards": await trending_boards(),
            "leaderboards": list(settings.leaderboards),
            "hotCacheSeconds": settings.hot_cache_seconds,
        }
        return Response(orjson.dumps(body), media_type="application/json")

    @app.post("/api/views", openapi_extra={"parameters": VIEW_PARAMETERS})
    async def post_view(request: Request, body: ViewIn) -> Response:
        """One page view of ``articleId`` by the visitor (body, header or cookie).

        ``board`` (query), ``X-Visitor-Id`` (header) and ``visitor_id`` (cookie) are
        read from the request itself, not as FastAPI parameters: resolving them cost
        about a sixth of the route's CPU time (BENCHMARKS.md); VIEW_PARAMETERS
        describes them in the OpenAPI schema."""
        visitor = body.visitorId or request.headers.get("x-visitor-id") or request.cookies.get("visitor_id")
        if not visitor:
            raise HTTPException(400, "visitorId is required (in the body, the X-Visitor-Id header or the visitor_id cookie)")
        hot = hot_board(request.query_params.get("board"))
        limit: Optional[ViewLimit] = state["limit"]
        if limit is not None and not request.state.token_ok:
            retry = await limit.hit(request.state.client)
            if retry is not None:
                # Abnormal traffic, counted apart: never PV, UV or the score. Per article
                # only for an article on the board (a ZSCORE of the board key, same slot),
                # else in one off-board field: the hash stays within the board's size + 1.
                key = rate_limited_key(hot.key)
                on_board = await state["redis"].zscore(hot.key, body.articleId) is not None
                field = body.articleId if on_board else RATE_LIMITED_OFF_BOARD
                async with state["redis"].pipeline(transaction=False) as pipe:
                    pipe.hincrby(key, field, 1)
                    pipe.expire(key, RATE_LIMITED_TTL_SECONDS)
                    await pipe.execute()
                raise HTTPException(
                    429, f"too many views from this address: at most {settings.views_per_minute} a minute",
                    headers={"Retry-After": str(retry)},
                )  # fmt: skip
        view = await hot.view(body.articleId, visitor, at=body.at)
        return OrjsonResponse({"articleId": body.articleId, "status": view.status, "pv": view.pv, "uv": view.uv, "score": view.score})

    @app.post("/api/articles", dependencies=privileged)
    async def post_article(body: ArticleIn, board: Optional[str] = Query(default=None)) -> dict[str, Any]:
        """Sets an article's publish time (unix seconds)."""
        new = await hot_board(board).publish(body.articleId, body.publishedAt)
        return {"articleId": body.articleId, "new": new}

    @app.get("/api/hot")
    async def get_hot(
        if_none_match: Optional[str] = Header(default=None),
        range: str = Query(default="72h"),  # noqa: A002 (the seed's parameter name)
        limit: int = Query(default=20, ge=1, le=10_000),
        board: Optional[str] = Query(default=None),
        at: Optional[float] = Query(default=None),
        by: str = Query(default="hot"),
    ) -> Response:
        """The hot articles published within ``range``, best first, with their counters;
        ``by=trending`` ranks them by trending score (400 on a board without trending).

        Without ``at``, the reply comes from the shared cache (fresh for
        ``hot_cache_seconds``; 0: computed for each request); ``computedAt`` says when
        it was computed, ``Cache-Control: max-age`` how long it stays fresh, and an
        ``If-None-Match`` naming its ``ETag`` gets 304."""
        window = parse_range(range)
        if by not in RANKINGS:
            raise HTTPException(400, f"by must be hot or trending, got {by!r}")
        name = settings.hot_boards[0] if board is None else board
        hot = hot_board(name)

        async def compute(now: float) -> tuple[bytes, str]:
            return await hot_list(state["redis"], hot.key, name, window, limit, at, now, by)

        cache: Optional[HotCache] = state["cache"]
        now = time.time()
        if cache is None or at is not None:
            body, etag = await compute(now)
            entry = Entry(body, etag, now, now)
        else:
            entry = await cache.get(cache.key(hot.key, window, limit, by), compute)
        max_age = entry.max_age(now)
        headers = {"ETag": entry.etag, "Cache-Control": f"public, max-age={max_age}" if max_age else "no-cache"}
        if matches(if_none_match, entry.etag):
            return Response(status_code=304, headers=headers)
        return Response(entry.body, media_type="application/json", headers=headers)

    @app.post("/api/leaderboards/{board}/scores", dependencies=privileged)
    async def post_score(board: str, body: ScoreIn) -> dict[str, Any]:
        """Submits a score: ``best`` keeps the member's best, ``incr`` adds, ``set`` replaces."""
        lb = leaderboard(board)
        written = True
        if body.mode == "incr":
            score = await lb.incr(body.memberId, body.score)
        elif body.mode == "set":
            score = await lb.set(body.memberId, body.score)
        else:
            result = await lb.set(body.memberId, body.score, best=True)
            score, written = result.score, result.written
        rank = await lb.rank(body.memberId)
        return {"memberId": body.memberId, "score": score, "written": written, "rank": rank}

    @app.get("/api/leaderboards/{board}/top")
    async def get_top(
        board: str,
        limit: int = Query(default=10, ge=1, le=10_000),
        offset: int = Query(default=0, ge=0),
    ) -> dict[str, Any]:
        """Ranks ``offset`` … ``offset + limit - 1`` (0-based), best first."""
        entries = await leaderboard(board).range(offset, offset + limit - 1)
        return {"board": board, "entries": [entry_json(e) for e in entries]}

    @app.get("/api/leaderboards/{board}/members/{member}")
    async def get_member(board: str, member: str, n: int = Query(default=5, ge=0, le=1000)) -> dict[str, Any]:
        """A member's rank and score, and up to ``n`` neighbours on each side."""
        around = await leaderboard(board).around(member, n)
        me = next((e for e in around if e.member == member), None)
        if me is None:
            raise HTTPException(404, f"member {member!r} is not on leaderboard {board!r}")
        return {"memberId": member, "rank": me.rank, "score": me.score, "around": [entry_json(e) for e in around]}

    return app


#: The environment variable through which ``--workers`` hands the settings to each worker.
SETTINGS_ENV = "HOTRANK_SERVICE_SETTINGS"


def app_from_env() -> FastAPI:
    """The app of one worker process: :class:`Settings` from ``$HOTRANK_SERVICE_SETTINGS``
    (JSON, written by ``python -m hotrank.service --workers N``)."""
    return create_app(Settings(**json.loads(os.environ[SETTINGS_ENV])))


def entry_json(e: RankEntry) -> dict[str, Any]:
    """A leaderboard entry as JSON."""
    return {"rank": e.rank, "memberId": e.member, "score": e.score}
