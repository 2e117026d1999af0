"""einsum against numpy.einsum: products, traces, diagonals, transposes, sums and
broadcasting ``...``, over every numeric dtype and the edge shapes (0-d, empty, size-1
broadcasting), eagerly and compiled; named errors for bad subscripts."""

from __future__ import annotations

import numpy as np
import pytest

import numerix as nx
from numerix import dtypes
from numerix.testing.oracle import NUMERIC, check, ids

# (subscripts, operand shapes)
CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),  # matmul
    ("bij,bjk->bik", [(2, 1, 3), (2, 3, 2)]),  # batched
    ("ii", [(3, 3)]),  # trace
    ("iij->ji", [(2, 2, 3)]),  # diagonal, then transpose
    ("i,j", [(2,), (0,)]),  # outer product, empty
    ("...ij,...jk->...ik", [(2, 1, 2, 3), (4, 3, 2)]),  # broadcast batch, size 1
    ("ij,jk,kl->il", [(2, 3), (3, 0), (0, 2)]),  # a chain, an empty contraction
    (",i->i", [(), (3,)]),  # 0-d
    ("ijk->", [(2, 3, 4)]),  # sum of everything
    ("i,i->i", [(1,), (3,)]),  # size-1 broadcasting of a named axis
]


def _operands(dtype: dtypes.DType, shapes: list[tuple[int, ...]]) -> list[np.ndarray]:
    rng = np.random.default_rng(len(shapes))
    lo = 0 if dtype.kind == "u" else -3
    # small integers: every product and sum is exact in every dtype
    return [
        (rng.integers(lo, 4, size=s) + (1j * rng.integers(lo, 4, size=s) if dtype.kind == "c" else 0))
        .astype(dtype.numpy_dtype)
        for s in shapes
    ]  # fmt: skip


def _expected(subscripts: str, arrays: list[np.ndarray], dtype: dtypes.DType) -> np.ndarray:
    wide = np.complex128 if dtype.kind == "c" else np.float64
    r = np.einsum(subscripts, *[a.astype(wide) for a in arrays])
    return np.asarray(r).astype(dtype.numpy_dtype)


@pytest.mark.numerix_op("einsum")
@pytest.mark.parametrize("case", CASES, ids=[c[0] or "0-d" for c in CASES])
@pytest.mark.parametrize("dtype", NUMERIC, ids=ids)
def test_einsum(dtype: dtypes.DType, case: tuple[str, list[tuple[int, ...]]]) -> None:
    subscripts, shapes = case
    arrays = _operands(dtype, shapes)
    got = nx.einsum(subscripts, *[nx.tensor(a) for a in arrays])
    check(got, _expected(subscripts, arrays, dtype), dtype)


@pytest.mark.numerix_op("einsum")
@pytest.mark.parametrize("case", CASES[:7:3], ids=[c[0] for c in CASES[:7:3]])
@pytest.mark.parametrize("dtype", [dtypes.int32, dtypes.float32, dtypes.complex64], ids=ids)
def test_einsum_compiled(dtype: dtypes.DType, case: tuple[str, list[tuple[int, ...]]]) -> None:
    subscripts, shapes = case
    arrays = _operands(dtype, shapes)
    f = nx.jit(lambda *xs: nx.einsum(subscripts, *xs))
    check(f(*[nx.tensor(a) for a in arrays]), _expected(subscripts, arrays, dtype), dtype)


@pytest.mark.numerix_op("einsum")
@pytest.mark.parametrize(
    ("subscripts", "shapes", "error", "match"),
    [
        ("ij,jk", [(2, 3)], nx.ArgumentError, r"einsum: 'ij,jk' names 2 operands, got 1"),
        ("i1->i", [(2,)], nx.ArgumentError, r"einsum: 'i1->i' has character '1'"),
        ("ij->k", [(2, 3)], nx.ArgumentError, r"output 'k' of 'ij->k' has 'k', which no operand"),
        ("ij->ii", [(2, 2)], nx.ArgumentError, r"output 'ii' of 'ij->ii' repeats 'i'"),
        ("i->i->i", [(2,)], nx.ArgumentError, r"more than one '->'"),
        ("ijk", [(2, 3)], nx.ShapeError, r"term 'ijk' of 'ijk' names 3 axes, but operand 0 is "),
        ("ij,jk", [(2, 3), (4, 2)], nx.ShapeError, r"axis 'j' has size 3 in one operand and 4"),
        ("ii", [(2, 3)], nx.ShapeError, r"'ii': axis 'i' has size 2 in one operand and 3 in f32"),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_einsum_errors(
    subscripts: str, shapes: list[tuple[int, ...]], error: type, match: str
) -> None:
    with pytest.raises(error, match=match):
        nx.einsum(subscripts, *[nx.zeros(s) for s in shapes])
