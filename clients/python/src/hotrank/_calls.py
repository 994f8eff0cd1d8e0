"""The commands as data: each function returns a :class:`Call` (the arguments to
send and the parser of the reply), so the sync and asyncio clients, pipelines and
RedisCluster share one implementation and differ only in how they send.

Nothing here does I/O.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo
from typing import Any, Callable, Generic, Iterable, List, Optional, Sequence, Tuple, TypeVar, Union, cast

from ._duration import parse_duration
from ._types import (
    EPOCH,
    ArticleStats,
    Entry,
    ExportPage,
    HotArticle,
    Id,
    InfoValue,
    Order,
    Period,
    RankBy,
    Resolution,
    ScoredMember,
    ScoreWithTime,
    Seconds,
    SetResult,
    Time,
    ViewResult,
    ViewStatus,
)

T = TypeVar("T")
Arg = Union[str, bytes, int]

#: HOT.TOP's largest LIMIT and RANK.AROUND's largest n (the server's limits).
MAX_TOP = 10_000
MAX_AROUND = 1_000


@dataclass(frozen=True)
class Call(Generic[T]):
    """One command: ``args`` to send and ``parse`` to turn its reply into a result."""

    args: Tuple[Arg, ...]
    parse: Callable[[Any], T]


# ---------------------------------------------------------------------------
# Arguments


def key_with_prefix(prefix: str, key: str) -> str:
    """``prefix + key``, refusing a prefix that would change the board's hash tag.

    Raises ValueError for a prefix with ``{`` or ``}`` (it would move the board's
    keys to another cluster slot than the one its own hash tag picks).
    """
    check_prefix(prefix)
    if not key:
        raise ValueError("board key must be a non-empty string")
    return prefix + key


def check_prefix(prefix: str) -> None:
    """Raises ValueError unless ``prefix`` is a str without ``{`` or ``}``."""
    if not isinstance(prefix, str):
        raise TypeError(f"prefix must be a str, got {type(prefix).__name__}")
    if "{" in prefix or "}" in prefix:
        raise ValueError(
            f"prefix {prefix!r} must not contain '{{' or '}}': it would replace the "
            "board's own hash tag (put the tag in the board key, e.g. 'hot:{news}')"
        )


def time_arg(t: Time) -> str:
    """Unix seconds as the server parses them (an integer, or up to 3 decimals).

    An aware datetime is floored to the millisecond; a float is rounded to it.
    Raises ValueError for a naive datetime or a non-finite float, TypeError for
    anything but datetime, int or float.
    """
    if isinstance(t, datetime):
        if t.tzinfo is None or t.utcoffset() is None:
            raise ValueError(
                "naive datetime: give a timezone-aware one (e.g. datetime.now(timezone.utc)) or unix seconds"
            )
        ms = (t - EPOCH) // timedelta(milliseconds=1)
    elif isinstance(t, bool) or not isinstance(t, (int, float)):
        raise TypeError(f"a time must be a datetime or unix seconds, got {type(t).__name__}")
    elif isinstance(t, int):
        return str(t)
    else:
        if not math.isfinite(t):
            raise ValueError(f"a time must be finite, got {t!r}")
        ms = round(t * 1000)
    whole, frac = divmod(abs(ms), 1000)
    text = str(whole) if frac == 0 else f"{whole}.{frac:03d}".rstrip("0")
    return "-" + text if ms < 0 else text


def seconds_arg(name: str, s: Seconds) -> int:
    """A whole number of seconds from a timedelta, int, integral float or a
    duration string (``"90"``, ``"15m"``, ``"72h"``, ``"7d"``: :func:`parse_duration`).

    Raises ValueError if it has a fraction of a second or is not a duration,
    TypeError for other types.
    """
    if isinstance(s, str):
        return parse_duration(s, name)
    if isinstance(s, timedelta):
        if s % timedelta(seconds=1):
            raise ValueError(f"{name} must be a whole number of seconds, got {s!r}")
        return s // timedelta(seconds=1)
    if isinstance(s, bool) or not isinstance(s, (int, float)):
        raise TypeError(f"{name} must be a timedelta, seconds or a duration such as '72h', got {type(s).__name__}")
    if isinstance(s, float):
        if not s.is_integer():
            raise ValueError(f"{name} must be a whole number of seconds, got {s!r}")
        return int(s)
    return s


def int_arg(name: str, n: int) -> int:
    """``n`` if it is an int (not a bool); TypeError otherwise."""
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"{name} must be an int, got {type(n).__name__}")
    return n


def number_arg(name: str, x: float) -> str:
    """A finite number as the shortest text that parses back to it."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise TypeError(f"{name} must be a number, got {type(x).__name__}")
    if isinstance(x, float) and not math.isfinite(x):
        raise ValueError(f"{name} must be finite, got {x!r}")
    return repr(x) if isinstance(x, float) else str(x)


