"""Result types, argument types and errors shared by the sync and asyncio clients."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Dict, List, Literal, Mapping, Optional, Tuple, TypeAlias, Union

import redis.exceptions

#: A point in time: a timezone-aware :class:`~datetime.datetime`, or unix seconds
#: (an ``int``, or a ``float`` rounded to the millisecond).
Time: TypeAlias = Union[datetime, int, float]
#: A length of time, a whole number of seconds: a :class:`~datetime.timedelta`, seconds,
#: or a duration string ``"90"``, ``"15m"``, ``"72h"``, ``"7d"`` (units s, m, h, d).
Seconds: TypeAlias = Union[timedelta, int, float, str]
#: An article, member or visitor id: ``str`` (sent as UTF-8) or ``bytes``.
Id: TypeAlias = Union[str, bytes]
#: What HOT.VIEW did with a view.
ViewStatus: TypeAlias = Literal["counted", "duplicate", "suspicious", "removed"]
#: A HOT board's ranking: ``hot`` (gravity of the publish time, the default) or
#: ``trending`` (each view decayed by its own age, on a board with a trending half-life).
RankBy: TypeAlias = Literal["hot", "trending"]
#: A leaderboard period.
Period: TypeAlias = Literal["day", "week", "month"]
#: A leaderboard's order: ``desc`` (higher is better, the default) or ``asc``.
Order: TypeAlias = Literal["asc", "desc"]
#: A leaderboard's time resolution.
Resolution: TypeAlias = Literal["s", "ms"]
#: A value of an INFO or STATS field the client has no typed attribute for.
#: Numbers arrive as ``int`` or ``float`` whatever the protocol (RESP2 sends some as strings).
InfoValue: TypeAlias = Union[int, float, str, None, List["InfoValue"], Dict[str, "InfoValue"]]

UTC = timezone.utc
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def to_datetime(seconds: float) -> datetime:
    """Unix seconds as an aware UTC datetime (exact to the millisecond)."""
    return EPOCH + timedelta(milliseconds=round(seconds * 1000))


@dataclass(frozen=True)
class ViewResult:
    """HOT.VIEW's reply: the article's counters after the view and what was done with it.

    ``score`` is the article's decayed score at the view's time; ``status`` is
    ``"counted"``, ``"duplicate"`` (a repeat within the dedup window: nothing counted)
    or ``"suspicious"`` (abnormal traffic: only the suspicious counter moved), or
    ``"removed"`` (the article was taken down by HOT.REM: nothing written). A newer
    module may add a status; it is passed through as the server wrote it.
    """

    pv: int
    uv: int
    score: float
    status: ViewStatus

    @property
    def counted(self) -> bool:
        """True when this view moved PV, UV and the score."""
        return self.status == "counted"


@dataclass(frozen=True)
class HotArticle:
    """One row of HOT.TOP: an article and its score at the query time (0-based ``rank``)."""

    rank: int
    article: str
    score: float


@dataclass(frozen=True)
class ArticleStats:
    """HOT.STATS (or one row of HOT.EXPORT) of one article.

    ``published_at`` and ``last_view`` are unix seconds (``published`` and
    ``last_viewed`` give them as UTC datetimes); ``last_view`` has a one-minute
    grain (a counted view at most 60 s before the latest one); ``score`` is the score at the
    query time. ``trending`` is the trending score at the query time (the decayed sum of
    the article's counted views since trending started, 0.0 for none) on a board with
    a trending half-life, None on a board without. Fields the server sends that this
    version does not know are kept in ``extra``.
    """

    article: str
    pv: int
    uv: int
    suspicious: int
    published_at: Optional[float]
    score: float
    last_view: Optional[float] = None
    trending: Optional[float] = None
    extra: Mapping[str, InfoValue] = field(default_factory=dict, hash=False)

    @property
    def published(self) -> Optional[datetime]:
        """``published_at`` as an aware UTC datetime."""
        return None if self.published_at is None else to_datetime(self.published_at)

    @property
    def last_viewed(self) -> Optional[datetime]:
        """``last_view`` as an aware UTC datetime (HOT.EXPORT only)."""
        return None if self.last_view is None else to_datetime(self.last_view)


@dataclass(frozen=True)
class ExportPage:
    """One HOT.EXPORT call: the articles and the cursor of the next call (0: done)."""

    cursor: int
    articles: Tuple[ArticleStats, ...]


@dataclass(frozen=True)
class Entry:
    """A leaderboard member with its score and 0-based rank (the best member has rank 0)."""

    rank: int
    member: str
    score: int


@dataclass(frozen=True)
class ScoredMember:
    """A leaderboard member and its score (RANK.RANGEBYSCORE gives no ranks)."""

    member: str
    score: int


@dataclass(frozen=True)
class ScoreWithTime:
    """RANK.SCORE … WITHTIME: the score and when it was reached (unix seconds)."""

    score: int
    reached_at: float

    @property
    def reached(self) -> datetime:
        """``reached_at`` as an aware UTC datetime."""
        return to_datetime(self.reached_at)


@dataclass(frozen=True)
class SetResult:
    """RANK.SET with ``gt``/``lt``/``best``: the member's score after the call, and
    whether this call wrote it (a new member or a better score)."""

    score: int
    written: bool


# ---------------------------------------------------------------------------
# Errors

#: Error codes a server puts before its message (``WRONGTYPE Operation …``).
_CODES = frozenset(
    {
        "ERR",
        "WRONGTYPE",
        "NOPERM",
        "OOM",
        "READONLY",
        "BUSY",
        "LOADING",
        "EXECABORT",
        "NOSCRIPT",
        "MOVED",
        "ASK",
        "CROSSSLOT",
        "CLUSTERDOWN",
        "TRYAGAIN",
        "MASTERDOWN",
        "NOAUTH",
        "WRONGPASS",
    }
)


class HotrankError(Exception):
    """Base class of every error this package raises itself."""


class ServerError(HotrankError, redis.exceptions.ResponseError):
    """An error reply from the server, with its message as the server wrote it.

    ``code`` is the first word (``ERR``, ``WRONGTYPE``, ``NOPERM`` …) and
    ``message`` the whole line, e.g. ``"ERR AT is later than the server clock: …"``;
    ``str(error)`` is ``message``. It is also a ``redis.exceptions.ResponseError``,
    so code that catches redis-py's errors keeps working.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def __str__(self) -> str:
        return self.message


class InvalidArgumentError(ServerError):
    """An ``ERR …`` reply: a bad argument, a time in the future, a key that is not such a board."""


class BoardExistsError(InvalidArgumentError):
    """``ERR board already exists``: RANK.CREATE / HOT.CREATE on a board that has settings."""


class UnknownCommandError(InvalidArgumentError):
    """The server does not know the command: the module is missing or older than the call."""


class WrongTypeError(ServerError):
    """``WRONGTYPE …``: the key (or a derived key) holds another type."""


class NoPermissionError(ServerError):
    """``NOPERM …``: the ACL user may not run the command or touch one of the board's keys."""


def server_error(error: redis.exceptions.ResponseError) -> ServerError:
    """The typed error for a redis-py error reply, keeping the server's message.

    redis-py strips the ``ERR`` (and ``NOPERM``) code from the text and keeps it
    in ``status_code`` (redis-py 6+); older versions drop it, so it is put back here.
    """
    if isinstance(error, ServerError):
        return error
    text = str(error)
    status = getattr(error, "status_code", None)
    first = text.split(" ", 1)[0]
    if isinstance(status, str) and status:
        code, message = status, f"{status} {text}"
    elif first in _CODES:
        code, message = first, text
    elif isinstance(error, redis.exceptions.NoPermissionError):
        code, message = "NOPERM", f"NOPERM {text}"
    else:
        code, message = "ERR", f"ERR {text}"
    body = message[len(code) + 1 :]
    if code == "WRONGTYPE":
        return WrongTypeError(code, message)
    if code == "NOPERM":
        return NoPermissionError(code, message)
    if code != "ERR":
        return ServerError(code, message)
    if body.startswith("unknown command"):
        return UnknownCommandError(code, message)
    if "already exists" in body:
        return BoardExistsError(code, message)
    return InvalidArgumentError(code, message)
