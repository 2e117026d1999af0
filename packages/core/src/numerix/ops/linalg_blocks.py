"""Linear algebra as blocks: cholesky, triangular_solve, solve, inv, det, lu, qr, eigh, svd;
and the matrix functions composed of them: slogdet, eigvalsh, svdvals, matrix_rank,
pinv, matrix_power, matrix_trace.

Each op is a *block*: a backend that has ``block_<name>(out, *inputs, **params)``
computes it natively (the binary backend calls ``numpy.linalg``); any other backend
runs the core's fallback below, written only with public ops (slices, ``where``,
``matmul``, ``concatenate``, reductions) and fixed-size Python loops over the static
matrix size, so it also traces inside ``defn``. No fallback reads tensor values. The
blocks, with their shape, dtype and derivative rules, are declared in
:mod:`numerix.primitives.linalg_blocks`.

Common rules (numpy / array API ``numpy.linalg``):

- Every op works on the last two axes and batches over the leading ones.
- float32, float64, complex64 and complex128 compute as they are; integers compute
  in float32 (as JAX); float16 and bfloat16 compute in float32 and round the result
  back once; bool is refused.
- numerix never raises for singular or non-positive-definite input (it cannot know
  without reading values): the results hold inf/nan instead. ``det`` of a singular
  matrix is 0, as numpy's.
"""

from __future__ import annotations

import operator
from typing import Any

from numerix import dtypes
from numerix._dispatch import block_out
from numerix._shapes import broadcast_shapes
from numerix._tensor import Tensor
from numerix.dtypes import DType, real_dtype
from numerix.errors import ArgumentError, DTypeError, ShapeError
from numerix.ops import creation as creation_ops
from numerix.ops import elementwise as elementwise_ops
from numerix.ops import reduction as reduction_ops
from numerix.ops import shape as shape_ops
from numerix.ops._core import as_tensor, cast, run_block, unify
from numerix.ops.linalg import matmul
from numerix.primitives._registry import fallback_rule
from numerix.primitives.linalg_blocks import (
    cholesky_block,
    det_block,
    eigh_block,
    inv_block,
    lu_block,
    qr_block,
    solve_block,
    svd_block,
    triangular_solve_block,
)

__all__ = [
    "cholesky", "triangular_solve", "solve", "inv", "det", "lu", "qr", "eigh", "svd", "slogdet",
    "eigvalsh", "svdvals", "matrix_rank", "pinv", "matrix_power", "matrix_trace",
]  # fmt: skip

#: Sweeps of the cyclic Jacobi fallback of eigh and the one-sided
#: Jacobi fallback of svd (each rotates every off-diagonal pair once).
JACOBI_SWEEPS = 10

_TRANSFORMS = ("none", "transpose", "adjoint")
_QR_MODES = ("reduced", "complete")
_LOW = (dtypes.float16, dtypes.bfloat16)


# ---------------------------------------------------------------- checks and dtypes


def _compute_dtype(op: str, d: DType, *operands: Tensor) -> DType:
    if d.kind == "b":
        names = ", ".join(t.describe() for t in operands)
        raise DTypeError(
            f"{op}: bool tensors are not supported ({names}); cast with astype(numerix.float32)"
        )
    if d.kind in "iu" or d in _LOW:
        return dtypes.float32
    return d


def _result_dtype(d: DType) -> DType:
    # the dtype a result of input dtype d has: f16/bf16 round back, the rest as computed
    return d if d in _LOW else (dtypes.float32 if d.kind in "iu" else d)


def _square(op: str, t: Tensor, name: str = "x") -> int:
    if t.ndim < 2:
        raise ShapeError(
            f"{op}: {name} must have at least 2 dimensions (..., n, n), got {t.describe()}"
        )
    if t.shape[-1] != t.shape[-2]:
        raise ShapeError(
            f"{op}: {name} must be square in its last two axes, got {t.describe()}; "
            f"{'use qr or lstsq for non-square matrices' if name == 'x' else 'pass a square a'}"
        )
    return t.shape[-1]


def _one(op: str, x: Any) -> tuple[Tensor, DType]:
    t = as_tensor(x, op)
    cd = _compute_dtype(op, t.dtype, t)
    return cast(t, cd), _result_dtype(t.dtype)


def _two(op: str, a: Any, b: Any) -> tuple[Tensor, Tensor, DType]:
    _, (ta, tb) = unify(op, a, b)
    d = dtypes.promote_types(ta.dtype, tb.dtype, op)
    cd = _compute_dtype(op, d, ta, tb)
    return cast(ta, cd), cast(tb, cd), _result_dtype(d)


def _back(t: Tensor, d: DType) -> Tensor:
    return cast(t, d) if d in _LOW else t


def _bcast(t: Tensor, shape: tuple[int, ...]) -> Tensor:
    return t if t.shape == shape else shape_ops.broadcast_to(t, shape)


def _h(x: Tensor) -> Tensor:
    # conjugate transpose of the last two axes
    return elementwise_ops.conj(shape_ops.matrix_transpose(x))


def _idx(n: int, like: Tensor, column: bool) -> Tensor:
    # 0..n-1 along the rows ((n, 1)) or the columns ((n,)), for masks
    i = creation_ops.arange(n, backend=like.backend)
    return shape_ops.reshape(i, (n, 1)) if column else i


# ---------------------------------------------------------------- cholesky


def cholesky(x: Any, /, *, upper: bool = False) -> Tensor:
    """The Cholesky factor of Hermitian positive-definite matrices (array API
    ``linalg.cholesky``; Nx ``LinAlg.cholesky``).

    Only the lower triangle of ``x`` is read. Returns ``L`` (lower, ``x = L L^H``) or,
    with ``upper=True``, ``U = L^H`` (``x = U^H U``). Batches over leading axes.
    A matrix that is not positive-definite gives NaN instead of raising (numpy raises
    ``LinAlgError``): in every element on binary and torch, in the lower triangle on xla
    (docs/known-differences.md); ``numerix.isnan(L).any(axis=(-2, -1))`` finds them.

    >>> import numerix as nx
    >>> nx.cholesky(nx.tensor([[4.0, 2.0], [2.0, 5.0]])).tolist()
    [[2.0, 0.0], [1.0, 2.0]]

    Non-square input raises::

        nx.cholesky(nx.ones((2, 3)))  # ShapeError: cholesky: x must be square ...
    """
    t, rd = _one("cholesky", x)
    _square("cholesky", t)
    out = block_out(cholesky_block, t, upper=bool(upper))
    return _back(run_block(cholesky_block, out, cholesky_fallback, t, upper=bool(upper)), rd)


