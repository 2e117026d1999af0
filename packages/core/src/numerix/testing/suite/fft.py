"""Conformance of the Fourier transforms (fft, ifft, fftfreq) against numpy.fft."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import numerix as nx
from numerix import dtypes
from numerix.testing.oracle import (
    ALL,
    COMPLEX,
    FLOATS,
    INTS,
    check,
    ids,
    noncontiguous,
    oracle,
    sample,
    shape_id,
    t,
)

# op name -> (numerix fn, numpy fn)
TRANSFORMS: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {
    "fft": (nx.fft.fft, np.fft.fft),
    "ifft": (nx.ifft, np.fft.ifft),
}
OPS = list(TRANSFORMS)


def _complex_of(d: dtypes.DType) -> dtypes.DType:
    if d.kind == "c":
        return d
    return dtypes.complex128 if d is dtypes.float64 else dtypes.complex64


def _expect(
    op: str, a: np.ndarray, dtype: dtypes.DType, **kw: Any
) -> tuple[np.ndarray, dtypes.DType]:
    odt = _complex_of(dtype)
    return oracle(lambda v: TRANSFORMS[op][1](v, **kw), a, compute=odt, out=odt), odt


def _scale(a: np.ndarray) -> float:
    # an output element sums every input of its lane: errors grow with their magnitude
    s = np.abs(np.asarray(a).astype(np.complex128))
    return max(1.0, float(s.sum(axis=-1).max())) if s.size else 1.0


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_fft_every_dtype(op: str, dtype: dtypes.DType) -> None:
    a = sample(dtype, (3, 8))
    r = TRANSFORMS[op][0](t(a))
    exp, odt = _expect(op, a, dtype)
    check(r, exp, odt, scale=_scale(a), op=op)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("n", [1, 3, 5, 8, 16])
@pytest.mark.parametrize("dtype", (dtypes.float32, dtypes.float64) + COMPLEX, ids=ids)
def test_fft_length_pads_or_truncates(op: str, n: int, dtype: dtypes.DType) -> None:
    a = sample(dtype, (2, 5))
    r = TRANSFORMS[op][0](t(a), n=n)
    exp, odt = _expect(op, a, dtype, n=n)
    assert exp.shape == (2, n)
    check(r, exp, odt, scale=_scale(a), op=op)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("axis", [0, 1, 2, -1, -2, -3])
@pytest.mark.parametrize("n", [None, 2, 7])
def test_fft_axis(op: str, axis: int, n: int | None) -> None:
    a = sample(dtypes.complex64, (3, 4, 5))
    r = TRANSFORMS[op][0](t(a), n=n, axis=axis)
    exp, odt = _expect(op, a, dtypes.complex64, n=n, axis=axis)
    check(r, exp, odt, scale=_scale(np.moveaxis(a, axis, -1)), op=op)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("norm", ["backward", "ortho", "forward"])
@pytest.mark.parametrize("n", [None, 3, 9])
@pytest.mark.parametrize("dtype", (dtypes.float32, dtypes.complex128), ids=ids)
def test_fft_norm(op: str, norm: str, n: int | None, dtype: dtypes.DType) -> None:
    a = sample(dtype, (2, 6))
    r = TRANSFORMS[op][0](t(a), n=n, axis=0, norm=norm)
    exp, odt = _expect(op, a, dtype, n=n, axis=0, norm=norm)
    check(r, exp, odt, scale=_scale(a.T), op=op)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", (dtypes.int32,) + FLOATS + COMPLEX, ids=ids)
def test_fft_noncontiguous(op: str, dtype: dtypes.DType) -> None:
    a = sample(dtype, (4, 6))
    v = noncontiguous(a)
    r = TRANSFORMS[op][0](t(v))
    exp, odt = _expect(op, a, dtype)
    check(r, exp, odt, scale=_scale(a), op=op)


# (shape, n, axis): empty other axes, an empty transform axis zero-padded by n, length 1
EDGE = [((0, 4), None, -1), ((4, 0), None, 0), ((2, 0), 3, -1), ((0,), 1, -1), ((5, 1), None, -1),
        ((1,), None, 0), ((1,), 4, 0)]  # fmt: skip


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("case", EDGE, ids=[shape_id(c) for c in EDGE])
def test_fft_edge_shapes(op: str, case: Any) -> None:
    shape, n, axis = case
    a = sample(dtypes.float32, shape)
    r = TRANSFORMS[op][0](t(a), n=n, axis=axis)
    exp, odt = _expect(op, a, dtypes.float32, n=n, axis=axis)
    check(r, exp, odt, op=op)


@pytest.mark.parametrize("dtype", FLOATS + COMPLEX, ids=ids)
def test_fft_round_trip(dtype: dtypes.DType) -> None:
    a = sample(dtype, (3, 10))
    back = nx.ifft(nx.fft.fft(t(a)))
    odt = _complex_of(dtype)
    # bfloat16 reaches complex through float32 (exact), as the core's cast does
    want = a.astype(np.float32) if dtype is dtypes.bfloat16 else a
    check(back, want.astype(odt.numpy_dtype), odt, scale=_scale(a), op="ifft")


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", (dtypes.bool_,) + INTS, ids=ids)
def test_fft_integers_give_complex64(op: str, dtype: dtypes.DType) -> None:
    a = sample(dtype, (9,))
    r = TRANSFORMS[op][0](t(a), n=4)
    assert r.dtype is dtypes.complex64
    exp, _ = _expect(op, a, dtype, n=4)
    check(r, exp, dtypes.complex64, scale=_scale(a), op=op)


# (label, call, error, message)
FFT_REFUSALS: list[tuple[str, Callable[[], Any], type, str]] = [
    ("0-d", lambda f: f(nx.tensor(1.0)), nx.ShapeError,
     r"axis -1 is out of range for a 0-d tensor, which has no axes"),
    ("n=0", lambda f: f(nx.zeros((2, 3)), n=0), nx.ShapeError,
     r"n=0 is not a valid transform length for f32\[2\]\[3\].*n must be >= 1"),
    ("n<0", lambda f: f(nx.zeros((3,)), n=-2), nx.ShapeError, r"n=-2 is not a valid"),
    ("n float", lambda f: f(nx.zeros((3,)), n=2.0), nx.ShapeError,
     r"n must be an int or None, got 2.0"),
    ("n bool", lambda f: f(nx.zeros((3,)), n=True), nx.ShapeError,
     r"n must be an int or None, got True"),
    ("empty axis", lambda f: f(nx.zeros((2, 0))), nx.ShapeError,
     r"axis 1 of f32\[2\]\[0\].* is empty.*give n >= 1"),
    ("axis range", lambda f: f(nx.zeros((2, 3)), axis=2), nx.ShapeError,
     r"axis 2 is out of range for a tensor of shape \(2, 3\)"),
    ("norm", lambda f: f(nx.zeros((3,)), norm="none"), nx.ArgumentError,
     r"norm must be one of 'backward', 'ortho', 'forward', got 'none'"),
]  # fmt: skip


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("case", FFT_REFUSALS, ids=[c[0] for c in FFT_REFUSALS])
def test_fft_refusals_never_reach_the_backend(
    op: str, case: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, call, err, pattern = case
    fn = TRANSFORMS[op][0]
    cls = type(nx.get_default_backend())

    def boom(self: Any, *args: Any, **kw: Any) -> Any:
        raise AssertionError(f"backend received {op} for invalid input")

    for name in OPS:
        monkeypatch.setattr(cls, name, boom)
    with pytest.raises(err, match=f"^{op}: {pattern}"):
        call(fn)


@pytest.mark.parametrize("n", [1, 2, 5, 8])
@pytest.mark.parametrize("d", [1.0, 0.5, -2.0, 3])
@pytest.mark.parametrize("dtype", FLOATS, ids=ids)
def test_fftfreq(n: int, d: float, dtype: dtypes.DType) -> None:
    r = nx.fftfreq(n, d=d, dtype=dtype)
    check(r, np.fft.fftfreq(n, d).astype(dtype.numpy_dtype), dtype)


def test_fftfreq_default_dtype_is_float32() -> None:
    r = nx.fftfreq(6)
    check(r, np.fft.fftfreq(6).astype(np.float32), dtypes.float32)


@pytest.mark.parametrize(
    "call, err, pattern",
    [
        (lambda: nx.fftfreq(0), nx.ShapeError, r"^fftfreq: n must be an int >= 1, got 0"),
        (lambda: nx.fftfreq(2.5), nx.ShapeError, r"^fftfreq: n must be an int >= 1, got 2.5"),
        (lambda: nx.fftfreq(4, d=0.0), nx.ShapeError, r"^fftfreq: d must be a finite non-zero"),
        (lambda: nx.fftfreq(4, dtype=nx.int32), nx.DTypeError,
         r"^fftfreq: dtype must be a real floating dtype, got int32"),
        (lambda: nx.fftfreq(4, dtype=nx.complex64), nx.DTypeError,
         r"^fftfreq: dtype must be a real floating dtype, got complex64"),
    ],
    ids=["n=0", "n float", "d=0", "int dtype", "complex dtype"],
)  # fmt: skip
def test_fftfreq_refusals(call: Callable[[], Any], err: type, pattern: str) -> None:
    with pytest.raises(err, match=pattern):
        call()
