"""Composites against numpy: logsumexp, softmax, log_softmax, vector/matrix norms and
numpy's norm, split, array_split, meshgrid, diag, diagonal, tril, triu, one_hot,
isclose and allclose, quotient, reduce, window_reduce and to_batched, over every dtype,
with edge shapes, large inputs and errors.

numpy is the oracle, in float64 / complex128 on the inputs rounded to the dtype the
op computes in (scipy is not a dependency: the softmax family's references are
written here with numpy).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import numerix as nx
from numerix import dtypes
from numerix.defn.compilers import compilers_serving
from numerix.testing.oracle import (
    ALL,
    COMPLEX,
    FLOATS,
    INTS,
    Cases,
    check,
    ids,
    inexact,
    noncontiguous,
    real_of,
    sample,
    to_compute,
)
from numerix.testing.suite.compiled import run_compiled
from numerix.testing.suite.grad_more import check_vjp

REAL_IN = [d for d in ALL if d.kind != "c"]  # the softmax family refuses complex
SHAPES = [(), (5,), (0,), (2, 0), (2, 3, 4)]


def _quiet(fn: Callable[..., Any], *args: Any, **kw: Any) -> Any:
    """numpy's answer, or the ValueError it raises."""
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(*args, **kw)
    except ValueError as e:
        return e


def _empty_norm(want: Any, fn: Any, wide: np.ndarray, axis: Any, **kw: Any) -> Any:
    """numpy >= 2.3's norm of an empty input (0 for the orders that have a value there,
    as numerix gives); older numpy raises for some of them, so where the same call on a
    non-empty input is valid and the order is not negative, the oracle states 0."""
    if not isinstance(want, BaseException) or wide.size:
        return want
    ord = kw.get("ord")
    if ord is not None and not isinstance(ord, str) and float(ord) < 0:
        return want
    probe = np.ones([max(d, 1) for d in wide.shape], dtype=wide.dtype)
    if isinstance(_quiet(fn, probe, **({} if axis is _NO_AXIS else {"axis": axis}), **kw),
                  BaseException):  # fmt: skip
        return want
    ax = (-2, -1) if axis is _NO_AXIS else tuple(range(wide.ndim)) if axis is None else axis
    return np.sum(np.abs(wide), axis=ax, keepdims=kw.get("keepdims", False))


_NO_AXIS = object()


def _axes(ndim: int) -> list[Any]:
    cases: list[Any] = [None, ()]
    if ndim >= 1:
        cases += [0, -1, (0,)]
    if ndim >= 2:
        cases += [1, (0, -1), (-1, 0)]
    if ndim >= 3:
        cases += [-2, (0, 2)]
    return cases


# ---------------------------------------------------------------- references in float64


def np_logsumexp(a: np.ndarray, axis: Any = None, keepdims: bool = False) -> np.ndarray:
    m = np.max(a, axis=axis, keepdims=True, initial=-np.inf)
    m = np.where(np.isfinite(m), m, 0.0)
    r = np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True)) + m
    return r if keepdims else np.squeeze(r, axis=axis)


def np_softmax(a: np.ndarray, axis: Any) -> np.ndarray:
    e = np.exp(a - np.max(a, axis=axis, keepdims=True, initial=-np.inf))
    return e / np.sum(e, axis=axis, keepdims=True)


def np_log_softmax(a: np.ndarray, axis: Any) -> np.ndarray:
    s = a - np.max(a, axis=axis, keepdims=True, initial=-np.inf)
    return s - np.log(np.sum(np.exp(s), axis=axis, keepdims=True))


def _complex_refused(fn: Callable[..., Any], name: str, dtype: dtypes.DType) -> None:
    with pytest.raises(nx.DTypeError, match=rf"^{name}: complex input is not supported, got "
                       rf"{dtype.short}\[3\]\[4\].*numerix.real"):  # fmt: skip
        fn(nx.tensor(sample(dtype, (3, 4))))


# ---------------------------------------------------------------- activations


def _np_erf(w: np.ndarray) -> np.ndarray:
    return np.vectorize(math.erf, otypes=[np.float64])(w)


_ACTIVATIONS: list[tuple[str, Callable[..., Any], Callable[[np.ndarray], np.ndarray]]] = [
    ("gelu", nx.gelu, lambda w: 0.5 * w * (1 + _np_erf(w / math.sqrt(2)))),
    ("gelu_tanh", lambda x: nx.gelu(x, approximate=True),
     lambda w: 0.5 * w * (1 + np.tanh(math.sqrt(2 / math.pi) * (w + 0.044715 * w**3)))),
    ("silu", nx.silu, lambda w: w / (1 + np.exp(-w))),
    ("softplus", nx.softplus, lambda w: np.logaddexp(w, 0.0)),
]  # fmt: skip


@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_activations(dtype: dtypes.DType) -> None:
    if dtype.kind == "c":
        for name, fn, _ in _ACTIVATIONS:
            _complex_refused(fn, name.split("_")[0], dtype)
        with pytest.raises(nx.DTypeError, match=r"^relu: takes real numeric tensors"):
            nx.relu(nx.tensor(sample(dtype, (3, 4))))
        return
    out = inexact(dtype)
    cases = Cases()
    for shape in [(), (0,), (2, 3, 4)]:
        a = sample(dtype, shape, 8)
        wide = to_compute(a, out)
        for name, fn, ref in _ACTIVATIONS:
            with cases.case(f"{name} {shape}"):
                with np.errstate(over="ignore"):
                    want = ref(wide)
                check(fn(a), want, out, scale=4.0)
                check(fn(noncontiguous(a)), want, out, scale=4.0)
        with cases.case(f"relu {shape}"):
            if dtype.kind == "b":
                with pytest.raises(nx.DTypeError, match=r"^relu: takes real numeric tensors"):
                    nx.relu(a)
            else:
                check(nx.relu(a), np.maximum(a, np.zeros((), a.dtype)), dtype)
                check(nx.nn.relu(a), np.maximum(a, np.zeros((), a.dtype)), dtype)
    cases.finish()


