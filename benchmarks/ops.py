"""Every public op family, eagerly, on every installed backend beside its raw library.

    python benchmarks/ops.py                    # every backend, every op (a few minutes)
    python benchmarks/ops.py --quick            # fewer, shorter rounds: a smoke test
    python benchmarks/ops.py --json             # the same figures as JSON
    python benchmarks/ops.py --backend torch -k slice   # a subset (backend, name filter)

Rows: element-wise with tensors (``x + y``, ``exp``) and with a Python scalar
(``x * 1.0001``), reductions (``sum``, ``max``), ``reshape`` and ``transpose``, basic
slicing (``x[1:3]``, ``x[1]``), advanced indexing (``x[idx]`` with an integer tensor),
``matmul``, ``where``, ``concatenate`` and ``softmax``, at small (f32[4], f32[4][4]) and
medium (f32[256][256]) sizes; and a loop of 10⁴ mixed small ops. Each runs on binary
beside numpy, on torch (cpu) beside torch and on xla beside ``jax.numpy``, whichever of
them are installed.

Every result is checked against the raw library's (values, shape and dtype) before it
is timed. The numerix and raw sides run in interleaved rounds (a, b, a, b ...), each
round a timeit loop long enough to measure; a row gives the median per call of each
side and its spread, min–max over the rounds. On xla both sides wait for the result
(``block_until_ready``) before the clock stops. Nothing here is asserted anywhere.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

import numerix as nx
from numerix import plugins
from numerix.benchmarking import rounds, spread

LOOP_OPS = 10_000


# ---------------------------------------------------------------- the two sides
@dataclass
class Side:
    """One side of a comparison: how to make its arrays, run its ops, and read results."""

    label: str
    mod: Any  # the namespace with exp, sum, max, where ...
    arr: Callable[[np.ndarray], Any]
    to_np: Callable[[Any], np.ndarray]
    sync: Callable[[Any], Any]
    concat: Callable[[list[Any]], Any]
    softmax: Callable[[Any], Any]


def _np_softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def numerix_side(backend: str) -> Side:
    sync: Callable[[Any], Any] = lambda r: r  # noqa: E731
    if backend == "xla":
        sync = lambda r: r.data.block_until_ready()  # noqa: E731
    return Side(
        label=f"numerix[{backend}]",
        mod=nx,
        arr=lambda a: nx.tensor(a, backend=backend),
        to_np=lambda r: r.to_numpy(),
        sync=sync,
        concat=lambda xs: nx.concatenate(xs, axis=0),
        softmax=lambda x: nx.softmax(x, axis=-1),
    )


def raw_side(backend: str) -> Side:
    if backend == "binary":
        return Side("numpy", np, lambda a: a, np.asarray, lambda r: r,
                    lambda xs: np.concatenate(xs, axis=0), _np_softmax)  # fmt: skip
    if backend == "torch":
        import torch

        return Side("torch", torch, lambda a: torch.from_numpy(np.array(a)),
                    lambda r: r.numpy(), lambda r: r, lambda xs: torch.cat(xs, dim=0),
                    lambda x: torch.softmax(x, dim=-1))  # fmt: skip
    import jax
    import jax.numpy as jnp

    return Side("jax.numpy", jnp, jnp.asarray, np.asarray, lambda r: r.block_until_ready(),
                lambda xs: jnp.concatenate(xs, axis=0), lambda x: jax.nn.softmax(x, axis=-1))  # fmt: skip


# ---------------------------------------------------------------- the cases
_rng = np.random.default_rng(0)


def _f32(*shape: int) -> np.ndarray:
    return _rng.standard_normal(shape, dtype=np.float32)


def _loop(s: Side, x: Any, y: Any, w: Any, n_ops: int) -> Any:
    """``n_ops`` small ops, eight per step: add, scalar multiply, slice, sum, matmul,
    exp, maximum, reshape."""
    m = s.mod
    acc = None
    for _ in range(n_ops // 8):
        a = x + y
        b = a * 1.0001
        c = b[1:3]
        d = m.sum(c)
        e = w @ w
        f = m.exp(b)
        g = m.maximum(f, y)
        acc = g.reshape((2, 2))
    del d, e
    return acc


def _max(s: Side, a: Any) -> Any:
    return nx.max(a, axis=-1) if s.mod is nx else s.mod.amax(a, -1)


def cases(loop_ops: int) -> list[tuple[str, list[np.ndarray], Callable[..., Any]]]:
    """(name, numpy inputs, body(side, *inputs)) for every row."""
    v4, u4 = _f32(4), _f32(4)
    m4, n4 = _f32(4, 4), _f32(4, 4)
    m256, n256 = _f32(256, 256), _f32(256, 256)
    c4, c256 = m4 > 0, m256 > 0
    idx = np.array([3, 0, 2, 2], dtype=np.int64)
    out: list[tuple[str, list[np.ndarray], Callable[..., Any]]] = []
    for size, x, y, c in (("f32[4][4]", m4, n4, c4), ("f32[256][256]", m256, n256, c256)):
        small = size == "f32[4][4]"
        if small:
            out += [
                ("add f32[4] + f32[4]", [v4, u4], lambda s, a, b: a + b),
                ("multiply f32[4] * 1.0001", [v4], lambda s, a: a * 1.0001),
                ("slice f32[4][1:3]", [v4], lambda s, a: a[1:3]),
                ("index f32[4][1]", [v4], lambda s, a: a[1]),
            ]
        out += [
            (f"add {size} + {size}", [x, y], lambda s, a, b: a + b),
            (f"multiply {size} * 1.0001", [x], lambda s, a: a * 1.0001),
            (f"add {size} + 2.0", [x], lambda s, a: a + 2.0),
            (f"exp {size}", [x], lambda s, a: s.mod.exp(a)),
            (f"sum {size}", [x], lambda s, a: s.mod.sum(a)),
            (f"max {size}, axis=-1", [x], _max),
            (f"reshape {size} to 1-d", [x], lambda s, a: a.reshape((-1,))),
            (f"transpose {size} (.T)", [x], lambda s, a: a.T),
            (f"slice {size}[1:3]", [x], lambda s, a: a[1:3]),
            (f"slice {size}[1:3, ::2]", [x], lambda s, a: a[1:3, ::2]),
            (f"index {size}[1]", [x], lambda s, a: a[1]),
            (f"index {size}[idx] (int tensor)", [x, idx], lambda s, a, i: a[i]),
            (f"matmul {size} @ {size}", [x, y], lambda s, a, b: a @ b),
            (f"where {size}", [c, x, y], lambda s, k, a, b: s.mod.where(k, a, b)),
            (f"concatenate {size}, {size}", [x, y], lambda s, a, b: s.concat([a, b])),
            (f"softmax {size}, axis=-1", [x], lambda s, a: s.softmax(a)),
        ]
    out.append((f"loop of {loop_ops:,} small ops (f32[4], f32[2][2])",
                [v4, u4, _f32(2, 2)], lambda s, a, b, w: _loop(s, a, b, w, loop_ops)))  # fmt: skip
    return out


# ---------------------------------------------------------------- measuring
# The harness every benchmark shares, numerix bench included: numerix.benchmarking
# (interleaved rounds, a row's median and spread).


def _same(name: str, got: np.ndarray, want: np.ndarray) -> None:
    if got.shape != want.shape or got.dtype != want.dtype:
        raise SystemExit(f"benchmarks/ops.py: {name}: numerix gives {got.dtype}{list(got.shape)}, "
                         f"the raw library {want.dtype}{list(want.shape)}")  # fmt: skip
    if not np.allclose(got, want, rtol=1e-4, atol=1e-5):
        raise SystemExit(f"benchmarks/ops.py: {name}: numerix and the raw library disagree")


def bench_backend(backend: str, n: int, min_time: float, loop_ops: int, pattern: str | None
                  ) -> list[dict[str, Any]]:  # fmt: skip
    a_side, b_side = numerix_side(backend), raw_side(backend)
    rows: list[dict[str, Any]] = []
    for name, inputs, body in cases(loop_ops):
        if pattern and pattern not in name:
            continue
        xa = [a_side.arr(i) for i in inputs]
        xb = [b_side.arr(i) for i in inputs]
        try:
            got = a_side.to_np(body(a_side, *xa))
        except Exception as e:  # a failing op is a finding; the other rows still count
            rows.append({"backend": backend, "name": name, "raw": b_side.label,
                         "error": f"{type(e).__name__}: {' '.join(str(e).split())[:300]}"})  # fmt: skip
            continue
        _same(f"{backend}: {name}", np.asarray(got), np.asarray(b_side.to_np(body(b_side, *xb))))
        ra, rb = rounds(
            lambda f=body, s=a_side, x=xa: s.sync(f(s, *x)),  # type: ignore[misc]
            lambda f=body, s=b_side, x=xb: s.sync(f(s, *x)),  # type: ignore[misc]
            n,
            min_time,
        )
        rows.append({"backend": backend, "name": name, "raw": b_side.label, **spread(ra, rb)})
    return rows


# ---------------------------------------------------------------- the table
def _us(s: float) -> str:
    return f"{s * 1e6:,.2f}" if s < 1e-3 else f"{s * 1e6:,.0f}"


def render(rows: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    head = ("backend", "op", "numerix µs (min–max)", "raw µs (min–max)", "ratio", "diff µs", "raw")
    body = []
    for r in rows:
        if "error" in r:
            body.append((r["backend"], r["name"], "FAILED", "-", "-", "-", r["error"]))
            continue
        body.append((
            r["backend"], r["name"],
            f"{_us(r['numerix_s'])} ({_us(r['numerix_min_s'])}–{_us(r['numerix_max_s'])})",
            f"{_us(r['raw_s'])} ({_us(r['raw_min_s'])}–{_us(r['raw_max_s'])})",
            f"×{r['ratio']:.2f}", f"{r['difference_s'] * 1e6:+,.2f}", r["raw"],
        ))  # fmt: skip
    widths = [max(len(str(c)) for c in col) for col in zip(head, *body, strict=True)]

    def fmt(row: tuple[str, ...]) -> str:
        cells = [row[0].ljust(widths[0]), row[1].ljust(widths[1])]
        cells += [c.rjust(w) for c, w in zip(row[2:-1], widths[2:-1], strict=True)]
        return "  ".join([*cells, row[-1]]).rstrip()

    return "\n".join([
        f"numerix {meta['numerix']}, numpy {meta['numpy']}, {meta['python']}, {meta['machine']}"
        + "".join(f", {k}={v}" for k, v in meta["blas_threads"].items()),
        f"per call: median of {meta['rounds']} rounds (min–max over the rounds), numerix and "
        f"raw rounds alternating, each round a timeit loop of at least {meta['min_time']} s; "
        f"load average {meta['load_average'][0]} at the start, {meta['load_average'][1]} at "
        "the end",
        "", fmt(head), "  ".join("-" * w for w in widths), *map(fmt, body),
    ])  # fmt: skip


def run_parser(description: str) -> argparse.ArgumentParser:
    """The options this script shares with ``wrapper_floor.py``: rounds, their length,
    ``--quick``, ``--json`` and the backends."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--rounds", type=int, default=9, help="rounds per side (default 9)")
    p.add_argument("--min-time", type=float, default=0.02, help="seconds per round (0.02)")
    p.add_argument("--quick", action="store_true", help="3 short rounds, a 1,000-op loop")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    p.add_argument("--backend", action="append", help="only this backend (repeatable)")
    return p