@fallback_rule("cholesky")
def cholesky_fallback(x: Tensor, *, upper: bool) -> Tensor:
    """Column-by-column (Cholesky–Crout) factorisation: column j of L is
    ``(x[:, j] - L[:, :j] L[j, :j]^H) / sqrt(pivot)`` below the diagonal."""
    n = x.shape[-1]
    if n == 0:
        return x
    rows = _idx(n, x, column=True)
    cols: list[Tensor] = []
    for j in range(n):
        v = x[..., :, j : j + 1]
        if cols:
            lp = shape_ops.concatenate(cols, axis=-1)
            v = v - matmul(lp, _h(lp[..., j : j + 1, :]))
        d = elementwise_ops.sqrt(elementwise_ops.real(v[..., j : j + 1, :]))
        dd = cast(d, x.dtype)
        cols.append(
            elementwise_ops.where(rows > j, v / dd, elementwise_ops.where(rows == j, dd, 0))
        )
    low = shape_ops.concatenate(cols, axis=-1)
    return _h(low) if upper else low


# ---------------------------------------------------------------- triangular solve


def triangular_solve(
    a: Any, b: Any, *, lower: bool = True, left_side: bool = True, transform_a: str = "none"
) -> Tensor:
    """Solve a triangular system (Nx ``LinAlg.triangular_solve``; XLA ``TriangularSolve``).

    Finds ``x`` with ``op(a) @ x = b`` (``left_side=True``) or ``x @ op(a) = b``, where
    ``op`` is the identity, the transpose or the conjugate transpose
    (``transform_a="none" | "transpose" | "adjoint"``). Only the ``lower`` (or upper)
    triangle of ``a`` (``(..., n, n)``) is read. ``b`` is ``(..., n, k)`` (``(..., k, n)``
    for the right side) or a 1-d vector of length ``n``; batch axes broadcast. A zero on
    the diagonal gives inf/nan.

    >>> import numerix as nx
    >>> a = nx.tensor([[2.0, 0.0], [1.0, 1.0]])
    >>> nx.triangular_solve(a, nx.tensor([2.0, 3.0])).tolist()
    [1.0, 2.0]

    Mismatched sizes raise::

        nx.triangular_solve(a, nx.ones(3))  # ShapeError: triangular_solve: b ... length 2
    """
    op = "triangular_solve"
    if transform_a not in _TRANSFORMS:
        raise ArgumentError(
            f"{op}: transform_a must be one of {', '.join(map(repr, _TRANSFORMS))}, "
            f"got {transform_a!r}"
        )
    ta, tb, rd = _two(op, a, b)
    n = _square(op, ta, "a")
    left = bool(left_side)
    tb, vector, shape = _rhs(op, ta, tb, n, left)
    ta = _bcast(ta, shape[:-2] + (n, n))
    params = {"lower": bool(lower), "left_side": left, "transform_a": transform_a}
    out = block_out(triangular_solve_block, ta, tb, **params)
    r = run_block(triangular_solve_block, out, triangular_solve_fallback, ta, tb, **params)
    if vector:
        r = shape_ops.reshape(r, r.shape[:-2] + (n,))
    return _back(r, rd)


def _rhs(op: str, a: Tensor, b: Tensor, n: int, left: bool) -> tuple[Tensor, bool, tuple[int, ...]]:
    # b as a matrix broadcast to the common batch; whether it was a vector; x's shape
    if b.ndim == 0:
        raise ShapeError(f"{op}: b must be at least 1-d, got {b.describe()}")
    vector = b.ndim == 1
    if vector:
        if b.shape[0] != n:
            raise ShapeError(
                f"{op}: b {b.describe()} must have length {n} to match a {a.describe()}"
            )
        b = shape_ops.reshape(b, (n, 1) if left else (1, n))
    k_axis = -2 if left else -1
    if b.shape[k_axis] != n:
        side = "rows" if left else "columns"
        raise ShapeError(f"{op}: b {b.describe()} must have {n} {side} to match a {a.describe()}")
    shape = broadcast_shapes(op, a.shape[:-2], b.shape[:-2]) + b.shape[-2:]
    return _bcast(b, shape), vector, shape


@fallback_rule("triangular_solve")
def triangular_solve_fallback(
    a: Tensor, b: Tensor, *, lower: bool, left_side: bool, transform_a: str
) -> Tensor:
    """Forward or back substitution, one row of x at a time; right-side and transposed
    systems are turned into left-side ones first."""
    if transform_a != "none":
        a = shape_ops.matrix_transpose(a)
        if transform_a == "adjoint":
            a = elementwise_ops.conj(a)
        lower = not lower
    if not left_side:
        # x a = b  <=>  a^T x^T = b^T
        x = triangular_solve_fallback(
            shape_ops.matrix_transpose(a), shape_ops.matrix_transpose(b),
            lower=not lower, left_side=True, transform_a="none",
        )  # fmt: skip
        return shape_ops.matrix_transpose(x)
    n = a.shape[-1]
    if n == 0 or b.shape[-1] == 0:
        return b
    order = range(n) if lower else range(n - 1, -1, -1)
    done: dict[int, Tensor] = {}
    for i in order:
        r = b[..., i : i + 1, :]
        if done:
            xs = shape_ops.concatenate([done[k] for k in sorted(done)], axis=-2)
            # the solved rows are contiguous: :i when lower, i+1: when upper
            coef = a[..., i : i + 1, :i] if lower else a[..., i : i + 1, i + 1 :]
            r = r - matmul(coef, xs)
        done[i] = r / a[..., i : i + 1, i : i + 1]
    return shape_ops.concatenate([done[i] for i in range(n)], axis=-2)


# ---------------------------------------------------------------- LU: solve, inv, det


