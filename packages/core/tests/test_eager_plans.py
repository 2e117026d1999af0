"""The eager fast paths that keep a plan per (shape, parameters): sum/max and the other
reductions, reshape, transpose and ``.T``, concatenate, ``x[idx]``. A kept plan serves
only what the checks passed: a call the checks refuse raises again, with its own
operands named, after an equal-looking call was served (``True == 1``, numpy ints hash
as Python ints)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import numerix as nx
from numerix.ops import reduction as reduction_ops
from numerix.ops import shape as shape_ops
from numerix.testing.oracle import check

DTYPES = [nx.bool_, nx.int8, nx.uint16, nx.int64, nx.float16, nx.bfloat16, nx.float32,
          nx.complex64]  # fmt: skip
SHAPES = [(), (0,), (1,), (3,), (2, 3), (1, 4), (2, 0, 3)]


def _sample(dtype: nx.DType, shape: tuple[int, ...]) -> np.ndarray:
    a = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) * 0.75 - 1.5
    if dtype.kind == "b":
        return a > 0
    if dtype.kind == "u":
        a = np.abs(a)
    return a.astype(dtype.numpy_dtype)


def _check(got: nx.Tensor, want: Any, dtype: nx.DType) -> None:
    # exact dtype and shape, on the tensor and in its payload; values exact for bool and
    # integers, within these tolerances for the rest
    check(got, want, dtype, rtol=1e-2 if dtype.bits == 16 else 1e-6, atol=0.0)


def _twice(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, Any]:
    """``fn(*args, **kwargs)`` called on a miss of its plan, then on a hit."""
    return fn(*args, **kwargs), fn(*args, **kwargs)


# ---------------------------------------------------------------- reductions


def _axes(ndim: int) -> list[Any]:
    return [None, *range(-ndim, ndim), tuple(range(ndim)), (ndim - 1,) if ndim else ()]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("kind", ["sum", "max", "any"])
def test_reductions_served_by_a_plan_match_numpy(kind: str, dtype: nx.DType) -> None:
    reduction_ops._PLANS.clear()
    fn = getattr(nx, kind)
    if kind == "max" and dtype.kind == "c":
        with pytest.raises(nx.DTypeError, match=r"^max/min: complex numbers have no order"):
            fn(nx.from_numpy(_sample(dtype, (2,))))
        return
    ref = {"sum": np.sum, "max": np.max, "any": np.any}[kind]
    for shape in SHAPES:
        a = _sample(dtype, shape)
        x = nx.from_numpy(a)
        for axis in _axes(len(shape)):
            for keepdims in (False, True):
                if kind == "max" and 0 in shape:
                    continue  # refused: test_reduction_refusals_are_never_kept
                want_dtype = nx.bool_
                if kind == "sum":
                    want_dtype = {"b": nx.int64, "i": nx.int64, "u": nx.uint64}.get(
                        dtype.kind, dtype
                    )
                elif kind == "max":
                    want_dtype = dtype
                wide = a.astype(np.float32) if dtype is nx.bfloat16 else a
                want = ref(wide, axis=axis, keepdims=keepdims)
                if kind == "sum" and dtype.kind in "biu":
                    want = np.sum(a, axis=axis, keepdims=keepdims, dtype=want_dtype.numpy_dtype)
                for got in _twice(fn, x, axis=axis, keepdims=keepdims):
                    _check(got, want, want_dtype)
    assert reduction_ops._PLANS  # the calls above were served by plans


def test_reduction_refusals_are_never_kept() -> None:
    x = nx.from_numpy(np.arange(6.0, dtype=np.float32).reshape(2, 3))
    assert nx.sum(x, axis=1).tolist() == [3.0, 12.0]  # the plan of axis=1 is kept
    for bad in (True, np.int64(1), (True,), (np.int64(1),)):
        for _ in range(2):
            with pytest.raises(nx.ShapeError, match=r"^sum: axis must be an int, got"):
                nx.sum(x, axis=bad)  # type: ignore[arg-type]
    for _ in range(2):
        with pytest.raises(
            nx.ShapeError, match=r"^max: axis 2 is out of range for a tensor of shape \(2, 3\)"
        ):
            nx.max(x, axis=2)
        with pytest.raises(nx.ShapeError, match=r"^sum: repeated axis in \(1, 1\)"):
            nx.sum(x, axis=(1, 1))
    empty = nx.zeros((2, 0), dtype=nx.float32)
    for _ in range(2):
        with pytest.raises(
            nx.ShapeError,
            match=r"^max: cannot reduce the empty axis/axes \(1,\) of f32\[2\]\[0\] binary\(cpu\)",
        ):
            nx.max(empty, axis=1)
    # an equal shape on another dtype is another plan: complex max is refused, named
    z = nx.zeros((2, 3), dtype=nx.complex64)
    nx.max(nx.zeros((2, 3), dtype=nx.float32), axis=0)
    for _ in range(2):
        with pytest.raises(
            nx.DTypeError, match=r"complex numbers have no order; got c64\[2\]\[3\]"
        ):
            nx.max(z, axis=0)
    # keepdims that cannot be a key still works
    got = nx.sum(x, axis=0, keepdims=np.array(True))  # type: ignore[arg-type]
    _check(got, np.sum(x.to_numpy(), axis=0, keepdims=True), nx.float32)


def test_a_float16_sum_that_overflows_warns_nothing_and_is_inf() -> None:
    x = nx.tensor([6e4, 6e4], dtype=nx.float16)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for got in _twice(nx.sum, x):
            assert got.dtype is nx.float16 and got.to_numpy() == np.inf


# ---------------------------------------------------------------- reshape, transpose, .T


@pytest.mark.parametrize("dtype", [nx.bool_, nx.int16, nx.bfloat16, nx.complex128], ids=str)
def test_reshape_and_transpose_plans_match_numpy(dtype: nx.DType) -> None:
    a = _sample(dtype, (2, 3, 4))
    x = nx.from_numpy(a)
    for shape in [(24,), (-1,), (4, -1), (2, 3, 4), (1, 24, 1), (6, 2, 2)]:
        for got in _twice(x.reshape, shape):
            _check(got, a.reshape(shape), dtype)
    assert x.reshape((2, 3, 4)) is x and x.reshape(2, 3, 4) is x
    for got in _twice(x.reshape, [4, 6]):
        _check(got, a.reshape(4, 6), dtype)
    zero = nx.from_numpy(_sample(dtype, (0, 3)))
    _check(zero.reshape((3, 0)), np.zeros((3, 0)), dtype)
    for perm in [None, (0, 2, 1), (2, 0, 1), (0, 1, 2), [-1, 0, 1]]:
        for got in _twice(nx.transpose, x, perm):
            _check(got, np.transpose(a, perm), dtype)
    m = a[0]
    for got in _twice(lambda: nx.from_numpy(m).T):
        _check(got, m.T, dtype)
    for s in [(), (3,), (0,)]:  # 0-d and 1-d transposes are the tensor itself
        t = nx.from_numpy(_sample(dtype, s))
        assert nx.transpose(t) is t


def test_reshape_and_transpose_refusals_are_never_kept() -> None:
    x = nx.from_numpy(np.arange(6, dtype=np.int32).reshape(2, 3))
    assert x.reshape((3, 2)).shape == (3, 2) and x.reshape((6, 1)).shape == (6, 1)
    for bad in [(6, True), (np.int64(3), 2), (3.0, 2)]:
        for _ in range(2):
            with pytest.raises(
                nx.ShapeError, match=r"^reshape: shape must be an int or a tuple of ints"
            ):
                x.reshape(bad)
    for _ in range(2):
        with pytest.raises(
            nx.ShapeError,
            match=r"^reshape: cannot reshape s32\[2\]\[3\] binary\(cpu\) \(6 elements\) to \(4, 2\)",
        ):
            x.reshape((4, 2))
        with pytest.raises(nx.ShapeError, match=r"^reshape: cannot reshape .* the -1 dimension"):
            x.reshape((4, -1))
        with pytest.raises(nx.ShapeError, match=r"^reshape: only one dimension can be -1"):
            x.reshape((-1, -1))
        with pytest.raises(nx.ShapeError, match=r"^reshape: negative dimension in \(-2, -3\)"):
            x.reshape((-2, -3))
    nx.transpose(x, (1, 0))
    for _ in range(2):
        with pytest.raises(nx.ShapeError, match=r"^transpose: axes \(1, 1\) are not a permutation"):
            nx.transpose(x, (1, 1))
        with pytest.raises(nx.ShapeError, match=r"^T: .T is defined for 2-d tensors, got s32\[6\]"):
            _ = x.reshape((6,)).T


# ---------------------------------------------------------------- concatenate


@pytest.mark.parametrize(
    "dtype", [nx.bool_, nx.uint8, nx.float16, nx.float64, nx.complex64], ids=str
)
def test_concatenate_plans_match_numpy(dtype: nx.DType) -> None:
    a, b = _sample(dtype, (2, 3)), _sample(dtype, (1, 3))
    c = _sample(dtype, (2, 0))
    x, y, z = nx.from_numpy(a), nx.from_numpy(b), nx.from_numpy(c)
    for got in _twice(nx.concatenate, [x, y, x], axis=0):
        _check(got, np.concatenate([a, b, a], axis=0), dtype)
    for got in _twice(nx.concatenate, (x, x), axis=-1):
        _check(got, np.concatenate([a, a], axis=-1), dtype)
    for got in _twice(nx.concatenate, [x, z], axis=1):
        _check(got, np.concatenate([a, c], axis=1), dtype)
    v = _sample(dtype, (0,))
    for got in _twice(nx.concatenate, [nx.from_numpy(v), nx.from_numpy(v)]):
        _check(got, np.concatenate([v, v]), dtype)


def test_concatenate_refusals_are_never_kept() -> None:
    x = nx.from_numpy(np.ones((2, 3), dtype=np.float32))
    assert nx.concatenate([x, x], axis=1).shape == (2, 6)
    for _ in range(2):
        with pytest.raises(nx.ShapeError, match=r"^concatenate: axis must be an int, got True"):
            nx.concatenate([x, x], axis=True)  # type: ignore[arg-type]
        with pytest.raises(
            nx.ShapeError,
            match=r"^concatenate: axis 2 is out of range for a tensor of shape \(2, 3\)",
        ):
            nx.concatenate([x, x], axis=2)
        with pytest.raises(
            nx.ShapeError,
            match=r"^concatenate: shapes must match except on axis 1, got \(2, 3\), \(3, 3\)",
        ):
            nx.concatenate([x, nx.ones((3, 3))], axis=1)
        with pytest.raises(
            nx.ShapeError, match=r"^concatenate: tensors must have the same number of dimensions"
        ):
            nx.concatenate([x, nx.ones((3,))])
        with pytest.raises(nx.ShapeError, match=r"^concatenate: cannot concatenate 0-d tensors"):
            nx.concatenate([nx.ones(()), nx.ones(())])
    # other dtypes promote on the general path
    got = nx.concatenate([x, nx.ones((1, 3), dtype=nx.int8)], axis=0)
    assert (got.shape, got.dtype) == ((3, 3), nx.float32)
    dead = nx.ones((2, 3))
    nx.backend_deallocate(dead)
    with pytest.raises(nx.DeallocatedError, match=r"^concatenate: "):
        nx.concatenate([dead, x])
    with pytest.raises(nx.DeallocatedError, match=r"^concatenate: "):
        nx.concatenate([x, dead])
    assert shape_ops._CONCATS


# ---------------------------------------------------------------- x[idx]


@pytest.mark.parametrize("index_dtype", [nx.int8, nx.int32, nx.int64, nx.uint8, nx.uint64], ids=str)
def test_index_by_an_integer_tensor_matches_numpy(index_dtype: nx.DType) -> None:
    a = np.arange(20, dtype=np.float32).reshape(5, 4)
    x = nx.from_numpy(a)
    indices = [[3, 0, 2, 2], [4], [], [[1, 0], [0, 4]]]
    if index_dtype.kind == "i":
        indices += [[-1, 0, -5], [[-2]]]
    for idx in indices:
        i = np.array(idx, dtype=index_dtype.numpy_dtype)
        for got in _twice(x.__getitem__, nx.from_numpy(i)):
            _check(got, a[i.astype(np.int64)], nx.float32)
    big = np.arange(200) % 5
    _check(x[nx.tensor(big)], a[big], nx.float32)  # bounds read by numpy's reductions
    one = nx.from_numpy(np.arange(3, dtype=np.int16))
    _check(one[nx.tensor([2, 0])], np.array([2, 0], dtype=np.int16), nx.int16)


def test_index_bounds_are_checked_on_every_call() -> None:
    x = nx.from_numpy(np.arange(20, dtype=np.float32).reshape(5, 4))
    assert x[nx.tensor([0, 1])].shape == (2, 4)  # the plan of a (2,) index is kept
    for bad, value in [([0, 5], 5), ([-6, 0], -6), ([7, 9], 9)]:
        for _ in range(2):
            with pytest.raises(
                nx.IndexingError,
                match=rf"^getitem: index {value} is out of bounds for axis 0 with size 5 "
                r"\(f32\[5\]\[4\] binary\(cpu\)\)",
            ):
                x[nx.tensor(bad)]
    with pytest.raises(nx.IndexingError, match=r"^take: index 5 is out of bounds"):
        nx.take(x, nx.tensor([5]), axis=0)
    empty = nx.zeros((0, 2))
    with pytest.raises(
        nx.IndexingError, match=r"^getitem: index 0 is out of bounds for axis 0 with size 0"
    ):
        empty[nx.tensor([0])]
    _check(empty[nx.tensor([], dtype=nx.int64)], np.zeros((0, 2)), nx.float32)


def test_basic_slices_served_twice_match_numpy() -> None:
    a = np.arange(24, dtype=np.int32).reshape(4, 6)
    x = nx.from_numpy(a)
    for key in [1, -1, (1, 2), slice(1, 3), (slice(None), slice(None, None, 2)), (2, slice(5, 1))]:
        for got in _twice(x.__getitem__, key):
            _check(got, a[key], nx.int32)