def run_settings(args: argparse.Namespace) -> tuple[int, float, int, list[str]]:
    """(rounds, seconds per round, ops in the loop, the installed backends asked for)."""
    n, min_time, loop_ops = args.rounds, args.min_time, LOOP_OPS
    if args.quick:
        n, min_time, loop_ops = 3, 0.005, 1_000
    installed = plugins.backend_entries()
    backends = [b for b in ("binary", "torch", "xla") if b in installed]
    if args.backend:
        backends = [b for b in backends if b in args.backend]
    return n, min_time, loop_ops, backends


def main(argv: list[str] | None = None) -> int:
    p = run_parser(__doc__.split("\n\n")[0])
    p.add_argument("-k", dest="pattern", help="only rows whose name contains this")
    args = p.parse_args(argv)
    n, min_time, loop_ops, backends = run_settings(args)
    load_before = os.getloadavg()
    rows: list[dict[str, Any]] = []
    for b in backends:
        rows += bench_backend(b, n, min_time, loop_ops, args.pattern)
    meta = {
        "numerix": nx.__version__,
        "numpy": np.__version__,
        "backends": backends,
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
        "blas_threads": {
            k: v
            for k, v in os.environ.items()
            if k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
        },
        "rounds": n,
        "min_time": min_time,
        # a shared machine: the 1-minute load average when the run began and ended
        "load_average": [round(load_before[0], 2), round(os.getloadavg()[0], 2)],
    }
    if args.json:
        print(json.dumps({"meta": meta, "results": rows}, indent=2))
    else:
        print(render(rows, meta))
    failed = [f"{r['backend']}: {r['name']}" for r in rows if "error" in r]
    if failed:
        print(f"\nbenchmarks/ops.py: FAILED: {'; '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