@pytest.mark.parametrize("dtype", FLOATS, ids=ids)
def test_activations_at_the_extremes(dtype: dtypes.DType) -> None:
    x = np.array([-np.inf, -1e4, -30.0, 0.0, 30.0, 1e4, np.inf, np.nan]).astype(dtype.numpy_dtype)
    w = to_compute(x, dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        check(nx.softplus(x), np.logaddexp(w, 0.0), dtype)
        check(nx.relu(x), np.where(np.isnan(w), np.nan, np.maximum(w, 0.0)), dtype)
        check(nx.gelu(x), 0.5 * w * (1 + _np_erf(w / math.sqrt(2))), dtype)
    with pytest.raises(nx.ArgumentError, match=r"^gelu: approximate must be True or False"):
        nx.gelu(x, approximate="tanh")


# ---------------------------------------------------------------- logsumexp


@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_logsumexp(dtype: dtypes.DType) -> None:
    if dtype.kind == "c":
        _complex_refused(nx.logsumexp, "logsumexp", dtype)
        return
    out = inexact(dtype)
    cases = Cases()
    for shape in SHAPES:
        a = sample(dtype, shape, 3)
        wide = to_compute(a, out)
        for axis in _axes(len(shape)):
            for keepdims in (False, True):
                with cases.case(f"{shape} axis={axis} keepdims={keepdims}"):
                    want = _quiet(np_logsumexp, wide, axis=axis, keepdims=keepdims)
                    check(nx.logsumexp(a, axis=axis, keepdims=keepdims), want, out)
                    check(nx.logsumexp(noncontiguous(a), axis=axis, keepdims=keepdims), want, out)
    cases.finish()


@pytest.mark.parametrize("dtype", FLOATS, ids=ids)
def test_logsumexp_large_and_infinite(dtype: dtypes.DType) -> None:
    cases = Cases()
    for c in (1e3, -1e3, 3e4):
        with cases.case(f"shift {c}"):
            # x = a + c (rounded to the dtype); the reference shifts by the known c, not the max
            x = (sample(dtype, (3, 4), 5).astype(np.float64) + c).astype(dtype.numpy_dtype)
            w = to_compute(x, dtype)
            want = np.log(np.sum(np.exp(w - c), axis=1)) + c
            check(nx.logsumexp(x, axis=1), want, dtype)
            want_all = np.log(np.sum(np.exp(w - c))) + c
            check(nx.logsumexp(x), want_all, dtype)
    inf = np.inf
    x = np.array([[-inf, -inf], [0.0, -inf], [inf, 1.0], [np.nan, 1.0], [-inf, inf]])
    with cases.case("infinities"):
        want = np.array([-inf, 0.0, inf, np.nan, inf])
        check(nx.logsumexp(x.astype(dtype.numpy_dtype), axis=-1), want, dtype)
        check(nx.logsumexp(x.astype(dtype.numpy_dtype), axis=-1, keepdims=True), want[:, None],
              dtype)  # fmt: skip
    with cases.case("all -inf over every axis"):
        check(nx.logsumexp(np.full((2, 3), -inf, dtype.numpy_dtype)), -inf, dtype)
    with cases.case("empty axis gives -inf"):
        check(nx.logsumexp(np.zeros((3, 0), dtype.numpy_dtype), axis=1), np.full(3, -inf), dtype)
    cases.finish()


def test_logsumexp_errors() -> None:
    x = nx.ones((2, 3))
    with pytest.raises(nx.ShapeError, match=r"^logsumexp: axis 2 is out of range for a tensor "
                       r"of shape \(2, 3\)"):  # fmt: skip
        nx.logsumexp(x, axis=2)
    with pytest.raises(nx.ShapeError, match=r"^logsumexp: repeated axis in \(0, -2\)"):
        nx.logsumexp(x, axis=(0, -2))


# ---------------------------------------------------------------- softmax, log_softmax

SOFTMAX = [("softmax", nx.softmax, np_softmax), ("log_softmax", nx.log_softmax, np_log_softmax)]


def _softmax_axes(ndim: int) -> list[Any]:
    cases: list[Any] = [None]
    if ndim >= 1:
        cases += [-1, 0, (0,)]
    if ndim >= 2:
        cases += [1, -2, (0, -1)]
    if ndim >= 3:
        cases += [(2, 0), (0, 1, 2)]
    return cases


@pytest.mark.parametrize("dtype", ALL, ids=ids)
@pytest.mark.parametrize(("name", "fn", "ref"), SOFTMAX, ids=["softmax", "log_softmax"])
def test_softmax_family(name: str, fn: Any, ref: Any, dtype: dtypes.DType) -> None:
    if dtype.kind == "c":
        _complex_refused(fn, name, dtype)
        return
    out = inexact(dtype)
    cases = Cases()
    for shape in SHAPES:
        a = sample(dtype, shape, 4)
        wide = to_compute(a, out)
        for axis in _softmax_axes(len(shape)):
            with cases.case(f"{shape} axis={axis}"):
                want = _quiet(ref, wide, axis)
                check(fn(a, axis=axis), want, out)
                check(fn(noncontiguous(a), axis=axis), want, out)
        if shape:
            with cases.case(f"{shape} default axis"):
                check(fn(a), _quiet(ref, wide, -1), out)
    cases.finish()


@pytest.mark.parametrize("dtype", FLOATS, ids=ids)
@pytest.mark.parametrize(("name", "fn", "ref"), SOFTMAX, ids=["softmax", "log_softmax"])
def test_softmax_family_large(name: str, fn: Any, ref: Any, dtype: dtypes.DType) -> None:
    cases = Cases()
    for c in (1e3, -1e3, 3e4):
        with cases.case(f"shift {c}"):
            x = (sample(dtype, (3, 4), 6).astype(np.float64) + c).astype(dtype.numpy_dtype)
            # softmax is shift-invariant: the reference shifts by the known c
            want = ref(to_compute(x, dtype) - c, 1)
            check(fn(x, axis=1), want, dtype)
    inf, nan = np.inf, np.nan
    x = np.array([[-inf, -inf], [0.0, -inf], [3.0, 3.0], [inf, 1.0], [nan, 1.0]], dtype.numpy_dtype)
    # no axes: each element its own slice; axes (1, 2) of a 3-d tensor are adjacent,
    # (0, 2) are not (torch's kernel merges the first by a view, moves the second)
    x3 = np.stack([x, x[::-1]], axis=1)
    for a, axis in [(x, -1), (x, ()), (x3, (1, 2)), (x3, (0, 2))]:
        with cases.case(f"infinities {a.shape} axis={axis}"):
            want = _quiet(ref, a.astype(np.float64), axis)
            if axis == -1:  # an all -inf slice has no softmax, as in JAX and scipy
                assert np.isnan(want[0]).all() and np.isnan(want[3:]).all()
            check(fn(a, axis=axis), want, dtype)
    cases.finish()


def test_softmax_family_errors() -> None:
    for name, fn, _ in SOFTMAX:
        with pytest.raises(nx.ShapeError, match=rf"^{name}: axis -1 is out of range for f32 .*, "
                           r"which has no axes; pass axis=None"):  # fmt: skip
            fn(nx.tensor(1.0))
        with pytest.raises(nx.ShapeError, match=rf"^{name}: axis -3 is out of range"):
            fn(nx.ones((2, 3)), axis=-3)
        with pytest.raises(nx.ShapeError, match=rf"^{name}: repeated axis in \(1, 1\)"):
            fn(nx.ones((2, 3)), axis=(1, 1))


# softmax and log_softmax are blocks: each backend's native kernel (or the core's
# version) runs eagerly above; below, traced as one node under every compiler, and
# their derivative rules against finite differences and against the derivative in
# closed form, over the float dtypes.


def _softmax_paths(x: nx.Tensor, h: nx.Tensor, i: nx.Tensor) -> tuple[nx.Tensor, ...]:
    # adjacent axes, axes apart, every axis, no axis, float16 and integer input
    return (nx.softmax(x, axis=(0, 2)), nx.log_softmax(x, axis=(1, 2)), nx.softmax(x, axis=None),
            nx.log_softmax(x, axis=()), nx.softmax(h), nx.log_softmax(h, axis=0),
            nx.softmax(i, axis=0))  # fmt: skip


def test_softmax_family_compiled() -> None:
    x = sample(dtypes.float32, (2, 3, 2), 7)
    x[:, 0, :] = -np.inf  # an all -inf slice over axes (0, 2): NaN
    args = (nx.tensor(x), nx.tensor(sample(dtypes.float16, (3, 4), 8)),
            nx.tensor(sample(dtypes.int32, (3, 4), 9)))  # fmt: skip
    graph = nx.trace(_softmax_paths, *args)
    blocks = [n.value.name for n in graph.nodes if n.op == "block"]
    assert blocks.count("softmax") == 4 and blocks.count("log_softmax") == 3, graph.listing()
    run_compiled(_softmax_paths, *args, op="softmax")


def test_softmax_family_vjp_rules() -> None:
    cases = Cases()
    rng = np.random.default_rng(5)
    for name, fn in [("softmax", nx.softmax), ("log_softmax", nx.log_softmax)]:
        for shape, axis in [((3, 4), 1), ((2, 3, 2), (0, 2)), ((2, 2), ())]:
            with cases.case(f"{name} {shape} axis={axis}"):
                x = rng.uniform(-2.0, 2.0, shape)
                check_vjp(name, lambda t, fn=fn, axis=axis: fn(t, axis=axis), [x])
    cases.finish()


# float16 takes the rules' float32 path (bfloat16's too); float64's precision is checked
# by the finite differences above
@pytest.mark.parametrize("dtype", [dtypes.float16, dtypes.float32], ids=ids)
def test_softmax_family_grad(dtype: dtypes.DType) -> None:
    x, w = sample(dtype, (2, 3, 2), 11), sample(dtype, (2, 3, 2), 12)
    wt = nx.tensor(w)

    def loss(a: nx.Tensor) -> nx.Tensor:
        return nx.sum(nx.softmax(a, axis=(0, 2)) * wt) + nx.sum(nx.log_softmax(a, axis=-1) * wt)

    xw, ww = to_compute(x, dtype), to_compute(w, dtype)
    s = np_softmax(xw, (0, 2))
    want = s * (ww - np.sum(ww * s, axis=(0, 2), keepdims=True))
    want += ww - np_softmax(xw, -1) * np.sum(ww, axis=-1, keepdims=True)
    grad = nx.grad(loss)
    scale = float(np.abs(ww).max())  # the size of the cotangent's terms summed
    check(grad(nx.tensor(x)), want, dtype, scale=scale)
    for name in compilers_serving(nx.get_default_backend()):
        check(nx.jit(grad, compiler=name)(nx.tensor(x)), want, dtype, scale=scale)


# ---------------------------------------------------------------- vector_norm

VECTOR_ORDS: list[Any] = [2, 1, math.inf, -math.inf, 0, 3, 0.5, -1, -2.5]


def _norm_out(d: dtypes.DType) -> dtypes.DType:
    return real_of(inexact(d))


def _norm_compute(d: dtypes.DType) -> dtypes.DType:
    return dtypes.float32 if d.kind in "biu" else d


@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_vector_norm(dtype: dtypes.DType) -> None:
    out = _norm_out(dtype)
    cases = Cases()
    for shape in SHAPES:
        a = sample(dtype, shape, 7)
        if a.ndim:
            a[..., :1] = 0  # zeros matter for ord 0 and negative orders
        wide = to_compute(a, _norm_compute(dtype))
        for ord in VECTOR_ORDS:
            for axis in _axes(len(shape)):
                for keepdims in (False, True):
                    label = f"{shape} ord={ord} axis={axis} keepdims={keepdims}"
                    with cases.case(label):
                        want = _quiet(np.linalg.vector_norm, wide, axis=axis, keepdims=keepdims,
                                      ord=ord)  # fmt: skip
                        want = _empty_norm(want, np.linalg.norm, wide, axis, ord=ord,
                                       keepdims=keepdims)  # fmt: skip
                        if isinstance(want, BaseException):
                            assert ord == -math.inf
                            with pytest.raises(nx.ShapeError, match=r"^vector_norm: ord=-inf "
                                               r"over the empty axis/axes"):  # fmt: skip
                                nx.vector_norm(a, axis=axis, keepdims=keepdims, ord=ord)
                            continue
                        got = nx.vector_norm(a, axis=axis, keepdims=keepdims, ord=ord)
                        check(got, want, out)
        with cases.case(f"{shape} default ord, non-contiguous"):
            want = np.linalg.vector_norm(wide)
            check(nx.vector_norm(noncontiguous(a)), want, out)
    cases.finish()


@pytest.mark.parametrize("dtype", FLOATS, ids=ids)
def test_vector_norm_large(dtype: dtypes.DType) -> None:
    # float16 squares in float32: 300**2 overflows float16 but the norm does not (bfloat16
    # and float32 squares overflow past 1.8e19, float64 past 1.3e154, as numpy's)
    big = {
        dtypes.float16: 300.0,
        dtypes.bfloat16: 1e18,
        dtypes.float32: 1e15,
        dtypes.float64: 1e150,
    }[dtype]
    a = np.array([big, big, -big], dtype.numpy_dtype)
    want = np.linalg.vector_norm(a.astype(np.float64))
    check(nx.vector_norm(a), want, dtype)
    inf = np.inf
    check(nx.vector_norm(np.array([1.0, inf], dtype.numpy_dtype), ord=3), inf, dtype)
    check(nx.vector_norm(np.array([1.0, np.nan], dtype.numpy_dtype)), np.nan, dtype)


def test_vector_norm_errors() -> None:
    x = nx.ones((2, 3))
    with pytest.raises(nx.ArgumentError, match=r"^vector_norm: ord must be a real number .*"
                       r"got 'fro'; for matrix norms use numerix.matrix_norm"):  # fmt: skip
        nx.vector_norm(x, ord="fro")
    with pytest.raises(nx.ArgumentError, match=r"^vector_norm: ord must be a real number"):
        nx.vector_norm(x, ord=True)
    with pytest.raises(nx.ArgumentError, match=r"^vector_norm: ord must not be NaN"):
        nx.vector_norm(x, ord=float("nan"))
    with pytest.raises(nx.ShapeError, match=r"^vector_norm: axis 2 is out of range"):
        nx.vector_norm(x, axis=2)
    with pytest.raises(nx.ShapeError, match=r"^vector_norm: ord=-inf over the empty axis/axes "
                       r"\(1,\) of f32\[2\]\[0\]"):  # fmt: skip
        nx.vector_norm(nx.ones((2, 0)), axis=1, ord=-math.inf)


# ---------------------------------------------------------------- matrix_norm

MATRIX_SHAPES = [(3, 4), (4, 3), (1, 1), (2, 3, 4), (0, 3), (3, 0), (0, 0), (0, 2, 3), (2, 2, 0)]
MATRIX_ORDS: list[Any] = ["fro", "nuc", 2, -2, 1, -1, math.inf, -math.inf]


@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_matrix_norm(dtype: dtypes.DType) -> None:
    out = _norm_out(dtype)
    cases = Cases()
    for shape in MATRIX_SHAPES:
        a = sample(dtype, shape, 8)
        wide = to_compute(a, _norm_compute(dtype))
        for ord in MATRIX_ORDS:
            for keepdims in (False, True):
                with cases.case(f"{shape} ord={ord} keepdims={keepdims}"):
                    want = _quiet(np.linalg.matrix_norm, wide, keepdims=keepdims, ord=ord)
                    want = _empty_norm(want, np.linalg.matrix_norm, wide, _NO_AXIS,
                                       keepdims=keepdims, ord=ord)  # fmt: skip
                    if isinstance(want, BaseException):
                        assert ord in (-1, -2, -math.inf)
                        with pytest.raises(nx.ShapeError, match=rf"^matrix_norm: ord={ord} of "
                                           r".* has no value: the matrices have no"):  # fmt: skip
                            nx.matrix_norm(a, keepdims=keepdims, ord=ord)
                        continue
                    check(nx.matrix_norm(a, keepdims=keepdims, ord=ord), want, out)
                    check(nx.matrix_norm(noncontiguous(a), keepdims=keepdims, ord=ord), want, out)
    cases.finish()


def test_matrix_norm_errors() -> None:
    x = nx.ones((2, 3))
    for ord in (0, 3, "foo", None, True):
        with pytest.raises(nx.ArgumentError, match=r"^matrix_norm: invalid matrix norm order"):
            nx.matrix_norm(x, ord=ord)
    with pytest.raises(nx.ShapeError, match=r"^matrix_norm: needs a tensor of at least 2 "
                       r"dimensions .* got f32\[3\] .*; use vector_norm"):  # fmt: skip
        nx.matrix_norm(nx.ones(3))


# ---------------------------------------------------------------- norm (numpy.linalg.norm)

NORM_CASES: list[tuple[tuple[int, ...], Any]] = [
    ((), None), ((5,), None), ((3, 4), None), ((2, 3, 4), None), ((0,), None), ((2, 0), None),
    ((5,), 0), ((5,), -1), ((3, 4), 1), ((3, 4), -1), ((2, 3, 4), 1), ((2, 3, 4), (0, 2)),
    ((2, 3, 4), (2, 0)), ((2, 3, 4), (-1, -2)), ((3, 4), (1, 0)), ((2, 3, 4), -2),
]  # fmt: skip
NORM_ORDS: list[Any] = [None, "fro", 2, -2, "nuc", 1, -1, math.inf, -math.inf, 0, 3, 0.5]


@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_norm(dtype: dtypes.DType) -> None:
    out = _norm_out(dtype)
    cases = Cases()
    for shape, axis in NORM_CASES:
        a = sample(dtype, shape, 9)
        wide = to_compute(a, _norm_compute(dtype))
        for ord in NORM_ORDS:
            for keepdims in (False, True):
                with cases.case(f"{shape} axis={axis} ord={ord} keepdims={keepdims}"):
                    want = _quiet(np.linalg.norm, wide, ord=ord, axis=axis, keepdims=keepdims)
                    want = _empty_norm(want, np.linalg.norm, wide, axis, ord=ord,
                                       keepdims=keepdims)  # fmt: skip
                    if isinstance(want, BaseException):
                        with pytest.raises((nx.ShapeError, nx.ArgumentError), match=r"^norm: "):
                            nx.norm(a, ord=ord, axis=axis, keepdims=keepdims)
                        continue
                    check(nx.norm(a, ord=ord, axis=axis, keepdims=keepdims), want, out)
    cases.finish()


def test_norm_errors() -> None:
    x = nx.ones((2, 3, 4))
    with pytest.raises(nx.ShapeError, match=r"^norm: ord=1 with axis=None needs a 1-d or 2-d "
                       r"tensor, got f32\[2\]\[3\]\[4\] .*; pass axis"):  # fmt: skip
        nx.norm(x, ord=1)
    with pytest.raises(nx.ShapeError, match=r"^norm: repeated axis in \(1, -2\)"):
        nx.norm(x, axis=(1, -2))
    with pytest.raises(nx.ShapeError, match=r"^norm: axis \(0, 1, 2\) names 3 axes"):
        nx.norm(x, axis=(0, 1, 2))
    with pytest.raises(nx.ShapeError, match=r"^norm: axis must be None, an int or a pair"):
        nx.norm(x, axis=1.0)
    with pytest.raises(nx.ArgumentError, match=r"^norm: ord must be a real number .* got 'fro'"):
        nx.norm(x, ord="fro", axis=1)
    with pytest.raises(nx.ArgumentError, match=r"^norm: invalid matrix norm order 0"):
        nx.norm(x, ord=0, axis=(0, 1))


# ---------------------------------------------------------------- split, array_split

SPLITS: list[tuple[tuple[int, ...], Any, int]] = [
    ((6,), 3, 0), ((6,), 1, 0), ((6,), [2, 5], 0), ((6,), [-2], 0), ((6,), [4, 2], 0),
    ((6,), [0, 9], 0), ((6,), [], 0), ((2, 6), 2, -1), ((2, 6), [1, 3], 1), ((4, 3), 4, 0),
    ((0,), 3, 0), ((2, 0), 1, -1), ((3, 4, 2), [1], -2), ((3, 4, 2), 2, 2),
]  # fmt: skip
ARRAY_SPLITS = [((7,), 3, 0), ((2, 5), 4, 1), ((2, 5), 7, -1), ((0, 2), 2, 0)]


@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_split_and_array_split(dtype: dtypes.DType) -> None:
    cases = Cases()
    for fn, ref, table in ((nx.split, np.split, SPLITS),
                           (nx.array_split, np.array_split, SPLITS + ARRAY_SPLITS)):  # fmt: skip
        for shape, ios, axis in table:
            a = sample(dtype, shape, 2)
            with cases.case(f"{fn.__name__} {shape} {ios} axis={axis}"):
                want = ref(a, ios, axis=axis)
                for src in (a, noncontiguous(a)):
                    got = fn(src, ios, axis=axis)
                    assert isinstance(got, list) and len(got) == len(want), (len(got), len(want))
                    for g, w in zip(got, want):
                        check(g, w, dtype)
    with cases.case("numpy array of split points"):
        a = sample(dtype, (6, 2), 2)
        for g, w in zip(nx.split(a, np.array([1, 4])), np.split(a, [1, 4])):
            check(g, w, dtype)
    cases.finish()


def test_split_errors() -> None:
    x = nx.arange(5)
    with pytest.raises(nx.ShapeError, match=r"^split: axis 0 of s64\[5\] .* \(size 5\) does not "
                       r"split into 2 equal sections; .* use array_split"):  # fmt: skip
        nx.split(x, 2)
    for fn in (nx.split, nx.array_split):
        name = fn.__name__
        with pytest.raises(nx.ShapeError, match=rf"^{name}: the number of sections must be "
                           r"positive, got 0"):  # fmt: skip
            fn(x, 0)
        with pytest.raises(nx.ShapeError, match=rf"^{name}: indices_or_sections must be an int "
                           r"or a list of ints, got 2.5"):  # fmt: skip
            fn(x, 2.5)
        with pytest.raises(nx.ShapeError, match=rf"^{name}: axis 1 is out of range"):
            fn(x, 1, axis=1)
        with pytest.raises(nx.ShapeError, match=rf"^{name}: axis 0 is out of range for a 0-d"):
            fn(nx.tensor(1), 1)


# ---------------------------------------------------------------- meshgrid

MESH_INPUTS = [[(3,)], [(3,), (2,)], [(2,), (3,), (4,)], [(0,), (3,)], [(1,), (0,), (2,)],
               [(2, 2), ()]]  # fmt: skip


@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_meshgrid(dtype: dtypes.DType) -> None:
    cases = Cases()
    for shapes in MESH_INPUTS:
        arrays = [sample(dtype, s, i) for i, s in enumerate(shapes)]
        for indexing in ("xy", "ij"):
            for sparse in (False, True):
                with cases.case(f"{shapes} indexing={indexing} sparse={sparse}"):
                    want = np.meshgrid(*arrays, indexing=indexing, sparse=sparse)
                    got = nx.meshgrid(*arrays, indexing=indexing, sparse=sparse)
                    assert isinstance(got, list) and len(got) == len(want)
                    for g, w in zip(got, want):
                        check(g, w, dtype)
    with cases.case("each output keeps its dtype"):
        other = dtypes.float64 if dtype is not dtypes.float64 else dtypes.int8
        x, y = sample(dtype, (3,), 1), sample(other, (2,), 2)
        gx, gy = nx.meshgrid(x, y)
        wx, wy = np.meshgrid(x, y)
        check(gx, wx, dtype)
        check(gy, wy, other)
    with cases.case("no inputs"):
        assert nx.meshgrid() == []
    cases.finish()


def test_meshgrid_errors() -> None:
    with pytest.raises(
        nx.ArgumentError, match=r"^meshgrid: indexing must be 'xy' or 'ij', got 'yx'"
    ):
        nx.meshgrid(nx.arange(2), indexing="yx")


# ---------------------------------------------------------------- diag, diagonal


@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_diag(dtype: dtypes.DType) -> None:
    cases = Cases()
    for shape in [(0,), (1,), (3,), (3, 4), (4, 3), (2, 2), (0, 3), (1, 1)]:
        a = sample(dtype, shape, 3, nonzero=True)
        for k in range(-5, 6):
            with cases.case(f"{shape} k={k}"):
                want = np.diag(a, k)
                check(nx.diag(a, k), want, dtype)
                check(nx.diag(noncontiguous(a), k=k), want, dtype)
    cases.finish()


@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_diagonal(dtype: dtypes.DType) -> None:
    cases = Cases()
    for shape in [(3, 4), (4, 3), (2, 3, 4), (2, 0, 3), (0, 2, 2), (1, 1), (2, 1, 5, 2)]:
        a = sample(dtype, shape, 4)
        for k in range(-5, 6):
            with cases.case(f"{shape} offset={k}"):
                want = np.diagonal(a, offset=k, axis1=-2, axis2=-1)
                check(nx.diagonal(a, offset=k), want, dtype)
                check(nx.diagonal(noncontiguous(a), offset=k), want, dtype)
    cases.finish()


def test_diag_and_diagonal_errors() -> None:
    for bad in (nx.tensor(1), nx.ones((2, 2, 2))):
        with pytest.raises(nx.ShapeError, match=r"^diag: input must be 1-d or 2-d, got "):
            nx.diag(bad)
    with pytest.raises(nx.ShapeError, match=r"^diag: k must be an int, got 1.0"):
        nx.diag(nx.ones(2), 1.0)
    with pytest.raises(nx.ShapeError, match=r"^diagonal: needs a tensor of at least 2 dimensions, "
                       r"got f32\[2\] .*; use diag"):  # fmt: skip
        nx.diagonal(nx.ones(2))
    with pytest.raises(nx.ShapeError, match=r"^diagonal: offset must be an int, got True"):
        nx.diagonal(nx.ones((2, 2)), offset=True)


# ---------------------------------------------------------------- tril, triu


@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_tril_triu(dtype: dtypes.DType) -> None:
    cases = Cases()
    for fn, ref in ((nx.tril, np.tril), (nx.triu, np.triu)):
        for shape in [(3, 4), (4, 3), (1, 1), (2, 3, 4), (0, 3), (2, 0, 0), (2, 1, 3, 3)]:
            a = sample(dtype, shape, 5, nonzero=True)
            for k in range(-5, 6):
                with cases.case(f"{fn.__name__} {shape} k={k}"):
                    want = ref(a, k)
                    check(fn(a, k=k), want, dtype)
                    check(fn(noncontiguous(a), k=k), want, dtype)
            with cases.case(f"{fn.__name__} {shape} default k"):
                check(fn(a), ref(a), dtype)
    cases.finish()


def test_tril_triu_errors() -> None:
    for name, fn in (("tril", nx.tril), ("triu", nx.triu)):
        with pytest.raises(nx.ShapeError, match=rf"^{name}: needs a tensor of at least 2 "
                           r"dimensions .* got f32\[3\]"):  # fmt: skip
            fn(nx.ones(3))
        with pytest.raises(nx.ShapeError, match=rf"^{name}: k must be an int, got 0.5"):
            fn(nx.ones((2, 2)), k=0.5)


# ---------------------------------------------------------------- one_hot


def np_one_hot(idx: np.ndarray, n: int, axis: int, dtype: dtypes.DType) -> np.ndarray:
    """Rows of the identity, an extra zero row for every index out of range, moved to axis."""
    table = np.concatenate([np.eye(n), np.zeros((1, n))])
    i = idx.astype(object)  # no wrap-around while testing the range
    safe = np.where((i >= 0) & (i < n), i, n).astype(np.int64)
    r = table[safe]
    nd = idx.ndim + 1
    return np.moveaxis(r, -1, axis + nd if axis < 0 else axis).astype(dtype.numpy_dtype)


@pytest.mark.parametrize("dtype", INTS, ids=ids)
def test_one_hot_indices(dtype: dtypes.DType) -> None:
    cases = Cases()
    for shape in [(), (6,), (2, 3), (0,), (2, 0, 3)]:
        a = sample(dtype, shape, 6)  # -9..9 (0..9 unsigned): some out of range below
        for n in (0, 1, 4, 12):
            for axis in range(-len(shape) - 1, len(shape) + 1):
                with cases.case(f"{shape} n={n} axis={axis}"):
                    want = np_one_hot(a, n, axis, dtypes.float32)
                    check(nx.one_hot(a, n, axis=axis), want, dtypes.float32)
                    check(nx.one_hot(noncontiguous(a), n, axis=axis), want, dtypes.float32)
    with cases.case("more classes than the index dtype counts"):
        lo, hi = dtypes.int_range(dtype)
        a = np.array([lo, 0, min(hi, 299), min(hi, 300)], dtype.numpy_dtype)
        check(nx.one_hot(a, 300), np_one_hot(a, 300, -1, dtypes.float32), dtypes.float32)
    cases.finish()


@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_one_hot_dtype(dtype: dtypes.DType) -> None:
    a = np.array([[0, 3, -1], [2, 7, 1]])
    for axis in (-1, 0, 1):
        check(nx.one_hot(a, 4, dtype=dtype, axis=axis), np_one_hot(a, 4, axis, dtype), dtype)


@pytest.mark.parametrize("dtype", [dtypes.bool_, *FLOATS, *COMPLEX], ids=ids)
def test_one_hot_refuses_non_integer_indices(dtype: dtypes.DType) -> None:
    with pytest.raises(nx.DTypeError, match=rf"^one_hot: indices must be integers, got "
                       rf"{dtype.short}\[3\].*astype\(numerix.int64\)"):  # fmt: skip
        nx.one_hot(sample(dtype, (3,)), 3)


def test_one_hot_errors() -> None:
    x = nx.tensor([0, 1])
    for n in (-1, 2.0, True):
        with pytest.raises(nx.ShapeError, match=r"^one_hot: num_classes must be a non-negative "
                           r"int"):  # fmt: skip
            nx.one_hot(x, n)
    with pytest.raises(nx.ShapeError, match=r"^one_hot: axis 2 is out of range"):
        nx.one_hot(x, 3, axis=2)
    with pytest.raises(nx.ShapeError, match=r"^one_hot: axis -3 is out of range"):
        nx.one_hot(x, 3, axis=-3)


# ---------------------------------------------------------------- isclose, allclose


def _other(a: np.ndarray, dtype: dtypes.DType) -> np.ndarray:
    """``a`` changed by 1 in about half the places (negated, for bool)."""
    change = np.arange(a.size).reshape(a.shape) % 2 == 1
    if dtype.kind == "b":
        return np.where(change, ~a, a)
    return np.where(change, (a.astype(np.complex128 if dtype.kind == "c" else np.float64) + 1)
                    .astype(dtype.numpy_dtype), a)  # fmt: skip


def _np_isclose(a: Any, b: Any, d: dtypes.DType, **kw: Any) -> np.ndarray:
    c = dtypes.complex128 if d.kind == "c" else dtypes.float64
    return np.asarray(np.isclose(to_compute(a, c), to_compute(b, c), **kw))


@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_isclose(dtype: dtypes.DType) -> None:
    cases = Cases()
    for shape in [(), (7,), (0,), (3, 4)]:
        a = sample(dtype, shape, 7)
        b = _other(a, dtype)
        for kw in ({}, {"rtol": 0.25}, {"atol": 2}, {"rtol": 0, "atol": 0}):
            with cases.case(f"{shape} {kw}"):
                want = _np_isclose(a, b, dtype, **kw)
                check(nx.isclose(a, b, **kw), want, dtypes.bool_)
                check(nx.isclose(noncontiguous(a), b, **kw), want, dtypes.bool_)
                check(nx.allclose(a, b, **kw), np.all(want), dtypes.bool_)
                check(nx.all_close(a, a, **kw), True, dtypes.bool_)
    with cases.case("broadcast (3, 1) with (1, 4)"):
        a, b = sample(dtype, (3, 1), 1), sample(dtype, (1, 4), 2)
        check(nx.isclose(a, b), _np_isclose(a, b, dtype), dtypes.bool_)
    if dtype.kind in "fc":
        inf, nan = np.inf, np.nan
        x = np.array([inf, -inf, inf, nan, nan, 1.0, 1.0], dtype.numpy_dtype)
        y = np.array([inf, inf, 1.0, nan, 1.0, nan, inf], dtype.numpy_dtype)
        for equal_nan in (False, True):
            with cases.case(f"infinities and NaN equal_nan={equal_nan}"):
                want = _np_isclose(x, y, dtype, equal_nan=equal_nan)
                check(nx.isclose(x, y, equal_nan=equal_nan), want, dtypes.bool_)
                check(nx.allclose(x[:1], y[:1], equal_nan=equal_nan), True, dtypes.bool_)
                check(nx.allclose(x[3:4], y[3:4], equal_nan=equal_nan), equal_nan, dtypes.bool_)
    cases.finish()


def test_isclose_mixed_operands() -> None:
    cases = Cases()
    with cases.case("int tensor with float tensor"):
        a, b = np.array([1, 2, 3]), np.array([1.0, 2.5, 3.00001], np.float32)
        check(nx.isclose(a, b), np.isclose(a, b), dtypes.bool_)
    with cases.case("tensor with a Python scalar"):
        a = np.array([1.0, 1.001, 2.0])
        check(nx.isclose(a, 1.0, rtol=1e-2), np.isclose(a, 1.0, rtol=1e-2), dtypes.bool_)
        check(nx.isclose(1, a), np.isclose(1, a), dtypes.bool_)
    with cases.case("two Python scalars"):
        check(nx.isclose(1.0, 1.0 + 1e-9), True, dtypes.bool_)
        check(nx.allclose(1.0, 2.0), False, dtypes.bool_)
    with cases.case("relative tolerance follows b, as numpy"):
        check(nx.isclose(10.0, 1.0, rtol=0.95, atol=0), False, dtypes.bool_)
        check(nx.isclose(1.0, 10.0, rtol=0.95, atol=0), True, dtypes.bool_)
    cases.finish()


def test_isclose_errors() -> None:
    with pytest.raises(nx.ShapeError, match=r"^allclose: shapes \(2,\) and \(3,\) cannot be "
                       r"broadcast together"):  # fmt: skip
        nx.allclose(nx.ones(2), nx.ones(3))
    with pytest.raises(nx.ShapeError, match=r"^isclose: shapes \(2,\) and \(3,\)"):
        nx.isclose(nx.ones(2), nx.ones(3))
    with pytest.raises(nx.DTypeError, match=r"^isclose: rtol must be a real Python number, got "
                       r"'1e-5'"):  # fmt: skip
        nx.isclose(nx.ones(2), nx.ones(2), rtol="1e-5")
    with pytest.raises(nx.DTypeError, match=r"^allclose: atol must be a real Python number"):
        nx.allclose(nx.ones(2), nx.ones(2), atol=None)
    with pytest.raises(nx.DTypeError, match=r"^isclose: "):
        nx.isclose(nx.ones(2, dtype=nx.uint64), nx.ones(2, dtype=nx.int64))


# ---------------------------------------------------------------- quotient


def _np_quotient(a: np.ndarray, b: np.ndarray, d: dtypes.DType) -> np.ndarray:
    # truncation toward zero on exact Python-sized ints; division by zero gives 0
    a64, b64 = np.asarray(a).astype(object), np.asarray(b).astype(object)
    q = np.vectorize(lambda u, v: 0 if v == 0 else abs(u) // abs(v) * (1 if (u < 0) == (v < 0)
                                                                      else -1), otypes=[object])(
        a64, b64)  # fmt: skip
    return np.asarray(q).astype(d.numpy_dtype)


