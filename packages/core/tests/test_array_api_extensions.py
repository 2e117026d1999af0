"""The array API extensions numerix.linalg and numerix.fft, and the ops they added:
each checked against numpy (dtype, shape and values) and for its named errors."""

from __future__ import annotations

import subprocess
import sys
import types
from typing import Any

import numpy as np
import pytest

import numerix as nx
from numerix.errors import ArgumentError, DTypeError, ShapeError

LINALG_SPEC = [
    "cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "matmul", "matrix_norm",
    "matrix_power", "matrix_rank", "matrix_transpose", "outer", "pinv", "qr", "slogdet", "solve",
    "svd", "svdvals", "tensordot", "trace", "vecdot", "vector_norm",
]  # fmt: skip
FFT_SPEC = [
    "fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft",
    "fftfreq", "rfftfreq", "fftshift", "ifftshift",
]  # fmt: skip

RNG = np.random.default_rng(29)


def _rand(shape: tuple[int, ...], dtype: str) -> np.ndarray:
    a = RNG.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * RNG.standard_normal(shape)
    return a.astype(dtype)


def _complex_of(dtype: str) -> np.dtype:
    return np.dtype("complex128" if dtype in ("float64", "complex128") else "complex64")


def _real_of(dtype: str) -> np.dtype:
    return np.dtype("float64" if dtype in ("float64", "complex128") else "float32")


def _close(got: nx.Tensor, want: np.ndarray, dtype: np.dtype) -> None:
    g = got.to_numpy()
    assert g.dtype == dtype, (g.dtype, dtype)
    assert g.shape == want.shape, (g.shape, want.shape)
    tol = 1e-4 if dtype in (np.complex64, np.float32) else 1e-10
    np.testing.assert_allclose(
        g, want, rtol=tol, atol=tol * max(1.0, float(np.abs(want).max(initial=0)))
    )


# ---------------------------------------------------------------- the namespaces


def test_the_extensions_list_exactly_the_spec_names() -> None:
    assert nx.linalg.__all__ == LINALG_SPEC
    assert nx.fft.__all__ == FFT_SPEC
    for mod, names in ((nx.linalg, LINALG_SPEC), (nx.fft, FFT_SPEC)):
        for name in names:
            assert callable(getattr(mod, name)), name


def test_the_extensions_are_numerix_ops_not_second_implementations() -> None:
    for name in set(LINALG_SPEC) - {"eigh", "qr", "slogdet", "svd", "trace"}:
        assert getattr(nx.linalg, name) is getattr(nx.ops, name), name
    assert nx.linalg.trace is nx.matrix_trace
    for name in FFT_SPEC:
        assert getattr(nx.fft, name) is getattr(nx.ops, name), name
    # numerix.trace stays the tracer
    assert nx.trace.__module__.startswith("numerix.defn")


def test_calling_the_fft_module_names_the_new_function() -> None:
    with pytest.raises(TypeError, match=r"numerix\.fft\.fft\(x\)"):
        nx.fft(nx.ones(4))  # type: ignore[operator]
    assert isinstance(nx.fft, types.ModuleType)


def test_importing_numerix_loads_neither_extension() -> None:
    code = (
        "import sys, numerix as nx; nx.ones(2) + 1;"
        "print('numerix.fft' in sys.modules, 'numerix.linalg' in sys.modules);"
        "nx.fft.fft; nx.linalg.svd; print('numerix.fft' in sys.modules, 'numerix.linalg' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False", "True", "True"]


def test_named_tuples() -> None:
    a = _rand((2, 3, 3), "float64")
    spd = a @ a.transpose(0, 2, 1) + 3 * np.eye(3)
    r = nx.linalg.eigh(nx.tensor(spd))
    assert type(r).__name__ == "EighResult" and r.eigenvalues is r[0] and r.eigenvectors is r[1]
    _close(r.eigenvalues, np.linalg.eigvalsh(spd), np.dtype("float64"))
    q = nx.linalg.qr(nx.tensor(a[0, :, :2]), mode="complete")
    assert (q.Q.shape, q.R.shape) == ((3, 3), (3, 2))
    s = nx.linalg.slogdet(nx.tensor(a))
    want = np.linalg.slogdet(a)
    _close(s.sign, want.sign, np.dtype("float64"))
    _close(s.logabsdet, want.logabsdet, np.dtype("float64"))
    u = nx.linalg.svd(nx.tensor(a[0, :2]), full_matrices=False)
    assert (u.U.shape, u.S.shape, u.Vh.shape) == ((2, 2), (2,), (2, 3))


