"""``x[key] = value`` (numerix.setitem): numpy's assignment, as a new value for ``x``."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import numerix as nx

DTYPES = ["bool", "int8", "uint16", "int32", "int64", "float16", "float32", "float64",
          "complex64"]  # fmt: skip

KEYS: list[Any] = [
    1, -1, (0, 2), slice(1, 3), (slice(None), 1), (Ellipsis, 0), (None, 1),
    (slice(None, None, -2),), np.array([2, 0, 2]), (np.array([1, 0]), slice(0, 2)),
    np.array([True, False, True, False]), (), Ellipsis,
]  # fmt: skip


def _sample(dtype: str) -> np.ndarray:
    a = np.arange(12).reshape(4, 3)
    return (a % 2 == 0) if dtype == "bool" else a.astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("key", KEYS, ids=repr)
def test_setitem_is_numpys_assignment(dtype: str, key: Any) -> None:
    a = _sample(dtype)
    want = a.copy()
    value = np.asarray(want[key]).astype(dtype)
    value = (~value) if dtype == "bool" else (value * 3 + 1).astype(dtype)  # a new value
    want[key] = value
    x = nx.tensor(a)
    x[key] = nx.tensor(value) if value.ndim else value.item()
    assert (x.shape, x.dtype.name) == (want.shape, dtype)
    np.testing.assert_array_equal(np.asarray(x), want)


def test_a_value_broadcasts_and_casts_to_xs_dtype_as_numpy() -> None:
    a = np.zeros((3, 4), np.int32)
    x = nx.tensor(a)
    x[:, 1:3] = 2.7  # numpy truncates a float into an int array
    x[0] = nx.tensor([1.5, 2.5, 3.5, 4.5])  # a float tensor cast to int32
    a[:, 1:3] = 2.7
    a[0] = np.array([1.5, 2.5, 3.5, 4.5])
    assert x.dtype is nx.int32
    np.testing.assert_array_equal(np.asarray(x), a)
    f = nx.zeros(2, dtype=nx.float64)
    f[0] = 0.1  # a Python float keeps its double precision
    assert f.tolist() == [0.1, 0.0]


def test_a_repeated_position_takes_the_last_value_and_empty_keys_change_nothing() -> None:
    x = nx.zeros(3, dtype=nx.int32)
    x[nx.tensor([0, 0, 2])] = nx.tensor([1, 2, 3], dtype=nx.int32)
    assert x.tolist() == [2, 0, 3]
    x[1:1] = 9
    x[nx.tensor(np.zeros(3, bool))] = 9
    assert x.tolist() == [2, 0, 3]
    e = nx.zeros((0, 2))
    e[:] = 1.0
    assert e.shape == (0, 2)


def test_other_tensors_keep_their_values_views_included() -> None:
    x = nx.tensor(np.arange(6.0).reshape(2, 3))
    row, same = x[0], x
    x[0, 0] = -1.0
    assert row.tolist() == [0.0, 1.0, 2.0]
    assert same is x and x.tolist()[0] == [-1.0, 1.0, 2.0]


@pytest.mark.parametrize("backend", ["binary", "torch", "xla"])
def test_setitem_on_every_backend_and_under_jit(backend: str) -> None:
    pytest.importorskip({"binary": "numpy", "torch": "torch", "xla": "jax"}[backend])

    def f(x: nx.Tensor) -> nx.Tensor:
        x[1] = x[0] * 2
        x[:, -1] = 0.5
        return x

    a = np.arange(6, dtype=np.float32).reshape(3, 2)
    want = a.copy()
    want[1] = want[0] * 2
    want[:, -1] = 0.5
    for run in (f, nx.jit(f)):
        x = nx.tensor(a, backend=backend)
        with warnings.catch_warnings():
            # a scatter's indices are int64 (the contract's): on xla, JAX's 64-bit mode
            warnings.simplefilter("ignore", UserWarning)
            got = run(x)
        assert got.backend.name == backend and got.dtype is nx.float32
        np.testing.assert_array_equal(np.asarray(got), want)


def test_a_value_of_the_wrong_shape_is_refused_by_name() -> None:
    x = nx.zeros((2, 3))
    with pytest.raises(nx.ShapeError, match=r"^setitem: value f32\[2\] .* cannot be broadcast"):
        x[0] = nx.zeros(2)
    with pytest.raises(nx.IndexingError, match=r"index 5 is out of bounds for axis 0"):
        x[5] = 1.0
    assert x.tolist() == [[0.0] * 3] * 2  # unchanged
