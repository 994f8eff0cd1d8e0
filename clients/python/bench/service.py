"""``make bench``'s service section: ``python -m hotrank.service`` against a FastAPI
"hello world", both served by the same launcher code (the same socket, uvicorn
settings and loop), loaded by Debian's ``wrk`` (``-t1 -c32``, keep-alive) in turn.

Rows: GET /api/config, POST /api/views (limit off, and with the per-address limit
counting in Redis: views from random addresses behind a trusted proxy), GET /api/hot cached and uncached (``--hot-cache-seconds 0``),
POST /api/views with ``--workers 2``, and the hello world. Each row gives
requests/s, p50 and p99, and its ratio to the hello world; the issue 35 targets are
checked at the end (they are ratios: the machine's load moves every row together).

The rows run interleaved, ``ROUNDS`` times, and each keeps its best run, since the
machine's load moves during the minutes this takes; the last column, the service
processes' CPU time per request (from /proc), moves less with the load.

Worker scaling is measured a second way, since on 2 cores wrk, redis-server and two
workers fight for the same cores: wrk and redis-server pinned to CPU 0, the service to
CPU 1, ``POST /api/views`` with 1 worker, then 2 workers on that same core. Their CPU
time per request (each worker's, and wrk's and redis-server's) gives what 2 workers
would do with a free core each, and the ceiling on 2 cores that wrk and redis-server
share. Skipped with fewer than 2 CPUs.

Every row prints the 1-minute load average of its kept run: other work on the machine
(load above the core count) lowers requests/s and raises latency, and moves CPU time
per request much less.

Both sides run uvicorn with the launcher's settings (``UVICORN_SETTINGS``: uvloop and
httptools when installed, as the ``[service]`` extra does; no proxy headers, access log
or Server header); the first line of the report names the loop and HTTP parser.

``BENCH_UVICORN=h11,asyncio`` (HTTP parser, event loop) runs both sides with those
instead, e.g. to see what uvloop and httptools bring.

Prints Markdown tables. ``BENCH_QUICK=1``: 2 rounds of 2 s instead of 3 of 5 s.
Needs ``wrk`` on PATH (``make bench`` installs it with apt).
"""

from __future__ import annotations

import importlib.util
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any, Callable, Optional

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import conftest  # noqa: E402  (the tests' Server: redis-server with the module)

import hotrank  # noqa: E402

QUICK = os.environ.get("BENCH_QUICK") == "1"
SECONDS = 2 if QUICK else 5
ROUNDS = 2 if QUICK else 3
CONNECTIONS = 32
HOT = "hot:{bench}"
ARTICLES = 2_000
#: Issue 35's measurement before this work (requests/s, same machine and minutes):
#: GET /api/hot?range=72h&limit=20, and the FastAPI hello world.
HOT_BEFORE, HELLO_BEFORE = 484.0, 9081.0

#: BENCH_UVICORN: the HTTP parser and event loop both sides run with, else the launcher's.
STACK = os.environ.get("BENCH_UVICORN", "").split(",") if os.environ.get("BENCH_UVICORN") else []
PRELUDE = (
    f"import hotrank.service.__main__ as launcher\nlauncher.UVICORN_SETTINGS.update(http={STACK[0]!r}, loop={STACK[1]!r})\n"
    if len(STACK) == 2 else ""
)  # fmt: skip
if STACK and not PRELUDE:
    raise SystemExit(f"BENCH_UVICORN must be PARSER,LOOP (e.g. h11,asyncio), got {os.environ['BENCH_UVICORN']!r}")

HELLO = PRELUDE + """
import sys
from fastapi import FastAPI
from hotrank.service.__main__ import listen, serve_app
app = FastAPI()
@app.get("/")
async def hello() -> dict:
    return {"hello": "world"}
sock = listen("127.0.0.1", 0)
print(f"listening on http://127.0.0.1:{sock.getsockname()[1]}", flush=True)
serve_app(app, sock)
"""

