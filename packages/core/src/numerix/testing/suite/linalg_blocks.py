"""Linear-algebra blocks: cholesky, triangular_solve, solve, inv, det, qr, eigh.

Each op is checked twice against numpy.linalg: as the selected backend runs it (its
native block, or the core's fallback when it has none) and through the core's
fallback called directly. Errors of these factorisations grow with the matrix size
and its condition number, so absolute tolerances are scaled by
``n * cond(x) * max|result|`` (``check``'s ``scale``), never loosened globally.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import numerix as nx
from numerix import dtypes
from numerix.ops import linalg_blocks
from numerix.testing.oracle import (
    ALL,
    Cases,
    check,
    ids,
    noncontiguous,
    sample,
    shape_id,
    to_compute,
)
from numerix.testing.tolerances import tolerance

_LOW = (dtypes.float16, dtypes.bfloat16)


def _compute(d: dtypes.DType) -> dtypes.DType:
    return dtypes.float32 if d.kind in "iu" or d in _LOW else d


def _result(d: dtypes.DType) -> dtypes.DType:
    return d if d in _LOW else _compute(d)


def _real(d: dtypes.DType) -> dtypes.DType:
    return {dtypes.complex64: dtypes.float32, dtypes.complex128: dtypes.float64}.get(d, d)


def _wide(a: np.ndarray, d: dtypes.DType) -> np.ndarray:
    # the input as numerix computes it (rounded to the compute dtype), widened for numpy
    return to_compute(to_compute(a, d, wide=False), _compute(d))


def _general(d: dtypes.DType, shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """Random square (or not) matrices of ``d``; integer ones made diagonally dominant
    so that they are invertible."""
    a = sample(d, shape, seed, small=d.kind in "iu")
    if d.kind in "iu" and shape and shape[-1] == shape[-2]:
        a = a + (3 * shape[-1] * np.eye(shape[-1], dtype=np.int64)).astype(d.numpy_dtype)
    return a


def _hpd(d: dtypes.DType, shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """Hermitian positive-definite matrices of ``d``: ``a a^H + n I``."""
    a = sample(d, shape, seed, small=d.kind in "iu")
    w = a.astype(np.complex128 if d.kind == "c" else np.float64)
    if d is dtypes.bfloat16:
        w = a.astype(np.float32).astype(np.float64)
    n = shape[-1]
    h = w @ np.conj(np.swapaxes(w, -1, -2)) + n * np.eye(n)
    return h.astype(d.numpy_dtype)


def _scale(a: np.ndarray, *results: np.ndarray) -> float:
    n = a.shape[-1] if a.ndim else 1
    cond = 1.0
    if a.size and a.shape[-1] == a.shape[-2]:
        with np.errstate(all="ignore"):
            c = np.linalg.cond(a)
        cond = float(np.max(c)) if np.all(np.isfinite(c)) else 1e6
    mag = max([1.0] + [float(np.max(np.abs(r))) for r in results if r.size])
    return 4.0 * max(n, 1) * max(cond, 1.0) * mag


def _refuses_bool(op: str, fn: Callable[[], Any]) -> None:
    with pytest.raises(nx.DTypeError, match=rf"^{op}: bool tensors are not supported"):
        fn()


def _form(t: Any, dtype: dtypes.DType, shape: tuple[int, ...]) -> np.ndarray:
    """``t`` is a tensor of exactly ``dtype`` and ``shape`` (and so is its backend array)."""
    assert isinstance(t, nx.Tensor), f"expected a Tensor, got {type(t).__name__}"
    assert t.dtype is dtype, f"dtype: got {t.dtype}, expected {dtype}"
    assert t.shape == shape, f"shape: got {t.shape}, expected {shape}"
    h = t.to_numpy()
    assert h.dtype == dtype.numpy_dtype and h.shape == shape, f"backend holds {h.dtype}{h.shape}"
    if dtype is dtypes.bfloat16:
        h = h.astype(np.float32)
    return h.astype(np.complex128 if dtype.kind == "c" else np.float64)


def _close(op: str, got: np.ndarray, want: np.ndarray, dtype: dtypes.DType, scale: float) -> None:
    rtol, atol = tolerance(op, dtype)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol * scale)


def _ct(a: np.ndarray) -> np.ndarray:
    return np.conj(np.swapaxes(a, -1, -2))


# ---------------------------------------------------------------- cholesky

SQUARE = [(1, 1), (3, 3), (2, 4, 4), (0, 0), (2, 0, 0), (0, 3, 3)]


@pytest.mark.parametrize("shape", SQUARE, ids=shape_id)
@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_cholesky(dtype: dtypes.DType, shape: tuple[int, ...]) -> None:
    if dtype.kind == "b":
        _refuses_bool("cholesky", lambda: nx.cholesky(np.ones(shape, bool)))
        return
    x = _hpd(dtype, shape) if dtype.kind != "b" else None
    assert x is not None
    # numerix reads only the lower triangle: garbage above it must not matter
    noisy = x + np.triu(sample(dtype, shape, 5, small=True), 1)
    wide = _wide(x, dtype)
    low = np.linalg.cholesky(wide) if wide.size else wide
    rd, cd = _result(dtype), _compute(dtype)
    s = _scale(wide, low)
    for upper in (False, True):
        want = _ct(low) if upper else low
        check(nx.cholesky(noisy, upper=upper), want.astype(rd.numpy_dtype), rd, scale=s)
        got = linalg_blocks.cholesky_fallback(nx.tensor(noisy, dtype=cd), upper=upper)
        check(got, want.astype(cd.numpy_dtype), cd, scale=s)


def test_cholesky_not_positive_definite_gives_nan() -> None:
    good = np.array([[4.0, 2.0], [2.0, 5.0]])
    bad = np.array([[1.0, 2.0], [2.0, 1.0]])
    x = np.stack([good, bad])
    for got in (nx.cholesky(x), linalg_blocks.cholesky_fallback(nx.tensor(x), upper=False)):
        h = got.to_numpy()
        np.testing.assert_allclose(h[0], np.linalg.cholesky(good), rtol=1e-12)
        assert np.isnan(h[1]).any(), h[1]


# ---------------------------------------------------------------- triangular_solve

TRI_SHAPES = [
    ((3, 3), (3,)), ((3, 3), (3, 2)), ((2, 4, 4), (2, 4, 3)), ((2, 3, 3), (3, 1)),
    ((3, 3), (2, 3, 2)), ((1, 1), (1,)), ((0, 0), (0,)), ((0, 0), (0, 2)), ((3, 3), (3, 0)),
]  # fmt: skip


def _tri(d: dtypes.DType, shape: tuple[int, ...]) -> np.ndarray:
    # triangular systems of random entries are badly conditioned: a strong diagonal
    a = sample(d, shape, 3, small=d.kind in "iu")
    if shape[-1]:
        n = shape[-1]
        a = a + np.eye(n, dtype=np.int64 if d.kind in "iu" else np.float64).astype(
            d.numpy_dtype
        ) * (2 * n + 3)
    return a


def _tri_reference(
    a: np.ndarray, b: np.ndarray, lower: bool, left: bool, transform: str
) -> np.ndarray:
    m = np.tril(a) if lower else np.triu(a)
    if transform != "none":
        m = np.swapaxes(m, -1, -2)
        if transform == "adjoint":
            m = np.conj(m)
    vector = b.ndim == 1
    if vector:
        b = b[:, None] if left else b[None, :]
    if not left:
        m, b = np.swapaxes(m, -1, -2), np.swapaxes(b, -1, -2)
    batch = np.broadcast_shapes(m.shape[:-2], b.shape[:-2])
    m = np.broadcast_to(m, batch + m.shape[-2:])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    x = np.linalg.solve(m, b) if m.size and b.size else np.zeros(b.shape, b.dtype)
    if not left:
        x = np.swapaxes(x, -1, -2)
    return x.reshape(x.shape[:-2] + (m.shape[-1],)) if vector else x


@pytest.mark.parametrize("shapes", TRI_SHAPES, ids=shape_id)
@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_triangular_solve(dtype: dtypes.DType, shapes: Any) -> None:
    sa, sb = shapes
    if dtype.kind == "b":
        _refuses_bool(
            "triangular_solve",
            lambda: nx.triangular_solve(np.ones(sa, bool), np.ones(sb, bool)),
        )
        return
    a = _tri(dtype, sa)
    rd, cd = _result(dtype), _compute(dtype)
    cases = Cases()
    for lower in (True, False):
        for left in (True, False):
            for transform in ("none", "transpose", "adjoint"):
                with cases.case(f"lower={lower} left={left} {transform}"):
                    b_shape = sb if left or len(sb) == 1 else sb[:-2] + (sb[-1], sb[-2])
                    b = sample(dtype, b_shape, 4, small=dtype.kind in "iu")
                    wa, wb = _wide(a, dtype), _wide(b, dtype)
                    want = _tri_reference(wa, wb, lower, left, transform)
                    s = _scale(np.tril(wa) if lower else np.triu(wa), want, wb)
                    kw = {"lower": lower, "left_side": left, "transform_a": transform}
                    check(nx.triangular_solve(a, b, **kw), want.astype(rd.numpy_dtype), rd,
                          scale=s)  # fmt: skip
                    # the fallback takes b as a matrix of a's batch, as the op hands it over
                    mb = wb if wb.ndim > 1 else (wb[:, None] if left else wb[None, :])
                    batch = np.broadcast_shapes(wa.shape[:-2], mb.shape[:-2])
                    fa = np.broadcast_to(wa, batch + wa.shape[-2:]).astype(cd.numpy_dtype)
                    fb = np.broadcast_to(mb, batch + mb.shape[-2:]).astype(cd.numpy_dtype)
                    got = linalg_blocks.triangular_solve_fallback(
                        nx.tensor(fa), nx.tensor(fb), **kw
                    )
                    check(got, want.reshape(got.shape).astype(cd.numpy_dtype), cd, scale=s)
    cases.finish()


# ---------------------------------------------------------------- solve, inv, det

SOLVE_SHAPES = [
    ((3, 3), (3,)), ((3, 3), (3, 2)), ((2, 4, 4), (2, 4, 1)), ((2, 3, 3), (3,)),
    ((3, 3), (2, 3, 2)), ((2, 1, 3, 3), (4, 3, 2)), ((1, 1), (1,)), ((0, 0), (0,)),
    ((0, 0), (0, 2)), ((2, 3, 3), (1, 3, 0)), ((5, 5), (5, 3)),
]  # fmt: skip


def _as_matrix_pair(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mb = b[:, None] if b.ndim == 1 else b
    batch = np.broadcast_shapes(a.shape[:-2], mb.shape[:-2])
    return np.broadcast_to(a, batch + a.shape[-2:]), np.broadcast_to(mb, batch + mb.shape[-2:])


@pytest.mark.parametrize("shapes", SOLVE_SHAPES, ids=shape_id)
@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_solve(dtype: dtypes.DType, shapes: Any) -> None:
    sa, sb = shapes
    if dtype.kind == "b":
        _refuses_bool("solve", lambda: nx.solve(np.ones(sa, bool), np.ones(sb, bool)))
        return
    a, b = _general(dtype, sa, 1), sample(dtype, sb, 2, small=dtype.kind in "iu")
    wa, wb = _wide(a, dtype), _wide(b, dtype)
    ma, mb = _as_matrix_pair(wa, wb)
    want = np.linalg.solve(ma, mb) if ma.size and mb.size else np.zeros(mb.shape, mb.dtype)
    if wb.ndim == 1:
        want = want[..., 0]
    rd, cd = _result(dtype), _compute(dtype)
    s = _scale(wa, want, wb)
    check(nx.solve(a, b), want.astype(rd.numpy_dtype), rd, scale=s)
    check(nx.solve(noncontiguous(a), noncontiguous(b)), want.astype(rd.numpy_dtype), rd, scale=s)
    got = linalg_blocks.solve_fallback(nx.tensor(ma, dtype=cd), nx.tensor(mb, dtype=cd))
    check(got, want.reshape(got.shape).astype(cd.numpy_dtype), cd, scale=s)


def test_solve_pivots_and_det_sign() -> None:
    # a zero leading entry needs a row swap; det's sign follows the permutation
    a = np.array([[0.0, 1.0, 2.0], [1.0, 0.0, 3.0], [4.0, -3.0, 8.0]])
    b = np.array([[1.0], [2.0], [3.0]])
    for got in (nx.solve(a, b), linalg_blocks.solve_fallback(nx.tensor(a), nx.tensor(b))):
        check(got, np.linalg.solve(a, b), nx.float64, scale=10.0)
    for d in (nx.det(a), linalg_blocks.det_fallback(nx.tensor(a))):
        check(d, np.linalg.det(a), nx.float64, scale=10.0)
    swap = np.array([[0.0, 1.0], [1.0, 0.0]])
    for d in (nx.det(swap), linalg_blocks.det_fallback(nx.tensor(swap))):
        check(d, -1.0, nx.float64)


def test_singular_solve_and_inv_give_non_finite() -> None:
    # numpy raises LinAlgError; numerix cannot know without reading values: inf/nan
    a = np.array([[[1.0, 2.0], [2.0, 4.0]], [[2.0, 0.0], [0.0, 4.0]]])
    b = np.ones((2, 2, 1))
    for x in (nx.solve(a, b), linalg_blocks.solve_fallback(nx.tensor(a), nx.tensor(b))):
        h = x.to_numpy()
        assert not np.isfinite(h[0]).all(), h[0]
        np.testing.assert_allclose(h[1], [[0.5], [0.25]])
    for x in (nx.inv(a), linalg_blocks.inv_fallback(nx.tensor(a))):
        h = x.to_numpy()
        assert not np.isfinite(h[0]).all(), h[0]
        np.testing.assert_allclose(h[1], [[0.5, 0.0], [0.0, 0.25]])
    for d in (nx.det(a), linalg_blocks.det_fallback(nx.tensor(a))):
        check(d, [0.0, 8.0], nx.float64)


@pytest.mark.parametrize("shape", SQUARE + [(5, 5)], ids=shape_id)
@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_inv(dtype: dtypes.DType, shape: tuple[int, ...]) -> None:
    if dtype.kind == "b":
        _refuses_bool("inv", lambda: nx.inv(np.ones(shape, bool)))
        return
    x = _general(dtype, shape, 6)
    wide = _wide(x, dtype)
    want = np.linalg.inv(wide) if wide.size else wide
    rd, cd = _result(dtype), _compute(dtype)
    s = _scale(wide, want)
    check(nx.inv(x), want.astype(rd.numpy_dtype), rd, scale=s)
    check(nx.inv(noncontiguous(x)), want.astype(rd.numpy_dtype), rd, scale=s)
    check(
        linalg_blocks.inv_fallback(nx.tensor(x, dtype=cd)), want.astype(cd.numpy_dtype), cd, scale=s
    )


@pytest.mark.parametrize("shape", SQUARE + [(5, 5)], ids=shape_id)
@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_det(dtype: dtypes.DType, shape: tuple[int, ...]) -> None:
    if dtype.kind == "b":
        _refuses_bool("det", lambda: nx.det(np.ones(shape, bool)))
        return
    x = _general(dtype, shape, 7)
    wide = _wide(x, dtype)
    want = np.linalg.det(wide)  # 1 for 0x0
    rd, cd = _result(dtype), _compute(dtype)
    s = _scale(wide, want)
    check(nx.det(x), np.asarray(want).astype(rd.numpy_dtype), rd, scale=s)
    check(linalg_blocks.det_fallback(nx.tensor(x, dtype=cd)), np.asarray(want).astype(cd.numpy_dtype), cd,
          scale=s)  # fmt: skip


# ---------------------------------------------------------------- qr

QR_SHAPES = [(3, 3), (4, 2), (2, 4), (2, 3, 3), (2, 5, 3), (1, 1), (0, 0), (3, 0), (0, 3)]


def _phase_normalised(q: np.ndarray, r: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    # QR is unique up to the phases of r's diagonal (for full rank): make them positive
    d = np.diagonal(r[..., :k, :k], axis1=-2, axis2=-1)
    ph = np.where(np.abs(d) == 0, 1, d / np.where(np.abs(d) == 0, 1, np.abs(d)))
    return q[..., :, :k] * ph[..., None, :], np.conj(ph)[..., :, None] * r[..., :k, :]


@pytest.mark.parametrize("shape", QR_SHAPES, ids=shape_id)
@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_qr(dtype: dtypes.DType, shape: tuple[int, ...]) -> None:
    if dtype.kind == "b":
        _refuses_bool("qr", lambda: nx.qr(np.ones(shape, bool)))
        return
    x = _general(dtype, shape, 8)
    wide = _wide(x, dtype)
    rd, cd = _result(dtype), _compute(dtype)
    *batch, m, n = shape
    k = min(m, n)
    cases = Cases()
    for mode in ("reduced", "complete"):
        qn, rn = np.linalg.qr(wide, mode=mode)
        s = _scale(np.eye(1), wide) * max(m, n, 1)
        for label, dt, run in (
            ("block", rd, lambda mode=mode: nx.qr(x, mode=mode)),
            (
                "fallback",
                cd,
                lambda mode=mode: linalg_blocks.qr_fallback(nx.tensor(x, dtype=cd), mode=mode),
            ),
        ):
            with cases.case(f"{label} {mode}"):
                q, r = run()
                qk = m if mode == "complete" else k
                hq = _form(q, dt, (*batch, m, qk))
                hr = _form(r, dt, (*batch, qk, n))
                assert (np.tril(hr, -1) == 0).all(), "r must be upper triangular"
                _close("qr", hq @ hr, wide, dt, s)
                _close("qr", _ct(hq) @ hq, np.broadcast_to(np.eye(qk), hq.shape[:-2] + (qk, qk)),
                       dt, s)  # fmt: skip
                gq, gr = _phase_normalised(hq, hr, k)
                wq, wr = _phase_normalised(qn, rn, k)
                _close("qr", gq, wq, dt, s)
                _close("qr", gr, wr, dt, s)
    cases.finish()


# ---------------------------------------------------------------- eigh

EIGH_SHAPES = [(1, 1), (2, 2), (3, 3), (2, 4, 4), (5, 5), (0, 0), (2, 0, 0)]


@pytest.mark.parametrize("shape", EIGH_SHAPES, ids=shape_id)
@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_eigh(dtype: dtypes.DType, shape: tuple[int, ...]) -> None:
    if dtype.kind == "b":
        _refuses_bool("eigh", lambda: nx.eigh(np.ones(shape, bool)))
        return
    # not Hermitian: numerix (as numpy) reads only the lower triangle (diagonal: real part)
    x = _general(dtype, shape, 9)
    wide = _wide(x, dtype)
    n = shape[-1]
    herm = np.tril(wide, -1) + _ct(np.tril(wide, -1)) + np.real(wide) * np.eye(n)
    wn, vn = np.linalg.eigh(wide)
    rd, cd = _result(dtype), _compute(dtype)
    s = _scale(np.eye(1), herm) * max(n, 1)
    cases = Cases()
    for label, dt, run in (
        ("block", rd, lambda: nx.eigh(x)),
        ("fallback", cd, lambda: linalg_blocks.eigh_fallback(nx.tensor(x, dtype=cd))),
    ):
        with cases.case(label):
            w, v = run()
            check(w, wn.astype(_real(dt).numpy_dtype), _real(dt), scale=s)
            hv = _form(v, dt, shape)
            hw = w.to_numpy().astype(np.float64)
            _close("eigh", herm @ hv, hv * hw[..., None, :], dt, s)
            eye = np.broadcast_to(np.eye(n), shape)
            _close("eigh", _ct(hv) @ hv, eye, dt, s)
            if n > 1:
                # sign/phase-invariant: |v_numpy^H v| is the identity for distinct eigenvalues
                gap = float(np.min(np.diff(wn, axis=-1)))
                _close("eigh", np.abs(_ct(vn) @ hv), eye, dt, s / max(gap, 1e-3))
    cases.finish()


# ---------------------------------------------------------------- refusals


def test_linalg_blocks_refuse_bad_shapes_and_options() -> None:
    m23, v3 = nx.ones((2, 3)), nx.ones(3)
    cases = Cases()
    for op, fn in (("cholesky", nx.cholesky), ("inv", nx.inv), ("det", nx.det),
                   ("eigh", nx.eigh)):  # fmt: skip
        with (
            cases.case(f"{op} non-square"),
            pytest.raises(
                nx.ShapeError,
                match=rf"^{op}: x must be square in its last two axes, got f32\[2\]\[3\]",
            ),
        ):
            fn(m23)
        with (
            cases.case(f"{op} 1-d"),
            pytest.raises(
                nx.ShapeError, match=rf"^{op}: x must have at least 2 dimensions \(\.\.\., n, n\)"
            ),
        ):
            fn(v3)
    with (
        cases.case("qr 1-d"),
        pytest.raises(
            nx.ShapeError, match=r"^qr: x must have at least 2 dimensions \(\.\.\., m, n\)"
        ),
    ):
        nx.qr(v3)
    with (
        cases.case("qr mode"),
        pytest.raises(
            nx.ArgumentError, match=r"^qr: mode must be one of 'reduced', 'complete', got 'r'"
        ),
    ):
        nx.qr(nx.ones((2, 2)), mode="r")
    for op, fn in (("solve", nx.solve), ("triangular_solve", nx.triangular_solve)):
        with (
            cases.case(f"{op} a non-square"),
            pytest.raises(nx.ShapeError, match=rf"^{op}: a must be square in its last two axes"),
        ):
            fn(m23, v3)
        with (
            cases.case(f"{op} b length"),
            pytest.raises(
                nx.ShapeError,
                match=rf"^{op}: b f32\[3\] .*must have length 2 to match a f32\[2\]\[2\]",
            ),
        ):
            fn(nx.eye(2), v3)
        with (
            cases.case(f"{op} b rows"),
            pytest.raises(
                nx.ShapeError, match=rf"^{op}: b f32\[3\]\[1\] .*must have 2 rows to match a"
            ),
        ):
            fn(nx.eye(2), nx.ones((3, 1)))
        with (
            cases.case(f"{op} b 0-d"),
            pytest.raises(nx.ShapeError, match=rf"^{op}: b must be at least 1-d"),
        ):
            fn(nx.eye(2), nx.tensor(1.0))
        with cases.case(f"{op} batch"), pytest.raises(nx.ShapeError, match=rf"^{op}"):
            fn(nx.ones((2, 2, 2)), nx.ones((3, 2, 1)))
    with (
        cases.case("triangular_solve right side"),
        pytest.raises(
            nx.ShapeError, match=r"^triangular_solve: b f32\[2\]\[3\] .*must have 2 columns"
        ),
    ):
        nx.triangular_solve(nx.eye(2), nx.ones((2, 3)), left_side=False)
    with (
        cases.case("triangular_solve transform"),
        pytest.raises(
            nx.ArgumentError,
            match=r"^triangular_solve: transform_a must be one of 'none', 'transpose', 'adjoint'",
        ),
    ):
        nx.triangular_solve(nx.eye(2), v3[:2], transform_a="conjugate")
    with (
        cases.case("uint64 with int"),
        pytest.raises(nx.DTypeError, match=r"^solve: cannot promote"),
    ):
        nx.solve(nx.eye(2, dtype=nx.uint64), nx.ones(2, dtype=nx.int64))
    cases.finish()


def test_linalg_blocks_are_declared() -> None:
    from numerix.primitives import BLOCKS

    for name in ("cholesky", "triangular_solve", "solve", "inv", "det", "qr", "eigh"):
        b = BLOCKS[name]
        assert b.family == "linalg" and b.method == f"block_{name}" and b.doc


# ---------------------------------------------------------------- lu

LU_SHAPES = SQUARE + [(5, 5), (2, 1, 4, 4)]


def _check_lu(hp: np.ndarray, hl: np.ndarray, hu: np.ndarray, wide: np.ndarray, dt: dtypes.DType,
              s: float) -> None:  # fmt: skip
    assert (np.triu(hl, 1) == 0).all(), "l must be lower triangular"
    assert (np.diagonal(hl, axis1=-2, axis2=-1) == 1).all(), "l must have a unit diagonal"
    assert (np.tril(hu, -1) == 0).all(), "u must be upper triangular"
    assert ((hp == 0) | (hp == 1)).all() and (hp.sum(-1) == 1).all() and (hp.sum(-2) == 1).all(), (
        "p must be a permutation matrix"
    )
    # partial pivoting keeps every multiplier within 1 (as the dtype rounds it)
    assert (np.abs(hl) <= 1 + 4 * tolerance("lu", dt)[0]).all(), np.abs(hl).max()
    _close("lu", hp @ hl @ hu, wide, dt, s)
    if wide.size:
        # det(x) = det(p) prod(diag(u))
        want = np.linalg.det(wide)
        got = np.linalg.det(hp) * np.prod(np.diagonal(hu, axis1=-2, axis2=-1), axis=-1)
        _close("lu", got, want, dt, s * max(1.0, float(np.max(np.abs(want)))))


@pytest.mark.parametrize("shape", LU_SHAPES, ids=shape_id)
@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_lu(dtype: dtypes.DType, shape: tuple[int, ...]) -> None:
    if dtype.kind == "b":
        _refuses_bool("lu", lambda: nx.lu(np.ones(shape, bool)))
        return
    x = sample(dtype, shape, 10, small=dtype.kind in "iu")
    wide = _wide(x, dtype)
    rd, cd = _result(dtype), _compute(dtype)
    s = _scale(wide, wide)
    cases = Cases()
    for label, dt, run in (
        ("block", rd, lambda: nx.lu(x)),
        ("non-contiguous", rd, lambda: nx.lu(noncontiguous(x))),
        ("fallback", cd, lambda: linalg_blocks.lu_fallback(nx.tensor(x, dtype=cd))),
    ):
        with cases.case(label):
            p, low, up = run()
            _check_lu(*(_form(t, dt, shape) for t in (p, low, up)), wide, dt, s)
    cases.finish()


def test_lu_pivots_as_getrf() -> None:
    # the first largest |entry| is the pivot; a zero column is skipped (u gets a zero pivot)
    a = np.array([[1.0, 2.0, 0.0], [-4.0, 4.0, 1.0], [4.0, 0.0, 2.0]])
    want_p = np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    z = np.array([[0.0, 1.0, 2.0], [0.0, 0.0, 3.0], [0.0, 5.0, 6.0]])
    for run in (nx.lu, lambda t: linalg_blocks.lu_fallback(nx.tensor(t))):
        p, low, up = run(a)
        check(p, want_p, nx.float64)
        check(p @ low @ up, a, nx.float64, scale=10.0)
        check(low[1, 0], -1.0, nx.float64)
        p, low, up = run(z)
        check(p @ low @ up, z, nx.float64, scale=10.0)
        check(up[0, 0], 0.0, nx.float64)


# ---------------------------------------------------------------- svd

SVD_SHAPES = [(3, 3), (4, 2), (2, 4), (2, 3, 3), (2, 5, 3), (2, 3, 5), (1, 1), (4, 1), (0, 0),
              (3, 0), (0, 3), (2, 0, 2)]  # fmt: skip


def _check_svd(x: np.ndarray, got: tuple[Any, Any, Any], dt: dtypes.DType, full: bool) -> None:
    """Shapes and dtypes, s against numpy's, unitary factors, reconstruction, and (for
    distinct singular values) the singular vectors up to their phases."""
    *batch, m, n = x.shape
    k = min(m, n)
    un, sn, vhn = np.linalg.svd(x, full_matrices=full)
    s = _scale(np.eye(1), x) * max(m, n, 1)
    u, sv, vh = got
    hu = _form(u, dt, (*batch, m, m if full else k))
    hs = _form(sv, _real(dt), (*batch, k))
    hvh = _form(vh, dt, (*batch, n if full else k, n))
    check(sv, sn.astype(_real(dt).numpy_dtype), _real(dt), scale=s)
    assert (np.diff(hs, axis=-1) <= 0).all(), f"s must be descending: {hs}"
    _close("svd", _ct(hu) @ hu, np.broadcast_to(np.eye(hu.shape[-1]), batch + [hu.shape[-1]] * 2),
           dt, s)  # fmt: skip
    _close("svd", hvh @ _ct(hvh),
           np.broadcast_to(np.eye(hvh.shape[-2]), batch + [hvh.shape[-2]] * 2), dt, s)  # fmt: skip
    _close("svd", (hu[..., :, :k] * hs[..., None, :]) @ hvh[..., :k, :], x, dt, s)
    if k > 1:
        gap = float(np.min(-np.diff(sn, axis=-1)))
        # u = u_numpy e^{i theta} and vh = e^{-i theta} vh_numpy: one diagonal of phases
        pu = _ct(un[..., :, :k]) @ hu[..., :, :k]
        pv = np.conj(hvh[..., :k, :] @ _ct(vhn[..., :k, :]))
        _close("svd", np.abs(pu), np.broadcast_to(np.eye(k), pu.shape), dt, s / max(gap, 1e-3))
        _close("svd", pu, pv, dt, s / max(gap, 1e-3))


@pytest.mark.parametrize("shape", SVD_SHAPES, ids=shape_id)
@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_svd(dtype: dtypes.DType, shape: tuple[int, ...]) -> None:
    if dtype.kind == "b":
        _refuses_bool("svd", lambda: nx.svd(np.ones(shape, bool)))
        return
    x = _general(dtype, shape, 11)
    wide = _wide(x, dtype)
    rd, cd = _result(dtype), _compute(dtype)
    cases = Cases()
    for full in (True, False):
        for label, dt, run in (
            ("block", rd, lambda full=full: nx.svd(x, full_matrices=full)),
            ("non-contiguous", rd, lambda full=full: nx.svd(noncontiguous(x), full_matrices=full)),
            ("fallback", cd,
             lambda full=full: linalg_blocks.svd_fallback(nx.tensor(x, dtype=cd), full_matrices=full)),
        ):  # fmt: skip
            with cases.case(f"{label} full_matrices={full}"):
                _check_svd(wide, run(), dt, full)
    cases.finish()


def test_svd_rank_deficient() -> None:
    # rank 1 and the zero matrix: zero singular values, u and vh still unitary
    a = np.outer([1.0, -2.0, 2.0, 0.5], [3.0, 0.0, 4.0])
    for x in (a, np.zeros((3, 2)), a.T):
        for full in (True, False):
            for got in (nx.svd(x, full_matrices=full),
                        linalg_blocks.svd_fallback(nx.tensor(x), full_matrices=full)):  # fmt: skip
                u, s, vh = got
                check(s, np.linalg.svd(x, compute_uv=False), nx.float64, scale=100.0)
                hu, hvh = u.to_numpy(), vh.to_numpy()
                k = min(x.shape)
                np.testing.assert_allclose(_ct(hu) @ hu, np.eye(hu.shape[-1]), atol=1e-12)
                np.testing.assert_allclose(hvh @ _ct(hvh), np.eye(hvh.shape[-2]), atol=1e-12)
                rec = (hu[:, :k] * s.to_numpy()) @ hvh[:k]
                np.testing.assert_allclose(rec, x, atol=1e-12)


def test_lu_and_svd_refuse_bad_input_and_are_declared() -> None:
    from numerix.primitives import BLOCKS

    cases = Cases()
    with (
        cases.case("lu non-square"),
        pytest.raises(
            nx.ShapeError, match=r"^lu: x must be square in its last two axes, got f32\[2\]\[3\]"
        ),
    ):
        nx.lu(nx.ones((2, 3)))
    with (
        cases.case("lu 1-d"),
        pytest.raises(nx.ShapeError, match=r"^lu: x must have at least 2 dimensions \(\.\.\., n"),
    ):
        nx.lu(nx.ones(3))
    with (
        cases.case("svd 1-d"),
        pytest.raises(
            nx.ShapeError, match=r"^svd: x must have at least 2 dimensions \(\.\.\., m, n\), got "
            r"f32\[3\]"
        ),
    ):  # fmt: skip
        nx.svd(nx.ones(3))
    with cases.case("declared"):
        for name in ("lu", "svd"):
            b = BLOCKS[name]
            assert b.family == "linalg" and b.method == f"block_{name}" and b.doc
    cases.finish()
