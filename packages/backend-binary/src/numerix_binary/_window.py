"""Binary kernels of the window family (mixed into BinaryBackend)."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from numerix._tensor import Tensor
from numerix.dtypes import reduction_identity
from numerix_binary._bf16 import is_half

_Pairs = tuple[tuple[int, int], ...]


def _compute(a: np.ndarray) -> np.ndarray:
    # float16 and bfloat16 accumulate in float32 and round once, as XLA does on CPU
    return a.astype(np.float32) if is_half(a.dtype) else a


def windows(
    a: np.ndarray, dims: tuple[int, ...], strides: tuple[int, ...], padding: _Pairs,
    dilations: tuple[int, ...], fill: Any,
) -> np.ndarray:  # fmt: skip
    """A view ``[*out, *dims]`` of every window of ``a`` padded with ``fill``. Every axis
    must have at least one window."""
    if any(p != (0, 0) for p in padding):
        a = np.pad(a, padding, constant_values=fill)
    spans = tuple((w - 1) * d + 1 for w, d in zip(dims, dilations))
    v = sliding_window_view(a, spans) if a.ndim else a
    return v[tuple(slice(None, None, s) for s in strides)
             + tuple(slice(None, None, d) for d in dilations)]  # fmt: skip


class WindowKernels:
    """numpy kernels of the window primitives."""

    __slots__ = ()

    def window_reduce(self, out: Tensor, x: Tensor, *, kind: str, **params: Any) -> Tensor:
        odt = out.dtype.numpy_dtype
        if 0 in out.shape:
            out.data = np.zeros(out.shape, odt)
            return out
        a = _compute(x.data)
        fill = reduction_identity(kind, a.dtype)
        v = windows(a, params["window_dimensions"], params["strides"], params["padding"],
                    params["window_dilations"], fill)  # fmt: skip
        axes = tuple(range(x.ndim, 2 * x.ndim))
        with np.errstate(over="ignore", invalid="ignore"):
            if kind == "sum":
                r = np.sum(v, axis=axes, dtype=a.dtype)
            elif kind == "prod":
                r = np.prod(v, axis=axes, dtype=a.dtype)
            elif kind == "max":
                r = np.max(v, axis=axes)
            else:
                r = np.min(v, axis=axes)
        out.data = np.asarray(r).astype(odt, copy=False)
        return out

    def window_scatter(
        self, out: Tensor, x: Tensor, source: Tensor, init_value: Tensor, *, kind: str,
        window_dimensions: tuple[int, ...], strides: tuple[int, ...], padding: _Pairs,
    ) -> Tensor:  # fmt: skip
        highest = kind == "min"  # the first min is chosen by the highest fill
        src = _compute(source.data)
        res = np.full(out.shape, _compute(np.asarray(init_value.data)), dtype=src.dtype)
        if src.size and x.ndim:
            a = _compute(x.data)
            ones = (1,) * x.ndim
            # the first max (min) among a window's in-bounds positions; padding never wins
            fill = reduction_identity("min" if highest else "max", a.dtype)
            v = windows(a, window_dimensions, strides, padding, ones, fill)
            valid = windows(np.ones(a.shape, bool), window_dimensions, strides, padding, ones,
                            False)  # fmt: skip
            grid = src.shape
            v = v.reshape(*grid, -1)
            valid = valid.reshape(*grid, -1)
            key = np.where(valid, v, fill)
            best = (np.argmin if highest else np.argmax)(key, axis=-1)
            sel = np.take_along_axis(key, best[..., None], -1)
            same = key == sel
            if a.dtype.kind in "fc":
                same |= np.isnan(key) & np.isnan(sel)
            cand = valid & same
            pick = np.argmax(cand, axis=-1)
            has = cand.any(axis=-1)
            local = np.unravel_index(pick, window_dimensions)
            index = np.indices(grid, sparse=False)
            pos = tuple(
                (index[d] * strides[d] + local[d] - padding[d][0])[has] for d in range(x.ndim)
            )
            with np.errstate(over="ignore"):
                np.add.at(res, pos, src[has])
        elif src.size:  # 0-d x: its one window is x itself
            with np.errstate(over="ignore"):
                res = res + src
        out.data = np.asarray(res).astype(out.dtype.numpy_dtype, copy=False)
        return out