# ---------------------------------------------------------------- fft


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("norm", ["backward", "ortho", "forward"])
def test_fft_ifft_hfft_and_their_inverses(dtype: str, norm: Any) -> None:
    a = _rand((3, 5), dtype)
    for n, axis in ((None, -1), (3, 0), (8, 1), (1, 0)):
        for f in ("fft", "ifft"):
            got = getattr(nx.fft, f)(nx.tensor(a), n=n, axis=axis, norm=norm)
            _close(got, getattr(np.fft, f)(a, n=n, axis=axis, norm=norm), _complex_of(dtype))
        got = nx.fft.hfft(nx.tensor(a), n=n, axis=axis, norm=norm)
        _close(got, np.fft.hfft(a, n=n, axis=axis, norm=norm), _real_of(dtype))
        got = nx.fft.irfft(nx.tensor(a), n=n, axis=axis, norm=norm)
        _close(got, np.fft.irfft(a, n=n, axis=axis, norm=norm), _real_of(dtype))
        if dtype.startswith("float"):
            got = nx.fft.rfft(nx.tensor(a), n=n, axis=axis, norm=norm)
            _close(got, np.fft.rfft(a, n=n, axis=axis, norm=norm), _complex_of(dtype))
            got = nx.fft.ihfft(nx.tensor(a), n=n, axis=axis, norm=norm)
            _close(got, np.fft.ihfft(a, n=n, axis=axis, norm=norm), _complex_of(dtype))


def test_irfft_round_trips_odd_and_even_lengths() -> None:
    for n in (1, 2, 5, 6):
        a = _rand((2, n), "float64")
        back = nx.fft.irfft(nx.fft.rfft(nx.tensor(a)), n=n)
        _close(back, a, np.dtype("float64"))


@pytest.mark.parametrize("name", ["fftn", "ifftn", "rfftn", "irfftn"])
def test_n_dimensional_transforms(name: str) -> None:
    a = _rand((3, 4, 5), "float64")
    for s, axes in (
        (None, None),
        ((3, 6), (0, 2)),
        (None, (1,)),
        ((2, 3), (2, 0)),
        ((1, 1, 1), None),
    ):
        got = getattr(nx.fft, name)(nx.tensor(a), s=s, axes=axes)
        want = getattr(np.fft, name)(
            a, s=s, axes=axes if axes is not None or s is None else [0, 1, 2]
        )
        _close(got, want, np.dtype("float64" if name == "irfftn" else "complex128"))
    # an s entry of -1 keeps the axis's length
    got = nx.fft.fftn(nx.tensor(a), s=(-1, 2), axes=(0, 1))
    _close(got, np.fft.fftn(a, s=(3, 2), axes=(0, 1)), np.dtype("complex128"))
    # size-1 axes
    b = _rand((1, 1), "complex64")
    _close(nx.fft.fftn(nx.tensor(b)), np.fft.fftn(b), np.dtype("complex64"))


def test_fftn_over_no_axes_is_the_input_as_complex() -> None:
    got = nx.fft.fftn(nx.tensor(np.float32(2.0)))
    assert got.dtype == nx.complex64 and got.shape == () and got.item() == 2


@pytest.mark.parametrize("dtype", [None, "float32", "float64"])
def test_fftfreq_and_rfftfreq(dtype: str | None) -> None:
    for n in (1, 4, 7):
        for d in (1.0, 0.25):
            kw = {} if dtype is None else {"dtype": getattr(nx, dtype)}
            want_dtype = np.dtype(dtype or "float32")
            _close(nx.fft.fftfreq(n, d=d, **kw), np.fft.fftfreq(n, d), want_dtype)
            _close(nx.fft.rfftfreq(n, d=d, **kw), np.fft.rfftfreq(n, d), want_dtype)
    assert nx.fft.rfftfreq(4, device="binary").backend is nx.get_backend("binary")


