"""Reductions: sum, prod, mean, var, std, max, min, argmax, argmin, all, any.

sum, prod, max, min, all and any bind the one ``reduce`` primitive with their name as
its ``kind``; argmax and argmin bind ``argreduce`` with ``kind`` max or min.
"""

from __future__ import annotations

from typing import Any

from numerix import dtypes
from numerix._shapes import normalize_axes, normalize_axis
from numerix._tensor import Tensor
from numerix.errors import DTypeError, ShapeError
from numerix.ops._core import as_tensor, cast, keep_plan, new_out
from numerix.ops._fast import REDUCE, Plan, fast_op, reduction_methods
from numerix.ops.elementwise import abs as _abs
from numerix.ops.elementwise import not_equal, sqrt, square
from numerix.primitives import reduction

__all__ = ["sum", "prod", "mean", "var", "std", "max", "min", "argmax", "argmin", "all", "any",
           "count_nonzero"]  # fmt: skip

_reduce_p = reduction.reduce
_reduce_dtypes = reduction.reduce_dtypes
_no_identity = reduction.NO_IDENTITY


# What the checks and the rules give for (kind, shape, dtype, axis, keepdims): the dtype x
# is cast to, the normalised axes, keepdims as a bool and out's shape and dtype, kept so
# that a repeated reduction builds its out and calls the kernel. Only an axis of None, a
# Python int or a tuple of Python ints is a key (True == 1 and numpy ints hash as ints:
# they take the checks every time, which refuse a bool); a call the checks refuse keeps
# nothing, so it raises again, naming its own operand.
_PLANS: dict[tuple[Any, ...], tuple[Any, ...]] = {}


def _plan(kind: str, t: Tensor, axis: Any, keepdims: Any, dtype: Any) -> tuple[Any, ...]:
    axes = normalize_axes(kind, axis, t.ndim, t.shape)
    try:  # the dtypes (the compiled fast path asks the same function: ops._fast)
        cdt, odt = _reduce_dtypes(kind, t.dtype, dtype)
    except DTypeError as e:  # refused first, with the operand named
        raise DTypeError(f"{e}; got {t.describe()}") from None
    kd, shape = _shape_plan(kind, t, axes, keepdims)
    return cdt, axes, kd, shape, odt


def _shape_plan(kind: str, t: Tensor, axes: tuple[int, ...], keepdims: Any) -> tuple[Any, ...]:
    """keepdims as a bool and the output's shape, after the check of an empty reduction."""
    if kind in _no_identity and 0 in [t.shape[a] for a in axes]:
        raise ShapeError(
            f"{kind}: cannot reduce the empty axis/axes {axes} of {t.describe()}: {kind} "
            f"has no identity; reduce a non-empty tensor"
        )
    kd = bool(keepdims)
    return kd, _reduce_p.shape_rule(t.shape, kind=kind, axes=axes, keepdims=kd)


_REDUCE_KW = ("kind", "axes", "keepdims")


def _fast_plan(form: str, t: Tensor, kind: str) -> Plan | None:
    """The plan of ``kind(t)`` over every axis for the compiled fast path
    (:mod:`numerix.ops._fast`): the output's shape, the reduce kernel's parameters and
    what a shortcut takes after the payload (the axes), as :func:`_plan`
    gives them (its dtypes are the resolver's); None where it refuses."""
    try:
        axes = normalize_axes(kind, None, t.ndim, t.shape)
        kd, shape = _shape_plan(kind, t, axes, False)
    except ShapeError:
        return None
    # the backend's shortcut (form "rd_<kind>") takes the payload, then the axes
    return shape, _REDUCE_KW, (kind, axes, kd), axes


def _reduce(kind: str, x: Any, axis: Any, keepdims: bool, dtype: Any = None) -> Tensor:
    t = x if type(x) is Tensor else as_tensor(x, kind)
    key = None
    if dtype is None:
        ta: type | None = type(axis)
        if ta is tuple:
            for a in axis:
                if type(a) is not int:
                    ta = None
                    break
        if axis is None or ta is int or ta is tuple:
            key = (kind, t.shape, t.dtype, axis, keepdims)
    try:
        plan = None if key is None else _PLANS.get(key)
    except TypeError:  # an unhashable keepdims: the checks take it
        plan = key = None
    if plan is None:
        plan = _plan(kind, t, axis, keepdims, dtype)
        if key is not None:
            keep_plan(_PLANS, key, plan)
    cdt, axes, kd, shape, odt = plan
    if t.dtype is not cdt:
        t = cast(t, cdt)
    # Primitive.bind's one-input call, with the rules' results kept in the plan
    return t.backend.reduce(new_out(shape, odt, t.backend), t, kind=kind, axes=axes, keepdims=kd)


@fast_op(_reduce_p, REDUCE, "sum", _fast_plan)
def sum(x: Any, /, *, axis: Any = None, keepdims: bool = False, dtype: Any = None) -> Tensor:
    """Sum over ``axis`` (an int, a tuple, or None for all) (array API ``sum``).

    Integers accumulate in int64 (unsigned in uint64), bool counts in int64.

    >>> import numerix as nx
    >>> nx.sum(nx.tensor([[1, 2], [3, 4]]), axis=0).tolist()
    [4, 6]
    """
    return _reduce("sum", x, axis, keepdims, dtype)