@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_quotient(dtype: dtypes.DType) -> None:
    if dtype.kind not in "iu":
        a = sample(dtype, (3, 4), 1)
        with pytest.raises(nx.DTypeError, match=rf"^quotient: integer operands only, got "
                           rf"{dtype.short}\[3\]\[4\]"):  # fmt: skip
            nx.quotient(a, a)
        return
    cases = Cases()
    for sa, sb in [((3, 4), (3, 4)), ((3, 4), (4,)), ((), ()), ((0,), (0,)), ((3, 1), (1, 4))]:
        with cases.case(f"{sa} {sb}"):
            a, b = sample(dtype, sa, 1), sample(dtype, sb, 2)
            want = _np_quotient(a, b, dtype)
            check(nx.quotient(a, b), want, dtype)
            check(nx.quotient(noncontiguous(a), noncontiguous(b)), want, dtype)
    with cases.case("Python int operands"):
        a = sample(dtype, (7,), 3)
        check(nx.quotient(a, 4), _np_quotient(a, np.array(4), dtype), dtype)
        check(nx.quotient(7, nx.tensor(np.array([2, 3, 0], dtype.numpy_dtype))),
              _np_quotient(np.array(7), np.array([2, 3, 0]), dtype), dtype)  # fmt: skip
        if dtype.kind == "i":
            check(nx.quotient(a, -3), _np_quotient(a, np.array(-3), dtype), dtype)
    cases.finish()


