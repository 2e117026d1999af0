"""Binary kernels of the sort family (mixed into BinaryBackend)."""

from __future__ import annotations

from typing import Any

import numpy as np

from numerix._tensor import Tensor
from numerix_binary._bf16 import BF16_KIND, is_half


def _keys(a: np.ndarray) -> np.ndarray:
    # bfloat16 -> float32 is exact and has numpy's own sort loops
    return a.astype(np.float32) if a.dtype.kind == BF16_KIND else a


def _argsort(a: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    k = _keys(a)
    if not descending:
        return np.argsort(k, axis=axis, kind="stable")
    # the reverse of the stable ascending order, still stable: sort the reversed lane
    # ascending, reverse the result, and map positions back (n - 1 - i). Negating the
    # keys instead would overflow integers and move NaN to the wrong end.
    n = a.shape[axis]
    r = np.argsort(np.flip(k, axis=axis), axis=axis, kind="stable")
    return (n - 1) - np.flip(r, axis=axis)


#: cumulative's ufunc of each kind
_ACCUMULATORS = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}


def _accumulate(ufunc: Any, out: Tensor, x: Tensor, axis: int, reverse: bool) -> np.ndarray:
    a = x.data
    if is_half(a.dtype):
        a = a.astype(np.float32)  # accumulate in float32, round each result once
    if reverse:
        a = np.flip(a, axis=axis)
    with np.errstate(over="ignore", invalid="ignore"):
        r = ufunc.accumulate(a, axis=axis, dtype=a.dtype)
    if reverse:
        r = np.flip(r, axis=axis)
    return np.ascontiguousarray(r, dtype=out.dtype.numpy_dtype)


class SortKernels:
    """numpy kernels of the sort primitives."""

    __slots__ = ()

    def sort(self, out: Tensor, x: Tensor, *, axis: int, descending: bool) -> Tensor:
        a = x.data
        if not descending and a.dtype.kind != BF16_KIND:
            out.data = np.sort(a, axis=axis, kind="stable")
        else:
            out.data = np.take_along_axis(a, _argsort(a, axis, descending), axis=axis)
        return out

    def argsort(self, out: Tensor, x: Tensor, *, axis: int, descending: bool) -> Tensor:
        out.data = np.ascontiguousarray(_argsort(x.data, axis, descending), dtype=np.int64)
        return out

    def cumulative(self, out: Tensor, x: Tensor, *, kind: str, axis: int, reverse: bool) -> Tensor:
        out.data = _accumulate(_ACCUMULATORS[kind], out, x, axis, reverse)
        return out
