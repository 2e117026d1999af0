"""Headless Chromium for the tests: through its command line, and through playwright.

``chromium --headless --screenshot`` writes a PNG of a page, ``--dump-dom`` prints the
page's DOM once its scripts have run (``--virtual-time-budget`` lets their timers run
that long, in virtual time, before the dump), and ``--enable-logging=stderr``
prints each console message as a line holding ``:CONSOLE``. Each call starts a fresh
browser with an empty profile, so no test sees another's state.

A page whose scripts must be waited for in real time (the site's search, which loads
its index in a web worker: ``--virtual-time-budget`` does not wait for it) is driven
through playwright's Python package instead, launching the same binary
(``executable_path``; playwright's own browser download is not used).

The flags below keep a browser on a machine with no network quiet: no background
requests, no component updates, no QUIC, no sandbox (root in a container).

Without Chromium (or playwright, for the tests that need it) the tests are skipped,
unless ``REQUIRE_BROWSER=1`` (set by ``.ci/run``): then they fail, naming the fix.
"""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import tempfile
import threading
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, NoReturn

import numpy as np
import pytest

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--enable-logging=stderr",
    "--v=0",
)
INSTALL = "apt-get update && apt-get install -y chromium"


def find_chromium() -> str | None:
    """The Chromium binary: /usr/bin/chromium, else ``chromium`` on PATH."""
    if os.access("/usr/bin/chromium", os.X_OK):
        return "/usr/bin/chromium"
    return shutil.which("chromium") or shutil.which("chromium-browser")


def missing(why: str) -> NoReturn:
    """Skip the test for want of ``why``, or fail under ``REQUIRE_BROWSER=1``."""
    if os.environ.get("REQUIRE_BROWSER") == "1":
        pytest.fail(f"REQUIRE_BROWSER=1 and {why}", pytrace=False)
    pytest.skip(why)


def require_chromium() -> str:
    """The Chromium binary, or skip the test (fail under ``REQUIRE_BROWSER=1``)."""
    found = find_chromium()
    if found is None:
        missing(f"headless Chromium is not installed (Debian: {INSTALL})")
    return found


@contextmanager
def playwright_chromium(binary: str) -> Iterator[Any]:
    """A playwright ``Browser`` running ``binary`` headless."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing("playwright is not installed (pip install -c constraints/ci.txt playwright)")
    flags = [
        f for f in FLAGS if f != "--headless" and not f.startswith(("--enable-logging", "--v="))
    ]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=binary, headless=True, args=flags)
        try:
            yield browser
        finally:
            browser.close()


class Chromium:
    """One Chromium binary, run once per page."""

    def __init__(self, binary: str) -> None:
        self.binary = binary

    def run(self, url: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        with tempfile.TemporaryDirectory(prefix="numerix-chromium-") as profile:
            done = subprocess.run(
                [self.binary, *FLAGS, f"--user-data-dir={profile}", *args, url],
                capture_output=True,
                text=True,
                timeout=timeout,
            )
        if done.returncode != 0:
            raise AssertionError(f"chromium exited {done.returncode} on {url}:\n{done.stderr}")
        return done

    def screenshot(
        self, url: str, path: Path, size: tuple[int, int] = (1000, 800), wait_ms: int = 0
    ) -> tuple[np.ndarray, list[str]]:
        """The page's pixels (height × width × 3, uint8) and its console messages."""
        args = [f"--screenshot={path}", f"--window-size={size[0]},{size[1]}"]
        if wait_ms:
            args.append(f"--virtual-time-budget={wait_ms}")
        done = self.run(url, *args)
        return read_png(path.read_bytes()), console_messages(done.stderr)

    def dom(self, url: str, wait_ms: int = 2000) -> tuple[str, list[str]]:
        """The page's DOM once its scripts have had ``wait_ms`` of virtual time, and its
        console messages."""
        done = self.run(url, "--dump-dom", f"--virtual-time-budget={wait_ms}")
        return done.stdout, console_messages(done.stderr)


_CONSOLE = re.compile(r":CONSOLE[^\]]*\]\s*(.*)")


def console_messages(stderr: str) -> list[str]:
    """The console messages (and uncaught errors) of a page, from Chromium's log."""
    return [m.group(1) for m in map(_CONSOLE.search, stderr.splitlines()) if m]


def read_png(data: bytes) -> np.ndarray:
    """An 8-bit RGB or RGBA PNG (non-interlaced, as Chromium writes them) as a
    height × width × 3 uint8 array."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG file")
    pos, idat, header = 8, [], None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        pos += 12 + length
    if header is None:
        raise ValueError("PNG without a header")
    width, height, depth, color, _, _, interlace = header
    channels = {2: 3, 6: 4}.get(color)
    if depth != 8 or channels is None or interlace:
        raise ValueError(f"PNG of depth {depth}, colour type {color}: not read here")
    raw = zlib.decompress(b"".join(idat))
    stride = width * channels
    out = np.zeros((height, stride), dtype=np.int32)
    prev = np.zeros(stride, dtype=np.int32)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = np.frombuffer(raw, np.uint8, stride, y * (stride + 1) + 1).astype(np.int32)
        if kind == 0:
            cur = line
        elif kind == 2:
            cur = (line + prev) & 0xFF
        elif kind in (1, 3, 4):
            cur = _unfilter_left(kind, line, prev, channels)
        else:
            raise ValueError(f"PNG filter {kind}")
        out[y] = cur
        prev = cur
    return out.reshape(height, width, channels)[:, :, :3].astype(np.uint8)


def _unfilter_left(kind: int, line: np.ndarray, prev: np.ndarray, bpp: int) -> np.ndarray:
    """Filters 1 (sub), 3 (average) and 4 (Paeth) depend on the pixel to the left."""
    if kind == 1:  # a running sum along each channel
        return np.cumsum(line.reshape(-1, bpp), axis=0).reshape(-1) & 0xFF
    raw, up = line.tolist(), prev.tolist()
    cur = [0] * len(raw)
    for x, v in enumerate(raw):
        a = cur[x - bpp] if x >= bpp else 0
        b = up[x]
        if kind == 3:
            pred = (a + b) // 2
        else:
            c = up[x - bpp] if x >= bpp else 0
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
        cur[x] = (v + pred) & 0xFF
    return np.array(cur, dtype=np.int32)


def count_colour(pixels: np.ndarray, hex_colour: str, tolerance: int = 8) -> int:
    """How many pixels are ``hex_colour`` (``#rrggbb``), within ``tolerance`` per channel."""
    rgb = np.array([int(hex_colour[i : i + 2], 16) for i in (1, 3, 5)])
    return int((np.abs(pixels.astype(np.int32) - rgb).max(axis=-1) <= tolerance).sum())


@contextmanager
def serve(folder: Path) -> Iterator[str]:
    """``folder`` over HTTP on a free localhost port (as ``python -m http.server``
    would): the URL of its root. Workers, which the site's search runs in, do not
    start from ``file://`` pages."""

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Quiet, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
