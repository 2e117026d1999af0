"""The Tensor object: attributes, conversions to Python and numpy, the Python protocols
and repr."""

from __future__ import annotations

import copy
import pickle
from typing import Any

import numpy as np
import pytest

import numerix as nx
from numerix import dtypes
from numerix.testing.oracle import ALL, check, ids, sample

SHAPES = [(), (0,), (2, 0), (1,), (3,), (2, 3), (2, 1, 4)]


def _py(a: np.ndarray) -> np.ndarray:
    # what Python values a tensor's elements become: bfloat16 goes through float32
    return a.astype(np.float32) if a.dtype == dtypes.bfloat16.numpy_dtype else a


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_attributes(dtype: dtypes.DType, shape: tuple[int, ...]) -> None:
    a = sample(dtype, shape, 1)
    x = nx.tensor(a)
    assert x.shape == a.shape and type(x.shape) is tuple
    assert x.dtype is dtype
    assert x.ndim == a.ndim
    assert x.size == a.size
    assert x.backend is nx.get_default_backend()
    assert x.device == x.backend.device
    dims = "".join(f"[{d}]" for d in shape)
    assert x.describe() == f"{dtype.short}{dims} {x.backend!r}"


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_conversions(dtype: dtypes.DType, shape: tuple[int, ...]) -> None:
    a = sample(dtype, shape, 2)
    x = nx.tensor(a)
    # to_numpy: the values, in exactly the tensor's dtype
    got = x.to_numpy()
    assert got.dtype == dtype.numpy_dtype and got.shape == a.shape
    np.testing.assert_array_equal(got, a)
    # tolist: nested Python lists of Python scalars, as numpy's
    assert x.tolist() == _py(a).tolist()
    # __array__, with and without a dtype or copy
    np.testing.assert_array_equal(np.asarray(x), a, strict=True)
    np.testing.assert_array_equal(np.asarray(x, dtype=np.complex128), _py(a).astype(np.complex128))
    c = np.array(x, copy=True)
    np.testing.assert_array_equal(c, a)
    assert not np.shares_memory(c, x.to_numpy()) or a.size == 0
    # item and the scalar conversions, for one-element tensors
    if a.size == 1:
        want = _py(a).reshape(()).item()
        assert x.item() == want and type(x.item()) is type(want)
        assert bool(x) is bool(want)
        if dtype.kind != "c":
            assert float(x) == float(want)
            assert int(x) == int(want)
        assert complex(x) == complex(want)
    else:
        with pytest.raises(
            nx.ShapeError,
            match=rf"^item: only a tensor of one element converts to "
            rf"a Python scalar, got {dtype.short}",
        ):
            x.item()
        with pytest.raises(
            nx.ShapeError,
            match=rf"^bool: the truth value of a tensor with {a.size} "
            r"elements \(.*\) is ambiguous; use numerix.any\(t\)",
        ):
            bool(x)
        with pytest.raises(nx.ShapeError, match=r"^float: only a tensor of one element"):
            float(x)


@pytest.mark.parametrize("dtype", [d for d in ALL if d is not dtypes.bfloat16], ids=ids)
def test_dlpack(dtype: dtypes.DType) -> None:
    # (numpy's DLPack export knows no bfloat16, whose ml_dtypes type it cannot describe)
    a = sample(dtype, (3, 4), 3)
    for x, want in [(nx.tensor(a), a), (nx.transpose(nx.tensor(a)), a.T),
                    (nx.tensor(a)[::2, ::-1], a[::2, ::-1]), (nx.tensor(a[0, 0]), a[0, 0]),
                    (nx.broadcast_to(nx.tensor(a[0]), (2, 4)), np.broadcast_to(a[0], (2, 4)))]:  # fmt: skip
        got = np.from_dlpack(x)
        assert got.dtype == dtype.numpy_dtype
        np.testing.assert_array_equal(got, want, strict=True)
    assert nx.tensor(a).__dlpack_device__() == a.__dlpack_device__()
    check(nx.tensor(np.from_dlpack(nx.tensor(a))), a, dtype)


def test_len_iter_and_zero_d() -> None:
    a = sample(nx.float32, (4, 2), 4)
    x = nx.tensor(a)
    assert len(x) == 4
    assert len(nx.zeros((0, 3))) == 0
    assert [r.tolist() for r in x] == a.tolist()
    with pytest.raises(
        TypeError,
        match=r"^len\(\) of a 0-d tensor \(f32 \w+\([^)]*\)\); it has no "
        r"first axis",
    ):
        len(nx.tensor(1.0))
    with pytest.raises(TypeError, match=r"^iteration over a 0-d tensor \(s64 \w+\([^)]*\)\)"):
        iter(nx.tensor(1)).__next__()


def test_bool_of_one_element_tensors() -> None:
    for v in (0, 3, 0.0, -0.5, True, False, 1j, 0j):
        for shape in [(), (1,), (1, 1)]:
            x = nx.full(shape, v)
            assert bool(x) is bool(np.full(shape, v)), (v, shape)
    with pytest.raises(nx.ShapeError, match=r"^bool: the truth value of a tensor with 0 elements"):
        bool(nx.zeros((0,)))
    with pytest.raises(TypeError, match=r"only integer tensors can be used as an index, got f32"):
        [0, 1][nx.tensor(1.0)]
    assert [0, 1, 2][nx.tensor(2, dtype=nx.int8)] == 2