def test_quotient_errors() -> None:
    with pytest.raises(nx.DTypeError, match=r"^quotient: integer operands only, got s64\[2\] "
                       r".*, 2.0 \(promoted to float32\)"):  # fmt: skip
        nx.quotient(nx.tensor([1, 2]), 2.0)
    with pytest.raises(nx.DTypeError, match=r"^quotient: integer operands only"):
        nx.quotient(nx.tensor([True]), nx.tensor([True]))
    with pytest.raises(nx.ShapeError, match=r"^quotient: shapes \(2,\) and \(3,\)"):
        nx.quotient(nx.ones(2, dtype=nx.int32), nx.ones(3, dtype=nx.int32))


# ---------------------------------------------------------------- reduce


def _lowest(d: dtypes.DType) -> Any:
    if d.kind == "b":
        return False
    return dtypes.int_range(d)[0] if d.kind in "iu" else -math.inf


def _reductions(d: dtypes.DType) -> list[tuple[str, Any, Any, Callable[..., Any]]]:
    """(name, initial, fn, numpy reference) for dtype ``d``."""
    if d.kind == "b":
        return [("or", False, nx.logical_or, np.any), ("and", True, nx.logical_and, np.all)]
    out = [("add", 0, lambda a, b: a + b, np.sum), ("multiply", 1, lambda a, b: a * b, np.prod)]
    if d.kind != "c":
        out.append(("maximum", _lowest(d), nx.maximum, np.max))
    return out


