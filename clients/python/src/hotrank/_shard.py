"""Sharded boards as data: which shard an id goes to, the shards' keys, and each
sharded operation as a *plan*, a generator that yields batches of calls (one per
shard or per id) and receives their results, so the sync client (pipelines) and
the asyncio client (gather) run the same logic. Nothing here does I/O.

The rule, for any language:

- **Shard of an id** (article or member): ``crc32(utf8(id)) mod N``, with CRC-32
  as zlib, Python's ``zlib.crc32``, Go's ``crc32.ChecksumIEEE`` and Java's
  ``java.util.zip.CRC32`` compute it (polynomial 0xEDB88320, reflected, initial
  and final XOR 0xFFFFFFFF), unsigned. A bytes id is hashed as it is.
- **Key of shard i**: the board's name with its hash tag ``{tag}`` replaced by
  ``{tag:ii}``, ``ii`` being ``i`` in decimal, zero-padded to
  ``max(2, len(str(N - 1)))`` digits: ``hot:{news}`` with 16 shards has
  ``hot:{news:00}`` … ``hot:{news:15}``. Each shard has its own hash tag, so a
  cluster spreads them over its masters.
- **Description**: the hash ``<name>:sharding`` (in the slot of ``{tag}``) holds
  ``kind`` (``hot`` or ``rank``), ``shards`` (N), ``hash`` (``crc32``) and
  ``settings`` (the JSON of every setting every shard is created with: the ones
  given to ``create()`` and, read back from shard 0's HOT.INFO / RANK.INFO, the
  rest, so a node's own ``hotrank.*`` configs never decide a shard's formula).
"""

from __future__ import annotations

import bisect
import heapq
import json
import re
import zlib
from dataclasses import dataclass
from typing import Any, Dict, Generator, List, Optional, Sequence, Tuple, TypeVar

from . import _calls as c
from ._types import BoardExistsError, Entry, HotArticle, Id, Period, RankBy, ServerError, Time

T = TypeVar("T")
#: One batch of a plan: calls to run together (their results come back in order).
Batch = List["c.Call[Any]"]
#: A sharded operation: yields batches, receives their results, returns T.
Plan = Generator[Batch, List[Any], T]

#: The hash this version writes into a board's description.
HASH = "crc32"
_TAG = re.compile(r"\{([^{}]+)\}")


def id_bytes(x: Id) -> bytes:
    """The bytes of an id as the server stores it (a str as UTF-8)."""
    if isinstance(x, bytes):
        return x
    if isinstance(x, str):
        return x.encode("utf-8", "surrogateescape")
    raise TypeError(f"an id must be str or bytes, got {type(x).__name__}")


def shard_of(x: Id, shards: int) -> int:
    """The shard (0 … shards - 1) of article or member ``x``: CRC-32 of its UTF-8 bytes mod N."""
    return zlib.crc32(id_bytes(x)) % shards


def shard_keys(name: str, shards: int) -> List[str]:
    """Every shard's key: ``name`` with its hash tag ``{tag}`` made ``{tag:ii}``.

    Raises ValueError unless ``name`` has exactly one hash tag, or if ``shards`` is
    not an int between 1 and 10000.
    """
    if isinstance(shards, bool) or not isinstance(shards, int) or not 1 <= shards <= 10_000:
        raise ValueError(f"shards must be an int between 1 and 10000, got {shards!r}")
    tags = list(_TAG.finditer(name))
    if len(tags) != 1 or name.count("{") != 1 or name.count("}") != 1:
        raise ValueError(f"a sharded board's name needs exactly one hash tag, e.g. 'hot:{{news}}', got {name!r}")
    m = tags[0]
    width = max(2, len(str(shards - 1)))
    return [f"{name[: m.start()]}{{{m.group(1)}:{i:0{width}d}}}{name[m.end():]}" for i in range(shards)]


def describe_key(name: str) -> str:
    """The key of a sharded board's description (a hash, in the slot of its tag)."""
    return name + ":sharding"


# ---------------------------------------------------------------------------
# Descriptions


