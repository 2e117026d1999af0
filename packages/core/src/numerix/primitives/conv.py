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

from numerix.dtypes import DType
from numerix.errors import DTypeError
from numerix.primitives._registry import REGISTRY
from numerix.primitives.window import window_out_size


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


def conv_dtype_rule(x: DType, kernel: DType) -> DType:
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
