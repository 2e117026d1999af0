"""Reductions against numpy: every dtype, axis None/int/negative/tuple/(), keepdims,
empty and 0-d inputs, and the accumulation dtypes the array API asks for."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import numerix as nx
from numerix import dtypes
from numerix.testing.oracle import (
    ALL,
    FLOATS,
    Cases,
    check,
    ids,
    noncontiguous,
    sample,
    shape_id,
    to_compute,
)

SHAPES = [(), (5,), (0,), (2, 0), (2, 3, 4)]


def axis_cases(ndim: int) -> list[Any]:
    cases: list[Any] = [None, ()]
    if ndim >= 1:
        cases += [0, -1, (0,)]
    if ndim >= 2:
        cases += [1, (0, -1), (-1, 0), [1, 0]]
    if ndim >= 3:
        cases += [-2, (0, 1, 2), (2, 0)]
    return cases


def accumulate(d: dtypes.DType) -> dtypes.DType:
    # sum and prod: signed integers and bool in int64, unsigned in uint64
    return dtypes.int64 if d.kind in "bi" else dtypes.uint64 if d.kind == "u" else d


def inexact(d: dtypes.DType) -> dtypes.DType:
    return dtypes.float32 if d.kind in "biu" else d


def real_of(d: dtypes.DType) -> dtypes.DType:
    return {dtypes.complex64: dtypes.float32, dtypes.complex128: dtypes.float64}.get(d, d)


@dataclass(frozen=True)
class Red:
    name: str
    fn: Callable[..., nx.Tensor]
    ref: Callable[..., Any]
    out: Callable[[dtypes.DType], dtypes.DType | None]  # input dtype -> result dtype, None: refused
    compute: Callable[[dtypes.DType], dtypes.DType]  # input dtype -> dtype numpy computes in
    small: bool = False
    scale: str = "none"  # how the absolute tolerance scales with the data

    def __str__(self) -> str:
        return self.name


def _ordered(d: dtypes.DType) -> dtypes.DType | None:
    return None if d.kind == "c" else d


REDUCTIONS = [
    Red("sum", nx.sum, np.sum, accumulate, accumulate, scale="sum"),
    Red("prod", nx.prod, np.prod, accumulate, accumulate, small=True, scale="one"),
    Red("max", nx.max, np.max, _ordered, lambda d: d),
    Red("min", nx.min, np.min, _ordered, lambda d: d),
    Red("all", nx.all, np.all, lambda d: dtypes.bool_, lambda d: d),
    Red("any", nx.any, np.any, lambda d: dtypes.bool_, lambda d: d),
    Red("mean", nx.mean, np.mean, inexact, inexact, scale="max"),
    Red("var", nx.var, np.var, lambda d: real_of(inexact(d)), inexact, scale="max2"),
    Red("std", nx.std, np.std, lambda d: real_of(inexact(d)), inexact, scale="max"),
]


def _scale(kind: str, a: np.ndarray) -> float:
    if a.size == 0 or kind == "none":
        return 1.0
    m = float(np.max(np.abs(a.astype(np.complex128 if a.dtype.kind == "c" else np.float64))))
    return {"sum": m * a.size, "one": 1.0, "max": max(m, 1.0), "max2": max(m * m, 1.0)}[kind]


def _numpy(ref: Callable[..., Any], a: np.ndarray, **kw: Any) -> np.ndarray | BaseException:
    """numpy's answer, or the ValueError it raises (empty reductions without identity)."""
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return np.asarray(ref(a, **kw))
    except ValueError as e:
        return e


@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
@pytest.mark.parametrize("dtype", ALL, ids=ids)
@pytest.mark.parametrize("op", REDUCTIONS, ids=str)
def test_reduction(op: Red, dtype: dtypes.DType, shape: tuple[int, ...]) -> None:
    a = sample(dtype, shape, 1, small=op.small)
    out = op.out(dtype)
    if out is None:
        with pytest.raises(
            nx.DTypeError,
            match=rf"^max/min: complex numbers have no order; got "
            rf"{dtype.short}",
        ):
            op.fn(nx.tensor(a))
        return
    wide = to_compute(a, op.compute(dtype))
    cases = Cases()
    for axis in axis_cases(len(shape)):
        for keepdims in (False, True):
            with cases.case(f"axis={axis} keepdims={keepdims}"):
                np_axis = tuple(axis) if isinstance(axis, list) else axis
                want = _numpy(op.ref, wide, axis=np_axis, keepdims=keepdims)
                if isinstance(want, BaseException):
                    # numpy refuses an empty reduction without identity: numerix says why
                    with pytest.raises(
                        nx.ShapeError,
                        match=rf"^{op.name}: cannot reduce the empty "
                        r"axis/axes \(",
                    ):
                        op.fn(nx.tensor(a), axis=axis, keepdims=keepdims)
                    continue
                got = op.fn(nx.tensor(a), axis=axis, keepdims=keepdims)
                check(got, want, out, scale=_scale(op.scale, a))
    cases.finish()


