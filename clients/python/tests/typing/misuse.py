"""Misuses of typed results: mypy --strict must reject every line marked ``# E:``."""

from __future__ import annotations

import redis

import hotrank


def misuse(r: redis.Redis) -> None:
    board = hotrank.HotBoard(r, "hot:{x}")
    view = board.view("a1", "v1")
    view.pv.upper()  # E: "int" has no attribute "upper"
    view.score = 1.0  # E: read-only
    if view.status == "countd":  # E: Non-overlapping equality check
        pass
    top = board.top()
    top[0].articles  # E: has no attribute "articles"
    board.top(by="rising")  # E: incompatible type "Literal['rising']"
    trending: float = board.stats("a1").trending  # E: Item "None" of "ArticleStats | None"
    lb = hotrank.Leaderboard(r, "lb:{x}")
    lb.set("m", 1, best=True) + 1  # E: Unsupported operand types
    written: bool = lb.set("m", 1)  # E: Incompatible types in assignment
    lb.score("m") + 1  # E: Unsupported operand types
    board.view("a1", 42)  # E: incompatible type "int"
    lb.rank("m", period="year")  # E: incompatible type "Literal['year']"
