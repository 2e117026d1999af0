"""Render a real numerix.benchmark report and screenshot it for the docs.

    .venv/bin/python tools/screenshot_report.py [--out docs/img/benchmark-report.png]

The jobs are docs/benchmark.md's softmax, eager and jitted, on every installed backend
(binary, xla, torch) with numpy beside them, on a 256x256 input; the page is written by
``BenchmarkResult.to_html`` and photographed by headless Chromium (the flags of the
browser tests, docs/tests/_browser.py). Needs Chromium (Debian: apt-get install chromium).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs" / "tests"))

from _browser import FLAGS, find_chromium  # noqa: E402

import numerix as nx  # noqa: E402
from numerix.plugins import backend_entries  # noqa: E402


def softmax(x: nx.Tensor) -> nx.Tensor:
    e = nx.exp(x - nx.max(x, axis=-1, keepdims=True))
    return e / nx.sum(e, axis=-1, keepdims=True)


def jobs() -> dict[str, object]:
    installed = set(backend_entries())
    out: dict[str, object] = {}
    for backend, compiler in (("binary", "evaluator"), ("xla", "xla"), ("torch", "torch")):
        if backend in installed:
            out[f"{backend} eager"] = (softmax, backend, None)
            out[f"{backend} jit ({compiler})"] = (softmax, backend, compiler)
    out["numpy"] = lambda t: np.exp(t.to_numpy()) / np.exp(t.to_numpy()).sum(-1, keepdims=True)
    return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img" / "benchmark-report.png")
    parser.add_argument("--time", type=float, default=0.5, help="seconds per job")
    args = parser.parse_args(argv)
    chromium = find_chromium()
    if chromium is None:
        print("error: Chromium is not installed (apt-get install chromium)", file=sys.stderr)
        return 1
    x = nx.tensor(np.random.default_rng(0).random((256, 256), dtype=np.float32))
    result = nx.benchmark(jobs(), {"256x256": x}, time=args.time, warmup=0.1)
    print(result.table())
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "report.html"
        result.to_html(page)
        subprocess.run(
            [chromium, *FLAGS, f"--user-data-dir={tmp}/profile", f"--screenshot={args.out}",
             "--window-size=900,760", page.as_uri()],
            check=True,
            capture_output=True,
        )  # fmt: skip
    print(f"wrote {args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