def id_arg(name: str, x: Id) -> Id:
    """An article, member or visitor id (str or bytes)."""
    if not isinstance(x, (str, bytes)):
        raise TypeError(f"{name} must be str or bytes, got {type(x).__name__}")
    return x


def tz_arg(tz: Union[str, timedelta, tzinfo]) -> str:
    """A fixed UTC offset as ``±hh:mm`` (a str is sent as it is)."""
    if isinstance(tz, str):
        return tz
    offset = tz if isinstance(tz, timedelta) else tz.utcoffset(None)
    if offset is None:
        raise ValueError(f"tz {tz!r} has no fixed UTC offset")
    if offset % timedelta(minutes=1):
        raise ValueError(f"tz offset must be whole minutes, got {offset!r}")
    minutes = offset // timedelta(minutes=1)
    sign = "-" if minutes < 0 else "+"
    hours, mins = divmod(abs(minutes), 60)
    return f"{sign}{hours:02d}:{mins:02d}"


def period_args(period: Optional[Period], ago: Optional[int]) -> List[Arg]:
    """``PERIOD p [AGO n]`` (nothing without a period)."""
    if period is None:
        if ago is not None:
            raise ValueError("ago needs a period")
        return []
    if period not in ("day", "week", "month"):
        raise ValueError(f"period must be 'day', 'week' or 'month', got {period!r}")
    out: List[Arg] = ["PERIOD", period]
    if ago is not None:
        out += ["AGO", int_arg("ago", ago)]
    return out


def at_args(at: Optional[Time]) -> List[Arg]:
    """``AT t`` (nothing when ``at`` is None: the server clock)."""
    return [] if at is None else ["AT", time_arg(at)]


def bound_arg(name: str, x: float) -> str:
    """A RANGEBYSCORE bound: an int, or ±inf."""
    if isinstance(x, float) and math.isinf(x):
        return "+inf" if x > 0 else "-inf"
    if isinstance(x, bool) or not isinstance(x, int):
        raise TypeError(f"{name} must be an int or ±math.inf, got {x!r}")
    return str(x)


# ---------------------------------------------------------------------------
# Replies


def text(x: Any) -> str:
    """A reply string as str (bytes decoded as UTF-8; invalid bytes surrogate-escaped)."""
    if isinstance(x, bytes):
        return x.decode("utf-8", "surrogateescape")
    if isinstance(x, str):
        return x
    raise TypeError(f"expected a string in the reply, got {x!r}")


def integer(x: Any) -> int:
    """A reply integer (or integer string) as int."""
    if isinstance(x, bool):
        return int(x)
    if isinstance(x, int):
        return x
    return int(text(x))


def number(x: Any) -> float:
    """A reply double (or its text) as float."""
    if isinstance(x, (int, float)):
        return float(x)
    return float(text(x))


_INT_RE = re.compile(r"-?(0|[1-9][0-9]*)")
_FLOAT_RE = re.compile(r"[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?|[-+]?inf|nan")


