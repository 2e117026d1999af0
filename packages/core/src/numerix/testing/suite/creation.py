"""Creation: tensor, from_binary/to_binary, full, zeros, ones, *_like, arange, iota, eye,
linspace, against numpy."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import numerix as nx
from numerix import dtypes
from numerix.testing.oracle import ALL, FLOATS, INTS, check, ids, noncontiguous, sample, shape_id

# a Python value of each kind, and the default dtype it takes
PY_VALUES = [(True, nx.bool), (3, nx.int64), (-2.5, nx.float32), (1.5 - 2j, nx.complex64)]


def value_for(d: dtypes.DType) -> Any:
    """A Python scalar that ``d`` holds exactly."""
    return {"b": True, "i": -3, "u": 7, "f": 2.5, "c": 1.5 - 2j}[d.kind]


# ---------------------------------------------------------------- tensor


@pytest.mark.parametrize(("value", "want"), PY_VALUES, ids=str)
def test_tensor_from_python_scalar_takes_the_default_dtype(value: Any, want: dtypes.DType) -> None:
    check(nx.tensor(value), np.asarray(value).astype(want.numpy_dtype), want)


@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_tensor_from_python_scalar_with_dtype(dtype: dtypes.DType) -> None:
    for v in (True, 3, 2.5) + ((1 - 2j,) if dtype.kind == "c" else ()):
        check(nx.tensor(v, dtype=dtype), np.asarray(v).astype(dtype.numpy_dtype), dtype)
    check(nx.tensor(value_for(dtype), dtype=dtype.short),
          np.asarray(value_for(dtype)).astype(dtype.numpy_dtype), dtype)  # fmt: skip
    if dtype.kind != "c":
        with pytest.raises(nx.DTypeError, match=rf"^tensor: cannot store complex 1j in {dtype}"):
            nx.tensor(1j, dtype=dtype)


@pytest.mark.parametrize(
    ("data", "want"),
    [
        ([[1, 2], [3, 4]], nx.int64),
        ([[1.5, 2], [3, 4]], nx.float32),
        ([True, False], nx.bool),
        ([True, 2], nx.int64),
        ([1, 2.5j], nx.complex64),
        ((1, 2, 3), nx.int64),
        ([[[1.0]], [[2.0]]], nx.float32),
        ([], nx.float32),
        ([[], []], nx.float32),
        ([2**63], nx.uint64),  # numpy's choice for ints above int64
    ],
    ids=str,
)
def test_tensor_from_nested_lists(data: Any, want: dtypes.DType) -> None:
    # Python data takes numerix's defaults (float32, int64) with numpy's shape rules
    check(nx.tensor(data), np.array(data).astype(want.numpy_dtype), want)


@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_tensor_from_nested_lists_with_dtype(dtype: dtypes.DType) -> None:
    data = [[1, 0, 2], [3, 4, 5]] if dtype.kind != "b" else [[True, False, True]]
    check(nx.tensor(data, dtype=dtype), np.array(data, dtype=dtype.numpy_dtype), dtype)
    check(nx.tensor([], dtype=dtype), np.array([], dtype=dtype.numpy_dtype), dtype)


def test_tensor_from_lists_of_tensors_and_numpy_values_keeps_their_dtype() -> None:
    check(nx.tensor([nx.tensor(1), nx.tensor(2)]), np.array([1, 2]), nx.int64)
    f64 = [nx.tensor(1.5, dtype=nx.float64), nx.tensor(2.25, dtype=nx.float64)]
    check(nx.tensor(f64), np.array([1.5, 2.25]), nx.float64)
    check(nx.tensor([np.float64(1.5), np.float64(2.0)]), np.array([1.5, 2.0]), nx.float64)
    i8 = sample(nx.int8, (2, 3), 1)
    check(nx.tensor([t for t in i8]), i8, nx.int8)
    check(nx.tensor([nx.tensor(r) for r in i8]), i8, nx.int8)
    bf = sample(nx.bfloat16, (2,), 2)
    check(nx.tensor([nx.tensor(x) for x in bf]), bf, nx.bfloat16)


@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_tensor_from_numpy_keeps_dtype_and_shares_memory(dtype: dtypes.DType) -> None:
    for shape in [(), (0,), (2, 0), (3,), (2, 3, 4)]:
        a = sample(dtype, shape, 3)
        x = nx.tensor(a)
        check(x, a, dtype)
        # a host backend adopts the array without a copy
        if x.backend.is_host:
            assert np.shares_memory(x.to_numpy(), a) or a.size == 0
    a = sample(dtype, (4, 5), 4)
    for v in (a.T, a[::2, ::-1], noncontiguous(a), a[:, 1]):
        check(nx.tensor(v), np.ascontiguousarray(v), dtype)
    check(nx.tensor(a[1, 2]), a[1, 2], dtype)  # a numpy scalar keeps its dtype


@pytest.mark.parametrize("src", ALL, ids=ids)
def test_tensor_from_numpy_with_dtype_casts(src: dtypes.DType) -> None:
    a = sample(src, (2, 3), 5)
    a = np.abs(a) if src.kind == "f" else a  # floats going to unsigned stay in range
    for dst in (nx.int32, nx.uint8, nx.float32, nx.float64, nx.bool):
        if src.kind == "c" and dst.kind == "b":
            # complex to bool is x != 0, as numpy's cast and astype
            for got in (nx.tensor(a, dtype=dst), nx.tensor(nx.tensor(a), dtype=dst),
                        nx.from_numpy(a, dtype=dst)):  # fmt: skip
                check(got, a.astype(bool), dst)
            continue
        if src.kind == "c" and dst.kind != "c":
            msg = (
                rf"^tensor: converting complex {src.short}\[2\]\[3\] \w+\([^)]*\) to {dst} would "
                r"drop the imaginary part"
            )
            with pytest.raises(nx.DTypeError, match=msg):
                nx.tensor(a, dtype=dst)
            with pytest.raises(nx.DTypeError, match=msg):
                nx.tensor(nx.tensor(a), dtype=dst)
            with pytest.raises(nx.DTypeError, match=r"^from_numpy: converting complex"):
                nx.from_numpy(a, dtype=dst)
            continue
        via = a.astype(np.float32) if src is dtypes.bfloat16 else a
        check(nx.tensor(a, dtype=dst), via.astype(dst.numpy_dtype), dst)


def test_tensor_from_non_native_byte_order_and_other_objects() -> None:
    big = np.arange(6, dtype=">i4").reshape(2, 3)
    check(nx.tensor(big), big.astype("<i4"), nx.int32)
    check(nx.tensor(np.float64(1.5)), np.float64(1.5), nx.float64)
    check(nx.tensor(np.array(7, np.uint16)), np.array(7, np.uint16), nx.uint16)
    x = nx.tensor([1, 2])
    assert nx.tensor(x) is x
    check(nx.tensor(x, dtype=nx.float64), np.array([1.0, 2.0]), nx.float64)

    class ArrayLike:
        def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
            return np.arange(4, dtype=np.int16)

    check(nx.tensor(ArrayLike()), np.arange(4, dtype=np.int16), nx.int16)

    class DLPackOnly:
        def __init__(self, a: np.ndarray) -> None:
            self.a = a

        def __dlpack__(self, *args: Any, **kwargs: Any) -> Any:
            return self.a.__dlpack__(*args, **kwargs)

        def __dlpack_device__(self) -> Any:
            return self.a.__dlpack_device__()

    d = np.linspace(0, 1, 6).reshape(2, 3)
    check(nx.tensor(DLPackOnly(d)), d, nx.float64)


def test_tensor_ragged_and_non_numeric_data_are_refused() -> None:
    with pytest.raises(
        nx.ShapeError,
        match=r"^tensor: ragged nested sequence \(rows of different "
        r"lengths\); every row must have the same length: "
        r"\[\[1, 2\], \[3\]\]",
    ):
        nx.tensor([[1, 2], [3]])
    with pytest.raises(nx.ShapeError, match=r"^tensor: ragged nested sequence"):
        nx.tensor([[1.0], [2.0, [3.0]]])
    with pytest.raises(
        nx.DTypeError, match=r"^tensor: non-numeric data \(strings\) in \['a', 'b'\]"
    ):
        nx.tensor(["a", "b"])
    with pytest.raises(nx.DTypeError, match=r"^tensor: non-numeric data in \[1, None\]"):
        nx.tensor([1, None])
    with pytest.raises(nx.DTypeError, match=r"^tensor: non-numeric data in \[<object"):
        nx.tensor([object()])
    with pytest.raises(nx.DTypeError, match=r"^tensor: cannot make a tensor from NoneType None"):
        nx.tensor(None)
    with pytest.raises(nx.DTypeError, match=r"^tensor: cannot make a tensor from str 'abc'"):
        nx.tensor("abc")
    with pytest.raises(nx.DTypeError, match=r"^tensor: cannot make a tensor from dict"):
        nx.tensor({"a": 1})
    with pytest.raises(
        nx.DTypeError, match=r"^tensor: bytes are raw data; use numerix.from_binary"
    ):
        nx.tensor(b"\x00\x01")
    with pytest.raises(nx.DTypeError, match=r"^tensor: data of numpy dtype <U1 is not numeric"):
        nx.tensor(np.array(["a"]))
    with pytest.raises(
        nx.DTypeError, match=r"^tensor: data of numpy dtype datetime64\[D\] is not "
    ):
        nx.tensor(np.array(["2020-01-01"], dtype="datetime64[D]"))
    with pytest.raises(nx.DTypeError, match=r"^tensor: unknown dtype 'float8'"):
        nx.tensor([1], dtype="float8")


@pytest.mark.parametrize("dtype", INTS, ids=ids)
def test_tensor_values_out_of_range_are_refused(dtype: dtypes.DType) -> None:
    info = np.iinfo(dtype.numpy_dtype)
    for v in (int(info.max) + 1, int(info.min) - 1):
        with pytest.raises(nx.DTypeError, match=rf"^tensor: Python int {v} does not fit {dtype}"):
            nx.tensor(v, dtype=dtype)
        with pytest.raises(nx.DTypeError, match=rf"^tensor: .*does not fit {dtype}"):
            nx.tensor([1, v], dtype=dtype)
    for v in (float("nan"), float("inf")):
        with pytest.raises(nx.DTypeError, match=rf"^tensor: cannot store {v} in {dtype}"):
            nx.tensor(v, dtype=dtype)
    with pytest.raises(
        nx.DTypeError, match=r"^tensor: Python int 1000000000000000019884624838656 "
    ):
        nx.tensor(1e30, dtype=dtype)
    check(nx.tensor(int(info.max), dtype=dtype), np.asarray(info.max, dtype.numpy_dtype), dtype)
    check(nx.tensor(-2.75, dtype=dtype) if dtype.kind == "i" else nx.tensor(2.75, dtype=dtype),
          np.trunc(-2.75 if dtype.kind == "i" else 2.75).astype(dtype.numpy_dtype), dtype)  # fmt: skip


def test_tensor_python_ints_beyond_int64() -> None:
    with pytest.raises(
        nx.DTypeError, match=r"^tensor: Python int 9223372036854775808 does not fit int64"
    ):
        nx.tensor(2**63)
    with pytest.raises(
        nx.DTypeError,
        match=r"^tensor: a Python int in \[18446744073709551616\] does "
        r"not fit int64",
    ):
        nx.tensor([2**64])


# ---------------------------------------------------------------- from_binary / to_binary


@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_binary_round_trip(dtype: dtypes.DType) -> None:
    a = sample(dtype, (3, 4), 6)
    raw = a.tobytes()
    x = nx.from_binary(raw, dtype)
    check(x, a.reshape(-1), dtype)
    assert nx.to_binary(x) == raw
    assert x.to_binary() == raw
    check(nx.from_binary(bytearray(raw), dtype.name), a.reshape(-1), dtype)
    check(nx.from_binary(memoryview(raw), dtype.short), a.reshape(-1), dtype)
    # a non-contiguous memoryview (every other element) is read as bytes(view) would be
    rows = memoryview(np.frombuffer(raw, np.uint8).reshape(a.size, dtype.itemsize))[::2]
    assert not rows.c_contiguous
    check(nx.from_binary(rows, dtype), a.reshape(-1)[::2], dtype)
    check(nx.from_binary(b"", dtype), np.zeros((0,), dtype.numpy_dtype), dtype)
    # to_binary is C order whatever the layout of the data
    tr = nx.transpose(nx.tensor(a))
    assert nx.to_binary(tr) == np.ascontiguousarray(a.T).tobytes()
    assert nx.to_binary(nx.tensor(noncontiguous(a))) == raw
    assert nx.to_binary(nx.tensor(a[0, 0])) == a[0, 0].tobytes()


def test_from_binary_errors() -> None:
    with pytest.raises(
        nx.ShapeError,
        match=r"^from_binary: 3 bytes is not a whole number of int16 "
        r"elements \(2 bytes each\)",
    ):
        nx.from_binary(b"abc", nx.int16)
    with pytest.raises(nx.DTypeError, match=r"^from_binary: expected bytes, got list"):
        nx.from_binary([1, 2], nx.int8)
    with pytest.raises(nx.DTypeError, match=r"^from_binary: unknown dtype 'int128'"):
        nx.from_binary(b"ab", "int128")


# ---------------------------------------------------------------- full, zeros, ones, *_like

SHAPES = [3, (), (0,), (2, 0), (2, 3), [2, 1, 2]]


@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_full_zeros_ones(dtype: dtypes.DType, shape: Any) -> None:
    v = value_for(dtype)
    check(nx.full(shape, v, dtype=dtype), np.full(shape, v, dtype=dtype.numpy_dtype), dtype)
    check(nx.zeros(shape, dtype=dtype), np.zeros(shape, dtype=dtype.numpy_dtype), dtype)
    check(nx.ones(shape, dtype), np.ones(shape, dtype=dtype.numpy_dtype), dtype)
    e = nx.empty(shape, dtype)  # values unspecified: only its type is checked
    assert (e.shape, e.dtype, e.to_numpy().dtype) == (
        np.empty(shape).shape,
        dtype,
        dtype.numpy_dtype,
    )


@pytest.mark.parametrize(("value", "want"), PY_VALUES, ids=str)
def test_full_default_dtypes(value: Any, want: dtypes.DType) -> None:
    check(nx.full((2, 3), value), np.full((2, 3), value).astype(want.numpy_dtype), want)
    check(nx.full((2,), nx.tensor(value)), np.full((2,), value).astype(want.numpy_dtype), want)
    check(nx.zeros((2,)), np.zeros((2,), np.float32), nx.float32)
    check(nx.ones(()), np.ones((), np.float32), nx.float32)


def test_full_converts_values_as_numpy() -> None:
    check(nx.full((2,), 1.75, dtype=nx.int32), np.full((2,), 1.75).astype(np.int32), nx.int32)
    check(nx.full((2,), -1.75, dtype=nx.int8), np.full((2,), -1.75).astype(np.int8), nx.int8)
    check(nx.full((2,), 2.5, dtype=nx.bool), np.full((2,), 2.5, dtype=bool), nx.bool)
    check(nx.full((2,), True, dtype=nx.float16), np.full((2,), True, dtype=np.float16), nx.float16)
    check(nx.full((2,), np.float32(0.5)), np.full((2,), 0.5, np.float32), nx.float32)


def test_full_errors() -> None:
    with pytest.raises(
        nx.DTypeError,
        match=r"^full: Python int 300 does not fit int8 \(range "
        r"-128..127\)",
    ):
        nx.full((2,), 300, dtype=nx.int8)
    with pytest.raises(nx.DTypeError, match=r"^full: Python int -1 does not fit uint32"):
        nx.full((2,), -1, dtype=nx.uint32)
    with pytest.raises(nx.DTypeError, match=r"^full: Python int 300 does not fit uint8"):
        nx.full((2,), 300.0, dtype=nx.uint8)
    with pytest.raises(nx.DTypeError, match=r"^full: cannot store nan in int32"):
        nx.full((2,), float("nan"), dtype=nx.int32)
    with pytest.raises(
        nx.DTypeError,
        match=r"^full: cannot store complex 1j in float32; use a "
        r"complex dtype",
    ):
        nx.full((2,), 1j, dtype=nx.float32)
    with pytest.raises(nx.DTypeError, match=r"^full: fill_value must be a scalar, got list"):
        nx.full((2,), [1, 2])
    with pytest.raises(nx.ShapeError, match=r"^full: negative dimension -1 in shape \(2, -1\)"):
        nx.full((2, -1), 0)
    with pytest.raises(nx.ShapeError, match=r"^zeros: negative dimension -3 in shape \(-3,\)"):
        nx.zeros(-3)
    with pytest.raises(
        nx.ShapeError, match=r"^ones: shape must be an int or a tuple of ints, got 'a'"
    ):
        nx.ones("a")
    with pytest.raises(nx.ShapeError, match=r"^zeros: shape must contain ints, got \(2, 1.5\)"):
        nx.zeros((2, 1.5))


@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_like(dtype: dtypes.DType) -> None:
    for shape in [(), (0,), (2, 0), (2, 3)]:
        a = sample(dtype, shape, 7)
        x = nx.tensor(a)
        v = value_for(dtype)
        check(nx.zeros_like(x), np.zeros_like(a), dtype)
        check(nx.ones_like(x), np.ones_like(a), dtype)
        check(nx.full_like(x, v), np.full_like(a, v), dtype)
        check(nx.empty_like(x), np.zeros_like(a), dtype)
        # from numpy arrays and with a dtype of their own
        check(nx.zeros_like(a), np.zeros_like(a), dtype)
        check(nx.ones_like(x, dtype=nx.float64), np.ones(shape, np.float64), nx.float64)
        check(nx.full_like(x, 3, dtype="s16"), np.full(shape, 3, np.int16), nx.int16)
        assert nx.zeros_like(x).backend is x.backend
    check(nx.zeros_like([[1, 2, 3]]), np.zeros((1, 3), np.int64), nx.int64)
    check(nx.full_like(nx.tensor([1, 2]), 2.5), np.full_like(np.array([1, 2]), 2.5), nx.int64)


def test_like_errors() -> None:
    with pytest.raises(nx.DTypeError, match=r"^full: Python int 300 does not fit int8"):
        nx.full_like(nx.tensor([1, 2], dtype=nx.int8), 300)
    with pytest.raises(nx.DTypeError, match=r"^full: cannot store complex"):
        nx.full_like(nx.ones((2,)), 1 + 1j)


# ---------------------------------------------------------------- arange, iota, eye, linspace


@pytest.mark.parametrize(
    "args",
    [(5,), (0,), (-3,), (2, 9), (9, 2), (2, 9, 3), (10, 0, -3), (-5, 5, 2), (0.0, 1.0, 0.1),
     (0.5, 5), (1, 2.5, 0.25), (3.0, -1.5, -0.5), (0, 1, 0.3), (np.int32(5),), (np.float64(2.5),)],
    ids=str,
)  # fmt: skip
def test_arange_default_dtype(args: tuple[Any, ...]) -> None:
    ints = all(isinstance(v, (int, np.integer)) for v in args)
    want = nx.int64 if ints else nx.float32
    ref = np.arange(*args)
    check(nx.arange(*args), ref.astype(want.numpy_dtype), want)


@pytest.mark.parametrize("dtype", [d for d in ALL if d.kind in "iuf"], ids=ids)
def test_arange_with_dtype(dtype: dtypes.DType) -> None:
    for args in [(7,), (1, 8, 2), (9, 0, -2), (3, 3)]:
        check(nx.arange(*args, dtype=dtype), np.arange(*args).astype(dtype.numpy_dtype), dtype)
    if dtype.kind == "f":
        ref = np.arange(0.5, 3.0, 0.25)
        check(nx.arange(0.5, 3.0, 0.25, dtype=dtype), ref.astype(dtype.numpy_dtype), dtype)


def test_arange_errors() -> None:
    with pytest.raises(nx.ShapeError, match=r"^arange: step must not be zero"):
        nx.arange(0, 5, 0)
    with pytest.raises(
        nx.DTypeError,
        match=r"^arange: dtype must be integer or real floating, got "
        r"complex64",
    ):
        nx.arange(5, dtype=nx.complex64)
    with pytest.raises(
        nx.DTypeError, match=r"^arange: dtype must be integer or real floating, got bool"
    ):
        nx.arange(5, dtype=nx.bool)
    with pytest.raises(nx.DTypeError, match=r"^arange: start must be a real number, got 'a'"):
        nx.arange("a", 5)
    with pytest.raises(nx.DTypeError, match=r"^arange: step must be a real number, got 1j"):
        nx.arange(0, 5, 1j)
    with pytest.raises(nx.DTypeError, match=r"^arange: Python int -3 does not fit uint8"):
        nx.arange(-3, 3, dtype=nx.uint8)
    with pytest.raises(nx.DTypeError, match=r"^arange: Python int 299 does not fit int8"):
        nx.arange(100, 300, dtype=nx.int8)
    with pytest.raises(nx.ShapeError, match=r"^arange: start, stop and step must be finite"):
        nx.arange(0, float("inf"))


@pytest.mark.parametrize("dtype", [d for d in ALL if d.kind != "b"], ids=ids)
def test_iota(dtype: dtypes.DType) -> None:
    for shape in [(), (0,), (4,), (2, 3), (2, 0, 3), (2, 3, 4)]:
        nd = np.dtype(dtype.numpy_dtype)
        n = int(np.prod(shape))
        check(nx.iota(shape, dtype=dtype), np.arange(n).reshape(shape).astype(nd), dtype)
        for axis in range(-len(shape), len(shape)):
            idx = np.indices(shape)[axis] if shape else None
            check(nx.iota(shape, axis=axis, dtype=dtype), idx.astype(nd), dtype)
    check(nx.iota(5), np.arange(5), nx.int64)


def test_iota_errors() -> None:
    with pytest.raises(
        nx.ShapeError,
        match=r"^iota: axis 2 is out of range for a tensor of shape "
        r"\(2, 3\); valid axes are -2..1",
    ):
        nx.iota((2, 3), axis=2)
    with pytest.raises(nx.ShapeError, match=r"^iota: axis 0 is out of range for a 0-d tensor"):
        nx.iota((), axis=0)
    with pytest.raises(nx.DTypeError, match=r"^iota: dtype must be numeric, got bool"):
        nx.iota((2,), dtype=nx.bool)


@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_eye(dtype: dtypes.DType) -> None:
    for args, k in [((3,), 0), ((2, 4), 0), ((4, 2), 1), ((3, 3), -1), ((3, 5), 2), ((2, 2), 5),
                    ((0,), 0), ((3, 0), 0)]:  # fmt: skip
        check(nx.eye(*args, k=k, dtype=dtype), np.eye(*args, k=k, dtype=dtype.numpy_dtype), dtype)
    check(nx.eye(2), np.eye(2, dtype=np.float32), nx.float32)


def test_eye_errors() -> None:
    with pytest.raises(nx.ShapeError, match=r"^eye: k must be an int, got 1.5"):
        nx.eye(2, k=1.5)
    with pytest.raises(nx.ShapeError, match=r"^eye: negative dimension -1"):
        nx.eye(-1)


@pytest.mark.parametrize("dtype", [d for d in ALL if d.kind != "b"], ids=ids)
def test_linspace(dtype: dtypes.DType) -> None:
    nd = np.dtype(np.float32 if dtype is dtypes.bfloat16 else dtype.numpy_dtype)
    lo, hi = (0, 200) if dtype.kind == "u" else (-5, 7)
    for num in (0, 1, 2, 5, 9):
        for endpoint in (True, False):
            ref = np.linspace(lo, hi, num, endpoint=endpoint, dtype=nd)
            got = nx.linspace(lo, hi, num, dtype=dtype, endpoint=endpoint)
            check(got, ref, dtype, rtol=1e-5 if dtype.kind in "fc" else None)
    if dtype.kind == "c":
        ref = np.linspace(1 - 1j, 2 + 3j, 4, dtype=dtype.numpy_dtype)
        check(nx.linspace(1 - 1j, 2 + 3j, 4, dtype=dtype), ref, dtype)


def test_linspace_defaults_and_errors() -> None:
    check(nx.linspace(0, 1, 5), np.linspace(0, 1, 5, dtype=np.float32), nx.float32)
    check(nx.linspace(0.0, 1j, 3), np.linspace(0.0, 1j, 3).astype(np.complex64), nx.complex64)
    with pytest.raises(nx.ShapeError, match=r"^linspace: negative dimension -1"):
        nx.linspace(0, 1, -1)
    with pytest.raises(nx.DTypeError, match=r"^linspace: start must be a number, got 'a'"):
        nx.linspace("a", 1, 3)
    with pytest.raises(nx.DTypeError, match=r"^linspace: dtype must be numeric, got bool"):
        nx.linspace(0, 1, 3, dtype=nx.bool)
    with pytest.raises(nx.DTypeError, match=r"^linspace: complex bounds 0, 1j do not fit float32"):
        nx.linspace(0, 1j, 3, dtype=nx.float32)


@pytest.mark.parametrize("dtype", FLOATS, ids=ids)
def test_creation_backend_argument(dtype: dtypes.DType) -> None:
    for x in (nx.zeros((2,), dtype, backend="binary"), nx.tensor([1.0], dtype, backend="binary"),
              nx.arange(3, dtype=dtype, backend="binary"), nx.eye(2, dtype=dtype, backend="binary")):  # fmt: skip
        assert x.backend is nx.get_backend("binary")
        assert x.device == "cpu"
        assert x.dtype is dtype
