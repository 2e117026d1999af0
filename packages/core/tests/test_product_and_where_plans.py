"""The eager plans of matmul with batch axes and of where with broadcasting or promotion
(decision 34): served twice (a miss, then a hit) they give numpy's numbers, dtype and
shape; a call the checks refuse keeps nothing, so it raises again, naming its own
operands, after an equal-looking call was served; inside a trace a hit records what the
general path records."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import numerix as nx
from numerix.ops import elementwise as elementwise_ops
from numerix.ops import linalg as linalg_ops
from numerix.testing.oracle import check

DTYPES = [nx.int8, nx.uint16, nx.int64, nx.float16, nx.bfloat16, nx.float32, nx.complex64]
# (x1, x2): batch axes equal, broadcast from 1, missing on one side, empty
MATMUL_SHAPES = [
    ((2, 3, 4), (2, 4, 5)),
    ((2, 3, 4), (4, 5)),
    ((4, 5), (3, 5, 2)),
    ((2, 1, 3, 4), (5, 4, 2)),
    ((1, 3, 4), (2, 4, 1)),
    ((0, 3, 4), (4, 2)),
    ((2, 3, 0), (2, 0, 2)),
    ((4,), (2, 4, 3)),
    ((2, 3, 4), (4,)),
    ((3, 4), (2, 4, 5)),
]


def _sample(dtype: nx.DType, shape: tuple[int, ...], seed: int) -> np.ndarray:
    r = np.random.default_rng(seed)
    a = r.integers(-3, 4, size=shape).astype(np.float64)
    if dtype.kind == "b":
        return a > 0
    if dtype.kind == "u":
        a = np.abs(a)
    if dtype.kind == "c":
        a = a + 1j * r.integers(-3, 4, size=shape)
    return a.astype(dtype.numpy_dtype)


def _check(got: nx.Tensor, want: Any, dtype: nx.DType) -> None:
    # exact dtype and shape, on the tensor and in its payload; values exact for bool and
    # integers, within these tolerances for the rest
    check(got, want, dtype, rtol=1e-2 if dtype.bits == 16 else 1e-6, atol=0.0)


# ---------------------------------------------------------------- matmul with batch axes


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_batched_matmul_served_by_a_plan_matches_numpy(dtype: nx.DType) -> None:
    linalg_ops._MATMULS.clear()
    for sa, sb in MATMUL_SHAPES:
        a, b = _sample(dtype, sa, 1), _sample(dtype, sb, 2)
        x, y = nx.from_numpy(a), nx.from_numpy(b)
        # numpy's integer matmul of int8 wraps as numerix's does; bfloat16 has no matmul
        wide = a.astype(np.float32) if dtype is nx.bfloat16 else a
        want = np.matmul(wide, b.astype(np.float32) if dtype is nx.bfloat16 else b)
        want = want.astype(dtype.numpy_dtype)
        first, second = nx.matmul(x, y), x @ y
        assert (sa, sb, dtype) in linalg_ops._MATMULS
        _check(first, want, dtype)
        _check(second, want, dtype)


def test_batched_matmul_refusals_are_never_kept() -> None:
    linalg_ops._MATMULS.clear()
    f32 = nx.ones((2, 3, 4))
    nx.matmul(f32, nx.ones((2, 4, 5)))  # kept
    n = len(linalg_ops._MATMULS)
    with pytest.raises(nx.ShapeError, match=r"^matmul: shapes \(2, 3, 4\) and \(2, 5, 4\) are not"):
        nx.matmul(f32, nx.ones((2, 5, 4)))
    with pytest.raises(
        nx.ShapeError, match=r"^matmul: shapes \(2,\) and \(3,\) cannot be broadcast"
    ):
        nx.matmul(f32, nx.ones((3, 4, 5)))
    b = nx.ones((2, 3, 4), dtype=nx.bool_)
    with pytest.raises(
        nx.DTypeError, match=r"^matmul: bool tensors have no product \(pred\[2\]\[3\]\[4\] binary"
    ):
        nx.matmul(b, nx.ones((2, 4, 5), dtype=nx.bool_))
    assert len(linalg_ops._MATMULS) == n
    # mixed dtypes on a kept shape promote through the general path
    r = nx.matmul(f32, nx.ones((2, 4, 5), dtype=nx.int64))
    assert (r.shape, r.dtype) == ((2, 3, 5), nx.float32)
    # a deallocated operand is named, with the kept plan's shapes
    dead = nx.ones((2, 3, 4))
    nx.backend_deallocate(dead)
    with pytest.raises(
        nx.DeallocatedError, match=r"^matmul: operand 0 \(f32\[2\]\[3\]\[4\]\) was deallocated"
    ):
        nx.matmul(dead, nx.ones((2, 4, 5)))


def test_batched_matmul_plan_records_the_general_path_in_a_trace() -> None:
    linalg_ops._MATMULS.clear()
    for sa, sb, kernels in (
        ((1, 3, 4), (2, 4, 5), ("broadcast", "dot")),
        ((2, 3, 4), (4, 5), ("dot",)),
    ):
        a, b = _sample(nx.float32, sa, 1), _sample(nx.float32, sb, 2)
        x, y = nx.from_numpy(a), nx.from_numpy(b)
        nx.matmul(x, y)  # the plan is kept eagerly; the trace below is served by it
        fn = nx.jit(lambda p, q: p @ q)
        _check(fn(x, y), np.matmul(a, b), nx.float32)
        listing = str(nx.trace(lambda p, q: p @ q, x, y))
        assert all(k in listing for k in kernels), listing
        assert ("broadcast" in listing) == ("broadcast" in kernels), listing


def test_a_matrix_without_batch_axes_is_not_broadcast() -> None:
    # (b, m, k) @ (k, n) contracts once: the weight is not copied once per batch element
    x, w = nx.ones((5, 3, 4)), nx.ones((4, 2))
    for _ in range(2):
        listing = str(nx.trace(lambda p, q: p @ q, x, w))
        assert "broadcast" not in listing and "reshape" not in listing, listing


# ---------------------------------------------------------------- where

WHERE_CASES = [
    ((4, 1), (1, 4), (4, 4), nx.float32, nx.float32),
    ((3,), (2, 3), (3,), nx.int8, nx.int8),
    ((), (3,), (2, 1), nx.int8, nx.float32),
    ((2, 3), (2, 3), (2, 3), nx.uint16, nx.int64),
    ((0, 3), (3,), (1, 1), nx.float16, nx.complex64),
    ((1,), (), (), nx.bfloat16, nx.bfloat16),
]


@pytest.mark.parametrize(("sc", "s1", "s2", "d1", "d2"), WHERE_CASES, ids=str)
def test_where_served_by_a_plan_matches_numpy(
    sc: tuple[int, ...], s1: tuple[int, ...], s2: tuple[int, ...], d1: nx.DType, d2: nx.DType
) -> None:
    elementwise_ops._WHERES.clear()
    c = _sample(nx.bool_, sc, 0)
    a, b = _sample(d1, s1, 1), _sample(d2, s2, 2)
    cond, x1, x2 = nx.from_numpy(c), nx.from_numpy(a), nx.from_numpy(b)
    d = nx.result_type(x1, x2)
    want = np.where(c, a.astype(d.numpy_dtype), b.astype(d.numpy_dtype))
    first = nx.where(cond, x1, x2)
    assert (sc, s1, s2, d1, d2) in elementwise_ops._WHERES
    second = nx.where(cond, x1, x2)
    _check(first, want, d)
    _check(second, want, d)


def test_where_refusals_are_never_kept() -> None:
    elementwise_ops._WHERES.clear()
    cond = nx.tensor([[True], [False]])
    nx.where(cond, nx.ones((1, 3)), nx.zeros((2, 3)))  # kept
    n = len(elementwise_ops._WHERES)
    # a condition that is not bool, of a kept shape
    with pytest.raises(nx.DTypeError, match=r"^where: condition must be bool, got s64\[2\]\[1\]"):
        nx.where(nx.tensor([[1], [0]]), nx.ones((1, 3)), nx.zeros((2, 3)))
    # branches that do not broadcast
    with pytest.raises(nx.ShapeError, match=r"where"):
        nx.where(cond, nx.ones((1, 3)), nx.zeros((2, 4)))
    # dtypes with no common type
    with pytest.raises(nx.DTypeError, match=r"where"):
        nx.where(cond, nx.ones((1, 3), dtype=nx.uint64), nx.zeros((2, 3), dtype=nx.int64))
    assert len(elementwise_ops._WHERES) == n
    # a deallocated branch of a kept key
    dead = nx.ones((1, 3))
    nx.backend_deallocate(dead)
    with pytest.raises(
        nx.DeallocatedError, match=r"^where: operand 1 \(f32\[1\]\[3\]\) was deallocated"
    ):
        nx.where(cond, dead, nx.zeros((2, 3)))


def test_where_plan_keeps_no_moved_operand() -> None:
    elementwise_ops._WHERES.clear()
    # numpy arrays and Python scalars as branches take the general path and keep nothing
    cond = nx.tensor([True, False])
    assert nx.where(cond, np.array([1.0, 2.0], np.float32), 0.0).tolist() == [1.0, 0.0]
    assert nx.where(cond, 1, nx.tensor([5, 6])).tolist() == [1, 6]
    assert not elementwise_ops._WHERES


# ---------------------------------------------------------------- where with a Python scalar

SCALARS = [True, 0, -3, 2.5, -0.0, float("nan"), 1 + 2j]


@pytest.mark.parametrize("dtype", [nx.bool_, *DTYPES], ids=str)
@pytest.mark.parametrize("first", [False, True], ids=["scalar-second", "scalar-first"])
def test_where_with_a_python_scalar_matches_numpy(dtype: nx.DType, first: bool) -> None:
    for cshape, shape in (((2, 3), (2, 3)), ((2, 3), (3,)), ((3,), (2, 3)), ((), (1, 1)), ((), ())):
        c = _sample(nx.bool_, cshape, 0)
        cond = nx.from_numpy(c)
        a = _sample(dtype, shape, 1)
        x = nx.from_numpy(a)
        for s in SCALARS:
            if type(s) is int and dtype.kind == "u" and s < 0:
                continue  # refused: test_where_with_a_python_scalar_refuses_by_name
            d = nx.result_type(x, s)
            args = (s, x) if first else (x, s)
            want = np.where(c, *(np.asarray(v).astype(d.numpy_dtype) for v in args))
            for _ in range(2):  # the 0-d operand made, then kept
                got = nx.where(cond, *args)
                if dtype is nx.bfloat16 and d.kind != "c":
                    _check(got, want, d)
                else:
                    assert (got.shape, got.dtype) == (want.shape, d), (got.describe(), s)
                    np.testing.assert_array_equal(got.to_numpy(), want)
                    # -0.0 and 0.0 are kept apart
                    assert (np.signbit(got.to_numpy().real) == np.signbit(want.real)).all()


def test_where_with_a_python_scalar_refuses_by_name() -> None:
    cond = nx.tensor([True, False])
    nx.where(cond, nx.tensor([1, 2], dtype=nx.uint8), 3)  # served
    with pytest.raises(nx.DTypeError, match=r"^where: Python int -1 does not fit uint8"):
        nx.where(cond, nx.tensor([1, 2], dtype=nx.uint8), -1)
    with pytest.raises(nx.DTypeError, match=r"^where: Python int 300 does not fit uint8"):
        nx.where(cond, 300, nx.tensor([1, 2], dtype=nx.uint8))
    with pytest.raises(
        nx.ShapeError, match=r"^where: shapes \(2,\) and \(3,\) and \(\) cannot be broadcast"
    ):
        nx.where(cond, nx.ones((3,)), 0.0)
    with pytest.raises(
        nx.ShapeError, match=r"^where: shapes \(2,\) and \(\) and \(3,\) cannot be broadcast"
    ):
        nx.where(cond, 0.0, nx.ones((3,)))
    with pytest.raises(nx.DTypeError, match=r"^where: condition must be bool, got s64\[2\]"):
        nx.where(nx.tensor([1, 0]), nx.ones((2,)), 0.0)
    dead = nx.ones((2,))
    nx.backend_deallocate(dead)
    with pytest.raises(
        nx.DeallocatedError, match=r"^where: operand 1 \(f32\[2\]\) was deallocated"
    ):
        nx.where(cond, dead, 0.0)


def test_where_with_a_python_scalar_in_a_trace() -> None:
    a = _sample(nx.float32, (2, 3), 1)
    c = _sample(nx.bool_, (2, 3), 0)
    x, cond = nx.from_numpy(a), nx.from_numpy(c)
    fn = nx.jit(lambda m, p: nx.where(m, p, 0.5) + nx.where(m, -1.0, p))
    want = np.where(c, a, np.float32(0.5)) + np.where(c, np.float32(-1.0), a)
    _check(fn(cond, x), want, nx.float32)
    _check(fn(cond, x), want, nx.float32)
