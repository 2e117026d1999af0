"""Discrete Fourier transforms: ``fft``, ``ifft`` and ``fftfreq``.

The primitives (``Nx.fft`` / ``Nx.ifft``) transform the last axis, unnormalised
forward and scaled by ``1/n`` inverse; ``axis`` and ``norm`` are composites here: the
axis is moved last and back around the primitive, and the ``norm`` scaling is one
multiplication. See :mod:`numerix.primitives.fft`.
"""

from __future__ import annotations

import math
import operator
from typing import Any

from numerix import dtypes
from numerix._shapes import normalize_axis
from numerix._tensor import Tensor
from numerix.errors import ArgumentError, DTypeError, ShapeError
from numerix.ops._core import as_tensor, cast, resolve
from numerix.ops.creation import iota
from numerix.ops.shape import moveaxis
from numerix.primitives import fft as fft_primitives
from numerix.primitives._registry import Primitive

__all__ = ["fft", "ifft", "fftfreq"]

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
    >>> nx.fft(nx.tensor([1.0, 2.0, 3.0, 4.0])).tolist()
    [(10+0j), (-2+2j), (-2+0j), (-2-2j)]
    >>> nx.fft(nx.tensor([1.0, 1.0]), n=4).tolist()
    [(2+0j), (1-1j), 0j, (1+1j)]
    >>> nx.fft(nx.tensor(1.0))
    Traceback (most recent call last):
    ...
    numerix.errors.ShapeError: fft: axis -1 is out of range for a 0-d tensor, which has no axes
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


def fftfreq(n: int, /, *, d: float = 1.0, dtype: Any = None, backend: Any = None) -> Tensor:
    """The sample frequencies of an ``n``-point transform with sample spacing ``d``
    (array API ``fft.fftfreq``, ``numpy.fft.fftfreq``): ``[0, 1, ..., -(n//2), ...,
    -1] / (n*d)``.

    :param n: the transform length, >= 1.
    :param d: the sample spacing (the inverse of the sampling rate), non-zero.
    :param dtype: a real floating dtype; default float32 (numpy's is float64).
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
    try:
        if isinstance(n, bool):
            raise TypeError
        nn = operator.index(n)
    except TypeError:
        nn = -1
    if nn < 1:
        raise ShapeError(f"fftfreq: n must be an int >= 1, got {n!r}")
    if isinstance(d, bool) or not isinstance(d, (int, float)) or d == 0 or not math.isfinite(d):
        raise ShapeError(f"fftfreq: d must be a finite non-zero real number, got {d!r}")
    odt = dtypes.float32 if dtype is None else dtypes.as_dtype(dtype, "fftfreq")
    if odt.kind != "f":
        raise DTypeError(
            f"fftfreq: dtype must be a real floating dtype, got {odt}; use numerix.float32 or "
            f"numerix.float64"
        )
    b = resolve(backend, "fftfreq")
    neg = nn // 2
    # i for i < n - n//2, i - n above: (i + n//2) mod n - n//2, all in int64
    i = iota((nn,), dtype=dtypes.int64, backend=b)
    k = (i + neg) % nn - neg
    return cast(k, odt) * (1.0 / (nn * d))
