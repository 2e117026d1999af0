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

from numerix import dtypes as D
from numerix.dtypes import DType
from numerix.errors import DTypeError
from numerix.primitives._registry import REGISTRY, declare_block

# ---------------------------------------------------------------- sort, argsort


def sort_shape_rule(x: tuple[int, ...], *, axis: int, descending: bool) -> tuple[int, ...]:
    return x


def sort_dtype_rule(x: DType, *, axis: int, descending: bool) -> DType:
    return x


def argsort_shape_rule(x: tuple[int, ...], *, axis: int, descending: bool) -> tuple[int, ...]:
    return x


def argsort_dtype_rule(x: DType, *, axis: int, descending: bool) -> DType:
    return D.int64


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


def cumulative_shape_rule(x: tuple[int, ...], *, axis: int, reverse: bool) -> tuple[int, ...]:
    return x


def cumulative_sum_dtype_rule(x: DType, *, axis: int, reverse: bool) -> DType:
    # as sum: integers accumulate in the default integer of their signedness
    if x.kind in "bi":
        return D.int64
    if x.kind == "u":
        return D.uint64
    return x


def cumulative_prod_dtype_rule(x: DType, *, axis: int, reverse: bool) -> DType:
    return cumulative_sum_dtype_rule(x, axis=axis, reverse=reverse)


def cumulative_max_dtype_rule(x: DType, *, axis: int, reverse: bool) -> DType:
    if x.kind == "c":
        raise DTypeError("cumulative_max: complex numbers have no order")
    return x


def cumulative_min_dtype_rule(x: DType, *, axis: int, reverse: bool) -> DType:
    if x.kind == "c":
        raise DTypeError("cumulative_min: complex numbers have no order")
    return x


_CUM_DOC = (
    "along axis (reverse: from the end); x arrives in out.dtype (the core casts it first); "
    "bfloat16/float16 may accumulate in float32 and round each result once"
)

cumulative_sum = REGISTRY.declare(
    "cumulative_sum", "sort", inputs=("x",), params=("axis", "reverse"),
    shape_rule=cumulative_shape_rule, dtype_rule=cumulative_sum_dtype_rule,
    doc="running sum " + _CUM_DOC + "; integers wrap around",
)  # fmt: skip
cumulative_prod = REGISTRY.declare(
    "cumulative_prod", "sort", inputs=("x",), params=("axis", "reverse"),
    shape_rule=cumulative_shape_rule, dtype_rule=cumulative_prod_dtype_rule,
    doc="running product " + _CUM_DOC + "; integers wrap around",
)  # fmt: skip
cumulative_max = REGISTRY.declare(
    "cumulative_max", "sort", inputs=("x",), params=("axis", "reverse"),
    shape_rule=cumulative_shape_rule, dtype_rule=cumulative_max_dtype_rule,
    doc="running maximum " + _CUM_DOC + "; NaN propagates; real dtypes and bool",
)  # fmt: skip
cumulative_min = REGISTRY.declare(
    "cumulative_min", "sort", inputs=("x",), params=("axis", "reverse"),
    shape_rule=cumulative_shape_rule, dtype_rule=cumulative_min_dtype_rule,
    doc="running minimum " + _CUM_DOC + "; NaN propagates; real dtypes and bool",
)  # fmt: skip

# ---------------------------------------------------------------- blocks

top_k = declare_block(
    "top_k", "sort", inputs=("x",), params=("k", "axis"),
    doc="(values, int64 indices) of the k largest along axis, in descending sort order "
        "(NaN largest; ties: the lower index first); out is a pair",
)  # fmt: skip