@dataclass(frozen=True)
class Description:
    """What ``<name>:sharding`` holds; None fields: not described yet."""

    kind: Optional[str]
    shards: Optional[int]
    settings: Dict[str, Any]


def _description(reply: Any) -> Description:
    if not reply:
        return Description(None, None, {})
    f = {c.text(k): c.text(v) for k, v in (reply.items() if isinstance(reply, dict) else zip(reply[0::2], reply[1::2]))}
    shards = f.get("shards")
    return Description(f.get("kind"), int(shards) if shards else None, json.loads(f.get("settings") or "{}"))


def read_description(name: str) -> c.Call[Description]:
    """HGETALL of the description."""
    return c.Call(("HGETALL", describe_key(name)), _description)


def write_description(name: str, kind: str, shards: int, settings: Dict[str, Any]) -> c.Call[Any]:
    """HSET of the description."""
    blob = json.dumps(settings, sort_keys=True, default=_seconds)
    return c.Call(
        ("HSET", describe_key(name), "kind", kind, "shards", shards, "hash", HASH, "settings", blob), lambda r: r
    )


def _seconds(x: Any) -> Any:
    """JSON for a timedelta setting: whole seconds."""
    return c.seconds_arg("setting", x)


def check(name: str, kind: str, shards: int, d: Description) -> None:
    """Raises ValueError if the description says another kind or another number of shards
    (ids would go to other shards than the ones that hold them)."""
    if d.kind is not None and d.kind != kind:
        raise ValueError(f"{name!r} is a sharded {d.kind} board, not a {kind} board")
    if d.shards is not None and d.shards != shards:
        raise ValueError(
            f"{name!r} has {d.shards} shards, not {shards}: every client must use the same number "
            "(changing it needs a new board)"
        )


class Tolerant(c.Call[Any]):
    """A call whose error reply is returned (as a ServerError) rather than raised."""


def tolerant(call: c.Call[Any]) -> Tolerant:
    """``call``, returning its error reply as a value."""
    return Tolerant(call.args, call.parse)


#: Every setting of a HOT board, as keyword names (HOT.INFO's with ``_`` for ``-``).
HOT_SETTINGS = (
    "alpha",
    "beta",
    "base",
    "gamma",
    "dedup_seconds",
    "dedup_shards",
    "visitor_max_views",
    "visitor_window_seconds",
    "max_articles",
    "retention_seconds",
    "trending_half_life",
)
#: Every setting of a leaderboard's layout (RANK.INFO's ``min``/``max`` as ``min_score``/``max_score``).
RANK_SETTINGS = ("resolution", "min_score", "max_score", "order", "periods", "tz", "keep")


def hot_settings_of(info: Dict[str, Any]) -> Dict[str, Any]:
    """Every setting HOT.INFO reports, as keyword settings (other fields left out)."""
    out: Dict[str, Any] = {}
    for name in HOT_SETTINGS:
        v = info.get(name.replace("_", "-"))
        if v is None:
            raise ValueError(f"HOT.INFO does not report {name.replace('_', '-')}: the module is older than this client")
        out[name] = v
    return out


def rank_settings_of(info: Dict[str, Any]) -> Dict[str, Any]:
    """Every setting of the layout RANK.INFO reports; ``periods``, ``tz`` and ``keep``
    are None for a board without periods (recorded as such: nothing left to a node)."""
    periods = info.get("periods")
    if isinstance(periods, str):
        periods = [periods] if periods else None
    tz, keep = info.get("tz"), info.get("keep")
    return {
        "resolution": info.get("resolution"),
        "min_score": info.get("min"),
        "max_score": info.get("max"),
        "order": info.get("order"),
        "periods": list(periods) if periods else None,
        "tz": tz if tz not in ("", None) else None,
        "keep": keep if keep not in ("", None) else None,
    }


#: Per kind: the INFO command, how its reply gives the settings, and their names.
_RESOLVE = {"hot": ("HOT.INFO", hot_settings_of, HOT_SETTINGS), "rank": ("RANK.INFO", rank_settings_of, RANK_SETTINGS)}


