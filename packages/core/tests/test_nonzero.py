"""nonzero, and where with the condition alone: numpy's indices, dtype and shape on
every installed backend; size= and fill_value= eagerly and under jit on every compiler;
the errors of a traced tensor without size, a 0-d input and where with one branch."""

from __future__ import annotations

import numpy as np
import pytest

import numerix as nx
from numerix import plugins

# the backends installed beside numerix (core and binary alone on the light CI steps)
BACKENDS = [b for b in ("binary", "torch", "xla") if b in plugins.backend_entries()]
COMPILERS = ["evaluator"] + [b for b in BACKENDS if b != "binary"]

SHAPES = [(7,), (3, 4), (2, 3, 4), (0,), (2, 0, 3), (1,), (1, 1)]
DTYPES = ["bool", "int8", "uint16", "int64", "float32", "float64", "complex64"]


def _sample(dtype: str, shape: tuple[int, ...], seed: int) -> np.ndarray:
    r = np.random.default_rng(seed)
    a = r.integers(-1, 2, size=shape)
    if dtype == "bool":
        return a > 0
    if dtype.startswith("uint"):
        a = np.abs(a)
    a = a.astype(dtype)
    if dtype.startswith("float") and a.size >= 3:
        flat = a.reshape(-1)
        flat[0], flat[1], flat[2] = -0.0, np.nan, 0.0
    if dtype.startswith("complex") and a.size >= 2:
        flat = a.reshape(-1)
        flat[0], flat[1] = 1j, 0j
    return a


def _check(got: tuple[nx.Tensor, ...], want: tuple[np.ndarray, ...], backend: str) -> None:
    assert type(got) is tuple and len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype is nx.int64
        assert g.shape == w.shape
        assert g.backend.name == backend
        h = np.asarray(g)
        assert h.dtype == np.int64 and h.shape == w.shape
        np.testing.assert_array_equal(h, w)


