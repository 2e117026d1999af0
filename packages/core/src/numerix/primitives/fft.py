"""Fourier transform primitives (``Nx.Backend.fft/3`` and ``ifft/3``).

Both transform the *last* axis; the public ops move any other axis there first and
apply the ``norm`` scaling as a composite. ``length`` (>= 1) is the transform
length: the last axis is zero-padded or truncated to it before transforming, as
``numpy.fft.fft(x, n=length, axis=-1)``. ``x`` arrives already in ``out.dtype``
(complex64 or complex128: the core casts it first), so a kernel never promotes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from numerix import dtypes
from numerix.dtypes import DType
from numerix.primitives import _batch
from numerix.primitives._registry import REGISTRY, batch_rule, vjp_rule

if TYPE_CHECKING:
    from numerix._tensor import Tensor

#: What a derivative rule returns: one cotangent (or None) per input.
Cotangents = tuple["Tensor | None", ...]


def fft_complex_dtype(x: DType) -> DType:
    """The complex dtype a transform of ``x`` returns: complex stays, float64 gives
    complex128, every other dtype (bool, integers, float16, bfloat16, float32)
    complex64."""
    if x.kind == "c":
        return x
    return dtypes.complex128 if x is dtypes.float64 else dtypes.complex64


def fft_shape_rule(x: tuple[int, ...], *, length: int) -> tuple[int, ...]:
    return x[:-1] + (length,)


def fft_dtype_rule(x: DType, *, length: int) -> DType:
    return fft_complex_dtype(x)


def ifft_shape_rule(x: tuple[int, ...], *, length: int) -> tuple[int, ...]:
    return x[:-1] + (length,)


def ifft_dtype_rule(x: DType, *, length: int) -> DType:
    return fft_complex_dtype(x)


fft = REGISTRY.declare(
    "fft", "fft", inputs=("x",), params=("length",),
    shape_rule=fft_shape_rule, dtype_rule=fft_dtype_rule,
    doc="discrete Fourier transform of the last axis, zero-padded or truncated to length; "
        "unnormalised (numpy norm='backward'); x arrives in the complex out.dtype",
)  # fmt: skip
ifft = REGISTRY.declare(
    "ifft", "fft", inputs=("x",), params=("length",),
    shape_rule=ifft_shape_rule, dtype_rule=ifft_dtype_rule,
    doc="inverse discrete Fourier transform of the last axis, zero-padded or truncated to "
        "length, scaled by 1/length (numpy norm='backward'); x arrives in the complex out.dtype",
)  # fmt: skip


# ---------------------------------------------------------------- derivative rules


def _to_length(ops: Any, t: Tensor, n: int) -> Tensor:
    # the transpose of padding or truncating the last axis to t's length: the other way
    m = t.shape[-1]
    if m == n:
        return t
    config = [(0, 0, 0)] * (t.ndim - 1) + [(0, n - m, 0)]
    return ops.pad_general(t, config)


@vjp_rule("fft")
def fft_vjp(ops: Any, cotangent: Tensor, out: Tensor, x: Tensor, *, length: int) -> Cotangents:
    # the DFT matrix is symmetric: its transpose is itself (no conjugation, as jax.vjp)
    return (_to_length(ops, ops.fft(cotangent), x.shape[-1]),)


@vjp_rule("ifft")
def ifft_vjp(ops: Any, cotangent: Tensor, out: Tensor, x: Tensor, *, length: int) -> Cotangents:
    return (_to_length(ops, ops.ifft(cotangent), x.shape[-1]),)


# the transforms act on the last axis and take the leading ones as a stack
batch_rule("fft", "ifft")(_batch.leading)
