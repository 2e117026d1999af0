"""Names numpy, JAX and torch users reach for: Tensor.copy, Tensor.numpy and
numerix.logaddexp, against numpy, on every installed backend."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import numerix as nx
from numerix import plugins
from numerix.errors import DTypeError, TracingError

BACKENDS = [b for b in ("binary", "torch", "xla") if b in plugins.backend_entries()]
DTYPES = [nx.bool_, nx.int32, nx.uint8, nx.float16, nx.bfloat16, nx.float32, nx.float64,
          nx.complex64]  # fmt: skip
SHAPES = [(), (0,), (3,), (2, 0), (2, 3)]


def _host(t: nx.Tensor) -> np.ndarray:
    a = t.to_numpy()
    return a.astype(np.float32) if t.dtype is nx.bfloat16 else a


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_copy_is_a_new_tensor_of_the_same_backend(backend: str, dtype: Any, shape: Any) -> None:
    a = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) % 3
    x = nx.tensor(a, dtype=dtype, backend=backend)
    y = x.copy()
    assert type(y) is nx.Tensor and y is not x
    assert y.backend is x.backend and y.dtype is x.dtype and y.shape == x.shape
    assert y.data is not x.data
    np.testing.assert_array_equal(_host(y), _host(x), strict=True)
    assert not np.shares_memory(x.backend.to_numpy(x), y.backend.to_numpy(y))
    nx.backend_deallocate(x)  # the copy owns its payload
    np.testing.assert_array_equal(_host(y), a.astype(_host(y).dtype), strict=True)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_numpy_is_the_host_values(backend: str, dtype: Any) -> None:
    x = nx.tensor([[1, 0, 2]], dtype=dtype, backend=backend)
    a = x.numpy()
    assert type(a) is np.ndarray and a.shape == (1, 3)
    assert a.dtype == x.to_numpy().dtype
    np.testing.assert_array_equal(a, x.to_numpy(), strict=True)


def test_copy_and_numpy_under_jit() -> None:
    f = nx.jit(lambda x: x.copy() * 2)
    assert f(nx.tensor([1.0, 2.0])).tolist() == [2.0, 4.0]
    with pytest.raises(TracingError, match=r"^numpy: f32\[2\] expr\(trace\) is a traced tensor .*"
                                           r"return it from the defn and read it outside"):  # fmt: skip
        nx.jit(lambda x: x.numpy())(nx.tensor([1.0, 2.0]))


SPECIAL = [np.inf, -np.inf, np.nan, 0.0, -0.0, 1.0, -1.0, 1000.0, -1000.0, 30.0, 1e-30, 88.0]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [nx.float16, nx.bfloat16, nx.float32, nx.float64], ids=str)
def test_logaddexp_is_numpys(backend: str, dtype: Any) -> None:
    a, b = np.meshgrid(np.array(SPECIAL), np.array(SPECIAL))
    x1 = nx.tensor(a, dtype=dtype, backend=backend)
    x2 = nx.tensor(b, dtype=dtype, backend=backend)
    for got in [nx.logaddexp(x1, x2), nx.jit(nx.logaddexp)(x1, x2)]:
        assert got.dtype is dtype and got.shape == a.shape and got.backend is x1.backend
        npd = np.float32 if dtype is nx.bfloat16 else dtype.numpy_dtype
        with np.errstate(invalid="ignore"):  # -inf - -inf inside numpy's loop
            want = np.logaddexp(_host(x1).astype(npd), _host(x2).astype(npd))
        if dtype is nx.bfloat16:
            want = nx.tensor(want, dtype=nx.bfloat16).to_numpy().astype(np.float32)
        tol = {nx.float16: 1e-3, nx.bfloat16: 8e-3, nx.float32: 2e-7, nx.float64: 1e-15}[dtype]
        np.testing.assert_allclose(_host(got), want, rtol=tol, atol=0)
        assert np.array_equal(np.isnan(_host(got)), np.isnan(want))


@pytest.mark.parametrize(("x1", "x2", "dtype"), [
    (nx.tensor([1, 2], dtype=nx.int32), nx.tensor([3, 4], dtype=nx.int32), nx.float32),
    (nx.tensor([True]), nx.tensor([False]), nx.float32),
    (nx.tensor([1.0], dtype=nx.float16), 2.0, nx.float16),
    (2.0, 3.0, nx.float32),
    (nx.tensor(1.0, dtype=nx.float64), nx.tensor([[0.5], [2.0]]), nx.float64),
    (nx.zeros((0, 3)), nx.zeros((1, 3)), nx.float32),
])  # fmt: skip
def test_logaddexp_dtypes_and_shapes(x1: Any, x2: Any, dtype: Any) -> None:
    got = nx.logaddexp(x1, x2)
    a1, a2 = np.asarray(x1, dtype=np.float64), np.asarray(x2, dtype=np.float64)
    want = np.logaddexp(a1, a2)
    assert got.dtype is dtype and got.shape == want.shape
    np.testing.assert_allclose(got.to_numpy().astype(np.float64), want, rtol=1e-3)


def test_logaddexp_refuses_complex() -> None:
    with pytest.raises(DTypeError, match=r"^logaddexp: complex input is not supported, got "
                                         r"c64\[1\] binary\(cpu\); take numerix.real"):  # fmt: skip
        nx.logaddexp(nx.tensor([1j]), 0.0)


def test_logaddexp_gradient() -> None:
    a = np.array([-3.0, 0.0, 1.0, 2.0, 50.0])
    b = np.array([1.0, 0.0, 1.0, -2.0, -50.0])
    g1, g2 = nx.grad(lambda x, y: nx.sum(nx.logaddexp(x, y)), argnums=(0, 1))(
        nx.tensor(a, dtype=nx.float64), nx.tensor(b, dtype=nx.float64)
    )
    r = np.logaddexp(a, b)
    np.testing.assert_allclose(g1.to_numpy(), np.exp(a - r), rtol=1e-12)
    np.testing.assert_allclose(g2.to_numpy(), np.exp(b - r), rtol=1e-12)
    assert g1.to_numpy()[1] == 0.5 and g2.to_numpy()[2] == 0.5  # ties share it
