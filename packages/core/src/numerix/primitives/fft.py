"""Fourier transform primitives (``Nx.Backend.fft/3`` and ``ifft/3``).

Both transform the *last* axis; the public ops move any other axis there first and
apply the ``norm`` scaling as a composite. ``length`` (>= 1) is the transform
length: the last axis is zero-padded or truncated to it before transforming, as
``numpy.fft.fft(x, n=length, axis=-1)``. ``x`` arrives already in ``out.dtype``
(complex64 or complex128: the core casts it first), so a kernel never promotes.
"""

from __future__ import annotations

from numerix import dtypes as D
from numerix.dtypes import DType
from numerix.primitives._registry import REGISTRY


def fft_complex_dtype(x: DType) -> DType:
    """The complex dtype a transform of ``x`` returns: complex stays, float64 gives
    complex128, every other dtype (bool, integers, float16, bfloat16, float32)
    complex64."""
    if x.kind == "c":
        return x
    return D.complex128 if x is D.float64 else D.complex64


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
