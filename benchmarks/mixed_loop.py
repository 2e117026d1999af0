"""The eager loop of mixed small ops users write, numerix against the raw library.

    python benchmarks/mixed_loop.py                 # every installed backend, 9 rounds
    python benchmarks/mixed_loop.py --backend binary --rounds 15 --json

2,000 iterations of ``x = tanh(x * 0.5 + 0.1)[0:4] - x.sum() * 0.001`` on an f32[4][4]:
a Python float times a tensor and added to it, an element-wise function, a slice, a
reduction to a 0-d tensor, a Python float times that 0-d tensor, and a tensor minus a
0-d tensor. numerix on each backend against the library it wraps, written the way its
users write it: numpy (the constants as float32 scalars, so that numpy stays in float32
as numerix does), torch, jax.numpy. Each side's result is checked against numpy's
before it is timed; the rounds interleave numerix and the raw loop (a load that comes
and goes falls on both); printed: per-op times, and the ratio's median and spread over
the rounds. Nothing here is asserted anywhere.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections.abc import Callable
from typing import Any

import numpy as np

import numerix as nx
from numerix.benchmarking import interleave

STEPS = 2000
#: ops per iteration: *, +, tanh, [0:4], sum, *, -
OPS = 7


def numerix_loop(x: Any) -> Any:
    for _ in range(STEPS):
        x = nx.tanh(x * 0.5 + 0.1)[0:4] - x.sum() * 0.001
    return x


def numpy_loop(x: np.ndarray) -> np.ndarray:
    h, t, m = np.float32(0.5), np.float32(0.1), np.float32(0.001)
    for _ in range(STEPS):
        x = np.tanh(x * h + t)[0:4] - x.sum() * m
    return x


def _raw(backend: str, a: np.ndarray) -> tuple[Callable[[Any], Any], Any, Callable[[Any], Any]]:
    """The raw library's loop, its input, and what makes its result a numpy array."""
    if backend == "torch":
        import torch

        def torch_loop(x: Any) -> Any:
            for _ in range(STEPS):
                x = torch.tanh(x * 0.5 + 0.1)[0:4] - x.sum() * 0.001
            return x

        return torch_loop, torch.from_numpy(a.copy()), lambda r: r.numpy()
    if backend == "xla":
        import jax.numpy as jnp

        def jax_loop(x: Any) -> Any:
            for _ in range(STEPS):
                x = jnp.tanh(x * 0.5 + 0.1)[0:4] - x.sum() * 0.001
            return x.block_until_ready()

        return jax_loop, jnp.asarray(a), np.asarray
    return numpy_loop, a, np.asarray


def run(backend: str, rounds: int) -> dict[str, Any]:
    a = np.random.default_rng(0).random((4, 4), dtype=np.float32)
    want = numpy_loop(a)
    raw, raw_in, to_np = _raw(backend, a)
    x = nx.tensor(a, backend=backend)

    def ours() -> Any:
        r = numerix_loop(x)
        r.backend.synchronize(r)
        return r

    np.testing.assert_allclose(ours().to_numpy(), want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(to_np(raw(raw_in)), want, rtol=1e-4, atol=1e-5)
    t_ours, t_raw = interleave([ours, lambda: raw(raw_in)], rounds, warmup=1)
    ratios = [p / q for p, q in zip(t_ours, t_raw)]
    per_op = 1e6 / (STEPS * OPS)
    return {
        "backend": backend,
        "raw": {"binary": "numpy", "torch": "torch", "xla": "jax.numpy"}.get(backend, backend),
        "numerix_us_per_op": statistics.median(t_ours) * per_op,
        "raw_us_per_op": statistics.median(t_raw) * per_op,
        "ratio": statistics.median(ratios),
        "ratio_spread": (min(ratios), max(ratios)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", action="append", help="binary, torch, xla (default: all)")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = []
    for backend in args.backend or ["binary", "torch", "xla"]:
        try:
            nx.get_backend(backend)
        except nx.NumerixError:
            continue
        row = run(backend, args.rounds)
        rows.append(row)
        if not args.json:
            lo, hi = row["ratio_spread"]
            print(
                f"{backend:6s} vs {row['raw']:9s}: {row['numerix_us_per_op']:.2f} µs/op against "
                f"{row['raw_us_per_op']:.2f}, ratio {row['ratio']:.2f} ({lo:.2f}–{hi:.2f})",
                flush=True,
            )
    if args.json:
        print(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
