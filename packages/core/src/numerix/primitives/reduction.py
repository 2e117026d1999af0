"""Reductions over axes: ``reduce`` and ``argreduce``, each one primitive with a ``kind``.

The core normalises ``axes`` to a sorted tuple of non-negative ints and checks empty
reductions of the kinds without an identity (``max``, ``min``; every ``argreduce``).
A backend writes one kernel per primitive, choosing its native reduction by ``kind``
(as XLA's Reduce takes its computation and Nx's reduce family shares one shape).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from numerix import dtypes
from numerix.dtypes import DType
from numerix.errors import DTypeError
from numerix.primitives import _batch
from numerix.primitives._registry import (
    REGISTRY,
    batch_rule,
    nondifferentiable,
    unknown_kind,
    vjp_rule,
)

if TYPE_CHECKING:
    from numerix._tensor import Tensor

#: What a derivative rule returns: one cotangent (or None) per input.
Cotangents = tuple["Tensor | None", ...]

#: The kinds of ``reduce``.
REDUCE_KINDS = ("sum", "prod", "max", "min", "all", "any")
#: The kinds of ``reduce`` that accumulate: the op casts x to the accumulation dtype.
ACCUMULATING = frozenset({"sum", "prod"})
#: The kinds of ``reduce`` without an identity: an empty reduction is refused.
NO_IDENTITY = frozenset({"max", "min"})
#: The kinds of ``argreduce``.
ARGREDUCE_KINDS = ("max", "min")


def reduce_shape_rule(
    x: tuple[int, ...], *, axes: tuple[int, ...], keepdims: bool, kind: str | None = None
) -> tuple[int, ...]:
    # every kind has the same shape: ``kind`` is not read
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(x))
    return tuple(d for i, d in enumerate(x) if i not in axes)


def accumulation_dtype(x: DType, **params: object) -> DType:
    """The dtype ``sum`` and ``prod`` (and their cumulative forms) accumulate ``x`` in when
    the op is given no ``dtype``: integers in the default integer of their signedness
    (array API), bool in int64, every other dtype its own. The op casts ``x`` to it (or to
    the ``dtype`` asked for) before binding the primitive."""
    if x.kind in "bi":
        return dtypes.int64
    if x.kind == "u":
        return dtypes.uint64
    return x


def reduce_dtypes(kind: str, x: DType, dtype: Any = None) -> tuple[DType, DType]:
    """(the dtype the op casts ``x`` to, the result's dtype) of reduction ``kind`` of an
    ``x`` of this dtype, ``dtype`` the op's argument: DTypeError where the op refuses it.
    The shape's part of the op's checks (an empty axis of a kind with no identity) is
    the op's."""
    if kind in ACCUMULATING:
        cdt = accumulation_dtype(x) if dtype is None else dtypes.as_dtype(dtype, kind)
    else:
        REDUCE_DTYPE_RULES[kind](x)  # refused first
        cdt = x
    return cdt, reduce_dtype_rule(cdt, kind=kind, axes=(), keepdims=False)


def sum_dtype_rule(x: DType, **params: object) -> DType:
    # x arrives in the accumulation dtype (accumulation_dtype, or the op's dtype=)
    return x


def minmax_dtype_rule(x: DType, **params: object) -> DType:
    if x.kind == "c":
        raise DTypeError("max/min: complex numbers have no order")
    return x


def bool_dtype_rule(x: DType, **params: object) -> DType:
    return dtypes.bool_


#: ``reduce``'s dtype rule of each kind.
REDUCE_DTYPE_RULES: dict[str, Callable[..., DType]] = {
    "sum": sum_dtype_rule, "prod": sum_dtype_rule,
    "max": minmax_dtype_rule, "min": minmax_dtype_rule,
    "all": bool_dtype_rule, "any": bool_dtype_rule,
}  # fmt: skip


def reduce_dtype_rule(x: DType, *, kind: str, axes: tuple[int, ...], keepdims: bool) -> DType:
    """The dtype rule of ``kind`` (:data:`REDUCE_DTYPE_RULES`): sum/prod keep x's dtype (x
    arrives in the accumulation dtype), max/min refuse complex, all/any give bool."""
    if kind in ACCUMULATING:  # sum_dtype_rule, without a second call on the hot path
        return x
    try:
        rule = REDUCE_DTYPE_RULES[kind]
    except (KeyError, TypeError):
        raise unknown_kind("reduce", kind, REDUCE_KINDS) from None
    return rule(x)


def arg_dtype_rule(x: DType, *, kind: str, **params: object) -> DType:
    if kind not in ARGREDUCE_KINDS:
        raise unknown_kind("argreduce", kind, ARGREDUCE_KINDS)
    if x.kind == "c":
        raise DTypeError("argmax/argmin: complex numbers have no order")
    return dtypes.int64


#: ``extra["accumulation"]``: the dtype the op casts x to, for the ACCUMULATING kinds,
#: when given no dtype
reduce = REGISTRY.declare(
    "reduce", "reduction", inputs=("x",), params=("kind", "axes", "keepdims"),
    shape_rule=reduce_shape_rule, dtype_rule=reduce_dtype_rule,
    accumulation=accumulation_dtype, op_name="{kind}",
    doc="kind over axes: sum, prod (x arrives in out.dtype, the accumulation dtype), max, "
        "min (NaN propagates; not complex), all, any (logical, -> bool)",
)  # fmt: skip


def arg_shape_rule(
    x: tuple[int, ...], *, axis: int | None, keepdims: bool, kind: str | None = None
) -> tuple[int, ...]:
    if axis is None:
        return (1,) * len(x) if keepdims else ()
    return reduce_shape_rule(x, axes=(axis,), keepdims=keepdims)


argreduce = REGISTRY.declare(
    "argreduce", "reduction", inputs=("x",), params=("kind", "axis", "keepdims"),
    shape_rule=arg_shape_rule, dtype_rule=arg_dtype_rule, op_name="arg{kind}",
    doc="index of the first maximum (kind max) or minimum (kind min) along axis (None: of "
        "the flattened tensor) -> int64; NaN counts as the maximum and as the minimum",
)  # fmt: skip


# ---------------------------------------------------------------- derivative rules


def _expand(ops: Any, t: Tensor, x: Tensor, axes: tuple[int, ...], keepdims: bool) -> Tensor:
    """A reduction's output (or cotangent) broadcast back over ``x``'s shape."""
    if not keepdims:
        t = ops.reshape(t, tuple(1 if i in axes else d for i, d in enumerate(x.shape)))
    return ops.broadcast_to(t, x.shape)


def sum_vjp(
    ops: Any, cotangent: Tensor, out: Tensor, x: Tensor, *, axes: tuple[int, ...], keepdims: bool
) -> Cotangents:
    return (_expand(ops, cotangent, x, axes, keepdims),)


def minmax_vjp(
    ops: Any, cotangent: Tensor, out: Tensor, x: Tensor, *, axes: tuple[int, ...], keepdims: bool
) -> Cotangents:
    # the cotangent is shared equally between tied extremes, as jax.grad does
    hit = ops.astype(ops.equal(x, _expand(ops, out, x, axes, keepdims)), x.dtype)
    count = ops.sum(hit, axis=axes, keepdims=True)
    return (_expand(ops, cotangent, x, axes, keepdims) * (hit / count),)


def prod_vjp(
    ops: Any, cotangent: Tensor, out: Tensor, x: Tensor, *, axes: tuple[int, ...], keepdims: bool
) -> Cotangents:
    # the product of the other elements, exact with zeros (out / x is not): with no zero
    # in the group it is out / x; with one, only the zero's position gets the product of
    # the rest; with more, every position gets 0
    if x.dtype.kind not in "fc":
        return (None,)
    is_zero = ops.equal(x, 0)
    # counted in x's dtype: an integer sum is int64, which xla may refuse (decision 18)
    zeros = ops.sum(ops.astype(is_zero, x.dtype), axis=axes, keepdims=True)
    nonzero = ops.where(is_zero, ops.ones_like(x), x)
    rest = ops.broadcast_to(ops.prod(nonzero, axis=axes, keepdims=True), x.shape)
    none, one = ops.equal(zeros, 0), ops.logical_and(ops.equal(zeros, 1), is_zero)
    others = ops.where(none, rest / nonzero, ops.where(one, rest, ops.zeros_like(x)))
    return (_expand(ops, cotangent, x, axes, keepdims) * others,)


def logical_vjp(
    ops: Any, cotangent: Tensor, out: Tensor, x: Tensor, *, axes: tuple[int, ...], keepdims: bool
) -> Cotangents:
    # a boolean result carries no derivative
    return (None,)


#: ``reduce``'s derivative rule of each kind.
REDUCE_VJPS: dict[str, Callable[..., Cotangents]] = {
    "sum": sum_vjp, "prod": prod_vjp, "max": minmax_vjp, "min": minmax_vjp,
    "all": logical_vjp, "any": logical_vjp,
}  # fmt: skip


@vjp_rule("reduce")
def reduce_vjp(
    ops: Any, cotangent: Tensor, out: Tensor, x: Tensor, *, kind: str, axes: tuple[int, ...],
    keepdims: bool,
) -> Cotangents:  # fmt: skip
    return REDUCE_VJPS[kind](ops, cotangent, out, x, axes=axes, keepdims=keepdims)


# indices carry no derivative
nondifferentiable("argreduce")


# ---------------------------------------------------------------- batching rules


@batch_rule("reduce")
def reduce_batch(
    ops: Any, call: Any, args: list[Tensor], batched: list[bool], *, kind: str,
    axes: tuple[int, ...], keepdims: bool, **params: Any,
) -> Tensor:  # fmt: skip
    return call(args[0], kind=kind, axes=_batch.shifted(axes), keepdims=keepdims, **params)


@batch_rule("argreduce")
def argreduce_batch(
    ops: Any, call: Any, args: list[Tensor], batched: list[bool], *, kind: str,
    axis: int | None, keepdims: bool,
) -> Tensor:  # fmt: skip
    x = args[0]
    if axis is not None:
        return call(x, kind=kind, axis=axis + 1, keepdims=keepdims)
    # of each example flattened: one axis per example
    n = x.shape[0]
    flat = ops.reshape(x, (n, x.size // n if n else _prod(x.shape[1:])))
    r = call(flat, kind=kind, axis=1, keepdims=False)
    return ops.reshape(r, (n,) + (1,) * (x.ndim - 1)) if keepdims else r


def _prod(dims: tuple[int, ...]) -> int:
    p = 1
    for d in dims:
        p *= d
    return p
