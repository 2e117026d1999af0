"""Eager numerix on the xla and torch backends beside the raw library each wraps.

    python benchmarks/backends.py            # every installed backend
    python benchmarks/backends.py --quick    # a smoke test

For each of xla (host client) and torch (cpu): an add of two float32 4-vectors and the
seed matmul {10000,784}·{784,10}, numerix beside raw JAX (``jax.numpy.add`` eager, and
``jax.jit``-ed ``jnp.dot``) and raw PyTorch (``torch.add``, ``torch.matmul``). All
figures come from one run; timeit loops of the two sides alternate and the median is
reported. Results are synchronised (``block_until_ready``) before the clock stops.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import numpy as np

import numerix as nx
from numerix import plugins

# the timing helper of benchmarks/run.py (this folder is on sys.path when run as a script)
from run import compare as _compare

compare = _compare


def _row(name: str, raw: str, t_nx: float, t_raw: float, unit: str) -> dict[str, Any]:
    return {"name": name, "raw": raw, "numerix_s": t_nx, "raw_s": t_raw, "unit": unit,
            "ratio": t_nx / t_raw, "difference_s": t_nx - t_raw}  # fmt: skip


def bench_xla(repeat: int) -> list[dict[str, Any]]:
    import jax
    import jax.numpy as jnp

    rows = []
    a_np, b_np = np.arange(4, dtype=np.float32), np.ones(4, dtype=np.float32)
    a, b = nx.tensor(a_np, backend="xla"), nx.tensor(b_np, backend="xla")
    ja, jb = jnp.asarray(a_np), jnp.asarray(b_np)
    np.testing.assert_array_equal(nx.add(a, b).to_numpy(), a_np + b_np)

    def nx_add() -> Any:
        return nx.add(a, b).data.block_until_ready()

    def jnp_add() -> Any:
        return jnp.add(ja, jb).block_until_ready()

    t_nx, t_raw = compare(nx_add, jnp_add, repeat)
    rows.append(_row("xla: add f32[4] + f32[4]", "jax.numpy.add", t_nx, t_raw, "us"))

    rng = np.random.default_rng(0)
    x_np = rng.random((10_000, 784), dtype=np.float32)
    w_np = rng.standard_normal((784, 10), dtype=np.float32)
    x, w = nx.tensor(x_np, backend="xla"), nx.tensor(w_np, backend="xla")
    jx, jw = jnp.asarray(x_np), jnp.asarray(w_np)
    dot = jax.jit(jnp.dot)
    np.testing.assert_allclose(nx.dot(x, w).to_numpy(), x_np @ w_np, rtol=1e-4, atol=1e-3)

    def nx_dot() -> Any:
        return nx.dot(x, w).data.block_until_ready()

    def jax_dot() -> Any:
        return dot(jx, jw).block_until_ready()

    t_nx, t_raw = compare(nx_dot, jax_dot, repeat)
    rows.append(_row("xla: matmul f32[10000][784]·f32[784][10]", "jax.jit(jnp.dot)", t_nx, t_raw,
                     "ms"))  # fmt: skip
    return rows


def bench_torch(repeat: int) -> list[dict[str, Any]]:
    import torch

    rows = []
    a_np, b_np = np.arange(4, dtype=np.float32), np.ones(4, dtype=np.float32)
    a, b = nx.tensor(a_np, backend="torch:cpu"), nx.tensor(b_np, backend="torch:cpu")
    ta, tb = torch.from_numpy(a_np), torch.from_numpy(b_np)
    np.testing.assert_array_equal(nx.add(a, b).to_numpy(), a_np + b_np)
    add = nx.add
    t_nx, t_raw = compare(lambda: add(a, b), lambda: torch.add(ta, tb), repeat)
    rows.append(_row("torch: add f32[4] + f32[4]", "torch.add", t_nx, t_raw, "us"))

    rng = np.random.default_rng(0)
    x_np = rng.random((10_000, 784), dtype=np.float32)
    w_np = rng.standard_normal((784, 10), dtype=np.float32)
    x, w = nx.tensor(x_np, backend="torch:cpu"), nx.tensor(w_np, backend="torch:cpu")
    tx, tw = torch.from_numpy(x_np), torch.from_numpy(w_np)
    np.testing.assert_allclose(nx.dot(x, w).to_numpy(), x_np @ w_np, rtol=1e-4, atol=1e-3)
    dot = nx.dot
    t_nx, t_raw = compare(lambda: dot(x, w), lambda: torch.matmul(tx, tw), repeat)
    rows.append(_row("torch: matmul f32[10000][784]·f32[784][10]", "torch.matmul", t_nx, t_raw,
                     "ms"))  # fmt: skip
    return rows


def render(rows: list[dict[str, Any]]) -> str:
    scale = {"us": 1e6, "ms": 1e3}
    out = [f"{'benchmark':<46} {'numerix':>11} {'raw':>11} {'ratio':>7} {'difference':>11}  raw"]
    for r in rows:
        s = scale[r["unit"]]
        u = "µs" if r["unit"] == "us" else "ms"
        out.append(
            f"{r['name']:<46} {r['numerix_s'] * s:>8.2f} {u} {r['raw_s'] * s:>8.2f} {u} "
            f"{'×' + format(r['ratio'], '.2f'):>7} {r['difference_s'] * s:>+8.2f} {u}  {r['raw']}"
        )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeat", type=int, default=15)
    p.add_argument("--quick", action="store_true")
    args = p.parse_args(argv)
    repeat = 5 if args.quick else args.repeat
    installed = plugins.backend_entries()
    rows: list[dict[str, Any]] = []
    if "xla" in installed:
        rows += bench_xla(repeat)
    if "torch" in installed:
        rows += bench_torch(repeat)
    if not rows:
        print("benchmarks/backends.py: neither numerix-xla nor numerix-torch is installed")
        return 0
    print("all figures from one run; medians of alternating timeit loops")
    print(render(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