@pytest.mark.parametrize(
    ("op", "dtype"), [(o, d) for o in REDUCTIONS for d in ALL if o.out(d)], ids=lambda x: str(x)
)
def test_reduction_noncontiguous_input_and_method(op: Red, dtype: dtypes.DType) -> None:
    out = op.out(dtype)
    assert out is not None
    a = sample(dtype, (4, 6), 2, small=op.small)
    wide = to_compute(a, op.compute(dtype))
    for axis in (None, 0, 1):
        want = _numpy(op.ref, wide, axis=axis)
        check(op.fn(noncontiguous(a), axis=axis), want, out, scale=_scale(op.scale, a))
        check(getattr(nx.tensor(a), op.name)(axis=axis), want, out, scale=_scale(op.scale, a))


@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_var_std_correction(dtype: dtypes.DType) -> None:
    a = sample(dtype, (3, 4, 5), 3)
    out = real_of(inexact(dtype))
    wide = to_compute(a, inexact(dtype))
    for axis in (None, 1, (0, 2)):
        for correction in (1, 2.5):
            for fn, ref in ((nx.var, np.var), (nx.std, np.std)):
                want = ref(wide, axis=axis, ddof=correction, keepdims=True)
                got = fn(nx.tensor(a), axis=axis, correction=correction, keepdims=True)
                check(got, want, out, scale=_scale("max2", a))


@pytest.mark.parametrize("dtype", [nx.float32, nx.int32, nx.bool], ids=ids)
@pytest.mark.parametrize("op", REDUCTIONS, ids=str)
def test_reduction_over_several_axes_beside_an_empty_one(op: Red, dtype: dtypes.DType) -> None:
    # the kept axis is empty: a backend flattening the reduced axes must not ask its
    # library to infer a size (-1) from no elements
    out = op.out(dtype)
    for shape, axis in (((0, 3, 4), (1, 2)), ((2, 0, 3), (0, 2)), ((3, 2, 0), (0, 1))):
        a = sample(dtype, shape, 1, small=op.small)
        for keepdims in (False, True):
            want = _numpy(op.ref, to_compute(a, op.compute(dtype)), axis=axis, keepdims=keepdims)
            assert out is not None and not isinstance(want, BaseException)
            check(op.fn(nx.tensor(a), axis=axis, keepdims=keepdims), want, out)


@pytest.mark.parametrize(("fn", "ref"), [(nx.argmax, np.argmax), (nx.argmin, np.argmin)],
                         ids=["argmax", "argmin"])  # fmt: skip
@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_argmax_argmin(dtype: dtypes.DType, shape: tuple[int, ...], fn: Any, ref: Any) -> None:
    # small integer ranges give ties: the first occurrence wins, as in numpy
    a = sample(dtype, shape, 4, small=True)
    name = fn.__name__
    if dtype.kind == "c":
        with pytest.raises(
            nx.DTypeError,
            match=rf"^argmax/argmin: complex numbers have no order; "
            rf"got {dtype.short}",
        ):
            fn(nx.tensor(a))
        return
    wide = a.astype(np.float32) if dtype is dtypes.bfloat16 else a
    cases = Cases()
    axes: list[Any] = [None, *range(-len(shape), len(shape))]
    for axis in axes:
        for keepdims in (False, True):
            with cases.case(f"axis={axis} keepdims={keepdims}"):
                want = _numpy(ref, wide, axis=axis, keepdims=keepdims)
                if isinstance(want, BaseException):
                    with pytest.raises(
                        nx.ShapeError,
                        match=rf"^{name}: cannot take {name} of an "
                        r"empty axis of",
                    ):
                        fn(nx.tensor(a), axis=axis, keepdims=keepdims)
                    continue
                check(fn(nx.tensor(a), axis=axis, keepdims=keepdims), want, nx.int64)
    cases.finish()


@pytest.mark.filterwarnings("ignore:.*encountered in:RuntimeWarning")  # numpy warns too
@pytest.mark.parametrize("dtype", FLOATS, ids=ids)
def test_nan_propagates(dtype: dtypes.DType) -> None:
    a = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, -np.inf]]).astype(dtype.numpy_dtype)
    w = a.astype(np.float64)
    for fn, ref in [(nx.max, np.max), (nx.min, np.min), (nx.sum, np.sum), (nx.mean, np.mean),
                    (nx.prod, np.prod)]:  # fmt: skip
        for axis in (None, 0, 1):
            check(fn(nx.tensor(a), axis=axis), ref(w, axis=axis), dtype)
    for fn, ref in [(nx.argmax, np.argmax), (nx.argmin, np.argmin)]:
        for axis in (None, 0, 1):
            check(fn(nx.tensor(a), axis=axis), ref(w, axis=axis), nx.int64)


@pytest.mark.parametrize("dtype", [nx.int8, nx.uint8, nx.float16, nx.bool], ids=ids)
def test_sum_prod_dtype_argument(dtype: dtypes.DType) -> None:
    a = sample(dtype, (3, 5), 5)
    for want in (nx.int8, nx.int32, nx.float32, nx.float64, nx.complex64):
        ref = np.sum(a.astype(want.numpy_dtype), axis=1)
        check(nx.sum(nx.tensor(a), axis=1, dtype=want), ref, want)
        check(nx.tensor(a).sum(axis=1, dtype=want.name), ref, want)
        refp = np.prod(a.astype(want.numpy_dtype), axis=0)
        check(nx.prod(nx.tensor(a), axis=0, dtype=want), refp, want)


