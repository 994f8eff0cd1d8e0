"""``GET /api/hot``'s list in two round trips, and the service's count of the views
its per-address limit refused (its equivalent of the module's ``suspicious``)."""

from __future__ import annotations

from typing import Any, Optional, Union

import orjson

from .. import _calls as c
from ._cache import etag_of

#: How long the service's count of rate-limited views of a board lives after the last one.
RATE_LIMITED_TTL_SECONDS = 30 * 86400
#: The field of :func:`rate_limited_key` that counts refused views of articles not on
#: the board (an article id is never empty), so a client making up ids cannot grow the
#: hash past the board's size + 1 fields.
RATE_LIMITED_OFF_BOARD = ""

def rate_limited_key(board_key: str) -> str:
    """The hash (article → views refused by the per-address limit) of a board:
    the service's own counter of abnormal traffic, beside the module's ``suspicious``.
    Only articles on the board get a field; refused views of any other id add up in
    :data:`RATE_LIMITED_OFF_BOARD`."""
    return f"{board_key}:rate-limited"


def time_json(t: Optional[float]) -> Union[int, float, None]:
    """Unix seconds for a reply: an int when whole (``1795731651``, not ``1795731651.0``)."""
    if t is None:
        return None
    return int(t) if float(t).is_integer() else t


async def hot_list(
    r: Any, hot_key: str, name: str, window: int, limit: int, at: Optional[float], now: float, by: str = "hot"
) -> tuple[bytes, str]:
    """The JSON of ``GET /api/hot`` and its entity tag, in two round trips on ``r``
    (an asyncio Redis or RedisCluster client, ``decode_responses=True``): HOT.TOP
    (``BY trending`` when ``by`` is ``trending``: rows scored by trending score),
    then one pipeline of HOT.STATS of each listed article and the HMGET of their
    rate-limited counts (every key shares the board key's slot). The module has no
    HOT.TOP option that returns the counters with the list. Rows go from the replies
    to JSON with no dataclass in between."""
    at_args: tuple[Any, ...] = ("AT", c.time_arg(at)) if at is not None else ()
    by_args: tuple[Any, ...] = ("BY", "trending") if by == "trending" else ()
    top = await r.execute_command("HOT.TOP", hot_key, *by_args, "LIMIT", limit, "WINDOW", window, "WITHSCORES", *at_args)
    ids, scores = top[0::2], top[1::2]
    articles = []
    if ids:
        pipe = r.pipeline(transaction=False)
        for a in ids:
            pipe.execute_command("HOT.STATS", hot_key, a, *at_args)
        pipe.execute_command("HMGET", rate_limited_key(hot_key), *ids)
        *stats, refused_counts = await pipe.execute()
        for rank, (a, score, st, lim) in enumerate(zip(ids, scores, stats, refused_counts)):
            # HOT.STATS: field/value pairs (a map under RESP3), nil for an unknown article.
            f = st if isinstance(st, dict) else dict(zip(st[0::2], st[1::2])) if st else {}
            refused = int(lim or 0)
            published = f.get("published_at")
            articles.append(
                {
                    "rank": rank,
                    "articleId": a,
                    "score": float(score),
                    "pv": f.get("pv"),
                    "uv": f.get("uv"),
                    "suspicious": int(f.get("suspicious") or 0) + refused,
                    "rateLimited": refused,
                    "publishedAt": time_json(float(published)) if published is not None else None,
                }
            )
    payload: dict[str, Any] = {"board": name, "by": by, "range": window, "articles": articles}
    etag = etag_of(orjson.dumps(payload))
    payload["computedAt"] = time_json(round(now, 3))
    return orjson.dumps(payload), etag
