"""The documentation site (``make docs``): docs/ and mkdocs.yml build with MkDocs and the
Material theme with warnings as errors (``--strict``: no broken link or anchor, no page
left out of the nav), and a command page opens in headless Chromium with its syntax,
navigation and a working search. MkDocs comes from the package's ``test`` extra, pinned
as docs/requirements.txt pins it for ``make docs``."""

from __future__ import annotations

import functools
import http.server
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Iterator

import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By

from conftest import REPO
from test_page import browser, wait_for  # noqa: F401  (the headless Chromium fixture)


def build(src: Path, out: Path) -> subprocess.CompletedProcess[str]:
    """``mkdocs build --strict`` of the project at ``src`` into ``out``."""
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(src / "mkdocs.yml"), "-d", str(out)],
        capture_output=True, text=True, cwd=src, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )  # fmt: skip


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    done = build(REPO, out)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "WARNING" not in done.stderr, done.stderr
    return out


@pytest.fixture(scope="module")
def served(site: Path) -> Iterator[str]:
    """The built site over HTTP on a free port (search needs HTTP, not file://)."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_the_pins_of_make_docs_and_of_the_test_extra_agree() -> None:
    pinned = set(re.findall(r"^(mkdocs[\w-]*==[\w.]+)", (REPO / "docs" / "requirements.txt").read_text(), re.M))
    extra = set(re.findall(r'"(mkdocs[\w-]*==[\w.]+)"', (REPO / "clients" / "python" / "pyproject.toml").read_text()))
    assert pinned == extra == {"mkdocs==1.6.1", "mkdocs-material==9.8.1"}


def test_every_command_page_is_built(site: Path) -> None:
    pages = sorted(p.stem for p in (REPO / "docs" / "commands").glob("*.md") if p.stem != "index")
    assert len(pages) >= 26
    for name in pages:
        html = (site / "commands" / name / "index.html").read_text()
        assert "<h1" in html and name.upper() in html, name


def test_a_broken_link_fails_the_strict_build(tmp_path: Path) -> None:
    copy = tmp_path / "repo"
    copy.mkdir()
    shutil.copy(REPO / "mkdocs.yml", copy / "mkdocs.yml")
    shutil.copytree(REPO / "docs", copy / "docs")
    page = copy / "docs" / "periods.md"
    page.write_text(page.read_text() + "\nSee [nothing](no-such-page.md#nowhere).\n")
    done = build(copy, tmp_path / "site")
    assert done.returncode != 0
    assert "no-such-page.md" in done.stdout + done.stderr


def test_a_command_page_opens_in_chromium_with_its_syntax_nav_and_search(
    served: str, browser: webdriver.Chrome  # noqa: F811
) -> None:
    browser.get(served + "/commands/rank.around/")
    assert browser.find_element(By.TAG_NAME, "h1").text.strip() == "RANK.AROUND"
    codes = [c.text for c in browser.find_elements(By.CSS_SELECTOR, "pre code")]
    assert "RANK.AROUND key member count [PERIOD <day | week | month> [AGO ago]]" in codes
    headings = [h.text.strip() for h in browser.find_elements(By.CSS_SELECTOR, "article h2")]
    assert headings[:5] == ["Arguments", "Reply", "Errors", "Examples", "See also"], headings
    nav = browser.execute_script("return [...document.querySelectorAll('nav a')].map(a => a.textContent.trim())")
    assert {"HOT.VIEW", "RANK.INFO", "Operations", "Hot ranking"} <= set(nav)
    # Material's search: type a word, wait for the result list to name the page that holds it.
    # Material's keyboard shortcut for search ("/"), as a reader would press it: the
    # header's search buttons differ with the window's width.
    browser.find_element(By.TAG_NAME, "body").send_keys("/")
    wait_for("the search box", lambda: browser.find_element(By.CSS_SELECTOR, "input.md-search__input").is_displayed())
    box = browser.find_element(By.CSS_SELECTOR, "input.md-search__input")
    box.send_keys("competition rank")
    results = wait_for(
        "search results",
        # Read in one script: the result list re-renders while the index loads, so
        # elements found first can be stale by the time their text is asked for.
        lambda: browser.execute_script(
            "return [...document.querySelectorAll('.md-search-result__item')].map(e => e.innerText)"
        ),
    )
    assert any("RANK.RANK" in r for r in results), results
