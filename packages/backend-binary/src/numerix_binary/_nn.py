"""Binary kernels of the softmax blocks (mixed into BinaryBackend): numpy's four ops in one
kernel, with no numerix dispatch between them.

The core hands a float tensor and its sorted axes; the result is the core's composite:
the maximum of each slice subtracted first (a slice of only ``-inf`` gives NaN, as
``-inf - -inf``), float16 and bfloat16 computed in float32 and rounded once, no axes
meaning each element its own slice. Floating-point warnings are off (the kernel context).
"""

from __future__ import annotations

import numpy as np

from numerix._tensor import Tensor

_F32 = np.dtype(np.float32)
# the ufuncs' own reductions: np.max and np.sum add a Python wrapper per call
_max = np.maximum.reduce
_sum = np.add.reduce


def _wide(x: Tensor) -> np.ndarray:
    # float16 and bfloat16 in float32 (ml_dtypes' bfloat16 lacks some ufunc loops)
    a: np.ndarray = x.data
    return a if a.dtype.itemsize >= 4 else a.astype(_F32)


def _shifted(a: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """``a`` minus the maximum of each slice (a fresh array; no axes: ``a - a``)."""
    s = a - _max(a, axis=axes, keepdims=True)
    return s if type(s) is np.ndarray else np.asarray(s)  # 0-d: numpy gives a scalar


class NnKernels:
    """numpy kernels of the softmax and log_softmax blocks."""

    __slots__ = ()

    def block_softmax(self, out: Tensor, x: Tensor, *, axes: tuple[int, ...]) -> Tensor:
        a = _wide(x)
        if a.size == 0:
            out.data = x.data
            return out
        e = _shifted(a, axes)
        np.exp(e, out=e)
        e /= _sum(e, axis=axes, keepdims=True)
        out.data = e.astype(out.dtype.numpy_dtype, copy=False)
        return out

    def block_log_softmax(self, out: Tensor, x: Tensor, *, axes: tuple[int, ...]) -> Tensor:
        a = _wide(x)
        if a.size == 0:
            out.data = x.data
            return out
        s = _shifted(a, axes)
        s -= np.log(_sum(np.exp(s), axis=axes, keepdims=True))
        out.data = s.astype(out.dtype.numpy_dtype, copy=False)
        return out
