"""numerix benchmarks: what numerix costs on top of the library it wraps.

Runs every benchmark in one process, one after the other, and prints one table.
Every figure compares numerix with raw numpy measured in the same run, on the same
machine, a moment apart; read the ratios and differences, not the absolute times.
Nothing here is asserted anywhere (see README.md).

    python benchmarks/run.py            # everything (about half a minute)
    python benchmarks/run.py --quick    # fewer repeats, for a smoke test
    python benchmarks/run.py --json     # the same figures as JSON

Benchmarks:

a. eager dispatch overhead: ``numerix.add`` of two 4-element float32 vectors vs
   ``np.add`` of the same arrays (µs per op; the difference is the dispatch cost);
b. softmax of a 256×256 float32 written with numerix ops vs the same with numpy;
c. the seeds' matmul ({10000,784}·{784,10} float32, ``numerix.dot`` on binary) vs
   raw numpy ``@``: time ratio and peak-memory ratio (tracemalloc);
d. ``import numerix`` beside ``import numpy``, each in fresh interpreters interleaved
   with a bare one (``python -c "pass"``), whose time each round's figure leaves out;
   and ``-X importtime``'s own figure.

Every time is the median and the spread (min–max) of interleaved rounds, timed by the
harness every benchmark shares, ``numerix.benchmarking``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np

import numerix as nx
from numerix.benchmarking import calibrate, rounds, spread

BACKEND = "binary"
_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


# ---------------------------------------------------------------- measuring
# the harness every benchmark shares (numerix.benchmarking)
_calibrate = calibrate


def compare(
    fn_a: Callable[[], Any], fn_b: Callable[[], Any], repeat: int, min_time: float = 0.1
) -> tuple[float, float]:
    """Median seconds per call of ``fn_a`` and of ``fn_b`` over ``repeat`` interleaved
    rounds each (:func:`ops.rounds`)."""
    ra, rb = rounds(fn_a, fn_b, repeat, min_time)
    return statistics.median(ra), statistics.median(rb)


def timed(fn_a: Callable[[], Any], fn_b: Callable[[], Any], repeat: int) -> dict[str, float]:
    """A row's figures (:func:`ops.spread`): numerix's and numpy's median and min–max over
    ``repeat`` interleaved rounds of at least 0.1 s."""
    return spread(*rounds(fn_a, fn_b, repeat, 0.1))


def peak_memory(fn: Callable[[], Any]) -> int:
    """Peak bytes allocated (tracemalloc; numpy reports its buffers to it) during one call."""
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base, _ = tracemalloc.get_traced_memory()
        r = fn()
        _, peak = tracemalloc.get_traced_memory()
        del r
    finally:
        tracemalloc.stop()
    return peak - base


def check(
    name: str, got: Any, expected: np.ndarray, rtol: float = 1e-5, atol: float = 1e-8
) -> None:
    got = np.asarray(got.to_numpy() if hasattr(got, "to_numpy") else got)
    if got.shape != expected.shape or not np.allclose(got, expected, rtol=rtol, atol=atol):
        raise SystemExit(
            f"benchmarks: {name}: numerix and numpy disagree; not timing a wrong answer"
        )


# ---------------------------------------------------------------- the benchmarks
def bench_dispatch(repeat: int) -> dict[str, Any]:
    a_np = np.arange(4, dtype=np.float32)
    b_np = np.ones(4, dtype=np.float32)
    a = nx.tensor(a_np, backend=BACKEND)
    b = nx.tensor(b_np, backend=BACKEND)
    check("add", nx.add(a, b), np.add(a_np, b_np))
    add, np_add = nx.add, np.add
    return {
        "name": "a. add f32[4] + f32[4] (eager dispatch)",
        "unit": "us",
        **timed(lambda: add(a, b), lambda: np_add(a_np, b_np), repeat),
    }


def _softmax_nx(x: Any) -> Any:
    e = nx.exp(x - nx.max(x, axis=-1, keepdims=True))
    return e / nx.sum(e, axis=-1, keepdims=True)


def _softmax_np(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def bench_softmax(repeat: int) -> dict[str, Any]:
    x_np = np.random.default_rng(0).standard_normal((256, 256), dtype=np.float32)
    x = nx.tensor(x_np, backend=BACKEND)
    name = "b. softmax f32[256][256] (5 ops)"
    try:
        got = _softmax_nx(x)
    except Exception as e:  # a failing op is a finding; the other figures still count
        return {"name": name, "error": f"{type(e).__name__}: {' '.join(str(e).split())[:300]}"}
    check("softmax", got, _softmax_np(x_np), rtol=1e-5, atol=1e-7)
    return {
        "name": name,
        "unit": "us",
        **timed(lambda: _softmax_nx(x), lambda: _softmax_np(x_np), repeat),
    }


def bench_matmul(repeat: int) -> dict[str, Any]:
    rng = np.random.default_rng(0)
    x_np = rng.random((10_000, 784), dtype=np.float32)
    w_np = rng.standard_normal((784, 10), dtype=np.float32)
    x = nx.tensor(x_np, backend=BACKEND)
    w = nx.tensor(w_np, backend=BACKEND)
    expected = x_np.astype(np.float64) @ w_np.astype(np.float64)
    check("matmul", nx.dot(x, w), expected, rtol=1e-4, atol=1e-3)
    check("matmul (numpy)", x_np @ w_np, expected, rtol=1e-4, atol=1e-3)
    dot = nx.dot
    figures = timed(lambda: dot(x, w), lambda: x_np @ w_np, repeat)
    m_nx = statistics.median(peak_memory(lambda: dot(x, w)) for _ in range(3))
    m_np = statistics.median(peak_memory(lambda: x_np @ w_np) for _ in range(3))
    return {
        "name": "c. matmul f32[10000][784]·f32[784][10] (seed)",
        "unit": "ms",
        **figures,
        "numerix_peak_bytes": m_nx,
        "numpy_peak_bytes": m_np,
        "memory_ratio": m_nx / m_np,
    }


def _run_python(code: str, *flags: str) -> tuple[float, str]:
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, *flags, "-c", code], capture_output=True, text=True)
    t = time.perf_counter() - t0
    if r.returncode:
        raise SystemExit(f"benchmarks: python -c {code!r} failed:\n{r.stderr}")
    return t, r.stderr


def bench_import(runs: int) -> dict[str, Any]:
    _run_python("import numerix")  # warm the file-system cache and the .pyc files
    with_nx, with_np, bare = [], [], []
    for _ in range(runs):  # interleaved, so drift hits all alike
        bare.append(_run_python("pass")[0])
        with_np.append(_run_python("import numpy")[0])
        with_nx.append(_run_python("import numerix")[0])
    # each round's import time: its interpreter's time minus the bare one of that round
    figures = spread([a - c for a, c in zip(with_nx, bare)], [b - c for b, c in zip(with_np, bare)])
    own = []
    for _ in range(max(3, runs // 3)):
        _, err = _run_python("import numerix", "-X", "importtime")
        m = re.search(r"^import time:\s+\d+ \|\s+(\d+) \| numerix$", err, re.M)
        if m:
            own.append(int(m.group(1)) * 1e-6)
    code = (
        "import sys, numerix; heavy = ('rich', 'numerix.cli', 'jax', 'torch', "
        "'numerix.defn.autodiff', 'numerix.random'); "
        "print(','.join(m for m in heavy if m in sys.modules))"
    )
    leaked = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True
    ).stdout.strip()
    return {
        "name": "d. import numerix vs import numpy (fresh interpreters)",
        "unit": "ms",
        **figures,
        "difference_s": None,
        "interpreter_s": statistics.median(bare),
        "importtime_s": statistics.median(own) if own else None,
        "heavy_modules_imported": leaked.split(",") if leaked else [],
    }


# ---------------------------------------------------------------- the table
def _t(s: float | None, unit: str) -> str:
    if s is None:
        return "-"
    return f"{s * 1e6:,.2f} µs" if unit == "us" else f"{s * 1e3:,.2f} ms"


def _m(lo: float, hi: float, unit: str) -> str:
    """min–max, in the unit of the median beside it"""
    k = 1e6 if unit == "us" else 1e3
    return f"{lo * k:,.2f}–{hi * k:,.2f}"


def _b(n: float) -> str:
    return f"{n / 1024:,.1f} KiB"


def render(results: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    head = ("benchmark", "numerix", "numpy", "numerix/numpy", "difference", "notes")
    rows = []
    for r in results:
        if "error" in r:
            rows.append((r["name"], "FAILED", "-", "-", "-", r["error"]))
            continue
        notes = ""
        if "memory_ratio" in r:
            notes = (
                f"peak memory {_b(r['numerix_peak_bytes'])} vs {_b(r['numpy_peak_bytes'])} "
                f"(×{r['memory_ratio']:.2f})"
            )
        if "interpreter_s" in r:
            notes = f"bare interpreter {_t(r['interpreter_s'], 'ms')}"
            if r["importtime_s"] is not None:
                notes += f"; -X importtime says {_t(r['importtime_s'], 'ms')}"
            notes += (
                f"; heavy modules pulled in: {', '.join(r['heavy_modules_imported']) or 'none'}"
            )
        rows.append(
            (
                r["name"],
                f"{_t(r['numerix_s'], r['unit'])} ({_m(r['numerix_min_s'], r['numerix_max_s'], r['unit'])})",
                f"{_t(r['raw_s'], r['unit'])} ({_m(r['raw_min_s'], r['raw_max_s'], r['unit'])})",
                "-" if r["ratio"] is None else f"×{r['ratio']:.2f}",
                "-"
                if r["difference_s"] is None
                else ("+" if r["difference_s"] >= 0 else "") + _t(r["difference_s"], r["unit"]),
                notes,
            )
        )
    widths = [max(len(str(c)) for c in col) for col in zip(head, *rows, strict=True)]
    line = "  ".join("-" * w for w in widths)

    def fmt(row: tuple[str, ...]) -> str:
        cells = [row[0].ljust(widths[0])] + [
            c.rjust(w) for c, w in zip(row[1:-1], widths[1:-1], strict=True)
        ]
        return "  ".join([*cells, row[-1]]).rstrip()

    out = [
        f"numerix {meta['numerix']} on {meta['backend']}, numpy {meta['numpy']}, "
        f"{meta['python']}, {meta['machine']}"
        + "".join(f", {k}={v}" for k, v in meta["blas_threads"].items()),
        f"all figures from one run; each time is the median (min–max) of {meta['repeat']} "
        "rounds, numerix and numpy rounds alternating (numerix.benchmarking)",
        "",
        fmt(head),
        line,
        *map(fmt, rows),
    ]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--repeat",
        type=int,
        default=15,
        help="timeit loops per side, alternating (median; default 15)",
    )
    p.add_argument(
        "--import-runs", type=int, default=15, help="fresh interpreters per side (default 15)"
    )
    p.add_argument("--quick", action="store_true", help="5 loops, 5 interpreters: a smoke test")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = p.parse_args(argv)
    repeat, import_runs = (5, 5) if args.quick else (args.repeat, args.import_runs)

    results = [
        bench_dispatch(repeat),
        bench_softmax(repeat),
        bench_matmul(repeat),
        bench_import(import_runs),
    ]
    meta = {
        "numerix": nx.__version__,
        "numpy": np.__version__,
        "backend": BACKEND,
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
        "blas_threads": {k: v for k, v in os.environ.items() if k in _THREAD_VARS},
        "repeat": repeat,
    }
    if args.json:
        print(json.dumps({"meta": meta, "results": results}, indent=2))
    else:
        print(render(results, meta))
    failed = [r["name"] for r in results if "error" in r]
    if failed:
        print(f"\nbenchmarks: FAILED: {'; '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
