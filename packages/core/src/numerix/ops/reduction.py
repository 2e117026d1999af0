"""Reductions: sum, prod, mean, var, std, max, min, argmax, argmin, all, any."""

from __future__ import annotations

from typing import Any

from numerix import dtypes as D
from numerix._shapes import normalize_axes, normalize_axis
from numerix._tensor import Tensor
from numerix.errors import DTypeError, ShapeError
from numerix.ops._core import as_tensor, cast
from numerix.primitives import reduction as P
from numerix.primitives._registry import Primitive

__all__ = ["sum", "prod", "mean", "var", "std", "max", "min", "argmax", "argmin", "all", "any"]


def _reduce(prim: Primitive, x: Any, axis: Any, keepdims: bool, dtype: Any = None) -> Tensor:
    t = as_tensor(x, prim.name)
    axes = normalize_axes(prim.name, axis, t.ndim, t.shape)
    assert prim.dtype_rule is not None
    try:
        default = prim.extra.get("accumulation", prim.dtype_rule)
        odt = default(t.dtype) if dtype is None else D.as_dtype(dtype, prim.name)
    except DTypeError as e:
        raise DTypeError(f"{e}; got {t.describe()}") from None
    if not prim.extra["identity"] and 0 in [t.shape[a] for a in axes]:
        raise ShapeError(
            f"{prim.name}: cannot reduce the empty axis/axes {axes} of {t.describe()}: {prim.name} "
            f"has no identity; reduce a non-empty tensor"
        )
    if prim.name in ("sum", "prod"):
        t = cast(t, odt)
    return prim.bind(t, axes=axes, keepdims=bool(keepdims))


def sum(x: Any, /, *, axis: Any = None, keepdims: bool = False, dtype: Any = None) -> Tensor:
    """Sum over ``axis`` (an int, a tuple, or None for all) (array API ``sum``).

    Integers accumulate in int64 (unsigned in uint64), bool counts in int64.

    >>> import numerix as nx
    >>> nx.sum(nx.tensor([[1, 2], [3, 4]]), axis=0).tolist()
    [4, 6]
    """
    return _reduce(P.sum, x, axis, keepdims, dtype)


def prod(x: Any, /, *, axis: Any = None, keepdims: bool = False, dtype: Any = None) -> Tensor:
    """Product over ``axis`` (array API ``prod``); integers accumulate as in :func:`sum`."""
    return _reduce(P.prod, x, axis, keepdims, dtype)


def max(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Maximum over ``axis``; NaN propagates; an empty reduction raises (no identity)."""
    return _reduce(P.max, x, axis, keepdims)


def min(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Minimum over ``axis``; NaN propagates; an empty reduction raises (no identity)."""
    return _reduce(P.min, x, axis, keepdims)


def all(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Whether every element over ``axis`` is true (non-zero) -> bool."""
    return _reduce(P.all, x, axis, keepdims)


def any(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Whether any element over ``axis`` is true (non-zero) -> bool."""
    return _reduce(P.any, x, axis, keepdims)


def _arg(prim: Primitive, x: Any, axis: Any, keepdims: bool) -> Tensor:
    t = as_tensor(x, prim.name)
    try:
        prim.dtype_rule(t.dtype)  # refused first, with the operand named
    except DTypeError as e:
        raise DTypeError(f"{e}; got {t.describe()}") from None
    if axis is not None:
        axis = normalize_axis(prim.name, axis, t.ndim, t.shape)
        empty = t.shape[axis] == 0
    else:
        empty = t.size == 0
    if empty:
        raise ShapeError(f"{prim.name}: cannot take {prim.name} of an empty axis of {t.describe()}")
    return prim.bind(t, axis=axis, keepdims=bool(keepdims))


def argmax(x: Any, /, *, axis: int | None = None, keepdims: bool = False) -> Tensor:
    """Index of the first maximum along ``axis`` (None: of the flattened tensor) -> int64."""
    return _arg(P.argmax, x, axis, keepdims)


def argmin(x: Any, /, *, axis: int | None = None, keepdims: bool = False) -> Tensor:
    """Index of the first minimum along ``axis`` (None: of the flattened tensor) -> int64."""
    return _arg(P.argmin, x, axis, keepdims)


def _count(t: Tensor, axes: tuple[int, ...]) -> int:
    n = 1
    for a in axes:
        n *= t.shape[a]
    return n


def _inexact(t: Tensor, op: str) -> Tensor:
    if t.dtype.kind in "biu":
        return cast(t, D.default_float())
    return t


def mean(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Arithmetic mean over ``axis``; integers compute in float32. The mean of an empty
    axis is NaN, as numpy."""
    t = _inexact(as_tensor(x, "mean"), "mean")
    axes = normalize_axes("mean", axis, t.ndim, t.shape)
    s = _reduce(P.sum, t, axes, keepdims)
    n = _count(t, axes)
    return s / n if n else s * float("nan")


def var(x: Any, /, *, axis: Any = None, keepdims: bool = False, correction: float = 0) -> Tensor:
    """Variance over ``axis`` with ``correction`` degrees of freedom subtracted (array API
    ``var``; numpy's ``ddof``). Complex input gives a real variance."""
    from numerix.ops.elementwise import abs as _abs
    from numerix.ops.elementwise import square

    t = _inexact(as_tensor(x, "var"), "var")
    axes = normalize_axes("var", axis, t.ndim, t.shape)
    m = mean(t, axis=axes, keepdims=True)
    d = t - m
    sq = square(_abs(d)) if t.dtype.kind == "c" else square(d)
    n = _count(t, axes) - correction
    s = _reduce(P.sum, sq, axes, keepdims)
    return s / n if n > 0 else s * float("nan")


def std(x: Any, /, *, axis: Any = None, keepdims: bool = False, correction: float = 0) -> Tensor:
    """Standard deviation: ``sqrt(var(x, ...))``."""
    from numerix.ops.elementwise import sqrt

    return sqrt(var(x, axis=axis, keepdims=keepdims, correction=correction))
