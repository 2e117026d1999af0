"""numerix dtypes on PyTorch, without silent change.

Every numerix dtype is held in the torch dtype of the same name. PyTorch stores
uint16, uint32 and uint64 and moves them (copy, reshape, cat, index, DLPack) but has
few arithmetic kernels for them; kernels that need arithmetic call :func:`compute`
to get a tensor torch can compute with and :func:`restore` to bring the result back,
exactly:

- uint16 and uint32 compute in int32 / int64, which hold every value; results are
  masked back to 16 / 32 bits, so arithmetic wraps around as numpy's does;
- uint64 computes in int64 *bit patterns*: add, subtract, multiply, bitwise ops and
  shifts are exact in two's complement; ordering uses :func:`order_key` (flip the sign
  bit); ops with no exact emulation raise UnsupportedDTypeError.
"""

from __future__ import annotations

from typing import Any

import torch

from numerix import dtypes
from numerix.dtypes import DType
from numerix.errors import UnsupportedDTypeError

__all__ = [
    "TORCH",
    "NUMERIX",
    "EMULATED",
    "SIGNED_VIEW",
    "compute",
    "restore",
    "order_key",
    "from_key",
    "bits",
    "unbits",
    "unsupported",
]

TORCH: dict[DType, torch.dtype] = {
    dtypes.bool_: torch.bool,
    dtypes.int8: torch.int8,
    dtypes.int16: torch.int16,
    dtypes.int32: torch.int32,
    dtypes.int64: torch.int64,
    dtypes.uint8: torch.uint8,
    dtypes.uint16: torch.uint16,
    dtypes.uint32: torch.uint32,
    dtypes.uint64: torch.uint64,
    dtypes.float16: torch.float16,
    dtypes.bfloat16: torch.bfloat16,
    dtypes.float32: torch.float32,
    dtypes.float64: torch.float64,
    dtypes.complex64: torch.complex64,
    dtypes.complex128: torch.complex128,
}
NUMERIX: dict[torch.dtype, DType] = {v: k for k, v in TORCH.items()}

#: unsigned dtypes torch stores but cannot compute with: dtype -> compute dtype
EMULATED: dict[DType, torch.dtype] = {
    dtypes.uint16: torch.int32,
    dtypes.uint32: torch.int64,
    dtypes.uint64: torch.int64,
}
_MASK = {dtypes.uint16: 0xFFFF, dtypes.uint32: 0xFFFFFFFF}

#: emulated dtype -> the signed dtype of its width: copies, shape moves, comparisons for
#: equality, bitwise ops and wrapping add / subtract / multiply are exact on the bits
SIGNED_VIEW: dict[DType, torch.dtype] = {
    dtypes.uint16: torch.int16,
    dtypes.uint32: torch.int32,
    dtypes.uint64: torch.int64,
}


def compute(t: torch.Tensor, dtype: DType) -> torch.Tensor:
    """``t`` (holding ``dtype``) in a dtype torch has kernels for (itself if it has)."""
    if dtype not in EMULATED:
        return t
    if dtype is dtypes.uint64:
        return t.view(torch.int64)
    return t.to(EMULATED[dtype])


def restore(r: torch.Tensor, dtype: DType) -> torch.Tensor:
    """A computed result ``r`` back in ``dtype`` (wrapping around as numpy does)."""
    if dtype not in EMULATED:
        return r if r.dtype == TORCH[dtype] else r.to(TORCH[dtype])
    if dtype is dtypes.uint64:
        return r.to(torch.int64).view(torch.uint64)
    return (r.to(torch.int64) & _MASK[dtype]).to(TORCH[dtype])


def order_key(t: torch.Tensor, dtype: DType) -> torch.Tensor:
    """A tensor torch can compare that orders like ``t``'s values (for max, sort, <)."""
    if dtype is dtypes.uint64:
        return t.view(torch.int64) ^ torch.iinfo(torch.int64).min
    return compute(t, dtype)


def from_key(k: torch.Tensor, dtype: DType) -> torch.Tensor:
    """The inverse of :func:`order_key` (e.g. after a max over keys)."""
    if dtype is dtypes.uint64:
        return (k ^ torch.iinfo(torch.int64).min).view(torch.uint64)
    return restore(k, dtype)


def bits(t: torch.Tensor, dtype: DType) -> torch.Tensor:
    """``t``'s bits as the signed dtype of its width when ``dtype`` is emulated (a view)."""
    v = SIGNED_VIEW.get(dtype)
    return t if v is None else t.view(v)


def unbits(r: torch.Tensor, dtype: DType) -> torch.Tensor:
    """The inverse of :func:`bits` (a view)."""
    return r.view(TORCH[dtype]) if dtype in SIGNED_VIEW else r


def unsupported(op: str, dtype: DType, device: Any) -> UnsupportedDTypeError:
    return UnsupportedDTypeError(
        f"{op}: the torch backend has no exact {dtype} kernel on {device}; cast first, e.g. "
        f"x.astype(numerix.int64), or use another backend for this op"
    )
