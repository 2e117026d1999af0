"""Sorting and cumulative primitives, and the ``top_k`` block.

The core normalises ``axis`` to a non-negative int before a backend sees it; the
axis always exists (sorting and accumulating a 0-d tensor is refused or reshaped
first by the public op).

Order (``sort``, ``argsort``, ``top_k``): ascending is numpy's total order, NaN
last (complex: lexicographic on (real, imag), numpy's extended order
``R+Rj < R+nanj < nan+Rj < nan+nanj``). Descending is that order reversed, so NaN
comes first (NaN counts as the largest value, as in ``jax.numpy.sort(...,
descending=True)`` and ``torch.sort``). Both are stable: equal elements keep their
original order (so descending is *not* ``flip`` of the ascending result).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from numerix import dtypes
from numerix.dtypes import DType
from numerix.errors import DTypeError
from numerix.primitives._registry import (
    REGISTRY,
    batch_rule,
    declare_block,
    nondifferentiable,
    unknown_kind,
    vjp_rule,
)
from numerix.primitives.reduction import accumulation_dtype

if TYPE_CHECKING:
    from numerix._tensor import Tensor

#: What a derivative rule returns: one cotangent (or None) per input.
Cotangents = tuple["Tensor | None", ...]

# ---------------------------------------------------------------- sort, argsort


def sort_shape_rule(x: tuple[int, ...], *, axis: int, descending: bool) -> tuple[int, ...]:
    return x


def sort_dtype_rule(x: DType, *, axis: int, descending: bool) -> DType:
    return x


def argsort_shape_rule(x: tuple[int, ...], *, axis: int, descending: bool) -> tuple[int, ...]:
    return x


def argsort_dtype_rule(x: DType, *, axis: int, descending: bool) -> DType:
    return dtypes.int64


sort = REGISTRY.declare(
    "sort", "sort", inputs=("x",), params=("axis", "descending"),
    shape_rule=sort_shape_rule, dtype_rule=sort_dtype_rule,
    doc="stable sort along axis; ascending puts NaN last, descending (the reverse order) first; "
        "complex sorts lexicographically",
)  # fmt: skip
argsort = REGISTRY.declare(
    "argsort", "sort", inputs=("x",), params=("axis", "descending"),
    shape_rule=argsort_shape_rule, dtype_rule=argsort_dtype_rule,
    doc="the int64 indices that sort x along axis, in sort's order; ties keep the lower index "
        "first",
)  # fmt: skip

# ---------------------------------------------------------------- cumulative

#: The kinds of ``cumulative``.
CUMULATIVE_KINDS = ("sum", "prod", "max", "min")
#: The kinds of ``cumulative`` that accumulate: the op casts x to the accumulation dtype.
ACCUMULATING = frozenset({"sum", "prod"})


def cumulative_shape_rule(
    x: tuple[int, ...], *, axis: int, reverse: bool, kind: str | None = None
) -> tuple[int, ...]:
    # every kind has the same shape: ``kind`` is not read
    return x


def cumulative_sum_dtype_rule(x: DType, **params: object) -> DType:
    # x arrives in the accumulation dtype (as sum's: the op casts it first)
    return x


def cumulative_minmax_dtype_rule(x: DType, *, kind: str, **params: object) -> DType:
    if x.kind == "c":
        raise DTypeError(f"cumulative_{kind}: complex numbers have no order")
    return x


#: ``cumulative``'s dtype rule of each kind.
CUMULATIVE_DTYPE_RULES: dict[str, Callable[..., DType]] = {
    "sum": cumulative_sum_dtype_rule, "prod": cumulative_sum_dtype_rule,
    "max": cumulative_minmax_dtype_rule, "min": cumulative_minmax_dtype_rule,
}  # fmt: skip


def cumulative_dtype_rule(x: DType, *, kind: str, axis: int, reverse: bool) -> DType:
    """The dtype rule of ``kind``: sum/prod keep x's dtype (x arrives in the accumulation
    dtype), max/min refuse complex."""
    try:
        rule = CUMULATIVE_DTYPE_RULES[kind]
    except (KeyError, TypeError):
        raise unknown_kind("cumulative", kind, CUMULATIVE_KINDS) from None
    return rule(x, kind=kind)


#: ``extra["accumulation"]``: the dtype the op casts x to, for the ACCUMULATING kinds,
#: when given no dtype
cumulative = REGISTRY.declare(
    "cumulative", "sort", inputs=("x",), params=("kind", "axis", "reverse"),
    shape_rule=cumulative_shape_rule, dtype_rule=cumulative_dtype_rule,
    accumulation=accumulation_dtype, op_name="cumulative_{kind}",
    doc="running sum, prod, max or min (kind) along axis (reverse: from the end); x arrives "
        "in out.dtype (the core casts it first); bfloat16/float16 may accumulate in float32 "
        "and round each result once; sum and prod wrap around for integers; max and min "
        "propagate NaN and take real dtypes and bool",
)  # fmt: skip

# ---------------------------------------------------------------- blocks


def top_k_shape_rule(
    x: tuple[int, ...], *, k: int, axis: int
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    shape = x[:axis] + (k,) + x[axis + 1 :]
    return shape, shape


def top_k_dtype_rule(x: DType, *, k: int, axis: int) -> tuple[DType, DType]:
    return x, dtypes.int64


top_k = declare_block(
    "top_k", "sort", inputs=("x",), params=("k", "axis"),
    shape_rule=top_k_shape_rule, dtype_rule=top_k_dtype_rule,
    doc="(values, int64 indices) of the k largest along axis, in descending sort order "
        "(NaN largest; ties: the lower index first); out is a pair",
)  # fmt: skip

# ---------------------------------------------------------------- derivative rules

nondifferentiable("argsort")


def _scatter_along(ops: Any, values: Tensor, positions: Tensor, axis: int, like: Tensor) -> Tensor:
    """A tensor of ``like``'s shape, zero but for ``values`` added at ``positions`` along
    ``axis`` (the other axes as in ``values``): the transpose of take_along_axis."""
    zeros = ops.zeros(like.shape, dtype=values.dtype, backend=values.backend)
    if values.size == 0:
        return zeros
    cols = [
        positions if a == axis else ops.iota(values.shape, a, dtypes.int64, values.backend)
        for a in range(values.ndim)
    ]
    rows = ops.reshape(ops.stack(cols, axis=-1), (values.size, values.ndim))
    return ops.indexed_add(zeros, rows, ops.reshape(values, (values.size,)))


@vjp_rule("sort")
def sort_vjp(
    ops: Any, cotangent: Tensor, out: Tensor, x: Tensor, *, axis: int, descending: bool
) -> Cotangents:
    # argsort orders as sort does (stable, NaN placed alike): each cotangent goes back
    # to the element sorted there
    perm = ops.argsort(x, axis=axis, descending=descending)
    return (_scatter_along(ops, cotangent, perm, axis, x),)


def cumulative_sum_vjp(
    ops: Any, cotangent: Tensor, out: Tensor, x: Tensor, *, axis: int, reverse: bool
) -> Cotangents:
    return (ops.cumulative_sum(cotangent, axis=axis, reverse=not reverse),)


def _shift(ops: Any, t: Tensor, axis: int, by: int, fill: int = 0) -> Tensor:
    # t moved by ``by`` along axis (element i lands at i + by), ``fill`` coming in
    config = [(0, 0, 0)] * t.ndim
    config[axis] = (by, -by, 0)
    return ops.pad_general(t, config, value=fill)


def cumulative_prod_vjp(
    ops: Any, cotangent: Tensor, out: Tensor, x: Tensor, *, axis: int, reverse: bool
) -> Cotangents:
    # d out_i / d x_j = prod(x_k, k <= i, k != j) for j <= i, so that
    # g_j = out_{j-1} * s_j with s_j = c_j + x_{j+1} s_{j+1}: a linear recurrence, solved
    # by doubling (log2(n) steps) with no division, so exact where x holds zeros
    if reverse:
        c, o, xf = (ops.flip(t, axis=axis) for t in (cotangent, out, x))
        (g,) = cumulative_prod_vjp(ops, c, o, xf, axis=axis, reverse=False)
        return (ops.flip(g, axis=axis),)
    n = x.shape[axis]
    a, s = _shift(ops, x, axis, -1), cotangent
    step = 1
    while step < n:
        s = s + a * _shift(ops, s, axis, -step)
        a = a * _shift(ops, a, axis, -step)
        step *= 2
    return (_shift(ops, out, axis, 1, fill=1) * s,)


def _cumulative_extreme_vjp(ops: Any, cotangent: Tensor, out: Tensor, x: Tensor, *, axis: int,
                            reverse: bool) -> Cotangents:  # fmt: skip
    # each running extreme came from the nearest element at or before it (after it, in
    # reverse) that equals it: its cotangent goes there
    hit = x == out
    if x.dtype.kind == "f":
        hit = ops.logical_or(hit, ops.logical_and(ops.isnan(x), ops.isnan(out)))
    at = ops.iota(x.shape, axis, dtypes.int64, x.backend)
    if reverse:
        last = ops.where(hit, at, x.shape[axis])
        positions = ops.cumulative_min(last, axis=axis, reverse=True)
    else:
        positions = ops.cumulative_max(ops.where(hit, at, -1), axis=axis)
    return (_scatter_along(ops, cotangent, positions, axis, x),)


#: ``cumulative``'s derivative rule of each kind.
CUMULATIVE_VJPS: dict[str, Callable[..., Cotangents]] = {
    "sum": cumulative_sum_vjp, "prod": cumulative_prod_vjp,
    "max": _cumulative_extreme_vjp, "min": _cumulative_extreme_vjp,
}  # fmt: skip


@vjp_rule("cumulative")
def cumulative_vjp(
    ops: Any, cotangent: Tensor, out: Tensor, x: Tensor, *, kind: str, axis: int, reverse: bool
) -> Cotangents:
    return CUMULATIVE_VJPS[kind](ops, cotangent, out, x, axis=axis, reverse=reverse)


@vjp_rule("top_k")
def top_k_vjp(
    ops: Any, cotangents: tuple[Tensor | None, Tensor | None], outs: tuple[Tensor, Tensor],
    x: Tensor, *, k: int, axis: int,
) -> Cotangents:  # fmt: skip
    # the values' cotangent goes back to the elements chosen; the indices carry none
    cv = cotangents[0]
    if cv is None:
        return (ops.zeros_like(x),)
    return (_scatter_along(ops, cv, outs[1], axis, x),)


# ---------------------------------------------------------------- batching rules


@batch_rule("sort", "argsort", "cumulative")
def along_axis_batch(
    ops: Any, call: Any, args: list[Tensor], batched: list[bool], *, axis: int, **params: Any
) -> Tensor:
    return call(args[0], axis=axis + 1, **params)


@batch_rule("top_k")
def top_k_batch(
    ops: Any, call: Any, args: list[Tensor], batched: list[bool], *, k: int, axis: int
) -> tuple[Tensor, Tensor]:
    return call(args[0], k=k, axis=axis + 1)
