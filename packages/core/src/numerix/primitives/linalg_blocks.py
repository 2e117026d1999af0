"""The linear-algebra blocks: cholesky, triangular_solve, solve, inv, det, lu, qr, eigh, svd.

Each is declared here with its shape rule, dtype rule and derivative rule; the public
op and the core's version a backend without the block runs (``fallback_rule``) are in
:mod:`numerix.ops.linalg_blocks`. ``x`` arrives in the dtype it computes in (float or
complex), batched over the leading axes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from numerix.dtypes import DType, real_dtype
from numerix.errors import ArgumentError
from numerix.primitives import _batch
from numerix.primitives._registry import batch_rule, declare_block, vjp_rule

if TYPE_CHECKING:
    from numerix._tensor import Tensor

Shape = tuple[int, ...]


def same_shape_rule(x: Shape, **params: object) -> Shape:
    return x


def same_dtype_rule(x: DType, *rest: DType, **params: object) -> DType:
    return x


def _rhs_shape(a: Shape, b: Shape, **params: object) -> Shape:
    # a is broadcast to b's batch first; x has b's shape
    return b


def _det_shape(x: Shape) -> Shape:
    return x[:-2]


def _lu_shape(x: Shape) -> tuple[Shape, Shape, Shape]:
    return x, x, x


def _lu_dtype(x: DType) -> tuple[DType, DType, DType]:
    return x, x, x


def _qr_shape(x: Shape, *, mode: str) -> tuple[Shape, Shape]:
    *batch, m, n = x
    k = m if mode == "complete" else min(m, n)
    return (*batch, m, k), (*batch, k, n)


def _qr_dtype(x: DType, *, mode: str) -> tuple[DType, DType]:
    return x, x


def _eigh_shape(x: Shape) -> tuple[Shape, Shape]:
    return x[:-1], x


def _eigh_dtype(x: DType) -> tuple[DType, DType]:
    return real_dtype(x), x


def _svd_shape(x: Shape, *, full_matrices: bool) -> tuple[Shape, Shape, Shape]:
    *batch, m, n = x
    k = min(m, n)
    full = full_matrices
    return (*batch, m, m if full else k), (*batch, k), (*batch, n if full else k, n)


def _svd_dtype(x: DType, *, full_matrices: bool) -> tuple[DType, DType, DType]:
    return x, real_dtype(x), x


cholesky_block = declare_block(
    "cholesky", "linalg", inputs=("x",), params=("upper",),
    shape_rule=same_shape_rule, dtype_rule=same_dtype_rule,
    doc="Cholesky factor of Hermitian positive-definite matrices (lower, or upper = L^H), "
        "read from the lower triangle; batched. A matrix that is not positive-definite "
        "gives NaN, never an error (numpy raises): the whole matrix on binary and torch, "
        "its lower triangle on xla (known-differences.md)",
)  # fmt: skip
triangular_solve_block = declare_block(
    "triangular_solve", "linalg", inputs=("a", "b"),
    params=("lower", "left_side", "transform_a"),
    shape_rule=_rhs_shape, dtype_rule=same_dtype_rule,
    doc="x with op(a) x = b (left_side) or x op(a) = b, a triangular (the other triangle is "
        "ignored), op by transform_a in none/transpose/adjoint; b is a matrix, batches equal",
)  # fmt: skip
solve_block = declare_block(
    "solve", "linalg", inputs=("a", "b"), shape_rule=_rhs_shape, dtype_rule=same_dtype_rule,
    doc="x with a x = b for square a (LU with partial pivoting); b is a matrix, batches "
        "equal. A singular a (a zero pivot) gives non-finite values, never an error (numpy "
        "raises): NaN on binary and torch, the LU's inf and NaN on xla (known-differences.md)",
)  # fmt: skip
inv_block = declare_block(
    "inv", "linalg", inputs=("x",), shape_rule=same_shape_rule, dtype_rule=same_dtype_rule,
    doc="inverse of square matrices. A singular matrix (a zero pivot) gives non-finite "
        "values, never an error (numpy raises): NaN on binary and torch, the LU's inf and "
        "NaN on xla (known-differences.md)",
)  # fmt: skip
det_block = declare_block(
    "det", "linalg", inputs=("x",), shape_rule=_det_shape, dtype_rule=same_dtype_rule,
    doc="determinant of square matrices (0 when singular)",
)  # fmt: skip
lu_block = declare_block(
    "lu", "linalg", inputs=("x",), shape_rule=_lu_shape, dtype_rule=_lu_dtype,
    doc="(p, l, u) with x = p l u of square matrices: p a permutation, l unit lower "
        "triangular, u upper triangular (partial pivoting: the first largest |pivot|)",
)  # fmt: skip
qr_block = declare_block(
    "qr", "linalg", inputs=("x",), params=("mode",), shape_rule=_qr_shape, dtype_rule=_qr_dtype,
    doc="(q, r) with x = q r, q with orthonormal columns, r upper triangular; mode "
        "reduced/complete",
)  # fmt: skip
eigh_block = declare_block(
    "eigh", "linalg", inputs=("x",), shape_rule=_eigh_shape, dtype_rule=_eigh_dtype,
    doc="(eigenvalues ascending, in the real dtype; eigenvectors as columns) of Hermitian "
        "matrices, read from the lower triangle",
)  # fmt: skip

svd_block = declare_block(
    "svd", "linalg", inputs=("x",), params=("full_matrices",),
    shape_rule=_svd_shape, dtype_rule=_svd_dtype,
    doc="(u, s, vh) with x = u diag(s) vh, s real and descending; u (..., m, m) and vh "
        "(..., n, n) when full_matrices, else (..., m, k) and (..., k, n), k = min(m, n)",
)  # fmt: skip


# ---------------------------------------------------------------- derivative rules
#
# As jax.vjp: a rule is the transpose of the derivative, complex numbers paired without
# conjugation. The ops reading one triangle of x (cholesky, eigh, triangular_solve) give
# that triangle the whole derivative and the other none (jax.grad symmetrises instead).

Cotangents = tuple["Tensor | None", ...]


def _mT(ops: Any, x: Tensor) -> Tensor:
    return ops.matrix_transpose(x)


def _from_hermitian(ops: Any, s: Tensor) -> Tensor:
    """The cotangent of x from that of the Hermitian matrix read from its lower
    triangle, ``tril(x, -1) + real(diag(x)) + tril(x, -1)^H``."""
    n = s.shape[-1]
    rows = ops.reshape(ops.arange(n, backend=s.backend), (n, 1))
    cols = ops.arange(n, backend=s.backend)
    diag = ops.astype(ops.real(s), s.dtype) if s.dtype.kind == "c" else s
    return ops.where(rows > cols, s + ops.conj(_mT(ops, s)), ops.where(rows == cols, diag, 0))


@vjp_rule("cholesky")
def cholesky_vjp(ops: Any, cotangent: Tensor, out: Tensor, x: Tensor, *, upper: bool) -> Cotangents:
    # dL = L phi(L^-1 dA L^-H), phi the lower triangle with half its diagonal (Murray 2016),
    # transposed: dA gets L^-T phi(L^T c) conj(L)^-1
    if upper:
        out, cotangent = ops.conj(_mT(ops, out)), ops.conj(_mT(ops, cotangent))
    n = x.shape[-1]
    half = ops.where(
        ops.reshape(ops.arange(n, backend=x.backend), (n, 1)) == ops.arange(n, backend=x.backend),
        0.5, 1.0,
    )  # fmt: skip
    p = ops.tril(ops.matmul(_mT(ops, out), cotangent)) * ops.astype(half, x.dtype)
    t = ops.triangular_solve(out, p, lower=True, transform_a="transpose")
    s = ops.triangular_solve(ops.conj(out), t, lower=True, left_side=False)
    return (_from_hermitian(ops, s),)


@vjp_rule("triangular_solve")
def triangular_solve_vjp(
    ops: Any, cotangent: Tensor, out: Tensor, a: Tensor, b: Tensor, *, lower: bool,
    left_side: bool, transform_a: str,
) -> Cotangents:  # fmt: skip
    # m = op(a): x = m^-1 b (x = b m^-1 on the right): b gets m^-T c (c m^-T), m gets
    # -b_bar x^T (-x^T b_bar); a gets m's cotangent through op, in the triangle it reads
    if transform_a == "adjoint":
        am, back = ops.conj(a), "none"
    else:
        am, back = a, "transpose" if transform_a == "none" else "none"
    gb = ops.triangular_solve(am, cotangent, lower=lower, left_side=left_side, transform_a=back)
    gm = -ops.matmul(gb, _mT(ops, out)) if left_side else -ops.matmul(_mT(ops, out), gb)
    if transform_a == "transpose":
        gm = _mT(ops, gm)
    elif transform_a == "adjoint":
        gm = ops.conj(_mT(ops, gm))
    return (ops.tril(gm) if lower else ops.triu(gm), gb)


@vjp_rule("solve")
def solve_vjp(ops: Any, cotangent: Tensor, out: Tensor, a: Tensor, b: Tensor) -> Cotangents:
    gb = ops.solve(_mT(ops, a), cotangent)
    return (-ops.matmul(gb, _mT(ops, out)), gb)


@vjp_rule("inv")
def inv_vjp(ops: Any, cotangent: Tensor, out: Tensor, x: Tensor) -> Cotangents:
    t = _mT(ops, out)
    return (-ops.matmul(ops.matmul(t, cotangent), t),)


@vjp_rule("det")
def det_vjp(ops: Any, cotangent: Tensor, out: Tensor, x: Tensor) -> Cotangents:
    # d det = det tr(x^-1 dx): x gets c det x^-T (a singular x gives inf/nan, where jax
    # takes the adjugate through an LU)
    if x.shape[-1] == 0:
        return (ops.zeros_like(x),)
    scale = ops.expand_dims(cotangent * out, (-2, -1))
    return (scale * _mT(ops, ops.inv(x)),)


@vjp_rule("eigh")
def eigh_vjp(
    ops: Any, cotangents: tuple[Tensor | None, Tensor | None], outs: tuple[Tensor, Tensor],
    x: Tensor,
) -> Cotangents:  # fmt: skip
    # with k = v^H da v: dw = real(diag(k)), dv = v (f * k), f_ij = 1 / (w_j - w_i) off the
    # diagonal; transposed, the Hermitian da gets conj(v) (diag(c_w) + f * v^T c_v) v^T
    cw, cv = cotangents
    w, v = outs
    n = x.shape[-1]
    eye = ops.reshape(ops.arange(n, backend=x.backend), (n, 1)) == ops.arange(n, backend=x.backend)
    k = ops.zeros_like(x)
    if cw is not None:
        k = k + ops.where(eye, ops.astype(ops.expand_dims(cw, -2), x.dtype), 0)
    if cv is not None:
        gap = ops.expand_dims(w, -2) - ops.expand_dims(w, -1)
        f = ops.where(eye, 0, 1 / ops.where(eye, 1, gap))
        k = k + ops.astype(f, x.dtype) * ops.matmul(_mT(ops, v), cv)
    s = ops.matmul(ops.matmul(ops.conj(v), k), _mT(ops, v))
    return (_from_hermitian(ops, s),)


def _eye_mask(ops: Any, n: int, like: Tensor) -> Tensor:
    return ops.reshape(ops.arange(n, backend=like.backend), (n, 1)) == ops.arange(
        n, backend=like.backend
    )


def _imag_diag(ops: Any, t: Tensor, eye: Tensor) -> Tensor:
    # i imag(diag(t)) as a diagonal matrix (zero for real t)
    if t.dtype.kind != "c":
        return ops.zeros_like(t)
    return ops.where(eye, t - ops.astype(ops.real(t), t.dtype), 0)


def _qr_square_vjp(
    ops: Any, cq: Tensor | None, cr: Tensor | None, q: Tensor, r: Tensor, x: Tensor
) -> Tensor:
    # x (m, n), m >= n, q (m, n), r (n, n). Forward (JAX's qr_jvp): d = dx r^-1,
    # k = q^H d, o = tril(k, -1) - tril(k, -1)^H + i imag(diag(k)), dq = q (o - k) + d,
    # dr = (k - o) r; transposed term by term
    eye = _eye_mask(ops, r.shape[-1], r)
    gk = ops.zeros_like(r)
    go = ops.zeros_like(r)
    gd = ops.zeros_like(x)
    if cr is not None:
        t = ops.matmul(cr, _mT(ops, r))
        gk, go = gk + t, go - t
    if cq is not None:
        t = ops.matmul(_mT(ops, q), cq)
        gk, go, gd = gk - t, go + t, gd + cq
    gk = gk + ops.tril(go, -1) - ops.tril(ops.conj(_mT(ops, go)), -1) + _imag_diag(ops, go, eye)
    gd = gd + ops.matmul(ops.conj(q), gk)
    return ops.triangular_solve(r, gd, lower=False, left_side=False, transform_a="transpose")


@vjp_rule("qr")
def qr_vjp(
    ops: Any, cotangents: tuple[Tensor | None, Tensor | None], outs: tuple[Tensor, Tensor],
    x: Tensor, *, mode: str,
) -> Cotangents:  # fmt: skip
    # unique (as the backends compute it) up to the phases of r's diagonal, which the
    # derivative keeps; a wide x = [x1 x2] is q r1 = qr(x1), r2 = q^H x2
    cq, cr = cotangents
    q, r = outs
    m, n = x.shape[-2:]
    if mode == "complete" and m > n:
        if cq is not None:
            raise ArgumentError(
                f"qr: the derivative of q with mode='complete' for a tall {x.describe()} is "
                f"not defined (its last {m - n} columns are not unique); use mode='reduced'"
            )
        # r's last m - n rows are zero whatever x is
        q, r = q[..., :, :n], r[..., :n, :]
        cr = None if cr is None else cr[..., :n, :]
    if m >= n:
        return (_qr_square_vjp(ops, cq, cr, q, r, x),)
    r1, x1, x2 = r[..., :, :m], x[..., :, :m], x[..., :, m:]
    cr1 = None if cr is None else cr[..., :, :m]
    if cr is not None:
        cr2 = cr[..., :, m:]
        extra = ops.matmul(ops.conj(x2), ops.conj(_mT(ops, cr2)))
        cq = extra if cq is None else cq + extra
        gx2 = ops.matmul(ops.conj(q), cr2)
    else:
        gx2 = ops.zeros_like(x2)
    return (ops.concatenate([_qr_square_vjp(ops, cq, cr1, q, r1, x1), gx2], axis=-1),)


@vjp_rule("svd")
def svd_vjp(
    ops: Any, cotangents: tuple[Tensor | None, Tensor | None, Tensor | None],
    outs: tuple[Tensor, Tensor, Tensor], x: Tensor, *, full_matrices: bool,
) -> Cotangents:  # fmt: skip
    # JAX's svd_jvp (the vectors in the gauge where v^H dv has a zero diagonal), with
    # ds = u^H dx v, transposed term by term
    cu, cs, cvh = cotangents
    u, s, vh = outs
    m, n = x.shape[-2:]
    k = min(m, n)
    if full_matrices and m != n:
        if cu is not None or cvh is not None:
            raise ArgumentError(
                f"svd: the derivative of the singular vectors with full_matrices=True for a "
                f"non-square {x.describe()} is not defined (those beyond min(m, n) are not "
                f"unique); use full_matrices=False"
            )
        u, vh = u[..., :, :k], vh[..., :k, :]
    if k == 0:
        return (ops.zeros_like(x),)
    v = ops.conj(_mT(ops, vh))
    cv = None if cvh is None else ops.conj(_mT(ops, cvh))
    eye = _eye_mask(ops, k, x)
    s_row = ops.expand_dims(s, -2)
    s_col = ops.expand_dims(s, -1)
    gap = s_row * s_row - s_col * s_col
    f = ops.where(gap == 0, 0, 1 / ops.where(gap == 0, 1, gap))
    inv_s = ops.where(s == 0, 0, 1 / ops.where(s == 0, 1, s))
    dt = x.dtype
    gs = ops.zeros((*x.shape[:-2], k, k), dtype=dt, backend=x.backend)
    gx = ops.zeros_like(x)
    if cs is not None:
        gs = gs + ops.where(eye, ops.astype(ops.expand_dims(cs, -2), dt), 0)
    if cu is not None:
        mu = ops.matmul(_mT(ops, u), cu)
        p = ops.astype(f, dt) * mu
        gs = gs + (p + ops.conj(_mT(ops, p))) * ops.astype(s_row, dt)
        gs = gs + _imag_diag(ops, mu, eye) * ops.astype(ops.expand_dims(inv_s, -2), dt)
        if m > n:
            e = cu * ops.astype(ops.expand_dims(inv_s, -2), dt)
            e = e - ops.matmul(ops.conj(u), ops.matmul(_mT(ops, u), e))
            gx = gx + ops.matmul(e, _mT(ops, v))
    if cv is not None:
        p = ops.astype(f, dt) * ops.matmul(_mT(ops, v), cv)
        gs = gs + ops.astype(s_col, dt) * (p + ops.conj(_mT(ops, p)))
        if n > m:
            e = cv * ops.astype(ops.expand_dims(inv_s, -2), dt)
            eh = ops.conj(_mT(ops, e))
            gx = gx + ops.matmul(
                ops.conj(u), eh - ops.matmul(ops.matmul(eh, ops.conj(v)), _mT(ops, v))
            )
    return (gx + ops.matmul(ops.matmul(ops.conj(u), gs), _mT(ops, v)),)


# every block acts on the last two axes (one for a vector of them) and takes the leading
# ones as a stack: the batch is one more of them
batch_rule("cholesky", "triangular_solve", "solve", "inv", "det", "lu", "qr", "eigh", "svd")(
    _batch.leading
)