@pytest.mark.parametrize("name", ["fftshift", "ifftshift"])
def test_shifts(name: str) -> None:
    a = np.arange(60, dtype=np.int16).reshape(3, 4, 5)
    for axes in (None, 0, (0, 2), [-1]):
        got = getattr(nx.fft, name)(nx.tensor(a), axes=axes).to_numpy()
        want = getattr(np.fft, name)(a, axes=axes)
        assert got.dtype == want.dtype and np.array_equal(got, want)
    z = nx.tensor(np.int8(3))
    assert getattr(nx.fft, name)(z).tolist() == 3
    e = getattr(nx.fft, name)(nx.zeros((0, 3)))
    assert e.shape == (0, 3)


@pytest.mark.parametrize(
    ("call", "err", "pattern"),
    [
        (lambda: nx.fft.fft(nx.tensor(1.0)), ShapeError, "fft: axis -1 is out of range"),
        (lambda: nx.fft.rfft(nx.tensor([1j])), DTypeError, "rfft: takes a real tensor"),
        (lambda: nx.fft.ihfft(nx.tensor([1j])), DTypeError, "ihfft: takes a real tensor"),
        (lambda: nx.fft.irfft(nx.tensor([1.0])), ShapeError, r"irfft: .* give n >= 1"),
        (lambda: nx.fft.hfft(nx.ones(3), norm="x"), ArgumentError, "hfft: norm must be"),
        (lambda: nx.fft.ihfft(nx.ones(3), norm="x"), ArgumentError, "ihfft: norm must be"),
        (lambda: nx.fft.rfft(nx.ones(3), n=0), ShapeError, "rfft: n=0"),
        (lambda: nx.fft.fftn(nx.ones((2, 2)), s=(2,), axes=(0, 1)), ShapeError, "one entry per"),
        (lambda: nx.fft.fftn(nx.ones((2, 2)), axes=(0, 0)), ShapeError, "names an axis twice"),
        (lambda: nx.fft.fftn(nx.ones(2), s=(2, 2)), ShapeError, "more entries than"),
        (lambda: nx.fft.ifftn(nx.ones(2), s=(0,)), ShapeError, "not a valid transform length"),
        (lambda: nx.fft.rfftn(nx.tensor(1.0)), ShapeError, "rfftn: needs at least one axis"),
        (lambda: nx.fft.rfftfreq(0), ShapeError, "rfftfreq: n must be an int >= 1"),
        (lambda: nx.fft.rfftfreq(3, d=0), ShapeError, "rfftfreq: d must be"),
        (lambda: nx.fft.fftfreq(3, dtype=nx.int32), DTypeError, "fftfreq: dtype must be a real"),
        (lambda: nx.fft.fftshift(nx.ones(3), axes=1), ShapeError, "fftshift: axis 1"),
    ],
)
def test_fft_errors(call, err, pattern) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(err, match=pattern):
        call()


