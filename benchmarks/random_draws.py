"""numerix.random beside what it replaces (issue 16's targets), in one run.

    python benchmarks/random_draws.py            # everything installed
    python benchmarks/random_draws.py --quick    # a smoke test

- ``uniform`` of 10**6 float32 under the xla compiler vs jitted ``jax.random.uniform``
  of the same key (target <= 1.15x); eager ``jax.random.uniform`` and numerix's eager
  xla backend for context.
- ``uniform`` of 10**6 float32 on binary, eagerly, vs a hand-written numpy
  Threefry-2x32 of the same numbers (target <= 1.2x), and numpy's PCG64
  ``Generator.random`` for context (a sequential generator: cheaper per number, but
  its numbers are numpy's alone).
- first calls in fresh processes: the xla compiler's trace + compile of the uniform
  program vs ``jax.jit``'s.
- ``uniform`` and ``normal`` of 10**6 float32 on torch, eagerly (the binary backend's
  numbers, bit for bit), with torch's own ``rand`` and ``randn`` for context.

Every candidate's numbers are checked against the others before they are timed. The
candidates of a row are timed in alternating timeit loops (a, b, c, a, b, c ...), and
each row reports the median and the spread (min-max over the rounds).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import timeit
from collections.abc import Callable
from typing import Any

import numpy as np

import numerix as nx
from numerix import plugins

# the timing helper of benchmarks/run.py
from run import _calibrate

N = 10**6


def interleaved(
    fns: list[Callable[[], Any]], repeat: int, min_time: float = 0.05
) -> list[list[float]]:
    """Seconds per call of each of ``fns`` in each of ``repeat`` rounds, the candidates'
    timeit loops alternating, so that a slow spell of the machine hits all alike."""
    timers = [timeit.Timer(f) for f in fns]
    numbers = [_calibrate(t, min_time) for t in timers]
    rounds: list[list[float]] = [[] for _ in fns]
    for _ in range(repeat):
        for t, n, r in zip(timers, numbers, rounds):
            r.append(t.timeit(n) / n)
    return rounds


def numpy_threefry_uniform(key: np.ndarray, n: int) -> np.ndarray:
    """uniform(key, (n,)) float32 by hand in numpy: Threefry-2x32 (20 rounds) of the
    counters 0..n-1 with zero high words, the xor of the two words, the top 23 bits under
    the exponent of 1.0, minus 1 (jax.random's derivation)."""
    k1, k2 = key[0], key[1]
    ks = (k1, k2, k1 ^ k2 ^ np.uint32(0x1BD11BDA))
    rotations = ((13, 15, 26, 6), (17, 29, 16, 24))
    x1 = np.zeros((), np.uint32) + ks[0]
    x2 = np.arange(n, dtype=np.uint32) + ks[1]
    for i in range(5):
        for r in rotations[i % 2]:
            x1 = x1 + x2
            x2 = x1 ^ ((x2 << np.uint32(r)) | (x2 >> np.uint32(32 - r)))
        x1 = x1 + ks[(i + 1) % 3]
        x2 = x2 + (ks[(i + 2) % 3] + np.uint32(i + 1))
    bits = x1 ^ x2
    return ((bits >> np.uint32(9)) | np.uint32(0x3F800000)).view(np.float32) - np.float32(1.0)


def _row(name: str, names: list[str], rounds: list[list[float]], target: str) -> dict[str, Any]:
    return {"name": name, "names": names, "rounds": rounds, "target": target}


def bench_binary(repeat: int) -> dict[str, Any]:
    key = nx.random.key(7, backend="binary")
    key_np = key.to_numpy()
    pcg = np.random.default_rng(7)

    def ours() -> Any:
        return nx.random.uniform(key, (N,))

    def by_hand() -> Any:
        return numpy_threefry_uniform(key_np, N)

    def numpy_pcg64() -> Any:
        return pcg.random(N, dtype=np.float32)

    np.testing.assert_array_equal(ours().to_numpy(), by_hand(), strict=True)
    rounds = interleaved([ours, by_hand, numpy_pcg64], repeat)
    return _row("binary eager, uniform f32[10**6]",
                ["numerix", "numpy Threefry by hand", "numpy PCG64 Generator.random"],
                rounds, "numerix <= 1.2x numpy Threefry")  # fmt: skip


def bench_xla(repeat: int) -> dict[str, Any]:
    import jax

    key = nx.random.key(7, backend="xla")
    jkey = jax.random.PRNGKey(7)
    f = nx.jit(lambda k: nx.random.uniform(k, (N,)), compiler="xla")
    g = jax.jit(lambda k: jax.random.uniform(k, (N,), "float32"))

    def ours() -> Any:
        return f(key).data.block_until_ready()

    def theirs() -> Any:
        return g(jkey).block_until_ready()

    def jax_eager() -> Any:
        return jax.random.uniform(jkey, (N,), "float32").block_until_ready()

    def ours_eager() -> Any:
        return nx.random.uniform(key, (N,)).data.block_until_ready()

    want = np.asarray(theirs())
    for fn in (ours, jax_eager, ours_eager):
        np.testing.assert_array_equal(np.asarray(fn()), want, strict=True)
    rounds = interleaved([ours, theirs, jax_eager, ours_eager], repeat)
    return _row("xla, uniform f32[10**6]",
                ["numerix, xla compiler", "jax.jit(jax.random.uniform)",
                 "jax.random.uniform eager", "numerix eager xla"],
                rounds, "xla compiler <= 1.15x jax.jit")  # fmt: skip


def bench_torch(repeat: int) -> dict[str, Any]:
    import torch

    key = nx.random.key(7, backend="torch")
    want = nx.random.uniform(nx.random.key(7, backend="binary"), (N,)).to_numpy()

    def ours() -> Any:
        return nx.random.uniform(key, (N,))

    def ours_normal() -> Any:
        return nx.random.normal(key, (N,))

    def torch_rand() -> Any:
        return torch.rand(N)

    def torch_randn() -> Any:
        return torch.randn(N)

    np.testing.assert_array_equal(ours().to_numpy(), want, strict=True)
    rounds = interleaved([ours, ours_normal, torch_rand, torch_randn], repeat)
    return _row("torch eager, f32[10**6] (torch's own generators for context: other numbers)",
                ["numerix uniform", "numerix normal", "torch.rand", "torch.randn"],
                rounds, "context")  # fmt: skip


_FIRST = """
import time, sys
t0 = time.perf_counter()
if sys.argv[1] == "numerix":
    import numerix as nx
    key = nx.random.key(7, backend="xla")
    t0 = time.perf_counter()
    nx.jit(lambda k: nx.random.uniform(k, (10**6,)), compiler="xla")(key).data.block_until_ready()
else:
    import jax
    key = jax.random.PRNGKey(7)
    key.block_until_ready()
    t0 = time.perf_counter()
    jax.jit(lambda k: jax.random.uniform(k, (10**6,), "float32"))(key).block_until_ready()
print(time.perf_counter() - t0)
"""


def bench_first_calls(repeat: int) -> dict[str, Any]:
    """Each sample a fresh process: the first jitted uniform, after the key exists."""
    rounds: list[list[float]] = [[], []]
    for _ in range(repeat):
        for side, r in zip(("numerix", "jax"), rounds):
            out = subprocess.run([sys.executable, "-c", _FIRST, side], capture_output=True,
                                 text=True, check=True)  # fmt: skip
            r.append(float(out.stdout.strip().splitlines()[-1]))
    return _row("xla, first jitted uniform f32[10**6] (trace + compile), fresh process",
                ["numerix, xla compiler", "jax.jit"], rounds, "context")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="fewer loops: a smoke test")
    p.add_argument("--repeat", type=int, default=11, help="timeit loops per candidate")
    args = p.parse_args(argv)
    repeat = 3 if args.quick else args.repeat
    rows = [bench_binary(repeat)]
    if "xla" in plugins.compiler_entries():
        rows.append(bench_xla(repeat))
        rows.append(bench_first_calls(3 if args.quick else 5))
    else:
        print("(numerix-xla is not installed: no xla rows)")
    if "torch" in plugins.backend_entries():
        rows.append(bench_torch(repeat))
    for r in rows:
        print(f"{r['name']}  (target: {r['target']})")
        base = statistics.median(r["rounds"][0])
        for name, times in zip(r["names"], r["rounds"]):
            med = statistics.median(times)
            print(f"  {name:<32} {med * 1e3:9.2f} ms  min-max {min(times) * 1e3:.2f}-"
                  f"{max(times) * 1e3:.2f} ms  numerix / this {base / med:.3f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
