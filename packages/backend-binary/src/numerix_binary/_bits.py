"""Binary kernels of the bit-level primitives (mixed into BinaryBackend)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from numerix._tensor import Tensor
from numerix.backend import elementwise
from numerix.dtypes import DType


def _pattern(d: DType) -> np.dtype:
    # the bit pattern: signed integers as the unsigned integer of their width
    dt = d.numpy_dtype
    return np.dtype(f"u{dt.itemsize}") if dt.kind == "i" else dt


def _population_count(d: DType) -> Callable[..., Any]:
    # numpy's bitwise_count counts |x| for signed integers: count the pattern instead
    u, dt = _pattern(d), d.numpy_dtype
    return lambda a: np.bitwise_count(a.view(u)).astype(dt)


def _count_leading_zeros(d: DType) -> Callable[..., Any]:
    u, dt = _pattern(d), d.numpy_dtype
    bits = u.itemsize * 8

    def clz(a: np.ndarray) -> np.ndarray:
        a = a.view(u)
        n = np.zeros(a.shape, np.int64)
        s = bits // 2
        while s:  # binary search for the highest set bit, shifting it to the top
            top_zero = (a >> u.type(bits - s)) == 0
            n += np.where(top_zero, s, 0)
            a = np.where(top_zero, a << u.type(s), a)
            s //= 2
        n += (a >> u.type(bits - 1)) == 0  # only 0 leaves the top bit clear
        return n.astype(dt)

    return clz


class BitsKernels:
    """numpy kernels of population_count, count_leading_zeros and bitcast."""

    __slots__ = ()

    population_count = elementwise.per_dtype(_population_count)
    count_leading_zeros = elementwise.per_dtype(_count_leading_zeros)

    def bitcast(self, out: Tensor, x: Tensor) -> Tensor:
        out.data = np.asarray(x.data).view(out.dtype.numpy_dtype)
        return out