# ---------------------------------------------------------------- linalg


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
def test_slogdet(dtype: str) -> None:
    for shape in ((3, 3), (2, 4, 4), (1, 1), (0, 2, 2)):
        a = _rand(shape, dtype)
        sign, logabsdet = nx.slogdet(nx.tensor(a))
        want = np.linalg.slogdet(a)
        _close(sign, want.sign, np.dtype(dtype))
        _close(logabsdet, want.logabsdet, _real_of(dtype))
    sign, logabsdet = nx.slogdet(nx.zeros((0, 0)))
    assert sign.dtype == nx.float32 and sign.item() == 1.0 and logabsdet.item() == 0.0
    sign, logabsdet = nx.slogdet(nx.tensor([[1.0, 2.0], [2.0, 4.0]]))
    assert sign.item() == 0.0 and logabsdet.item() == -np.inf
    # integers compute in float32, float16 rounds back, as det
    assert nx.slogdet(nx.tensor([[2, 0], [0, 3]]))[0].dtype == nx.float32
    assert nx.slogdet(nx.eye(2, dtype=nx.float16))[1].dtype == nx.float16


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128"])
def test_eigvalsh_svdvals_matrix_rank_pinv(dtype: str) -> None:
    a = _rand((2, 4, 3), dtype)
    h = a @ np.conj(a.transpose(0, 2, 1))
    _close(nx.eigvalsh(nx.tensor(h)), np.linalg.eigvalsh(h), _real_of(dtype))
    _close(nx.svdvals(nx.tensor(a)), np.linalg.svdvals(a), _real_of(dtype))
    _close(nx.pinv(nx.tensor(a)), np.linalg.pinv(a), np.dtype(dtype))
    rank = nx.matrix_rank(nx.tensor(h)).to_numpy()
    assert rank.dtype == np.int64 and rank.tolist() == np.linalg.matrix_rank(h).tolist() == [3, 3]
    # rtol as a number and as a tensor broadcasting against the batch
    for rtol in (1.0, 0.99, 1e-3):
        want = np.linalg.matrix_rank(h, rtol=rtol).tolist()
        assert nx.matrix_rank(nx.tensor(h), rtol=rtol).tolist() == want
    rt = np.array([0.0, 1.0])
    assert (
        nx.matrix_rank(nx.tensor(h), rtol=nx.tensor(rt)).tolist()
        == np.linalg.matrix_rank(h, rtol=rt).tolist()
    )
    _close(nx.pinv(nx.tensor(h), rtol=0.5), np.linalg.pinv(h, rtol=0.5), np.dtype(dtype))
    # empty matrices
    assert nx.svdvals(nx.zeros((2, 0, 3))).shape == (2, 0)
    assert nx.matrix_rank(nx.zeros((3, 0))).tolist() == 0
    assert nx.pinv(nx.zeros((2, 3, 0))).shape == (2, 0, 3)
    # size-1 matrices
    _close(nx.pinv(nx.tensor([[4.0]])), np.array([[0.25]]), np.dtype("float32"))


def test_matrix_power() -> None:
    a = _rand((2, 3, 3), "float64")
    for n in (-3, -1, 0, 1, 2, 5):
        _close(nx.matrix_power(nx.tensor(a), n), np.linalg.matrix_power(a, n), np.dtype("float64"))
    i = np.array([[1, 1], [0, 1]], dtype=np.int32)
    got = nx.matrix_power(nx.tensor(i), 4).to_numpy()
    assert got.dtype == np.int32 and got.tolist() == np.linalg.matrix_power(i, 4).tolist()
    assert nx.matrix_power(nx.zeros((0, 0)), 3).shape == (0, 0)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int64", "float32", "complex64"])
def test_matrix_trace(dtype: str) -> None:
    a = (np.arange(24) % 7).reshape(2, 3, 4).astype(dtype)
    for offset in (-3, -1, 0, 2, 4):
        got = nx.matrix_trace(nx.tensor(a), offset=offset).to_numpy()
        want = np.trace(a, offset=offset, axis1=-2, axis2=-1)
        assert got.dtype == want.dtype and got.shape == want.shape and np.array_equal(got, want)
    wide = "complex128" if dtype == "complex64" else "float64"
    got = nx.linalg.trace(nx.tensor(a), dtype=getattr(nx, wide)).to_numpy()
    want = np.trace(a, axis1=-2, axis2=-1, dtype=wide)
    assert got.dtype == want.dtype and np.array_equal(got, want)
    assert nx.matrix_trace(nx.zeros((0, 0))).item() == 0.0


