"""Discrete Fourier transforms: the array API ``fft`` extension's functions.

The primitives (``Nx.fft`` / ``Nx.ifft``) transform the last axis, unnormalised
forward and scaled by ``1/n`` inverse; ``axis`` and ``norm`` are composites here: the
axis is moved last and back around the primitive, and the ``norm`` scaling is one
multiplication. See :mod:`numerix.primitives.fft`. Every other transform is a
composite of those two: the n-dimensional ones transform one axis after another, the
real ones (``rfft``, ``irfft``, ``hfft``, ``ihfft``) keep or rebuild the Hermitian half
of a complex transform. ``numerix.fft`` is the extension module
(:mod:`numerix.fft`) that names them as the array API does.
"""

from __future__ import annotations

import math
import operator
from typing import Any

from numerix import dtypes
from numerix._array_api import placement
from numerix._shapes import normalize_axis
from numerix._tensor import Tensor
from numerix.errors import ArgumentError, DTypeError, ShapeError
from numerix.ops._core import as_tensor, cast, resolve
from numerix.ops.creation import iota, zeros
from numerix.ops.elementwise import conj, real
from numerix.ops.shape import concatenate, flip, moveaxis, roll
from numerix.primitives import fft as fft_primitives
from numerix.primitives._registry import Primitive

__all__ = [
    "fft", "ifft", "fftfreq", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft",
    "rfftfreq", "fftshift", "ifftshift",
]  # fmt: skip

_NORMS = ("backward", "ortho", "forward")


def _transform(prim: Primitive, op: str, x: Any, n: Any, axis: int, norm: str) -> Tensor:
    t = as_tensor(x, op)
    ax = normalize_axis(op, axis, t.ndim, t.shape)
    if norm not in _NORMS:
        raise ArgumentError(
            f"{op}: norm must be one of {', '.join(map(repr, _NORMS))}, got {norm!r}"
        )
    if n is None:
        length = t.shape[ax]
        if length < 1:
            raise ShapeError(
                f"{op}: axis {ax} of {t.describe()} is empty, and a transform needs at least "
                f"one point; give n >= 1 to zero-pad it"
            )
    else:
        try:
            if isinstance(n, bool):
                raise TypeError
            length = operator.index(n)
        except TypeError:
            raise ShapeError(f"{op}: n must be an int or None, got {n!r}") from None
        if length < 1:
            raise ShapeError(
                f"{op}: n={length} is not a valid transform length for {t.describe()}; "
                f"n must be >= 1"
            )
    last = t.ndim - 1
    if ax != last:
        t = moveaxis(t, ax, last)
    # the kernel takes x in its output's dtype: cast to what the dtype rule gives
    t = cast(t, prim.dtype_rule(t.dtype, length=length))
    r = prim.bind(t, length=length)
    # the primitives are norm="backward"; other norms rescale
    inverse = prim is fft_primitives.ifft
    if norm == "ortho":
        r = r * (math.sqrt(length) if inverse else 1.0 / math.sqrt(length))
    elif norm == "forward":
        r = r * (float(length) if inverse else 1.0 / length)
    if ax != last:
        r = moveaxis(r, last, ax)
    return r


