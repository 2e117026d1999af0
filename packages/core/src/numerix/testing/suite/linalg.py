"""Products: dot, matmul (1-d operands, broadcast batches), tensordot, outer, against numpy."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import numerix as nx
from numerix import dtypes
from numerix.testing.oracle import (
    ALL,
    ALL_PAIRS,
    Cases,
    check,
    expected_promotion,
    ids,
    noncontiguous,
    oracle,
    pair_ids,
    sample,
    shape_id,
)

DOT_SHAPES = [
    ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((), (3,)), ((2, 3), ()),
    ((), ()), ((2, 3, 4), (4, 5)), ((2, 3, 4), (5, 4, 2)), ((4,), (2, 4, 3)), ((0,), (0,)),
    ((2, 0), (0, 3)), ((0, 3), (3, 2)),
]  # fmt: skip

MATMUL_SHAPES = [
    ((3,), (3,)), ((3,), (3, 4)), ((2, 3), (3,)), ((2, 3), (3, 4)), ((2, 1, 3, 4), (5, 4, 2)),
    ((4,), (2, 4, 3)), ((2, 3, 4), (4,)), ((1, 2, 3), (4, 3, 5)), ((0, 3), (3, 2)),
    ((2, 0), (0, 3)), ((5, 2, 3), (5, 3, 0)), ((3, 1, 2, 2), (1, 4, 2, 2)),
]  # fmt: skip


def _data(d: dtypes.DType, shape: tuple[int, ...], seed: int) -> np.ndarray:
    return sample(d, shape, seed)


def _scale(a: np.ndarray, b: np.ndarray, n: int) -> float:
    # the size of the sum of products, for the absolute tolerance
    ma = float(np.max(np.abs(a.astype(np.complex128)))) if a.size else 1.0
    mb = float(np.max(np.abs(b.astype(np.complex128)))) if b.size else 1.0
    return max(1.0, ma * mb * max(n, 1))


def _product(
    fn: Any,
    ref: Any,
    da: dtypes.DType,
    db: dtypes.DType,
    sa: tuple[int, ...],
    sb: tuple[int, ...],
    n: int,
    **kw: Any,
) -> None:
    a, b = _data(da, sa, 1), _data(db, sb, 2)
    p = expected_promotion(da, db)
    name = fn.__name__
    if p is None:
        with pytest.raises(nx.DTypeError, match=rf"^{name}: cannot promote {da} with {db}"):
            fn(nx.tensor(a), nx.tensor(b), **kw)
        return
    if p.kind == "b":
        with pytest.raises(nx.DTypeError, match=rf"^{name}: bool tensors have no product"):
            fn(nx.tensor(a), nx.tensor(b), **kw)
        return
    want = oracle(lambda x, y: ref(x, y, **kw), a, b, compute=p, out=p)
    check(fn(nx.tensor(a), nx.tensor(b), **kw), want, p, scale=_scale(a, b, n))
    check(fn(noncontiguous(a), noncontiguous(b), **kw), want, p, scale=_scale(a, b, n))


@pytest.mark.parametrize("shapes", DOT_SHAPES, ids=shape_id)
@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_dot(dtype: dtypes.DType, shapes: Any) -> None:
    sa, sb = shapes
    _product(nx.dot, np.dot, dtype, dtype, sa, sb, sa[-1] if sa else 1)


@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=shape_id)
@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_matmul(dtype: dtypes.DType, shapes: Any) -> None:
    sa, sb = shapes
    _product(nx.matmul, np.matmul, dtype, dtype, sa, sb, sa[-1])
    if dtype.kind != "b":
        a, b = _data(dtype, sa, 1), _data(dtype, sb, 2)
        check(nx.tensor(a) @ nx.tensor(b), nx.matmul(a, b).to_numpy(), dtype)
        check(a @ nx.tensor(b), nx.matmul(a, b).to_numpy(), dtype)


@pytest.mark.parametrize("pair", ALL_PAIRS, ids=pair_ids)
def test_products_promote(pair: tuple[dtypes.DType, dtypes.DType]) -> None:
    da, db = pair
    cases = Cases()
    for fn, ref, sa, sb, kw in [
        (nx.dot, np.dot, (2, 3), (3,), {}),
        (nx.matmul, np.matmul, (2, 2, 3), (3, 2), {}),
        (nx.tensordot, np.tensordot, (2, 3), (3, 2), {"axes": 1}),
        (nx.outer, np.outer, (3,), (2,), {}),
    ]:
        with cases.case(fn.__name__):
            _product(fn, ref, da, db, sa, sb, 3, **kw)
    cases.finish()


TENSORDOT = [
    ((2, 3, 4), (3, 4, 5), 2), ((2, 3), (3, 4), 1), ((2, 3), (4, 5), 0), ((), (), 0),
    ((3,), (3,), 1), ((2, 3, 4), (4, 3, 2), ([1, 2], [1, 0])), ((2, 3, 4), (4, 3), ((-1, 1), (0, 1))),
    ((2, 3), (2, 5), (0, 0)), ((2, 0), (0, 3), 1), ((2, 3), (3, 2), ([], [])),
]  # fmt: skip


@pytest.mark.parametrize("case", TENSORDOT, ids=shape_id)
@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_tensordot(dtype: dtypes.DType, case: Any) -> None:
    sa, sb, axes = case
    n = int(np.prod([sa[i] for i in (range(len(sa) - axes, len(sa)) if isinstance(axes, int)
                                     else np.atleast_1d(axes[0]).astype(int))]))  # fmt: skip
    _product(nx.tensordot, np.tensordot, dtype, dtype, sa, sb, n, axes=axes)


@pytest.mark.parametrize("sizes", [(3, 4), (0, 2), (1, 1), (5, 0)], ids=shape_id)
@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_outer(dtype: dtypes.DType, sizes: tuple[int, int]) -> None:
    _product(nx.outer, np.outer, dtype, dtype, (sizes[0],), (sizes[1],), 1)


def test_products_of_python_data_and_scalars() -> None:
    a, b = [[1, 2], [3, 4]], [1.5, -1.0]
    check(nx.dot(a, b), np.dot(np.array(a, np.float32), np.array(b, np.float32)), nx.float32)
    check(nx.matmul(a, a), np.matmul(np.array(a), np.array(a)), nx.int64)
    check(nx.dot(2, nx.tensor(a)), 2 * np.array(a), nx.int64)
    # a Python scalar is weak, as in multiply
    check(nx.dot(nx.tensor(a, dtype=nx.int8), 2), 2 * np.array(a, np.int8), nx.int8)
    check(nx.dot(1.5, nx.tensor(b, dtype=nx.float16)), 1.5 * np.array(b, np.float16), nx.float16)
    check(nx.dot(nx.tensor(a, dtype=nx.int16), 0.5), 0.5 * np.array(a, np.float32), nx.float32)
    with pytest.raises(nx.DTypeError, match=r"^dot: Python int 300 does not fit int8"):
        nx.dot(nx.tensor(a, dtype=nx.int8), 300)


def test_product_errors() -> None:
    f = nx.ones((2, 3))
    with pytest.raises(
        nx.ShapeError,
        match=r"^dot: shapes \(2, 3\) and \(2, 3\) are not aligned: "
        r"f32\[2\]\[3\] \w+\([^)]*\) axis 1 \(size 3\) must "
        r"equal f32\[2\]\[3\] \w+\([^)]*\) axis 0 \(size 2\)",
    ):
        nx.dot(f, f)
    with pytest.raises(
        nx.ShapeError, match=r"^matmul: shapes \(2, 3\) and \(4, 5\) are not aligned"
    ):
        nx.matmul(f, nx.ones((4, 5)))
    with pytest.raises(
        nx.ShapeError,
        match=r"^matmul: shapes \(4,\) and \(3, 5\) are not aligned: "
        r"f32\[4\] \w+\([^)]*\) axis 0 \(size 4\) must equal "
        r"f32\[3\]\[5\] \w+\([^)]*\) axis 0 \(size 3\)",
    ):
        nx.matmul(nx.ones((4,)), nx.ones((3, 5)))
    with pytest.raises(nx.ShapeError, match=r"^matmul: shapes \(2, 3\) and \(4,\) are not aligned"):
        f @ nx.ones((4,))
    with pytest.raises(
        nx.ShapeError, match=r"^matmul: shapes \(2,\) and \(3,\) cannot be broadcast"
    ):
        nx.matmul(nx.ones((2, 3, 4)), nx.ones((3, 4, 5)))
    with pytest.raises(
        nx.ShapeError,
        match=r"^matmul: operands must be at least 1-d, got f32 "
        r"\w+\([^)]*\) and f32\[3\]",
    ):
        nx.matmul(nx.ones(()), nx.ones((3,)))
    with pytest.raises(
        nx.ShapeError,
        match=r"^tensordot: cannot contract axis 1 of f32\[2\]\[3\] "
        r"\w+\([^)]*\) with axis 0 of f32\[4\] \w+\([^)]*\): "
        r"sizes 3 and 4 differ",
    ):
        nx.tensordot(f, nx.ones((4,)), axes=1)
    with pytest.raises(nx.ShapeError, match=r"^tensordot: axes=3 out of range"):
        nx.tensordot(f, f, axes=3)
    with pytest.raises(
        nx.ShapeError,
        match=r"^tensordot: axis 2 is out of range for a tensor of "
        r"shape \(2, 3\)",
    ):
        nx.tensordot(f, f, axes=([2], [0]))
    with pytest.raises(nx.ShapeError, match=r"^tensordot: contracting/batch axes must pair up"):
        nx.tensordot(f, f, axes=([0, 1], [0]))
    with pytest.raises(nx.ShapeError, match=r"^outer: takes 1-d tensors, got f32\[2\]\[3\]"):
        nx.outer(f, nx.ones((3,)))
    with pytest.raises(nx.DTypeError, match=r"^dot: bool tensors have no product \(pred\[2\] "):
        nx.dot(nx.tensor([True, False]), nx.tensor([True, True]))
    with pytest.raises(nx.DTypeError, match=r"^matmul: cannot promote uint64 with int8"):
        nx.matmul(nx.ones((2, 2), nx.uint64), nx.ones((2, 2), nx.int8))
