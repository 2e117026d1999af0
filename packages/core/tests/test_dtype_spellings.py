"""numpy's (and JAX's and torch's) spellings of a dtype, accepted wherever a dtype is.

numpy is the oracle: a spelling means the dtype ``np.dtype(spelling)`` is, except
numerix's own names and short names, which come first (``"u8"`` is uint8, numpy's uint64).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import numerix as nx
from numerix import dtypes

NUMPY_STRINGS = [
    "f4", "f8", "f2", "float", "double", "half", "single", "float32", "float64",
    "i1", "i2", "i4", "i8", "int", "int_", "long", "longlong", "intp",
    "u1", "u2", "u4", "uint", "ulonglong", "uintp",
    "b", "b1", "?", "bool", "B", "h", "H", "l", "q", "e", "d",
    "c8", "c16", "complex", "cdouble", "csingle", "complex64",
    "<f4", "=f8", "|b1", "|u1",
]  # fmt: skip

NUMERIX_FIRST = {"u8": nx.uint8, "f16": nx.float16}  # numpy: uint64, float128


def _from_numpy(npd: np.dtype) -> dtypes.DType:
    return next(d for d in dtypes.ALL_DTYPES if d.numpy_dtype == npd)


@pytest.mark.parametrize("spelling", NUMPY_STRINGS)
def test_a_numpy_string_means_what_numpy_reads(spelling: str) -> None:
    want = _from_numpy(np.dtype(spelling))
    assert dtypes.as_dtype(spelling) is want
    assert want == spelling and spelling == want
    assert nx.zeros((2,), dtype=spelling).dtype is want


def test_numpy_spellings_of_the_brief() -> None:
    got = [dtypes.as_dtype(s) for s in ("f4", "float", "double", "half", "i8", "int", "bool")]
    assert got == [nx.float32, nx.float64, nx.float64, nx.float16, nx.int64, nx.int64, nx.bool]
    # the Python types as numpy reads them (np.dtype(float) is float64)
    for t in (bool, int, float, complex):
        assert dtypes.as_dtype(t) is _from_numpy(np.dtype(t))


@pytest.mark.parametrize("spelling", sorted(NUMERIX_FIRST))
def test_numerix_short_names_come_first(spelling: str) -> None:
    assert np.dtype(spelling) != NUMERIX_FIRST[spelling].numpy_dtype  # numpy reads otherwise
    assert dtypes.as_dtype(spelling) is NUMERIX_FIRST[spelling]


@pytest.mark.parametrize("d", dtypes.ALL_DTYPES, ids=str)
def test_every_dtype_from_numpy_objects(d: dtypes.DType) -> None:
    npd = d.numpy_dtype
    # numpy reads bfloat16 only as ml_dtypes' type: its str and char are a void's
    strings = (npd.str, npd.char) if d is not nx.bfloat16 else ()
    for spelling in (npd, npd.type, npd.name, *strings):
        assert dtypes.as_dtype(spelling) is d, spelling
        assert d == spelling and spelling == d, spelling
        assert not d != spelling
    assert npd == d  # numpy reads numerix dtypes through their .dtype


@pytest.mark.parametrize("d", dtypes.ALL_DTYPES, ids=str)
def test_every_dtype_from_jax_and_torch_objects(d: dtypes.DType) -> None:
    jnp = pytest.importorskip("jax.numpy")
    torch = pytest.importorskip("torch")
    assert dtypes.as_dtype(getattr(jnp, d.name if d is not nx.bool else "bool_")) is d
    assert dtypes.as_dtype(jnp.dtype(d.name)) is d
    td = getattr(torch, d.name, None)
    if td is not None:
        assert dtypes.as_dtype(td) is d and d == td and td == d


def test_tensor_dtype_equals_numpy_types() -> None:
    t = nx.ones((2,))
    assert t.dtype == np.float32 and np.float32 == t.dtype
    assert t.dtype == np.dtype("float32") and np.dtype("float32") == t.dtype
    assert t.dtype == "f4" and t.dtype == "float32"
    assert t.dtype != np.float64 and t.dtype != "f8" and t.dtype != float
    assert nx.ones((2,), dtype=float).dtype == float  # float64 both ways
    assert t.dtype != None  # noqa: E711 (np.dtype("f8") == None is True in numpy)
    assert t.dtype != 1.0 and t.dtype != "nonsense" and t.dtype != [np.float32]


def test_hash_is_identity_and_dtypes_key_dicts() -> None:
    # a hash equal to every equal spelling's cannot be: "f4", "float32" and np.float32
    # hash apart (as for numpy's own dtype); DTypes hash by identity, equal DTypes alike
    assert hash(nx.float32) == hash(dtypes.as_dtype(np.float32)) == hash(dtypes.as_dtype("f4"))
    table = {nx.float32: "a", nx.int64: "b"}
    assert table[dtypes.as_dtype(np.dtype("float32"))] == "a"
    assert table[dtypes.as_dtype("i8")] == "b"
    assert len({nx.float32, dtypes.as_dtype("single"), dtypes.as_dtype(np.float32)}) == 1


KEY = nx.random.key(0)
X = nx.ones((2, 3))

# every entry taking a dtype: (call with dtype d) -> a tensor or a dtype
ENTRIES: dict[str, Callable[[Any], Any]] = {
    "tensor": lambda d: nx.tensor([1, 2], dtype=d),
    "asarray": lambda d: nx.asarray([1, 2], dtype=d),
    "from_numpy": lambda d: nx.from_numpy(np.ones(2), dtype=d),
    "from_binary": lambda d: nx.from_binary(bytes(16), d),
    "zeros": lambda d: nx.zeros((2,), dtype=d),
    "ones": lambda d: nx.ones((2,), dtype=d),
    "empty": lambda d: nx.empty((2,), dtype=d),
    "full": lambda d: nx.full((2,), 3, dtype=d),
    "zeros_like": lambda d: nx.zeros_like(X, dtype=d),
    "ones_like": lambda d: nx.ones_like(X, dtype=d),
    "full_like": lambda d: nx.full_like(X, 2, dtype=d),
    "empty_like": lambda d: nx.empty_like(X, dtype=d),
    "arange": lambda d: nx.arange(3, dtype=d),
    "iota": lambda d: nx.iota((3,), dtype=d),
    "eye": lambda d: nx.eye(2, dtype=d),
    "linspace": lambda d: nx.linspace(0, 1, 3, dtype=d),
    "astype": lambda d: nx.astype(X, d),
    "Tensor.astype": lambda d: X.astype(d),
    "sum": lambda d: nx.sum(X, dtype=d),
    "prod": lambda d: nx.prod(X, dtype=d),
    "Tensor.sum": lambda d: X.sum(dtype=d),
    "cumsum": lambda d: nx.cumsum(X, dtype=d),
    "cumulative_prod": lambda d: nx.cumulative_prod(X, axis=1, dtype=d),
    "one_hot": lambda d: nx.one_hot(nx.tensor([0, 2]), 3, dtype=d),
    "fftfreq": lambda d: nx.fftfreq(4, dtype=d),
    "random.uniform": lambda d: nx.random.uniform(KEY, (2,), dtype=d),
    "random.normal": lambda d: nx.random.normal(KEY, (2,), dtype=d),
    "random.exponential": lambda d: nx.random.exponential(KEY, (2,), dtype=d),
    "template": lambda d: nx.template((2,), d),
    "result_type": lambda d: nx.result_type(d, nx.float16),
    "finfo": lambda d: nx.finfo(d).dtype,
}
ORACLE: dict[str, Callable[[Any], Any]] = {
    "tensor": lambda d: np.asarray([1, 2], dtype=d),
    "from_numpy": lambda d: np.ones(2).astype(d),
    "from_binary": lambda d: np.frombuffer(bytes(16), d),
    "zeros": lambda d: np.zeros((2,), d),
    "ones": lambda d: np.ones((2,), d),
    "full": lambda d: np.full((2,), 3, d),
    "arange": lambda d: np.arange(3, dtype=d),
    "eye": lambda d: np.eye(2, dtype=d),
    "linspace": lambda d: np.linspace(0, 1, 3, dtype=d),
    "astype": lambda d: np.ones((2, 3), np.float32).astype(d),
    "sum": lambda d: np.sum(np.ones((2, 3), np.float32), dtype=d),
    "cumsum": lambda d: np.cumsum(np.ones((2, 3), np.float32), dtype=d),
}


@pytest.mark.parametrize(
    "spelling", ["f8", "double", float, np.float64, np.dtype("float64"), "float"], ids=repr
)
@pytest.mark.parametrize("entry", sorted(ENTRIES))
def test_every_entry_takes_numpys_spellings(entry: str, spelling: Any) -> None:
    got = ENTRIES[entry](spelling)
    got_dtype = got if isinstance(got, dtypes.DType) else got.dtype
    assert got_dtype is nx.float64
    if entry in ORACLE:
        want = ORACLE[entry](spelling)
        assert want.dtype == np.float64
        assert got.shape == want.shape
        np.testing.assert_array_equal(np.asarray(got), want, strict=True)


@pytest.mark.parametrize("entry", sorted(ENTRIES))
def test_every_entry_names_an_unknown_spelling(entry: str) -> None:
    op = {"Tensor.astype": "astype", "Tensor.sum": "sum", "template": "as_dtype"}.get(entry, entry)
    with pytest.raises(
        nx.DTypeError,
        match=rf"^{op.replace('.', '[.]')}: unknown dtype 'float33'; use one of bool \(pred\), "
        r"int8 \(s8\), .*complex128 \(c128\), or numpy's spellings of them \('f4', 'float'",
    ):
        ENTRIES[entry]("float33")


@pytest.mark.parametrize(
    ("spelling", "message"),
    [
        (None, r"^astype: None \(type NoneType\) is not a dtype; use one of bool \(pred\)"),
        ("S3", r"^zeros: unknown dtype 'S3': numpy's \|S3 has no numerix equivalent; use one of"),
        (np.longdouble, r"^zeros: <class 'numpy.longdouble'> \(numpy's float128\) has no numerix"),
        (object, r"^zeros: <class 'object'> \(numpy's \|O\) has no numerix equivalent"),
        (
            np.dtype(">f4"),
            r"^zeros: numpy dtype >f4 is not in this machine's byte order, which "
            r"tensors hold; use 'float32'",
        ),
        (np.zeros(2), r"^zeros: array\(\[0\., 0\.\]\) \(type ndarray\) is not a dtype"),
        (
            "i16",
            r"^zeros: unknown dtype 'i16'; use one of bool \(pred\), int8 \(s8\), int16 \(s16\)",
        ),
    ],
    ids=repr,
)
def test_what_is_not_a_dtype_is_named(spelling: Any, message: str) -> None:
    with pytest.raises(nx.DTypeError, match=message):
        if spelling is None:  # the default of zeros' dtype, not of astype's
            X.astype(spelling)
        else:
            nx.zeros((2,), dtype=spelling)


def test_torch_dtype_numerix_has_not() -> None:
    torch = pytest.importorskip("torch")
    with pytest.raises(
        nx.DTypeError, match=r"^astype: torch dtype torch.float8_e4m3fn has no numerix equivalent"
    ):
        X.astype(torch.float8_e4m3fn)


def test_bfloat16_spellings() -> None:
    assert dtypes.as_dtype(ml_dtypes.bfloat16) is nx.bfloat16
    assert dtypes.as_dtype(np.dtype(ml_dtypes.bfloat16)) is nx.bfloat16
    assert dtypes.as_dtype("bfloat16") is dtypes.as_dtype("bf16") is nx.bfloat16
    assert nx.bfloat16 == ml_dtypes.bfloat16