def _np_reduction(ref: Any, a: np.ndarray, d: dtypes.DType, initial: Any, **kw: Any) -> np.ndarray:
    if d.kind in "iu":
        # wrap-around in x's dtype, as numerix's reduce (modular, so order-independent)
        if ref is np.max:
            return np.max(a, initial=initial, **kw)
        return np.asarray(ref(a, dtype=d.numpy_dtype, **kw))
    if d.kind == "b":
        return np.asarray(ref(a, **kw))
    wide = to_compute(a, d)
    if ref is np.max:
        return np.max(wide, initial=initial, **kw)
    return np.asarray(ref(wide, **kw))


@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_reduce(dtype: dtypes.DType) -> None:
    cases = Cases()
    for shape in SHAPES:
        a = sample(dtype, shape, 4, small=True)
        for name, initial, fn, ref in _reductions(dtype):
            for axis in _axes(len(shape)):
                for keepdims in (False, True):
                    with cases.case(f"{name} {shape} axis={axis} keepdims={keepdims}"):
                        want = _np_reduction(ref, a, dtype, initial, axis=axis, keepdims=keepdims)
                        got = nx.reduce(a, initial, fn, axis=axis, keepdims=keepdims)
                        # sequential sums and products round at every step: scale by the count
                        check(got, want, dtype, scale=4.0 * max(a.size, 1))
            with cases.case(f"{name} {shape} non-contiguous"):
                want = _np_reduction(ref, a, dtype, initial, axis=None)
                check(nx.reduce(noncontiguous(a), initial, fn), want, dtype,
                      scale=4.0 * max(a.size, 1))  # fmt: skip
    cases.finish()


