"""Window reductions and window scatters (pooling), on the window primitives.

These follow Nx (``Nx.window_sum``, ``Nx.window_scatter_max``, ...) and XLA's
ReduceWindow / SelectAndScatter: a window of ``window_shape`` (one size per axis of
``x``) slides over ``x`` with ``strides``, its elements ``window_dilations`` apart,
over ``x`` padded as ``padding`` says.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from numerix import dtypes
from numerix._tensor import Tensor
from numerix.errors import ArgumentError, DTypeError, ShapeError
from numerix.ops._core import (
    as_tensor,
    cast,
    check_scalar_fits,
    result_dtype,
    scalar,
    unify,
)
from numerix.primitives import window

__all__ = [
    "window_sum", "window_prod", "window_max", "window_min", "window_mean",
    "window_scatter_max", "window_scatter_min",
]  # fmt: skip

Padding = str | Sequence[tuple[int, int]]


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def static_ints(
    op: str, name: str, value: Any, n: int, what: str, *, scalar_ok: bool
) -> tuple[int, ...]:
    """``value`` (an int when ``scalar_ok``, else a sequence of ``n`` ints) as a tuple of
    ``n`` positive ints; ``what`` names the axes in messages."""
    if scalar_ok and _is_int(value):
        value = (value,) * n
    if not isinstance(value, (tuple, list)) or not all(_is_int(v) for v in value):
        form = "an int or a sequence of ints" if scalar_ok else "a sequence of ints"
        raise ShapeError(f"{op}: {name} must be {form}, one per {what}, got {value!r}")
    if len(value) != n:
        raise ShapeError(
            f"{op}: {name} {tuple(value)} has {len(value)} entries; it needs {n}, one per {what}"
        )
    if any(v < 1 for v in value):
        raise ShapeError(f"{op}: {name} must be positive, got {tuple(value)}")
    return tuple(value)


def resolve_padding(
    op: str, padding: Any, sizes: Sequence[int], spans: Sequence[int], strides: Sequence[int],
    what: str,
) -> tuple[tuple[int, int], ...]:  # fmt: skip
    """``"valid"``, ``"same"`` or explicit ``(low, high)`` pairs, as pairs.

    ``"same"`` pads so that each axis has ``ceil(size / stride)`` windows, the total
    split low = total // 2, high = the rest (as XLA and Nx); ``spans`` are the dilated
    window sizes."""
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0),) * len(sizes)
        if padding == "same":
            pads = []
            for n, k, s in zip(sizes, spans, strides):
                total = max((-(-n // s) - 1) * s + k - n, 0)
                pads.append((total // 2, total - total // 2))
            return tuple(pads)
        raise ArgumentError(
            f"{op}: padding must be 'valid', 'same' or a sequence of (low, high) pairs, got "
            f"{padding!r}"
        )
    ok = isinstance(padding, (tuple, list)) and all(
        isinstance(p, (tuple, list)) and len(p) == 2 and all(_is_int(v) for v in p) for p in padding
    )
    if not ok:
        raise ArgumentError(
            f"{op}: padding must be 'valid', 'same' or a sequence of (low, high) pairs, got "
            f"{padding!r}"
        )
    if len(padding) != len(sizes):
        raise ShapeError(
            f"{op}: padding has {len(padding)} (low, high) pairs; it needs {len(sizes)}, one per "
            f"{what}"
        )
    pairs = tuple((int(lo), int(hi)) for lo, hi in padding)
    if any(lo < 0 or hi < 0 for lo, hi in pairs):
        raise ShapeError(f"{op}: padding must be non-negative, got {pairs}; slice x instead")
    return pairs


def _params(
    op: str, t: Tensor, window_shape: Any, strides: Any, padding: Any, window_dilations: Any
) -> dict[str, Any]:
    n, ax = t.ndim, "axis of x"

    def ones_or(name: str, v: Any) -> tuple[int, ...]:
        return (1,) * n if v is None else static_ints(op, name, v, n, ax, scalar_ok=True)

    win = static_ints(op, "window_shape", window_shape, n, ax, scalar_ok=False)
    st, dil = ones_or("strides", strides), ones_or("window_dilations", window_dilations)
    spans = [(w - 1) * d + 1 for w, d in zip(win, dil)]
    pad = resolve_padding(op, padding, t.shape, spans, st, ax)
    return {"window_dimensions": win, "strides": st, "padding": pad, "window_dilations": dil}


def _window(
    kind: str, x: Any, window_shape: Any, strides: Any, padding: Any, window_dilations: Any
) -> Tensor:
    op = f"window_{kind}"
    t = as_tensor(x, op)
    try:
        window.WINDOW_REDUCE_DTYPE_RULES[kind](t.dtype)  # refused first, with the operand named
    except DTypeError as e:
        fix = "; cast with astype first" if t.dtype.kind == "b" else ""
        why = str(e).split(": ", 1)[1]
        raise DTypeError(f"{op}: {why}; got {t.describe()}{fix}") from None
    params = _params(op, t, window_shape, strides, padding, window_dilations)
    return window.window_reduce.bind(t, kind=kind, **params)


def window_sum(
    x: Any, window_shape: Sequence[int], *, strides: int | Sequence[int] | None = None,
    padding: Padding = "valid", window_dilations: int | Sequence[int] | None = None,
) -> Tensor:  # fmt: skip
    """Sum over each window of ``x`` (Nx ``window_sum``; XLA ReduceWindow with add).

    Note: the result keeps ``x``'s dtype, as Nx and XLA (integers wrap around), unlike
    :func:`numerix.sum`, which accumulates integers in int64; bool is refused.

    :param x: the tensor (any dtype but bool).
    :param window_shape: the window's size along each axis of ``x``.
    :param strides: how far consecutive windows start apart, per axis (default 1).
    :param padding: ``"valid"`` (none), ``"same"`` (``ceil(n / stride)`` windows per
        axis, padding split low = total // 2, high = the rest) or ``(low, high)`` pairs,
        one per axis; padded positions count as 0.
    :param window_dilations: the distance between a window's elements, per axis
        (default 1).

    >>> import numerix as nx
    >>> nx.window_sum(nx.tensor([[1, 2, 3], [4, 5, 6]]), (1, 2)).tolist()
    [[3, 5], [9, 11]]
    >>> nx.window_sum(nx.tensor([1, 2, 3]), (2,), padding="same").tolist()
    [3, 5, 3]

    A window rank other than ``x.ndim`` is an error:

    >>> nx.window_sum(nx.tensor([1, 2, 3]), (2, 2))
    Traceback (most recent call last):
    numerix.errors.ShapeError: window_sum: window_shape (2, 2) has 2 entries; it needs 1, one per axis of x
    """
    return _window("sum", x, window_shape, strides, padding, window_dilations)


def window_prod(
    x: Any, window_shape: Sequence[int], *, strides: int | Sequence[int] | None = None,
    padding: Padding = "valid", window_dilations: int | Sequence[int] | None = None,
) -> Tensor:  # fmt: skip
    """Product over each window of ``x`` (Nx ``window_product``); padding counts as 1.

    Keeps ``x``'s dtype (integers wrap around), as :func:`window_sum`; bool is refused.
    Parameters as :func:`window_sum`.

    >>> import numerix as nx
    >>> nx.window_prod(nx.tensor([1, 2, 3, 4]), (2,), strides=2).tolist()
    [2, 12]
    >>> nx.window_prod(nx.tensor([True]), (1,))
    Traceback (most recent call last):
    numerix.errors.DTypeError: window_prod: bool has no sum or product that stays bool; got pred[1] binary(cpu); cast with astype first
    """
    return _window("prod", x, window_shape, strides, padding, window_dilations)


def window_max(
    x: Any, window_shape: Sequence[int], *, strides: int | Sequence[int] | None = None,
    padding: Padding = "valid", window_dilations: int | Sequence[int] | None = None,
) -> Tensor:  # fmt: skip
    """Maximum over each window of ``x`` (Nx ``window_max``; max pooling).

    Padding holds the dtype's lowest value (-inf for floats), so it never wins unless
    a window holds nothing else; NaN propagates. Complex is refused. Parameters as
    :func:`window_sum`.

    >>> import numerix as nx
    >>> nx.window_max(nx.tensor([[1, 5], [3, 2]]), (2, 1)).tolist()
    [[3, 5]]
    >>> nx.window_max(nx.tensor([1j]), (1,))
    Traceback (most recent call last):
    numerix.errors.DTypeError: window_max: complex numbers have no order; got c64[1] binary(cpu)
    """
    return _window("max", x, window_shape, strides, padding, window_dilations)


def window_min(
    x: Any, window_shape: Sequence[int], *, strides: int | Sequence[int] | None = None,
    padding: Padding = "valid", window_dilations: int | Sequence[int] | None = None,
) -> Tensor:  # fmt: skip
    """Minimum over each window of ``x`` (Nx ``window_min``; min pooling).

    Padding holds the dtype's highest value (+inf for floats); NaN propagates. Complex
    is refused. Parameters as :func:`window_sum`.

    >>> import numerix as nx
    >>> nx.window_min(nx.tensor([4, 1, 3, 2]), (2,), strides=2).tolist()
    [1, 2]
    >>> nx.window_min(nx.tensor([1, 2]), (0,))
    Traceback (most recent call last):
    numerix.errors.ShapeError: window_min: window_shape must be positive, got (0,)
    """
    return _window("min", x, window_shape, strides, padding, window_dilations)


def window_mean(
    x: Any, window_shape: Sequence[int], *, strides: int | Sequence[int] | None = None,
    padding: Padding = "valid", window_dilations: int | Sequence[int] | None = None,
) -> Tensor:  # fmt: skip
    """Mean over each window of ``x`` (Nx ``window_mean``; average pooling).

    The window sum divided by the window's volume ``prod(window_shape)``: padded
    positions count as zeros in the mean, as Nx. Bool and integers compute in float32,
    as :func:`numerix.mean`. Parameters as :func:`window_sum`.

    >>> import numerix as nx
    >>> nx.window_mean(nx.tensor([1, 2, 3, 5]), (2,), strides=2).tolist()
    [1.5, 4.0]
    >>> nx.window_mean(nx.tensor([1, 2]), (2,), padding="full")
    Traceback (most recent call last):
    numerix.errors.ArgumentError: window_mean: padding must be 'valid', 'same' or a sequence of (low, high) pairs, got 'full'
    """
    t = as_tensor(x, "window_mean")
    if t.dtype.kind in "biu":
        t = cast(t, dtypes.default_float())
    params = _params("window_mean", t, window_shape, strides, padding, window_dilations)
    s = window.window_reduce.bind(t, kind="sum", **params)
    volume = 1
    for w in params["window_dimensions"]:
        volume *= w
    return s / volume


def _scatter(
    kind: str, x: Any, source: Any, init_value: Any, window_shape: Any, strides: Any,
    padding: Any,
) -> Tensor:  # fmt: skip
    op = f"window_scatter_{kind}"
    given = (x, source, init_value) if isinstance(init_value, Tensor) else (x, source)
    ts = unify(op, *given)[1]
    t, src = ts[0], ts[1]
    if t.dtype.kind == "c":
        raise DTypeError(f"{op}: complex numbers have no order; got x {t.describe()}")
    if isinstance(init_value, Tensor):
        if init_value.ndim != 0:
            raise ShapeError(
                f"{op}: init_value must be a scalar or a 0-d tensor, got {init_value.describe()}"
            )
        odt = result_dtype(op, src, init_value)
    elif type(init_value) in (bool, int, float, complex):
        odt = result_dtype(op, src, init_value)
        check_scalar_fits(op, init_value, odt)
    else:
        raise DTypeError(
            f"{op}: init_value must be a Python scalar or a 0-d tensor, got "
            f"{type(init_value).__name__}"
        )
    if odt.kind == "b":
        raise DTypeError(
            f"{op}: source {src.describe()} and init_value {init_value!r} give bool, which has "
            f"no sum; cast source with astype first"
        )
    params = _params(op, t, window_shape, strides, padding, None)
    del params["window_dilations"]
    want = window.window_reduce_shape_rule(t.shape, window_dilations=(1,) * t.ndim, **params)
    if src.shape != want:
        raise ShapeError(
            f"{op}: source {src.describe()} must have the shape of the windows of x "
            f"{t.describe()}, {want}"
        )
    if len(ts) == 3:
        init = cast(ts[2], odt)
    else:
        init = scalar(init_value, odt, t.backend)
    return window.window_scatter.bind(t, cast(src, odt), init, kind=kind, **params)


def window_scatter_max(
    x: Any, source: Any, init_value: Any, window_shape: Sequence[int], *,
    strides: int | Sequence[int] | None = None, padding: Padding = "valid",
) -> Tensor:  # fmt: skip
    """Scatter ``source`` to the position of each window's maximum in ``x`` (Nx
    ``window_scatter_max``; XLA SelectAndScatter; the gradient of max pooling).

    The result has ``x``'s shape; every position starts at ``init_value`` and each
    window adds its ``source`` value at the position of the window's first maximum
    (NaN counts as the maximum, as :func:`numerix.argmax`). Padded positions are never
    chosen. Its dtype is ``source``'s promoted with ``init_value`` (a Python scalar is
    weak); ``x`` must not be complex and the result not bool.

    :param x: the tensor the windows slide over.
    :param source: one value per window: the shape of
        ``window_max(x, window_shape, strides=..., padding=...)``.
    :param init_value: a Python scalar or a 0-d tensor.
    :param window_shape, strides, padding: as :func:`window_sum`.

    >>> import numerix as nx
    >>> x = nx.tensor([[1, 5, 2, 0], [3, 4, 8, 6]])
    >>> nx.window_scatter_max(x, nx.tensor([[10, 20]]), 0, (2, 2), strides=2).tolist()
    [[0, 10, 0, 0], [0, 0, 20, 0]]
    >>> nx.window_scatter_max(x, nx.tensor([10, 20]), 0, (2, 2), strides=2)
    Traceback (most recent call last):
    numerix.errors.ShapeError: window_scatter_max: source s64[2] binary(cpu) must have the shape of the windows of x s64[2][4] binary(cpu), (1, 2)
    """
    return _scatter("max", x, source, init_value, window_shape, strides, padding)


def window_scatter_min(
    x: Any, source: Any, init_value: Any, window_shape: Sequence[int], *,
    strides: int | Sequence[int] | None = None, padding: Padding = "valid",
) -> Tensor:  # fmt: skip
    """Scatter ``source`` to the position of each window's minimum in ``x`` (Nx
    ``window_scatter_min``); as :func:`window_scatter_max` with the first minimum (NaN
    counts as the minimum).

    >>> import numerix as nx
    >>> x = nx.tensor([3.0, 1.0, 2.0, 1.0])
    >>> nx.window_scatter_min(x, nx.tensor([1.0, 1.0, 1.0]), 0.5, (2,)).tolist()
    [0.5, 2.5, 0.5, 1.5]
    >>> nx.window_scatter_min(x, nx.tensor([1.0]), nx.tensor([0.0]), (4,))
    Traceback (most recent call last):
    numerix.errors.ShapeError: window_scatter_min: init_value must be a scalar or a 0-d tensor, got f32[1] binary(cpu)
    """
    return _scatter("min", x, source, init_value, window_shape, strides, padding)
