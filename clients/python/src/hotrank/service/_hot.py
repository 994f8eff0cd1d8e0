"""``GET /api/hot``'s list in one round trip, and the service's count of the views
its per-address limit refused (its equivalent of the module's ``suspicious``)."""

from __future__ import annotations

import hashlib
from typing import Any, Optional, Union

import orjson
import redis.exceptions

from .. import _calls as c
from ._cache import etag_of

#: How long the service's count of rate-limited views of a board lives after the last one.
RATE_LIMITED_TTL_SECONDS = 30 * 86400


#: GET /api/hot in one round trip: ``KEYS[1]`` the board, ``KEYS[2]`` its rate-limited
#: hash; ``ARGV`` limit, window (s), ``at`` ("" for the server clock). Replies one flat
#: array, 7 values per listed article, best first: id, score (HOT.TOP's, at ``at``),
#: then HOT.STATS' pv, uv, suspicious and published_at (nil for an article HOT.STATS
#: does not know), and the article's rate-limited count (nil: none). Read-only; the
#: derived keys HOT.STATS opens share the board key's slot.
HOT_SCRIPT = """#!lua flags=no-writes
local at = {}
if ARGV[3] ~= '' then at = {'AT', ARGV[3]} end
local top = redis.call('HOT.TOP', KEYS[1], 'LIMIT', ARGV[1], 'WINDOW', ARGV[2], 'WITHSCORES', unpack(at))
local out = {}
local ids = {}
for i = 1, #top, 2 do
  ids[#ids + 1] = top[i]
  local st = redis.call('HOT.STATS', KEYS[1], top[i], unpack(at))
  local f = {}
  if st then
    for j = 1, #st, 2 do
      local k = st[j]
      if type(k) == 'table' then k = k.ok end  -- field names are status replies
      f[k] = st[j + 1]
    end
  end
  local n = #out
  out[n + 1] = top[i]
  out[n + 2] = top[i + 1]
  out[n + 3] = f['pv'] or false
  out[n + 4] = f['uv'] or false
  out[n + 5] = f['suspicious'] or false
  out[n + 6] = f['published_at'] or false
  out[n + 7] = false
end
for i = 1, #ids, 1000 do
  local part = redis.call('HMGET', KEYS[2], unpack(ids, i, math.min(i + 999, #ids)))
  for k, v in ipairs(part) do out[(i + k - 2) * 7 + 7] = v end
end
return out
"""
HOT_SCRIPT_SHA = hashlib.sha1(HOT_SCRIPT.encode()).hexdigest()


def rate_limited_key(board_key: str) -> str:
    """The hash (article → views refused by the per-address limit) of a board:
    the service's own counter of abnormal traffic, beside the module's ``suspicious``."""
    return f"{board_key}:rate-limited"


def time_json(t: Optional[float]) -> Union[int, float, None]:
    """Unix seconds for a reply: an int when whole (``1795731651``, not ``1795731651.0``)."""
    if t is None:
        return None
    return int(t) if float(t).is_integer() else t


async def hot_list(r: Any, hot_key: str, name: str, window: int, limit: int, at: Optional[float], now: float) -> tuple[bytes, str]:
    """The JSON of ``GET /api/hot`` and its entity tag, from one round trip on
    ``r`` (an asyncio Redis or RedisCluster client, ``decode_responses=True``):
    :data:`HOT_SCRIPT` runs HOT.TOP, HOT.STATS of each listed article and the
    HMGET of their rate-limited counts on the server (the module has no HOT.TOP
    option that returns the counters with the list). Rows go from the reply to
    JSON with no dataclass in between."""
    at_arg = c.time_arg(at) if at is not None else ""
    argv = (2, hot_key, rate_limited_key(hot_key), limit, window, at_arg)
    try:
        reply = await r.evalsha(HOT_SCRIPT_SHA, *argv)
    except redis.exceptions.NoScriptError:
        reply = await r.eval(HOT_SCRIPT, *argv)  # loads it (on this node) for next time
    articles = []
    for i in range(0, len(reply), 7):
        a, score, pv, uv, sus, published, lim = reply[i : i + 7]
        refused = int(lim or 0)
        articles.append(
            {
                "rank": i // 7,
                "articleId": a,
                "score": float(score),
                "pv": pv,
                "uv": uv,
                "suspicious": (sus or 0) + refused,
                "rateLimited": refused,
                "publishedAt": time_json(float(published)) if published is not None else None,
            }
        )
    payload: dict[str, Any] = {"board": name, "range": window, "articles": articles}
    etag = etag_of(orjson.dumps(payload))
    payload["computedAt"] = time_json(round(now, 3))
    return orjson.dumps(payload), etag
