"""mypy --strict passes on the package and on a user script that calls every documented
method, and rejects misuses of typed results; the user script also runs for real."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from pathlib import Path

import redis.asyncio

from conftest import T0, Server, require

HERE = Path(__file__).resolve().parent
PACKAGE = HERE.parent / "src" / "hotrank"


def mypy(*paths: Path) -> subprocess.CompletedProcess[str]:
    """``python -m mypy --strict`` on ``paths`` (with the package importable)."""
    cmd = [sys.executable, "-m", "mypy", "--strict", "--no-error-summary", "--hide-error-context", *map(str, paths)]
    env = dict(os.environ, MYPYPATH=str(HERE / "typing"))
    return subprocess.run(cmd, capture_output=True, text=True, cwd=HERE.parent, env=env, timeout=300)


def test_mypy_strict_passes_on_the_package_and_the_user_script() -> None:
    out = mypy(PACKAGE, HERE / "typing" / "user_script.py")
    assert out.returncode == 0, out.stdout + out.stderr


def test_mypy_strict_flags_each_misuse_of_a_typed_result() -> None:
    path = HERE / "typing" / "misuse.py"
    out = mypy(path)
    assert out.returncode == 1, out.stdout + out.stderr
    errors: dict[int, str] = {}
    for line in out.stdout.splitlines():
        m = re.match(r".*misuse\.py:(\d+): error: (.*)", line)
        if m:
            errors.setdefault(int(m.group(1)), "")
            errors[int(m.group(1))] += m.group(2)
    expected = {
        n: text.split("# E: ", 1)[1]
        for n, text in enumerate(path.read_text().splitlines(), start=1)
        if "# E: " in text
    }
    assert len(expected) == 11
    for n, needle in expected.items():
        assert n in errors, f"mypy did not flag line {n} ({needle}):\n{out.stdout}"
        assert needle.lower() in errors[n].lower(), f"line {n}: wanted {needle!r}, mypy said {errors[n]!r}"
    assert set(errors) == set(expected), f"unexpected errors:\n{out.stdout}"


def test_user_script_runs_against_a_real_server(redis_server: Server) -> None:
    sys.path.insert(0, str(HERE / "typing"))
    try:
        import user_script
    finally:
        sys.path.pop(0)
    r = redis_server.client(3)
    r.flushall()
    out = user_script.sync_demo(r, T0)
    assert out[1].status == "counted" and out[-1] >= 4  # the view; the drop: board, layout, day and week boards
    ar = redis.asyncio.Redis(port=redis_server.port)

    async def main() -> list[object]:
        try:
            return await user_script.async_demo(ar, T0)
        finally:
            await ar.aclose()

    aout = asyncio.run(main())
    assert aout[1].status == "counted"  # type: ignore[attr-defined]
    require(redis_server, "HOT.CREATE", "HOT.ALTER", "HOT.INFO", "HOT.EXPORT", "HOT.REM", "HOT.DROP", "RANK.INFO")
    user_script.lifecycle_demo(r)