POST_VIEW = """
counter = 0
request = function()
  counter = counter + 1
  local body = '{"articleId":"a' .. (counter % 500) .. '","visitorId":"w' .. counter .. '-' .. math.random(1, 1000000000) .. '"}'
  local headers = {["Content-Type"] = "application/json"}
  headers["X-Forwarded-For"] = "10." .. math.random(0, 255) .. "." .. math.random(0, 255) .. "." .. math.random(0, 255)
  return wrk.format("POST", "/api/views", headers, body)
end
"""


class Proc:
    """A server process that prints ``listening on URL`` first."""

    def __init__(self, args: list[str], probe: str, env: Optional[dict[str, str]] = None) -> None:
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()
        if not line.startswith("listening on "):
            self.stop()
            raise SystemExit(f"did not start: {line!r}")
        self.url = line.removeprefix("listening on ")
        deadline = time.monotonic() + 60
        while True:  # wait until every worker answers
            try:
                urllib.request.urlopen(self.url + probe, timeout=30).read()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def service(redis_port: int, *extra: str, cpu: Optional[int] = None) -> Proc:
    """``python -m hotrank.service`` (and its workers) on CPU ``cpu`` if given."""
    launch = PRELUDE + "import sys, hotrank.service.__main__ as m\nm.main(sys.argv[1:])"
    args = [sys.executable, "-c", launch, "--redis-url", f"redis://127.0.0.1:{redis_port}/0", "--port", "0",
            "--hot-board", HOT, "--log-level", "warning", *extra]  # fmt: skip
    if cpu is not None:
        args = ["taskset", "-c", str(cpu), *args]  # workers inherit it when spawned
    env = {k: v for k, v in os.environ.items() if k != "HOTRANK_SERVICE_TOKEN"}
    return Proc(args, "/api/config", env)


def pin(pid: int, cpus: set[int]) -> None:
    """Every thread of ``pid`` onto ``cpus``."""
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            os.sched_setaffinity(int(tid), cpus)
        except OSError:
            pass  # a thread that just ended


UNITS = {"us": 1e-3, "ms": 1.0, "s": 1e3}


def wrk(url: str, script: Optional[str] = None, cpu: Optional[int] = None, midway: Optional[Callable[[], Any]] = None) -> dict[str, Any]:
    """requests/s, p50 and p99 (ms) of ``wrk -t1 -c32 --latency`` (on CPU ``cpu`` if
    given), wrk's own CPU seconds and the load average after it, and what ``midway()``
    returned halfway through the run (``midway``); wrong replies fail."""
    args = ["wrk", "-t1", f"-c{CONNECTIONS}", f"-d{SECONDS}s", "--latency"]
    if cpu is not None:
        args = ["taskset", "-c", str(cpu), *args]
    path = None
    if script:
        fd, path = tempfile.mkstemp(suffix=".lua")
        with os.fdopen(fd, "w") as f:
            f.write(script)
        args += ["-s", path]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        with subprocess.Popen([*args, url], stdout=subprocess.PIPE, text=True) as load:
            seen = None
            if midway is not None:
                time.sleep(SECONDS / 2)
                seen = midway()
            out = load.communicate(timeout=SECONDS + 60)[0]
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    finally:
        if path:
            os.unlink(path)
    if "Non-2xx or 3xx responses" in out:
        raise SystemExit(f"wrk got error replies from {url}:\n{out}")
    rps = float(re.search(r"Requests/sec:\s+([0-9.]+)", out).group(1))  # type: ignore[union-attr]
    lat = {p: float(v) * UNITS[u] for p, v, u in re.findall(r"^\s+(50|99)%\s+([0-9.]+)(us|ms|s)\s*$", out, re.M)}
    wrk_cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return {"rps": rps, "p50": lat["50"], "p99": lat["99"], "wrk_cpu": wrk_cpu, "load": os.getloadavg()[0], "midway": seen}


