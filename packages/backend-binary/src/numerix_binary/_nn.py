"""Binary kernels of the softmax blocks (mixed into BinaryBackend): numpy's four ops in one
kernel, with no numerix dispatch between them.

The core hands a float tensor and its sorted axes; the result is the core's composite:
the maximum of each slice subtracted first (a slice of only ``-inf`` gives NaN, as
``-inf - -inf``), float16 and bfloat16 computed in float32 and rounded once, no axes
meaning each element its own slice. Floating-point warnings are off (the kernel context).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from numerix._tensor import Tensor
from numerix.backend import lowers

_F32 = np.dtype(np.float32)
# the ufuncs' own reductions: np.max and np.sum add a Python wrapper per call
_max = np.maximum.reduce
_sum = np.add.reduce


def _softmax(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    if x.size == 0:
        return x
    e = _shifted(_wide(x), axes)
    np.exp(e, out=e)
    e /= _sum(e, axis=axes, keepdims=True)
    return e.astype(x.dtype, copy=False)


def _log_softmax(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    if x.size == 0:
        return x
    s = _shifted(_wide(x), axes)
    s -= np.log(_sum(np.exp(s), axis=axes, keepdims=True))
    return s.astype(x.dtype, copy=False)


def _wide(a: np.ndarray) -> np.ndarray:
    # float16 and bfloat16 in float32 (ml_dtypes' bfloat16 lacks some ufunc loops)
    return a if a.dtype.itemsize >= 4 else a.astype(_F32)


def _shifted(a: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """``a`` minus the maximum of each slice (a fresh array; no axes: ``a - a``)."""
    s = a - _max(a, axis=axes, keepdims=True)
    return s if type(s) is np.ndarray else np.asarray(s)  # 0-d: numpy gives a scalar


def _lowering(fn: Callable[[np.ndarray, tuple[int, ...]], np.ndarray]) -> Any:
    """The replay's function of payloads: the kernel's own function, axes bound."""

    def build(params: Mapping[str, Any], ins: Any, out: Any) -> Any:
        axes = params["axes"]
        return lambda a: fn(a, axes)

    return build


class NnKernels:
    """numpy kernels of the softmax and log_softmax blocks."""

    __slots__ = ()

    @lowers(_lowering(_softmax))
    def block_softmax(self, out: Tensor, x: Tensor, *, axes: tuple[int, ...]) -> Tensor:
        out.data = _softmax(x.data, axes)
        return out

    @lowers(_lowering(_log_softmax))
    def block_log_softmax(self, out: Tensor, x: Tensor, *, axes: tuple[int, ...]) -> Tensor:
        out.data = _log_softmax(x.data, axes)
        return out
