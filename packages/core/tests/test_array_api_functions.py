"""The array API functions numerix adds as its own ops (issue 29): each against numpy,
exact dtype and shape, over dtypes and edge shapes, and bad input giving a named error."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Literal

import numpy as np
import pytest

import numerix as nx
from numerix.errors import DTypeError, IndexingError, ShapeError, TracingError

FLOATS = [nx.float16, nx.float32, nx.float64]
SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, 3.0, 1e-30, -2.5, math.inf, -math.inf, math.nan, 1e30]


def _same(got: nx.Tensor, want: np.ndarray, *, exact: bool = True) -> None:
    w = np.asarray(want)
    assert got.shape == w.shape
    assert got.dtype.numpy_dtype == w.dtype, (got.dtype, w.dtype)
    g = got.to_numpy()
    if exact:
        np.testing.assert_array_equal(g, w)
        if w.dtype.kind == "f":  # the signs of zeros and NaNs too
            np.testing.assert_array_equal(np.signbit(g), np.signbit(w))
    else:
        np.testing.assert_allclose(g, w, rtol=2 * np.finfo(w.dtype).eps, atol=0)


def _pair(d: nx.DType) -> tuple[np.ndarray, np.ndarray]:
    with np.errstate(over="ignore"):
        a = np.array(SPECIAL, dtype=d.numpy_dtype)
    return np.meshgrid(a, a)


@pytest.mark.parametrize("d", FLOATS)
@pytest.mark.parametrize("name", ["copysign", "nextafter"])
def test_bitwise_binary_math_is_numpys(name: str, d: nx.DType) -> None:
    a, b = _pair(d)
    got = getattr(nx, name)(nx.from_numpy(a), nx.from_numpy(b))
    want = getattr(np, name)(a, b)
    if name == "copysign":
        _same(got, want)
    else:  # numpy's NaN sign is not the standard's
        if d is nx.float16:  # numpy's float16 loop gives x1 where x1 == x2, C's (and ours) x2
            want = np.where(a == b, b, want)
        nan = np.isnan(want)
        assert np.isnan(got.to_numpy()[nan]).all()
        _same(nx.where(nx.from_numpy(nan), 0, got), np.where(nan, 0, want).astype(want.dtype))


@pytest.mark.parametrize("d", FLOATS)
def test_signbit(d: nx.DType) -> None:
    a = np.array(SPECIAL + [-math.nan], dtype=d.numpy_dtype)
    _same(nx.signbit(nx.from_numpy(a)), np.signbit(a))
    _same(
        nx.signbit(nx.tensor([-3, 0, 2], dtype=nx.int8)), np.signbit(np.array([-3, 0, 2], np.int8))
    )
    _same(nx.signbit(nx.tensor(-0.0, dtype=d)), np.signbit(np.array(-0.0, d.numpy_dtype)))


@pytest.mark.parametrize("d", [nx.float32, nx.float64])
def test_hypot_is_numpys_and_does_not_overflow(d: nx.DType) -> None:
    a, b = _pair(d)
    with np.errstate(all="ignore"):
        want = np.hypot(a, b)
    _same(nx.hypot(nx.from_numpy(a), nx.from_numpy(b)), want, exact=False)
    big = np.array([1e300, 3e-300, 0.0], dtype=np.float64)
    _same(nx.hypot(nx.from_numpy(big), nx.from_numpy(big)), np.hypot(big, big), exact=False)
    # an infinity wins over a NaN, as the standard says (and numpy)
    _same(
        nx.hypot(nx.tensor([math.inf], dtype=d), math.nan),
        np.hypot(np.array([math.inf], d.numpy_dtype), math.nan),
    )


@pytest.mark.parametrize("d", FLOATS)
@pytest.mark.parametrize("name", ["log2", "log10"])
def test_logs_exact_at_powers(name: str, d: nx.DType) -> None:
    base = 2 if name == "log2" else 10
    top = {nx.float16: 4, nx.float32: 30, nx.float64: 300}[d]
    ks = [k for k in range(-top // 4, top) if float(base) ** k <= np.finfo(d.numpy_dtype).max]
    a = np.array(
        [float(base) ** k for k in ks] + [0.0, -1.0, math.inf, math.nan, 7.0], dtype=d.numpy_dtype
    )
    with np.errstate(all="ignore"):
        want = getattr(np, name)(a)
    got = getattr(nx, name)(nx.from_numpy(a))
    # exactly k where the power itself is representable (numpy's float64 loop is; its
    # float32 SIMD loop can be an ulp off, log10(100) = 2.0000002)
    exact = np.array([Fraction(float(v)) == Fraction(base) ** k for v, k in zip(a, ks)])
    assert exact.sum() >= 4
    k = np.array(ks, dtype=d.numpy_dtype)[exact]
    _same(got[: len(ks)][nx.from_numpy(exact)], k)
    g = got.to_numpy()
    np.testing.assert_allclose(
        g[np.isfinite(want)], want[np.isfinite(want)], rtol=4 * np.finfo(want.dtype).eps
    )
    np.testing.assert_array_equal(g[~np.isfinite(want)], want[~np.isfinite(want)])
    assert got.dtype.numpy_dtype == want.dtype


def test_elementwise_shapes_scalars_and_ints() -> None:
    x = nx.ones((2, 0, 3), dtype=nx.float32)
    assert nx.copysign(x, nx.ones((1, 3), dtype=nx.float32)).shape == (2, 0, 3)
    assert nx.hypot(nx.tensor(3.0, dtype=nx.float64), 4).shape == ()
    assert nx.hypot(nx.tensor(3.0, dtype=nx.float64), 4).dtype is nx.float64
    assert nx.nextafter(
        nx.ones((3, 1), dtype=nx.float32), nx.zeros((1, 2), dtype=nx.float32)
    ).shape == (3, 2)
    assert nx.log2(nx.tensor([8], dtype=nx.int32)).tolist() == [3.0]
    assert nx.log2(nx.tensor([8], dtype=nx.int32)).dtype is nx.float32


@pytest.mark.parametrize("name", ["copysign", "hypot", "nextafter"])
def test_complex_is_refused_by_name(name: str) -> None:
    with pytest.raises(DTypeError, match=name):
        getattr(nx, name)(nx.tensor([1j]), 1.0)
    with pytest.raises(DTypeError, match="signbit"):
        nx.signbit(nx.tensor([1j]))


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
@pytest.mark.parametrize("name", ["log2", "log10"])
def test_complex_logs_as_numpy(name: str, dt) -> None:  # type: ignore[no-untyped-def]
    inf, nan = math.inf, math.nan
    values = [1 + 2j, -1 - 0j, 0j, complex(-0.0, -0.0), 8, complex(nan, 1), complex(inf, 1),
              complex(-inf, -0.0), complex(1, inf)]  # fmt: skip
    z = np.array(values, dtype=dt)
    got = getattr(nx, name)(nx.from_numpy(z)).to_numpy()
    with np.errstate(all="ignore"):
        want = getattr(np, name)(z)
    assert got.dtype == want.dtype and got.shape == want.shape
    for part in (np.real, np.imag):
        np.testing.assert_allclose(part(got), part(want), rtol=4 * np.finfo(dt).eps)
    zero = getattr(nx, name)(nx.zeros((), dtype=nx.complex64))
    assert zero.shape == () and zero.item() == complex(-inf, 0.0)  # not -inf + nanj


@pytest.mark.parametrize(
    "shape, axis", [((), None), ((0,), None), ((3, 4), 0), ((3, 4), (0, 1)), ((2, 0), 1)]
)
@pytest.mark.parametrize("dt", [np.bool_, np.int8, np.float32, np.complex64])
def test_count_nonzero(shape: tuple[int, ...], axis, dt) -> None:  # type: ignore[no-untyped-def]
    a = (np.arange(math.prod(shape)).reshape(shape) % 3).astype(dt)
    for keep in (False, True):
        got = nx.count_nonzero(nx.from_numpy(a), axis=axis, keepdims=keep)
        _same(got, np.asarray(np.count_nonzero(a, axis=axis, keepdims=keep), dtype=np.int64))


@pytest.mark.parametrize("dt", [np.int16, np.float64, np.bool_, np.uint8])
def test_diff(dt) -> None:  # type: ignore[no-untyped-def]
    a = (np.arange(12).reshape(3, 4) ** 2 % 7).astype(dt)
    t = nx.from_numpy(a)
    for axis in (0, 1, -1):
        for n in (0, 1, 2):
            _same(nx.diff(t, axis=axis, n=n), np.diff(a, axis=axis, n=n))
    p = np.ones((3, 1), dt)
    _same(
        nx.diff(t, prepend=nx.from_numpy(p), append=nx.from_numpy(p)),
        np.diff(a, prepend=p, append=p),
    )
    _same(nx.diff(nx.ones((0,), dtype=nx.float32)), np.diff(np.ones(0, np.float32)))
    with pytest.raises(ShapeError, match="diff"):
        nx.diff(nx.tensor(1))
    with pytest.raises(ValueError, match="diff"):
        nx.diff(t, n=-1)


def test_unstack_and_broadcast_shapes() -> None:
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    for axis in (0, 1, -1):
        got = nx.unstack(nx.from_numpy(a), axis=axis)
        want = [np.take(a, i, axis=axis) for i in range(a.shape[axis])]
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
    assert nx.unstack(nx.ones((0, 2))) == ()
    with pytest.raises(ShapeError, match="unstack"):
        nx.unstack(nx.tensor(1.0))
    for shapes in [((2, 1), (3,)), ((),), ((0,), (1,)), ((5, 1, 2), (4, 1), ())]:
        assert nx.broadcast_shapes(*shapes) == np.broadcast_shapes(*shapes)
    assert nx.broadcast_shapes() == ()
    with pytest.raises(ShapeError, match="broadcast_shapes"):
        nx.broadcast_shapes((2,), (3,))
    with pytest.raises(ShapeError, match="broadcast_shapes"):
        nx.broadcast_shapes((2.5,))  # type: ignore[arg-type]


@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("dt", [np.int32, np.float32, np.float64])
def test_searchsorted(side: Literal["left", "right"], dt) -> None:  # type: ignore[no-untyped-def]
    a = np.array([1, 2, 2, 3, 7], dtype=dt)
    v = np.array([[0, 2], [3, 9]], dtype=dt)
    _same(
        nx.searchsorted(nx.from_numpy(a), nx.from_numpy(v), side=side),
        np.searchsorted(a, v, side=side),
    )
    two = np.array(2, dt)
    _same(nx.searchsorted(nx.from_numpy(a), nx.from_numpy(two), side=side),
          np.asarray(np.searchsorted(a, two, side=side)))  # fmt: skip
    _same(
        nx.searchsorted(nx.from_numpy(a[:0]), nx.from_numpy(v), side=side),
        np.searchsorted(a[:0], v, side=side),
    )
    perm = np.array([3, 0, 4, 1, 2])
    u = np.empty_like(a)
    u[perm] = a
    _same(nx.searchsorted(nx.from_numpy(u), nx.from_numpy(v), side=side, sorter=nx.from_numpy(perm)),
          np.searchsorted(u, v, side=side, sorter=perm))  # fmt: skip
    if dt != np.int32:  # NaN sorts last
        f = np.array([1, 2, np.nan], dt)
        w = np.array([np.nan, 2], dt)
        _same(
            nx.searchsorted(nx.from_numpy(f), nx.from_numpy(w), side=side),
            np.searchsorted(f, w, side=side),
        )
    with pytest.raises(ValueError, match="searchsorted"):
        nx.searchsorted(nx.from_numpy(a), 1, side="middle")
    with pytest.raises(ShapeError, match="searchsorted"):
        nx.searchsorted(nx.ones((2, 2)), 1.0)


@pytest.mark.parametrize("shape", [(), (0,), (7,), (2, 3)])
@pytest.mark.parametrize("dt", [np.int8, np.float32, np.bool_])
def test_unique_family(shape: tuple[int, ...], dt) -> None:  # type: ignore[no-untyped-def]
    a = (np.array([3, 1, 3, 2, 1, 0, 3][: math.prod(shape)]).reshape(shape)).astype(dt)
    t = nx.from_numpy(a)
    values, indices, inverse, counts = np.unique(
        a, return_index=True, return_inverse=True, return_counts=True
    )
    inverse = inverse.reshape(shape)
    r = nx.unique_all(t)
    assert r._fields == ("values", "indices", "inverse_indices", "counts")
    _same(r.values, values)
    _same(r.indices, indices.astype(np.int64))
    _same(r.inverse_indices, inverse.astype(np.int64))
    _same(r.counts, counts.astype(np.int64))
    c = nx.unique_counts(t)
    _same(c.values, values)
    _same(c.counts, counts.astype(np.int64))
    i = nx.unique_inverse(t)
    _same(i.values, values)
    _same(i.inverse_indices, inverse.astype(np.int64))
    _same(nx.unique_values(t), values)


def test_unique_nans_are_distinct_and_trace_is_refused() -> None:
    t = nx.tensor([math.nan, 1.0, math.nan, -0.0, 0.0], dtype=nx.float64)
    r = nx.unique_counts(t)
    assert r.values.tolist()[:2] == [0.0, 1.0] and r.counts.tolist() == [2, 1, 1, 1]
    assert all(math.isnan(v) for v in r.values.tolist()[2:])
    with pytest.raises(TracingError, match="unique_values"):
        nx.jit(nx.unique_values)(t)


def test_unique_complex_is_lexicographic() -> None:
    a = np.array([1 + 1j, 1, 1 + 1j, 0, -0.0, -1 + 5j, 1 - 1j], dtype=np.complex128)
    values, indices, inverse, counts = np.unique(
        a, return_index=True, return_inverse=True, return_counts=True
    )
    r = nx.unique_all(nx.from_numpy(a))
    _same(r.values, values)
    _same(r.indices, indices.astype(np.int64))
    _same(r.inverse_indices, inverse.astype(np.int64))
    _same(r.counts, counts.astype(np.int64))


def test_expand_dims_axis_out_of_range_is_an_index_error() -> None:
    with pytest.raises(IndexError, match=r"^expand_dims: axis 3 is out of range"):
        nx.expand_dims(nx.zeros(3), axis=3)
    with pytest.raises(nx.ShapeError, match="expand_dims"):  # and still a ShapeError
        nx.expand_dims(nx.zeros(3), axis=-3)
    assert issubclass(nx.AxisError, ValueError) and issubclass(nx.AxisError, IndexError)


@pytest.mark.parametrize("dt", [np.int16, np.float32, np.bool_])
def test_isin(dt) -> None:  # type: ignore[no-untyped-def]
    a = (np.arange(12).reshape(3, 4) % 5).astype(dt)
    b = np.array([1, 4], dtype=dt)
    for invert in (False, True):
        _same(
            nx.isin(nx.from_numpy(a), nx.from_numpy(b), invert=invert), np.isin(a, b, invert=invert)
        )
    _same(nx.isin(nx.from_numpy(a), nx.from_numpy(b[:0])), np.isin(a, b[:0]))
    _same(nx.isin(nx.from_numpy(a[0, 0]), nx.from_numpy(b)), np.isin(a[0, 0], b))
    _same(
        nx.isin(nx.tensor([math.nan]), nx.tensor([math.nan])),
        np.isin([np.float32(np.nan)], [np.float32(np.nan)]),
    )


def test_can_cast_is_numpys_safe_cast() -> None:
    names = ["bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
             "float16", "float32", "float64", "complex64", "complex128"]  # fmt: skip
    for f in names:
        for t in names:
            a, b = getattr(nx, f), getattr(nx, t)
            assert nx.can_cast(a, b) == np.can_cast(a.numpy_dtype, b.numpy_dtype), (f, t)
    assert nx.can_cast(nx.ones(2, dtype=nx.int8), nx.bfloat16)
    assert not nx.can_cast(nx.int16, nx.bfloat16)
    with pytest.raises(DTypeError, match="can_cast"):
        nx.can_cast("nope", nx.int8)


def test_info_takes_tensors_and_constants() -> None:
    assert nx.finfo(nx.ones(2, dtype=nx.float64)).eps == np.finfo(np.float64).eps
    assert nx.finfo(nx.ones(2, dtype=nx.complex64)).dtype is nx.float32
    assert nx.iinfo(nx.ones(2, dtype=nx.uint16)).max == 65535
    with pytest.raises(DTypeError, match="iinfo"):
        nx.iinfo(nx.ones(2, dtype=nx.float32))
    assert (nx.e, nx.pi, nx.inf) == (math.e, math.pi, math.inf) and math.isnan(nx.nan)
    assert nx.newaxis is None and nx.ones((2,))[:, nx.newaxis].shape == (2, 1)


def test_zero_d_bool_index_and_tensor_repeats() -> None:
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    t = nx.from_numpy(a)
    for key in (True, False):
        _same(t[nx.tensor(key)], a[np.array(key)])
        _same(t[0, nx.tensor(key)], a[0, np.array(key)])
        _same(t[..., nx.tensor(key)], a[..., np.array(key)])
    s = nx.tensor(5.0)
    _same(s[nx.tensor(True)], np.array(5.0, np.float32)[np.array(True)])
    with pytest.raises(TracingError):
        nx.jit(lambda m: t[m])(nx.tensor(True))
    _same(nx.repeat(t, nx.tensor([1, 0, 2]), axis=1), np.repeat(a, [1, 0, 2], axis=1))
    _same(nx.repeat(t, nx.tensor(2)), np.repeat(a, 2))
    _same(
        nx.repeat(nx.ones((0,), dtype=nx.int32), nx.tensor([], dtype=nx.int64)),
        np.repeat(np.ones(0, np.int32), []),
    )
    with pytest.raises(ShapeError, match="repeat"):
        nx.repeat(t, nx.tensor([1.5]))
    with pytest.raises(IndexingError):
        t[nx.tensor([True])]
