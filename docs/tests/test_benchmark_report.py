"""numerix.benchmark's HTML report, as a browser shows it: the charts drew (bars of the
chart's colours in a screenshot, a rect per job in each SVG), and the page logged
nothing to the console. The checker is shown a page broken each way and must say so."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from _browser import Chromium, count_colour

import numerix as nx
from numerix._benchmark import _COLORS

JOBS = ("sum", "exp", "softmax")


class _Charts(HTMLParser):
    """Each SVG's aria-label and the widths of its rects."""

    def __init__(self) -> None:
        super().__init__()
        self.charts: list[tuple[str, list[float]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "svg":
            self.charts.append((a.get("aria-label") or "", []))
        elif tag == "rect" and self.charts:
            self.charts[-1][1].append(float(a.get("width") or 0))


def problems(chromium: Chromium, page: Path, jobs: int, inputs: int, tmp: Path) -> list[str]:
    """What is wrong with a report of ``jobs`` jobs on ``inputs`` inputs in a browser."""
    found = []
    pixels, console = chromium.screenshot(page.as_uri(), tmp / f"{page.stem}.png", (900, 2600))
    if console:
        found.append(f"console messages: {console}")
    if (pixels.min(axis=-1) < 200).mean() < 0.01:
        found.append("the screenshot is (nearly) blank")
    for colour in _COLORS[:jobs]:
        # a bar is at least 1 px wide and 20 px high, drawn once per input
        if count_colour(pixels, colour) < 20 * inputs:
            found.append(f"no bar of colour {colour} in the screenshot")
    dom, _ = chromium.dom(page.as_uri(), wait_ms=100)
    parser = _Charts()
    parser.feed(dom)
    bars = [widths for label, widths in parser.charts if label == "calls per second"]
    boxes = [widths for label, widths in parser.charts if label == "call times"]
    if len(bars) != inputs or len(boxes) != inputs:
        found.append(f"{len(bars)} bar charts and {len(boxes)} box plots for {inputs} inputs")
    for widths in bars + boxes:
        if len(widths) != jobs or not all(w > 0 for w in widths):
            found.append(f"a chart with rects of widths {widths} for {jobs} jobs")
    return found


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rng = np.random.default_rng(0)
    inputs = {
        "16x16": nx.tensor(rng.random((16, 16), dtype=np.float32)),
        "128x128": nx.tensor(rng.random((128, 128), dtype=np.float32)),
    }
    jobs = {"sum": nx.sum, "exp": nx.exp, "softmax": nx.softmax}
    result = nx.benchmark(jobs, inputs, time=0.05, warmup=0.01, memory=False)
    path = tmp_path_factory.mktemp("report") / "report.html"
    result.to_html(path)
    return path


def test_the_report_draws_its_charts(chromium: Chromium, report: Path, tmp_path: Path) -> None:
    assert problems(chromium, report, len(JOBS), 2, tmp_path) == []


def test_a_report_without_bars_is_seen(chromium: Chromium, report: Path, tmp_path: Path) -> None:
    broken = tmp_path / "no-bars.html"
    broken.write_text(re.sub(r"<rect [^>]*/>", "", report.read_text(encoding="utf-8")))
    found = problems(chromium, broken, len(JOBS), 2, tmp_path)
    assert "no bar of colour #4477aa in the screenshot" in found
    assert any(p.startswith("a chart with rects of widths []") for p in found)


def test_a_report_with_a_script_error_is_seen(
    chromium: Chromium, report: Path, tmp_path: Path
) -> None:
    broken = tmp_path / "script-error.html"
    page = report.read_text(encoding="utf-8")
    broken.write_text(page.replace("</body>", "<script>undefinedFunction()</script></body>"))
    found = problems(chromium, broken, len(JOBS), 2, tmp_path)
    assert len(found) == 1 and "undefinedFunction is not defined" in found[0], found