def cpu_of(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` (all its threads) so far; 0 if gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of ``pid`` and of its children (workers) so far."""
    return sum(cpu_of(p) for p in [pid, *children(pid)])


def children(pid: int) -> list[int]:
    out = []
    for p in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{p}/stat") as f:
                if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                    out.append(int(p))
        except OSError:
            continue
    return out


def serving(proc: Proc) -> list[int]:
    """The processes that answer requests: the workers uvicorn spawned (not
    multiprocessing's resource tracker), or the launcher itself with one worker."""
    workers = []
    for p in children(proc.proc.pid):
        try:
            with open(f"/proc/{p}/cmdline", "rb") as f:
                if b"spawn_main" in f.read():
                    workers.append(p)
        except OSError:
            continue
    return workers or [proc.proc.pid]


def connections(pids: list[int], port: int) -> list[int]:
    """How many established TCP connections to local ``port`` each of ``pids`` holds
    (its socket inodes in /proc/PID/fd against /proc/net/tcp and tcp6)."""
    established = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                rows = f.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "01":
                established.add(fields[9])
    counts = []
    for pid in pids:
        n = 0
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
                n += link.startswith("socket:[") and link[8:-1] in established
        except OSError:
            pass
        counts.append(n)
    return counts


def run(proc: Proc, path: str, script: Optional[str], server_pid: int, cpu: Optional[int] = None) -> dict[str, Any]:
    """One wrk run against ``proc`` (wrk on CPU ``cpu`` if given): requests/s, latency,
    load, and CPU ms per request of the service (``cpu_ms``: launcher and workers),
    each serving process's share of it (``shares``) and of wrk's connections halfway
    through (``conns``), and CPU ms per request of wrk + redis-server (``other_ms``)."""
    workers = serving(proc)
    c0, w0, r0 = cpu_seconds(proc.proc.pid), [cpu_of(w) for w in workers], cpu_of(server_pid)
    port = int(proc.url.rsplit(":", 1)[1])
    m: dict[str, Any] = dict(wrk(proc.url + path, script, cpu=cpu, midway=lambda: connections(workers, port)))
    m["conns"] = m.pop("midway")
    n = max(1.0, m["rps"] * SECONDS)
    spent = [cpu_of(w) - c for w, c in zip(workers, w0)]
    m["cpu_ms"] = 1000 * (cpu_seconds(proc.proc.pid) - c0) / n
    m["shares"] = [x / sum(spent) if sum(spent) else 0.0 for x in spent]
    m["other_ms"] = 1000 * (m["wrk_cpu"] + cpu_of(server_pid) - r0) / n
    return m


def uvicorn_stack() -> str:
    """The event loop and HTTP parser both sides run with (uvicorn's "auto" picks)."""
    if STACK:
        return f"uvicorn {STACK[1]} + {STACK[0]} (BENCH_UVICORN)"
    loop = "uvloop" if importlib.util.find_spec("uvloop") else "asyncio"
    parser = "httptools" if importlib.util.find_spec("httptools") else "h11"
    return f"uvicorn {loop} + {parser}"


def main() -> None:
    if not shutil.which("wrk"):
        raise SystemExit("wrk not found: make bench installs it (apt-get install wrk)")
    server = conftest.Server(os.environ.get("HOTRANK_REDIS_SERVER", "redis-server"))
    procs: list[Proc] = []
    try:
        r = server.client()
        hot = hotrank.HotBoard(r, HOT)
        now = int(time.time())
        for i in range(ARTICLES):
            hot.publish(f"a{i}", now - 3600 - 60 * i)
        hot.view_many([(f"a{i % ARTICLES}", f"v{i}", now - 60) for i in range(20_000)])

        def start(p: Proc) -> Proc:
            procs.append(p)
            return p

        hello = start(Proc([sys.executable, "-c", HELLO], "/"))
        one = start(service(server.port, "--views-per-minute", "0"))
        # Readers behind a trusted proxy, each view from one of 16 M addresses: the
        # default limit (60 a minute) counts every view in Redis and refuses none.
        limited = start(service(server.port, "--trusted-proxy", "127.0.0.1/32"))
        exact = start(service(server.port, "--hot-cache-seconds", "0", "--views-per-minute", "0"))
        two = start(service(server.port, "--views-per-minute", "0", "--workers", "2"))
        # Worker scaling with wrk and redis-server on CPU 0, the workers on CPU 1.
        cpus = sorted(os.sched_getaffinity(0))
        pinned = []
        if len(cpus) >= 2 and shutil.which("taskset"):
            pinned = [
                ("POST /api/views, 1 worker on CPU 1", start(service(server.port, "--views-per-minute", "0", cpu=cpus[1]))),
                ("POST /api/views, 2 workers on CPU 1", start(service(server.port, "--views-per-minute", "0", "--workers", "2", cpu=cpus[1]))),
            ]  # fmt: skip
        hot_path = "/api/hot?range=72h&limit=20"
        plan = [
            ("FastAPI hello world (the floor)", hello, "/", None),
            ("GET /api/config", one, "/api/config", None),
            ("POST /api/views (no limit)", one, "", POST_VIEW),
            ("POST /api/views (per-address limit on)", limited, "", POST_VIEW),
            ("GET /api/hot cached", one, hot_path, None),
            ("GET /api/hot uncached", exact, hot_path, None),
            ("POST /api/views, 2 workers (no limit)", two, "", POST_VIEW),
        ]
        best: dict[str, dict[str, Any]] = {}

        def keep(name: str, m: dict[str, Any]) -> None:
            if name not in best or m["rps"] > best[name]["rps"]:
                best[name] = m

        for _ in range(ROUNDS):  # rows interleaved, best run kept: the machine's load moves
            for name, proc, path, script in plan:
                keep(name, run(proc, path, script, server.proc.pid))
            if pinned:
                pin(server.proc.pid, {cpus[0]})
                for name, proc in pinned:
                    keep(name, run(proc, "", POST_VIEW, server.proc.pid, cpu=cpus[0]))
                pin(server.proc.pid, set(cpus))
        report([(name, best[name]) for name, *_ in plan])
        x = None
        if pinned:
            rows, unpinned = [(name, best[name]) for name, _ in pinned], best["POST /api/views, 2 workers (no limit)"]
            report_scaling(rows, unpinned)
            x = scaling(rows, unpinned)
        report_targets(best, x)
    finally:
        for p in procs:
            p.stop()
        server.stop()


def report(rows: list[tuple[str, dict[str, Any]]]) -> None:
    """The main table: every route against the hello world."""
    floor = dict(rows)["FastAPI hello world (the floor)"]["rps"]
    print(f"\n### hotrank.service vs a FastAPI hello world (wrk -t1 -c{CONNECTIONS}, best of {ROUNDS} runs of {SECONDS} s, 1 worker unless said, {uvicorn_stack()})\n")
    print("| route | requests/s | × hello world | p50 ms | p99 ms | service CPU ms per request | load |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, m in rows:
        print(f"| {name} | {m['rps']:,.0f} | {m['rps'] / floor:.2f} | {m['p50']:.2f} | {m['p99']:.2f} | {m['cpu_ms']:.2f} | {m['load']:.1f} |")


def scaling(rows: list[tuple[str, dict[str, Any]]], unpinned: dict[str, Any]) -> dict[str, float]:
    """What the pinned rows (1 worker, then 2, on one core) give for 2 workers:

    - ``one_core``: 2 workers' requests/s over one worker's, on that one core;
    - ``cpu``: 2 workers' CPU per request over one worker's;
    - ``free``: 2 workers over one with a free core each (wrk and Redis elsewhere):
      ``2 x CPU(1) / CPU(2)``. wrk is a closed loop (each connection sends its next
      request when the last is answered), so each worker that holds a few of its 32
      connections keeps its core busy whatever the split: the workers holding none in
      ``unpinned`` (the 2-worker row of the main table) do not count;
    - ``ceiling``: the most 2 workers can give on 2 cores that wrk and redis-server
      share: 2 cores' worth of CPU time over all the CPU time a request takes,
      against one worker on its own core."""
    (_, one), (_, two) = rows
    c1, c2, other = one["cpu_ms"], two["cpu_ms"], one["other_ms"]
    busy = sum(1 for n in unpinned["conns"] if n > 0)
    return {"one_core": two["rps"] / one["rps"], "cpu": c2 / c1, "free": busy * c1 / c2, "ceiling": 2 * c1 / (c2 + other)}


def report_scaling(rows: list[tuple[str, dict[str, Any]]], unpinned: dict[str, Any]) -> None:
    """The pinned worker-scaling table, and what it gives for 2 workers (:func:`scaling`)."""
    print(f"\n### Worker scaling: POST /api/views (no limit), wrk and redis-server on CPU 0, the service on CPU 1 (best of {ROUNDS} runs of {SECONDS} s)\n")
    print("| row | requests/s | p50 ms | worker CPU ms per request | each worker's CPU share | wrk + redis-server CPU ms per request | load |")
    print("|---|---:|---:|---:|---|---:|---:|")
    for name, m in rows:
        shares = " / ".join(f"{x:.0%}" for x in m["shares"])
        print(f"| {name} | {m['rps']:,.0f} | {m['p50']:.2f} | {m['cpu_ms']:.3f} | {shares} | {m['other_ms']:.3f} | {m['load']:.1f} |")
    x = scaling(rows, unpinned)
    conns = " / ".join(str(n) for n in unpinned["conns"])
    print(f"\n- 2 workers on one core: {x['one_core']:.2f}x one worker; CPU per request {x['cpu']:.2f}x one worker's.")
    print(f"- With a free core each (wrk and Redis elsewhere), projected from CPU time per request: {x['free']:.2f}x one worker "
          f"(wrk's {CONNECTIONS} connections held {conns} by the workers of the unpinned 2-worker run).")  # fmt: skip
    print(f"- On 2 cores that wrk and redis-server share: at most {x['ceiling']:.2f}x (issue 35's target: >= 1.5x).")


def report_targets(by: dict[str, dict[str, Any]], x: Optional[dict[str, float]]) -> None:
    """Issue 35's targets, twice: as measured (requests/s and latency, which other work
    on the machine moves), and from CPU time per request, what the service does with a
    free core: requests/s about 1 / CPU per request, p50 at 32 connections about
    32 x CPU per request (Little's law, every request queued behind the others), and
    2 workers as :func:`scaling` projects them.
    ``x``: :func:`scaling`'s projections (None: no pinned rows)."""
    hello, config = by["FastAPI hello world (the floor)"], by["GET /api/config"]
    views, cached, uncached = by["POST /api/views (no limit)"], by["GET /api/hot cached"], by["GET /api/hot uncached"]
    two = by["POST /api/views, 2 workers (no limit)"]
    before = HOT_BEFORE / HELLO_BEFORE

    def rps(m: dict[str, Any]) -> float:
        return float(m["rps"]) / hello["rps"]

    def cpu(m: dict[str, Any]) -> float:
        return float(hello["cpu_ms"]) / m["cpu_ms"]

    checks = [  # (target, threshold, measured, from CPU, unit)
        ("GET /api/config p50 under 10 ms", 10.0, config["p50"], CONNECTIONS * config["cpu_ms"], " ms"),
        ("POST /api/views >= 0.25x hello world", 0.25, rps(views), cpu(views), "x"),
        ("cached GET /api/hot >= 0.5x hello world", 0.5, rps(cached), cpu(cached), "x"),
        ("uncached GET /api/hot >= 2x before (484/s against 9,081/s hello world, as ratios)", 2.0,
         rps(uncached) / before, cpu(uncached) / before, "x"),
        ("2 workers POST /api/views >= 1.5x one", 1.5, two["rps"] / views["rps"], x["free"] if x else float("nan"), "x"),
    ]  # fmt: skip

    def verdict(target: str, threshold: float, got: float) -> str:
        if got != got:  # nan: not measured
            return "n/a"
        ok = got < threshold if target.startswith("GET /api/config p50") else got >= threshold
        return "yes" if ok else "NO"

    print("\n| issue 35 target | measured | met | from CPU time per request | met |")
    print("|---|---:|---|---:|---|")
    for target, threshold, got, projected, unit in checks:
        print(f"| {target} | {got:.2f}{unit} | {verdict(target, threshold, got)} | {projected:.2f}{unit} | {verdict(target, threshold, projected)} |")


if __name__ == "__main__":
    main()
