"""The fast.ai naive matmul loop, written with numerix, on each installed backend.

    python benchmarks/naive_loop.py                 # a[5][32] · b[32][10], 7 rounds
    python benchmarks/naive_loop.py --size 5 784 10 --rounds 3   # the seed's 5-row subset
    python benchmarks/naive_loop.py --quick         # a smoke test

The seed (fast.ai part 2, "matmul") multiplies a 5-row subset of MNIST by a weight matrix
with three Python loops, ``t1[i, j] += m1[i, k] * m2[k, j]``. numerix tensors are
immutable, so the update is ``indexed_add``::

    c = nx.indexed_add(c, [[i, j]], a[i, k] * b[k, j])

Every inner step indexes with new Python ints: on a backend that compiled a program per
index, each step would compile. The figures: seconds per whole loop on binary, xla and
torch (the same numerix code, the backend chosen by ``backend=``), the rounds of the
three interleaved (binary, xla, torch, binary, ...), median and min-max over the rounds;
and the first loop of each backend in a fresh interpreter (imports excluded, kernel
compiles included). Each result is checked against numpy before it is timed. Nothing
here is asserted anywhere (see README.md).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from typing import Any

import numpy as np

import numerix as nx
from numerix import plugins

BACKENDS = ("binary", "xla", "torch")


def naive_matmul(a: nx.Tensor, b: nx.Tensor) -> nx.Tensor:
    """``a @ b`` by the seed's three loops, one element update at a time."""
    ar, ac = a.shape
    _, bc = b.shape
    c = nx.zeros((ar, bc), dtype=a.dtype, backend=a.backend)
    for i in range(ar):
        for j in range(bc):
            for k in range(ac):
                c = nx.indexed_add(c, [[i, j]], a[i, k] * b[k, j])
    return c


def operands(size: tuple[int, int, int]) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    m, k, n = size
    return (rng.random((m, k), dtype=np.float32),
            rng.standard_normal((k, n), dtype=np.float32))  # fmt: skip


def one_loop(backend: str, a_np: np.ndarray, b_np: np.ndarray) -> float:
    """Seconds for one whole loop on ``backend``, the result synchronised and checked."""
    a, b = nx.tensor(a_np, backend=backend), nx.tensor(b_np, backend=backend)
    t = time.perf_counter()
    c = naive_matmul(a, b)
    got = c.to_numpy()
    elapsed = time.perf_counter() - t
    want = a_np.astype(np.float64) @ b_np.astype(np.float64)
    if got.shape != want.shape or not np.allclose(got, want, rtol=1e-4, atol=1e-4):
        raise SystemExit(f"naive_loop: {backend} disagrees with numpy; not timing a wrong answer")
    return elapsed


_FIRST = """
import json, sys
sys.path.insert(0, {here!r})
import numerix as nx
from numerix import plugins
from naive_loop import one_loop, operands
plugins.get_backend({backend!r})  # the import of the backend's library is not timed
a, b = operands({size!r})
print(json.dumps(one_loop({backend!r}, a, b)))
"""


def first_loop(backend: str, size: tuple[int, int, int]) -> float:
    """The first loop of ``backend`` in a fresh interpreter (kernel compiles included)."""
    here = str(__import__("pathlib").Path(__file__).resolve().parent)
    code = _FIRST.format(here=here, backend=backend, size=size)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)  # fmt: skip
    return float(json.loads(out.stdout.strip().splitlines()[-1]))


def available() -> list[str]:
    names = []
    for name in BACKENDS:
        try:
            plugins.get_backend(name)
        except nx.NumerixError:
            continue
        names.append(name)
    return names


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--size", type=int, nargs=3, default=(5, 32, 10), metavar=("M", "K", "N"))
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--quick", action="store_true", help="a[2][8] · b[8][3], 2 rounds")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    size = (2, 8, 3) if args.quick else tuple(args.size)
    rounds = 2 if args.quick else args.rounds
    names = available()
    first = {name: first_loop(name, size) for name in names}  # type: ignore[arg-type]
    a_np, b_np = operands(size)  # type: ignore[arg-type]
    for name in names:  # warm: the steady-state loop is timed below
        one_loop(name, a_np, b_np)
    times: dict[str, list[float]] = {name: [] for name in names}
    for _ in range(rounds):
        for name in names:
            times[name].append(one_loop(name, a_np, b_np))
    m, k, n = size
    res = {"size": size, "steps": m * k * n, "rounds": rounds, "first_s": first,
           "median_s": {b: statistics.median(t) for b, t in times.items()},
           "min_s": {b: min(t) for b, t in times.items()},
           "max_s": {b: max(t) for b, t in times.items()}}  # fmt: skip
    if args.json:
        print(json.dumps(res, indent=2))
        return res
    print(f"naive matmul loop a[{m}][{k}] · b[{k}][{n}]: {m * k * n} indexed_add steps, "
          f"{rounds} interleaved rounds")  # fmt: skip
    ref = res["median_s"].get("torch")
    print(f"{'backend':<8} {'median s':>9} {'min-max s':>17} {'us/step':>8} {'first s':>8}"
          f" {'vs torch':>9}")  # fmt: skip
    for b in names:
        med = res["median_s"][b]
        ratio = f"{med / ref:.2f}x" if ref else "-"
        print(f"{b:<8} {med:9.3f} {res['min_s'][b]:8.3f}-{res['max_s'][b]:<8.3f} "
              f"{med / (m * k * n) * 1e6:8.1f} {first[b]:8.2f} {ratio:>9}")  # fmt: skip
    return res


if __name__ == "__main__":
    main()
