"""``python -m hotrank archive``'s options and expected failures: a bad option exits 2
with argparse's usage line before anything connects (a Redis that is down would give
1); a Redis that is down, a board that does not exist, a leaderboard or another key
exits 1 with one line, never a traceback (``--debug`` shows one)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any, List, Tuple

import pytest

import hotrank
from conftest import T0, Server, free_port
from hotrank import archive


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hotrank", "archive", *args], capture_output=True, text=True, timeout=120)


def main(capsys: Any, *args: str) -> Tuple[int, str, str]:
    """archive.main in this process: (exit status, stdout, stderr)."""
    try:
        code = archive.main(list(args))
    except SystemExit as e:
        code = int(e.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


def down() -> str:
    """A Redis URL nobody listens on."""
    return f"redis://127.0.0.1:{free_port()}/0"


BAD_OPTIONS: List[List[str]] = [
    ["--every", "nan"], ["--every", "inf"], ["--every", "-inf"], ["--every", "0"], ["--every", "-1"],
    ["--every", "1e400"], ["--every", "0.5"], ["--every", "31d"], ["--every", "1x"], ["--every", "nanh"],
    ["--count", "0"], ["--count", "-5"], ["--count", "20000"], ["--count", "1.5"],
    ["--to", "mysql://u@localhost/db"], ["--to", "mysql+pymysql://u@localhost/db"],
    ["--to", "postgresql+psycopg2://u@localhost/db"], ["--to", "oracle://u@h/db"], ["--to", "nonsense"],
    ["--redis", "http://127.0.0.1:6379"], ["--redis", "redis://127.0.0.1:port/0"],
]  # fmt: skip


@pytest.mark.parametrize("bad", BAD_OPTIONS, ids=lambda a: " ".join(a))
def test_a_bad_option_is_a_usage_error_before_connecting(bad: List[str], capsys: Any) -> None:
    code, out, err = main(capsys, "--redis", down(), "--board", "hot:{x}", *bad)
    assert code == 2, err
    lines = err.strip().splitlines()
    assert lines[0].startswith("usage: python -m hotrank archive")
    errors = [line for line in lines if "error:" in line]
    assert len(errors) == 1 and f"argument {bad[0]}" in errors[0], err
    assert "Traceback" not in err and out == ""


def test_good_durations(capsys: Any) -> None:
    assert [archive.parse_every(t) for t in ("1", "90", "15m", "1h", "1.5h", "7d", "30d", " 2H ")] == [
        1, 90, 900, 3600, 5400, 604_800, 2_592_000, 7200,
    ]  # fmt: skip
    assert [archive.parse_count(t) for t in ("1", "500", "10000")] == [1, 500, 10_000]


def test_bad_options_exit_2_as_a_command(tmp_path: Path) -> None:
    for bad in (["--every", "nan"], ["--count", "0"], ["--to", "mysql://u@h/db"]):
        out = run("--redis", down(), "--board", "hot:{x}", "--to", f"sqlite:///{tmp_path}/x.db", *bad)
        assert out.returncode == 2, out.stderr
        assert "Traceback" not in out.stderr and "error: argument" in out.stderr
    assert not (tmp_path / "x.db").exists()


def test_a_redis_that_is_down_is_one_line(tmp_path: Path) -> None:
    url = down()
    out = run("--redis", url, "--board", "hot:{x}", "--to", f"sqlite:///{tmp_path}/x.db")
    assert out.returncode == 1
    assert out.stderr.strip().splitlines() == [out.stderr.strip()]
    assert out.stderr.startswith(f"error: cannot reach Redis at {url}: ")
    # --debug adds the traceback.
    out = run("--redis", url, "--board", "hot:{x}", "--to", f"sqlite:///{tmp_path}/x.db", "--debug")
    assert out.returncode == 1 and "Traceback" in out.stderr


def test_a_database_that_is_down_is_one_line(redis_server: Server, capsys: Any) -> None:
    hotrank.HotBoard(redis_server.client(), "hot:{dbdown}").view("a", "v", T0)
    url = f"postgresql://nobody@127.0.0.1:{free_port()}/db"
    code, out, err = main(capsys, "--redis", f"redis://127.0.0.1:{redis_server.port}/0", "--board", "hot:{dbdown}", "--to", url)
    assert code == 1 and out == ""
    assert len(err.strip().splitlines()) == 1 and err.startswith(f"error: database {url}: "), err


@pytest.fixture
def boards(server: Server) -> Any:
    """A HOT board, a leaderboard, a string and a sharded leaderboard's record, on
    redis-server and on valkey-server."""
    redis_server = server
    r = redis_server.client()
    for k in ("hot:{real}", "lb:{rank}", "str:{x}", "hot:{sharded-lb}:sharding"):
        r.delete(k)
    hotrank.HotBoard(r, "hot:{real}").view("a", "v", T0)
    hotrank.Leaderboard(r, "lb:{rank}").incr("m", 5)
    r.set("str:{x}", "text")
    r.hset("hot:{sharded-lb}:sharding", mapping={"kind": "rank", "shards": 2, "hash": "crc32", "settings": "{}"})
    return redis_server


@pytest.mark.parametrize(
    "board,message",
    [
        ("hot:{misspelled}", "error: board 'hot:{misspelled}' does not exist (HOT.INFO reports no keys): check the name"),
        ("lb:{rank}", "error: 'lb:{rank}' is a leaderboard (RANK), not a HOT board"),
        ("str:{x}", "error: 'str:{x}' is not a HOT board: WRONGTYPE"),
        ("hot:{sharded-lb}", "error: 'hot:{sharded-lb}' is a sharded leaderboard (RANK), not a HOT board"),
    ],
)
def test_a_board_that_is_not_a_hot_board_is_one_line(
    boards: Server, board: str, message: str, tmp_path: Path, capsys: Any
) -> None:
    """The bad board is one line and skipped, the good one (given before and after it)
    is archived, and the exit status is 1; alone, the bad board is the only output."""
    db = tmp_path / "x.db"
    url = f"redis://127.0.0.1:{boards.port}/0"
    for order in (["hot:{real}", board], [board, "hot:{real}"]):
        args = [a for b in order for a in ("--board", b)]
        code, out, err = main(capsys, "--redis", url, *args, "--to", f"sqlite:///{db}")
        assert code == 1, err
        assert len(err.strip().splitlines()) == 1 and err.startswith(message), err
        assert out.startswith("archived 1 articles of 1 board(s) (1 key(s))") and out.strip().endswith("; 1 board(s) failed")
        assert [(row[0], row[2]) for row in archive.Store(f"sqlite:///{db}").rows()] == [("hot:{real}", "a")]
    code, out, err = main(capsys, "--redis", url, "--board", board, "--board", board, "--to", f"sqlite:///{db}")
    assert code == 1 and out == "" and err.splitlines() == [err.splitlines()[0]] * 2, err


def test_a_missing_board_under_an_allkeys_policy_does_not_exist(server: Server, tmp_path: Path, capsys: Any) -> None:
    """Under allkeys-lru with maxmemory set, HOT.INFO of a missing board is the module's "board identity
    missing" error: the archiver says the board does not exist (it may have been
    evicted), one line, and archives the other board."""
    r = server.client()
    for key in ("hot:{never-made}", "hot:{here}"):
        hotrank.HotBoard(r, key).drop()  # every key of the board
    hotrank.HotBoard(r, "hot:{here}").view("a", "v", T0)
    before = r.config_get("maxmemory*")
    r.config_set("maxmemory", "1gb")  # the policy matters only with a limit; nothing is evicted under 1 GB
    r.config_set("maxmemory-policy", "allkeys-lru")
    try:
        code, out, err = main(
            capsys, "--redis", f"redis://127.0.0.1:{server.port}/0", "--board", "hot:{never-made}", "--board", "hot:{here}",
            "--to", f"sqlite:///{tmp_path}/x.db",
        )  # fmt: skip
    finally:
        r.config_set("maxmemory-policy", before["maxmemory-policy"])
        r.config_set("maxmemory", before["maxmemory"])
    assert code == 1 and out.startswith("archived 1 articles of 1 board(s)"), (code, out, err)
    assert err.splitlines() == [
        "error: board 'hot:{never-made}' does not exist (no HOT board record; maxmemory-policy allkeys-lru "
        "may have evicted it whole): check the name"
    ], err


def test_every_runs_again_and_a_later_failure_does_not_stop_it(redis_server: Server, tmp_path: Path) -> None:
    """--every 1: a run each second; a board gone in between is one line, the next run
    archives again once it is back."""
    import os
    import signal
    import time

    r = redis_server.client()
    board = hotrank.HotBoard(r, "hot:{every}")
    r.delete(board.key)
    board.view("a", "v", T0)
    proc = subprocess.Popen(
        [sys.executable, "-m", "hotrank", "archive", "--redis", f"redis://127.0.0.1:{redis_server.port}/0",
         "--board", board.key, "--to", f"sqlite:///{tmp_path}/e.db", "--every", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None and proc.stderr is not None
        assert proc.stdout.readline().startswith("archived 1 articles")
        board.drop()
        assert proc.stderr.readline().startswith("error: board 'hot:{every}' does not exist")
        board.view("b", "v", T0)
        deadline = time.monotonic() + 30
        while not proc.stdout.readline().startswith("archived 1 articles"):
            assert time.monotonic() < deadline
        assert proc.poll() is None
    finally:
        os.kill(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
    assert {row[2] for row in archive.Store(f"sqlite:///{tmp_path}/e.db").rows()} == {"a", "b"}


def test_a_user_without_permission_is_one_line(redis_server: Server, tmp_path: Path, capsys: Any) -> None:
    r = redis_server.client()
    hotrank.HotBoard(r, "hot:{acl}").view("a", "v", T0)
    r.execute_command("ACL", "SETUSER", "archiver", "reset", "on", ">s3cret", "~*", "+@all", "-hot.info")
    try:
        url = f"redis://archiver:s3cret@127.0.0.1:{redis_server.port}/0"
        code, out, err = main(capsys, "--redis", url, "--board", "hot:{acl}", "--to", f"sqlite:///{tmp_path}/a.db")
        assert code == 1 and out == "" and len(err.strip().splitlines()) == 1, err
        assert err.startswith("error: board 'hot:{acl}': Redis replied: NOPERM") and "s3cret" not in err, err
    finally:
        r.execute_command("ACL", "DELUSER", "archiver")


def test_without_sqlalchemy_it_says_what_to_install(monkeypatch: Any, capsys: Any) -> None:
    monkeypatch.setitem(sys.modules, "sqlalchemy", None)  # as if not installed
    code, out, err = main(capsys, "--redis", down(), "--board", "hot:{x}")
    assert code == 2 and "error: argument --to: the archiver needs SQLAlchemy: pip install 'hotrank[archive]'" in err
    assert "Traceback" not in err