@pytest.mark.parametrize("dtype", ["int16", "uint8", "float32", "complex128"])
def test_vecdot_cross_outer(dtype: str) -> None:
    a = (
        (_rand((2, 3), "float64") * 4).astype(dtype)
        if np.dtype(dtype).kind in "fc"
        else (np.arange(6).reshape(2, 3).astype(dtype))
    )
    b = a[::-1] if a.ndim == 2 else a
    for x, y, axis in ((a, b, -1), (a, b[0], -1), (a, b, -2), (a[0], b[1], 0)):
        got = nx.vecdot(nx.tensor(x), nx.tensor(y), axis=axis)
        want = np.vecdot(x, y, axis=axis)  # type: ignore[call-overload]
        if np.dtype(dtype).kind in "fc":
            _close(got, want, np.dtype(dtype))
        else:
            assert got.to_numpy().dtype == want.dtype and np.array_equal(got.to_numpy(), want)
    if (
        dtype != "uint8"
    ):  # numpy's cross of uint8 wraps as numerix's does; values checked on the rest
        for x, y, axis in ((a, b, -1), (a[0], b, -1), (a.T.copy(), b.T.copy(), 0)):
            got = nx.cross(nx.tensor(x), nx.tensor(y), axis=axis)
            want = np.cross(x, y, axis=axis)
            assert got.to_numpy().dtype == want.dtype
            np.testing.assert_allclose(got.to_numpy(), want, rtol=1e-6, atol=1e-6)
    res = nx.outer(nx.tensor(a[0]), nx.tensor(b[0])).to_numpy()
    want = np.outer(a[0], b[0])
    assert res.dtype == want.dtype and np.array_equal(res, want)
    # signed zeros, as multiply's
    z = nx.outer(nx.tensor([-0.0, 1.0]), nx.tensor([0.0])).to_numpy()
    assert np.signbit(z[0, 0]) and not np.signbit(z[1, 0])
    assert nx.outer(nx.zeros(0), nx.ones(3)).shape == (0, 3)


@pytest.mark.parametrize(
    ("call", "err", "pattern"),
    [
        (lambda: nx.slogdet(nx.ones((2, 3))), ShapeError, "slogdet: x must be square"),
        (lambda: nx.slogdet(nx.tensor([[True]])), DTypeError, "slogdet: bool"),
        (lambda: nx.eigvalsh(nx.ones(3)), ShapeError, "eigvalsh: x must have at least 2"),
        (lambda: nx.svdvals(nx.ones(3)), ShapeError, "svdvals: x must have at least 2"),
        (lambda: nx.matrix_rank(nx.ones(3)), ShapeError, "matrix_rank: x must have"),
        (lambda: nx.matrix_rank(nx.ones((2, 2, 2)), rtol=nx.ones(3)), ShapeError, "must broadcast"),
        (lambda: nx.pinv(nx.ones((2, 2)), rtol=nx.tensor([1j])), DTypeError, "pinv: rtol must be"),
        (lambda: nx.matrix_power(nx.ones((2, 2)), 0.5), ArgumentError, "matrix_power: n must"),  # type: ignore[arg-type]
        (lambda: nx.matrix_power(nx.ones((2, 3)), 2), ShapeError, "matrix_power: x must be square"),
        (lambda: nx.matrix_trace(nx.ones(3)), ShapeError, "matrix_trace: needs a tensor"),
        (lambda: nx.matrix_trace(nx.ones((2, 2)), offset=1.5), ArgumentError, "offset must be"),  # type: ignore[arg-type]
        (lambda: nx.cross(nx.ones(2), nx.ones(2)), ShapeError, "cross: .* must have size 3"),
        (lambda: nx.cross(nx.ones((3, 3)), nx.ones(3), axis=-2), ShapeError, "out of range"),
        (lambda: nx.vecdot(nx.ones((2, 3)), nx.ones((2, 1))), ShapeError, "does not broadcast"),
        (lambda: nx.vecdot(nx.tensor(1.0), nx.ones(3)), ShapeError, "at least 1 dimension"),
        (lambda: nx.vecdot(nx.tensor([True]), nx.tensor([True])), DTypeError, "vecdot: bool"),
        (lambda: nx.outer(nx.ones(3), nx.ones((2, 2))), ShapeError, "outer: takes 1-d"),
    ],
)
def test_linalg_errors(call, err, pattern) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(err, match=pattern):
        call()