def complete(kind: str, settings: Dict[str, Any]) -> bool:
    """Whether a record holds every setting of its kind (one written by a version
    that resolved them), so every shard gets the same ones whatever its node's configs."""
    return all(name in settings for name in _RESOLVE[kind][2])


def resolve_plan(kind: str, key: str, settings: Dict[str, Any], make: Any) -> Plan[Dict[str, Any]]:
    """Creates the board ``key`` with ``settings`` (HOT: alters it to them if it exists
    already), then reads every setting back from its INFO: the settings given, and
    the node's ``hotrank.*`` configs for the rest. ValueError if the leaderboard exists
    with another layout than the one given."""
    cmd, parse, _ = _RESOLVE[kind]
    (made,) = yield [tolerant(make(key, settings, False))]
    if isinstance(made, BoardExistsError):
        if kind == "hot" and settings:
            yield [make(key, settings, True)]
    elif isinstance(made, ServerError):
        raise made
    (info,) = yield [c.info(cmd, key)]
    full: Dict[str, Any] = parse(info)
    if kind == "rank":
        differ = [k for k, v in settings.items() if _norm(v) != _norm(full.get(k))]
        if differ:
            raise ValueError(f"{key!r} exists with another layout ({', '.join(differ)}): drop it or use its layout")
    return full


def _norm(v: Any) -> Any:
    """A setting compared loosely: periods as a set, numbers and text as text."""
    if isinstance(v, (list, tuple)):
        return frozenset(str(x) for x in v)
    return None if v is None else str(v)


def apply_plan(kind: str, keys: Sequence[str], settings: Dict[str, Any], make: Any) -> Plan[None]:
    """Gives every shard ``settings``: creates the shards that have none and (HOT) alters
    the others to them; a shard's error is raised after every shard was tried."""
    results = yield [tolerant(make(k, settings, False)) for k in keys]
    again = [k for k, r in zip(keys, results) if isinstance(r, BoardExistsError)]
    if kind == "hot" and again and settings:
        yield [make(k, settings, True) for k in again]
    for r in results:
        if isinstance(r, ServerError) and not isinstance(r, BoardExistsError):
            raise r
    return None


def create_plan(name: str, kind: str, keys: Sequence[str], settings: Dict[str, Any], make: Any) -> Plan[None]:
    """Creates shard 0 with ``settings`` and reads every setting back from it (the node's
    configs fill what was not given), records them all, then gives every other shard
    the same: shards on nodes with other ``hotrank.*`` configs score alike.

    Raises BoardExistsError if the board is recorded already, ValueError if it is
    recorded with another kind or number of shards; a shard's error is raised after
    every shard was tried (``ensure`` finishes the job).
    """
    (d,) = yield [read_description(name)]
    check(name, kind, len(keys), d)
    if d.kind is not None:
        raise BoardExistsError("ERR", "ERR board already exists")
    full = yield from resolve_plan(kind, keys[0], settings, make)
    yield [write_description(name, kind, len(keys), full)]
    yield from apply_plan(kind, keys[1:], full, make)
    return None


def ensure_plan(name: str, kind: str, keys: Sequence[str], make: Any) -> Plan[Dict[str, Any]]:
    """Gives every shard the recorded settings: creates the shards that have none and
    (HOT) alters the others to them. A record that lacks settings (written by an older
    version, which recorded only the settings it was given) is completed first from
    shard 0 (created with the recorded ones if missing) and written back. Returns the
    settings ({} for a board not recorded). Raises ValueError if the board is recorded
    with another kind or number of shards."""
    (d,) = yield [read_description(name)]
    check(name, kind, len(keys), d)
    if d.kind is None:
        return {}
    settings: Dict[str, Any] = d.settings
    if not complete(kind, settings):
        settings = yield from resolve_plan(kind, keys[0], settings, make)
        yield [write_description(name, kind, len(keys), settings)]
    yield from apply_plan(kind, keys, settings, make)
    return settings


# ---------------------------------------------------------------------------
# HOT


def hot_order(a: HotArticle) -> Tuple[float, bytes]:
    """HOT.TOP's order: higher score first, then article id ascending (bytes)."""
    return (-a.score, id_bytes(a.article))


