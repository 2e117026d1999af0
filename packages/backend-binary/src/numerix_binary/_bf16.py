"""bfloat16 on the host, without importing ml_dtypes before a bfloat16 array exists.

numpy knows bfloat16 only once ml_dtypes registers it, which costs about 3 ms of a
process's first op. Of the dtypes a binary tensor may hold (numerix's), bfloat16 alone
has numpy kind ``"V"`` (ml_dtypes' types are numpy user dtypes; numpy's own are
``b``, ``i``, ``u``, ``f``, ``c``). So ``a.dtype.kind == BF16_KIND`` tells a bfloat16 array
with no import, as fast as comparing with the dtype; the dtype itself (to cast a result
back to) is asked for only when a bfloat16 array is at hand, by which time ml_dtypes is
loaded.
"""

from __future__ import annotations

import numpy as np

from numerix import dtypes

__all__ = ["BF16_KIND", "numpy_bfloat16", "is_half"]

#: numpy's kind of ml_dtypes' bfloat16 (a test checks it, and that no other dtype of
#: numerix has it)
BF16_KIND = "V"


def numpy_bfloat16() -> np.dtype:
    """numpy's bfloat16 dtype (ml_dtypes is imported on the first call)."""
    return dtypes.bfloat16.numpy_dtype


_F16 = np.dtype(np.float16)


def is_half(dt: np.dtype) -> bool:
    """float16 or bfloat16: the dtypes several kernels compute in float32."""
    return dt.kind == BF16_KIND or dt == _F16
