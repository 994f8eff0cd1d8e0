"""docs/archive.md's examples run: each ```console block's commands (``$ …``) in a
shell against the test redis-server (``6379`` replaced by its port), in a temporary
directory, their output (stdout and stderr) compared with the text below them
(``...`` matches anything); then its ```pycon blocks as doctests in that directory."""

from __future__ import annotations

import doctest
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import List, Tuple

import pytest

import hotrank
from conftest import REPO, T0, Server

DOC = REPO / "docs" / "archive.md"


def blocks(kind: str) -> List[str]:
    return re.findall(rf"^```{kind}\n(.*?)^```$", DOC.read_text(), re.M | re.S)


def commands(block: str) -> List[Tuple[str, str]]:
    """(command, expected output) of each ``$ `` line of a console block."""
    out: List[Tuple[str, str]] = []
    for line in block.splitlines(keepends=True):
        if line.startswith("$ "):
            out.append((line[2:].strip(), ""))
        else:
            out[-1] = (out[-1][0], out[-1][1] + line)
    return out


@pytest.fixture
def news(redis_server: Server) -> Server:
    r = redis_server.client(decode_responses=False)
    # A fresh dataset: deleting the board key alone leaves another test's articles
    # (counters, index) under hot:{news}, which HOT.EXPORT still walks.
    r.flushall()
    board = hotrank.HotBoard(r, "hot:{news}")
    board.view_many([(b"caf\xe9", b"v1", T0), (b"caf\xe9", b"v2", T0), (b"a\x00b", b"v1", T0), (b"", b"v1", T0),
                     ("\U0001f525 breaking", b"v1", T0)])  # fmt: skip
    hotrank.Leaderboard(r, "lb:{games}").incr("amy", 5)
    return redis_server


def test_archive_doc_examples_run(news: Server, tmp_path: Path) -> None:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}", "COLUMNS": "100"}
    checker = doctest.OutputChecker()
    ran = 0
    for block in blocks("console"):
        for cmd, want in commands(block):
            cmd = cmd.replace("6379", str(news.port))
            got = subprocess.run(["bash", "-c", cmd], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
            text = got.stdout + got.stderr if "echo" not in cmd else got.stderr + got.stdout
            text = text.replace(str(news.port), "6379")
            assert checker.check_output(want, text, doctest.ELLIPSIS), f"$ {cmd}\nwant:\n{want}\ngot:\n{text}"
            ran += 1
    assert ran >= 6
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        for i, block in enumerate(blocks("pycon")):
            test = doctest.DocTestParser().get_doctest(block, {}, f"archive.md pycon {i}", str(DOC), 0)
            report: List[str] = []
            result = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS).run(test, out=report.append)
            assert result.failed == 0, "".join(report)
    finally:
        os.chdir(cwd)
