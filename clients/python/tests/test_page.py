"""The live page (GET /) in a real browser: headless Chromium from Debian's
``chromium`` and ``chromium-driver`` packages (``make deps`` installs them), driven by
Selenium with both paths given, so nothing is downloaded. The page must show the
board's top 20 in order with PV, UV and score, the leaderboard's top 10, and follow
new views on its own."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from typing import Any, Callable, Iterator

import pytest
import redis
from selenium import webdriver
from selenium.webdriver.chrome.service import Service as DriverService
from selenium.webdriver.common.by import By

import hotrank
from conftest import T0, Server, Service

CHROMIUM = os.environ.get("HOTRANK_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("HOTRANK_CHROMEDRIVER", "/usr/bin/chromedriver")
HOT, LB = "hot:{page}", "lb:{page}"


@pytest.fixture
def browser() -> Iterator[webdriver.Chrome]:
    for path, package in [(CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")]:
        if not os.path.exists(path):
            pytest.fail(f"{path} not found: run `make deps` (apt-get install {package})")
    profile = tempfile.mkdtemp(prefix="hotrank-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", f"--user-data-dir={profile}"]:  # fmt: skip
        options.add_argument(flag)
    os.environ.setdefault("SE_OFFLINE", "true")  # Selenium Manager must never fetch a driver
    driver = webdriver.Chrome(options=options, service=DriverService(executable_path=CHROMEDRIVER))
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def wait_for(what: str, check: Callable[[], Any], timeout: float = 20.0) -> Any:
    """Polls ``check`` until it returns something truthy."""
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.1)


def rows(driver: webdriver.Chrome, table: str) -> list[list[str]]:
    """The text of each cell of each body row of ``#table``."""
    script = f"return [...document.querySelectorAll('#{table} tbody tr')].map(tr => [...tr.cells].map(td => td.textContent))"
    return list(driver.execute_script(script))


def test_page_shows_the_boards_top_in_order_and_refreshes(redis_server: Server, browser: webdriver.Chrome) -> None:
    r = redis_server.client(2)
    r.flushall()
    hot = hotrank.HotBoard(r, HOT)
    for i in range(25):  # article i has i + 1 visitors: distinct scores, a clear order
        hot.publish(f"story-{i:02d}", T0 - 60 * i)
        hot.view_many([(f"story-{i:02d}", f"v{v}", T0) for v in range(i + 1)])
    lb = hotrank.Leaderboard(r, LB)
    for i in range(14):
        lb.set(f"player-{i:02d}", 1000 - 37 * i, at=T0)
    svc = Service(redis_server.port, [HOT], [LB])
    try:
        browser.get(svc.url + "/?refresh=300")
        wait_for("the first refresh", lambda: int(browser.find_element(By.ID, "updated").get_attribute("data-refreshes") or 0) >= 1)
        shown = wait_for("20 articles", lambda: (lambda x: x if len(x) == 20 else None)(rows(browser, "hot")))
        top = hot.top(20, window=72 * 3600)
        assert [row[1] for row in shown] == [a.article for a in top]
        assert [row[0] for row in shown] == [str(i + 1) for i in range(20)]
        for row, article in zip(shown, top):
            stats = hot.stats(article.article)
            assert stats is not None and (row[2], row[3]) == (str(stats.pv), str(stats.uv))
            assert abs(float(row[4]) - article.score) <= 1e-5 * article.score
        board = rows(browser, "leaderboard")
        assert board == [[str(e.rank + 1), e.member, str(e.score)] for e in lb.range(0, 9)]
        assert len(board) == 10
        assert browser.find_element(By.ID, "error").text == ""

        # New views make story-00 the hottest: the page follows without a reload.
        hot.view_many([("story-00", f"fan{v}") for v in range(60)])
        wait_for("story-00 on top", lambda: rows(browser, "hot")[0][1] == "story-00")
        assert [row[1] for row in rows(browser, "hot")] == [a.article for a in hot.top(20, window=72 * 3600)]
    finally:
        svc.stop()
