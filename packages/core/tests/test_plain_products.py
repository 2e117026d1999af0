"""dot and matmul of two 1-d or 2-d tensors of one dtype on one backend bind the dot
primitive at once: the same numbers, dtype and shape as numpy, and anything else (other
ranks, mixed dtypes, Python scalars, sizes that do not match, bool) takes the general
path with its errors."""

from __future__ import annotations

import numpy as np
import pytest

import numerix as nx

DTYPES = ["int8", "uint8", "int32", "int64", "float16", "float32", "float64", "complex64"]
SHAPES = [((3,), (3,)), ((3,), (3, 2)), ((2, 3), (3,)), ((2, 3), (3, 4)), ((1, 1), (1, 1)),
          ((0,), (0,)), ((2, 0), (0, 3)), ((0, 3), (3,))]  # fmt: skip


def _data(shape: tuple[int, ...], dtype: str, seed: int) -> np.ndarray:
    r = np.random.default_rng(seed)
    v = r.integers(-3, 4, size=shape) if dtype[0] in "iu" else r.standard_normal(shape)
    if dtype.startswith("uint"):
        v = np.abs(v)
    if dtype.startswith("complex"):
        v = v + 1j * r.standard_normal(shape)
    return np.asarray(v).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("sa", "sb"), SHAPES)
def test_plain_products_match_numpy(dtype: str, sa: tuple[int, ...], sb: tuple[int, ...]) -> None:
    a, b = _data(sa, dtype, 1), _data(sb, dtype, 2)
    x, y = nx.tensor(a), nx.tensor(b)
    for got, want in ((nx.dot(x, y), np.dot(a, b)), (nx.matmul(x, y), np.matmul(a, b)),
                      (x @ y, a @ b)):  # fmt: skip
        want = np.asarray(want)
        assert got.dtype.name == want.dtype.name and got.shape == want.shape
        tol = 1e-2 if dtype == "float16" else 1e-6
        np.testing.assert_allclose(np.asarray(got), want, rtol=tol, atol=tol)


def test_what_the_plain_path_leaves_to_the_general_one() -> None:
    m = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = nx.tensor(m)
    # mixed dtypes promote
    r = nx.dot(x, nx.tensor(np.ones(3, np.int64)))
    assert r.dtype is nx.float32 and r.tolist() == np.dot(m, np.ones(3)).tolist()
    # a Python scalar multiplies (dot), and is refused by matmul
    assert nx.dot(x, 2).tolist() == (m * 2).tolist()
    with pytest.raises(nx.ShapeError, match="matmul: operands must be at least 1-d"):
        nx.matmul(x, nx.tensor(2.0))
    # batched matmul
    bm = np.ones((4, 3, 2), np.float32)
    assert nx.matmul(nx.tensor(bm), x).shape == (4, 3, 3)


@pytest.mark.parametrize("op", ["dot", "matmul"])
def test_the_plain_path_refuses_as_the_general_one(op: str) -> None:
    f = getattr(nx, op)
    x = nx.ones((2, 3))
    with pytest.raises(nx.ShapeError, match=rf"{op}: shapes \(2, 3\) and \(2, 3\) are not aligned"):
        f(x, x)
    b = nx.tensor([[True, False]])
    with pytest.raises(nx.DTypeError, match=rf"{op}: bool tensors have no product"):
        f(b, nx.tensor([[True], [False]]))