def _padded(want: tuple[np.ndarray, ...], size: int, fill: int) -> tuple[np.ndarray, ...]:
    return tuple(
        np.concatenate([w[:size], np.full(max(0, size - len(w)), fill, np.int64)]) for w in want
    )


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES)
def test_nonzero_matches_numpy(dtype: str, shape: tuple[int, ...], backend: str) -> None:
    a = _sample(dtype, shape, 1)
    x = nx.tensor(a, backend=backend)
    _check(nx.nonzero(x), np.nonzero(a), backend)
    _check(nx.where(x if dtype == "bool" else x != 0), np.nonzero(a), backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fill", [0, 1])
@pytest.mark.parametrize("shape", [(5,), (2, 3), (2, 2, 2)], ids=str)
def test_all_zero_and_all_nonzero(shape: tuple[int, ...], fill: int, backend: str) -> None:
    a = np.full(shape, fill, np.int32)
    got = nx.nonzero(nx.tensor(a, backend=backend))
    _check(got, np.nonzero(a), backend)
    assert got[0].shape == ((a.size if fill else 0),)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("size", [0, 2, 5, 9])
@pytest.mark.parametrize("fill", [None, -1, (7, 8)])
def test_size_and_fill_value_eagerly(fill: object, size: int, backend: str) -> None:
    a = np.array([[0, 2, 0], [3, 0, 0], [0, 4, 5]])  # 4 nonzeros of 9
    x = nx.tensor(a, backend=backend)
    got = nx.nonzero(x, size=size, fill_value=fill)
    want = np.nonzero(a)
    fills = fill if isinstance(fill, tuple) else (fill or 0,) * 2
    _check(got, tuple(_padded((w,), size, f)[0] for w, f in zip(want, fills)), backend)
    _check(nx.where(x != 0, size=size, fill_value=fill), tuple(np.asarray(g) for g in got), backend)


@pytest.mark.parametrize("compiler", COMPILERS)
@pytest.mark.parametrize("size", [0, 2, 4, 6, 12])
def test_size_under_jit(size: int, compiler: str) -> None:
    a = np.array([[0.0, 1.5, 0.0, np.nan], [-0.0, 0.0, 2.0, 3.0], [0.0, 0.0, 0.0, 0.0]])
    f = nx.jit(
        lambda x, size: nx.nonzero(x, size=size, fill_value=-1),
        compiler=compiler,
        static_argnames=["size"],
    )
    got = f(nx.tensor(a, dtype=nx.float32), size=size)
    want = _padded(np.nonzero(a), size, -1)
    assert type(got) is tuple and len(got) == 2
    for g, w in zip(got, want):
        assert g.dtype is nx.int64 and g.shape == w.shape
        np.testing.assert_array_equal(np.asarray(g), w)
    g = nx.jit(lambda m: nx.where(m, size=3), compiler=compiler)
    (only,) = g(nx.tensor([False, True, False, True]))
    np.testing.assert_array_equal(np.asarray(only), [1, 3, 0])


@pytest.mark.parametrize("compiler", COMPILERS)
def test_traced_without_size_is_a_named_error(compiler: str) -> None:
    x = nx.tensor([0, 1, 2])
    with pytest.raises(
        nx.TracingError,
        match=r"^nonzero: s64\[3\] .* traced .*the output's shape depends on its values.*pass a "
        r"static size=",
    ):
        nx.jit(nx.nonzero, compiler=compiler)(x)
    with pytest.raises(nx.TracingError, match=r"^nonzero: .*pass a static size="):
        nx.jit(lambda m: nx.where(m), compiler=compiler)(x != 0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_zero_d_input_is_a_shape_error(backend: str) -> None:
    with pytest.raises(
        nx.ShapeError,
        match=r"^nonzero: needs a tensor of at least 1 dimension, got s64 .*atleast_1d",
    ):
        nx.nonzero(nx.tensor(3, backend=backend))
    with pytest.raises(nx.ShapeError, match=r"^nonzero: .*atleast_1d"):
        nx.where(nx.tensor(True, backend=backend))


def test_where_with_one_branch_is_an_argument_error() -> None:
    m = nx.tensor([True, False])
    with pytest.raises(
        nx.ArgumentError, match=r"^where: got the condition and one branch \(pred\[2\] binary"
    ):
        nx.where(m, nx.tensor([1, 2]))
    with pytest.raises(nx.ArgumentError, match=r"^where: got the condition and one branch"):
        nx.where(m, None, 1.0)
    # with both branches, size= and fill_value= are refused on every path, the eager
    # plans' (three tensors, a tensor and a scalar) too
    a = nx.tensor([1.0, 2.0])
    for branches in ((1.0, 2.0), (a, a), (a, 0.0), (0.0, a)):
        for extra in ({"size": 2}, {"fill_value": 0}):
            with pytest.raises(
                nx.ArgumentError, match=r"^where: size= and fill_value= belong to the one-argument"
            ):
                nx.where(m, *branches, **extra)


def test_where_three_arguments_unchanged() -> None:
    m = nx.tensor([True, False, True])
    got = nx.where(m, nx.tensor([1.0, 2.0, 3.0]), 0.0)
    assert got.dtype is nx.float32
    assert got.tolist() == [1.0, 0.0, 3.0]


def test_bad_size_and_fill_value_are_argument_errors() -> None:
    x = nx.tensor([[0, 1]])
    with pytest.raises(
        nx.ArgumentError, match=r"^nonzero: size must be a non-negative int, got -1"
    ):
        nx.nonzero(x, size=-1)
    with pytest.raises(
        nx.ArgumentError, match=r"^nonzero: fill_value must be an int or a tuple of 2 ints"
    ):
        nx.nonzero(x, size=2, fill_value=(1, 2, 3))


def test_numpy_functions_on_a_tensor() -> None:
    a = np.array([[0, 3], [4, 0]])
    x = nx.tensor(a)
    for got in (np.nonzero(x), np.where(x != 0)):
        _check(got, np.nonzero(a), "binary")
    with pytest.raises(nx.NumpyFunctionError, match=r"^numpy.where on tensors .*one branch"):
        np.where(x != 0, x)