def fft(x: Any, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Tensor:
    """The one-dimensional discrete Fourier transform along ``axis`` (array API
    ``fft.fft``, ``numpy.fft.fft``, ``Nx.fft``).

    The result is complex: complex tensors keep their dtype, float64 gives complex128,
    every other dtype (bool, integers, float16, bfloat16, float32) complex64.

    :param x: a tensor of at least one dimension.
    :param n: the transform length; ``axis`` is zero-padded or truncated to it
        (default: its own length). Must be >= 1.
    :param axis: the axis to transform (negative counts from the end).
    :param norm: ``"backward"`` (no scaling), ``"ortho"`` (``1/sqrt(n)``) or
        ``"forward"`` (``1/n``).
    :raises ShapeError: for a 0-d tensor, an axis out of range, ``n < 1``, an empty
        axis without ``n``, or an unknown ``norm``.

    >>> import numerix as nx
    >>> nx.fft.fft(nx.tensor([1.0, 2.0, 3.0, 4.0])).tolist()
    [(10+0j), (-2+2j), (-2+0j), (-2-2j)]
    >>> nx.fft.fft(nx.tensor([1.0, 1.0]), n=4).tolist()
    [(2+0j), (1-1j), 0j, (1+1j)]
    >>> nx.fft.fft(nx.tensor(1.0))
    Traceback (most recent call last):
    ...
    numerix.errors.AxisError: fft: axis -1 is out of range for a 0-d tensor, which has no axes
    """
    return _transform(fft_primitives.fft, "fft", x, n, axis, norm)


def ifft(x: Any, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Tensor:
    """The one-dimensional inverse discrete Fourier transform along ``axis`` (array API
    ``fft.ifft``, ``numpy.fft.ifft``, ``Nx.ifft``): ``ifft(fft(x)) == x``.

    Dtypes as :func:`fft`.

    :param x: a tensor of at least one dimension.
    :param n: the transform length; ``axis`` is zero-padded or truncated to it
        (default: its own length). Must be >= 1.
    :param axis: the axis to transform (negative counts from the end).
    :param norm: ``"backward"`` (``1/n``), ``"ortho"`` (``1/sqrt(n)``) or
        ``"forward"`` (no scaling).
    :raises ShapeError: for a 0-d tensor, an axis out of range, ``n < 1``, an empty
        axis without ``n``, or an unknown ``norm``.

    >>> import numerix as nx
    >>> nx.ifft(nx.tensor([10, -2 + 2j, -2, -2 - 2j])).tolist()
    [(1+0j), (2+0j), (3+0j), (4+0j)]
    >>> nx.ifft(nx.tensor([1.0, 2.0]), n=0)
    Traceback (most recent call last):
    ...
    numerix.errors.ShapeError: ifft: n=0 is not a valid transform length for f32[2] binary(cpu); n must be >= 1
    """
    return _transform(fft_primitives.ifft, "ifft", x, n, axis, norm)


def fftfreq(
    n: int, /, *, d: float = 1.0, dtype: Any = None, device: Any = None, backend: Any = None
) -> Tensor:
    """The sample frequencies of an ``n``-point transform with sample spacing ``d``
    (array API ``fft.fftfreq``, ``numpy.fft.fftfreq``): ``[0, 1, ..., -(n//2), ...,
    -1] / (n*d)``.

    :param n: the transform length, >= 1.
    :param d: the sample spacing (the inverse of the sampling rate), non-zero.
    :param dtype: a real floating dtype; default float32 (numpy's is float64).
    :param device: the array API's name for ``backend`` (either may be given).
    :param backend: where to create it; default the current default backend.
    :raises ShapeError: for ``n < 1`` or ``d == 0``.
    :raises DTypeError: for a dtype that is not a real float.

    >>> import numerix as nx
    >>> nx.fftfreq(5, d=0.5).tolist()
    [0.0, 0.4000000059604645, 0.800000011920929, -0.800000011920929, -0.4000000059604645]
    >>> nx.fftfreq(0)
    Traceback (most recent call last):
    ...
    numerix.errors.ShapeError: fftfreq: n must be an int >= 1, got 0
    """
    nn, odt, b = _freq_args("fftfreq", n, d, dtype, device, backend)
    neg = nn // 2
    # i for i < n - n//2, i - n above: (i + n//2) mod n - n//2, all in int64
    i = iota((nn,), dtype=dtypes.int64, backend=b)
    k = (i + neg) % nn - neg
    return cast(k, odt) * (1.0 / (nn * d))


def _freq_args(
    op: str, n: Any, d: Any, dtype: Any, device: Any, backend: Any
) -> tuple[int, Any, Any]:
    try:
        if isinstance(n, bool):
            raise TypeError
        nn = operator.index(n)
    except TypeError:
        nn = -1
    if nn < 1:
        raise ShapeError(f"{op}: n must be an int >= 1, got {n!r}")
    if isinstance(d, bool) or not isinstance(d, (int, float)) or d == 0 or not math.isfinite(d):
        raise ShapeError(f"{op}: d must be a finite non-zero real number, got {d!r}")
    odt = dtypes.float32 if dtype is None else dtypes.as_dtype(dtype, op)
    if odt.kind != "f":
        raise DTypeError(
            f"{op}: dtype must be a real floating dtype, got {odt}; use numerix.float32 or "
            f"numerix.float64"
        )
    return nn, odt, resolve(placement(op, device, backend), op)


def rfftfreq(
    n: int, /, *, d: float = 1.0, dtype: Any = None, device: Any = None, backend: Any = None
) -> Tensor:
    """The non-negative sample frequencies of an ``n``-point :func:`rfft` with sample
    spacing ``d`` (array API ``fft.rfftfreq``, ``numpy.fft.rfftfreq``): ``[0, 1, ...,
    n//2] / (n*d)``, ``n//2 + 1`` of them.

    :param n: the transform length, >= 1.
    :param d: the sample spacing (the inverse of the sampling rate), non-zero.
    :param dtype: a real floating dtype; default float32 (numpy's is float64).
    :param device: the array API's name for ``backend`` (either may be given).
    :param backend: where to create it; default the current default backend.
    :raises ShapeError: for ``n < 1`` or ``d == 0``.
    :raises DTypeError: for a dtype that is not a real float.

    >>> import numerix as nx
    >>> nx.rfftfreq(4, d=0.5).tolist()
    [0.0, 0.5, 1.0]
    >>> nx.rfftfreq(4, dtype=nx.int32)
    Traceback (most recent call last):
    ...
    numerix.errors.DTypeError: rfftfreq: dtype must be a real floating dtype, got int32; use numerix.float32 or numerix.float64
    """
    nn, odt, b = _freq_args("rfftfreq", n, d, dtype, device, backend)
    k = iota((nn // 2 + 1,), dtype=dtypes.int64, backend=b)
    return cast(k, odt) * (1.0 / (nn * d))


# ---------------------------------------------------------------- real transforms


def _swap(norm: str) -> str:
    # hfft / ihfft are irfft / rfft with the roles of forward and backward exchanged
    return {"backward": "forward", "forward": "backward"}.get(norm, norm)


def _axis_and_length(op: str, t: Tensor, n: Any, axis: int) -> tuple[int, int | None]:
    ax = normalize_axis(op, axis, t.ndim, t.shape)
    if n is None:
        return ax, None
    try:
        if isinstance(n, bool):
            raise TypeError
        length = operator.index(n)
    except TypeError:
        raise ShapeError(f"{op}: n must be an int or None, got {n!r}") from None
    if length < 1:
        raise ShapeError(
            f"{op}: n={length} is not a valid transform length for {t.describe()}; n must be >= 1"
        )
    return ax, length


def _real_input(op: str, x: Any) -> Tensor:
    t = as_tensor(x, op)
    if t.dtype.kind == "c":
        raise DTypeError(
            f"{op}: takes a real tensor, got {t.describe()}; use "
            f"{'fft' if op == 'rfft' else 'ifft'} for complex input, or real(x) to drop "
            f"the imaginary part"
        )
    return t


def _rfft(op: str, x: Any, n: Any, axis: int, norm: str) -> Tensor:
    t = _real_input(op, x)
    ax, length = _axis_and_length(op, t, n, axis)
    r = _transform(fft_primitives.fft, op, t, length, ax, norm)
    keep = r.shape[ax] // 2 + 1
    last = r.ndim - 1
    r = moveaxis(r, ax, last) if ax != last else r
    r = r[..., :keep]
    return moveaxis(r, last, ax) if ax != last else r


def _irfft(op: str, x: Any, n: Any, axis: int, norm: str) -> Tensor:
    t = as_tensor(x, op)
    ax, length = _axis_and_length(op, t, n, axis)
    m = t.shape[ax]
    if length is None:
        length = 2 * (m - 1)
        if length < 1:
            raise ShapeError(
                f"{op}: axis {ax} of {t.describe()} has {m} point(s), which gives the output "
                f"length 2*(m-1) = {length}; give n >= 1"
            )
    cd = fft_primitives.ifft.dtype_rule(t.dtype, length=length)
    t = cast(t, cd)
    last = t.ndim - 1
    if ax != last:
        t = moveaxis(t, ax, last)
    # the first n//2 + 1 coefficients (zero-padded or cut), then the conjugates of
    # coefficients 1 .. (n-1)//2 in reverse: the Hermitian spectrum of a real signal
    half = length // 2 + 1
    if m > half:
        t = t[..., :half]
    elif m < half:
        pad = zeros(t.shape[:-1] + (half - m,), dtype=cd, backend=t.backend)
        t = concatenate([t, pad], axis=-1)
    tail = (length + 1) // 2
    if tail > 1:
        t = concatenate([t, conj(flip(t[..., 1:tail], axis=-1))], axis=-1)
    # the real part of the inverse transform drops the imaginary parts of coefficients
    # 0 and n/2, as numpy does
    r = real(_transform(fft_primitives.ifft, op, t, None, last, norm))
    return moveaxis(r, last, ax) if ax != last else r


def rfft(x: Any, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Tensor:
    """The one-dimensional discrete Fourier transform of a real signal along ``axis``
    (array API ``fft.rfft``, ``numpy.fft.rfft``): the ``n//2 + 1`` non-negative
    frequency terms of :func:`fft` (the others are their conjugates).

    Dtypes as :func:`fft` (float64 gives complex128, other real dtypes complex64).

    :param x: a real tensor of at least one dimension.
    :param n: the transform length; ``axis`` is zero-padded or truncated to it
        (default: its own length). Must be >= 1.
    :param axis: the axis to transform (negative counts from the end).
    :param norm: ``"backward"`` (no scaling), ``"ortho"`` or ``"forward"`` (``1/n``).
    :raises DTypeError: for a complex tensor.
    :raises ShapeError: for a 0-d tensor, an axis out of range or ``n < 1``.

    >>> import numerix as nx
    >>> nx.rfft(nx.tensor([1.0, 2.0, 3.0, 4.0])).tolist()
    [(10+0j), (-2+2j), (-2+0j)]
    >>> nx.rfft(nx.tensor([1j]))
    Traceback (most recent call last):
    ...
    numerix.errors.DTypeError: rfft: takes a real tensor, got c64[1] binary(cpu); use fft for complex input, or real(x) to drop the imaginary part
    """
    return _rfft("rfft", x, n, axis, norm)


def irfft(x: Any, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Tensor:
    """The inverse of :func:`rfft` along ``axis`` (array API ``fft.irfft``,
    ``numpy.fft.irfft``): the real signal of ``n`` points whose transform has the
    non-negative frequency terms ``x``.

    The result is real: complex128 and float64 give float64, every other dtype float32.
    As numpy, the imaginary parts of the zero-frequency term (and of the Nyquist term,
    for an even ``n``) are ignored.

    :param x: a tensor of at least one dimension (the Hermitian half of a spectrum).
    :param n: the output length (default ``2*(m-1)`` for ``m`` input points); ``axis``
        is zero-padded or truncated to ``n//2 + 1`` points. Must be >= 1.
    :param axis: the axis to transform (negative counts from the end).
    :param norm: ``"backward"`` (``1/n``), ``"ortho"`` or ``"forward"`` (no scaling).
    :raises ShapeError: for a 0-d tensor, an axis out of range, ``n < 1``, or a
        one-point axis without ``n``.

    >>> import numerix as nx
    >>> nx.irfft(nx.tensor([10, -2 + 2j, -2])).tolist()
    [1.0, 2.0, 3.0, 4.0]
    >>> nx.irfft(nx.tensor([1j]))
    Traceback (most recent call last):
    ...
    numerix.errors.ShapeError: irfft: axis 0 of c64[1] binary(cpu) has 1 point(s), which gives the output length 2*(m-1) = 0; give n >= 1
    """
    return _irfft("irfft", x, n, axis, norm)


def hfft(x: Any, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Tensor:
    """The discrete Fourier transform of a signal with Hermitian symmetry, given by its
    first half ``x``, along ``axis`` (array API ``fft.hfft``, ``numpy.fft.hfft``): a real
    spectrum of ``n`` points, ``irfft(conj(x))`` scaled as a forward transform.

    Dtypes as :func:`irfft`.

    :param x: a tensor of at least one dimension.
    :param n: the output length (default ``2*(m-1)`` for ``m`` input points). Must be >= 1.
    :param axis: the axis to transform (negative counts from the end).
    :param norm: ``"backward"`` (no scaling), ``"ortho"`` or ``"forward"`` (``1/n``).
    :raises ShapeError: as :func:`irfft`.

    >>> import numerix as nx
    >>> nx.hfft(nx.tensor([1.0, 2.0, 3.0])).tolist()
    [8.0, -2.0, 0.0, -2.0]
    >>> nx.hfft(nx.tensor([1.0, 2.0]), norm="sideways")
    Traceback (most recent call last):
    ...
    numerix.errors.ArgumentError: hfft: norm must be one of 'backward', 'ortho', 'forward', got 'sideways'
    """
    return _irfft("hfft", conj(as_tensor(x, "hfft")), n, axis, _swap(norm))


def ihfft(x: Any, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Tensor:
    """The inverse of :func:`hfft` along ``axis`` (array API ``fft.ihfft``,
    ``numpy.fft.ihfft``): the ``n//2 + 1`` first terms of the Hermitian-symmetric
    inverse transform of the real ``x``, ``conj(rfft(x))`` scaled as an inverse transform.

    Dtypes as :func:`rfft`.

    :param x: a real tensor of at least one dimension.
    :param n: the transform length; ``axis`` is zero-padded or truncated to it. Must be >= 1.
    :param axis: the axis to transform (negative counts from the end).
    :param norm: ``"backward"`` (``1/n``), ``"ortho"`` or ``"forward"`` (no scaling).
    :raises DTypeError: for a complex tensor.
    :raises ShapeError: for a 0-d tensor, an axis out of range or ``n < 1``.

    >>> import numerix as nx
    >>> nx.ihfft(nx.tensor([8.0, -2.0, 0.0, -2.0])).tolist()
    [(1-0j), (2-0j), (3-0j)]
    """
    if norm not in _NORMS:  # named for ihfft, before _swap hides it
        raise ArgumentError(
            f"ihfft: norm must be one of {', '.join(map(repr, _NORMS))}, got {norm!r}"
        )
    return conj(_rfft("ihfft", x, n, axis, _swap(norm)))


# ---------------------------------------------------------------- n-dimensional transforms


def _s_axes(op: str, t: Tensor, s: Any, axes: Any) -> tuple[list[int], list[int | None]]:
    """The axes to transform and each one's length (None: its own), by the array API's
    rules: ``axes=None`` is every axis, or the last ``len(s)`` when ``s`` is given; an
    ``s`` entry of -1 keeps that axis's length."""
    if s is not None:
        if isinstance(s, int) or not all(isinstance(v, int) and not isinstance(v, bool) for v in s):
            raise ShapeError(f"{op}: s must be a sequence of ints or None, got {s!r}")
        s = list(s)
    if axes is None:
        axs = list(range(t.ndim)) if s is None else list(range(t.ndim - len(s), t.ndim))
        if len(axs) > t.ndim or any(a < 0 for a in axs):
            raise ShapeError(
                f"{op}: s={tuple(s or ())} has more entries than {t.describe()} has axes"
            )
    else:
        if isinstance(axes, int):
            axes = (axes,)
        axs = [normalize_axis(op, a, t.ndim, t.shape) for a in axes]
        if len(set(axs)) != len(axs):
            raise ShapeError(f"{op}: axes={tuple(axes)} names an axis twice")
    if s is None:
        return axs, [None] * len(axs)
    if len(s) != len(axs):
        raise ShapeError(
            f"{op}: s={tuple(s)} and axes={tuple(axs)} must have one entry per transformed axis"
        )
    for v in s:
        if v < 1 and v != -1:
            raise ShapeError(
                f"{op}: s={tuple(s)} holds {v}, not a valid transform length; each must be >= 1 "
                f"(or -1 for the axis's own length)"
            )
    return axs, [None if v == -1 else v for v in s]


def _fftn(prim: Primitive, op: str, x: Any, s: Any, axes: Any, norm: str) -> Tensor:
    t = as_tensor(x, op)
    axs, lengths = _s_axes(op, t, s, axes)
    if norm not in _NORMS:
        raise ArgumentError(
            f"{op}: norm must be one of {', '.join(map(repr, _NORMS))}, got {norm!r}"
        )
    if not axs:
        return cast(t, prim.dtype_rule(t.dtype, length=1))
    return _along(prim, op, t, axs, lengths, norm)


def _along(
    prim: Primitive, op: str, t: Tensor, axs: list[int], lengths: list[int | None], norm: str
) -> Tensor:
    # the one-dimensional transform along each axis, the last first (as numpy)
    for a, n in zip(axs[::-1], lengths[::-1]):
        t = _transform(prim, op, t, n, a, norm)
    return t


def fftn(x: Any, /, *, s: Any = None, axes: Any = None, norm: str = "backward") -> Tensor:
    """The n-dimensional discrete Fourier transform over ``axes`` (array API
    ``fft.fftn``, ``numpy.fft.fftn``): :func:`fft` along each of them.

    :param x: a tensor.
    :param s: the transform length of each axis in ``axes`` (-1: the axis's own),
        zero-padding or truncating it; default every axis's own length.
    :param axes: the axes to transform; default every axis, or the last ``len(s)``.
    :param norm: ``"backward"`` (no scaling), ``"ortho"`` or ``"forward"`` (``1/prod(s)``).
    :raises ShapeError: for an axis out of range or named twice, an ``s`` entry < 1,
        an ``s`` and ``axes`` of different lengths, or an empty axis without ``s``.

    >>> import numerix as nx
    >>> nx.fftn(nx.tensor([[1.0, 2.0], [3.0, 4.0]])).tolist()
    [[(10+0j), (-2+0j)], [(-4+0j), 0j]]
    >>> nx.fftn(nx.ones((2, 2)), s=(2,), axes=(0, 1))
    Traceback (most recent call last):
    ...
    numerix.errors.ShapeError: fftn: s=(2,) and axes=(0, 1) must have one entry per transformed axis
    """
    return _fftn(fft_primitives.fft, "fftn", x, s, axes, norm)


def ifftn(x: Any, /, *, s: Any = None, axes: Any = None, norm: str = "backward") -> Tensor:
    """The n-dimensional inverse discrete Fourier transform over ``axes`` (array API
    ``fft.ifftn``, ``numpy.fft.ifftn``): :func:`ifft` along each of them.

    Arguments and errors as :func:`fftn`; ``norm="backward"`` scales by ``1/prod(s)``.

    >>> import numerix as nx
    >>> nx.ifftn(nx.tensor([[10.0, -2.0], [-4.0, 0.0]])).tolist()
    [[(1+0j), (2+0j)], [(3+0j), (4+0j)]]
    """
    return _fftn(fft_primitives.ifft, "ifftn", x, s, axes, norm)


def rfftn(x: Any, /, *, s: Any = None, axes: Any = None, norm: str = "backward") -> Tensor:
    """The n-dimensional discrete Fourier transform of a real signal (array API
    ``fft.rfftn``, ``numpy.fft.rfftn``): :func:`rfft` over the last of ``axes``, then
    :func:`fft` over the others; that last axis keeps ``s[-1]//2 + 1`` terms.

    Arguments and errors as :func:`fftn`; a complex tensor raises DTypeError.

    >>> import numerix as nx
    >>> nx.rfftn(nx.tensor([[1.0, 2.0], [3.0, 4.0]])).tolist()
    [[(10+0j), (-2+0j)], [(-4+0j), 0j]]
    """
    t = _real_input("rfftn", x)
    axs, lengths = _s_axes("rfftn", t, s, axes)
    if not axs:
        raise ShapeError(f"rfftn: needs at least one axis to transform, got {t.describe()}")
    r = _rfft("rfftn", t, lengths[-1], axs[-1], norm)
    return _along(fft_primitives.fft, "rfftn", r, axs[:-1], lengths[:-1], norm)


def irfftn(x: Any, /, *, s: Any = None, axes: Any = None, norm: str = "backward") -> Tensor:
    """The inverse of :func:`rfftn` (array API ``fft.irfftn``, ``numpy.fft.irfftn``):
    :func:`ifft` over all of ``axes`` but the last, then :func:`irfft` over the last,
    whose output length is ``s[-1]`` (default ``2*(m-1)`` for its ``m`` points).

    Arguments and errors as :func:`fftn`; the result is real, as :func:`irfft`'s.

    >>> import numerix as nx
    >>> nx.irfftn(nx.tensor([[10.0, -2.0], [-4.0, 0.0]]), s=(2, 2)).tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    """
    t = as_tensor(x, "irfftn")
    axs, lengths = _s_axes("irfftn", t, s, axes)
    if not axs:
        raise ShapeError(f"irfftn: needs at least one axis to transform, got {t.describe()}")
    t = _along(fft_primitives.ifft, "irfftn", t, axs[:-1], lengths[:-1], norm)
    return _irfft("irfftn", t, lengths[-1], axs[-1], norm)


# ---------------------------------------------------------------- shifts


def _shift(op: str, x: Any, axes: Any, inverse: bool) -> Tensor:
    t = as_tensor(x, op)
    if axes is None:
        axs = list(range(t.ndim))
    else:
        axs = [
            normalize_axis(op, a, t.ndim, t.shape)
            for a in ((axes,) if isinstance(axes, int) else axes)
        ]
    if not axs:
        return t
    shifts = [(-(t.shape[a] // 2)) if inverse else t.shape[a] // 2 for a in axs]
    return roll(t, shifts, axis=axs)


def fftshift(x: Any, /, *, axes: Any = None) -> Tensor:
    """Move the zero-frequency term to the centre of ``axes`` (array API
    ``fft.fftshift``, ``numpy.fft.fftshift``): each axis rolled by half its length.

    :param x: a tensor.
    :param axes: an int, a sequence of ints, or None (every axis).
    :raises ShapeError: for an axis out of range.

    >>> import numerix as nx
    >>> nx.fftshift(nx.fftfreq(5)).tolist()
    [-0.4000000059604645, -0.20000000298023224, 0.0, 0.20000000298023224, 0.4000000059604645]
    >>> nx.fftshift(nx.ones(3), axes=1)
    Traceback (most recent call last):
    ...
    numerix.errors.AxisError: fftshift: axis 1 is out of range for a tensor of shape (3,); valid axes are -1..0
    """
    return _shift("fftshift", x, axes, False)


def ifftshift(x: Any, /, *, axes: Any = None) -> Tensor:
    """The inverse of :func:`fftshift` (array API ``fft.ifftshift``,
    ``numpy.fft.ifftshift``): each axis rolled back by half its length.

    :param x: a tensor.
    :param axes: an int, a sequence of ints, or None (every axis).
    :raises ShapeError: for an axis out of range.

    >>> import numerix as nx
    >>> nx.ifftshift(nx.tensor([-2, -1, 0, 1, 2])).tolist()
    [0, 1, 2, -2, -1]
    """
    return _shift("ifftshift", x, axes, True)