def merge_top(per_shard: Sequence[Sequence[HotArticle]], limit: int) -> List[HotArticle]:
    """The exact top ``limit`` of the union of the shards' top ``limit``s, re-ranked."""
    best = heapq.nsmallest(limit, (a for rows in per_shard for a in rows), key=hot_order)
    return [HotArticle(i, a.article, a.score) for i, a in enumerate(best)]


# ---------------------------------------------------------------------------
# RANK


@dataclass(frozen=True)
class Timed:
    """A member with its score and the time (ms) it was reached: its place on the board."""

    member: str
    score: int
    time_ms: int


def time_ms(x: Any) -> int:
    """Unix seconds as the server writes them (``1763900000.25``) in exact milliseconds."""
    s = c.text(x) if not isinstance(x, (int, float)) else repr(x)
    whole, _, frac = s.partition(".")
    ms = int(whole) * 1000
    if frac:
        ms += int((frac + "00")[:3]) * (1 if not whole.startswith("-") else -1)
    return ms


def time_text(ms: int) -> str:
    """Milliseconds as unix seconds text with up to 3 decimals."""
    whole, frac = divmod(ms, 1000)
    return str(whole) if frac == 0 else f"{whole}.{frac:03d}".rstrip("0")


def rank_order(desc: bool) -> Any:
    """The board's order as a sort key: better score, then earlier, then member bytes."""

    def key(t: Timed) -> Tuple[int, int, bytes]:
        return (-t.score if desc else t.score, t.time_ms, id_bytes(t.member))

    return key


def range_timed(key: str, start: int, stop: int, period: Optional[Period], ago: Optional[int]) -> c.Call[List[Timed]]:
    """RANK.RANGE … WITHSCORES WITHTIME."""
    args = ("RANK.RANGE", key, start, stop, "WITHSCORES", "WITHTIME", *c.period_args(period, ago))

    def parse(reply: Any) -> List[Timed]:
        flat = list(reply)
        return [
            Timed(c.text(m), c.integer(s), time_ms(t)) for m, s, t in zip(flat[0::3], flat[1::3], flat[2::3])
        ]

    return c.Call(args, parse)


def rank_count(
    key: str, score: int, at_ms: Optional[int], member: Optional[Id], period: Optional[Period], ago: Optional[int]
) -> c.Call[int]:
    """RANK.COUNT K score [TIME t [MEMBER m]]."""
    args: List[c.Arg] = ["RANK.COUNT", key, score]
    if at_ms is not None:
        args += ["TIME", time_text(at_ms)]
        if member is not None:
            args += ["MEMBER", member]
    return c.Call((*args, *c.period_args(period, ago)), c.integer)


def score_timed(key: str, member: Id, period: Optional[Period], ago: Optional[int]) -> c.Call[Optional[Timed]]:
    """RANK.SCORE … WITHTIME as a Timed, or None."""
    name = c.text(member)
    args = ("RANK.SCORE", key, member, "WITHTIME", *c.period_args(period, ago))

    def parse(reply: Any) -> Optional[Timed]:
        if reply is None:
            return None
        s, t = reply
        return Timed(name, c.integer(s), time_ms(t))

    return c.Call(args, parse)


def order_plan(name: str, cache: Dict[str, bool]) -> Plan[bool]:
    """Whether the board is ``desc``, from its description (kept in ``cache``, the
    board object's: a layout's order never changes; desc when undescribed, and then
    read again next time)."""
    if "desc" in cache:
        return cache["desc"]
    (d,) = yield [read_description(name)]
    desc = bool(d.settings.get("order", "desc") != "asc")
    if d.kind is not None:
        cache["desc"] = desc
    return desc


def card_plan(keys: Sequence[str], period: Optional[Period], ago: Optional[int]) -> Plan[int]:
    """The number of members: the sum of the shards'."""
    cards = yield [c.rank_card(k, period, ago) for k in keys]
    return sum(cards)


