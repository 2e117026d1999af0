"""Window reductions (pooling) and window scatters.

The core resolves every parameter before a backend sees it: ``window_dimensions``,
``strides`` and ``window_dilations`` are tuples of positive ints, one per axis of
``x``, and ``padding`` is a tuple of ``(low, high)`` pairs of non-negative ints. The
padded positions hold the reduction's identity (0 for sum, 1 for prod, the lowest
value for max, the highest for min). An axis whose dilated window is larger than its
padded size has 0 windows (as XLA).
"""

from __future__ import annotations

import builtins
import itertools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from numerix.dtypes import DType
from numerix.errors import DTypeError
from numerix.primitives import _batch
from numerix.primitives._registry import REGISTRY, batch_rule, unknown_kind, vjp_rule

if TYPE_CHECKING:
    from numerix._tensor import Tensor

#: What a derivative rule returns: one cotangent (or None) per input.
Cotangents = tuple["Tensor | None", ...]

Pairs = tuple[tuple[int, int], ...]


def window_out_size(n: int, window: int, stride: int, low: int, high: int, dilation: int) -> int:
    """The number of windows along one axis (XLA's ``StridedBound``)."""
    padded = n + low + high
    span = (window - 1) * dilation + 1
    return 0 if span > padded else (padded - span) // stride + 1


#: The kinds of ``window_reduce``.
WINDOW_REDUCE_KINDS = ("sum", "prod", "max", "min")
#: The kinds of ``window_scatter``: where in each window its source value goes.
WINDOW_SCATTER_KINDS = ("max", "min")


def window_reduce_shape_rule(
    x: tuple[int, ...], *, window_dimensions: tuple[int, ...], strides: tuple[int, ...],
    padding: Pairs, window_dilations: tuple[int, ...], kind: str | None = None,
) -> tuple[int, ...]:  # fmt: skip
    # every kind has the same shape: ``kind`` is not read
    return tuple(
        window_out_size(n, w, s, lo, hi, d)
        for n, w, s, (lo, hi), d in zip(x, window_dimensions, strides, padding, window_dilations)
    )


def window_sum_dtype_rule(x: DType, **params: object) -> DType:
    if x.kind == "b":
        raise DTypeError("window_sum/window_prod: bool has no sum or product that stays bool")
    return x


def window_minmax_dtype_rule(x: DType, **params: object) -> DType:
    if x.kind == "c":
        raise DTypeError("window_max/window_min: complex numbers have no order")
    return x


#: ``window_reduce``'s dtype rule of each kind.
WINDOW_REDUCE_DTYPE_RULES: dict[str, Callable[..., DType]] = {
    "sum": window_sum_dtype_rule, "prod": window_sum_dtype_rule,
    "max": window_minmax_dtype_rule, "min": window_minmax_dtype_rule,
}  # fmt: skip


def window_reduce_dtype_rule(x: DType, *, kind: str, **params: object) -> DType:
    """The dtype rule of ``kind``: x's dtype; sum/prod refuse bool, max/min complex."""
    try:
        rule = WINDOW_REDUCE_DTYPE_RULES[kind]
    except (KeyError, TypeError):
        raise unknown_kind("window_reduce", kind, WINDOW_REDUCE_KINDS) from None
    return rule(x)


window_reduce = REGISTRY.declare(
    "window_reduce", "window", inputs=("x",),
    params=("kind", "window_dimensions", "strides", "padding", "window_dilations"),
    shape_rule=window_reduce_shape_rule, dtype_rule=window_reduce_dtype_rule,
    op_name="window_{kind}",
    doc="sum, prod, max or min (kind) over each (strided, dilated) window of x padded with "
        "the kind's identity: 0, 1, the dtype's lowest value (-inf for floats), its highest "
        "(+inf); keeps x's dtype; max and min propagate NaN",
)  # fmt: skip