def solve(a: Any, b: Any, /) -> Tensor:
    """Solve ``a @ x = b`` for square ``a`` (array API ``linalg.solve``).

    ``a`` is ``(..., n, n)``; ``b`` is ``(..., n, k)`` or, when 1-d, a vector of length
    ``n`` (as numpy 2 and the array API); batch axes broadcast. A singular ``a`` (a zero
    pivot) gives non-finite values instead of raising (numpy raises ``LinAlgError``): NaN
    on binary and torch, the LU's inf and NaN on xla (docs/known-differences.md); a nearly
    singular one gives large finite values, as numpy.

    >>> import numerix as nx
    >>> nx.solve(nx.tensor([[2.0, 0.0], [0.0, 4.0]]), nx.tensor([2.0, 8.0])).tolist()
    [1.0, 2.0]

    Mismatched sizes raise::

        nx.solve(nx.eye(2), nx.ones(3))  # ShapeError: solve: b ... must have length 2
    """
    ta, tb, rd = _two("solve", a, b)
    n = _square("solve", ta, "a")
    tb, vector, shape = _rhs("solve", ta, tb, n, True)
    ta = _bcast(ta, shape[:-2] + (n, n))
    r = run_block(solve_block, block_out(solve_block, ta, tb), solve_fallback, ta, tb)
    if vector:
        r = shape_ops.reshape(r, r.shape[:-2] + (n,))
    return _back(r, rd)


def _lu_steps(m: Tensor, n: int, *, packed: bool = False) -> tuple[Tensor, Tensor, Tensor | None]:
    """Gaussian elimination with partial pivoting on the first ``n`` columns of ``m``
    (``(..., n, w)``, w >= n): returns (m reduced to upper-triangular form in those
    columns, the rest transformed alike; the permutation's sign in m's dtype; None).
    Pivot rows are chosen by argmax and swapped with where.

    ``packed`` (for :func:`lu`) keeps, as LAPACK's getrf, the multipliers below the
    diagonal (the unit-lower L, rows swapped along with the rest) and returns P^T (the
    row permutation applied, as a matrix: P^T x = L U) in place of None."""
    rows = _idx(n, m, column=True)
    flat = creation_ops.arange(n, backend=m.backend)
    cols = _idx(m.shape[-1], m, column=False)
    sign = creation_ops.ones(m.shape[:-2], dtype=m.dtype, backend=m.backend)
    pt = (
        _bcast(creation_ops.eye(n, dtype=m.dtype, backend=m.backend), m.shape[:-2] + (n, n))
        if packed
        else None
    )
    for k in range(n):
        # in packed form the columns before k hold multipliers; column k does not yet
        mag = elementwise_ops.where(flat >= k, elementwise_ops.abs(m[..., :, k]), -1)
        p = reduction_ops.argmax(mag, axis=-1, keepdims=True)  # (..., 1)
        at_p = shape_ops.expand_dims(flat == p, -1)  # (..., n, 1)
        m = _swap_rows(m, k, at_p, rows)
        if pt is not None:
            pt = _swap_rows(pt, k, at_p, rows)
        sign = elementwise_ops.where(shape_ops.squeeze(p, -1) == k, sign, -sign)
        piv = m[..., k : k + 1, k : k + 1]
        # a zero pivot means the column is zero below it (it was the largest): skip it,
        # as LAPACK's getrf does, so that det gives 0 rather than nan
        safe = elementwise_ops.where(piv == 0, 1, piv)
        f = elementwise_ops.where(rows > k, m[..., :, k : k + 1] / safe, 0)
        row_k = m[..., k : k + 1, :]
        if packed:
            # the pivot row's multipliers (columns < k) are not part of the elimination
            row_k = elementwise_ops.where(cols >= k, row_k, 0)
        m = m - f * row_k
        if packed:
            m = elementwise_ops.where(elementwise_ops.logical_and(rows > k, cols == k), f, m)
    return m, sign, pt


def _swap_rows(t: Tensor, k: int, at_p: Tensor, rows: Tensor) -> Tensor:
    # rows k and p (at_p: the (..., n, 1) mask of row p) exchanged
    pivot_row = reduction_ops.sum(elementwise_ops.where(at_p, t, 0), axis=-2, keepdims=True)
    return elementwise_ops.where(
        rows == k, pivot_row, elementwise_ops.where(at_p, t[..., k : k + 1, :], t)
    )


@fallback_rule("solve")
def solve_fallback(a: Tensor, b: Tensor) -> Tensor:
    """LU with partial pivoting on ``[a | b]``, then back substitution."""
    n = a.shape[-1]
    if n == 0 or b.shape[-1] == 0:
        return b
    m, _, _ = _lu_steps(shape_ops.concatenate([a, b], axis=-1), n)
    return triangular_solve_fallback(
        m[..., :, :n], m[..., :, n:], lower=False, left_side=True, transform_a="none"
    )


def inv(x: Any, /) -> Tensor:
    """The inverse of square matrices (array API ``linalg.inv``); batches over leading
    axes. A singular matrix (a zero pivot) gives non-finite values instead of raising
    (numpy raises ``LinAlgError``): NaN on binary and torch, the LU's inf and NaN on xla
    (docs/known-differences.md); a nearly singular one gives large finite values, as numpy.

    >>> import numerix as nx
    >>> nx.inv(nx.tensor([[2.0, 0.0], [0.0, 4.0]])).tolist()
    [[0.5, 0.0], [0.0, 0.25]]

    Non-square input raises::

        nx.inv(nx.ones((2, 3)))  # ShapeError: inv: x must be square ...
    """
    t, rd = _one("inv", x)
    _square("inv", t)
    return _back(run_block(inv_block, block_out(inv_block, t), inv_fallback, t), rd)


@fallback_rule("inv")
def inv_fallback(x: Tensor) -> Tensor:
    """``solve(x, I)``."""
    n = x.shape[-1]
    eye = _bcast(creation_ops.eye(n, dtype=x.dtype, backend=x.backend), x.shape)
    return solve_fallback(x, eye)


