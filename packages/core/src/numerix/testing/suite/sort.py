"""Conformance of the sort ops against numpy: sort, argsort, top_k and the cumulative
ops, over every dtype, edge shapes, ties, NaN placement and refusals.

Ascending order is numpy's stable sort. Descending order (NaN first, ties in their
original order) has no numpy function: its oracle is Python's ``sorted`` with
``reverse=True`` (which keeps equal elements in order) on numpy's total order,
and that key is itself checked against numpy's ascending sort.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import numerix as nx
from numerix import dtypes
from numerix.testing.oracle import (
    ALL,
    COMPLEX,
    FLOATS,
    INTS,
    REAL,
    check,
    ids,
    noncontiguous,
    sample,
    shape_id,
    t,
)

# ---------------------------------------------------------------- oracles


def _order_key(v: Any) -> tuple[Any, ...]:
    """numpy's total order as a Python key: NaN last; complex lexicographic with the
    extended order R+Rj < R+nanj < nan+Rj < nan+nanj."""
    if isinstance(v, complex):
        re_nan, im_nan = math.isnan(v.real), math.isnan(v.imag)
        return (2 * re_nan + im_nan, 0.0 if re_nan else v.real, 0.0 if im_nan else v.imag)
    if isinstance(v, float) and math.isnan(v):
        return (1, 0.0)
    return (0, v)


def _lane_argsort(lane: list[Any], descending: bool) -> list[int]:
    return sorted(range(len(lane)), key=lambda i: _order_key(lane[i]), reverse=descending)


def _host(a: np.ndarray) -> np.ndarray:
    # bfloat16 -> float32 is exact; numpy sorts it natively
    return a.astype(np.float32) if a.dtype == dtypes.bfloat16.numpy_dtype else a


def ref_argsort(a: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """The stable argsort of ``a`` along ``axis`` in numerix's order (Python's sorted)."""
    m = np.moveaxis(_host(a), axis, -1)
    flat = m.reshape(-1, m.shape[-1]) if m.size else np.zeros((0, m.shape[-1]), m.dtype)
    rows = [_lane_argsort(row.tolist(), descending) for row in flat]
    r = np.asarray(rows, dtype=np.int64).reshape(m.shape)
    return np.moveaxis(r, -1, axis)


def ref_sort(a: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    return np.take_along_axis(a, ref_argsort(a, axis, descending), axis=axis)


def _with_ties(dtype: dtypes.DType, shape: tuple[int, ...] = (3, 8), seed: int = 0) -> np.ndarray:
    """Sample values with many ties; floats also get NaN, +-0 and +-inf, complex NaN parts."""
    a = sample(dtype, shape, seed)
    if dtype.kind in "fc":
        a = np.round(a)  # values in -4..4: ties
    if a.size >= 8 and dtype.kind == "f":
        flat = a.reshape(-1)
        flat[[1, 4, 6, 9 % a.size, 17 % a.size]] = np.asarray(
            [np.nan, -0.0, np.nan, np.inf, -np.inf]
        ).astype(dtype.numpy_dtype)
        flat[2] = 0.0
    if a.size >= 8 and dtype.kind == "c":
        flat = a.reshape(-1)
        flat[[1, 3, 5, 6, 7]] = np.asarray(
            [complex(np.nan, 1), complex(1, np.nan), complex(np.nan, np.nan), flat[0],
             complex(1, np.nan)]
        ).astype(dtype.numpy_dtype)  # fmt: skip
    return a


def _np_argsort(a: np.ndarray, axis: int) -> np.ndarray:
    return np.argsort(_host(a), axis=axis, kind="stable")


# ---------------------------------------------------------------- sort, argsort


@pytest.mark.parametrize("descending", [False, True], ids=["asc", "desc"])
@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_sort_argsort_dtypes(dtype: dtypes.DType, descending: bool) -> None:
    a = _with_ties(dtype)
    want_idx = ref_argsort(a, 1, descending)
    if not descending:  # the Python oracle agrees with numpy where numpy has the op
        np.testing.assert_array_equal(want_idx, _np_argsort(a, 1))
    x = t(a, dtype)
    check(nx.argsort(x, descending=descending), want_idx, dtypes.int64)
    check(nx.sort(x, descending=descending), np.take_along_axis(a, want_idx, axis=1), dtype)
    check(nx.sort(x, axis=0, descending=descending), ref_sort(a, 0, descending), dtype)


@pytest.mark.parametrize("dtype", FLOATS + COMPLEX, ids=ids)
def test_sort_nan_placement(dtype: dtypes.DType) -> None:
    nan = complex(np.nan, 0) if dtype.kind == "c" else np.nan
    a = np.asarray([nan, 2, nan, -1, 2, np.inf, nan]).astype(dtype.numpy_dtype)
    x = t(a)
    asc, desc = nx.sort(x).to_numpy(), nx.sort(x, descending=True).to_numpy()
    is_nan = np.isnan(_host(asc))
    assert is_nan.tolist() == [False] * 4 + [True] * 3, "ascending puts NaN last"
    assert np.isnan(_host(desc)).tolist() == [True] * 3 + [False] * 4, "descending puts NaN first"
    # NaNs keep their original order both ways (stable)
    check(nx.argsort(x), ref_argsort(a, 0, False), dtypes.int64)
    check(nx.argsort(x, descending=True), ref_argsort(a, 0, True), dtypes.int64)
    np.testing.assert_array_equal(nx.argsort(x, descending=True).to_numpy()[:3], [0, 2, 6])


@pytest.mark.parametrize(
    "dtype", [dtypes.int8, dtypes.uint8, dtypes.bool_, dtypes.float16, dtypes.bfloat16], ids=ids
)
def test_argsort_stability_many_ties(dtype: dtypes.DType) -> None:
    rng = np.random.default_rng(3)
    a = rng.integers(0, 3 if dtype.kind != "b" else 2, size=(4, 500)).astype(dtype.numpy_dtype)
    x = t(a)
    check(nx.argsort(x, axis=1), _np_argsort(a, 1), dtypes.int64)
    check(nx.argsort(x, axis=0), _np_argsort(a, 0), dtypes.int64)
    check(nx.argsort(x, axis=1, descending=True), ref_argsort(a, 1, True), dtypes.int64)
    check(nx.sort(x, axis=1, descending=True), np.flip(np.sort(a, axis=1), axis=1), dtype)


@pytest.mark.parametrize("dtype", INTS, ids=ids)
def test_sort_integer_extremes(dtype: dtypes.DType) -> None:
    # descending must not negate: the minimum of a signed type has no negation
    info = np.iinfo(dtype.numpy_dtype)
    a = np.asarray([0, info.max, info.min, 1, info.min, info.max], dtype.numpy_dtype)
    for desc in (False, True):
        check(nx.argsort(t(a), descending=desc), ref_argsort(a, 0, desc), dtypes.int64)
        check(nx.sort(t(a), descending=desc), ref_sort(a, 0, desc), dtype)


SORT_SHAPES = [(1,), (0,), (2, 0), (0, 3), (7,), (2, 3, 4)]


@pytest.mark.parametrize("shape", SORT_SHAPES, ids=shape_id)
@pytest.mark.parametrize("op", ["sort", "argsort"])
def test_sort_shapes_and_axes(op: str, shape: tuple[int, ...]) -> None:
    a = _with_ties(dtypes.float32, shape, seed=1)
    for axis in range(-len(shape), len(shape)):
        for desc in (False, True):
            idx = ref_argsort(a, axis % len(shape), desc)
            for arr in (a, noncontiguous(a)):
                r = getattr(nx, op)(t(arr), axis=axis, descending=desc, stable=False)
                if op == "sort":
                    check(r, np.take_along_axis(a, idx, axis=axis), dtypes.float32)
                else:
                    check(r, idx, dtypes.int64)


@pytest.mark.parametrize("op", ["sort", "argsort"])
def test_sort_errors(op: str) -> None:
    fn = getattr(nx, op)
    with pytest.raises(nx.ShapeError, match=rf"{op}: axis -1 is out of range for a 0-d tensor"):
        fn(t(np.float32(1.0)))
    with pytest.raises(nx.ShapeError, match=rf"{op}: axis 2 is out of range .* shape \(2, 3\)"):
        fn(t(sample(dtypes.float32, (2, 3))), axis=2)
    with pytest.raises(nx.ShapeError, match=rf"{op}: axis must be an int, got None"):
        fn(t(sample(dtypes.float32, (2, 3))), axis=None)


# ---------------------------------------------------------------- top_k


def _ref_top_k(a: np.ndarray, k: int, axis: int) -> tuple[np.ndarray, np.ndarray]:
    idx = np.take(ref_argsort(a, axis, True), np.arange(k), axis=axis)
    return np.take_along_axis(a, idx, axis=axis), idx


@pytest.mark.numerix_op("top_k")
@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_top_k_dtypes(dtype: dtypes.DType) -> None:
    a = _with_ties(dtype)
    for k in (0, 1, 3, 8):
        v, i = nx.top_k(t(a, dtype), k)
        want_v, want_i = _ref_top_k(a, k, 1)
        check(v, want_v, dtype)
        check(i, want_i, dtypes.int64)


@pytest.mark.numerix_op("top_k")
@pytest.mark.parametrize("shape", [(5,), (0,), (2, 0), (2, 3, 4)], ids=shape_id)
def test_top_k_shapes_and_axes(shape: tuple[int, ...]) -> None:
    a = _with_ties(dtypes.float64, shape, seed=2)
    for axis in range(-len(shape), len(shape)):
        n = shape[axis]
        for k in sorted({0, min(2, n), n}):
            for arr in (a, noncontiguous(a)):
                v, i = nx.top_k(t(arr), k, axis=axis)
                want_v, want_i = _ref_top_k(a, k, axis % len(shape))
                check(v, want_v, dtypes.float64)
                check(i, want_i, dtypes.int64)


@pytest.mark.numerix_op("top_k")
def test_top_k_ties_lower_index_first() -> None:
    rng = np.random.default_rng(5)
    a = rng.integers(0, 4, size=(3, 200)).astype(np.int32)
    v, i = nx.top_k(t(a), 60)
    want_v, want_i = _ref_top_k(a, 60, 1)
    check(v, want_v, dtypes.int32)
    check(i, want_i, dtypes.int64)
    # within each run of equal values the indices increase
    iv, vv = i.to_numpy(), v.to_numpy()
    same = vv[:, 1:] == vv[:, :-1]
    assert same.any() and (iv[:, 1:] > iv[:, :-1])[same].all()


@pytest.mark.numerix_op("top_k")
def test_top_k_errors() -> None:
    x = t(np.asarray([1, 2], np.int64))
    with pytest.raises(nx.ShapeError, match=r"top_k: k=3 is out of range for axis 0 of s64\[2\]"):
        nx.top_k(x, 3)
    with pytest.raises(nx.ShapeError, match=r"top_k: k=-1 is out of range .*k must be in 0\.\.2"):
        nx.top_k(x, -1)
    with pytest.raises(nx.ShapeError, match=r"top_k: k must be an int, got 1\.5"):
        nx.top_k(x, 1.5)  # type: ignore[arg-type]
    with pytest.raises(nx.ShapeError, match=r"top_k: k must be an int, got True"):
        nx.top_k(x, True)
    with pytest.raises(nx.ShapeError, match=r"top_k: axis -1 is out of range for a 0-d tensor"):
        nx.top_k(t(np.int64(1)), 0)
    with pytest.raises(nx.ShapeError, match=r"top_k: axis 1 is out of range"):
        nx.top_k(x, 1, axis=1)


# ---------------------------------------------------------------- cumulative


def _acc_dtype(d: dtypes.DType) -> dtypes.DType:
    return dtypes.int64 if d.kind in "bi" else dtypes.uint64 if d.kind == "u" else d


def _wide(a: np.ndarray, d: dtypes.DType) -> np.ndarray:
    # the exact answer for the inputs as given, to compare with per-dtype tolerance
    a = np.asarray(a).astype(d.numpy_dtype)
    if d.kind == "f":
        return (
            a.astype(np.float32).astype(np.float64)
            if d is dtypes.bfloat16
            else a.astype(np.float64)
        )
    if d.kind == "c":
        return a.astype(np.complex128)
    return a


def ref_cumulative(
    name: str,
    a: np.ndarray,
    axis: int,
    reverse: bool,
    out: dtypes.DType,
    include_initial: bool = False,
) -> np.ndarray:
    fn = {"cumulative_sum": np.add, "cumulative_prod": np.multiply,
          "cumulative_max": np.maximum, "cumulative_min": np.minimum}[name]  # fmt: skip
    w = _wide(a, out)
    if reverse:
        w = np.flip(w, axis=axis)
    with np.errstate(all="ignore"):
        r = fn.accumulate(w, axis=axis)
    if include_initial:
        one = list(r.shape)
        one[axis] = 1
        r = np.concatenate([np.full(one, 0 if name == "cumulative_sum" else 1, r.dtype), r], axis)
    if reverse:
        r = np.flip(r, axis=axis)
    return r.astype(out.numpy_dtype)


CUMULATIVE = {
    "cumulative_sum": nx.cumulative_sum,
    "cumulative_prod": nx.cumulative_prod,
    "cumulative_max": nx.cumulative_max,
    "cumulative_min": nx.cumulative_min,
}


@pytest.mark.parametrize("dtype", ALL, ids=ids)
@pytest.mark.parametrize("op", sorted(CUMULATIVE))
def test_cumulative_dtypes(op: str, dtype: dtypes.DType) -> None:
    fn = CUMULATIVE[op]
    a = sample(dtype, (3, 4))
    if op in ("cumulative_max", "cumulative_min") and dtype.kind == "c":
        with pytest.raises(nx.DTypeError, match=rf"{op}: complex numbers have no order; got c"):
            fn(t(a), axis=0)
        return
    out = _acc_dtype(dtype) if op in ("cumulative_sum", "cumulative_prod") else dtype
    for axis in (0, 1, -1):
        for reverse in (False, True):
            want = ref_cumulative(op, a, axis % 2, reverse, out)
            check(fn(t(a, dtype), axis=axis, reverse=reverse), want, out, scale=16.0)


@pytest.mark.parametrize("shape", [(1,), (0,), (2, 0), (0, 3), (7,), (2, 3, 4)], ids=shape_id)
@pytest.mark.parametrize("op", sorted(CUMULATIVE))
def test_cumulative_shapes(op: str, shape: tuple[int, ...]) -> None:
    fn = CUMULATIVE[op]
    a = sample(dtypes.float64, shape)
    for axis in range(-len(shape), len(shape)):
        for reverse in (False, True):
            want = ref_cumulative(op, a, axis % len(shape), reverse, dtypes.float64)
            for arr in (a, noncontiguous(a)):
                check(fn(t(arr), axis=axis, reverse=reverse), want, dtypes.float64)


@pytest.mark.parametrize("dtype", FLOATS, ids=ids)
@pytest.mark.parametrize("op", sorted(CUMULATIVE))
def test_cumulative_nan_propagates(op: str, dtype: dtypes.DType) -> None:
    a = np.asarray([1.0, 3.0, np.nan, 2.0, np.inf, -np.inf], dtype.numpy_dtype)
    for reverse in (False, True):
        want = ref_cumulative(op, a, 0, reverse, dtype)
        r = CUMULATIVE[op](t(a), reverse=reverse)
        check(r, want, dtype)
        nan_at = np.isnan(r.to_numpy().astype(np.float64))
        # max/min: NaN reaches every later element (sum/prod also make NaN of inf - inf)
        assert op in ("cumulative_sum", "cumulative_prod") or nan_at.tolist() == ([False, False] + [True] * 4 if not reverse else [True] * 3
                                   + [False] * 3)  # fmt: skip


@pytest.mark.parametrize(
    "dtype", [dtypes.bool_, dtypes.int8, dtypes.uint16, dtypes.float32, dtypes.complex64], ids=ids
)
@pytest.mark.parametrize("op", ["cumulative_sum", "cumulative_prod"])
def test_cumulative_include_initial(op: str, dtype: dtypes.DType) -> None:
    fn = CUMULATIVE[op]
    out = _acc_dtype(dtype)
    for shape in ((4,), (0,), (3, 4), (2, 0)):
        a = sample(dtype, shape)
        for axis in range(len(shape)):
            for reverse in (False, True):
                want = ref_cumulative(op, a, axis, reverse, out, include_initial=True)
                r = fn(t(a), axis=axis, reverse=reverse, include_initial=True)
                check(r, want, out)


@pytest.mark.parametrize("op", ["cumulative_sum", "cumulative_prod"])
def test_cumulative_dtype_argument(op: str) -> None:
    fn = CUMULATIVE[op]
    a = np.asarray([100, 100, 100, -100], np.int16)
    # accumulating in int8 wraps, as numpy's dtype= does
    check(fn(t(a), dtype=nx.int8), ref_cumulative(op, a, 0, False, dtypes.int8), dtypes.int8)
    check(
        fn(t(a), dtype="float64"), ref_cumulative(op, a, 0, False, dtypes.float64), dtypes.float64
    )
    c = sample(dtypes.complex64, (3,))
    check(fn(t(c), dtype=nx.complex128), ref_cumulative(op, c, 0, False, dtypes.complex128),
          dtypes.complex128)  # fmt: skip
    with pytest.raises(nx.DTypeError, match=rf"{op}: dtype must be numeric, got bool"):
        fn(t(a), dtype=nx.bool_)
    with pytest.raises(nx.DTypeError, match=rf"{op}: accumulating complex c64\[3\] .* in float32"):
        fn(t(c), dtype=nx.float32)


@pytest.mark.parametrize("dtype", REAL, ids=ids)
def test_cumsum_cumprod_numpy_aliases(dtype: dtypes.DType) -> None:
    a = sample(dtype, (2, 3))
    out = _acc_dtype(dtype)
    flat = a.reshape(-1)
    check(nx.cumsum(t(a)), ref_cumulative("cumulative_sum", flat, 0, False, out), out, scale=16)
    check(nx.cumprod(t(a)), ref_cumulative("cumulative_prod", flat, 0, False, out), out, scale=16)
    check(nx.cumsum(t(a), axis=1), ref_cumulative("cumulative_sum", a, 1, False, out), out,
          scale=16)  # fmt: skip
    check(nx.cumprod(t(a), 0, dtypes.float64), ref_cumulative("cumulative_prod", a, 0, False, dtypes.float64),
          dtypes.float64)  # fmt: skip
    # a 0-d tensor flattens to one element, as numpy
    s = sample(dtype, ())
    check(nx.cumsum(t(s)), ref_cumulative("cumulative_sum", s.reshape(1), 0, False, out), out)


@pytest.mark.parametrize("op", sorted(CUMULATIVE))
def test_cumulative_axis_errors(op: str) -> None:
    fn = CUMULATIVE[op]
    a = sample(dtypes.int32, (3,))
    out = dtypes.int64 if op in ("cumulative_sum", "cumulative_prod") else dtypes.int32
    check(fn(t(a)), ref_cumulative(op, a, 0, False, out), out)  # axis=None on 1-d: axis 0
    with pytest.raises(nx.ShapeError, match=rf"{op}: axis=None needs a 1-d tensor, got f32\[2\]"):
        fn(t(sample(dtypes.float32, (2, 3))))
    with pytest.raises(nx.ShapeError, match=rf"{op}: axis=None needs a 1-d tensor, got f32 "):
        fn(t(np.float32(1)))
    with pytest.raises(nx.ShapeError, match=rf"{op}: axis -3 is out of range"):
        fn(t(sample(dtypes.float32, (2, 3))), axis=-3)
    with pytest.raises(nx.ShapeError, match=r"cumsum: axis 1 is out of range"):
        nx.cumsum(t(sample(dtypes.float32, (3,))), axis=1)