@fast_op(_reduce_p, REDUCE, "prod", _fast_plan)
def prod(x: Any, /, *, axis: Any = None, keepdims: bool = False, dtype: Any = None) -> Tensor:
    """Product over ``axis`` (array API ``prod``); integers accumulate as in :func:`sum`."""
    return _reduce("prod", x, axis, keepdims, dtype)


@fast_op(_reduce_p, REDUCE, "max", _fast_plan)
def max(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Maximum over ``axis``; NaN propagates; an empty reduction raises (no identity)."""
    return _reduce("max", x, axis, keepdims)


@fast_op(_reduce_p, REDUCE, "min", _fast_plan)
def min(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Minimum over ``axis``; NaN propagates; an empty reduction raises (no identity)."""
    return _reduce("min", x, axis, keepdims)


@fast_op(_reduce_p, REDUCE, "all", _fast_plan)
def all(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Whether every element over ``axis`` is true (non-zero) -> bool."""
    return _reduce("all", x, axis, keepdims)


@fast_op(_reduce_p, REDUCE, "any", _fast_plan)
def any(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Whether any element over ``axis`` is true (non-zero) -> bool."""
    return _reduce("any", x, axis, keepdims)


# x.sum() ... x.any(): these ops' own fast path, from the compiled base
reduction_methods(sum=sum, prod=prod, max=max, min=min, all=all, any=any)


def _arg(kind: str, x: Any, axis: Any, keepdims: bool) -> Tensor:
    op = "arg" + kind
    t = as_tensor(x, op)
    try:
        reduction.arg_dtype_rule(t.dtype, kind=kind)  # refused first, with the operand named
    except DTypeError as e:
        raise DTypeError(f"{e}; got {t.describe()}") from None
    if axis is not None:
        axis = normalize_axis(op, axis, t.ndim, t.shape)
        empty = t.shape[axis] == 0
    else:
        empty = t.size == 0
    if empty:
        raise ShapeError(f"{op}: cannot take {op} of an empty axis of {t.describe()}")
    return reduction.argreduce.bind(t, kind=kind, axis=axis, keepdims=bool(keepdims))


def argmax(x: Any, /, *, axis: int | None = None, keepdims: bool = False) -> Tensor:
    """Index of the first maximum along ``axis`` (None: of the flattened tensor) -> int64."""
    return _arg("max", x, axis, keepdims)


def argmin(x: Any, /, *, axis: int | None = None, keepdims: bool = False) -> Tensor:
    """Index of the first minimum along ``axis`` (None: of the flattened tensor) -> int64."""
    return _arg("min", x, axis, keepdims)


def _count(t: Tensor, axes: tuple[int, ...]) -> int:
    n = 1
    for a in axes:
        n *= t.shape[a]
    return n


def _inexact(t: Tensor, op: str) -> Tensor:
    if t.dtype.kind in "biu":
        return cast(t, dtypes.default_float())
    return t


def mean(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Arithmetic mean over ``axis``; integers compute in float32. The mean of an empty
    axis is NaN, as numpy."""
    t = _inexact(as_tensor(x, "mean"), "mean")
    axes = normalize_axes("mean", axis, t.ndim, t.shape)
    s = _reduce("sum", t, axes, keepdims)
    n = _count(t, axes)
    return s / n if n else s * float("nan")


def var(x: Any, /, *, axis: Any = None, keepdims: bool = False, correction: float = 0) -> Tensor:
    """Variance over ``axis`` with ``correction`` degrees of freedom subtracted (array API
    ``var``; numpy's ``ddof``). Complex input gives a real variance."""
    t = _inexact(as_tensor(x, "var"), "var")
    axes = normalize_axes("var", axis, t.ndim, t.shape)
    m = mean(t, axis=axes, keepdims=True)
    d = t - m
    sq = square(_abs(d)) if t.dtype.kind == "c" else square(d)
    n = _count(t, axes) - correction
    s = _reduce("sum", sq, axes, keepdims)
    return s / n if n > 0 else s * float("nan")


def std(x: Any, /, *, axis: Any = None, keepdims: bool = False, correction: float = 0) -> Tensor:
    """Standard deviation: ``sqrt(var(x, ...))``."""
    return sqrt(var(x, axis=axis, keepdims=keepdims, correction=correction))


def count_nonzero(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Tensor:
    """How many elements of ``x`` are nonzero (true, for bool; either part nonzero, for
    complex) over ``axis`` (an int, a tuple, or None for all), as int64 (array API /
    numpy ``count_nonzero``).

    >>> import numerix as nx
    >>> nx.count_nonzero(nx.tensor([[0, 1], [2, 3]]), axis=0).tolist()
    [1, 2]
    """
    t = as_tensor(x, "count_nonzero")
    axes = normalize_axes("count_nonzero", axis, t.ndim, t.shape)
    return _reduce("sum", cast(not_equal(t, 0), dtypes.int64), axes, keepdims)
