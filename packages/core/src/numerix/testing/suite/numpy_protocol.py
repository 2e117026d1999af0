"""numpy functions and ufuncs called on tensors return tensors on the tensors' backend
(``__array_function__`` / ``__array_ufunc__``), eagerly and under jit."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import numerix as nx
from numerix.testing.oracle import check

_A = (np.arange(6, dtype=np.float32).reshape(2, 3) - 2) / 4

# name: a call written once for a numpy array and for a tensor
CALLS: dict[str, Callable[[Any], Any]] = {
    "sin": lambda x: np.sin(x),
    "sum": lambda x: np.sum(x, axis=0, keepdims=True),
    "mean": lambda x: np.mean(x),
    "concatenate": lambda x: np.concatenate([x, x], axis=1),
    "ndarray_plus_tensor": lambda x: np.ones(3, np.float32) + x,
    "matmul": lambda x: np.matmul(x, np.transpose(x)),
    "where": lambda x: np.where(x > 0, x, 0),
    "add_reduce": lambda x: np.add.reduce(x, axis=1),
}


@pytest.mark.numerix_op("numpy_protocol")
@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("name", list(CALLS))
def test_numpy_calls_stay_on_the_backend(name: str, compiled: bool) -> None:
    fn = CALLS[name]
    x = nx.tensor(_A)
    got = nx.jit(fn)(x) if compiled else fn(x)
    assert isinstance(got, nx.Tensor) and got.backend is x.backend
    check(got, fn(_A), nx.float32)
