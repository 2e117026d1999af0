"""Convolution, on the conv primitive."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from numerix import dtypes
from numerix._tensor import Tensor
from numerix.errors import DTypeError, ShapeError
from numerix.ops._core import cast, unify
from numerix.ops.window import resolve_padding, static_ints
from numerix.primitives import conv as conv_primitives

__all__ = ["conv"]


def _group_count(name: str, value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ShapeError(f"conv: {name} must be a positive int, got {value!r}")
    return value


def conv(
    x: Any, kernel: Any, *, strides: int | Sequence[int] = 1,
    padding: str | Sequence[tuple[int, int]] = "valid", input_dilation: int | Sequence[int] = 1,
    kernel_dilation: int | Sequence[int] = 1, feature_group_count: int = 1,
    batch_group_count: int = 1,
) -> Tensor:  # fmt: skip
    """N-d convolution of ``x`` with ``kernel`` (Nx ``conv``; XLA ConvGeneralDilated).

    Like Nx and XLA this is a cross-correlation: the kernel is not flipped.
    ``x`` is ``[batch, in_features, *spatial]`` (at least one spatial axis), ``kernel``
    ``[out_features, in_features // feature_group_count, *kernel_spatial]``; the result
    is ``[batch // batch_group_count, out_features, *out_spatial]``.

    Note: as Nx, the result is floating: ``x`` and ``kernel`` promote together, then
    bool and integers compute in float32 (Nx's ``to_floating``). Complex is taken.

    :param strides: the step between windows, an int or one per spatial axis.
    :param padding: ``"valid"``, ``"same"`` (``ceil(n / stride)`` outputs per axis, ``n``
        the dilated input size; low = total // 2) or ``(low, high)`` pairs, one per
        spatial axis, of zeros added around the (dilated) input.
    :param input_dilation: ``d`` puts ``d - 1`` zeros between the input's elements
        (a transposed convolution), an int or one per spatial axis.
    :param kernel_dilation: ``d`` spaces the kernel's elements ``d`` apart (atrous).
    :param feature_group_count: splits the input features and the output features into
        this many groups, convolved separately (grouped / depthwise convolution).
    :param batch_group_count: splits the batch into this many groups (contiguous, the
        first ``batch // batch_group_count`` in group 0), each convolved with its own
        group of output features (used for the gradient of a grouped convolution).

    >>> import numerix as nx
    >>> x = nx.reshape(nx.arange(5.0), (1, 1, 5))
    >>> nx.conv(x, nx.tensor([[[1.0, 0.0, -1.0]]])).tolist()
    [[[-2.0, -2.0, -2.0]]]
    >>> nx.conv(x, nx.tensor([[[1, 1]]]), strides=2, padding="same").tolist()
    [[[1.0, 5.0, 4.0]]]

    The kernel's input features must match:

    >>> nx.conv(nx.zeros((1, 2, 5)), nx.zeros((1, 3, 2)))
    Traceback (most recent call last):
    numerix.errors.ShapeError: conv: kernel f32[1][3][2] binary(cpu) must have in_features / feature_group_count = 2 input features (axis 1) for x f32[1][2][5] binary(cpu), got 3
    """
    op = "conv"
    _, (t, k) = unify(op, x, kernel)
    if t.ndim < 3:
        raise ShapeError(
            f"conv: x must be [batch, in_features, *spatial] with at least one spatial axis, got "
            f"{t.describe()}"
        )
    if k.ndim != t.ndim:
        raise ShapeError(
            f"conv: kernel {k.describe()} must have the rank of x {t.describe()}: "
            f"[out_features, in_features / feature_group_count, *kernel_spatial]"
        )
    fg = _group_count("feature_group_count", feature_group_count)
    bg = _group_count("batch_group_count", batch_group_count)
    if fg > 1 and bg > 1:
        raise ShapeError(
            f"conv: feature_group_count ({fg}) and batch_group_count ({bg}) cannot both be above 1"
        )
    n, c = t.shape[:2]
    o, i = k.shape[:2]
    if c % fg:
        raise ShapeError(
            f"conv: the in_features of x {t.describe()} ({c}) must be divisible by "
            f"feature_group_count ({fg})"
        )
    if i * fg != c:
        raise ShapeError(
            f"conv: kernel {k.describe()} must have in_features / feature_group_count = "
            f"{c // fg} input features (axis 1) for x {t.describe()}, got {i}"
        )
    for name, g in (("feature_group_count", fg), ("batch_group_count", bg)):
        if o % g:
            raise ShapeError(
                f"conv: the out_features of kernel {k.describe()} ({o}) must be divisible by "
                f"{name} ({g})"
            )
    if n % bg:
        raise ShapeError(
            f"conv: the batch of x {t.describe()} ({n}) must be divisible by batch_group_count "
            f"({bg})"
        )
    if 0 in k.shape[2:]:
        raise ShapeError(f"conv: the kernel's spatial sizes must be positive, got {k.describe()}")
    ns = t.ndim - 2
    what = "spatial axis"
    st = static_ints(op, "strides", strides, ns, what, scalar_ok=True)
    di = static_ints(op, "input_dilation", input_dilation, ns, what, scalar_ok=True)
    dk = static_ints(op, "kernel_dilation", kernel_dilation, ns, what, scalar_ok=True)
    sizes = [(m - 1) * d + 1 if m else 0 for m, d in zip(t.shape[2:], di)]
    spans = [(m - 1) * d + 1 for m, d in zip(k.shape[2:], dk)]
    pad = resolve_padding(op, padding, sizes, spans, st, what)
    try:
        d = dtypes.promote_types(t.dtype, k.dtype, op)
    except DTypeError as e:
        raise DTypeError(f"{e} (x {t.describe()}, kernel {k.describe()})") from None
    odt = dtypes.default_float() if d.kind in "biu" else d
    params: dict[str, Any] = {
        "strides": st, "padding": pad, "input_dilation": di, "kernel_dilation": dk,
        "feature_group_count": fg, "batch_group_count": bg,
    }  # fmt: skip
    return conv_primitives.conv.bind(cast(t, odt), cast(k, odt), **params)
