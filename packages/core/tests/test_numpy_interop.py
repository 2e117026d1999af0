"""numpy's functions and ufuncs on tensors (``__array_function__``, ``__array_ufunc__``):
numerix tensors on the operands' backend where numerix has the function with numpy's
meaning, a named error otherwise; ``np.dtype(numerix.float32)``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import numerix as nx
from numerix.testing.oracle import ALL, ids

a = np.arange(-3, 3, dtype=np.float32).reshape(2, 3) / 2
a3 = np.arange(12, dtype=np.float32).reshape(2, 2, 3)
IDX = np.array([[0, 1, 0], [1, 1, 0]])

# name: a call, written once for numpy arrays and for tensors
CALLS = {
    "sum": lambda m, x, x3: m.sum(x3, 1),
    "mean": lambda m, x, x3: m.mean(x3, axis=(0, 2)),
    "var": lambda m, x, x3: m.var(x, ddof=1),
    "mean_dtype": lambda m, x, x3: m.mean(x3, axis=1, dtype=np.float64),
    "std": lambda m, x, x3: m.std(x, axis=0),
    "max": lambda m, x, x3: m.max(x, axis=1, keepdims=True),
    "min": lambda m, x, x3: m.min(x),
    "argmax": lambda m, x, x3: m.argmax(x3, axis=2),
    "argmin": lambda m, x, x3: m.argmin(x),
    "prod": lambda m, x, x3: m.prod(x, axis=0),
    "all": lambda m, x, x3: m.all(x3, axis=0),
    "any": lambda m, x, x3: m.any(x),
    "cumsum": lambda m, x, x3: m.cumsum(x3),
    "cumsum1": lambda m, x, x3: m.cumsum(x3, axis=1),
    "cumprod": lambda m, x, x3: m.cumprod(x, 1),
    "where": lambda m, x, x3: m.where(x > 0, x, 0),
    "concatenate": lambda m, x, x3: m.concatenate([x, x], axis=1),
    "concatenate_none": lambda m, x, x3: m.concatenate([x, x3[0]], axis=None),
    "stack": lambda m, x, x3: m.stack([x, x], axis=-1),
    "reshape": lambda m, x, x3: m.reshape(x, (3, 2)),
    "reshape-1": lambda m, x, x3: m.reshape(x3, -1),
    "transpose": lambda m, x, x3: m.transpose(x3),
    "transpose_axes": lambda m, x, x3: m.transpose(x3, (1, 2, 0)),
    "swapaxes": lambda m, x, x3: m.swapaxes(x3, 0, 2),
    "moveaxis": lambda m, x, x3: m.moveaxis(x3, 0, -1),
    "expand_dims": lambda m, x, x3: m.expand_dims(x, 1),
    "squeeze": lambda m, x, x3: m.squeeze(m.expand_dims(x, 0)),
    "dot": lambda m, x, x3: m.dot(x, x.T),
    "dot3": lambda m, x, x3: m.dot(x3, x.T),
    "tensordot": lambda m, x, x3: m.tensordot(x3, x, axes=([2], [1])),
    "einsum": lambda m, x, x3: m.einsum("ijk,lk->il", x3, x),
    "clip": lambda m, x, x3: m.clip(x, -0.5, 0.5),
    "sort": lambda m, x, x3: m.sort(-x3),
    "sort0": lambda m, x, x3: m.sort(-x3, axis=0),
    "argsort": lambda m, x, x3: m.argsort(-x),
    "round": lambda m, x, x3: m.round(x * 1.37, 1),
    "flip": lambda m, x, x3: m.flip(x3),
    "flip1": lambda m, x, x3: m.flip(x3, 1),
    "ravel": lambda m, x, x3: m.ravel(x3),
    "zeros_like": lambda m, x, x3: m.zeros_like(x),
    "ones_like": lambda m, x, x3: m.ones_like(x3),
    "full_like": lambda m, x, x3: m.full_like(x, 7),
    "isclose": lambda m, x, x3: m.isclose(x, x + 1e-9),
    "allclose": lambda m, x, x3: m.allclose(x, x),
    "outer": lambda m, x, x3: m.outer(x, x3),
    "diagonal": lambda m, x, x3: m.diagonal(x3),
    "diagonal2": lambda m, x, x3: m.diagonal(x3, 1, 1, 2),
    "diagonal_off": lambda m, x, x3: m.diagonal(x, 1),
    "tril": lambda m, x, x3: m.tril(x3),
    "triu": lambda m, x, x3: m.triu(x, 1),
    "take": lambda m, x, x3: m.take(x3, [0, 5]),
    "take_axis": lambda m, x, x3: m.take(x3, [2, 0], axis=2),
    "take_along_axis": lambda m, x, x3: m.take_along_axis(x, IDX, axis=1),
    "broadcast_to": lambda m, x, x3: m.broadcast_to(x, (4, 2, 3)),
    "tile": lambda m, x, x3: m.tile(x, (2, 1)),
    "repeat": lambda m, x, x3: m.repeat(x, 2),
    "repeat_axis": lambda m, x, x3: m.repeat(x, 2, axis=1),
    "roll": lambda m, x, x3: m.roll(x3, 1),
    "roll_axis": lambda m, x, x3: m.roll(x3, 1, axis=2),
    "real": lambda m, x, x3: m.real(x),
    "imag": lambda m, x, x3: m.imag(x),
    "astype": lambda m, x, x3: m.astype(x, np.int32),
    "cumulative_sum": lambda m, x, x3: m.cumulative_sum(x, axis=1),
    "concat": lambda m, x, x3: m.concat([x, x]),
    "permute_dims": lambda m, x, x3: m.permute_dims(x3, (2, 0, 1)),
    "matrix_transpose": lambda m, x, x3: m.matrix_transpose(x3),
    "split": lambda m, x, x3: m.split(x3, 2, axis=0),
    "pad": lambda m, x, x3: m.pad(x, 1),
    "meshgrid": lambda m, x, x3: m.meshgrid(x[0], x[1]),
    "sin": lambda m, x, x3: m.sin(x),
    "exp": lambda m, x, x3: m.exp(x3),
    "add": lambda m, x, x3: m.add(x, x3),
    "matmul": lambda m, x, x3: m.matmul(x3, x.T),
    "maximum": lambda m, x, x3: m.maximum(x, 0),
    "power": lambda m, x, x3: m.power(x, 2),
    "floor_divide": lambda m, x, x3: m.floor_divide(x3, 4),
    "isnan": lambda m, x, x3: m.isnan(x),
    "absolute": lambda m, x, x3: m.absolute(x),
    "arctan2": lambda m, x, x3: m.arctan2(x, x3),
    "rint": lambda m, x, x3: m.rint(x),
    "sign": lambda m, x, x3: m.sign(x),
    "add.reduce": lambda m, x, x3: m.add.reduce(x3),
    "add.reduce1": lambda m, x, x3: m.add.reduce(x3, axis=1, keepdims=True),
    "max.reduce": lambda m, x, x3: m.maximum.reduce(x, axis=None),
    "mul.acc": lambda m, x, x3: m.multiply.accumulate(x, axis=1),
    "logical_and.reduce": lambda m, x, x3: m.logical_and.reduce(x > 0),
    "vecdot": lambda m, x, x3: m.vecdot(x3, x),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_numpy_function_gives_a_tensor(name: str) -> None:
    x, x3 = nx.tensor(a), nx.tensor(a3)
    want = CALLS[name](np, a, a3)
    got = CALLS[name](np, x, x3)
    pairs: list[Any] = list(zip(got, want)) if isinstance(want, (list, tuple)) else [(got, want)]
    assert len(pairs) == (len(want) if isinstance(want, (list, tuple)) else 1)
    for g, w in pairs:
        w = np.asarray(w)
        assert isinstance(g, nx.Tensor), f"{name}: got {type(g).__name__}"
        assert g.backend is x.backend
        assert g.shape == w.shape and g.dtype.numpy_dtype == w.dtype, (g.describe(), w.dtype)
        np.testing.assert_allclose(g.to_numpy(), w, rtol=1e-6)


def test_numpy_shape_queries() -> None:
    x = nx.tensor(a3)
    assert np.shape(x) == (2, 2, 3) and np.ndim(x) == 3
    assert np.size(x) == 12 and np.size(x, 2) == 3


def test_ndarray_operators_with_a_tensor() -> None:
    x = nx.tensor(a)
    for r in (np.ones(3, np.float32) + x, x + np.ones(3, np.float32), a @ x.T, a > x):
        assert isinstance(r, nx.Tensor) and r.backend is x.backend
    np.testing.assert_array_equal((a * x).to_numpy(), a * a, strict=True)


def test_numpy_functions_under_jit() -> None:
    f = nx.jit(lambda t: np.sum(np.sin(t), axis=0) + np.maximum(t, 0)[0])
    x = nx.tensor(a)
    r = f(x)
    assert isinstance(r, nx.Tensor) and r.dtype is nx.float32
    np.testing.assert_allclose(
        r.to_numpy(), np.sum(np.sin(a), axis=0) + np.maximum(a, 0)[0], rtol=1e-6
    )


def test_asarray_is_the_explicit_copy_to_numpy() -> None:
    x = nx.tensor(a)
    r = np.asarray(x)
    assert type(r) is np.ndarray and r.dtype == np.float32
    np.testing.assert_array_equal(r, a)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (
            lambda x: np.sum(x, out=np.zeros(())),
            r"^numpy.sum on tensors \(f32\[2\]\[3\] binary\(cpu\)\): out= is not supported \(tensors "
            r"are immutable\); use the tensor numerix.sum returns",
        ),
        (
            lambda x: np.sin(x, out=np.zeros((2, 3), np.float32)),
            r"numpy.sin on tensors .*: out= is not",
        ),
        (
            lambda x: np.mean(x, where=np.ones((2, 3), bool)),
            r"numpy.mean on tensors .*: numerix.mean takes no where= \(got ndarray of shape \(2, 3\)\); "
            r"call numerix.mean without it, or np.asarray\(t\) for an explicit copy to numpy$",
        ),
        (lambda x: np.sort(x, kind="heapsort"), r"numerix.sort takes no kind= \(got 'heapsort'\)"),
        (
            lambda x: np.median(x),
            r"numpy.median on tensors .*: numerix does not carry out this numpy function; numerix "
            r"has no median; compute it with numpy on an explicit copy: numpy.median\(np.asarray\(t\)\)",
        ),
        (
            lambda x: np.spacing(x),
            r"numpy.spacing on tensors .*: numerix has no spacing; .*np.asarray",
        ),
        (
            lambda x: np.add.outer(x, x),
            r"numpy.add.outer on tensors .*: numerix has no such reduction",
        ),
        (
            lambda x: np.add(x, x, dtype=np.float64),
            r"numpy.add on tensors .*: the keyword dtype= is not "
            r"supported .*; cast first with t.astype\(dtype\)",
        ),
        (lambda x: np.where(x, x), r"numpy.where on tensors .*: got the condition and one branch"),
        (lambda x: np.ldexp(x, x), r"numerix has no ldexp"),
        (lambda x: np.sum(x, initial=3), r"numerix.sum takes no initial= \(got 3\)"),
    ],
    ids=lambda v: "" if callable(v) else v[:40],
)
def test_unsupported_numpy_calls_are_named(call: Any, match: str) -> None:
    with pytest.raises(nx.NumpyFunctionError, match=match) as e:
        call(nx.tensor(a))
    assert isinstance(e.value, (nx.NumerixError, TypeError))


@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_numpy_dtype_of_a_numerix_dtype(dtype: nx.DType) -> None:
    assert np.dtype(dtype) == dtype.numpy_dtype
    assert np.zeros(2, dtype=dtype).dtype == dtype.numpy_dtype
    assert nx.dtypes.as_dtype(np.dtype(dtype)) is dtype