def window_scatter_shape_rule(
    x: tuple[int, ...], source: tuple[int, ...], init_value: tuple[int, ...], *,
    window_dimensions: tuple[int, ...], strides: tuple[int, ...], padding: Pairs,
    kind: str | None = None,
) -> tuple[int, ...]:  # fmt: skip
    return x


def window_scatter_dtype_rule(
    x: DType, source: DType, init_value: DType, *, kind: str, **params: object
) -> DType:
    if kind not in WINDOW_SCATTER_KINDS:
        raise unknown_kind("window_scatter", kind, WINDOW_SCATTER_KINDS)
    if x.kind == "c":
        raise DTypeError("window_scatter_max/window_scatter_min: complex numbers have no order")
    if source is not init_value:  # pragma: no cover - the core casts first
        raise DTypeError("window_scatter: source and init_value must share a dtype")
    return source


window_scatter = REGISTRY.declare(
    "window_scatter", "window", inputs=("x", "source", "init_value"),
    params=("kind", "window_dimensions", "strides", "padding"),
    shape_rule=window_scatter_shape_rule, dtype_rule=window_scatter_dtype_rule,
    op_name="window_scatter_{kind}",
    doc="out (x's shape, source's dtype) = init_value (0-d) plus, for each window of x, its "
        "source value added at the window's first maximum (kind max) or minimum (kind min) "
        "(NaN counts as either; padding is never chosen; a window all padding drops its value)",
)  # fmt: skip


# ---------------------------------------------------------------- derivative rules


def _dilated(n: int, d: int) -> int:
    return 0 if n == 0 else (n - 1) * d + 1


def _patches(
    ops: Any, x: Tensor, value: Any, window_dimensions: tuple[int, ...],
    strides: tuple[int, ...], padding: Pairs, window_dilations: tuple[int, ...],
) -> Tensor:  # fmt: skip
    """The elements of every window, ``(number of window positions, *out_shape)``: row
    ``w`` holds element ``w`` (row-major in the window) of each window of ``x`` padded
    with ``value``."""
    shape = window_reduce_shape_rule(
        x.shape, window_dimensions=window_dimensions, strides=strides, padding=padding,
        window_dilations=window_dilations,
    )  # fmt: skip
    xp = ops.pad_general(x, [(lo, hi, 0) for lo, hi in padding], value=value)
    rows = []
    for w in itertools.product(*(range(k) for k in window_dimensions)):
        key = tuple(
            builtins.slice(i * d, i * d + (n - 1) * s + 1, s) if n else builtins.slice(0, 0)
            for i, d, n, s in zip(w, window_dilations, shape, strides)
        )
        rows.append(xp[key])
    return ops.stack(rows)


def _unpatches(
    ops: Any, g: Tensor, x: Tensor, window_dimensions: tuple[int, ...],
    strides: tuple[int, ...], padding: Pairs, window_dilations: tuple[int, ...],
) -> Tensor:  # fmt: skip
    """The transpose of :func:`_patches`: each row of ``g`` added back where it was taken."""
    if g.size == 0:
        return ops.zeros_like(x)
    total = None
    for r, w in enumerate(itertools.product(*(range(k) for k in window_dimensions))):
        config = []
        for i, d, n, s, (lo, _), m in zip(
            w, window_dilations, g.shape[1:], strides, padding, x.shape
        ):
            a = i * d - lo
            config.append((a, m - a - _dilated(n, s), s - 1))
        part = ops.pad_general(g[r], config)
        total = part if total is None else total + part
    assert total is not None
    return total


def _first_hits(
    ops: Any, x: Tensor, best: Tensor, window_dimensions: tuple[int, ...],
    strides: tuple[int, ...], padding: Pairs, window_dilations: tuple[int, ...],
) -> Tensor:  # fmt: skip
    """Per window, a mask over its positions of the first element of ``x`` equal to the
    window's ``best`` (a NaN matches a NaN; padding never does)."""
    geometry = (window_dimensions, strides, padding, window_dilations)
    # (the mask of real elements taken as x's dtype shares the kernels of x's patches)
    valid = _patches(ops, ops.ones_like(x), 0, *geometry) != 0
    px = _patches(ops, x, 0, *geometry)
    hit = px == best
    if x.dtype.kind == "f":
        hit = ops.logical_or(hit, ops.logical_and(ops.isnan(px), ops.isnan(best)))
    hit = ops.logical_and(hit, valid)
    return ops.logical_and(hit, ops.cumulative_sum(hit, axis=0) == 1)


