"""The README's examples (its ```pycon blocks) run as doctests against a real server
and the test cluster: every call shows its real output. ``port=6379`` and ``port=7000``
in the examples are replaced by the test servers' ports."""

from __future__ import annotations

import doctest
import re
from pathlib import Path
from typing import Any

import pytest
import redis

from conftest import Cluster, Server, require

README = Path(__file__).resolve().parents[1] / "README.md"
LIFECYCLE = ("HOT.CREATE", "HOT.ALTER", "HOT.INFO", "HOT.EXPORT", "HOT.REM", "HOT.DROP", "RANK.INFO")


def blocks() -> list[tuple[str, str]]:
    """(heading, code) of each ```pycon block, in order."""
    out, heading = [], ""
    for m in re.finditer(r"^## ([^\n]*)$|^```pycon\n(.*?)^```$", README.read_text(), re.M | re.S):
        if m.group(1):
            heading = m.group(1)
        else:
            out.append((heading, m.group(2)))
    return out


def run(blocks_: list[tuple[str, str]], server: Server, cluster: Cluster) -> None:
    server.client().flushall()
    for node in cluster.nodes:
        redis.Redis(port=node.port).flushall()
    globs: dict[str, Any] = {}
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    report: list[str] = []
    for heading, code in blocks_:
        code = code.replace("port=6379", f"port={server.port}").replace("port=7000", f"port={cluster.port}")
        test = parser.get_doctest(code, globs, f"README: {heading}", str(README), 0)
        result = runner.run(test, out=report.append, clear_globs=False)
        assert result.failed == 0, "".join(report)
        globs = test.globs


def test_readme_examples_run(redis_server: Server, cluster: Cluster) -> None:
    todo = [b for b in blocks() if b[0] != "Board lifecycle"]
    assert len(todo) >= 5
    run(todo, redis_server, cluster)


def test_readme_lifecycle_examples_run(redis_server: Server, cluster: Cluster) -> None:
    require(redis_server, *LIFECYCLE)
    run(blocks(), redis_server, cluster)
