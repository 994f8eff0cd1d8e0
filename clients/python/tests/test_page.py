"""The live page (GET /) in a real browser: headless Chromium from Debian's
``chromium`` and ``chromium-driver`` packages (``make deps`` installs them), driven by
Selenium with both paths given, so nothing is downloaded. The page must show the
board's top 20 in order with PV, UV and score, the leaderboard's top 10, and follow
new views on its own; a view posted between two refreshes moves its article, and the
row says so (up, down, new); an unknown board fails its own panel only; the board
picker is filled from /api/config; nothing overflows at a phone's width.

``HOTRANK_PAGE_SCREENSHOT=docs/images/live-page.png`` saves the screenshots kept in the
docs (the phone's as ``live-page-phone.png``)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
import urllib.request
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
                 "--disable-dev-shm-usage", "--window-size=1200,900", f"--user-data-dir={profile}"]:  # fmt: skip
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
        assert [row[2] for row in shown] == [a.article for a in top]
        assert [row[0] for row in shown] == [str(i + 1) for i in range(20)]
        for row, article in zip(shown, top):
            stats = hot.stats(article.article)
            assert stats is not None and (row[3], row[4]) == (str(stats.pv), str(stats.uv))
            # The page asked at its own moment: scores decay ~1.6e-5 per second at this age.
            assert abs(float(row[5]) - article.score) <= 1e-3 * article.score
        board = rows(browser, "leaderboard")
        assert board == [[str(e.rank + 1), "", e.member, str(e.score)] for e in lb.range(0, 9)]
        assert len(board) == 10
        assert browser.find_element(By.ID, "error").text == ""

        # New views make story-00 the hottest: the page follows without a reload.
        hot.view_many([("story-00", f"fan{v}") for v in range(60)])
        wait_for("story-00 on top", lambda: rows(browser, "hot")[0][2] == "story-00")
        assert [row[2] for row in rows(browser, "hot")] == [a.article for a in hot.top(20, window=72 * 3600)]
    finally:
        svc.stop()


def refreshes(driver: webdriver.Chrome) -> int:
    return int(driver.find_element(By.ID, "updated").get_attribute("data-refreshes") or 0)


#: The service token of the page test's service (the score route needs it).
TOKEN = "page-test-token"


def post(url: str, body: dict[str, Any]) -> Any:
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {TOKEN}"}
    req = urllib.request.Request(url, json.dumps(body).encode(), headers, method="POST")
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.loads(resp.read())


def moves(driver: webdriver.Chrome, table: str) -> dict[str, tuple[str, str]]:
    """id -> (data-move, the move cell's text) of each row."""
    script = (f"return [...document.querySelectorAll('#{table} tbody tr[data-id]')]"
              ".map(tr => [tr.dataset.id, tr.dataset.move, tr.cells[1].textContent])")  # fmt: skip
    return {i: (m, t) for i, m, t in driver.execute_script(script)}


def no_overflow(driver: webdriver.Chrome) -> bool:
    return bool(driver.execute_script("return document.documentElement.scrollWidth <= window.innerWidth"))


@pytest.fixture
def boards(redis_server: Server) -> Any:
    r = redis_server.client(2)
    r.flushall()
    hot = hotrank.HotBoard(r, HOT)
    hot.create(trending_half_life="1h")  # the page shows its trending list beside the hot one
    for i in range(12):  # article i has 12 - i visitors: story-00 first
        hot.publish(f"story-{i:02d}", T0 - 60 * i)
        hot.view_many([(f"story-{i:02d}", f"v{v}", T0) for v in range(12 - i)])
    other = hotrank.HotBoard(r, "hot:{other}")
    other.view_many([("elsewhere", "v1", T0), ("elsewhere", "v2", T0), ("also-here", "v1", T0)])
    lb = hotrank.Leaderboard(r, LB)
    for i in range(12):
        lb.set(f"player-{i:02d}", 1000 - 37 * i, at=T0)
    # The site's backend (holding the token) sends the views and the score; the hot
    # list is not cached, so "refresh now" shows a view at once.
    svc = Service(redis_server.port, [HOT, "hot:{other}"], [LB], extra=("--hot-cache-seconds", "0"), token=TOKEN)
    yield hot, lb, svc
    svc.stop()


def test_a_view_between_two_refreshes_moves_the_article_and_shows_it(boards: Any, browser: webdriver.Chrome) -> None:
    hot, lb, svc = boards
    # A long refresh: the test clicks "refresh now", so each refresh is one it asked for.
    browser.get(svc.url + "/?refresh=600000")
    wait_for("the first refresh", lambda: refreshes(browser) >= 1 and len(rows(browser, "hot")) == 12)
    assert {m for m, _ in moves(browser, "hot").values()} == {""}  # nothing to compare yet
    before = [row[2] for row in rows(browser, "hot")]
    assert before[9] == "story-09"
    # Between two refreshes: story-09 gets 9 new visitors (through the service), and a
    # new article appears with 5; the leaderboard's last player jumps to the top.
    for v in range(9):
        post(svc.url + "/api/views", {"articleId": "story-09", "visitorId": f"new{v}"})
    for v in range(5):
        post(svc.url + "/api/views", {"articleId": "fresh", "visitorId": f"f{v}"})
    post(svc.url + f"/api/leaderboards/{LB}/scores", {"memberId": "player-11", "score": 5000, "mode": "best"})
    browser.find_element(By.ID, "now").click()
    wait_for("the second refresh", lambda: refreshes(browser) >= 2)
    after = [row[2] for row in rows(browser, "hot")]
    assert after == [a.article for a in hot.top(20, window=72 * 3600)]
    m = moves(browser, "hot")
    up = before.index("story-09") - after.index("story-09")
    assert up > 0 and m["story-09"] == ("up", f"▲ {up}")
    assert m["fresh"] == ("new", "new")
    for a in after:
        if a not in ("story-09", "fresh"):
            d = after.index(a) - before.index(a)
            assert m[a] == (("down", f"▼ {d}") if d > 0 else ("same", "")), (a, m[a])
    row = next(r for r in rows(browser, "hot") if r[2] == "story-09")
    stats = hot.stats("story-09")
    assert (row[3], row[4]) == (str(stats.pv), str(stats.uv)) == ("12", "12")
    lm = moves(browser, "leaderboard")
    assert lm["player-11"] == ("new", "new") and lm["player-00"] == ("down", "▼ 1")
    if os.environ.get("HOTRANK_PAGE_SCREENSHOT"):
        browser.set_window_size(1100, 820)
        browser.save_screenshot(os.environ["HOTRANK_PAGE_SCREENSHOT"])
    # A refresh with nothing new: every row is back to "same".
    browser.find_element(By.ID, "now").click()
    wait_for("the third refresh", lambda: refreshes(browser) >= 3)
    assert {mv for mv, _ in moves(browser, "hot").values()} == {"same"}


def test_an_unknown_board_fails_its_own_panel_only(boards: Any, browser: webdriver.Chrome) -> None:
    hot, lb, svc = boards
    want_lb = [[str(e.rank + 1), "", e.member, str(e.score)] for e in lb.range(0, 9)]
    browser.get(svc.url + "/?refresh=600000&board=hot:{nope}")
    wait_for("the first refresh", lambda: refreshes(browser) >= 1)
    assert "unknown board 'hot:{nope}'" in browser.find_element(By.ID, "hot-error").text
    assert rows(browser, "leaderboard") == want_lb
    assert browser.find_element(By.ID, "lb-error").text == ""
    # The picker holds the served boards (and the asked one, marked); picking one recovers.
    picker = browser.find_element(By.ID, "hot-picker")
    labels = [o.text for o in picker.find_elements(By.TAG_NAME, "option")]
    assert labels == ["hot:{nope} (not served)", HOT, "hot:{other}"]
    picker.find_element(By.CSS_SELECTOR, "option[value='hot:{other}']").click()
    wait_for("the other board", lambda: [r[2] for r in rows(browser, "hot")] == ["elsewhere", "also-here"])
    assert browser.find_element(By.ID, "hot-error").text == ""
    assert "board=hot%3A%7Bother%7D" in browser.current_url
    # The other way round: an unknown leaderboard leaves the HOT panel working.
    browser.get(svc.url + "/?refresh=600000&lb=lb:{nope}")
    wait_for("the first refresh", lambda: refreshes(browser) >= 1 and len(rows(browser, "hot")) == 12)
    assert "unknown leaderboard 'lb:{nope}'" in browser.find_element(By.ID, "lb-error").text
    assert [r[2] for r in rows(browser, "hot")] == [a.article for a in hot.top(20, window=72 * 3600)]
    assert browser.find_element(By.ID, "hot-error").text == ""


def test_the_page_fits_a_phone(boards: Any, browser: webdriver.Chrome) -> None:
    hot, lb, svc = boards
    hot.view("an-article-with-a-very-long-identifier-that-would-not-fit-a-phone-screen-" * 3, "v1", T0)
    browser.set_window_size(390, 844)
    browser.get(svc.url + "/?refresh=600000")
    wait_for("the first refresh", lambda: refreshes(browser) >= 1 and len(rows(browser, "hot")) == 13)
    assert no_overflow(browser), browser.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
    if os.environ.get("HOTRANK_PAGE_SCREENSHOT"):
        browser.save_screenshot(os.environ["HOTRANK_PAGE_SCREENSHOT"].replace(".png", "-phone.png"))
    # PV and UV stay visible; the article id is cut with an ellipsis, not the page widened.
    visible = browser.execute_script(
        "return [...document.querySelectorAll('#hot thead th')].map(th => getComputedStyle(th).display !== 'none')")
    assert visible == [True, True, True, True, True, False]
    # No header is cut or runs into the next one.
    cut = browser.execute_script(
        "return [...document.querySelectorAll('thead th')].filter(th => th.scrollWidth > th.clientWidth).map(th => th.textContent)")
    assert cut == []