def window_sum_vjp(
    ops: Any, cotangent: Tensor, out: Tensor, x: Tensor, *, window_dimensions: tuple[int, ...],
    strides: tuple[int, ...], padding: Pairs, window_dilations: tuple[int, ...],
) -> Cotangents:  # fmt: skip
    # each element of x receives the sum of the cotangents of the windows holding it: the
    # cotangent spread out by the strides, padded, and summed over windows again
    if cotangent.size == 0:
        return (ops.zeros_like(x),)
    config = []
    for n, k, s, (lo, _), d, o in zip(
        x.shape, window_dimensions, strides, padding, window_dilations, out.shape
    ):
        span = _dilated(k, d)
        before = span - lo - 1
        config.append((before, n + span - 1 - _dilated(o, s) - before, s - 1))
    spread = ops.pad_general(cotangent, config)
    gx = ops.window_sum(spread, window_dimensions, strides=1, window_dilations=window_dilations)
    return (gx,)


def window_prod_vjp(
    ops: Any, cotangent: Tensor, out: Tensor, x: Tensor, *, window_dimensions: tuple[int, ...],
    strides: tuple[int, ...], padding: Pairs, window_dilations: tuple[int, ...],
) -> Cotangents:  # fmt: skip
    # the product of the others of each window (exact where x holds zeros): the products
    # before and after each position, from cumulative products over the window
    geometry = (window_dimensions, strides, padding, window_dilations)
    p = _patches(ops, x, 1, *geometry)
    if p.size == 0:
        return (ops.zeros_like(x),)
    keep = [(0, 0, 0)] * (p.ndim - 1)
    before = ops.pad_general(ops.cumulative_prod(p, axis=0), [(1, -1, 0), *keep], value=1)
    after = ops.pad_general(
        ops.cumulative_prod(p, axis=0, reverse=True), [(-1, 1, 0), *keep], value=1
    )
    return (_unpatches(ops, before * after * cotangent, x, *geometry),)


def _window_extreme_vjp(which: str) -> Callable[..., Cotangents]:
    def rule(
        ops: Any, cotangent: Tensor, out: Tensor, x: Tensor, *,
        window_dimensions: tuple[int, ...], strides: tuple[int, ...], padding: Pairs,
        window_dilations: tuple[int, ...],
    ) -> Cotangents:  # fmt: skip
        # the cotangent of each window goes to its first extreme element (NaN first)
        if cotangent.size == 0:
            return (ops.zeros_like(x),)
        if all(d == 1 for d in window_dilations):
            scatter = ops.window_scatter_max if which == "max" else ops.window_scatter_min
            return (scatter(x, cotangent, 0, window_dimensions, strides=strides, padding=padding),)
        geometry = (window_dimensions, strides, padding, window_dilations)
        first = _first_hits(ops, x, out, *geometry)
        g = ops.where(first, cotangent, ops.zeros_like(cotangent))
        return (_unpatches(ops, g, x, *geometry),)

    rule.__name__ = rule.__qualname__ = f"window_{which}_vjp"
    return rule


#: ``window_reduce``'s derivative rule of each kind.
WINDOW_REDUCE_VJPS: dict[str, Callable[..., Cotangents]] = {
    "sum": window_sum_vjp, "prod": window_prod_vjp,
    "max": _window_extreme_vjp("max"), "min": _window_extreme_vjp("min"),
}  # fmt: skip


