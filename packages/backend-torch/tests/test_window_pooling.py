"""window_max / window_min and window_scatter_max / window_scatter_min through torch's pooling with indices: the
geometries it serves (one to three pooled axes in any position, even padding of at most
half the window) against the kit's Python-loop reference, with the ties, NaN, infinities
and padding that torch's pooling treats its own way; the geometries beyond it take the
general path and give the same answers."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import numerix as nx
from numerix import dtypes as D
from numerix.testing.oracle import ALL, check, ids, sample, to_compute
from numerix.testing.suite.window import ref_scatter, ref_window, ref_window_positions
from numerix_torch._extra import _poolable

# (shape, window, strides, padding, served by pooling)
GEOMETRIES: list[tuple[Any, ...]] = [
    ((9,), (3,), 2, [(1, 1)], True),
    ((2, 3, 6, 5), (1, 1, 2, 2), (1, 1, 2, 2), "valid", True),
    ((5, 3), (3, 1), (1, 1), [(1, 1), (0, 0)], True),  # the pooled axis first
    ((3, 4, 5), (2, 2, 3), (1, 2, 1), [(1, 1), (0, 0), (1, 1)], True),
    ((2, 3, 4, 2), (2, 2, 2, 2), 1, "valid", False),  # four pooled axes
    ((6,), (2,), 1, [(1, 0)], False),  # uneven padding
    ((5,), (2,), 1, [(2, 2)], False),  # padding wider than half the window
]
ORDERED = [d for d in ALL if d.kind != "c"]


def _windows(shape: tuple[int, ...], window: Any, strides: Any, padding: Any) -> tuple[int, ...]:
    """The shape of the grid of windows (the source's shape)."""
    wins: dict[Any, Any] = ref_window_positions(shape, window, strides, padding, None)
    return tuple(wins["shape"])


def _served(a: np.ndarray, dtype: D.DType, window: Any, strides: Any, padding: Any) -> bool:
    """Whether the kernels take torch's pooling for this geometry (on the cpu)."""
    pads = [tuple(p) for p in padding] if padding != "valid" else [(0, 0)] * a.ndim
    per_axis = strides if isinstance(strides, tuple) else (strides,) * a.ndim
    x = nx.tensor(a, dtype=dtype, backend="torch")
    return _poolable(x, window, per_axis, tuple(pads)) is not None


def _run(fn: Any, a: np.ndarray, src: np.ndarray, dtype: D.DType, sdt: D.DType,
         pick_min: bool, window: Any, strides: Any, padding: Any) -> None:  # fmt: skip
    init = 1 if sdt.kind in "iu" else 0.5
    want = ref_scatter(
        to_compute(a, dtype), to_compute(src, sdt), init, sdt, pick_min, window, strides,
        padding,
    )  # fmt: skip
    x = nx.tensor(a, dtype=dtype, backend="torch")
    s = nx.tensor(src, dtype=sdt, backend="torch")
    got = fn(x, s, init, window, strides=strides, padding=padding)
    check(got, want, sdt, shape=a.shape, scale=8.0)


@pytest.mark.parametrize("pick_min", [False, True], ids=["max", "min"])
@pytest.mark.parametrize("dtype", ORDERED, ids=ids)
def test_scatter_through_pooling_matches_the_reference(dtype: D.DType, pick_min: bool) -> None:
    fn = nx.window_scatter_min if pick_min else nx.window_scatter_max
    sdt = D.int16 if dtype is D.bool_ else dtype
    for i, (shape, window, strides, padding, served) in enumerate(GEOMETRIES):
        a = sample(dtype, shape, i, small=True)  # small ranges give ties
        src = sample(sdt, _windows(shape, window, strides, padding), i + 50)
        assert _served(a, dtype, window, strides, padding) is served, (shape, window)
        _run(fn, a, src, dtype, sdt, pick_min, window, strides, padding)


@pytest.mark.parametrize("dtype", [D.float16, D.bfloat16, D.float32, D.float64], ids=ids)
def test_scatter_through_pooling_takes_the_first_nan(dtype: D.DType) -> None:
    # windows of 4 holding several NaN (torch's pooling alone keeps the last), NaN beside
    # infinities, -inf beside the even padding (padding never wins), ties of equal values
    nan, inf = np.nan, np.inf
    rows = np.array(
        [
            [1.0, nan, 2.0, nan, -inf, -inf, 3.0, 3.0],
            [nan, nan, inf, nan, 0.0, -0.0, -inf, nan],
            [-inf, inf, nan, -inf, 5.0, 5.0, nan, inf],
            [2.0, 2.0, 2.0, 2.0, -inf, 1.0, inf, inf],
        ]
    )
    for pick_min, fn in ((False, nx.window_scatter_max), (True, nx.window_scatter_min)):
        for sign in (1, -1):
            a = (sign * rows).astype(dtype.numpy_dtype)
            for window, strides, padding in (
                ((2, 2), (2, 2), "valid"),
                ((1, 4), (1, 2), [(0, 0), (2, 2)]),
                ((3, 3), (1, 1), [(1, 1), (1, 1)]),
            ):
                grid = _windows(a.shape, window, strides, padding)
                src = np.arange(1, math.prod(grid) + 1).reshape(grid).astype(dtype.numpy_dtype)
                _run(fn, a, src, dtype, dtype, pick_min, window, strides, padding)


# (shape, window, strides, padding, dilations)
REDUCTIONS: list[tuple[Any, ...]] = [
    ((9,), (3,), 2, [(1, 1)], 1),
    ((2, 3, 6, 5), (1, 1, 2, 2), (1, 1, 2, 2), "valid", 1),
    ((7, 3), (2, 1), (1, 1), [(1, 1), (0, 0)], (3, 1)),  # the pooled axis first, dilated
    ((3, 4, 5), (2, 2, 3), (1, 2, 1), [(1, 1), (0, 0), (1, 1)], (1, 1, 2)),
]


@pytest.mark.parametrize("how", ["max", "min"])
@pytest.mark.parametrize("dtype", ORDERED, ids=ids)
def test_window_max_min_through_pooling_match_the_reference(dtype: D.DType, how: str) -> None:
    fn = nx.window_max if how == "max" else nx.window_min
    for i, (shape, window, strides, padding, dil) in enumerate(REDUCTIONS):
        a = sample(dtype, shape, i, small=True)
        assert _served(a, dtype, window, strides, padding), (shape, window)
        if dtype.kind == "f":
            a.reshape(-1)[::5] = np.nan
            a.reshape(-1)[1::7] = np.inf
            a.reshape(-1)[2::7] = -np.inf
        want = ref_window(to_compute(a, dtype), how, dtype, window, strides, padding, dil)
        x = nx.tensor(a, dtype=dtype, backend="torch")
        got = fn(x, window, strides=strides, padding=padding, window_dilations=dil)
        check(got, want, dtype, shape=want.shape)
