"""numerix.stream beside the same calls made directly (issue 31's target), in one run.

    python benchmarks/stream.py            # binary, and xla when installed (about 1 min)
    python benchmarks/stream.py --quick    # a smoke test
    python benchmarks/stream.py --json     # the same figures as JSON

a. the queue's cost: 10,000 chunks of f32[1024] through ``fn(chunk, acc) = (chunk * 2,
   acc + chunk)``, streamed (``send`` each chunk, ``recv`` its output ``maxsize`` chunks
   later, ``done()``) beside the same calls made directly on ``nx.jit(fn)`` in a loop
   (target: the stream <= 1.2x the loop), at ``maxsize`` 4 and 32 (the default), on
   binary with the evaluator and on xla with the xla compiler.
b. the overlap: per chunk, host work (numpy drawing the next f32[256][256] chunk) and
   device work (``tanh(chunk @ w)`` and its sum into the accumulator). Directly, the two
   take turns; streamed, the worker computes chunk i while the host draws chunk i + 1,
   so the stream can take less time than the loop (ratio < 1). Shown, never asserted.

Every streamed accumulator and output is checked against the direct loop's first. The
two sides run in interleaved rounds, each round one whole loop per side (a stream is
made before its clock starts: making one traces and compiles ``fn``); a row gives each side's median time per chunk and its min-max
over the rounds, and the ratio of the medians (the stream first). On xla the last
result is synchronised before the clock stops. The figures are ratios taken in one run:
compare them only within a run.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import numerix as nx
from numerix import plugins
from numerix.benchmarking import spread

CHUNKS = 10_000
SIZE = 1024
OVERLAP_CHUNKS, OVERLAP_SIZE = 200, 256


def double_and_add(chunk: Any, acc: Any) -> tuple[Any, Any]:
    return chunk * 2, acc + chunk


def _sync(t: Any) -> Any:
    return t.to_numpy()  # waits for the device


def _loops(fn: Callable[..., Any], template: Any, init: Any, chunks: list[Any],
           compiler: str, maxsize: int) -> tuple[Callable[[], Any], Callable[[], Any]]:  # fmt: skip
    """The direct loop and the streamed one over ``chunks``, each returning
    ``(acc, last output)``."""
    f = nx.jit(fn, compiler=compiler)

    def direct() -> Any:
        acc = init
        for c in chunks:
            out, acc = f(c, acc)
        return _sync(acc), _sync(out)

    made: list[Any] = []

    def make() -> None:  # off the clock: making a stream traces and compiles fn
        made.append(nx.stream(fn, template, init, compiler=compiler, maxsize=maxsize))

    def streamed() -> Any:
        if not made:
            make()
        s = made.pop()
        send, recv = s.send, s.recv
        for i, c in enumerate(chunks):
            send(c)
            if i >= maxsize:
                recv()
        for _ in range(min(maxsize, len(chunks))):
            out = recv()
        return _sync(s.done()), _sync(out)

    streamed.make = make  # type: ignore[attr-defined]
    return direct, streamed


def _rounds(candidates: list[Callable[[], Any]], repeat: int) -> list[list[float]]:
    """Seconds of one call of each candidate per round, the candidates in turn; a
    candidate with a ``make`` has it called before its clock starts."""
    times: list[list[float]] = [[] for _ in candidates]
    for _ in range(repeat):
        for c, ts in zip(candidates, times):
            make = getattr(c, "make", None)
            if make is not None:
                make()
            t0 = time.perf_counter()
            c()
            ts.append(time.perf_counter() - t0)
    return times


def bench_queue(backend: str, compiler: str, repeat: int, n: int) -> list[dict[str, Any]]:
    rng = np.random.default_rng(0)
    data = rng.standard_normal((n, SIZE)).astype(np.float32)
    chunks = [nx.tensor(c, backend=backend) for c in data]
    init = nx.zeros((SIZE,), dtype=nx.float32, backend=backend)
    rows = []
    for maxsize in (4, 32):
        direct, streamed = _loops(double_and_add, nx.template((SIZE,), nx.float32), init,
                                  chunks, compiler, maxsize)  # fmt: skip
        (a1, o1), (a2, o2) = direct(), streamed()
        np.testing.assert_array_equal(a1, a2)
        np.testing.assert_array_equal(o1, o2)
        rs, rd = _rounds([streamed, direct], repeat)
        rows.append(row(f"a. {n:,} chunks f32[{SIZE}], {backend}/{compiler}, maxsize {maxsize}",
                        "direct calls of nx.jit(fn)", rs, rd, n, "<= 1.2x"))  # fmt: skip
    return rows


def bench_overlap(backend: str, compiler: str, repeat: int, n: int) -> list[dict[str, Any]]:
    """Host work (drawing the next chunk) beside device work (a matmul and a sum)."""
    w = nx.tensor(np.random.default_rng(1).standard_normal((OVERLAP_SIZE, OVERLAP_SIZE))
                  .astype(np.float32) / 16, backend=backend)  # fmt: skip

    def fn(chunk: Any, acc: Any) -> tuple[Any, Any]:
        y = nx.tanh(chunk @ w)
        return y[0], acc + y.sum()

    shape = (OVERLAP_SIZE, OVERLAP_SIZE)
    init = nx.zeros((), dtype=nx.float32, backend=backend)
    f = nx.jit(fn, compiler=compiler)

    def draw(i: int) -> Any:  # the host's work: a new chunk from numpy
        g = np.random.default_rng(i)
        return nx.tensor(g.standard_normal(shape, dtype=np.float32), backend=backend)

    def direct() -> Any:
        acc = init
        for i in range(n):
            _, acc = f(draw(i), acc)
        return _sync(acc)

    made: list[Any] = []

    def make() -> None:
        made.append(nx.stream(fn, nx.template(shape, nx.float32), init, compiler=compiler))

    def streamed() -> Any:
        if not made:
            make()
        s = made.pop()
        for i in range(n):
            s.send(draw(i))
            if i >= 4:
                s.recv()
        return _sync(s.done())

    def host_only() -> Any:
        for i in range(n):
            draw(i)

    def device_only() -> Any:
        acc, c = init, draw(0)
        for _ in range(n):
            _, acc = f(c, acc)
        return _sync(acc)

    streamed.make = make  # type: ignore[attr-defined]
    np.testing.assert_allclose(direct(), streamed(), rtol=1e-5)
    rs, rd, rh, rv = _rounds([streamed, direct, host_only, device_only], repeat)
    r = row(f"b. overlap: draw f32[{OVERLAP_SIZE}][{OVERLAP_SIZE}] + tanh(chunk @ w), "
            f"{backend}/{compiler}", "the same, direct", rs, rd, n, "< 1 (overlap)")  # fmt: skip
    r["host_alone_s"] = float(np.median(rh)) / n
    r["device_alone_s"] = float(np.median(rv)) / n
    return [r]


def row(name: str, other: str, rs: list[float], rd: list[float], n: int,
        target: str) -> dict[str, Any]:  # fmt: skip
    per = spread([t / n for t in rs], [t / n for t in rd])
    return {"name": name, "other": other, "target": target, **per}


def _print(rows: list[dict[str, Any]]) -> int:
    w = max(len(r["name"]) for r in rows)
    for r in rows:
        print(f"{r['name']:<{w}}  {r['numerix_s'] * 1e6:8.2f} us/chunk  vs {r['other']}: "
              f"{r['raw_s'] * 1e6:8.2f} us/chunk  ratio {r['ratio']:.2f}  "
              f"(target {r['target']})")  # fmt: skip
        extra = ""
        if "host_alone_s" in r:
            extra = (f"  host work alone {r['host_alone_s'] * 1e6:.1f} us, device work alone "
                     f"{r['device_alone_s'] * 1e6:.1f} us")  # fmt: skip
        print(f"{'':<{w}}  min-max {r['numerix_min_s'] * 1e6:.2f}-{r['numerix_max_s'] * 1e6:.2f}"
              f" vs {r['raw_min_s'] * 1e6:.2f}-{r['raw_max_s'] * 1e6:.2f} us{extra}")  # fmt: skip
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="2 rounds, 1,000 chunks: a smoke test")
    p.add_argument("--repeat", type=int, default=7, help="interleaved rounds per row")
    p.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = p.parse_args(argv)
    repeat = 2 if args.quick else args.repeat
    n = 1000 if args.quick else CHUNKS
    targets = [("binary", "evaluator")]
    if "xla" in plugins.backend_entries():
        targets.append(("xla", "xla"))
    else:
        print("(numerix-xla is not installed: binary alone)")
    rows = []
    for backend, compiler in targets:
        rows += bench_queue(backend, compiler, repeat, n)
    for backend, compiler in targets:
        rows += bench_overlap(backend, compiler, repeat, 50 if args.quick else OVERLAP_CHUNKS)
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    return _print(rows)


if __name__ == "__main__":
    sys.exit(main())