@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_repr(dtype: dtypes.DType) -> None:
    a = sample(dtype, (2, 3), 5)
    r = repr(nx.tensor(a))
    head, _, body = r.partition("\n")
    assert head == f"Tensor<{dtype.short}[2][3] {nx.get_default_backend()!r}>"
    assert body == "  " + np.array2string(_py(a), separator=", ", prefix="  ")
    assert "..." not in r
    assert str(nx.tensor(a)) == r
    assert repr(nx.tensor(a[0, 0])).startswith(
        f"Tensor<{dtype.short} {nx.get_default_backend()!r}>\n  "
    )
    assert repr(nx.zeros((2, 0), dtype)).startswith(
        f"Tensor<{dtype.short}[2][0] {nx.get_default_backend()!r}>\n  "
    )


def test_repr_abbreviates_large_data() -> None:
    r = repr(nx.arange(1000, dtype=nx.float32))
    assert r.startswith(f"Tensor<f32[1000] {nx.get_default_backend()!r}>\n  [  0.,   1.,   2., ...")
    assert "..." in r and "999." in r and "500." not in r
    assert len(r) < 200
    big = repr(nx.ones((50, 50), nx.int32))
    assert (
        big.startswith(f"Tensor<s32[50][50] {nx.get_default_backend()!r}>")
        and "..." in big
        and len(big) < 600
    )


def test_tensors_are_unhashable_picklable_and_copies_keep_their_values() -> None:
    a = sample(nx.bfloat16, (2, 3), 6)
    x = nx.tensor(a)
    with pytest.raises(TypeError, match=r"^Tensor is unhashable: == compares element-wise"):
        hash(x)
    copies = (pickle.loads(pickle.dumps(x)), copy.deepcopy(x), copy.copy(x), x[0])
    for y in copies[:3]:
        check(y, a, nx.bfloat16)
        assert y is not x
    # x[key] = value gives x new values; its copies and views keep the old ones
    x[0, 0] = 1
    b = a.copy()
    b[0, 0] = 1
    check(x, b, nx.bfloat16)
    for y in copies[:3]:
        check(y, a, nx.bfloat16)
    check(copies[3], a[0], nx.bfloat16)


def test_numpy_views_are_read_only() -> None:
    # a tensor is immutable: the arrays that may share its memory refuse writes, and
    # np.array(t) is a writable copy
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = nx.tensor(a)
    for v in (x.to_numpy(), np.asarray(x), np.asarray(x, dtype=np.float32)):
        assert not v.flags.writeable
        with pytest.raises(ValueError, match="read-only"):
            v[0, 0] = 100.0
    c = np.array(x)
    assert c.flags.writeable
    c[0, 0] = 100.0
    check(x, a, nx.float32)
    assert x.tolist()[0][0] == 0.0


@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_tensor_methods_are_the_ops(dtype: dtypes.DType) -> None:
    a = sample(dtype, (2, 3), 7)
    x = nx.tensor(a)
    pairs: list[tuple[Any, Any]] = [
        (x.reshape(3, 2), nx.reshape(x, (3, 2))), (x.transpose(), nx.transpose(x)),
        (x.squeeze(), nx.squeeze(x)), (x.flatten(), nx.reshape(x, (-1,))),
        (x.astype(nx.float64) if dtype.kind != "c" else x.astype(nx.complex128),
         nx.astype(x, nx.float64) if dtype.kind != "c" else nx.astype(x, nx.complex128)),
        (x.all(axis=1), nx.all(x, axis=1)), (x.any(), nx.any(x)), (x.T, nx.transpose(x)),
    ]  # fmt: skip
    for got, want in pairs:
        check(got, want.to_numpy(), want.dtype)


@pytest.mark.parametrize(
    "dtype", [dtypes.float32, dtypes.float64, dtypes.int32, dtypes.bfloat16], ids=ids
)
def test_format_and_round_as_python_scalars(dtype: dtypes.DType) -> None:
    x = nx.tensor(np.array(2.5 if dtype.kind == "f" else 7, dtype.numpy_dtype))
    v = x.item()
    # a format spec formats the value, no spec gives str(t)
    spec = ".3f" if dtype.kind == "f" else ">5d"
    assert f"{x:{spec}}" == format(v, spec)
    assert f"{x}" == str(x)
    assert f"{nx.reshape(x, (1, 1)):{spec}}" == format(v, spec)
    # round(t) is the nearest Python int (halves to even); round(t, n) a tensor as numpy's
    assert round(x) == round(v) and type(round(x)) is int
    a = np.array([0.125, 1.2345, -2.5, 1000.0], np.float32)
    check(round(nx.tensor(a), 2), np.round(a, 2), dtypes.float32)
    check(round(nx.tensor(a), -2), np.round(a, -2), dtypes.float32)
    check(round(nx.tensor(a), 0), np.round(a), dtypes.float32)
    i = np.array([15, -25], np.int64)
    check(round(nx.tensor(i), 1), i, dtypes.int64)
    with pytest.raises(nx.ShapeError, match=r"^format: a format spec \('\.2f'\) applies to a "):
        f"{nx.tensor([1.0, 2.0]):.2f}"
    with pytest.raises(nx.DTypeError, match=r"^round: a complex tensor has no nearest integer"):
        round(nx.tensor(1 + 1j))
    with pytest.raises(nx.ArgumentError, match=r"^round: negative ndigits \(-1\) on an integer"):
        round(nx.tensor(i), -1)
