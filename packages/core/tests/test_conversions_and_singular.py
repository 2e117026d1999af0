"""int()/float()/index of a tensor as numpy refuses them, and what inv, solve and
cholesky give on each backend for a matrix they cannot factor (docs/known-differences.md)."""

from __future__ import annotations

import operator
import re

import numpy as np
import pytest

import numerix as nx
from numerix import plugins

# the backends installed beside numerix (core and binary alone on the light CI steps)
BACKENDS = [b for b in ("binary", "torch", "xla") if b in plugins.backend_entries()]


# complex128 is left out on xla: it would turn JAX's 64-bit mode on for the whole test
# process (the check is the dtype's kind, which complex64 reaches the same way)
COMPLEX_CASES = [
    (backend, dtype)
    for backend in BACKENDS
    for dtype in ("complex64", "complex128")
    if not (backend == "xla" and dtype == "complex128")
]


@pytest.mark.parametrize("backend,dtype", COMPLEX_CASES)
@pytest.mark.parametrize("convert", [int, float])
def test_int_and_float_of_a_complex_tensor(convert: type, dtype: str, backend: str) -> None:
    with pytest.raises(TypeError):  # the oracle
        convert(np.array(1 + 2j, dtype=dtype))
    t = nx.tensor(1 + 2j, dtype=dtype, backend=backend)
    name = convert.__name__
    with pytest.raises(
        nx.DTypeError,
        match=rf"^{name}: {name}\(\) of a complex tensor \({re.escape(t.describe())}\) "
        rf"is undefined, as for Python's and numpy's complex numbers; take the real part "
        rf"first: {name}\(numerix.real\(t\)\), or {name}\(t.item\(\).real\)",
    ):
        convert(t)
    assert isinstance(nx.DTypeError("x"), TypeError)  # except TypeError still catches it
    assert complex(t) == complex(np.array(1 + 2j, dtype=dtype)) == 1 + 2j
    assert convert(nx.real(t)) == convert(np.real(np.array(1 + 2j, dtype=dtype)))


@pytest.mark.parametrize("backend", BACKENDS)
def test_conversions_of_many_elements_are_shape_errors(backend: str) -> None:
    # the element count is checked first, as numpy does, complex or not
    for t in (
        nx.tensor([1.0, 2.0], backend=backend),
        nx.zeros((0,), dtype="complex64", backend=backend),
        nx.zeros((2,), dtype="complex64", backend=backend),
    ):
        for convert in (int, float, complex):
            with pytest.raises(
                nx.ShapeError,
                match=rf"^{convert.__name__}: only a tensor of one element converts to a "
                rf"Python scalar, got {re.escape(t.describe())}$",
            ):
                convert(t)
    t = nx.tensor([1.0, 2.0], backend=backend)
    with pytest.raises(nx.ShapeError, match=r"^bool: the truth value of a tensor with 2 elements"):
        bool(t)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_float_index_is_a_dtype_error(backend: str) -> None:
    with pytest.raises(TypeError):  # the oracle
        operator.index(np.array(1.0))
    with pytest.raises(
        nx.DTypeError,
        match=rf"^index: only integer tensors can be used as an index, got "
        rf"{re.escape(nx.tensor(1.0, backend=backend).describe())}; "
        r"cast with t.astype\(numerix.int64\), or use int\(t\)",
    ):
        [1, 2, 3][nx.tensor(1.0, backend=backend)]
    assert [1, 2, 3][nx.tensor(1, dtype="int32", backend=backend)] == [1, 2, 3][np.array(1)]


# ---------------------------------------------------------------- matrices numpy refuses

SINGULAR = [[1.0, 2.0], [2.0, 4.0]]
ZERO = [[0.0, 0.0], [0.0, 0.0]]
INDEFINITE = [[1.0, 2.0], [2.0, 1.0]]
GOOD = [[4.0, 2.0], [2.0, 5.0]]


def _dtypes(backend: str) -> list[str]:
    return ["float32"] if backend == "xla" else ["float32", "float64"]


def _nan_everywhere(backend: str) -> bool:
    return backend in ("binary", "torch")


@pytest.mark.parametrize("backend", BACKENDS)
def test_inv_and_solve_of_a_singular_matrix(backend: str) -> None:
    for dtype in _dtypes(backend):
        for m in (SINGULAR, ZERO):
            with pytest.raises(np.linalg.LinAlgError):  # numpy raises; numerix does not
                np.linalg.inv(np.array(m, dtype=dtype))
            batch = nx.tensor([m, GOOD], dtype=dtype, backend=backend)
            got = [
                np.asarray(nx.inv(batch)),
                np.asarray(nx.solve(batch, nx.ones((2, 2), dtype=dtype, backend=backend))),
            ]
            for g, want_good in zip(
                got,
                [
                    np.linalg.inv(np.array(GOOD, dtype)),
                    np.linalg.solve(np.array(GOOD, dtype), np.ones((2, 2), dtype)),
                ],
            ):
                assert g.dtype == np.dtype(dtype) and g.shape == (2, 2, 2)
                # the matrix it can invert in the same batch is unharmed
                np.testing.assert_allclose(g[1], want_good, rtol=1e-6)
                if _nan_everywhere(backend):
                    assert np.isnan(g[0]).all(), (backend, dtype, m, g[0])
                else:  # xla: what its LU gives, inf and NaN, never a finite value
                    assert not np.isfinite(g[0]).any(), (backend, dtype, m, g[0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_cholesky_of_a_matrix_not_positive_definite(backend: str) -> None:
    for dtype in _dtypes(backend):
        for m in (INDEFINITE, ZERO, SINGULAR):
            with pytest.raises(np.linalg.LinAlgError):
                np.linalg.cholesky(np.array(m, dtype=dtype))
            g = np.asarray(nx.cholesky(nx.tensor([m, GOOD], dtype=dtype, backend=backend)))
            assert g.dtype == np.dtype(dtype) and g.shape == (2, 2, 2)
            np.testing.assert_allclose(g[1], np.linalg.cholesky(np.array(GOOD, dtype)), rtol=1e-6)
            low = np.tril(np.ones((2, 2), bool))
            if _nan_everywhere(backend):
                assert np.isnan(g[0]).all(), (backend, dtype, m, g[0])
            else:  # xla: NaN in the lower triangle, the zeros of a lower factor above it
                assert np.isnan(g[0][low]).all() and (g[0][~low] == 0).all(), g[0]