def det(x: Any, /) -> Tensor:
    """The determinant of square matrices (array API ``linalg.det``; Nx
    ``LinAlg.determinant``); shape ``x.shape[:-2]``. The 0x0 matrix has determinant 1.

    >>> import numerix as nx
    >>> float(nx.det(nx.tensor([[2.0, 1.0], [0.0, 3.0]])))
    6.0

    Non-square input raises::

        nx.det(nx.ones((2, 3)))  # ShapeError: det: x must be square ...
    """
    t, rd = _one("det", x)
    _square("det", t)
    return _back(run_block(det_block, block_out(det_block, t), det_fallback, t), rd)


@fallback_rule("det")
def det_fallback(x: Tensor) -> Tensor:
    """The product of U's diagonal (LU with partial pivoting) times the pivots' sign."""
    n = x.shape[-1]
    if n == 0:
        return creation_ops.ones(x.shape[:-2], dtype=x.dtype, backend=x.backend)
    m, d, _ = _lu_steps(x, n)
    for k in range(n):
        d = d * m[..., k, k]
    return d


def lu(x: Any, /) -> tuple[Tensor, Tensor, Tensor]:
    """LU factorisation with partial pivoting, ``x = p @ l @ u`` (Nx ``LinAlg.lu``;
    scipy ``linalg.lu``).

    ``x`` is ``(..., n, n)`` (square, as Nx; scipy also takes rectangular matrices);
    returns the permutation matrix ``p``, the unit-lower-triangular ``l`` and the
    upper-triangular ``u``, each ``(..., n, n)`` in the result dtype. The pivot of each
    column is its first largest ``|entry|`` on or below the diagonal (LAPACK's getrf);
    a singular matrix gives a zero on ``u``'s diagonal, not an error.

    >>> import numerix as nx
    >>> p, l, u = nx.lu(nx.tensor([[1.0, 2.0], [4.0, 4.0]]))
    >>> p.tolist(), l.tolist(), u.tolist()
    ([[0.0, 1.0], [1.0, 0.0]], [[1.0, 0.0], [0.25, 1.0]], [[4.0, 4.0], [0.0, 1.0]])

    Non-square input raises::

        nx.lu(nx.ones((2, 3)))  # ShapeError: lu: x must be square ...
    """
    t, rd = _one("lu", x)
    _square("lu", t)
    p, low, up = run_block(lu_block, block_out(lu_block, t), lu_fallback, t)
    return _back(p, rd), _back(low, rd), _back(up, rd)