def test_reduce_order_and_errors() -> None:
    # fn sees the slices in index order (row-major over the reduced axes)
    x = nx.tensor(np.arange(6).reshape(2, 3))
    check(nx.reduce(x, 0, lambda acc, v: acc * 10 + v), 12345, nx.int64)
    check(nx.reduce(x, 0, lambda acc, v: acc * 10 + v, axis=(1, 0)), 12345, nx.int64)
    check(nx.reduce(x, 0, lambda acc, v: acc * 10 + v, axis=0), [3, 14, 25], nx.int64)
    check(nx.reduce(x, nx.tensor(7), lambda acc, v: acc + v, axis=1), [10, 19], nx.int64)
    with pytest.raises(nx.DTypeError, match=r"^reduce: initial 0.5 does not fit x's dtype "
                       r"\(s64\[2\]\[3\]"):  # fmt: skip
        nx.reduce(x, 0.5, lambda acc, v: acc + v)
    with pytest.raises(nx.DTypeError, match=r"^reduce: Python int 300 does not fit int8"):
        nx.reduce(nx.ones(2, dtype=nx.int8), 300, lambda acc, v: acc + v)
    with pytest.raises(
        nx.DTypeError, match=r"^reduce: initial f32 \w+\([^)]*\) must have x's dtype"
    ):
        nx.reduce(x, nx.tensor(0.0), lambda acc, v: acc + v)
    with pytest.raises(nx.ShapeError, match=r"^reduce: initial must be a Python scalar or a 0-d "
                       r"tensor, got s64\[2\]"):  # fmt: skip
        nx.reduce(x, nx.tensor([0, 0]), lambda acc, v: acc + v)
    with pytest.raises(nx.ShapeError, match=r"^reduce: fn\(acc, x\) must return a tensor like "
                       r"acc \(s64\[3\]"):  # fmt: skip
        nx.reduce(x, 0, lambda acc, v: acc + 0.5, axis=0)
    with pytest.raises(nx.DTypeError, match=r"^reduce: fn must return a Tensor, got int"):
        nx.reduce(x, 0, lambda acc, v: 1)
    with pytest.raises(nx.ShapeError, match=r"^reduce: axis 2 is out of range"):
        nx.reduce(x, 0, lambda acc, v: acc + v, axis=2)


