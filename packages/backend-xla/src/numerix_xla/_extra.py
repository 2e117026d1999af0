"""Xla kernels of the shape-indexing, window, conv, sort, cumulative, fft and linear-algebra
families (mixed into XlaBackend).

Each primitive is one traced function of payloads (``numerix.backend.payload``), of which
XlaBackend makes its jitted kernels; the others (dynamic_slice, put_slice, the blocks) are
``jax.jit``-compiled ``lax`` functions cached per method, static parameters and operand
types (:func:`numerix_xla._kernels.jitted`). One executable each.
float16 and bfloat16 accumulate in float32 and round once, as the binary backend does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import jax.numpy as jnp
import ml_dtypes
import numpy as np
from jax import lax
from jax.lax import linalg as lxl

from numerix.backend import payload
from numerix.dtypes import reduction_identity
from numerix.primitives._registry import BLOCKS
from numerix_xla._kernels import check_64bit, jitted, types

if TYPE_CHECKING:
    from numerix._tensor import Tensor

_Pairs = tuple[tuple[int, int], ...]
_HALF = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))
_F32 = np.dtype(np.float32)
_BOOL = np.dtype(np.bool_)
_I64 = np.dtype(np.int64)
_DROP = lax.GatherScatterMode.FILL_OR_DROP
_IN_BOUNDS = lax.GatherScatterMode.PROMISE_IN_BOUNDS
# one element of a 1-d operand per index row
_POINT = lax.ScatterDimensionNumbers(
    update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)
)


# ---------------------------------------------------------------- trace-time helpers


def _up(a: Any) -> Any:
    return lax.convert_element_type(a, _F32) if a.dtype in _HALF else a


def _to(a: Any, dt: Any) -> Any:
    return a if a.dtype == dt else lax.convert_element_type(a, dt)


def _extreme(dt: np.dtype, highest: bool) -> Any:
    """The identity of max (``highest`` False: the lowest value) or of min, as a 0-d
    array of ``dt``."""
    return np.array(reduction_identity("min" if highest else "max", dt), dt)


def _mT(a: Any) -> Any:
    n = a.ndim
    return lax.transpose(a, (*range(n - 2), n - 1, n - 2))


def _tri_mask(shape: tuple[int, ...], k: int) -> Any:
    # True where column - row <= k over the last two axes (numpy tril)
    r = lax.broadcasted_iota(np.int32, shape, len(shape) - 2)
    c = lax.broadcasted_iota(np.int32, shape, len(shape) - 1)
    return c - r <= k


def _sorted(a: Any, axis: int, descending: bool, with_index: bool) -> tuple[Any, Any]:
    """(values, int64 indices or None) of ``a`` stably sorted along ``axis``: numpy's
    order (NaN last; complex numpy's extended order), descending as its exact reverse."""
    n = a.shape[axis]
    if descending:
        # the reverse of the stable ascending order, itself stable: sort the reversed
        # lane ascending and reverse back (negating keys would overflow integers and
        # move NaN to the wrong end)
        a = lax.rev(a, (axis,))
    extra = [lax.broadcasted_iota(_I64, a.shape, axis)] if with_index else []
    if a.dtype.kind == "c":
        re, im = lax.real(a), lax.imag(a)
        # numpy: R+Rj < R+nanj < nan+Rj < nan+nanj, each group ordered (real, imag)
        group = lax.convert_element_type(re != re, np.int8) * np.int8(2)
        group = group + lax.convert_element_type(im != im, np.int8)
        res = lax.sort((group, re, im, a, *extra), dimension=axis, is_stable=True, num_keys=3)
        v, idx = res[3], (res[4] if with_index else None)
    elif a.dtype == _BOOL:
        res = lax.sort((lax.convert_element_type(a, np.uint8), a, *extra),
                       dimension=axis, is_stable=True, num_keys=1)  # fmt: skip
        v, idx = res[1], (res[2] if with_index else None)
    elif with_index:
        v, idx = lax.sort((a, *extra), dimension=axis, is_stable=True, num_keys=1)
    else:
        v, idx = lax.sort(a, dimension=axis, is_stable=True), None
    if descending:
        v = lax.rev(v, (axis,))
        if idx is not None:
            idx = np.int64(n - 1) - lax.rev(idx, (axis,))
    return v, idx


# ---------------------------------------------------------------- payload functions, kernel builders


def _scatter_dims(a: Any, axes: tuple[int, ...]) -> lax.ScatterDimensionNumbers:
    """Rows of ``a`` at index tuples over ``axes``, the rest of ``a`` a window."""
    return lax.ScatterDimensionNumbers(
        update_window_dims=tuple(range(1, 1 + a.ndim - len(axes))),
        inserted_window_dims=tuple(sorted(axes)),
        scatter_dims_to_operand_dims=axes,
    )


def _indexed_add(a: Any, idx: Any, u: Any, *, axes: tuple[int, ...]) -> Any:
    dt, dn = a.dtype, _scatter_dims(a, axes)
    if dt == _BOOL:  # numpy's add on bool is logical or
        a, u = _to(a, np.int32), _to(u, np.int32)
        return lax.scatter_add(a, idx, u, dn, mode=_IN_BOUNDS) != 0
    return _to(lax.scatter_add(_up(a), idx, _up(u), dn, mode=_IN_BOUNDS), dt)


def _indexed_put(a: Any, idx: Any, u: Any, *, axes: tuple[int, ...]) -> Any:
    k, n, dn = len(axes), idx.shape[0], _scatter_dims(a, axes)
    if n <= 1:
        return lax.scatter(a, idx, u, dn, mode=_IN_BOUNDS)
    # XLA leaves the winner among repeated indices unspecified: drop every
    # occurrence but the last (stable sort of the flat index, then the last of
    # each run), pushing dropped rows out of bounds
    dims = [a.shape[ax] for ax in axes]
    flat = idx[:, 0]
    for c in range(1, k):
        flat = flat * np.int64(dims[c]) + idx[:, c]
    order = lax.iota(_I64, n)
    sflat, sorder = lax.sort((flat, order), is_stable=True, num_keys=1)
    last = lax.concatenate([sflat[1:] != sflat[:-1], lax.full((1,), True)], 0)
    _, keep = lax.sort((sorder, last), is_stable=True, num_keys=1)
    first = lax.select(keep, idx[:, 0], lax.full((n,), dims[0], idx.dtype))
    idx = lax.concatenate([first[:, None], idx[:, 1:]], 1)
    return lax.scatter(a, idx, u, dn, mode=_DROP)


def _window_reduce(
    a: Any, *, kind: str, window_dimensions: tuple[int, ...], strides: tuple[int, ...],
    padding: _Pairs, window_dilations: tuple[int, ...],
) -> Any:  # fmt: skip
    op = {"sum": lax.add, "prod": lax.mul, "max": lax.max, "min": lax.min}[kind]
    c = _up(a)
    init = np.array(reduction_identity(kind, c.dtype), c.dtype)
    r = lax.reduce_window(c, init, op, window_dimensions, strides, padding, None,
                          window_dilations)  # fmt: skip
    return _to(r, a.dtype)


def _window_scatter(
    a: Any, src: Any, init: Any, *, kind: str, window_dimensions: tuple[int, ...],
    strides: tuple[int, ...], padding: _Pairs,
) -> Any:  # fmt: skip
    lowest, dims = kind == "min", window_dimensions
    sdt = src.dtype
    if sdt == _BOOL:  # numpy's add on bool is logical or
        s, iv = _to(src, np.int32), _to(init, np.int32)
    else:
        s, iv = _up(src), _up(init)
    res = lax.broadcast(iv, a.shape)
    if src.size == 0:
        pass
    elif a.ndim == 0:  # its one window is a itself
        res = res + s
    else:
        # each window picks (value, flat position): the first maximum (minimum),
        # NaN counting as it; padding carries position n, so it loses every tie
        # bfloat16 keys lose NaN here on CPU (XLA 0.10: a NaN is not picked): widen
        key = _to(a, np.uint8) if a.dtype == _BOOL else _up(a)
        n = a.size
        pos = lax.reshape(lax.iota(_I64, n), a.shape)
        inexact = key.dtype.kind in "fc"

        def pick(p: Any, q: Any) -> Any:
            (av, ai), (bv, bi) = p, q
            a_more, b_more = (av < bv, bv < av) if lowest else (av > bv, bv > av)
            if inexact:
                an, bn = av != av, bv != bv
                a_more = a_more | (an & ~bn)
                b_more = b_more | (bn & ~an)
            take_a = a_more | (~b_more & (ai < bi))
            return lax.select(take_a, av, bv), lax.select(take_a, ai, bi)

        _, at = lax.reduce_window(
            (key, pos), (_extreme(key.dtype, lowest), np.array(n, _I64)), pick,
            dims, strides, padding,
        )  # fmt: skip
        flat = lax.scatter_add(
            lax.reshape(res, (n,)), lax.reshape(at, (at.size, 1)),
            lax.reshape(s, (s.size,)), _POINT, mode=_DROP,
        )  # fmt: skip
        res = lax.reshape(flat, a.shape)
    if sdt == _BOOL:
        return res != 0
    return _to(res, sdt)


def _conv(
    a: Any, w: Any, *, strides: tuple[int, ...], padding: _Pairs,
    input_dilation: tuple[int, ...], kernel_dilation: tuple[int, ...],
    feature_group_count: int, batch_group_count: int,
) -> Any:  # fmt: skip
    r = lax.conv_general_dilated(
        _up(a), _up(w), strides, padding, input_dilation, kernel_dilation,
        feature_group_count=feature_group_count, batch_group_count=batch_group_count,
        precision=lax.Precision.HIGHEST,
    )  # fmt: skip
    return _to(r, a.dtype)


def _cumulative(a: Any, *, kind: str, axis: int, reverse: bool) -> Any:
    op = {"sum": lax.cumsum, "prod": lax.cumprod, "max": lax.cummax, "min": lax.cummin}[kind]
    c = _to(a, np.uint8) if a.dtype == _BOOL else _up(a)
    return _to(op(c, axis=axis, reverse=reverse), a.dtype)


def _fourier(kind: lax.FftType) -> Callable[..., Any]:
    """fft (``kind`` FFT) or ifft (IFFT) over the last axis, cut or zero-padded to ``length``."""

    def f(a: Any, *, length: int) -> Any:
        m = a.shape[-1]
        if m > length:
            a = lax.slice_in_dim(a, 0, length, axis=a.ndim - 1)
        elif m < length:
            cfg = [(0, 0, 0)] * (a.ndim - 1) + [(0, length - m, 0)]
            a = lax.pad(a, np.array(0, a.dtype), cfg)
        return lax.fft(a, kind, (length,))

    return f


def _build_top_k(k: int, axis: int) -> Callable[..., Any]:
    def f(a: Any) -> Any:
        v, i = _sorted(a, axis, True, True)
        return lax.slice_in_dim(v, 0, k, axis=axis), lax.slice_in_dim(i, 0, k, axis=axis)

    return f


def _build_threefry2x32(shape: tuple[int, ...]) -> Callable[..., Any]:
    # the twenty rounds unrolled, as the core writes them: XLA fuses them into one loop
    # over the elements (JAX's threefry2x32_p lowers to a rolled loop on CPU, which ran
    # several times slower here)
    def f(k1: Any, k2: Any, x1: Any, x2: Any) -> Any:
        u = np.uint32
        ks = (k1, k2, k1 ^ k2 ^ u(0x1BD11BDA))
        x1 = jnp.broadcast_to(x1 + ks[0], shape)
        x2 = jnp.broadcast_to(x2 + ks[1], shape)
        for i in range(5):
            for r in ((13, 15, 26, 6), (17, 29, 16, 24))[i % 2]:
                x1 = x1 + x2
                x2 = x1 ^ (lax.shift_left(x2, u(r)) | lax.shift_right_logical(x2, u(32 - r)))
            x1 = x1 + ks[(i + 1) % 3]
            x2 = x2 + (ks[(i + 2) % 3] + u(i + 1))
        return x1, x2

    return f


def _lu_by_modulus(a: Any) -> tuple[Any, Any]:
    """(packed LU, row permutation) by elimination with partial pivoting on the first
    largest ``|entry|``. LAPACK's complex getrf pivots on ``|re| + |im|`` instead, which
    can leave multipliers above 1 in modulus."""
    *batch, n, _ = a.shape
    rows = lax.broadcasted_iota(np.int32, (n,), 0)
    cols = rows

    def step(k: Any, carry: tuple[Any, Any]) -> tuple[Any, Any]:
        m, perm = carry
        mag = jnp.where(rows >= k, jnp.abs(m[..., :, k]), -1)
        p = jnp.argmax(mag, axis=-1)[..., None]  # the first largest
        swap = jnp.where(rows == k, p, jnp.where(rows == p, k, rows))
        m = jnp.take_along_axis(m, swap[..., :, None], axis=-2)
        perm = jnp.take_along_axis(perm, swap, axis=-1)
        d = m[..., k, k][..., None]
        # a zero pivot: the column is zero below it; skip it, as getrf
        f = jnp.where(rows > k, m[..., :, k] / jnp.where(d == 0, 1, d), 0)
        row = jnp.where(cols > k, m[..., k, :], 0)
        m = m - f[..., :, None] * row[..., None, :]
        m = jnp.where((cols == k) & (rows[:, None] > k), f[..., :, None], m)
        return m, perm

    perm0 = lax.broadcast(rows, tuple(batch))
    return lax.fori_loop(0, n, step, (a, perm0))


def _build_lu() -> Callable[..., Any]:
    def f(a: Any) -> Any:
        if a.dtype.kind == "c":
            packed, perm = _lu_by_modulus(a)
        else:
            packed, _, perm = lxl.lu(a)
        shape = a.shape
        n = shape[-1]
        eye = lax.broadcasted_iota(np.int32, shape, len(shape) - 2) == lax.broadcasted_iota(
            np.int32, shape, len(shape) - 1
        )
        low = lax.select(_tri_mask(shape, -1), packed, jnp.zeros_like(packed))
        low = low + _to(eye, a.dtype)
        up = lax.select(_tri_mask(shape, n) & ~_tri_mask(shape, -1), packed,
                        jnp.zeros_like(packed))  # fmt: skip
        # row i of P^T is the unit row perm[i]: P^T a = L U
        cols = lax.broadcasted_iota(perm.dtype, shape, len(shape) - 1)
        pt = _to(perm[..., :, None] == cols, a.dtype)
        return _mT(pt), low, up

    return f


# ---------------------------------------------------------------- the mixin


class ExtraKernels:
    """Kernels beyond the element-wise, reduction and basic shape families."""

    __slots__ = ()

    if TYPE_CHECKING:

        def put(self, array: Any) -> Any: ...

    def _zeros(self, out: Tensor) -> Tensor:
        out.data = self.put(np.zeros(out.shape, out.dtype.numpy_dtype))
        return out

    # ------------------------------------------------------------ shape
    pad = payload(lambda a, v, *, config: lax.pad(a, v, config))

    def dynamic_slice(self, out: Tensor, x: Tensor, *starts: Tensor,
                      sizes: tuple[int, ...]) -> Tensor:  # fmt: skip
        # allow_negative_indices=False: XLA's plain clamp, no wrapping of negative starts
        f = jitted(("dynamic_slice", sizes, *types(x, *starts)), lambda: lambda a, *s: lax.dynamic_slice(
            a, s, sizes, allow_negative_indices=False))  # fmt: skip
        out.data = f(x.data, *(s.data for s in starts))
        return out

    def put_slice(self, out: Tensor, x: Tensor, update: Tensor, *starts: Tensor) -> Tensor:
        f = jitted(("put_slice", *types(x, update, *starts)), lambda: lambda a, u, *s: lax.dynamic_update_slice(
            a, u, s, allow_negative_indices=False))  # fmt: skip
        out.data = f(x.data, update.data, *(s.data for s in starts))
        return out

    # ------------------------------------------------------------ indexing
    indexed_add = payload(_indexed_add)
    indexed_put = payload(_indexed_put)

    # ------------------------------------------------------------ window
    window_reduce = payload(_window_reduce)
    window_scatter = payload(_window_scatter)

    # ------------------------------------------------------------ conv
    conv = payload(_conv)

    # ------------------------------------------------------------ sort
    sort = payload(lambda a, *, axis, descending: _sorted(a, axis, descending, False)[0])
    argsort = payload(lambda a, *, axis, descending: _sorted(a, axis, descending, True)[1])

    def block_top_k(
        self, out: tuple[Tensor, Tensor], x: Tensor, *, k: int, axis: int
    ) -> tuple[Tensor, Tensor]:
        values, indices = out
        check_64bit("top_k", self, (indices.dtype,))
        if 0 in values.shape:
            self._zeros(values)
            self._zeros(indices)
            return out
        f = jitted(("top_k", k, axis, *types(x)), lambda: _build_top_k(k, axis))
        values.data, indices.data = f(x.data)
        return out

    def block_threefry2x32(
        self, out: tuple[Tensor, Tensor], k1: Tensor, k2: Tensor, x1: Tensor, x2: Tensor
    ) -> tuple[Tensor, Tensor]:
        shape = out[0].shape
        f = jitted(
            ("threefry2x32", shape, *types(k1, k2, x1, x2)), lambda: _build_threefry2x32(shape)
        )
        out[0].data, out[1].data = f(k1.data, k2.data, x1.data, x2.data)
        return out

    def block_xla_erf_inv(self, out: Tensor, x: Tensor) -> Tensor:
        # XLA's own erf_inv is the block's definition: no float64 is needed for float32
        out.data = jitted(("xla_erf_inv", *types(x)), lambda: lax.erf_inv)(x.data)
        return out

    cumulative = payload(_cumulative)

    # ------------------------------------------------------------ fft
    fft = payload(_fourier(lax.FftType.FFT))
    ifft = payload(_fourier(lax.FftType.IFFT))

    # ------------------------------------------------------------ linear algebra blocks
    # The core hands these float32 / float64 / complex64 / complex128 only. Empty
    # matrices go to the core's fallbacks (LAPACK wrappers reject some of them).

    def block_cholesky(self, out: Tensor, x: Tensor, *, upper: bool) -> Tensor:
        if 0 in x.shape:
            return _from_fallback(out, "cholesky", x, upper=upper)

        def build() -> Callable[..., Any]:
            def f(a: Any) -> Any:
                low = lxl.cholesky(a, symmetrize_input=False)
                low = lax.select(_tri_mask(a.shape, 0), low, jnp.zeros_like(low))
                if not upper:
                    return low
                return lax.conj(_mT(low)) if a.dtype.kind == "c" else _mT(low)

            return f

        out.data = jitted(("cholesky", upper, *types(x)), build)(x.data)
        return out

    def block_triangular_solve(
        self, out: Tensor, a: Tensor, b: Tensor, *, lower: bool, left_side: bool,
        transform_a: str,
    ) -> Tensor:  # fmt: skip
        if 0 in out.shape or 0 in a.shape:
            return _from_fallback(out, "triangular_solve", a, b, lower=lower,
                                  left_side=left_side, transform_a=transform_a)  # fmt: skip
        key = ("triangular_solve", lower, left_side, transform_a, *types(a, b))
        f = jitted(key, lambda: lambda m, r: lxl.triangular_solve(
            m, r, left_side=left_side, lower=lower, transpose_a=transform_a != "none",
            conjugate_a=transform_a == "adjoint"))  # fmt: skip
        out.data = f(a.data, b.data)
        return out

    def block_solve(self, out: Tensor, a: Tensor, b: Tensor) -> Tensor:
        if 0 in out.shape or 0 in a.shape:
            return _from_fallback(out, "solve", a, b)
        out.data = jitted(("solve", *types(a, b)), lambda: jnp.linalg.solve)(a.data, b.data)
        return out

    def block_inv(self, out: Tensor, x: Tensor) -> Tensor:
        if 0 in x.shape:
            return _from_fallback(out, "inv", x)
        out.data = jitted(("inv", *types(x)), lambda: jnp.linalg.inv)(x.data)
        return out

    def block_det(self, out: Tensor, x: Tensor) -> Tensor:
        if 0 in x.shape:
            return _from_fallback(out, "det", x)
        out.data = jitted(("det", *types(x)), lambda: jnp.linalg.det)(x.data)
        return out

    def block_qr(
        self, out: tuple[Tensor, Tensor], x: Tensor, *, mode: str
    ) -> tuple[Tensor, Tensor]:
        if 0 in x.shape:
            return _from_fallback(out, "qr", x, mode=mode)
        full = mode == "complete"
        f = jitted(("qr", full, *types(x)), lambda: lambda a: lxl.qr(a, full_matrices=full))
        q, r = out
        q.data, r.data = f(x.data)
        return out

    def block_eigh(self, out: tuple[Tensor, Tensor], x: Tensor) -> tuple[Tensor, Tensor]:
        if 0 in x.shape:
            return _from_fallback(out, "eigh", x)
        f = jitted(
            ("eigh", *types(x)), lambda: lambda a: lxl.eigh(a, lower=True, symmetrize_input=False)
        )
        w, v = out
        v.data, w.data = f(x.data)
        return out

    def block_svd(
        self, out: tuple[Tensor, Tensor, Tensor], x: Tensor, *, full_matrices: bool
    ) -> tuple[Tensor, Tensor, Tensor]:
        if 0 in x.shape:
            return _from_fallback(out, "svd", x, full_matrices=full_matrices)
        f = jitted(("svd", full_matrices, *types(x)), lambda: lambda a: lxl.svd(
            a, full_matrices=full_matrices, compute_uv=True))  # fmt: skip
        u, s, vh = out
        u.data, s.data, vh.data = f(x.data)
        return out

    def block_lu(
        self, out: tuple[Tensor, Tensor, Tensor], x: Tensor
    ) -> tuple[Tensor, Tensor, Tensor]:
        if 0 in x.shape:
            return _from_fallback(out, "lu", x)
        p, low, up = out
        p.data, low.data, up.data = jitted(("lu", *types(x)), _build_lu)(x.data)
        return out


def _from_fallback(out: Any, block: str, *inputs: Tensor, **params: Any) -> Any:
    """``out`` filled from the core's version of ``block`` (for the shapes LAPACK
    refuses), which the registry holds (:attr:`numerix.primitives.Block.fallback`)."""
    fallback = BLOCKS[block].fallback
    assert fallback is not None  # every linear-algebra block's op records one
    r = fallback(*inputs, **params)
    if isinstance(out, tuple):
        for o, t in zip(out, r):
            o.data = t.data
    else:
        out.data = r.data
    return out