@fallback_rule("lu")
def lu_fallback(x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """The packed elimination of :func:`solve` (multipliers kept below the diagonal,
    the row permutation tracked as a matrix), unpacked into p, l, u."""
    n = x.shape[-1]
    if n == 0:
        return x, x, x
    m, _, pt = _lu_steps(x, n, packed=True)
    assert pt is not None
    rows, cols = _idx(n, x, column=True), _idx(n, x, column=False)
    low = elementwise_ops.where(rows > cols, m, elementwise_ops.where(rows == cols, 1, 0))
    up = elementwise_ops.where(rows <= cols, m, 0)
    return shape_ops.matrix_transpose(pt), cast(low, x.dtype), cast(up, x.dtype)


# ---------------------------------------------------------------- qr


def qr(x: Any, /, *, mode: str = "reduced") -> tuple[Tensor, Tensor]:
    """QR factorisation ``x = q @ r`` (array API ``linalg.qr``; Nx ``LinAlg.qr``).

    ``x`` is ``(..., m, n)``; with ``k = min(m, n)``, ``mode="reduced"`` gives ``q``
    ``(..., m, k)`` with orthonormal columns and upper-triangular ``r`` ``(..., k, n)``;
    ``mode="complete"`` gives a unitary ``q`` ``(..., m, m)`` and ``r`` ``(..., m, n)``.
    The factors are unique up to the phases of ``r``'s diagonal: backends may differ
    there (as LAPACK versions do).

    >>> import numerix as nx
    >>> q, r = nx.qr(nx.ones((4, 3)))
    >>> q.shape, r.shape
    ((4, 3), (3, 3))

    An unknown mode raises::

        nx.qr(nx.ones((2, 2)), mode="r")  # ArgumentError: qr: mode must be one of ...
    """
    if mode not in _QR_MODES:
        raise ArgumentError(
            f"qr: mode must be one of {', '.join(map(repr, _QR_MODES))}, got {mode!r}"
        )
    t, rd = _one("qr", x)
    if t.ndim < 2:
        raise ShapeError(f"qr: x must have at least 2 dimensions (..., m, n), got {t.describe()}")
    q, r = run_block(qr_block, block_out(qr_block, t, mode=mode), qr_fallback, t, mode=mode)
    return _back(q, rd), _back(r, rd)


@fallback_rule("qr")
def qr_fallback(x: Tensor, *, mode: str) -> tuple[Tensor, Tensor]:
    """Householder reflections ``H = I - 2 v v^H`` applied to ``x`` column by column and
    accumulated into ``q``."""
    *batch, m, n = x.shape
    q = _bcast(creation_ops.eye(m, dtype=x.dtype, backend=x.backend), (*batch, m, m))
    r = x
    rows = _idx(m, x, column=True)
    for j in range(min(m - 1, n)):
        col = elementwise_ops.where(rows >= j, r[..., :, j : j + 1], 0)
        norm = elementwise_ops.sqrt(
            reduction_ops.sum(
                elementwise_ops.square(elementwise_ops.abs(col)), axis=-2, keepdims=True
            )
        )
        x0 = r[..., j : j + 1, j : j + 1]
        a0 = elementwise_ops.abs(x0)
        phase = elementwise_ops.where(
            a0 == 0, 1, x0 / cast(elementwise_ops.where(a0 == 0, 1, a0), x.dtype)
        )
        alpha = -phase * cast(norm, x.dtype)
        v = col - elementwise_ops.where(rows == j, alpha, 0)
        vn = elementwise_ops.sqrt(
            reduction_ops.sum(
                elementwise_ops.square(elementwise_ops.abs(v)), axis=-2, keepdims=True
            )
        )
        v = elementwise_ops.where(
            vn == 0, 0, v / cast(elementwise_ops.where(vn == 0, 1, vn), x.dtype)
        )
        r = r - 2 * matmul(v, matmul(_h(v), r))
        q = q - 2 * matmul(matmul(q, v), _h(v))
    # below the diagonal r holds rounding residue of exact zeros
    r = elementwise_ops.where(_idx(n, x, column=False) >= rows, r, 0)
    k = m if mode == "complete" else min(m, n)
    return q[..., :, :k], r[..., :k, :]


# ---------------------------------------------------------------- eigh


def eigh(x: Any, /) -> tuple[Tensor, Tensor]:
    """Eigenvalues and eigenvectors of Hermitian matrices (array API ``linalg.eigh``;
    Nx ``LinAlg.eigh``).

    Only the lower triangle of ``x`` is read. Returns ``(w, v)``: the eigenvalues in
    ascending order, in the real dtype (float32 for complex64), shape ``(..., n)``,
    and the orthonormal eigenvectors as the columns of ``v`` (``x @ v = v * w``), each
    unique only up to a sign (a phase, for complex) that backends may choose apart.

    >>> import numerix as nx
    >>> w, v = nx.eigh(nx.tensor([[2.0, 0.0], [0.0, 1.0]]))
    >>> w.tolist()
    [1.0, 2.0]

    Non-square input raises::

        nx.eigh(nx.ones((2, 3)))  # ShapeError: eigh: x must be square ...
    """
    t, rd = _one("eigh", x)
    _square("eigh", t)
    w, v = run_block(eigh_block, block_out(eigh_block, t), eigh_fallback, t)
    return _back(w, real_dtype(rd)), _back(v, rd)


@fallback_rule("eigh")
def eigh_fallback(x: Tensor) -> tuple[Tensor, Tensor]:
    """Cyclic Jacobi: :data:`JACOBI_SWEEPS` sweeps of unitary rotations, each zeroing one
    off-diagonal pair, then the eigenvalues ranked and the columns permuted to match."""
    n = x.shape[-1]
    rd = real_dtype(x.dtype)
    rows = _idx(n, x, column=True)
    cols = _idx(n, x, column=False)
    # the Hermitian matrix of x's lower triangle, with a real diagonal
    a = elementwise_ops.where(rows > cols, x, _h(x))
    a = elementwise_ops.where(rows == cols, cast(elementwise_ops.real(a), x.dtype), a)
    v = _bcast(creation_ops.eye(n, dtype=x.dtype, backend=x.backend), x.shape)
    for _ in range(JACOBI_SWEEPS if n > 1 else 0):
        for p in range(n - 1):
            for q in range(p + 1, n):
                a, v = _jacobi_rotate(a, v, p, q, rows, cols)
    w = elementwise_ops.real(
        shape_ops.squeeze(
            reduction_ops.sum(elementwise_ops.where(rows == cols, a, 0), axis=-1, keepdims=True), -1
        )
    )
    w = cast(w, rd)
    if n <= 1:
        return w, v
    # rank of each eigenvalue (ties by position), then the permutation matrix P: w P, v P
    wi, wj = shape_ops.expand_dims(w, -1), shape_ops.expand_dims(w, -2)
    before = elementwise_ops.logical_or(wj < wi, elementwise_ops.logical_and(wj == wi, cols < rows))
    rank = reduction_ops.sum(
        elementwise_ops.where(before, 1, 0), axis=-1, keepdims=True
    )  # (..., n, 1)
    perm = elementwise_ops.where(rank == cols, 1, 0)
    w_sorted = shape_ops.squeeze(matmul(shape_ops.expand_dims(w, -2), cast(perm, rd)), -2)
    return w_sorted, matmul(v, cast(perm, x.dtype))


def _rotation(app: Tensor, aqq: Tensor, apq: Tensor, dt: DType) -> tuple[Tensor, Tensor, Tensor]:
    # J = [[c, s e^{i phi}], [-s e^{-i phi}, c]] at (p, q) with a_pq = |a_pq| e^{i phi}
    # (Golub & Van Loan's symSchur2 on the phase-rotated pair): J^H [[app, apq], [apq*, aqq]] J
    # is diagonal. Returns (c, J[p, q], J[q, p]) in dt.
    mag = elementwise_ops.abs(apq)
    # a subnormal a_pq counts as zero: dividing by it overflows (complex64 division
    # goes through 1 / |a_pq|)
    zero = mag <= dtypes.finfo(mag.dtype).smallest_normal
    # t = sign(tau) / (|tau| + sqrt(1 + tau^2)) with tau = delta / (2 |a_pq|), multiplied
    # through by 2 |a_pq| so that a tiny a_pq never overflows tau
    delta = aqq - app
    den = elementwise_ops.abs(delta) + elementwise_ops.sqrt(
        elementwise_ops.square(delta) + 4 * elementwise_ops.square(mag)
    )
    t = elementwise_ops.where(delta >= 0, 2.0, -2.0) * mag / elementwise_ops.where(zero, 1, den)
    c = 1 / elementwise_ops.sqrt(1 + elementwise_ops.square(t))
    s = elementwise_ops.where(zero, 0, t * c)
    c = elementwise_ops.where(zero, 1, c)
    cc, sc = cast(c, dt), cast(s, dt)
    ph = apq / cast(elementwise_ops.where(zero, 1, mag), dt)  # the sign of a_pq, for real dtypes
    return cc, sc * ph, -sc * elementwise_ops.conj(ph)


def _rotate_columns(
    m: Tensor, p: int, q: int, cc: Tensor, s_pq: Tensor, s_qp: Tensor, cols: Tensor
) -> Tensor:
    # m J: columns p and q
    mp, mq = m[..., :, p : p + 1], m[..., :, q : q + 1]
    return elementwise_ops.where(
        cols == p, cc * mp + s_qp * mq, elementwise_ops.where(cols == q, s_pq * mp + cc * mq, m)
    )


def _jacobi_rotate(
    a: Tensor, v: Tensor, p: int, q: int, rows: Tensor, cols: Tensor
) -> tuple[Tensor, Tensor]:
    # a <- J^H a J, v <- v J
    app = elementwise_ops.real(a[..., p : p + 1, p : p + 1])
    aqq = elementwise_ops.real(a[..., q : q + 1, q : q + 1])
    cc, s_pq, s_qp = _rotation(app, aqq, a[..., p : p + 1, q : q + 1], a.dtype)
    a = _rotate_columns(a, p, q, cc, s_pq, s_qp, cols)
    ap, aq = a[..., p : p + 1, :], a[..., q : q + 1, :]
    # J^H a: rows p and q
    a = elementwise_ops.where(
        rows == p,
        cc * ap + elementwise_ops.conj(s_qp) * aq,
        elementwise_ops.where(rows == q, elementwise_ops.conj(s_pq) * ap + cc * aq, a),
    )
    return a, _rotate_columns(v, p, q, cc, s_pq, s_qp, cols)


# ---------------------------------------------------------------- svd


def svd(x: Any, /, *, full_matrices: bool = True) -> tuple[Tensor, Tensor, Tensor]:
    """Singular value decomposition ``x = u @ diag(s) @ vh`` (array API ``linalg.svd``;
    Nx ``LinAlg.svd``).

    ``x`` is ``(..., m, n)``; with ``k = min(m, n)`` returns ``u`` ``(..., m, m)``, the
    singular values ``s`` ``(..., k)`` in descending order and in the real dtype
    (float32 for complex64), and ``vh`` ``(..., n, n)``; ``full_matrices=False`` gives
    ``u`` ``(..., m, k)`` and ``vh`` ``(..., k, n)``. The singular vectors are unique only
    up to a phase shared by ``u[..., :, i]`` and ``vh[..., i, :]`` (and, for repeated or
    zero singular values, up to a rotation among them): backends may choose apart.

    >>> import numerix as nx
    >>> u, s, vh = nx.svd(nx.tensor([[0.0, 2.0], [3.0, 0.0]]))
    >>> s.tolist()
    [3.0, 2.0]

    1-d input raises::

        nx.svd(nx.ones(3))  # ShapeError: svd: x must have at least 2 dimensions ...
    """
    t, rd = _one("svd", x)
    if t.ndim < 2:
        raise ShapeError(f"svd: x must have at least 2 dimensions (..., m, n), got {t.describe()}")
    full = bool(full_matrices)
    out = block_out(svd_block, t, full_matrices=full)
    u, s, vh = run_block(svd_block, out, svd_fallback, t, full_matrices=full)
    return _back(u, rd), _back(s, real_dtype(rd)), _back(vh, rd)


@fallback_rule("svd")
def svd_fallback(x: Tensor, *, full_matrices: bool) -> tuple[Tensor, Tensor, Tensor]:
    """One-sided (Hestenes) Jacobi on the columns of ``x`` (of ``x^H`` when wide):
    :data:`JACOBI_SWEEPS` sweeps of the eigh rotations of ``x^H x``'s 2x2 blocks applied
    to ``x`` from the right and accumulated in ``v``, until the columns of ``x v`` are
    orthogonal; their norms, ranked, are ``s``, and a Householder QR of the ranked
    columns gives ``u`` (completed to a unitary matrix when ``full_matrices``)."""
    m, n = x.shape[-2:]
    if m < n:
        # x^H = u' s v'^H  <=>  x = v' s u'^H
        u, s, vh = svd_fallback(_h(x), full_matrices=full_matrices)
        return _h(vh), s, _h(u)
    rd = real_dtype(x.dtype)
    cols = _idx(n, x, column=False)
    a = x
    v = _bcast(creation_ops.eye(n, dtype=x.dtype, backend=x.backend), x.shape[:-2] + (n, n))
    for _ in range(JACOBI_SWEEPS if n > 1 else 0):
        for p in range(n - 1):
            for q in range(p + 1, n):
                ap, aq = a[..., :, p : p + 1], a[..., :, q : q + 1]
                gpp = reduction_ops.sum(
                    elementwise_ops.square(elementwise_ops.abs(ap)), axis=-2, keepdims=True
                )
                gqq = reduction_ops.sum(
                    elementwise_ops.square(elementwise_ops.abs(aq)), axis=-2, keepdims=True
                )
                gpq = reduction_ops.sum(elementwise_ops.conj(ap) * aq, axis=-2, keepdims=True)
                cc, s_pq, s_qp = _rotation(gpp, gqq, gpq, x.dtype)
                a = _rotate_columns(a, p, q, cc, s_pq, s_qp, cols)
                v = _rotate_columns(v, p, q, cc, s_pq, s_qp, cols)
    s = elementwise_ops.sqrt(
        reduction_ops.sum(elementwise_ops.square(elementwise_ops.abs(a)), axis=-2)
    )  # (..., n)
    s = cast(s, rd)
    if n > 1:
        # rank of each singular value, largest first (ties by position); P: s P, a P, v P
        rows = _idx(n, x, column=True)
        si, sj = shape_ops.expand_dims(s, -1), shape_ops.expand_dims(s, -2)
        before = elementwise_ops.logical_or(
            sj > si, elementwise_ops.logical_and(sj == si, cols < rows)
        )
        rank = reduction_ops.sum(
            elementwise_ops.where(before, 1, 0), axis=-1, keepdims=True
        )  # (..., n, 1)
        perm = elementwise_ops.where(rank == cols, 1, 0)
        s = shape_ops.squeeze(matmul(shape_ops.expand_dims(s, -2), cast(perm, rd)), -2)
        a = matmul(a, cast(perm, x.dtype))
        v = matmul(v, cast(perm, x.dtype))
    # a = u diag(s): its QR has r diagonal up to rounding, with |r_ii| = s_i; q's columns
    # times the phases of r's diagonal are u (q is unitary even where s_i = 0)
    uq, r = qr_fallback(a, mode="complete" if full_matrices else "reduced")
    if n:
        d = _diagonal_of(r[..., :n, :n])  # (..., n)
        ad = elementwise_ops.abs(d)
        ph = elementwise_ops.where(
            ad == 0, 1, d / cast(elementwise_ops.where(ad == 0, 1, ad), x.dtype)
        )
        uq = shape_ops.concatenate(
            [uq[..., :, :n] * shape_ops.expand_dims(ph, -2), uq[..., :, n:]], axis=-1
        )
    return uq, s, _h(v)


def _diagonal_of(t: Tensor) -> Tensor:
    # the main diagonal of square matrices (..., n, n) -> (..., n)
    n = t.shape[-1]
    eye = _idx(n, t, column=True) == _idx(n, t, column=False)
    return reduction_ops.sum(elementwise_ops.where(eye, t, 0), axis=-1)


# ---------------------------------------------------------------- composites of the blocks


def slogdet(x: Any, /) -> tuple[Tensor, Tensor]:
    """The sign and the natural log of the absolute value of the determinant of square
    matrices (array API ``linalg.slogdet``, ``numpy.linalg.slogdet``), from :func:`lu`:
    ``det(x) = sign * exp(logabsdet)`` without det's overflow or underflow.

    Returns ``(sign, logabsdet)``, each of shape ``x.shape[:-2]``: ``sign`` in the result
    dtype (for complex input a unit complex number), ``logabsdet`` in its real dtype.
    A singular matrix gives ``sign = 0`` and ``logabsdet = -inf``, as numpy; the 0x0
    matrix gives ``(1, 0)``. Dtypes as :func:`det`.

    >>> import numerix as nx
    >>> sign, logabsdet = nx.slogdet(nx.tensor([[0.0, 2.0], [3.0, 0.0]]))
    >>> sign.item(), round(logabsdet.item(), 4)
    (-1.0, 1.7918)
    >>> nx.slogdet(nx.ones((2, 3)))
    Traceback (most recent call last):
    ...
    numerix.errors.ShapeError: slogdet: x must be square in its last two axes, got f32[2][3] binary(cpu); use qr or lstsq for non-square matrices
    """
    t, rd = _one("slogdet", x)
    n = _square("slogdet", t)
    real = real_dtype(t.dtype)
    if n == 0:
        ones = creation_ops.ones(t.shape[:-2], dtype=t.dtype, backend=t.backend)
        zero = creation_ops.zeros(t.shape[:-2], dtype=real, backend=t.backend)
        return _back(ones, rd), _back(zero, real_dtype(rd))
    p, _, u = lu(t)
    d = _diagonal_of(u)
    ad = elementwise_ops.abs(d)
    zero_pivot = ad == 0
    unit = elementwise_ops.where(
        zero_pivot, 0, d / cast(elementwise_ops.where(zero_pivot, 1, ad), t.dtype)
    )
    # p is a permutation matrix: its determinant is exactly +1 or -1
    sign = det(p) * reduction_ops.prod(unit, axis=-1)
    logabsdet = reduction_ops.sum(elementwise_ops.log(ad), axis=-1)
    return _back(sign, rd), _back(logabsdet, real_dtype(rd))


def eigvalsh(x: Any, /) -> Tensor:
    """The eigenvalues of Hermitian matrices, ascending (array API ``linalg.eigvalsh``,
    ``numpy.linalg.eigvalsh``): the first result of :func:`eigh`, shape ``(..., n)``, in
    the real dtype (float32 for complex64). Only the lower triangle of ``x`` is read.

    >>> import numerix as nx
    >>> nx.eigvalsh(nx.tensor([[2.0, 1.0], [1.0, 2.0]])).tolist()
    [1.0, 3.0]
    >>> nx.eigvalsh(nx.ones(3))
    Traceback (most recent call last):
    ...
    numerix.errors.ShapeError: eigvalsh: x must have at least 2 dimensions (..., n, n), got f32[3] binary(cpu)
    """
    t, _ = _one("eigvalsh", x)
    _square("eigvalsh", t)
    return eigh(x)[0]


def svdvals(x: Any, /) -> Tensor:
    """The singular values of matrices, descending (array API ``linalg.svdvals``,
    ``numpy.linalg.svdvals``): the second result of :func:`svd`, shape ``(..., k)``
    with ``k = min(m, n)``, in the real dtype (float32 for complex64).

    >>> import numerix as nx
    >>> nx.svdvals(nx.tensor([[0.0, 2.0], [3.0, 0.0]])).tolist()
    [3.0, 2.0]
    >>> nx.svdvals(nx.ones(3))
    Traceback (most recent call last):
    ...
    numerix.errors.ShapeError: svdvals: x must have at least 2 dimensions (..., m, n), got f32[3] binary(cpu)
    """
    t, rd = _matrices("svdvals", x)
    if min(t.shape[-2:]) == 0:
        return creation_ops.zeros(t.shape[:-2] + (0,), dtype=real_dtype(rd), backend=t.backend)
    return svd(x, full_matrices=False)[1]


def _matrices(op: str, x: Any) -> tuple[Tensor, DType]:
    t, rd = _one(op, x)
    if t.ndim < 2:
        raise ShapeError(f"{op}: x must have at least 2 dimensions (..., m, n), got {t.describe()}")
    return t, rd


def _cutoff(op: str, t: Tensor, s: Tensor, rtol: Any, rd: DType) -> Tensor:
    # rtol times the largest singular value of each matrix, (..., 1); rtol defaults to
    # max(m, n) * eps of the result's real dtype (numpy's and the array API's default)
    if rtol is None:
        rtol = max(t.shape[-2:]) * float(dtypes.finfo(real_dtype(rd)).eps)
    elif isinstance(rtol, Tensor) or not isinstance(rtol, (int, float)) or isinstance(rtol, bool):
        r = as_tensor(rtol, op)
        if r.dtype.kind not in "iuf":
            raise DTypeError(
                f"{op}: rtol must be a real number or a real tensor, got {r.describe()}"
            )
        batch = t.shape[:-2]
        if r.ndim > len(batch) or any(a not in (1, b) for a, b in zip(r.shape[::-1], batch[::-1])):
            raise ShapeError(
                f"{op}: rtol {r.describe()} must broadcast against the batch shape "
                f"{t.shape[:-2]} of {t.describe()}"
            )
        rtol = shape_ops.expand_dims(cast(r, s.dtype), -1)
    return rtol * reduction_ops.max(s, axis=-1, keepdims=True)


def matrix_rank(x: Any, /, *, rtol: Any = None) -> Tensor:
    """The rank of matrices (array API ``linalg.matrix_rank``, ``numpy.linalg.matrix_rank``):
    the count of singular values above ``rtol`` times the largest, in int64, shape
    ``x.shape[:-2]``.

    :param x: a tensor of at least 2 dimensions.
    :param rtol: the relative tolerance: a real number, or a real tensor broadcasting
        against ``x.shape[:-2]``; default ``max(m, n) * finfo(dtype).eps``.

    >>> import numerix as nx
    >>> nx.matrix_rank(nx.tensor([[1.0, 2.0], [2.0, 4.0]])).item()
    1
    >>> nx.matrix_rank(nx.ones(3))
    Traceback (most recent call last):
    ...
    numerix.errors.ShapeError: matrix_rank: x must have at least 2 dimensions (..., m, n), got f32[3] binary(cpu)
    """
    t, rd = _matrices("matrix_rank", x)
    if min(t.shape[-2:]) == 0:
        return creation_ops.zeros(t.shape[:-2], dtype=dtypes.int64, backend=t.backend)
    s = svd(t, full_matrices=False)[1]
    tol = _cutoff("matrix_rank", t, s, rtol, rd)
    return reduction_ops.sum(elementwise_ops.where(s > tol, 1, 0), axis=-1, dtype=dtypes.int64)


def pinv(x: Any, /, *, rtol: Any = None) -> Tensor:
    """The Moore-Penrose pseudo-inverse of matrices (array API ``linalg.pinv``,
    ``numpy.linalg.pinv``), from :func:`svd`: ``vh^H diag(1/s) u^H``, the singular values
    at most ``rtol`` times the largest counted as zero. Shape ``(..., n, m)``; dtypes as
    :func:`inv`.

    :param x: a tensor of at least 2 dimensions.
    :param rtol: as :func:`matrix_rank`'s.

    >>> import numerix as nx
    >>> nx.pinv(nx.tensor([[2.0, 0.0], [0.0, 0.0]])).tolist()
    [[0.5, 0.0], [0.0, 0.0]]
    >>> nx.pinv(nx.ones((2, 2)), rtol="tiny")
    Traceback (most recent call last):
    ...
    numerix.errors.DTypeError: pinv: tensor: cannot make a tensor from str 'tiny'; ...
    """
    t, rd = _matrices("pinv", x)
    m, n = t.shape[-2:]
    if min(m, n) == 0:
        return _back(
            creation_ops.zeros(t.shape[:-2] + (n, m), dtype=t.dtype, backend=t.backend), rd
        )
    u, s, vh = svd(t, full_matrices=False)
    keep = s > _cutoff("pinv", t, s, rtol, rd)
    sinv = elementwise_ops.where(keep, 1 / elementwise_ops.where(keep, s, 1), 0)
    r = matmul(_h(vh) * shape_ops.expand_dims(cast(sinv, t.dtype), -2), _h(u))
    return _back(r, rd)


def matrix_power(x: Any, n: int, /) -> Tensor:
    """``x`` raised to the integer power ``n`` by repeated squaring (array API
    ``linalg.matrix_power``, ``numpy.linalg.matrix_power``); batches over leading axes.

    ``n = 0`` gives identity matrices in ``x``'s dtype; ``n < 0`` the power of
    :func:`inv` (whose dtype rules then apply). Integer ``x`` with ``n >= 0`` stays
    integer, as numpy.

    >>> import numerix as nx
    >>> nx.matrix_power(nx.tensor([[1, 1], [0, 1]]), 3).tolist()
    [[1, 3], [0, 1]]
    >>> nx.matrix_power(nx.ones((2, 2)), 0.5)
    Traceback (most recent call last):
    ...
    numerix.errors.ArgumentError: matrix_power: n must be an int, got 0.5
    """
    try:
        if isinstance(n, bool):
            raise TypeError
        k = operator.index(n)
    except TypeError:
        raise ArgumentError(f"matrix_power: n must be an int, got {n!r}") from None
    t = as_tensor(x, "matrix_power")
    _square("matrix_power", t)
    _compute_dtype("matrix_power", t.dtype, t)  # refuses bool
    if k == 0:
        eye = creation_ops.eye(t.shape[-1], dtype=t.dtype, backend=t.backend)
        return _bcast(eye, t.shape)
    base = inv(t) if k < 0 else t
    k = -k if k < 0 else k
    result: Tensor | None = None
    while True:
        if k & 1:
            result = base if result is None else matmul(result, base)
        k >>= 1
        if not k:
            break
        base = matmul(base, base)
    assert result is not None
    return result


def matrix_trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> Tensor:
    """The sum of the ``offset``-th diagonal of the matrices in the last two axes (array
    API ``linalg.trace``, ``numpy.trace`` over the last two axes): shape ``x.shape[:-2]``.
    (``numerix.trace`` is the tracer of :mod:`numerix.defn`; ``numerix.linalg.trace`` is
    this function.)

    ``offset > 0`` is above the main diagonal, ``offset < 0`` below; ``dtype`` as
    :func:`numerix.sum`'s (integers accumulate in int64, unsigned in uint64; floats keep
    their dtype).

    >>> import numerix as nx
    >>> nx.matrix_trace(nx.tensor([[1, 2, 3], [4, 5, 6]]), offset=1).item()
    8
    >>> nx.matrix_trace(nx.ones(3))
    Traceback (most recent call last):
    ...
    numerix.errors.ShapeError: matrix_trace: needs a tensor of at least 2 dimensions (a matrix or a stack of them), got f32[3] binary(cpu)
    """
    t = as_tensor(x, "matrix_trace")
    if isinstance(offset, bool) or not isinstance(offset, int):
        raise ArgumentError(f"matrix_trace: offset must be an int, got {offset!r}")
    if t.ndim < 2:
        raise ShapeError(
            f"matrix_trace: needs a tensor of at least 2 dimensions (a matrix or a stack of them), got "
            f"{t.describe()}"
        )
    r, c = t.shape[-2:]
    on = (_idx(c, t, column=False) - _idx(r, t, column=True)) == offset
    if dtype is not None:
        t = cast(t, dtypes.as_dtype(dtype, "matrix_trace"))
    return reduction_ops.sum(elementwise_ops.where(on, t, 0), axis=(-2, -1), dtype=dtype)
