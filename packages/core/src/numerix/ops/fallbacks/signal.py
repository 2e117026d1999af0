"""Fallbacks of the conv and fft families (see :mod:`numerix.ops.fallbacks`).

Both are contractions: conv gathers its patches by a static index grid built on the host
and contracts them with the kernel in one ``dot``; the transforms contract with twiddle
matrices built on the host in complex128 from exact angles, factored into ``dot``s of
length about ``sqrt(n)`` for long composite lengths (Cooley-Tukey) and turned into
power-of-two ones for long prime lengths (Bluestein). Neither uses the other, and neither
reaches back here: they use ``dot``, ``transpose``, ``slice`` and ``pad`` (whose fallbacks
are in :mod:`numerix.ops.fallbacks.shape`) and the required core.
"""

from __future__ import annotations

import math

import numpy as np

from numerix._tensor import Tensor
from numerix.ops.fallbacks._common import (
    cast,
    compute_dtype,
    const,
    reshaped,
    transposed,
    zeros_like,
)
from numerix.primitives import elementwise as ep
from numerix.primitives import fallback_rule
from numerix.primitives import indexing as ip
from numerix.primitives import linalg as lp
from numerix.primitives import shape as sp

# ---------------------------------------------------------------- conv


def _spatial_grid(
    size: tuple[int, ...], ksize: tuple[int, ...], osize: tuple[int, ...],
    strides: tuple[int, ...], padding: tuple[tuple[int, int], ...],
    input_dilation: tuple[int, ...], kernel_dilation: tuple[int, ...],
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """For every output position and kernel tap, ``[prod(osize), prod(ksize)]``: the flat
    spatial index of the element of x it reads and whether it reads one at all (a tap on
    the padding or between the input's dilated elements reads a zero)."""
    ns = len(size)
    flat = np.zeros((1,) * (2 * ns), np.int64)
    valid = np.ones((1,) * (2 * ns), bool)
    step = 1
    for a in reversed(range(ns)):
        # the position in the padded, dilated input: o * stride + k * dilation - low pad
        q = (
            np.arange(osize[a], dtype=np.int64)[:, None] * strides[a]
            + np.arange(ksize[a], dtype=np.int64)[None, :] * kernel_dilation[a]
            - padding[a][0]
        )
        d = input_dilation[a]
        ok = (q >= 0) & (q % d == 0) & (q // d < size[a])
        src = np.where(ok, q // d, 0)
        view = [1] * (2 * ns)
        view[a], view[ns + a] = osize[a], ksize[a]
        flat = flat + src.reshape(view) * step
        valid = valid & ok.reshape(view)
        step *= size[a]
    full = (*osize, *ksize)
    rows, taps = math.prod(osize), math.prod(ksize)
    flat = np.broadcast_to(flat, full).reshape(rows, taps)
    valid = np.broadcast_to(valid, full).reshape(rows, taps)
    return flat, valid


@fallback_rule("conv")
def conv(
    out: Tensor, x: Tensor, kernel: Tensor, *, strides: tuple[int, ...],
    padding: tuple[tuple[int, int], ...], input_dilation: tuple[int, ...],
    kernel_dilation: tuple[int, ...], feature_group_count: int, batch_group_count: int,
) -> Tensor:  # fmt: skip
    """im2col: the patches gathered from x by a host-built index grid (the padding and the
    holes of the input dilation are zeros chosen by ``select``), then one ``dot`` with the
    kernel, batched over the groups. Each output is the sum of products binary's einsum
    sums, in the order the backend's ``dot`` sums them; float16 and bfloat16 compute in
    float32 and round once, as binary does. Uses gather, select, reshape, as_type,
    from_numpy, dot and transpose."""
    if out.size == 0 or x.size == 0 or kernel.size == 0:
        return zeros_like(out)  # sums of nothing: no input features or an empty spatial axis
    cdt = compute_dtype(out.dtype)
    n, c, *size = x.shape
    o, _, *ksize = kernel.shape
    osize = out.shape[2:]
    flat, valid = _spatial_grid(
        tuple(size), tuple(ksize), osize, strides, padding, input_dilation, kernel_dilation
    )
    m = math.prod(size)
    rows, taps = flat.shape
    # the groups: g of them, each reading `nb` batch rows and `cc` input features of x and
    # making og output features
    if batch_group_count > 1:
        g, nb, cc = batch_group_count, n // batch_group_count, c
        batch = np.arange(g)[:, None] * nb + np.arange(nb)[None, :]  # [g, nb]
        chans = np.broadcast_to(np.arange(c)[None, :], (g, c))  # [g, cc]
    else:
        g, nb, cc = feature_group_count, n, c // feature_group_count
        batch = np.broadcast_to(np.arange(n)[None, :], (g, n))
        chans = np.arange(g)[:, None] * cc + np.arange(cc)[None, :]
    og = o // g
    # idx[g, b, row, c, tap]: the flat index into x [n, c, *size] that patch element reads
    idx = (
        batch[:, :, None, None, None].astype(np.int64) * (c * m)
        + chans[:, None, None, :, None].astype(np.int64) * m
        + flat[None, None, :, None, :]
    )
    xs = reshaped(cast(x, cdt), (n * c * m,))
    patches = ip.gather.bind(xs, const(out, idx[..., None]), axes=(0,))
    if not valid.all():
        zero = const(out, np.zeros((), cdt.numpy_dtype))
        mask = const(out, valid[:, None, :])  # [row, 1, tap] against [g, nb, row, cc, tap]
        patches = ep.select.bind(mask, patches, zero)
    patches = reshaped(patches, (g, nb, rows, cc * taps))
    w = reshaped(cast(kernel, cdt), (g, og, cc * taps))
    r = lp.dot.bind(
        patches, w, contract_x=(3,), batch_x=(0,), contract_y=(2,), batch_y=(0,)
    )  # [g, nb, row, og]
    r = reshaped(transposed(r, (1, 0, 3, 2)), out.shape)
    return cast(r, out.dtype)


# ---------------------------------------------------------------- fft

#: lengths up to this are one dense twiddle matrix; a longer one splits (Cooley-Tukey) or,
#: prime, goes through Bluestein
_LEAF = 64


def _twiddles(j: np.ndarray, k: np.ndarray, n: int, sign: int, dt: np.dtype) -> np.ndarray:
    """``exp(sign * 2j * pi * j * k / n)`` over ``j`` and ``k`` broadcast, in dtype ``dt``:
    the angle's turns ``j * k mod n`` are exact integers, so each entry is the complex128
    value of an exact angle rounded once to ``dt``; the quarter turns are exactly 1, i, -1
    and -i."""
    r = (j.astype(np.int64) * k.astype(np.int64)) % n
    w = np.exp(sign * 2j * np.pi * (r / n))
    quarter = (4 * r) % n == 0
    if quarter.any():
        exact = np.array([1, 1j, -1, -1j], np.complex128)
        turns = (sign * (4 * r) // n) % 4
        w = np.where(quarter, exact[turns], w)
    return w.astype(dt)


def _split(n: int) -> int:
    """The largest factor of ``n`` up to ``sqrt(n)`` (1 for a prime)."""
    for f in range(math.isqrt(n), 1, -1):
        if n % f == 0:
            return f
    return 1


def _dense(out: Tensor, t: Tensor, axis: int, rows: int, n: int, sign: int) -> Tensor:
    # t's axis (rows long, the first rows of an n-point transform's input) contracted with
    # the [rows, n] twiddle matrix: the zeros past rows are left out, not multiplied
    tw = _twiddles(np.arange(rows)[:, None], np.arange(n)[None, :], n, sign, t.dtype.numpy_dtype)
    return lp.dot.bind(
        t, const(out, tw), contract_x=(axis,), batch_x=(), contract_y=(0,), batch_y=()
    )


def _dft(out: Tensor, t: Tensor, axis: int, sign: int) -> Tensor:
    """The unnormalised transform of ``t`` along ``axis`` (exactly ``n`` long), the result
    with that axis last. Up to :data:`_LEAF` points, one ``dot`` with the ``[n, n]``
    twiddle matrix; above, Cooley-Tukey over ``n = n1 * n2`` (the "four-step" form):
    transforms of ``n1`` points, the twiddles ``w_n ** (j2 * k1)``, then transforms of
    ``n2`` points, and a prime length by :func:`_bluestein`. Rounding grows with the
    transform sizes summed, about ``(n1 + n2) * eps``, where one dense product's grows
    with ``n``; memory stays ``O(n)`` per lane."""
    n = t.shape[axis]
    if n <= _LEAF:
        return _dense(out, t, axis, n, n, sign)
    nd = t.ndim
    if axis != nd - 1:
        t = transposed(t, (*(a for a in range(nd) if a != axis), axis))
    n1 = _split(n)
    if n1 == 1:
        return _bluestein(out, t, sign)
    lead = t.shape[:-1]
    n2 = n // n1
    t = reshaped(t, (*lead, n1, n2))  # [..., j1, j2], j = j1 * n2 + j2
    a = _dft(out, t, nd - 1, sign)  # [..., j2, k1]
    tw = _twiddles(np.arange(n2)[:, None], np.arange(n1)[None, :], n, sign, t.dtype.numpy_dtype)
    a = ep.multiply.bind(a, const(out, tw))
    b = _dft(out, a, nd - 1, sign)  # [..., k1, k2]
    # k = k1 + n1 * k2: k2 is the slower index
    b = transposed(b, (*range(nd - 1), nd, nd - 1))
    return reshaped(b, (*lead, n))


def _bluestein(out: Tensor, t: Tensor, sign: int) -> Tensor:
    """A prime length ``n`` along the last axis as a cyclic convolution of power-of-two
    length ``size >= 2n - 1`` (Bluestein's chirp z-transform): with ``w_j = exp(sign * i *
    pi * j**2 / n)`` (exact angles, ``j**2 mod 2n`` half turns), ``X_k = w_k * sum_j (x_j
    * w_j) * conj(w_(k - j))``; the convolution is two transforms of ``size`` points by
    :func:`_dft` and the transform of the chirp, a constant computed on the host in
    complex128 (scaled by ``1 / size`` there, the inverse's normalisation). Rounding is
    a few ``log2(size) * eps``."""
    n = t.shape[-1]
    nd = t.ndim
    dt = t.dtype.numpy_dtype
    size = 1 << (2 * n - 2).bit_length()
    j = np.arange(n, dtype=np.int64)
    half_turns = (j * j) % (2 * n)
    chirp = np.exp(sign * 1j * np.pi * (half_turns / n))
    kernel = np.zeros(size, np.complex128)
    kernel[:n] = np.conj(chirp)
    kernel[size - n + 1 :] = np.conj(chirp[1:])[::-1]
    spectrum = np.fft.fft(kernel) / size
    w = const(out, chirp.astype(dt))
    a = ep.multiply.bind(t, w)
    zero = const(out, np.zeros((), dt))
    a = sp.pad.bind(a, zero, config=((0, 0, 0),) * (nd - 1) + ((0, size - n, 0),))
    a = _dft(out, a, nd - 1, -1)
    a = ep.multiply.bind(a, const(out, spectrum.astype(dt)))
    c = _dft(out, a, nd - 1, 1)
    c = sp.slice.bind(c, start=(0,) * nd, stop=(*c.shape[:-1], n), strides=(1,) * nd)
    return ep.multiply.bind(c, w)


def _transform(out: Tensor, x: Tensor, length: int, sign: int) -> Tensor:
    if out.size == 0 or x.shape[-1] == 0:
        return zeros_like(out)  # no lanes, or the transform of zeros
    x = cast(x, out.dtype)  # the core casts first: this is a no-op
    nd, m = x.ndim, x.shape[-1]
    if m > length:
        x = sp.slice.bind(x, start=(0,) * nd, stop=(*x.shape[:-1], length), strides=(1,) * nd)
    elif m < length:
        if length <= _LEAF:
            return _dense(out, x, nd - 1, m, length, sign)
        zero = const(out, np.zeros((), out.dtype.numpy_dtype))
        config = ((0, 0, 0),) * (nd - 1) + ((0, length - m, 0),)
        x = sp.pad.bind(x, zero, config=config)
    return _dft(out, x, nd - 1, sign)


@fallback_rule("fft")
def fft(out: Tensor, x: Tensor, *, length: int) -> Tensor:
    """The discrete Fourier transform as products with host-built twiddle matrices (see
    :func:`_dft`). Uses dot, multiply, transpose, reshape, slice, pad, as_type and
    from_numpy."""
    return _transform(out, x, length, -1)


@fallback_rule("ifft")
def ifft(out: Tensor, x: Tensor, *, length: int) -> Tensor:
    """The inverse transform: the conjugate twiddles, then one multiply by ``1 / length``
    (one more rounding, as numpy's scaling). Uses what :func:`fft` uses."""
    r = _transform(out, x, length, 1)
    if length == 1:
        return r
    scale = const(out, np.asarray(1 / length, out.dtype.numpy_dtype))
    return ep.multiply.bind(r, scale)
