"""Convolution, N-d, as XLA's ConvGeneralDilated.

Layouts are fixed: ``x`` is ``[batch, in_features, *spatial]``, ``kernel`` is
``[out_features, in_features // feature_group_count, *kernel_spatial]`` and the
result is ``[batch // batch_group_count, out_features, *out_spatial]``. The core
resolves every parameter first: ``strides``, ``input_dilation`` and
``kernel_dilation`` are tuples of positive ints (one per spatial axis), ``padding``
a tuple of non-negative ``(low, high)`` pairs applied to the dilated input, and the
group counts are checked against the shapes. ``x`` and ``kernel`` arrive in
``out.dtype`` (floating or complex). Like XLA, the kernel is not flipped
(cross-correlation).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from numerix.dtypes import DType
from numerix.errors import DTypeError
from numerix.primitives import _batch
from numerix.primitives._registry import REGISTRY, batch_rule, vjp_rule
from numerix.primitives.window import window_out_size

if TYPE_CHECKING:
    from numerix._tensor import Tensor

#: What a derivative rule returns: one cotangent (or None) per input.
Cotangents = tuple["Tensor | None", ...]


def conv_shape_rule(
    x: tuple[int, ...], kernel: tuple[int, ...], *, strides: tuple[int, ...],
    padding: tuple[tuple[int, int], ...], input_dilation: tuple[int, ...],
    kernel_dilation: tuple[int, ...], feature_group_count: int, batch_group_count: int,
) -> tuple[int, ...]:  # fmt: skip
    spatial = tuple(
        window_out_size((n - 1) * di + 1 if n else 0, k, s, lo, hi, dk)
        for n, k, s, (lo, hi), di, dk in zip(
            x[2:], kernel[2:], strides, padding, input_dilation, kernel_dilation
        )
    )
    return (x[0] // batch_group_count, kernel[0], *spatial)


def conv_dtype_rule(x: DType, kernel: DType, **params: object) -> DType:
    if x is not kernel or x.kind not in "fc":  # pragma: no cover - the core casts first
        raise DTypeError(f"conv: inputs must share a floating dtype, got {x} and {kernel}")
    return x


conv = REGISTRY.declare(
    "conv", "conv", inputs=("x", "kernel"),
    params=("strides", "padding", "input_dilation", "kernel_dilation",
            "feature_group_count", "batch_group_count"),
    shape_rule=conv_shape_rule, dtype_rule=conv_dtype_rule,
    doc="N-d cross-correlation of x [N, C, *S] with kernel [O, C/feature_groups, *K] -> "
        "[N/batch_groups, O, *S'], with strides, padding, input and kernel dilation and "
        "feature/batch groups (XLA ConvGeneralDilated); inputs share out.dtype",
)  # fmt: skip


# ---------------------------------------------------------------- derivative rule


def _dilated(n: int, d: int) -> int:
    return 0 if n == 0 else (n - 1) * d + 1


def _conv(
    ops: Any, x: Tensor, kernel: Tensor, strides: tuple[int, ...],
    padding: list[tuple[int, int]], input_dilation: tuple[int, ...],
    kernel_dilation: tuple[int, ...], feature_group_count: int = 1, batch_group_count: int = 1,
) -> Tensor:  # fmt: skip
    # conv with padding that may be negative: a negative side crops the dilated input,
    # which pad_general does (dilating it too) before a conv with what is left
    if any(lo < 0 or hi < 0 for lo, hi in padding):
        config = [(0, 0, 0)] * 2 + [
            (min(lo, 0), min(hi, 0), d - 1) for (lo, hi), d in zip(padding, input_dilation)
        ]
        x = ops.pad_general(x, config)
        padding = [(max(lo, 0), max(hi, 0)) for lo, hi in padding]
        input_dilation = (1,) * len(padding)
    return ops.conv(
        x, kernel, strides=strides, padding=padding, input_dilation=input_dilation,
        kernel_dilation=kernel_dilation, feature_group_count=feature_group_count,
        batch_group_count=batch_group_count,
    )  # fmt: skip


def _swap01(ops: Any, t: Tensor) -> Tensor:
    return ops.transpose(t, (1, 0, *range(2, t.ndim)))


@vjp_rule("conv")
def conv_vjp(
    ops: Any, cotangent: Tensor, out: Tensor, x: Tensor, kernel: Tensor, *,
    strides: tuple[int, ...], padding: tuple[tuple[int, int], ...],
    input_dilation: tuple[int, ...], kernel_dilation: tuple[int, ...],
    feature_group_count: int, batch_group_count: int,
) -> Cotangents:  # fmt: skip
    # Both cotangents are convolutions (JAX's _conv_general_dilated_transpose_lhs/_rhs,
    # written for numerix's fixed layouts).
    if cotangent.size == 0 or x.size == 0 or kernel.size == 0:
        return (ops.zeros_like(x), ops.zeros_like(kernel))
    n, c, *xs = x.shape
    o, i, *ks = kernel.shape
    spatial = tuple(range(2, x.ndim))
    xd = [_dilated(m, d) for m, d in zip(xs, input_dilation)]
    kd = [_dilated(m, d) for m, d in zip(ks, kernel_dilation)]
    od = [_dilated(m, s) for m, s in zip(out.shape[2:], strides)]

    # x: the cotangent, spread by the strides, convolved with the flipped kernel whose
    # in and out features swap within each group
    groups = max(feature_group_count, batch_group_count)
    k = ops.reshape(kernel, (groups, o // groups, i, *ks))
    k = ops.reshape(ops.transpose(k, (0, 2, 1, *range(3, k.ndim))), (groups * i, o // groups, *ks))
    k = ops.flip(k, axis=spatial)
    before = [a - lo - 1 for a, (lo, _) in zip(kd, padding)]
    pads = [(b, m + a - 1 - od_ - b) for b, m, a, od_ in zip(before, xd, kd, od)]
    gx = _conv(ops, cotangent, k, input_dilation, pads, strides, kernel_dilation, groups)
    if batch_group_count > 1:
        # [n / groups, groups * c, *xs] -> [n, c, *xs], the groups of the batch contiguous
        gx = ops.reshape(gx, (n // groups, groups, c, *xs))
        gx = ops.reshape(_swap01(ops, gx), (n, c, *xs))

    # kernel: x and the cotangent with batch and features swapped, convolved (the
    # cotangent as the kernel, dilated by the strides), feature and batch groups swapped
    pads = [(lo, od_ - m + a - lo - 1) for (lo, _), od_, m, a in zip(padding, od, xd, kd)]
    fg, bg = (batch_group_count, 1) if batch_group_count > 1 else (1, feature_group_count)
    gk = _conv(
        ops, _swap01(ops, x), _swap01(ops, cotangent), kernel_dilation, pads, input_dilation,
        strides, fg, bg,
    )  # fmt: skip
    return (gx, _swap01(ops, gk))


# ---------------------------------------------------------------- batching rule


@batch_rule("conv")
def conv_batch(
    ops: Any, call: Any, args: list[Tensor], batched: list[bool], **params: Any
) -> Tensor:
    x, kernel = args
    if batched[1] or params["batch_group_count"] != 1:
        # a kernel per example, or batch groups (which split conv's own batch axis in
        # order): the cases with no batched form, run once per example
        return _batch.loop(ops, call, args, batched, **params)
    # the examples' batches are one batch of conv's: its axis 0 is (example, row)
    n, rows = x.shape[0], x.shape[1]
    out = call(ops.reshape(x, (n * rows, *x.shape[2:])), kernel, **params)
    return ops.reshape(out, (n, rows, *out.shape[1:]))