# ---------------------------------------------------------------- window_reduce

WINDOWS: list[tuple[tuple[int, ...], tuple[int, ...], Any, Any, Any]] = [
    ((5,), (2,), None, "valid", None), ((7,), (3,), 2, "same", None),
    ((6,), (2,), 1, [(1, 2)], 2), ((4, 5), (2, 3), (2, 1), "same", None),
    ((3, 4), (3, 1), 1, "valid", (1, 2)), ((2, 3, 4), (1, 2, 2), (1, 1, 2), "valid", None),
    ((3,), (4,), None, "valid", None), ((0, 3), (1, 2), None, "valid", None),
]  # fmt: skip


@pytest.mark.parametrize("dtype", [d for d in ALL if d.kind != "b"], ids=ids)
def test_window_reduce(dtype: dtypes.DType) -> None:
    cases = Cases()
    for shape, win, strides, padding, dil in WINDOWS:
        a = sample(dtype, shape, 6, small=True)
        kw = {"strides": strides, "padding": padding, "window_dilations": dil}
        with cases.case(f"sum {shape} {win} {kw}"):
            want = nx.window_sum(a, win, **kw).to_numpy()
            check(nx.window_reduce(a, 0, win, nx.add, **kw), want, dtype,
                  scale=4.0 * math.prod(win))  # fmt: skip
        if dtype.kind != "c":
            with cases.case(f"max {shape} {win} {kw}"):
                want = nx.window_max(a, win, **kw).to_numpy()
                check(nx.window_reduce(a, _lowest(dtype), win, nx.maximum, **kw), want, dtype)
                check(nx.window_reduce(noncontiguous(a), _lowest(dtype), win, nx.maximum, **kw),
                      want, dtype)  # fmt: skip
    cases.finish()


