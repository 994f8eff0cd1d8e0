"""The README's examples (its ```pycon blocks) run as doctests against a real server
and the test cluster: every call shows its real output. ``port=6379`` and ``port=7000``
in the examples are replaced by the test servers' ports."""

from __future__ import annotations

import doctest
import re
import shlex
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


def run(blocks_: list[tuple[str, str]], server: Server, cluster: Cluster, flush: bool = True) -> None:
    if flush:
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


MAIN_README = Path(__file__).resolve().parents[3] / "README.md"


def main_readme_commands() -> list[list[str]]:
    """The commands of the main README's example blocks (bare ``` blocks of ``> `` lines,
    the format tests/readme.rs runs), split as redis-cli splits them."""
    out: list[list[str]] = []
    lines = iter(MAIN_README.read_text().splitlines())
    for line in lines:
        if not line.lstrip().startswith("```"):
            continue
        bare = line.strip() == "```"
        for body in lines:
            if body.lstrip().startswith("```"):
                break
            if bare and body.startswith("> "):
                out.append(shlex.split(re.sub(r"  +#.*$", "", body[2:])))
    return out


def hash_tags(names: set[str]) -> set[str]:
    """The hash tags of key names, up to the first ':' inside the braces
    (``hot:{news:00}``, a shard of ``hot:{news}``, has the tag ``news``)."""
    return {m.split(":")[0] for n in names for m in re.findall(r"\{([^}]*)\}", n)}


def test_the_two_readmes_use_boards_of_their_own() -> None:
    main = {c[1] for c in main_readme_commands() if len(c) > 1 and "{" in c[1]}
    python = set(re.findall(r"[\"']([^\"'\s]*\{[^}]*\}[^\"'\s]*)[\"']", README.read_text()))
    assert len(main) >= 2 and len(python) >= 5
    assert not hash_tags(main) & hash_tags(python), (main, python)


def test_the_python_readme_runs_after_the_main_readme_on_one_server(redis_server: Server, cluster: Cluster) -> None:
    require(redis_server, *LIFECYCLE)
    r = redis_server.client()
    r.flushall()
    commands = main_readme_commands()
    assert len(commands) >= 15
    for args in commands:
        r.execute_command(*args)
    assert r.dbsize() > 0
    run(blocks(), redis_server, cluster, flush=False)


def main_readme_python() -> list[str]:
    """The main README's ```python blocks."""
    return re.findall(r"^```python\n(.*?)^```$", MAIN_README.read_text(), re.M | re.S)


def test_the_main_readmes_python_lines_run_and_print_what_their_comments_say(redis_server: Server) -> None:
    """The main README's "Ten lines of Python" run against a real server (its
    ``redis.Redis(...)`` pointed at the test server), and every line that ends in a
    ``# comment`` gives (or prints) what the comment starts with, ``…`` standing for
    any text, as in a doctest."""
    blocks_ = main_readme_python()
    assert len(blocks_) == 1
    redis_server.client().flushall()
    code = blocks_[0].replace("redis.Redis(", f"redis.Redis(port={redis_server.port}, ")
    globs: dict[str, Any] = {}
    checked = 0
    for line in code.splitlines():
        stmt, _, comment = line.partition("  #")
        stmt, comment = stmt.rstrip(), comment.strip()
        if not comment:
            exec(stmt, globs)
            continue
        # The comment shows the value: "True: the publish time is new" shows "True".
        want = comment.split(": ", 1)[0] if not comment.startswith(("[", "(")) and ": " in comment else comment
        if stmt.startswith("print(") and stmt.endswith(")"):
            stmt = stmt[len("print(") : -1]
            got = str(eval(stmt, globs))
        else:
            got = repr(eval(stmt, globs))
        pattern = re.escape(want).replace("…", ".*")
        assert re.fullmatch(pattern, got), f"README: {line.strip()}\n  got: {got}"
        checked += 1
    assert checked >= 5
