"""Reductions over axes. The core normalises ``axes`` to a sorted tuple of
non-negative ints and checks empty reductions of ops without an identity."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from numerix import dtypes as D
from numerix.dtypes import DType
from numerix.errors import DTypeError
from numerix.primitives._registry import REGISTRY, nondifferentiable, vjp_rule

if TYPE_CHECKING:
    from numerix._tensor import Tensor

#: What a derivative rule returns: one cotangent (or None) per input.
Cotangents = tuple["Tensor | None", ...]


def reduce_shape_rule(
    x: tuple[int, ...], *, axes: tuple[int, ...], keepdims: bool
) -> tuple[int, ...]:
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(x))
    return tuple(d for i, d in enumerate(x) if i not in axes)


def accumulation_dtype(x: DType, **params: object) -> DType:
    """The dtype ``sum`` and ``prod`` (and their cumulative forms) accumulate ``x`` in when
    the op is given no ``dtype``: integers in the default integer of their signedness
    (array API), bool in int64, every other dtype its own. The op casts ``x`` to it (or to
    the ``dtype`` asked for) before binding the primitive."""
    if x.kind in "bi":
        return D.int64
    if x.kind == "u":
        return D.uint64
    return x


def sum_dtype_rule(x: DType, **params: object) -> DType:
    # x arrives in the accumulation dtype (accumulation_dtype, or the op's dtype=)
    return x


def minmax_dtype_rule(x: DType, **params: object) -> DType:
    if x.kind == "c":
        raise DTypeError("max/min: complex numbers have no order")
    return x


def bool_dtype_rule(x: DType, **params: object) -> DType:
    return D.bool_


def arg_dtype_rule(x: DType, **params: object) -> DType:
    if x.kind == "c":
        raise DTypeError("argmax/argmin: complex numbers have no order")
    return D.int64


def _reduce(name: str, dtype_rule, identity: bool, doc: str, **extra):  # type: ignore[no-untyped-def]
    return REGISTRY.declare(
        name, "reduction", inputs=("x",), params=("axes", "keepdims"),
        shape_rule=reduce_shape_rule, dtype_rule=dtype_rule, doc=doc, identity=identity, **extra,
    )  # fmt: skip


#: ``extra["accumulation"]``: the dtype the op casts x to when given no dtype
sum = _reduce(
    "sum", sum_dtype_rule, True, "sum over axes; x arrives in out.dtype",
    accumulation=accumulation_dtype,
)  # fmt: skip
prod = _reduce(
    "prod", sum_dtype_rule, True, "product over axes; x arrives in out.dtype",
    accumulation=accumulation_dtype,
)  # fmt: skip
max = _reduce("max", minmax_dtype_rule, False, "maximum over axes (NaN propagates)")
min = _reduce("min", minmax_dtype_rule, False, "minimum over axes (NaN propagates)")
all = _reduce("all", bool_dtype_rule, True, "logical and over axes -> bool")
any = _reduce("any", bool_dtype_rule, True, "logical or over axes -> bool")


def arg_shape_rule(x: tuple[int, ...], *, axis: int | None, keepdims: bool) -> tuple[int, ...]:
    if axis is None:
        return (1,) * len(x) if keepdims else ()
    return reduce_shape_rule(x, axes=(axis,), keepdims=keepdims)


argmax = REGISTRY.declare(
    "argmax", "reduction", inputs=("x",), params=("axis", "keepdims"),
    shape_rule=arg_shape_rule, dtype_rule=arg_dtype_rule,
    doc="index of the first maximum along axis (None: of the flattened tensor) -> int64; "
        "NaN counts as the maximum",
)  # fmt: skip
argmin = REGISTRY.declare(
    "argmin", "reduction", inputs=("x",), params=("axis", "keepdims"),
    shape_rule=arg_shape_rule, dtype_rule=arg_dtype_rule,
    doc="index of the first minimum along axis (None: of the flattened tensor) -> int64; "
        "NaN counts as the minimum",
)  # fmt: skip


# ---------------------------------------------------------------- derivative rules


def _expand(ops: Any, t: Tensor, x: Tensor, axes: tuple[int, ...], keepdims: bool) -> Tensor:
    """A reduction's output (or cotangent) broadcast back over ``x``'s shape."""
    if not keepdims:
        t = ops.reshape(t, tuple(1 if i in axes else d for i, d in enumerate(x.shape)))
    return ops.broadcast_to(t, x.shape)


@vjp_rule("sum")
def sum_vjp(
    ops: Any, cotangent: Tensor, out: Tensor, x: Tensor, *, axes: tuple[int, ...], keepdims: bool
) -> Cotangents:
    return (_expand(ops, cotangent, x, axes, keepdims),)


@vjp_rule("max", "min")
def minmax_vjp(
    ops: Any, cotangent: Tensor, out: Tensor, x: Tensor, *, axes: tuple[int, ...], keepdims: bool
) -> Cotangents:
    # the cotangent is shared equally between tied extremes, as jax.grad does
    hit = ops.astype(ops.equal(x, _expand(ops, out, x, axes, keepdims)), x.dtype)
    count = ops.sum(hit, axis=axes, keepdims=True)
    return (_expand(ops, cotangent, x, axes, keepdims) * (hit / count),)


@vjp_rule("prod")
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


# boolean results and indices carry no derivative
nondifferentiable("all", "any", "argmax", "argmin")
