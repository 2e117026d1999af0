"""Binary kernels of the fft family (mixed into BinaryBackend)."""

from __future__ import annotations

import numpy as np

from numerix._tensor import Tensor


class FftKernels:
    """numpy.fft kernels of the fft primitives."""

    __slots__ = ()

    def fft(self, out: Tensor, x: Tensor, *, length: int) -> Tensor:
        r = np.fft.fft(x.data, n=length, axis=-1)
        # numpy may compute in complex128: hand back exactly out.dtype
        out.data = np.ascontiguousarray(r, dtype=out.dtype.numpy_dtype)
        return out

    def ifft(self, out: Tensor, x: Tensor, *, length: int) -> Tensor:
        r = np.fft.ifft(x.data, n=length, axis=-1)
        out.data = np.ascontiguousarray(r, dtype=out.dtype.numpy_dtype)
        return out
