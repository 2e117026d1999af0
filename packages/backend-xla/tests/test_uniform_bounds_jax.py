"""numerix.random.uniform with bounds against jax.random.uniform itself, bit for bit: JAX
fuses ``u * span + minval`` into one multiply-add in float32 and float64 (and rounds
twice in float16 and bfloat16), which numerix emulates on every backend, eagerly and
under every compiler; over many keys, bounds given as numbers and as tensors,
negative, tiny, huge and empty spans."""

from __future__ import annotations

import warnings

import jax
import numpy as np
import pytest

import numerix as nx
from numerix import random as R
from numerix_xla.backend import X64Warning

with warnings.catch_warnings():
    warnings.simplefilter("ignore", X64Warning)
    nx.tensor(0, backend="xla")  # numerix's 64-bit mode, so jax's float64 draws exist

FLOATS = ["float32", "float64", "float16", "bfloat16"]
_rng = np.random.default_rng(20)
BOUNDS = [
    (-2.0, 3.0), (0.0, 1.0), (-1.0, 1.0), (1000.0, 1001.0), (-1e6, -1e6 + 3.7), (1e-12, 1.0),
    (-3.3e35, 2.9e35), (-7.0, 1e30), (-1e300, 1e300), (-1.5e300, 1.6e302), (1e-20, 3e-20),
    (5.5, 5.5), (3.0, 2.0), (-0.0, 0.1), (0.1, 0.7), (-1e308, 1e308),
    *[tuple(float(v) for v in sorted(_rng.uniform(-1e4, 1e4, 2))) for _ in range(6)],
    *[(float(_rng.uniform(-1, 1) * 10.0 ** _rng.integers(-30, 30)),
       float(_rng.uniform(-1, 1) * 10.0 ** _rng.integers(-30, 30))) for _ in range(6)],
]  # fmt: skip
SEEDS = [0, 2**31 + 5]
# (backend, compiler) pairs, eager first
RUNS = [("binary", None), ("torch", None), ("xla", None), ("binary", "evaluator"),
        ("torch", "torch"), ("xla", "xla")]  # fmt: skip


def same_bits(got: nx.Tensor, want: np.ndarray, what: str) -> None:
    a = got.to_numpy()
    assert a.dtype == want.dtype and a.shape == want.shape, (what, got.describe())
    u = f"u{a.dtype.itemsize}"
    nan = np.isnan(a.astype(np.float64)) & np.isnan(want.astype(np.float64))
    bad = (a.view(u) != want.view(u)) & ~nan
    assert not bad.any(), (what, a[bad][:4], want[bad][:4])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize(("backend", "compiler"), RUNS, ids=str)
def test_uniform_with_bounds_is_jaxs_bit_for_bit(backend: str, compiler: str | None,
                                                 dtype: str) -> None:  # fmt: skip
    d = getattr(nx, dtype)

    def draw(k: nx.Tensor, *bounds: nx.Tensor) -> list[nx.Tensor]:
        numbers = [R.uniform(k, (300,), d, lo, hi) for lo, hi in BOUNDS]
        pairs = zip(bounds[::2], bounds[1::2])
        return numbers + [R.uniform(k, (300,), d, lo, hi) for lo, hi in pairs]

    fn = draw if compiler is None else nx.jit(draw, compiler=compiler)
    tensors = [nx.tensor(v, dtype=d, backend=backend) for pair in BOUNDS for v in pair]
    for seed in SEEDS:
        got = fn(R.key(seed, backend=backend), *tensors)
        jk = jax.random.PRNGKey(seed)
        with np.errstate(all="ignore"):
            want = [np.asarray(jax.random.uniform(jk, (300,), dtype, lo, hi)) for lo, hi in BOUNDS]
        for i, (lo, hi) in enumerate(BOUNDS):
            same_bits(got[i], want[i], f"{seed} ({lo}, {hi}) as numbers")
            same_bits(got[len(BOUNDS) + i], want[i], f"{seed} ({lo}, {hi}) as tensors")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(), (0,), (2, 0, 3), (4, 5)], ids=str)
def test_uniform_with_broadcast_tensor_bounds(dtype: str, shape: tuple[int, ...]) -> None:
    lo = np.asarray(-1.7, dtype) if not shape else np.linspace(-3.1, 2.2, shape[-1], dtype=dtype)
    for backend in ["binary", "torch", "xla"]:
        k, jk = R.key(77, backend=backend), jax.random.PRNGKey(77)
        got = R.uniform(k, shape, getattr(nx, dtype), nx.tensor(lo, backend=backend), 9.3)
        same_bits(got, np.asarray(jax.random.uniform(jk, shape, dtype, lo, 9.3)), backend)
