"""Durations as people write them: ``90`` (seconds), ``90s``, ``15m``, ``72h``, ``7d``.

The one parser of the package: ``HotBoard.top(window="72h")`` (sync, asyncio and
sharded clients), every other ``Seconds`` argument, and the service's ``range``
all read durations through :func:`parse_duration`, the same units HOT.TOP's
``WINDOW`` accepts.
"""

from __future__ import annotations

import re

_DURATION_RE = re.compile(r"([0-9]{1,15})([smhd]?)")
#: Seconds per unit suffix (no suffix: seconds).
UNIT_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(text: str, name: str = "duration") -> int:
    """Whole seconds from ``"90"``, ``"90s"``, ``"15m"``, ``"72h"`` or ``"7d"``
    (digits, then at most one unit ``s``, ``m``, ``h`` or ``d``; surrounding spaces
    are ignored). Ranges are the caller's to check.

    Raises ValueError, naming ``name``, for anything else (``"3w"``, ``"1.5h"``,
    ``"-5"``, ``""``).
    """
    m = _DURATION_RE.fullmatch(text.strip())
    if not m:
        raise ValueError(f"{name} must be seconds or a number with a unit s, m, h or d (e.g. 90, 15m, 72h, 7d), got {text!r}")
    return int(m.group(1)) * UNIT_SECONDS[m.group(2)]