def test_window_reduce_errors() -> None:
    x = nx.tensor([1.0, 2.0, 3.0])
    with pytest.raises(nx.ShapeError, match=r"^window_reduce: window_shape \(2, 2\) has 2 "
                       r"entries; it needs 1"):  # fmt: skip
        nx.window_reduce(x, 0.0, (2, 2), nx.add)
    with pytest.raises(nx.ArgumentError, match=r"^window_reduce: padding must be 'valid', "
                       r"'same'"):  # fmt: skip
        nx.window_reduce(x, 0.0, (2,), nx.add, padding="full")
    with pytest.raises(nx.DTypeError, match=r"^window_reduce: initial 1j does not fit"):
        nx.window_reduce(x, 1j, (2,), nx.add)
    with pytest.raises(nx.ShapeError, match=r"^window_reduce: fn\(acc, x\) must return"):
        nx.window_reduce(x, 0.0, (2,), lambda acc, v: nx.sum(v))


# ---------------------------------------------------------------- to_batched


@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_to_batched(dtype: dtypes.DType) -> None:
    cases = Cases()
    for shape in [(5, 3), (6,), (1, 2), (0, 2)]:
        a = sample(dtype, shape, 5)
        n = shape[0]
        for size in (1, 2, 3, 5, 7):
            for leftover in ("repeat", "discard"):
                with cases.case(f"{shape} batch_size={size} {leftover}"):
                    count = -(-n // size) if leftover == "repeat" else n // size
                    got = list(nx.to_batched(a, size, leftover=leftover))
                    assert len(got) == count, f"{len(got)} batches, expected {count}"
                    for b, t in enumerate(got):
                        idx = np.arange(b * size, (b + 1) * size) % n
                        check(t, a[idx], dtype)
    cases.finish()


def test_to_batched_errors() -> None:
    x = nx.arange(5)
    with pytest.raises(nx.ArgumentError, match=r"^to_batched: batch_size must be a positive "
                       r"int, got 0"):  # fmt: skip
        nx.to_batched(x, 0)
    with pytest.raises(nx.ArgumentError, match=r"^to_batched: batch_size must be a positive int"):
        nx.to_batched(x, 2.0)  # type: ignore[arg-type]
    with pytest.raises(nx.ArgumentError, match=r"^to_batched: leftover must be 'repeat' or "
                       r"'discard', got 'pad'"):  # fmt: skip
        nx.to_batched(x, 2, leftover="pad")
    with pytest.raises(nx.ShapeError, match=r"^to_batched: x must have at least 1 dimension to "
                       r"batch along, got s64 "):  # fmt: skip
        nx.to_batched(nx.tensor(3), 1)
