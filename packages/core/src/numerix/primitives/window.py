"""Window reductions (pooling) and window scatters.

The core resolves every parameter before a backend sees it: ``window_dimensions``,
``strides`` and ``window_dilations`` are tuples of positive ints, one per axis of
``x``, and ``padding`` is a tuple of ``(low, high)`` pairs of non-negative ints. The
padded positions hold the reduction's identity (0 for sum, 1 for prod, the lowest
value for max, the highest for min). An axis whose dilated window is larger than its
padded size has 0 windows (as XLA).
"""

from __future__ import annotations

from numerix.dtypes import DType
from numerix.errors import DTypeError
from numerix.primitives._registry import REGISTRY

Pairs = tuple[tuple[int, int], ...]


def window_out_size(n: int, window: int, stride: int, low: int, high: int, dilation: int) -> int:
    """The number of windows along one axis (XLA's ``StridedBound``)."""
    padded = n + low + high
    span = (window - 1) * dilation + 1
    return 0 if span > padded else (padded - span) // stride + 1


def window_reduce_shape_rule(
    x: tuple[int, ...], *, window_dimensions: tuple[int, ...], strides: tuple[int, ...],
    padding: Pairs, window_dilations: tuple[int, ...],
) -> tuple[int, ...]:  # fmt: skip
    return tuple(
        window_out_size(n, w, s, lo, hi, d)
        for n, w, s, (lo, hi), d in zip(x, window_dimensions, strides, padding, window_dilations)
    )


def window_sum_dtype_rule(x: DType) -> DType:
    if x.kind == "b":
        raise DTypeError("window_sum/window_prod: bool has no sum or product that stays bool")
    return x


def window_minmax_dtype_rule(x: DType) -> DType:
    if x.kind == "c":
        raise DTypeError("window_max/window_min: complex numbers have no order")
    return x


def _window(name: str, dtype_rule, doc: str):  # type: ignore[no-untyped-def]
    return REGISTRY.declare(
        name, "window", inputs=("x",),
        params=("window_dimensions", "strides", "padding", "window_dilations"),
        shape_rule=window_reduce_shape_rule, dtype_rule=dtype_rule, doc=doc,
    )  # fmt: skip


window_sum = _window(
    "window_sum", window_sum_dtype_rule,
    "sum over each (strided, dilated) window of x padded with 0; keeps x's dtype",
)  # fmt: skip
window_prod = _window(
    "window_prod", window_sum_dtype_rule,
    "product over each window of x padded with 1; keeps x's dtype",
)  # fmt: skip
window_max = _window(
    "window_max", window_minmax_dtype_rule,
    "maximum over each window of x padded with its dtype's lowest value (-inf for "
    "floats); NaN propagates",
)  # fmt: skip
window_min = _window(
    "window_min", window_minmax_dtype_rule,
    "minimum over each window of x padded with its dtype's highest value (+inf for "
    "floats); NaN propagates",
)  # fmt: skip


def window_scatter_shape_rule(
    x: tuple[int, ...], source: tuple[int, ...], init_value: tuple[int, ...], *,
    window_dimensions: tuple[int, ...], strides: tuple[int, ...], padding: Pairs,
) -> tuple[int, ...]:  # fmt: skip
    return x


def window_scatter_dtype_rule(x: DType, source: DType, init_value: DType) -> DType:
    if x.kind == "c":
        raise DTypeError("window_scatter_max/window_scatter_min: complex numbers have no order")
    if source is not init_value:  # pragma: no cover - the core casts first
        raise DTypeError("window_scatter: source and init_value must share a dtype")
    return source


def _scatter(name: str, which: str):  # type: ignore[no-untyped-def]
    return REGISTRY.declare(
        name, "window", inputs=("x", "source", "init_value"),
        params=("window_dimensions", "strides", "padding"),
        shape_rule=window_scatter_shape_rule, dtype_rule=window_scatter_dtype_rule,
        doc=f"out (x's shape, source's dtype) = init_value (0-d) plus, for each window of x, "
            f"its source value added at the window's first {which} (NaN counts as the "
            f"{which}; padding is never chosen; a window all padding drops its value)",
    )  # fmt: skip


window_scatter_max = _scatter("window_scatter_max", "maximum")
window_scatter_min = _scatter("window_scatter_min", "minimum")
