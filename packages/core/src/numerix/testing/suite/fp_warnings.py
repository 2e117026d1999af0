"""Floating-point edge cases give their IEEE results and no warning, on every backend,
eagerly and compiled (docs/decisions.md: "IEEE results, no floating-point warnings")."""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import numerix as nx
from numerix import dtypes
from numerix.testing.oracle import FLOATS, ids

# name: (function of a namespace (numerix or numpy) and one operand, the operand's values)
CASES: dict[str, tuple[Callable[[Any, Any], Any], list[float]]] = {
    "inf - inf": (lambda m, x: x - x, [np.inf, -np.inf, 1.0]),
    "0 / 0": (lambda m, x: x / x, [0.0, 1.0]),
    "1 / 0": (lambda m, x: 1 / x, [0.0, -0.0, 2.0]),
    "log(0)": (lambda m, x: m.log(x), [0.0, -1.0, 1.0]),
    "sqrt(-1)": (lambda m, x: m.sqrt(x), [-1.0, 4.0]),
    "overflow": (lambda m, x: x * x, [6e4, -6e4, 1.0]),
    "exp overflow": (lambda m, x: m.exp(x), [1e4, 0.0]),
    "sum overflow": (lambda m, x: m.sum(x), [6e4, 6e4, 3e38, 3e38, 1e308, 1e308]),
    "inf * 0": (lambda m, x: x * x[::-1], [np.inf, 1.0, 0.0]),
}


def _expected(fn: Callable[[Any, Any], Any], a: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        if a.dtype == dtypes.bfloat16.numpy_dtype:  # numpy's bfloat16 math: in float32, round once
            return np.asarray(fn(np, a.astype(np.float32))).astype(a.dtype)
        return np.asarray(fn(np, a))


@pytest.mark.numerix_op("floating_point_warnings")
@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("dtype", FLOATS, ids=ids)
def test_no_floating_point_warnings(dtype: dtypes.DType, case: str, compiled: bool) -> None:
    fn, values = CASES[case]
    with np.errstate(over="ignore"):  # 1e308 is inf in the narrower dtypes
        a = np.array(values, dtype=np.float64).astype(dtype.numpy_dtype)
    want = _expected(fn, a)
    x = nx.tensor(a)
    run = nx.jit(lambda t: fn(nx, t)) if compiled else (lambda t: fn(nx, t))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = run(x)
        host = got.to_numpy()
    assert got.dtype is dtype and host.shape == want.shape
    np.testing.assert_array_equal(host.astype(np.float64), want.astype(np.float64))


@pytest.mark.numerix_op("floating_point_warnings")
def test_no_floating_point_warnings_in_threads() -> None:
    # kernels running at once in several threads, and a user's numpy error state left alone
    x = nx.tensor(np.array([np.inf, 0.0, 1.0], dtype=np.float32))
    want = np.array([np.nan, np.nan, 0.0], dtype=np.float32)
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(200):
                r = (x - x) * (x / x)
                np.testing.assert_array_equal(r.to_numpy(), want)
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    with warnings.catch_warnings(), np.errstate(all="raise"):
        warnings.simplefilter("error")
        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        work()
        for t in threads:
            t.join()
        assert np.geterr()["invalid"] == "raise"  # the user's setting, untouched
    assert not errors, errors[0]
