"""torch's dot takes torch.mm for two matrices, torch.matmul wherever else matmul's axes
are the dot's (a stack of matrices against a matrix or a vector, a vector against a
stack, two stacks with their batch axes first) and an einsum otherwise: every path
against numpy, over the dtypes torch computes and those it holds as signed bits,
eagerly and compiled."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import numerix as nx
from numerix_torch.backend import _dot_plan

DTYPES = [nx.int8, nx.uint16, nx.int64, nx.float16, nx.bfloat16, nx.float32, nx.complex64]
# (x's shape, y's shape, contract, batch) of dot_general, and whether it is matmul's layout
CASES = [
    ((2, 3, 4), (4, 5), ((2,), (0,)), ((), ()), True),
    ((2, 3, 4), (4,), ((2,), (0,)), ((), ()), True),
    ((4,), (2, 4, 3), ((0,), (1,)), ((), ()), True),
    ((2, 3, 4), (2, 4, 5), ((2,), (1,)), ((0,), (0,)), True),
    ((2, 5, 3, 4), (2, 5, 4, 1), ((3,), (2,)), ((0, 1), (0, 1)), True),
    ((0, 3, 4), (0, 4, 2), ((2,), (1,)), ((0,), (0,)), True),
    ((4, 2, 3), (2, 4, 5), ((0,), (1,)), ((1,), (0,)), False),
    ((2, 3, 4), (5, 4), ((2,), (1,)), ((), ()), False),
    ((3, 4), (2, 3, 5), ((0,), (1,)), ((), ()), False),
]


def _sample(dtype: nx.DType, shape: tuple[int, ...], seed: int) -> np.ndarray:
    r = np.random.default_rng(seed)
    a = r.integers(0 if dtype.kind == "u" else -3, 4, size=shape).astype(np.float64)
    if dtype.kind == "c":
        a = a + 1j * r.integers(-3, 4, size=shape)
    return a.astype(dtype.numpy_dtype)


def _want(
    a: np.ndarray, b: np.ndarray, contract: tuple, batch: tuple, dtype: nx.DType
) -> np.ndarray:
    # numpy's einsum of the same axes, in float64 (complex128) and cast back
    letters = iter("abcdefghijkl")
    sa, sb = [""] * a.ndim, [""] * b.ndim
    for i, j in zip(*batch):
        sa[i] = sb[j] = next(letters)
    for i, j in zip(*contract):
        sa[i] = sb[j] = next(letters)
    sa = [s or next(letters) for s in sa]
    sb = [s or next(letters) for s in sb]
    out = [sa[i] for i in batch[0]]
    out += [s for i, s in enumerate(sa) if i not in contract[0] and i not in batch[0]]
    out += [s for j, s in enumerate(sb) if j not in contract[1] and j not in batch[1]]
    wide = np.complex128 if dtype.kind == "c" else np.float64
    r = np.einsum(f"{''.join(sa)},{''.join(sb)}->{''.join(out)}", a.astype(wide), b.astype(wide))
    return r.astype(dtype.numpy_dtype)


def test_matmul_layouts_take_torch_matmul() -> None:
    # torch.matmul itself for matmul's layouts alone; two matrices: torch.mm, matmul's
    # own kernel for them
    for sa, sb, (cx, cy), (bx, by), plain in CASES:
        plan = _dot_plan(len(sa), len(sb), cx, bx, cy, by, nx.float32)
        assert (plan is torch.matmul) == plain, (sa, sb)
    assert _dot_plan(2, 2, (1,), (), (0,), (), nx.float32) is torch.mm


def _compiled(contract: tuple, batch: tuple) -> Any:
    return nx.jit(lambda p, q: nx.dot_general(p, q, contract, batch), compiler="torch")


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_dot_general_on_torch_matches_numpy(dtype: nx.DType) -> None:
    for sa, sb, contract, batch, _ in CASES:
        a, b = _sample(dtype, sa, 1), _sample(dtype, sb, 2)
        x = nx.tensor(a, backend="torch", device="cpu")
        y = nx.tensor(b, backend="torch", device="cpu")
        want = _want(a, b, contract, batch, dtype)
        for got in (nx.dot_general(x, y, contract, batch), _compiled(contract, batch)(x, y)):
            assert (got.shape, got.dtype) == (want.shape, dtype), (got.describe(), sa, sb)
            g, w = got.to_numpy(), want
            if dtype is nx.bfloat16:
                g, w = g.astype(np.float32), w.astype(np.float32)
            np.testing.assert_allclose(g, w, rtol=1e-2 if dtype.bits == 16 else 1e-6)
