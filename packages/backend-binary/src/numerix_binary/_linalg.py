"""Binary overrides of the linear-algebra blocks (mixed into BinaryBackend): numpy.linalg.

The core hands these float32 / float64 / complex64 / complex128 inputs only (it
promotes integers and rounds float16 / bfloat16 itself). numerix never raises from
inside numpy: where numpy.linalg raises ``LinAlgError`` (a singular or
non-positive-definite matrix), the failing matrices of the batch come back as NaN.
numpy has no LU: ``block_lu`` is a small numpy loop of partial pivoting, batched,
choosing the same pivots as the core's fallback (the first largest ``|entry|``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import numpy as np

from numerix._tensor import Tensor


def _batched(
    fn: Callable[[np.ndarray], Any], x: np.ndarray, outs: tuple[tuple[tuple[int, ...], Any], ...]
) -> tuple[np.ndarray, ...]:
    """``fn`` on the whole batch ``x`` (..., n, w), its results cast to ``outs`` ((shape,
    numpy dtype) each); on LinAlgError, matrix by matrix with NaN for the failing ones."""
    try:
        r = fn(x)
        rs = r if isinstance(r, tuple) else (r,)
        return tuple(np.asarray(a).astype(d, copy=False) for a, (_, d) in zip(rs, outs))
    except np.linalg.LinAlgError:
        pass
    res = tuple(np.full(shape, np.nan, dtype=d) for shape, d in outs)
    for i in np.ndindex(*x.shape[:-2]):
        try:
            r = fn(x[i])
        except np.linalg.LinAlgError:
            continue
        for dst, a in zip(res, r if isinstance(r, tuple) else (r,)):
            dst[i] = a
    return res


def _spec(t: Tensor) -> tuple[tuple[int, ...], Any]:
    return t.shape, t.dtype.numpy_dtype


class LinalgKernels:
    """numpy.linalg kernels of the linear-algebra blocks."""

    __slots__ = ()

    def block_cholesky(self, out: Tensor, x: Tensor, *, upper: bool) -> Tensor:
        # numpy's upper=True reads the upper triangle; numerix reads the lower one
        (low,) = _batched(np.linalg.cholesky, x.data, (_spec(out),))
        out.data = np.swapaxes(low, -1, -2).conj() if upper else low
        return out

    def block_triangular_solve(
        self, out: Tensor, a: Tensor, b: Tensor, *, lower: bool, left_side: bool,
        transform_a: str,
    ) -> Tensor:  # fmt: skip
        # numpy has no triangular solve: zero the unread triangle and solve
        m = np.tril(a.data) if lower else np.triu(a.data)
        if transform_a != "none":
            m = np.swapaxes(m, -1, -2)
            if transform_a == "adjoint":
                m = m.conj()
        if left_side:
            out.data = _solve(m, b.data, _spec(out))
        else:  # x m = b  <=>  m^T x^T = b^T
            t = np.swapaxes(b.data, -1, -2)
            spec = (t.shape, out.dtype.numpy_dtype)
            out.data = np.swapaxes(_solve(np.swapaxes(m, -1, -2), t, spec), -1, -2)
        return out

    def block_solve(self, out: Tensor, a: Tensor, b: Tensor) -> Tensor:
        out.data = _solve(a.data, b.data, _spec(out))
        return out

    def block_inv(self, out: Tensor, x: Tensor) -> Tensor:
        (out.data,) = _batched(np.linalg.inv, x.data, (_spec(out),))
        return out

    def block_det(self, out: Tensor, x: Tensor) -> Tensor:
        out.data = np.asarray(np.linalg.det(x.data)).astype(out.dtype.numpy_dtype, copy=False)
        return out

    def block_qr(
        self, out: tuple[Tensor, Tensor], x: Tensor, *, mode: str
    ) -> tuple[Tensor, Tensor]:
        q, r = out
        m: Literal["reduced", "complete"] = "complete" if mode == "complete" else "reduced"
        q.data, r.data = _batched(
            lambda a: tuple(np.linalg.qr(a, mode=m)), x.data, (_spec(q), _spec(r))
        )
        return q, r

    def block_eigh(self, out: tuple[Tensor, Tensor], x: Tensor) -> tuple[Tensor, Tensor]:
        w, v = out
        w.data, v.data = _batched(lambda a: tuple(np.linalg.eigh(a)), x.data, (_spec(w), _spec(v)))
        return w, v

    def block_lu(
        self, out: tuple[Tensor, Tensor, Tensor], x: Tensor
    ) -> tuple[Tensor, Tensor, Tensor]:
        p, low, up = out
        p.data, low.data, up.data = _lu(x.data)
        return p, low, up

    def block_svd(
        self, out: tuple[Tensor, Tensor, Tensor], x: Tensor, *, full_matrices: bool
    ) -> tuple[Tensor, Tensor, Tensor]:
        u, s, vh = out
        u.data, s.data, vh.data = _batched(
            lambda a: tuple(np.linalg.svd(a, full_matrices=full_matrices)),
            x.data, (_spec(u), _spec(s), _spec(vh)),
        )  # fmt: skip
        return u, s, vh


def _lu(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(p, l, u) with x = p l u, by Doolittle elimination with partial pivoting (getrf's
    packed form: multipliers below the diagonal, whole rows swapped)."""
    a = x.copy()
    *batch, n, _ = a.shape
    order = np.broadcast_to(np.arange(n), (*batch, n)).copy()  # row i of P^T x is x[order[i]]
    for k in range(n):
        piv = k + np.argmax(np.abs(a[..., k:, k]), axis=-1)  # (...,)
        swap = np.broadcast_to(np.arange(n), (*batch, n)).copy()
        np.put_along_axis(swap, piv[..., None], k, axis=-1)
        swap[..., k] = piv
        a = np.take_along_axis(a, swap[..., None], axis=-2)
        order = np.take_along_axis(order, swap, axis=-1)
        d = a[..., k : k + 1, k]
        # a zero pivot: the column is zero below it; skip it, as getrf
        f = a[..., k + 1 :, k] / np.where(d == 0, 1, d)
        a[..., k + 1 :, k + 1 :] -= f[..., :, None] * a[..., k : k + 1, k + 1 :]
        a[..., k + 1 :, k] = f
    eye = np.eye(n, dtype=a.dtype)
    low = np.tril(a, -1) + eye
    p = np.swapaxes(eye[order], -1, -2)
    return p, low, np.triu(a)


def _solve(a: np.ndarray, b: np.ndarray, spec: tuple[tuple[int, ...], Any]) -> np.ndarray:
    # one array for _batched to walk: [a | b]
    n = a.shape[-1]
    both = np.concatenate([a, b], axis=-1)
    (x,) = _batched(lambda s: np.linalg.solve(s[..., :n], s[..., n:]), both, (spec,))
    return x
