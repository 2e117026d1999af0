"""Binary kernels of the bit-level element-wise primitives (mixed into BinaryBackend)."""

from __future__ import annotations

import numpy as np

from numerix._tensor import Tensor


def _unsigned(a: np.ndarray) -> np.ndarray:
    # the bit pattern: signed integers as the unsigned integer of their width
    return a.view(f"u{a.dtype.itemsize}") if a.dtype.kind == "i" else a


class BitsKernels:
    """numpy kernels of population_count, count_leading_zeros and bitcast."""

    __slots__ = ()

    def population_count(self, out: Tensor, x: Tensor) -> Tensor:
        # numpy's bitwise_count counts |x| for signed integers: count the pattern instead
        r = np.bitwise_count(_unsigned(np.asarray(x.data)))
        out.data = np.asarray(r).astype(out.dtype.numpy_dtype)
        return out

    def count_leading_zeros(self, out: Tensor, x: Tensor) -> Tensor:
        u = _unsigned(np.asarray(x.data))
        bits = u.dtype.itemsize * 8
        n = np.zeros(u.shape, np.int64)
        s = bits // 2
        while s:  # binary search for the highest set bit, shifting it to the top
            top_zero = (u >> u.dtype.type(bits - s)) == 0
            n += np.where(top_zero, s, 0)
            u = np.where(top_zero, u << u.dtype.type(s), u)
            s //= 2
        n += (u >> u.dtype.type(bits - 1)) == 0  # only 0 leaves the top bit clear
        out.data = n.astype(out.dtype.numpy_dtype)
        return out

    def bitcast(self, out: Tensor, x: Tensor) -> Tensor:
        out.data = np.asarray(x.data).view(out.dtype.numpy_dtype)
        return out
