"""Conformance of the window ops against a plain reference written here: Python loops
over every window (the in-bounds elements of each window are reduced; padding only
matters where a window holds none), over every dtype, 0-d to 3-d, strides, each
padding mode, dilations and empty inputs, plus the errors the core raises."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import numerix as nx
from numerix import dtypes
from numerix.testing.oracle import ALL, FLOATS, Cases, check, ids, noncontiguous, sample, to_compute

# (shape, window, strides, padding, dilations); None: the default
CONFIGS: list[tuple[Any, ...]] = [
    ((), (), None, "valid", None),
    ((7,), (3,), None, "valid", None),
    ((7,), (2,), (2,), "same", None),
    ((6,), (2,), 1, [(1, 2)], (2,)),
    ((4, 5), (2, 3), (1, 2), "valid", None),
    ((4, 5), (3, 2), (2, 1), "same", (1, 2)),
    ((3, 4), (2, 2), 1, [(0, 1), (2, 0)], 2),
    ((2, 3, 4), (1, 2, 2), (1, 1, 2), "valid", None),
    ((3, 3, 3), (2, 2, 2), 2, "same", (1, 2, 1)),
    ((0, 3), (1, 2), None, "valid", None),
    ((0,), (2,), None, "same", None),
    ((2,), (3,), None, "valid", None),  # the window is larger than x: no windows
    ((2,), (1,), None, [(2, 2)], None),  # windows that hold only padding
]


def _per_axis(v: Any, n: int) -> tuple[int, ...]:
    if v is None:
        return (1,) * n
    return (v,) * n if isinstance(v, int) else tuple(v)


def ref_pads(
    shape: tuple[int, ...], spans: list[int], strides: tuple[int, ...], padding: Any
) -> list[tuple[int, int]]:
    if padding == "valid":
        return [(0, 0)] * len(shape)
    if padding == "same":
        out = []
        for n, k, s in zip(shape, spans, strides):
            total = max(((n + s - 1) // s - 1) * s + k - n, 0)
            out.append((total // 2, total - total // 2))
        return out
    return [tuple(p) for p in padding]


def ref_window_positions(
    shape: tuple[int, ...], window: tuple[int, ...], strides: Any, padding: Any, dilations: Any
) -> dict[tuple[int, ...], list[tuple[int, ...]]]:
    """Every window (by output index) with the in-bounds positions of x it holds, in
    row-major window order."""
    n = len(shape)
    st, dil = _per_axis(strides, n), _per_axis(dilations, n)
    spans = [(w - 1) * d + 1 for w, d in zip(window, dil)]
    pads = ref_pads(shape, spans, st, padding)
    counts = []
    for size, span, s, (lo, hi) in zip(shape, spans, st, pads):
        padded = size + lo + hi
        counts.append(0 if span > padded else (padded - span) // s + 1)
    out: dict[tuple[int, ...], list[tuple[int, ...]]] = {}
    for o in np.ndindex(*counts):
        held = []
        for w in np.ndindex(*window):
            pos = tuple(o[i] * st[i] + w[i] * dil[i] - pads[i][0] for i in range(n))
            if all(0 <= p < size for p, size in zip(pos, shape)):
                held.append(pos)
        out[o] = held
    out["shape"] = tuple(counts)  # type: ignore[index]
    return out


def wrap(values: Any, dtype: dtypes.DType) -> np.ndarray:
    """Python ints wrapped to ``dtype`` (two's complement), as integer kernels do."""
    bits = dtype.bits
    r = []
    for v in np.asarray(values, dtype=object).ravel():
        m = int(v) % (1 << bits)
        if dtype.kind == "i" and m >= 1 << (bits - 1):
            m -= 1 << bits
        r.append(m)
    return np.array(r, dtype=dtype.numpy_dtype).reshape(np.shape(values))


def _lowest(d: dtypes.DType) -> Any:
    if d.kind == "b":
        return False
    if d.kind in "iu":
        return dtypes.int_range(d)[0]
    return -np.inf


def _highest(d: dtypes.DType) -> Any:
    if d.kind == "b":
        return True
    if d.kind in "iu":
        return dtypes.int_range(d)[1]
    return np.inf


def _vmax(vals: list[Any]) -> Any:
    return np.max(np.array(vals))


def _vmin(vals: list[Any]) -> Any:
    return np.min(np.array(vals))


def ref_window(a: np.ndarray, how: str, dtype: dtypes.DType, window: tuple[int, ...], strides: Any,
               padding: Any, dilations: Any) -> np.ndarray:  # fmt: skip
    wins = ref_window_positions(a.shape, window, strides, padding, dilations)
    shape = wins.pop("shape")  # type: ignore[call-overload]
    exact = dtype.kind in "biu"
    vals = a.tolist() if a.ndim else a.item()
    res = np.empty(shape, dtype=object)

    def at(pos: tuple[int, ...]) -> Any:
        v: Any = vals
        for p in pos:
            v = v[p]
        return int(v) if exact else v

    for o, held in wins.items():
        xs = [at(p) for p in held]
        if how in ("sum", "mean"):
            r: Any = sum(xs, 0)
        elif how == "prod":
            r = 1
            for v in xs:
                r = r * v
        elif how == "max":
            r = _vmax(xs) if xs else _lowest(dtype)
        else:
            r = _vmin(xs) if xs else _highest(dtype)
        if how == "mean":
            r = r / int(np.prod(window)) if window else r
        res[o] = r
    if how == "mean":
        return res.astype(np.complex128 if dtype.kind == "c" else np.float64)
    if exact and dtype.kind != "b":
        return wrap(res, dtype)
    if dtype.kind == "b":
        return res.astype(bool)
    return res.astype(np.complex128 if dtype.kind == "c" else np.float64)


OPS: dict[str, Callable[..., nx.Tensor]] = {
    "sum": nx.window_sum, "prod": nx.window_prod, "max": nx.window_max, "min": nx.window_min,
    "mean": nx.window_mean,
}  # fmt: skip


def _out(how: str, d: dtypes.DType) -> dtypes.DType | None:
    if how in ("sum", "prod"):
        return None if d.kind == "b" else d
    if how in ("max", "min"):
        return None if d.kind == "c" else d
    return dtypes.float32 if d.kind in "biu" else d


def _scale(a: np.ndarray, how: str, window: tuple[int, ...]) -> float:
    if how == "prod" or a.size == 0:
        return 1.0
    m = float(np.max(np.abs(a.astype(np.complex128 if a.dtype.kind == "c" else np.float64))))
    return max(m * max(int(np.prod(window)), 1), 1.0)


@pytest.mark.parametrize("how", list(OPS), ids=str)
@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_window_reductions(dtype: dtypes.DType, how: str) -> None:
    fn = OPS[how]
    out = _out(how, dtype)
    if out is None:
        why = ("bool has no sum or product that stays bool" if dtype.kind == "b"
               else "complex numbers have no order")  # fmt: skip
        with pytest.raises(nx.DTypeError, match=rf"^window_{how}: {why}; got {dtype.short}\[3\]"):
            fn(nx.tensor(sample(dtype, (3,))), (2,))
        return
    cases = Cases()
    for i, (shape, window, strides, padding, dil) in enumerate(CONFIGS):
        with cases.case(f"{shape} window={window} strides={strides} padding={padding} dil={dil}"):
            a = sample(dtype, shape, i, small=how == "prod")
            compute = dtypes.float32 if how == "mean" and dtype.kind in "biu" else dtype
            wide = to_compute(a, compute)
            want = ref_window(wide, how, dtype, window, strides, padding, dil)
            kw: dict[str, Any] = {"padding": padding}
            if strides is not None:
                kw["strides"] = strides
            if dil is not None:
                kw["window_dilations"] = dil
            got = fn(nx.tensor(a), window, **kw)
            check(got, want, out, scale=_scale(wide, how, window))
            if a.ndim and a.size:
                check(fn(noncontiguous(a), list(window), **kw), want, out,
                      scale=_scale(wide, how, window))  # fmt: skip
    cases.finish()


@pytest.mark.filterwarnings("ignore:.*encountered in:RuntimeWarning")  # numpy warns too
@pytest.mark.parametrize("dtype", FLOATS, ids=ids)
def test_window_nan_and_inf(dtype: dtypes.DType) -> None:
    a = np.array([[1.0, np.nan, 3.0, -np.inf], [4.0, 5.0, np.inf, 2.0]]).astype(dtype.numpy_dtype)
    wide = to_compute(a, dtype)
    for how in ("sum", "prod", "max", "min", "mean"):
        for padding in ("valid", "same"):
            want = ref_window(wide, how, dtype, (2, 2), (1, 1), padding, None)
            check(OPS[how](nx.tensor(a), (2, 2), padding=padding), want, dtype)


def test_window_sum_keeps_the_integer_dtype_and_wraps() -> None:
    # Note: unlike numerix.sum (int64 accumulation), window_sum keeps x's dtype (Nx, XLA)
    a = np.full((4,), 100, np.int8)
    got = nx.window_sum(nx.tensor(a), (2,))
    check(got, wrap([200, 200, 200], nx.int8), nx.int8)
    u = np.array([200, 100], np.uint8)
    check(nx.window_sum(nx.tensor(u), (2,)), wrap([300], nx.uint8), nx.uint8)


def test_window_of_python_data_and_defaults() -> None:
    got = nx.window_max([[1, 4], [3, 2]], [2, 2])
    check(got, np.array([[4]]), nx.int64)
    got = nx.window_mean([1.0, 2.0, 4.0], (2,), padding=[(1, 0)])
    check(got, np.array([0.5, 1.5, 3.0]), nx.float32)


def test_window_errors() -> None:
    x = nx.zeros((3, 4))
    with pytest.raises(
        nx.ShapeError,
        match=r"^window_sum: window_shape \(2,\) has 1 entries; it needs 2, one per axis of x$",
    ):
        nx.window_sum(x, (2,))
    with pytest.raises(
        nx.ShapeError,
        match=r"^window_max: window_shape must be a sequence of ints, one per axis of x, got 2$",
    ):
        nx.window_max(x, 2)
    with pytest.raises(
        nx.ShapeError, match=r"^window_min: window_shape must be positive, got \(0, 1\)$"
    ):
        nx.window_min(x, (0, 1))
    with pytest.raises(
        nx.ShapeError,
        match=r"^window_prod: strides \(1, 1, 1\) has 3 entries; it needs 2, one per axis of x$",
    ):
        nx.window_prod(x, (1, 1), strides=(1, 1, 1))
    with pytest.raises(
        nx.ShapeError, match=r"^window_sum: strides must be positive, got \(0, 0\)$"
    ):
        nx.window_sum(x, (1, 1), strides=0)
    with pytest.raises(
        nx.ShapeError,
        match=r"^window_sum: window_dilations must be an int or a sequence of ints, one per axis "
        r"of x, got 1.5$",
    ):
        nx.window_sum(x, (1, 1), window_dilations=1.5)
    with pytest.raises(
        nx.ArgumentError,
        match=r"^window_mean: padding must be 'valid', 'same' or a sequence of \(low, high\) "
        r"pairs, got 'SAME'$",
    ):
        nx.window_mean(x, (1, 1), padding="SAME")
    with pytest.raises(
        nx.ArgumentError,
        match=r"^window_max: padding must be 'valid', 'same' or a sequence of \(low, high\) "
        r"pairs, got \[1, 2\]$",
    ):
        nx.window_max(x, (1, 1), padding=[1, 2])
    with pytest.raises(
        nx.ShapeError,
        match=r"^window_max: padding has 1 \(low, high\) pairs; it needs 2, one per axis of x$",
    ):
        nx.window_max(x, (1, 1), padding=[(1, 2)])
    with pytest.raises(
        nx.ShapeError,
        match=r"^window_min: padding must be non-negative, got \(\(0, 0\), \(-1, 0\)\); slice x "
        r"instead$",
    ):
        nx.window_min(x, (1, 1), padding=[(0, 0), (-1, 0)])


# ---------------------------------------------------------------- window scatters


def ref_scatter(x: np.ndarray, src: np.ndarray, init: Any, out: dtypes.DType, highest: bool,
                window: tuple[int, ...], strides: Any, padding: Any) -> np.ndarray:  # fmt: skip
    wins = ref_window_positions(x.shape, window, strides, padding, None)
    shape = wins.pop("shape")  # type: ignore[call-overload]
    assert shape == src.shape
    exact = out.kind in "iu"
    res = np.full(x.shape, int(init) if exact else init, dtype=object)
    for o, held in wins.items():
        best = None
        for pos in held:
            v = x[pos]
            if best is None:
                best = pos
                continue
            b = x[best]
            if x.dtype.kind == "f" and np.isnan(b):
                continue  # the first NaN counts as the max (min): nothing beats it
            if (x.dtype.kind == "f" and np.isnan(v)) or (v < b if highest else v > b):
                best = pos
        if best is not None:
            s = src[o]
            res[best] = res[best] + (int(s) if exact else s)
    if exact:
        return wrap(res, out)
    return res.astype(np.complex128 if out.kind == "c" else np.float64)


SCATTER_CONFIGS: list[tuple[Any, ...]] = [
    ((), (), None, "valid"),
    ((7,), (3,), 1, "valid"),
    ((7,), (2,), 2, "same"),
    ((4, 5), (2, 3), (2, 1), "same"),
    ((4, 4), (2, 2), 2, "valid"),
    ((3, 4), (2, 2), None, [(1, 0), (0, 2)]),
    ((2, 3, 4), (2, 2, 2), (1, 1, 2), "same"),
    ((2,), (1,), 1, [(2, 2)]),  # windows that hold only padding drop their value
    ((0, 3), (1, 2), None, "valid"),
]


@pytest.mark.parametrize("highest", [False, True], ids=["max", "min"])
@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_window_scatter(dtype: dtypes.DType, highest: bool) -> None:
    fn = nx.window_scatter_min if highest else nx.window_scatter_max
    name = fn.__name__
    if dtype.kind == "c":
        with pytest.raises(
            nx.DTypeError,
            match=rf"^{name}: complex numbers have no order; got x {dtype.short}\[3\]",
        ):
            fn(nx.tensor(sample(dtype, (3,))), nx.tensor(sample(dtype, (2,))), 0, (2,))
        return
    if dtype.kind == "b":
        with pytest.raises(
            nx.DTypeError,
            match=rf"^{name}: source pred\[2\] \w+\([^)]*\) and init_value False give bool, "
            r"which has no sum; cast source with astype first$",
        ):
            fn(nx.tensor(sample(dtype, (3,))), nx.tensor(sample(dtype, (2,))), False, (2,))
    # a bool x with an integer source; otherwise x and source share the dtype
    sdt = dtypes.int16 if dtype.kind == "b" else dtype
    cases = Cases()
    for i, (shape, window, strides, padding) in enumerate(SCATTER_CONFIGS):
        with cases.case(f"{shape} window={window} strides={strides} padding={padding}"):
            a = sample(dtype, shape, i, small=True)  # small ranges give ties
            wins = ref_window_positions(shape, window, strides, padding, None)
            src = sample(sdt, wins["shape"], i + 50)  # type: ignore[index]
            init = 1 if sdt.kind in "iu" else 0.5
            kw: dict[str, Any] = {"padding": padding}
            if strides is not None:
                kw["strides"] = strides
            want = ref_scatter(to_compute(a, dtype), to_compute(src, sdt), init, sdt, highest,
                               window, strides, padding)  # fmt: skip
            got = fn(nx.tensor(a), nx.tensor(src), init, window, **kw)
            check(got, want, sdt, scale=8.0)  # a few source values in [-4, 4) meet
    cases.finish()


@pytest.mark.parametrize("dtype", FLOATS, ids=ids)
def test_window_scatter_ties_nan_and_inf(dtype: dtypes.DType) -> None:
    # -inf first: a window holding padding and -inf must pick the -inf (padding never wins)
    base = np.array([-np.inf, 2.0, 2.0, np.nan, 1.0, np.nan, -np.inf, -np.inf, 3.0])
    src = np.arange(1, 12)
    for (highest, fn), sign in itertools.product(
        ((False, nx.window_scatter_max), (True, nx.window_scatter_min)), (1, -1)
    ):
        a = (sign * base).astype(dtype.numpy_dtype)
        wide = to_compute(a, dtype)
        for padding in ("valid", [(3, 1)]):
            wins = ref_window_positions(a.shape, (2,), 1, padding, None)
            s = to_compute(np.resize(src, wins["shape"]), dtype)  # type: ignore[index]
            want = ref_scatter(wide, s, 0.0, dtype, highest, (2,), 1, padding)
            check(fn(nx.tensor(a), nx.tensor(s.astype(dtype.numpy_dtype)), 0.0, (2,),
                     padding=padding), want, dtype)  # fmt: skip


def test_window_scatter_dtypes_of_init_value() -> None:
    x = nx.tensor([1, 3, 2, 5])
    src = np.array([1, 2], np.int8)
    # a Python int is weak: the source's dtype stays
    got = nx.window_scatter_max(x, nx.tensor(src), 7, (2,), strides=2)
    check(got, np.array([7, 8, 7, 9]), nx.int8)
    # a Python float makes an integer source float32
    got = nx.window_scatter_max(x, nx.tensor(src), 0.5, (2,), strides=2)
    check(got, np.array([0.5, 1.5, 0.5, 2.5]), nx.float32)
    # a 0-d tensor promotes strongly
    got = nx.window_scatter_min(x, nx.tensor(src), nx.tensor(0, dtype=nx.int32), (2,), strides=2)
    check(got, np.array([1, 0, 2, 0]), nx.int32)
    # bool x, float16 source
    got = nx.window_scatter_max(
        nx.tensor([False, True, True]), nx.tensor([1.0, 2.0], dtype=nx.float16), 0, (2,)
    )
    check(got, np.array([0.0, 3.0, 0.0]), nx.float16)


def test_window_scatter_errors() -> None:
    x = nx.zeros((4, 4))
    with pytest.raises(
        nx.ShapeError,
        match=r"^window_scatter_max: source f32\[3\]\[3\] \w+\([^)]*\) must have the shape of "
        r"the windows of x f32\[4\]\[4\] \w+\([^)]*\), \(2, 2\)$",
    ):
        nx.window_scatter_max(x, nx.zeros((3, 3)), 0.0, (2, 2), strides=2)
    with pytest.raises(
        nx.ShapeError,
        match=r"^window_scatter_min: init_value must be a scalar or a 0-d tensor, got f32\[1\]",
    ):
        nx.window_scatter_min(x, nx.zeros((2, 2)), nx.zeros((1,)), (2, 2), strides=2)
    with pytest.raises(
        nx.DTypeError,
        match=r"^window_scatter_min: init_value must be a Python scalar or a 0-d tensor, got str$",
    ):
        nx.window_scatter_min(x, nx.zeros((2, 2)), "0", (2, 2), strides=2)
    with pytest.raises(
        nx.DTypeError,
        match=r"^window_scatter_max: Python int 300 does not fit int8 \(range -128..127\)",
    ):
        nx.window_scatter_max(x, nx.zeros((2, 2), nx.int8), 300, (2, 2), strides=2)
    with pytest.raises(
        nx.ShapeError,
        match=r"^window_scatter_max: window_shape \(2,\) has 1 entries; it needs 2, one per "
        r"axis of x$",
    ):
        nx.window_scatter_max(x, nx.zeros((2, 2)), 0.0, (2,))
