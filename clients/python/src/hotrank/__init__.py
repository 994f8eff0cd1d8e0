"""hotrank: a typed Python client for the hotrank Redis module (HOT.* and RANK.*).

``hotrank.HotBoard`` and ``hotrank.Leaderboard`` wrap one board each over a sync
``redis.Redis`` or ``redis.cluster.RedisCluster``; ``hotrank.asyncio`` has the same
classes for ``redis.asyncio``. ``hotrank.Client(redis, prefix="app:")`` hands out
boards under a key prefix. Results are frozen dataclasses; error replies raise
:class:`ServerError` subclasses that keep the server's message.

``hotrank.module_path()`` is the path of the module (``libhotrank.so``) a wheel bundles;
``python -m hotrank server`` (:mod:`hotrank.server`) starts a local server with it, and
:mod:`hotrank.testing` has a pytest fixture that starts one per test session.
"""

from ._sharded import ShardedHotBoard, ShardedLeaderboard
from ._sync import Client, HotBoard, Leaderboard, View
from ._types import (
    ArticleStats,
    BoardExistsError,
    Entry,
    ExportPage,
    HotArticle,
    HotrankError,
    Id,
    InfoValue,
    InvalidArgumentError,
    NoPermissionError,
    Order,
    Period,
    RankBy,
    Resolution,
    ScoredMember,
    ScoreWithTime,
    Seconds,
    ServerError,
    SetResult,
    Time,
    UnknownCommandError,
    ViewResult,
    ViewStatus,
    WrongTypeError,
)
from .server import module_path

__version__ = "0.1.0"

__all__ = [
    "ArticleStats",
    "BoardExistsError",
    "Client",
    "Entry",
    "ExportPage",
    "HotArticle",
    "HotBoard",
    "HotrankError",
    "Id",
    "InfoValue",
    "InvalidArgumentError",
    "Leaderboard",
    "NoPermissionError",
    "Order",
    "Period",
    "RankBy",
    "Resolution",
    "ScoreWithTime",
    "ScoredMember",
    "Seconds",
    "ServerError",
    "SetResult",
    "ShardedHotBoard",
    "ShardedLeaderboard",
    "Time",
    "UnknownCommandError",
    "View",
    "ViewResult",
    "ViewStatus",
    "WrongTypeError",
    "module_path",
]
