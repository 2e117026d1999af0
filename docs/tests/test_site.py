"""The documentation site as a reader meets it: built strictly with mkdocs, served over
HTTP on localhost, opened in headless Chromium. The API page of ``numerix.dot`` shows
its signature and docstring, and the search (``?q=`` opens it, as mkdocs-material's
links do) lists that entry."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _browser import Chromium, missing, playwright_chromium, serve

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The site, built strictly into a temporary folder and served: its URL."""
    try:
        import mkdocstrings  # noqa: F401
    except ImportError:
        missing(
            "the docs tools are not installed "
            "(pip install -c constraints/ci.txt -r docs/requirements.txt)"
        )
    out = tmp_path_factory.mktemp("site")
    build = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert build.returncode == 0, f"mkdocs build --strict failed:\n{build.stderr}"
    with serve(out) as url:
        yield url


@pytest.fixture(scope="module")
def browser(chromium: Chromium) -> Iterator[Any]:
    with playwright_chromium(chromium.binary) as b:
        yield b


def _open(browser: Any, url: str) -> tuple[Any, list[str]]:
    page = browser.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    return page, errors


def test_the_api_page_of_dot(browser: Any, site: str) -> None:
    page, errors = _open(browser, site + "api/linear-algebra/")
    heading = page.locator("[id='numerix.dot']")
    entry = heading.locator("xpath=..")  # the heading, its signature and its docstring
    assert heading.inner_text().strip().startswith("numerix.dot")
    text = entry.inner_text()
    assert "dot(a: Any, b: Any) -> Tensor" in " ".join(text.split())
    assert "the last axis of a contracts with the second-to-last of b" in " ".join(text.split())
    # its example, as a highlighted code block
    examples = entry.locator(".highlight:not(.doc-signature) code").all_inner_texts()
    assert any(
        ">>> nx.dot(nx.tensor([[1, 2], [3, 4]]), nx.tensor([1, 1])).tolist()" in e for e in examples
    ), examples
    assert errors == []


def test_the_search_finds_dot(browser: Any, site: str) -> None:
    page, errors = _open(browser, site + "?q=dot")
    page.wait_for_selector(".md-search-result__item", timeout=20_000)
    assert page.locator(".md-search__input").input_value() == "dot"
    links = page.locator(".md-search-result__item a").evaluate_all("l => l.map(a => a.href)")
    assert any(link.endswith("api/linear-algebra/?h=dot#numerix.dot") for link in links), links
    assert errors == []