@vjp_rule("window_reduce")
def window_reduce_vjp(
    ops: Any, cotangent: Tensor, out: Tensor, x: Tensor, *, kind: str,
    window_dimensions: tuple[int, ...], strides: tuple[int, ...], padding: Pairs,
    window_dilations: tuple[int, ...],
) -> Cotangents:  # fmt: skip
    return WINDOW_REDUCE_VJPS[kind](
        ops, cotangent, out, x, window_dimensions=window_dimensions, strides=strides,
        padding=padding, window_dilations=window_dilations,
    )  # fmt: skip


def _window_scatter_vjp(which: str) -> Callable[..., Cotangents]:
    def rule(
        ops: Any, cotangent: Tensor, out: Tensor, x: Tensor, source: Tensor,
        init_value: Tensor, *, window_dimensions: tuple[int, ...], strides: tuple[int, ...],
        padding: Pairs,
    ) -> Cotangents:  # fmt: skip
        # linear in source and init_value; x only chooses where (no derivative)
        geometry = (window_dimensions, strides, padding, (1,) * x.ndim)
        reduce = ops.window_max if which == "max" else ops.window_min
        best = reduce(x, window_dimensions, strides=strides, padding=padding)
        if source.size:
            first = _first_hits(ops, x, best, *geometry)
            pc = _patches(ops, cotangent, 0, *geometry)
            g_source = ops.sum(ops.where(first, pc, ops.zeros_like(pc)), axis=0)
        else:
            g_source = ops.zeros_like(source)
        return (None, g_source, ops.sum(cotangent))

    rule.__name__ = rule.__qualname__ = f"window_scatter_{which}_vjp"
    return rule


#: ``window_scatter``'s derivative rule of each kind.
WINDOW_SCATTER_VJPS: dict[str, Callable[..., Cotangents]] = {
    "max": _window_scatter_vjp("max"),
    "min": _window_scatter_vjp("min"),
}


@vjp_rule("window_scatter")
def window_scatter_vjp(
    ops: Any, cotangent: Tensor, out: Tensor, x: Tensor, source: Tensor, init_value: Tensor, *,
    kind: str, window_dimensions: tuple[int, ...], strides: tuple[int, ...], padding: Pairs,
) -> Cotangents:  # fmt: skip
    return WINDOW_SCATTER_VJPS[kind](
        ops, cotangent, out, x, source, init_value, window_dimensions=window_dimensions,
        strides=strides, padding=padding,
    )  # fmt: skip


# ---------------------------------------------------------------- batching rules
# the batch axis gets a window of 1, stride 1, no padding: each example its own windows


@batch_rule("window_reduce")
def window_reduce_batch(
    ops: Any, call: Any, args: list[Tensor], batched: list[bool], *, kind: str,
    window_dimensions: tuple[int, ...], strides: tuple[int, ...], padding: Pairs,
    window_dilations: tuple[int, ...],
) -> Tensor:  # fmt: skip
    return call(args[0], kind=kind, window_dimensions=(1, *window_dimensions),
                strides=(1, *strides), padding=((0, 0), *padding),
                window_dilations=(1, *window_dilations))  # fmt: skip


@batch_rule("window_scatter")
def window_scatter_batch(
    ops: Any, call: Any, args: list[Tensor], batched: list[bool], *, kind: str,
    window_dimensions: tuple[int, ...], strides: tuple[int, ...], padding: Pairs,
) -> Tensor:  # fmt: skip
    params = {"kind": kind, "window_dimensions": window_dimensions, "strides": strides,
              "padding": padding}  # fmt: skip
    if batched[2]:  # an init value per example: the one case with no batched form
        return _batch.loop(ops, call, args, batched, **params)
    n = _batch.size(args, batched)
    x = _batch.lift(ops, args[0], batched[0], n)
    source = _batch.lift(ops, args[1], batched[1], n)
    return call(x, source, args[2], kind=kind, window_dimensions=(1, *window_dimensions),
                strides=(1, *strides), padding=((0, 0), *padding))  # fmt: skip