def rank_plan(
    keys: Sequence[str], home: str, member: Id, ties: bool, period: Optional[Period], ago: Optional[int]
) -> Plan[Optional[int]]:
    """The member's rank: its score and time from its shard, then the sum of every
    shard's RANK.COUNT at that place (with ``ties``, of the members with a better score)."""
    (me,) = yield [score_timed(home, member, period, ago)]
    if me is None:
        return None
    if ties:
        counts = yield [rank_count(k, me.score, None, None, period, ago) for k in keys]
    else:
        counts = yield [rank_count(k, me.score, me.time_ms, member, period, ago) for k in keys]
    return sum(counts)


def range_plan(
    name: str,
    cache: Dict[str, bool],
    keys: Sequence[str],
    start: int,
    stop: int,
    period: Optional[Period],
    ago: Optional[int],
) -> Plan[List[Entry]]:
    """Ranks ``start`` … ``stop`` (ZRANGE indexes): every shard's top ``stop + 1``,
    merged in the board's order. Negative indexes are resolved with the total card."""
    if start < 0 or stop < 0:
        total = yield from card_plan(keys, period, ago)
        start = c.first_rank(start, total)
        stop = stop if stop >= 0 else total + stop
    if stop < start or stop < 0:
        return []
    desc = yield from order_plan(name, cache)
    rows = yield [range_timed(k, 0, stop, period, ago) for k in keys]
    merged = heapq.nsmallest(stop + 1, (t for r in rows for t in r), key=rank_order(desc))
    return [Entry(start + i, t.member, t.score) for i, t in enumerate(merged[start:])]


def around_plan(
    name: str,
    cache: Dict[str, bool],
    keys: Sequence[str],
    home: str,
    member: Id,
    n: int,
    period: Optional[Period],
    ago: Optional[int],
) -> Plan[List[Entry]]:
    """The member and up to ``n`` neighbours each side: its place from its shard, the
    number ahead of it in each shard, then each shard's ``n`` before and ``n`` after
    that place, merged."""
    if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= c.MAX_AROUND:
        raise ValueError(f"n must be an int between 0 and {c.MAX_AROUND}, got {n!r}")
    (me,) = yield [score_timed(home, member, period, ago)]
    if me is None:
        return []
    counts = yield [rank_count(k, me.score, me.time_ms, member, period, ago) for k in keys]
    desc = yield from order_plan(name, cache)
    rows = yield [range_timed(k, max(ci - n, 0), ci + n, period, ago) for k, ci in zip(keys, counts)]
    order = rank_order(desc)
    merged = sorted((t for r in rows for t in r), key=order)
    # The member's place in the merge (found by its order key, so a member written
    # between the calls still gets a window around where it was).
    at = bisect.bisect_left([order(t) for t in merged], order(me))
    rank = sum(counts)
    window = merged[max(at - n, 0) : at + n + 1]
    first = rank - (at - max(at - n, 0))
    return [Entry(first + i, t.member, t.score) for i, t in enumerate(window)]


# ---------------------------------------------------------------------------
# Plans of the HOT board


def top_plan(keys: Sequence[str], limit: int, window: Any, at: Time, by: RankBy = "hot") -> Plan[List[HotArticle]]:
    """Every shard's HOT.TOP (``BY hot`` or ``BY trending``) at one shared ``at``, merged
    exactly: with the same AT, every shard's scores are taken at the same moment, so a
    trending score does not depend on the shard's own landmark."""
    c.int_arg("limit", limit)
    c.by_arg(by)
    rows = yield [c.hot_top(k, limit, window, at, by) for k in keys]
    return merge_top(rows, limit)


def routed_plan(calls: Sequence[c.Call[T]]) -> Plan[List[T]]:
    """Calls each on its own shard, run together; results in order."""
    out = yield list(calls)
    return out


def sum_plan(calls: Sequence[c.Call[int]]) -> Plan[int]:
    """The sum of integer replies (REM, DROP over shards)."""
    out = yield list(calls)
    return sum(out)


def one_plan(call: c.Call[T]) -> Plan[T]:
    """One call on one shard."""
    (out,) = yield [call]
    return out  # type: ignore[no-any-return]
