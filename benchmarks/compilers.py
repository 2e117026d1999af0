"""numerix's compilers beside what they replace (issue 7's targets), in one run.

    python benchmarks/compilers.py            # everything installed
    python benchmarks/compilers.py --quick    # a smoke test

- xla compiler vs raw ``jax.jit`` of the same softmax (``exp(x - max(x)) / sum(...)``):
  the cached call on f32[4] (target <= 1.15x) and f32[1000][1000] (<= 1.05x), and the
  first call, trace + compile (<= 1.3x; each side a fresh function per sample).
- the evaluator on binary: the seeds' MLP predict (dense 32 -> relu -> dense 1 ->
  softmax on a f32[2][18] input) vs the same written by hand in numpy (<= 1.3x).
- the torch compiler (default mode), when numerix-torch registers one, vs numerix's
  eager torch on softmax f32[256][256] (target: faster).
- the xla compiler called with host (``binary``) arguments vs raw ``jax.jit`` called
  with the same numpy arrays (issue 13 item 4: target <= 1.2x), softmax f32[4] and
  f32[256][256], with the spread (min-max over the rounds) of each side.

Every result is checked against the other side before it is timed. Cached calls are
timeit medians with the two sides' loops alternating; results are synchronised before
the clock stops. First calls are medians over fresh functions.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import timeit
from collections.abc import Callable
from typing import Any

import numpy as np

import numerix as nx
from numerix import plugins

# the timing helpers of benchmarks/run.py (this folder is on sys.path when run as a script)
from run import _calibrate
from run import compare as _compare


def compare(a: Callable[[], Any], b: Callable[[], Any], repeat: int) -> tuple[float, float]:
    """Median seconds per call of ``a`` and of ``b`` (run.py's alternating loops, 50 ms each)."""
    return _compare(a, b, repeat, min_time=0.05)


def compare_spread(
    a: Callable[[], Any], b: Callable[[], Any], repeat: int, min_time: float = 0.02
) -> tuple[list[float], list[float]]:
    """Seconds per call of ``a`` and of ``b`` in each of ``repeat`` rounds, the two sides'
    timeit loops alternating (a, b, a, b ...), for the median and the spread."""
    ta, tb = timeit.Timer(a), timeit.Timer(b)
    na, nb = _calibrate(ta, min_time), _calibrate(tb, min_time)
    ra: list[float] = []
    rb: list[float] = []
    for _ in range(repeat):
        ra.append(ta.timeit(na) / na)
        rb.append(tb.timeit(nb) / nb)
    return ra, rb


def first_calls(a: Callable[[], Any], b: Callable[[], Any], repeat: int) -> tuple[float, float]:
    """Median seconds of ``a()`` and ``b()``, each building and calling a fresh function."""
    ra: list[float] = []
    rb: list[float] = []
    for _ in range(repeat):
        for f, r in ((a, ra), (b, rb)):
            t0 = time.perf_counter()
            f()
            r.append(time.perf_counter() - t0)
    return statistics.median(ra), statistics.median(rb)


def _row(name: str, other: str, t_nx: float, t_other: float, target: str) -> dict[str, Any]:
    return {"name": name, "other": other, "numerix_s": t_nx, "other_s": t_other,
            "ratio": t_nx / t_other, "target": target}  # fmt: skip


def nx_softmax(x: Any) -> Any:
    e = nx.exp(x - nx.max(x))
    return e / nx.sum(e)


def _synced(fn: Callable[[Any], Any], x: Any, tensor: bool) -> Callable[[], Any]:
    if tensor:
        return lambda: fn(x).data.block_until_ready()
    return lambda: fn(x).block_until_ready()


def bench_xla(repeat: int) -> list[dict[str, Any]]:
    import jax
    from jax import lax

    def jax_softmax(x: Any) -> Any:
        e = lax.exp(x - lax.reduce_max(x, tuple(range(x.ndim))))
        return e / lax.reduce_sum(e, tuple(range(x.ndim)))

    rows = []
    for shape, target in (((4,), "<= 1.15x"), ((1000, 1000), "<= 1.05x")):
        a_np = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
        x = nx.tensor(a_np, backend="xla")
        jx = x.data  # the same device buffer
        f = nx.jit(nx_softmax, compiler="xla")
        g = jax.jit(jax_softmax)
        np.testing.assert_allclose(f(x).to_numpy(), np.asarray(g(jx)), rtol=1e-6, atol=1e-9)
        t_nx, t_jax = compare(_synced(f, x, True), _synced(g, jx, False), repeat)
        label = "x".join(map(str, shape))
        rows.append(_row(f"xla compiler, softmax f32[{label}], cached call", "raw jax.jit",
                         t_nx, t_jax, target))  # fmt: skip

    x = nx.tensor(np.arange(4, dtype=np.float32), backend="xla")
    jx = x.data

    def nx_first() -> None:
        # a fresh function: numerix traces, lowers and compiles again
        nx.jit(lambda v: nx_softmax(v), compiler="xla")(x).data.block_until_ready()

    def jax_first() -> None:
        jax.jit(lambda v: jax_softmax(v))(jx).block_until_ready()

    nx_first()
    jax_first()  # the xla backend's kernels and jax itself warmed once
    t_nx, t_jax = first_calls(nx_first, jax_first, max(5, repeat))
    rows.append(_row("xla compiler, softmax f32[4], first call (trace + compile)",
                     "raw jax.jit first call", t_nx, t_jax, "<= 1.3x"))  # fmt: skip
    return rows


def bench_xla_host_arguments(repeat: int) -> list[dict[str, Any]]:
    """The xla compiler called with binary tensors: their numpy payloads go to the
    ``jax.jit`` program as they are, as raw JAX code passes numpy arrays."""
    import jax
    from jax import lax

    def jax_softmax(x: Any) -> Any:
        e = lax.exp(x - lax.reduce_max(x, tuple(range(x.ndim))))
        return e / lax.reduce_sum(e, tuple(range(x.ndim)))

    rows = []
    for shape in ((4,), (256, 256)):
        a_np = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
        h = nx.tensor(a_np, backend="binary")
        f = nx.jit(nx_softmax, compiler="xla")
        g = jax.jit(jax_softmax)
        np.testing.assert_allclose(f(h).to_numpy(), np.asarray(g(a_np)), rtol=1e-6, atol=1e-9)
        ra, rb = compare_spread(
            lambda f=f, h=h: f(h).data.block_until_ready(),
            lambda g=g, a=a_np: g(a).block_until_ready(),
            max(repeat, 21),
        )
        label = "x".join(map(str, shape))
        row = _row(f"xla compiler, softmax f32[{label}], binary argument", "raw jax.jit(numpy)",
                   statistics.median(ra), statistics.median(rb), "<= 1.2x")  # fmt: skip
        row["spread"] = (min(ra), max(ra), min(rb), max(rb))
        rows.append(row)
    return rows


def bench_evaluator(repeat: int) -> list[dict[str, Any]]:
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((2, 18)).astype(np.float32)
    w1_np = rng.standard_normal((18, 32)).astype(np.float32)
    b1_np = rng.standard_normal((32,)).astype(np.float32)
    w2_np = rng.standard_normal((32, 1)).astype(np.float32)
    b2_np = rng.standard_normal((1,)).astype(np.float32)
    x, w1, b1, w2, b2 = (nx.tensor(a, backend="binary") for a in (x_np, w1_np, b1_np, w2_np, b2_np))

    def predict(x: Any, w1: Any, b1: Any, w2: Any, b2: Any) -> Any:
        h = nx.maximum(nx.dot(x, w1) + b1, 0.0)
        return nx_softmax(nx.dot(h, w2) + b2)

    def np_predict(x: Any, w1: Any, b1: Any, w2: Any, b2: Any) -> Any:
        h = np.maximum(x @ w1 + b1, np.float32(0))
        z = h @ w2 + b2
        e = np.exp(z - np.max(z))
        return e / np.sum(e)

    f = nx.jit(predict, compiler="evaluator")
    np.testing.assert_allclose(
        f(x, w1, b1, w2, b2).to_numpy(), np_predict(x_np, w1_np, b1_np, w2_np, b2_np), rtol=1e-6
    )
    t_nx, t_np = compare(
        lambda: f(x, w1, b1, w2, b2), lambda: np_predict(x_np, w1_np, b1_np, w2_np, b2_np), repeat
    )
    return [_row("evaluator on binary, MLP predict f32[2][18]", "numpy by hand", t_nx, t_np,
                 "<= 1.3x")]  # fmt: skip


def bench_torch(repeat: int) -> list[dict[str, Any]]:
    a_np = np.random.default_rng(0).standard_normal((256, 256)).astype(np.float32)
    x = nx.tensor(a_np, backend="torch")
    f = nx.jit(nx_softmax, compiler="torch")
    np.testing.assert_allclose(f(x).to_numpy(), nx_softmax(x).to_numpy(), rtol=1e-6, atol=1e-9)
    t_c, t_e = compare(lambda: f(x), lambda: nx_softmax(x), repeat)
    return [_row("torch compiler (replay), softmax f32[256][256]", "numerix eager torch",
                 t_c, t_e, "< 1x")]  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="fewer loops: a smoke test")
    p.add_argument("--repeat", type=int, default=11, help="timeit loops per side")
    args = p.parse_args(argv)
    repeat = 3 if args.quick else args.repeat
    names = set(plugins.compiler_entries())
    rows = []
    rows += bench_evaluator(repeat)
    rows += bench_xla(repeat)
    rows += bench_xla_host_arguments(repeat)
    if "torch" in names:
        rows += bench_torch(repeat)
    else:
        print("(numerix-torch's compiler is not installed: no torch row)")
    w = max(len(r["name"]) for r in rows)
    for r in rows:
        print(
            f"{r['name']:<{w}}  {r['numerix_s'] * 1e6:10.1f} us  vs {r['other']}: "
            f"{r['other_s'] * 1e6:10.1f} us  ratio {r['ratio']:.3f}  (target {r['target']})"
        )
        if "spread" in r:
            a0, a1, b0, b1 = (v * 1e6 for v in r["spread"])
            print(f"{'':<{w}}  min-max {a0:.1f}-{a1:.1f} us  vs {b0:.1f}-{b1:.1f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