@pytest.mark.parametrize("want", [d for d in ALL if d.kind in "iu"], ids=ids)
def test_sum_prod_in_every_integer_dtype_wrap_as_numpy(want: dtypes.DType) -> None:
    # an explicit integer dtype accumulates in it, modular as numpy's (the extremes wrap)
    info = np.iinfo(want.numpy_dtype)
    a = np.array([[1, 2, int(info.max)], [3, int(info.max), 5]]).astype(want.numpy_dtype)
    for axis in (None, 0, 1, (0, 1)):
        for fn, ref in [(nx.sum, np.sum), (nx.prod, np.prod)]:
            with np.errstate(all="ignore"):
                w = ref(a, axis=axis, dtype=want.numpy_dtype)
            check(fn(nx.tensor(a), axis=axis, dtype=want), w, want)
            check(
                fn(nx.tensor(a), axis=axis, dtype=want, keepdims=True),
                ref(a, axis=axis, dtype=want.numpy_dtype, keepdims=True),
                want,
            )


def test_integer_sums_do_not_overflow_their_input_dtype() -> None:
    a = np.full((300,), 100, np.int8)
    check(nx.sum(nx.tensor(a)), np.sum(a, dtype=np.int64), nx.int64)
    u = np.full((300,), 250, np.uint8)
    check(nx.sum(nx.tensor(u)), np.sum(u, dtype=np.uint64), nx.uint64)
    b = np.ones((1000,), bool)
    check(nx.sum(nx.tensor(b)), np.sum(b, dtype=np.int64), nx.int64)
    check(nx.mean(nx.tensor(a)), np.float32(100.0), nx.float32)


def test_reduction_axis_errors() -> None:
    x = nx.ones((2, 3, 4))
    with pytest.raises(
        nx.ShapeError,
        match=r"^sum: axis 3 is out of range for a tensor of shape "
        r"\(2, 3, 4\); valid axes are -3..2",
    ):
        nx.sum(x, axis=3)
    with pytest.raises(nx.ShapeError, match=r"^max: axis -4 is out of range for a tensor of shape"):
        nx.max(x, axis=(0, -4))
    with pytest.raises(nx.ShapeError, match=r"^mean: axis 2 is out of range"):
        nx.mean(nx.ones((2, 2)), axis=2)
    with pytest.raises(nx.ShapeError, match=r"^var: axis 5 is out of range"):
        nx.var(x, axis=5)
    with pytest.raises(
        nx.ShapeError,
        match=r"^all: axis 0 is out of range for a 0-d tensor, which "
        r"has no axes",
    ):
        nx.all(nx.tensor(True), axis=0)
    with pytest.raises(nx.ShapeError, match=r"^argmax: axis 3 is out of range"):
        nx.argmax(x, axis=3)
    with pytest.raises(nx.ShapeError, match=r"^sum: repeated axis in \(0, -3\)"):
        nx.sum(x, axis=(0, -3))
    with pytest.raises(nx.ShapeError, match=r"^argmin: axis must be an int, got \(0, 1\)"):
        nx.argmin(x, axis=(0, 1))
    with pytest.raises(nx.ShapeError, match=r"^prod: axis must be an int, got 1.0"):
        nx.prod(x, axis=1.0)


def test_reduction_empty_errors() -> None:
    with pytest.raises(
        nx.ShapeError,
        match=r"^max: cannot reduce the empty axis/axes \(0,\) of "
        r"f32\[0\] \w+\([^)]*\): max has no identity",
    ):
        nx.max(nx.zeros((0,)))
    with pytest.raises(
        nx.ShapeError,
        match=r"^min: cannot reduce the empty axis/axes \(1,\) of "
        r"s64\[2\]\[0\]",
    ):
        nx.min(nx.zeros((2, 0), nx.int64), axis=1)
    with pytest.raises(
        nx.ShapeError,
        match=r"^argmax: cannot take argmax of an empty axis of "
        r"f32\[3\]\[0\]",
    ):
        nx.argmax(nx.zeros((3, 0)), axis=-1)


def test_reductions_of_python_data() -> None:
    # Python data becomes a tensor of its default dtype first
    ints, floats = [[1, 2, 0], [3, 4, 5]], [[1.5, -2.0], [0.25, 3.0]]
    check(nx.sum(ints, axis=0), np.sum(np.array(ints), axis=0), nx.int64)
    check(nx.prod(ints, axis=1), np.prod(np.array(ints), axis=1), nx.int64)
    check(nx.mean(ints), np.mean(np.array(ints, np.float32)), nx.float32)
    check(nx.max(floats, axis=-1), np.max(np.array(floats, np.float32), axis=-1), nx.float32)
    check(nx.argmin(floats), np.argmin(np.array(floats)), nx.int64)
    check(nx.any([0, 0, 1]), np.any([0, 0, 1]), nx.bool)
    check(nx.all(3.5), np.all(3.5), nx.bool)
