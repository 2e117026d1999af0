"""The browser tests: numerix.benchmark's HTML report and the documentation site, in
headless Chromium (``_browser.py``). They are not among pytest.ini's testpaths: run
them with ``python -m pytest docs/tests`` (``.ci/run`` does, with REQUIRE_BROWSER=1)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # the helper module, _browser.py

from _browser import Chromium, require_chromium


@pytest.fixture(scope="session")
def chromium() -> Chromium:
    return Chromium(require_chromium())
