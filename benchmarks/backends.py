"""Eager numerix on the xla and torch backends beside the raw library each wraps.

    python benchmarks/backends.py            # every installed backend
    python benchmarks/backends.py --quick    # a smoke test

For each of xla (host client) and torch (cpu): an add of two float32 4-vectors and the
seed matmul {10000,784}·{784,10}, numerix beside raw JAX (``jax.numpy.add`` eager, and
``jax.jit``-ed ``jnp.dot``) and raw PyTorch (``torch.add``, ``torch.matmul``). All
figures come from one run, timed by the harness of ``benchmarks/ops.py``: rounds of the
two sides alternate, and each row gives the median and the spread (min–max over the
rounds) of each side. Results are synchronised (``block_until_ready``) before the clock
stops. ``--json`` prints the figures as JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import numpy as np

import numerix as nx
from numerix import plugins

# the harness every benchmark shares (numerix.benchmarking)
from numerix.benchmarking import rounds, spread

MIN_TIME = 0.1  # seconds per round


def _row(name: str, raw: str, fn_nx: Any, fn_raw: Any, repeat: int, unit: str
         ) -> dict[str, Any]:  # fmt: skip
    return {"name": name, "raw": raw, "unit": unit,
            **spread(*rounds(fn_nx, fn_raw, repeat, MIN_TIME))}  # fmt: skip


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

    rows.append(_row("xla: add f32[4] + f32[4]", "jax.numpy.add", nx_add, jnp_add, repeat, "us"))

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

    rows.append(_row("xla: matmul f32[10000][784]·f32[784][10]", "jax.jit(jnp.dot)", nx_dot,
                     jax_dot, repeat, "ms"))  # fmt: skip
    return rows


def bench_torch(repeat: int) -> list[dict[str, Any]]:
    import torch

    rows = []
    a_np, b_np = np.arange(4, dtype=np.float32), np.ones(4, dtype=np.float32)
    a, b = nx.tensor(a_np, backend="torch:cpu"), nx.tensor(b_np, backend="torch:cpu")
    ta, tb = torch.from_numpy(a_np), torch.from_numpy(b_np)
    np.testing.assert_array_equal(nx.add(a, b).to_numpy(), a_np + b_np)
    add = nx.add
    rows.append(_row("torch: add f32[4] + f32[4]", "torch.add", lambda: add(a, b),
                     lambda: torch.add(ta, tb), repeat, "us"))  # fmt: skip

    rng = np.random.default_rng(0)
    x_np = rng.random((10_000, 784), dtype=np.float32)
    w_np = rng.standard_normal((784, 10), dtype=np.float32)
    x, w = nx.tensor(x_np, backend="torch:cpu"), nx.tensor(w_np, backend="torch:cpu")
    tx, tw = torch.from_numpy(x_np), torch.from_numpy(w_np)
    np.testing.assert_allclose(nx.dot(x, w).to_numpy(), x_np @ w_np, rtol=1e-4, atol=1e-3)
    dot = nx.dot
    rows.append(_row("torch: matmul f32[10000][784]·f32[784][10]", "torch.matmul",
                     lambda: dot(x, w), lambda: torch.matmul(tx, tw), repeat, "ms"))  # fmt: skip
    return rows


def render(rows: list[dict[str, Any]]) -> str:
    scale = {"us": 1e6, "ms": 1e3}
    head = ("benchmark", "numerix (min–max)", "raw (min–max)", "ratio", "difference", "raw")
    body = []
    for r in rows:
        s, u = scale[r["unit"]], "µs" if r["unit"] == "us" else "ms"
        body.append((
            r["name"],
            f"{r['numerix_s'] * s:,.2f} {u} ({r['numerix_min_s'] * s:,.2f}–{r['numerix_max_s'] * s:,.2f})",
            f"{r['raw_s'] * s:,.2f} {u} ({r['raw_min_s'] * s:,.2f}–{r['raw_max_s'] * s:,.2f})",
            f"×{r['ratio']:.2f}", f"{r['difference_s'] * s:+,.2f} {u}", r["raw"],
        ))  # fmt: skip
    widths = [max(len(c) for c in col) for col in zip(head, *body, strict=True)]

    def fmt(row: tuple[str, ...]) -> str:
        cells = [row[0].ljust(widths[0])]
        cells += [c.rjust(w) for c, w in zip(row[1:-1], widths[1:-1], strict=True)]
        return "  ".join([*cells, row[-1]]).rstrip()

    return "\n".join([fmt(head), "  ".join("-" * w for w in widths), *map(fmt, body)])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeat", type=int, default=15)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
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
    if args.json:
        print(json.dumps({"repeat": repeat, "min_time": MIN_TIME, "results": rows}, indent=2))
        return 0
    print(f"all figures from one run: median (min–max) of {repeat} rounds per side, the two "
          "sides' rounds alternating")  # fmt: skip
    print(render(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
