"""The dtype objects and the one promotion table, against numpy's ``result_type``."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import numerix as nx
from numerix import _shapes, dtypes
from numerix._shapes import MAX_ELEMENTS, broadcast_shapes
from numerix.testing.oracle import ALL, ALL_PAIRS, expected_promotion, ids, pair_ids, weak_expected


@pytest.mark.parametrize("pair", ALL_PAIRS, ids=pair_ids)
def test_promote_types_table(pair: tuple[dtypes.DType, dtypes.DType]) -> None:
    a, b = pair
    want = expected_promotion(a, b)
    if want is None:
        with pytest.raises(
            nx.DTypeError,
            match=rf"^promote_types: cannot promote {a} with {b} "
            r"without losing integers above 2\*\*53",
        ):
            dtypes.promote_types(a, b)
        with pytest.raises(nx.DTypeError, match=rf"^result_type: cannot promote {a} with {b}"):
            nx.result_type(a, b)
        return
    assert dtypes.promote_types(a, b) is want
    assert dtypes.promote_types(b, a) is want  # symmetric
    assert nx.result_type(a, b) is want
    assert nx.result_type(nx.zeros((), a), nx.zeros((2,), b)) is want


@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_result_type_with_python_scalars(dtype: dtypes.DType) -> None:
    for s in (True, 2, 2.5, 1j):
        assert nx.result_type(dtype, s) is weak_expected(dtype, s), s
        assert nx.result_type(s, nx.ones((1,), dtype)) is weak_expected(dtype, s), s


def test_result_type_of_python_scalars_alone() -> None:
    # the first scalar takes its default dtype, the others promote it weakly
    assert nx.result_type(1) is nx.int64
    assert nx.result_type(1.0) is nx.float32
    assert nx.result_type(True) is nx.bool
    assert nx.result_type(1j) is nx.complex64
    assert nx.result_type(1, 2.0) is nx.float32
    assert nx.result_type(True, 1) is nx.int64
    with pytest.raises(nx.DTypeError, match=r"^result_type: at least one tensor or dtype"):
        nx.result_type()


@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_dtype_names_and_numpy_equivalents(dtype: dtypes.DType) -> None:
    assert dtypes.as_dtype(dtype.name) is dtype
    assert dtypes.as_dtype(dtype.short) is dtype
    assert dtypes.as_dtype(dtype.numpy_dtype) is dtype
    assert dtype == dtype.name and dtype == dtype.short
    want_np = np.dtype(ml_dtypes.bfloat16) if dtype is dtypes.bfloat16 else np.dtype(dtype.name)
    assert dtype.numpy_dtype == want_np
    assert dtype.itemsize == want_np.itemsize
    assert getattr(nx, dtype.name if dtype is not dtypes.bool_ else "bool") is dtype


def test_as_dtype_python_types_and_errors() -> None:
    assert dtypes.as_dtype(bool) is nx.bool
    assert dtypes.as_dtype(int) is nx.int64
    # numpy's reading of the Python types, not the float32 a Python float scalar takes
    assert dtypes.as_dtype(float) is nx.float64
    assert dtypes.as_dtype(complex) is nx.complex128
    with pytest.raises(nx.DTypeError, match=r"^as_dtype: unknown dtype 'f128'; use one of bool"):
        dtypes.as_dtype("f128")
    with pytest.raises(
        nx.DTypeError, match=r"^as_dtype: numpy dtype <U3 has no numerix equivalent"
    ):
        dtypes.as_dtype(np.dtype("U3"))


@pytest.mark.parametrize("dtype", [d for d in ALL if d.kind in "iu"], ids=ids)
def test_iinfo(dtype: dtypes.DType) -> None:
    i = np.iinfo(dtype.numpy_dtype)
    got = nx.iinfo(dtype)
    assert (got.min, got.max, got.bits, got.dtype) == (int(i.min), int(i.max), i.bits, dtype)


@pytest.mark.parametrize("dtype", [d for d in ALL if d.kind in "fc"], ids=ids)
def test_finfo(dtype: dtypes.DType) -> None:
    real = {dtypes.complex64: dtypes.float32, dtypes.complex128: dtypes.float64}.get(dtype, dtype)
    f = ml_dtypes.finfo(real.numpy_dtype) if real is dtypes.bfloat16 else np.finfo(real.numpy_dtype)
    got = nx.finfo(dtype)
    assert (got.eps, got.max, got.min, got.bits, got.dtype) == (
        float(f.eps),
        float(f.max),
        float(f.min),
        int(f.bits),
        real,
    )


def test_info_refusals() -> None:
    with pytest.raises(nx.DTypeError, match=r"^iinfo: float32 is not an integer dtype"):
        nx.iinfo(nx.float32)
    with pytest.raises(nx.DTypeError, match=r"^finfo: int8 is not a floating dtype"):
        nx.finfo(nx.int8)


@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_isdtype(dtype: dtypes.DType) -> None:
    kinds = {"bool": "b", "signed integer": "i", "unsigned integer": "u", "integral": "iu",
             "real floating": "f", "complex floating": "c", "numeric": "iufc"}  # fmt: skip
    for name, ks in kinds.items():
        assert nx.isdtype(dtype, name) is (dtype.kind in ks), name
    assert nx.isdtype(dtype, dtype)
    assert nx.isdtype(dtype, ("bool", dtype.name))


@pytest.mark.parametrize("d", dtypes.ALL_DTYPES, ids=str)
def test_reduction_identity_is_neutral(d):
    # op(identity, x) == x for every x of the dtype: checked on the dtype's extremes
    if d.kind == "c":
        assert (
            dtypes.reduction_identity("sum", d) == 0 and dtypes.reduction_identity("prod", d) == 1
        )
        return
    nd = d.numpy_dtype
    if d.kind == "b":
        xs = np.array([False, True])
    elif d.kind in "iu":
        lo, hi = dtypes.int_range(d)
        xs = np.array([lo, 0, hi], dtype=nd)
    else:
        xs = np.array([-np.inf, -1.5, 0.0, 2.5, np.inf], dtype=nd)
    for op, f in (("max", np.maximum), ("min", np.minimum)):
        e = np.array(dtypes.reduction_identity(op, d), dtype=nd)
        np.testing.assert_array_equal(f(e, xs), xs)
        assert dtypes.reduction_identity(op, d) == dtypes.reduction_identity(op, nd)
    assert (
        dtypes.reduction_identity("all", d) is True and dtypes.reduction_identity("any", d) is False
    )


def test_reduction_identity_unknown_op():
    with pytest.raises(ValueError, match="unknown reduction 'mean'"):
        dtypes.reduction_identity("mean", dtypes.float32)


def test_broadcasting_past_the_largest_tensor_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(nx.ShapeError, match=r"^add: shape \(1073741824, 1073741824\) has"):
        broadcast_shapes("add", (2**30, 1), (1, 2**30))
    # 2**59 elements, one past the limit (16 bytes each overflow a signed 64-bit size)
    with pytest.raises(nx.ShapeError, match=r"^add: shape \(536870912, 1073741824\) has"):
        broadcast_shapes("add", (2**29, 1), (1, 2**30))
    # under the limit, no machine has the memory
    with pytest.raises(nx.OutOfMemoryError, match=r"^add: a tensor of shape \(268435456, "):
        broadcast_shapes("add", (2**28, 1), (1, 2**30))
    # up to the limit, and broadcasting that does not grow past an operand, are fine as
    # shapes (on a machine with the memory)
    monkeypatch.setattr(_shapes, "memory_capacity", lambda: 2**63)
    assert broadcast_shapes("add", (2**28, 1), (1, 2**30)) == (2**28, 2**30)
    assert broadcast_shapes("add", (MAX_ELEMENTS, 1), (1,)) == (MAX_ELEMENTS, 1)


def test_allocation_beyond_memory_counts_the_dtype(monkeypatch: pytest.MonkeyPatch) -> None:
    # a machine of 1 GiB: 2**28 float64 elements (2 GiB) do not fit, 2**28 bytes do
    monkeypatch.setattr(_shapes, "memory_capacity", lambda: 2**30)
    with pytest.raises(
        nx.OutOfMemoryError,
        match=r"^full: a float64 tensor of shape \(268435456,\) \(268435456 elements\) needs "
        r"2\.0 GiB, more than this machine's memory \(1\.0 GiB of RAM and swap\)",
    ):
        nx.full((2**28,), 1.0, dtype=nx.float64)
    with pytest.raises(nx.OutOfMemoryError, match=r"^add: a tensor of shape \(32768, 65536\)"):
        nx.add(nx.zeros((2**15, 1), dtype=nx.uint8), nx.zeros((1, 2**16), dtype=nx.uint8))
    assert isinstance(nx.OutOfMemoryError("x"), MemoryError)  # except MemoryError still works
    assert nx.zeros((2**20,), dtype=nx.uint8).shape == (2**20,)  # small ones are untouched


def test_memory_capacity_is_the_machines() -> None:
    cap = _shapes.memory_capacity()
    assert 2**26 < cap < 2**63