def value(x: Any) -> InfoValue:
    """A field's value, the same whatever the protocol: strings that are numbers
    become int or float (RESP2 sends doubles as strings), maps and arrays recurse."""
    if x is None or isinstance(x, (int, float)):
        return cast(InfoValue, x)
    if isinstance(x, dict):
        return {text(k): value(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [value(v) for v in x]
    s = text(x)
    if _INT_RE.fullmatch(s):
        return int(s)
    if _FLOAT_RE.fullmatch(s):
        return float(s)
    return s


def fields(reply: Any) -> dict[str, InfoValue]:
    """Field/value pairs: a RESP3 map or a flat RESP2 ``[field, value, …]`` array."""
    if isinstance(reply, dict):
        return {text(k): value(v) for k, v in reply.items()}
    if not isinstance(reply, (list, tuple)) or len(reply) % 2:
        raise TypeError(f"expected field/value pairs, got {reply!r}")
    return {text(k): value(v) for k, v in zip(reply[0::2], reply[1::2])}


def ok(reply: Any) -> None:
    """An ``OK`` status reply."""
    if reply is True or (isinstance(reply, (str, bytes)) and text(reply) == "OK"):
        return None
    raise TypeError(f"expected OK, got {reply!r}")


def optional_int(reply: Any) -> Optional[int]:
    """An integer reply or nil."""
    return None if reply is None else integer(reply)


_STATS_FIELDS = ("pv", "uv", "suspicious", "published_at", "score", "last_view", "trending")


def view_result(reply: Any) -> ViewResult:
    """HOT.VIEW's ``[pv, uv, score, status]``.

    A status this version does not know (a newer module's) is passed through as it is.
    """
    pv, uv, score, status = reply
    return ViewResult(integer(pv), integer(uv), number(score), cast(ViewStatus, text(status)))


def article_stats(article: str, reply: Any) -> ArticleStats:
    """HOT.STATS's field/value pairs (or one HOT.EXPORT row) as ArticleStats."""
    f = fields(reply)

    def opt(name: str) -> Optional[float]:
        v = f.get(name)
        return None if v is None else number(v)

    return ArticleStats(
        article=article,
        pv=integer(f.get("pv", 0)),
        uv=integer(f.get("uv", 0)),
        suspicious=integer(f.get("suspicious", 0)),
        published_at=opt("published_at"),
        score=number(f.get("score", 0.0)),
        last_view=opt("last_view"),
        trending=opt("trending"),
        extra={k: v for k, v in f.items() if k not in _STATS_FIELDS},
    )


def pairs(reply: Any) -> List[Tuple[str, Any]]:
    """A flat ``[member, score, …]`` reply as pairs."""
    flat = list(reply)
    return [(text(m), s) for m, s in zip(flat[0::2], flat[1::2])]


# ---------------------------------------------------------------------------
# HOT


def hot_create(cmd: str, key: str, settings: dict[str, Any]) -> Call[None]:
    """HOT.CREATE / HOT.ALTER with options from keyword settings (None: not sent)."""
    args: List[Arg] = [cmd, key]
    for name, v in settings.items():
        if v is None:
            continue
        opt = name.upper().replace("_", "-")
        if name in ("alpha", "beta", "base", "gamma"):
            args += [opt, number_arg(name, v)]
        elif name.endswith("_seconds") or name == "trending_half_life":
            args += [opt, seconds_arg(name, v)]
        else:
            args += [opt, int_arg(name, v)]
    return Call(tuple(args), ok)


def hot_publish(key: str, article: Id, published_at: Time) -> Call[bool]:
    """HOT.PUBLISH: True when the publish time is new."""
    args = ("HOT.PUBLISH", key, id_arg("article", article), time_arg(published_at))
    return Call(args, lambda r: integer(r) == 1)


def hot_view(key: str, article: Id, visitor: Id, at: Optional[Time]) -> Call[ViewResult]:
    """HOT.VIEW."""
    args = ("HOT.VIEW", key, id_arg("article", article), id_arg("visitor", visitor), *at_args(at))
    return Call(args, view_result)


def by_arg(by: RankBy) -> List[Arg]:
    """``BY trending`` (nothing for ``hot``, HOT.TOP's default, so older modules still
    answer); ValueError for anything else."""
    if by == "hot":
        return []
    if by == "trending":
        return ["BY", "trending"]
    raise ValueError(f"by must be 'hot' or 'trending', got {by!r}")


def hot_top(
    key: str, limit: int, window: Optional[Seconds], at: Optional[Time], by: RankBy = "hot"
) -> Call[List[HotArticle]]:
    """HOT.TOP [BY trending] … WITHSCORES."""
    args: List[Arg] = ["HOT.TOP", key, *by_arg(by), "LIMIT", int_arg("limit", limit)]
    if window is not None:
        args += ["WINDOW", seconds_arg("window", window)]
    args += ["WITHSCORES", *at_args(at)]

    def parse(reply: Any) -> List[HotArticle]:
        return [HotArticle(i, a, number(s)) for i, (a, s) in enumerate(pairs(reply))]

    return Call(tuple(args), parse)


def hot_stats(key: str, article: Id, at: Optional[Time]) -> Call[Optional[ArticleStats]]:
    """HOT.STATS: None for an unknown article."""
    name = text(id_arg("article", article))
    args = ("HOT.STATS", key, article, *at_args(at))
    return Call(args, lambda r: None if r is None else article_stats(name, r))


def hot_rem(key: str, articles: Sequence[Id]) -> Call[int]:
    """HOT.REM: the number of articles removed."""
    if not articles:
        raise ValueError("rem needs at least one article")
    return Call(("HOT.REM", key, *(id_arg("article", a) for a in articles)), integer)


def drop(cmd: str, key: str) -> Call[int]:
    """HOT.DROP / RANK.DROP: the number of keys removed."""
    return Call((cmd, key), integer)


def info(cmd: str, key: str) -> Call[dict[str, InfoValue]]:
    """HOT.INFO / RANK.INFO as a dict (new fields simply appear)."""
    return Call((cmd, key), fields)


def hot_export(
    key: str, cursor: int, count: Optional[int], at: Optional[Time] = None
) -> Call[ExportPage]:
    """HOT.EXPORT: ``[next_cursor, [[article, [field, value, …]], …]]``; ``at``
    is the time of the scores (the server clock when None)."""
    args: List[Arg] = ["HOT.EXPORT", key, int_arg("cursor", cursor)]
    if count is not None:
        args += ["COUNT", int_arg("count", count)]
    args += list(at_args(at))

    def parse(reply: Any) -> ExportPage:
        nxt, rows = reply
        return ExportPage(integer(nxt), tuple(article_stats(text(a), f) for a, f in rows))

    return Call(tuple(args), parse)


def boards(cmd: str, cursor: int, count: Optional[int]) -> Call[Tuple[int, List[str]]]:
    """HOT.BOARDS / RANK.BOARDS: ``(next_cursor, [board key, …])`` of the node it runs
    on; the cursor is 0 when the walk is done."""
    args: List[Arg] = [cmd, int_arg("cursor", cursor)]
    if count is not None:
        args += ["COUNT", int_arg("count", count)]

    def parse(reply: Any) -> Tuple[int, List[str]]:
        nxt, names = reply
        return integer(nxt), [text(n) for n in names]

    return Call(tuple(args), parse)


def unprefixed(names: Iterable[str], prefix: str) -> List[str]:
    """The board names under ``prefix``, with the prefix taken off."""
    return [n[len(prefix) :] for n in names if n.startswith(prefix)]


# ---------------------------------------------------------------------------
# RANK


def rank_create(
    key: str,
    resolution: Optional[Resolution],
    min_score: Optional[int],
    max_score: Optional[int],
    order: Optional[Order],
    periods: Optional[Iterable[Period]],
    tz: Union[str, timedelta, tzinfo, None],
    keep: Optional[int],
) -> Call[None]:
    """RANK.CREATE."""
    args: List[Arg] = ["RANK.CREATE", key]
    if resolution is not None:
        args += ["RESOLUTION", resolution]
    if min_score is not None:
        args += ["MIN", int_arg("min_score", min_score)]
    if max_score is not None:
        args += ["MAX", int_arg("max_score", max_score)]
    if order is not None:
        args += ["ORDER", order]
    if periods is not None:
        ps = list(periods)
        if isinstance(periods, str) or not ps:
            raise ValueError("periods must be a non-empty list such as ['day', 'week']")
        args += ["PERIODS", *ps]
    if tz is not None:
        args += ["TZ", tz_arg(tz)]
    if keep is not None:
        args += ["KEEP", int_arg("keep", keep)]
    return Call(tuple(args), ok)


def rank_incr(key: str, member: Id, delta: int, at: Optional[Time]) -> Call[int]:
    """RANK.INCR: the new score."""
    args = ("RANK.INCR", key, id_arg("member", member), int_arg("delta", delta), *at_args(at))
    return Call(args, integer)


def rank_mincr(key: str, members: Sequence[Id], delta: int) -> Call[List[int]]:
    """RANK.MINCR: the new score of each member."""
    if isinstance(members, (str, bytes)) or not members:
        raise ValueError("mincr needs a non-empty list of members")
    args = ("RANK.MINCR", key, int_arg("delta", delta), *(id_arg("member", m) for m in members))
    return Call(args, lambda r: [integer(x) for x in r])


def rank_set(
    key: str, member: Id, score: int, gt: bool, lt: bool, best: bool, at: Optional[Time]
) -> Call[Union[int, SetResult]]:
    """RANK.SET [GT|LT|BEST]: the score, or SetResult with a flag."""
    args: List[Arg] = ["RANK.SET", key, id_arg("member", member), int_arg("score", score)]
    flags = [name for name, on in (("GT", gt), ("LT", lt), ("BEST", best)) if on]
    args += flags + at_args(at)

    def parse(reply: Any) -> Union[int, SetResult]:
        if not flags:
            return integer(reply)
        score_now, written = reply
        return SetResult(integer(score_now), integer(written) == 1)

    return Call(tuple(args), parse)


def rank_score(key: str, member: Id, period: Optional[Period], ago: Optional[int]) -> Call[Optional[int]]:
    """RANK.SCORE: the score or None."""
    return Call(("RANK.SCORE", key, id_arg("member", member), *period_args(period, ago)), optional_int)


def rank_score_with_time(
    key: str, member: Id, period: Optional[Period], ago: Optional[int]
) -> Call[Optional[ScoreWithTime]]:
    """RANK.SCORE … WITHTIME: ScoreWithTime or None."""
    args = ("RANK.SCORE", key, id_arg("member", member), "WITHTIME", *period_args(period, ago))

    def parse(reply: Any) -> Optional[ScoreWithTime]:
        if reply is None:
            return None
        score, when = reply
        return ScoreWithTime(integer(score), number(when))

    return Call(args, parse)


def rank_rank(key: str, member: Id, ties: bool, period: Optional[Period], ago: Optional[int]) -> Call[Optional[int]]:
    """RANK.RANK [TIES]: the 0-based rank or None."""
    args: List[Arg] = ["RANK.RANK", key, id_arg("member", member)]
    if ties:
        args.append("TIES")
    return Call((*args, *period_args(period, ago)), optional_int)


def rank_card(key: str, period: Optional[Period], ago: Optional[int]) -> Call[int]:
    """RANK.CARD."""
    return Call(("RANK.CARD", key, *period_args(period, ago)), integer)


def rank_range(
    key: str, start: int, stop: int, period: Optional[Period], ago: Optional[int]
) -> Call[List[Entry]]:
    """RANK.RANGE … WITHSCORES from a non-negative ``start`` (ranks are start + i)."""
    if int_arg("start", start) < 0:
        raise ValueError("rank_range needs start >= 0 (the client resolves negative starts)")
    args = ("RANK.RANGE", key, start, int_arg("stop", stop), "WITHSCORES", *period_args(period, ago))
    return Call(args, lambda r: [Entry(start + i, m, integer(s)) for i, (m, s) in enumerate(pairs(r))])


def rank_around(key: str, member: Id, n: int, period: Optional[Period], ago: Optional[int]) -> Call[List[Entry]]:
    """RANK.AROUND: ``[[rank, member, score], …]``."""
    args = ("RANK.AROUND", key, id_arg("member", member), int_arg("n", n), *period_args(period, ago))
    return Call(args, lambda r: [Entry(integer(k), text(m), integer(s)) for k, m, s in r])


def rank_range_by_score(
    key: str,
    low: float,
    high: float,
    offset: Optional[int],
    count: Optional[int],
    period: Optional[Period],
    ago: Optional[int],
) -> Call[List[ScoredMember]]:
    """RANK.RANGEBYSCORE … WITHSCORES."""
    args: List[Arg] = ["RANK.RANGEBYSCORE", key, bound_arg("low", low), bound_arg("high", high)]
    if count is not None:
        args += ["LIMIT", int_arg("offset", offset or 0), int_arg("count", count)]
    elif offset is not None:
        raise ValueError("offset needs a count")
    args += ["WITHSCORES", *period_args(period, ago)]
    return Call(tuple(args), lambda r: [ScoredMember(m, integer(s)) for m, s in pairs(r)])


def rank_rem(key: str, members: Sequence[Id]) -> Call[int]:
    """RANK.REM: the number removed."""
    if not members:
        raise ValueError("rem needs at least one member")
    return Call(("RANK.REM", key, *(id_arg("member", m) for m in members)), integer)


def first_rank(start: int, card: int) -> int:
    """The absolute rank of index ``start`` (negative counts from the end, as in ZRANGE)."""
    return start if start >= 0 else max(card + start, 0)
