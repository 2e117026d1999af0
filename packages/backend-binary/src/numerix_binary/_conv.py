"""Binary kernels of the conv family (mixed into BinaryBackend)."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from numerix._tensor import Tensor
from numerix_binary._bf16 import is_half

# einsum's subscripts (string.ascii_letters, without importing string at the first op)
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


class ConvKernels:
    """numpy kernels of the conv primitives."""

    __slots__ = ()

    def conv(
        self, out: Tensor, x: Tensor, kernel: Tensor, *, strides: tuple[int, ...],
        padding: tuple[tuple[int, int], ...], input_dilation: tuple[int, ...],
        kernel_dilation: tuple[int, ...], feature_group_count: int, batch_group_count: int,
    ) -> Tensor:  # fmt: skip
        odt = out.dtype.numpy_dtype
        if 0 in out.shape:
            out.data = np.zeros(out.shape, odt)
            return out
        a, w = x.data, kernel.data
        if is_half(a.dtype):
            # accumulate in float32, round once
            a, w = a.astype(np.float32), w.astype(np.float32)
        ns = a.ndim - 2
        if any(d > 1 for d in input_dilation):
            grown = [(m - 1) * d + 1 for m, d in zip(a.shape[2:], input_dilation)]
            z = np.zeros((*a.shape[:2], *grown), a.dtype)
            every: tuple[Any, ...] = (Ellipsis,) + tuple(
                slice(None, None, d) for d in input_dilation
            )
            z[every] = a
            a = z
        if any(p != (0, 0) for p in padding):
            a = np.pad(a, ((0, 0), (0, 0), *padding))
        spans = tuple((m - 1) * d + 1 for m, d in zip(w.shape[2:], kernel_dilation))
        v = sliding_window_view(a, spans, axis=tuple(range(2, 2 + ns)))
        take: tuple[slice, ...] = (
            (slice(None), slice(None))
            + tuple(slice(None, None, s) for s in strides)
            + tuple(slice(None, None, d) for d in kernel_dilation)
        )
        v = v[take]  # [N, C, *out, *K]
        n, c = a.shape[:2]
        o = w.shape[0]
        osp = v.shape[2 : 2 + ns]
        letters = _LETTERS
        sp, kk = letters[:ns], letters[ns : 2 * ns]
        if batch_group_count > 1:
            g = batch_group_count
            # the batch splits into g contiguous groups; group j meets output features
            # j*o/g .. (j+1)*o/g - 1
            vg = v.reshape(g, n // g, c, *osp, *w.shape[2:])
            wg = w.reshape(g, o // g, c, *w.shape[2:])
            r = np.einsum(f"GNC{sp}{kk},GOC{kk}->NGO{sp}", vg, wg, optimize=True)
            r = r.reshape(n // g, o, *osp)
        else:
            g = feature_group_count
            vg = v.reshape(n, g, c // g, *osp, *w.shape[2:])
            wg = w.reshape(g, o // g, c // g, *w.shape[2:])
            r = np.einsum(f"NGC{sp}{kk},GOC{kk}->NGO{sp}", vg, wg, optimize=True)
            r = r.reshape(n, o, *osp)
        out.data = np.ascontiguousarray(r).astype(odt, copy=False)
        return out
