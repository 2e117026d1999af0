"""The defn op-case table: every public op of the core as a traced function and its
arguments, shared by the core's defn tests and each compiler package's tests.

``OPS`` holds ``pytest.param(fn, args, id=name)`` entries; the arguments are tensors of the
default backend at import time (move them to a compiler's backend before calling).
``same`` compares two trees of tensors exactly (dtype, shape, backend, values).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import optree
import pytest

import numerix as nx
from numerix.testing.oracle import sample

__all__ = ["OPS", "B", "F", "S", "branchy", "check_no_outputs", "same", "spd", "t"]

# ---------------------------------------------------------------- helpers


def t(dtype: Any = nx.float32, shape: tuple[int, ...] = (3, 4), seed: int = 0, **kw: Any) -> Any:
    return nx.tensor(sample(dtype, shape, seed, **kw), dtype=dtype)


def spd(n: int = 3) -> Any:
    a = sample(nx.float32, (n, n), 1)
    return nx.tensor(a @ a.T + n * np.eye(n, dtype=np.float32))


def same(got: Any, want: Any) -> None:
    """Equal trees of tensors: exact dtype, shape and values (the same kernels ran)."""
    gl, gt = optree.tree_flatten(got)
    wl, wt = optree.tree_flatten(want)
    assert gt == wt
    for g, w in zip(gl, wl):
        assert type(g) is nx.Tensor and type(w) is nx.Tensor
        assert g.dtype is w.dtype, (g.describe(), w.describe())
        assert g.shape == w.shape, (g.describe(), w.describe())
        assert g.backend is w.backend
        np.testing.assert_array_equal(
            np.asarray(g.to_numpy(), dtype=np.float64 if g.dtype is nx.bfloat16 else None),
            np.asarray(w.to_numpy(), dtype=np.float64 if w.dtype is nx.bfloat16 else None),
        )


def branchy(x: Any, n: Any) -> Any:
    """cond, while_loop and fori_loop in one function (the compilers' control-flow case)."""
    y = nx.cond(nx.sum(x) > 0, lambda a, b: a * b, lambda a, b: a - b, x, 2.0)
    init = (nx.tensor(0), nx.zeros_like(x))
    s = nx.while_loop(lambda s: s[0] < n, lambda s: (s[0] + 1, s[1] + x), init)
    f = nx.fori_loop(1, n, lambda i, acc: acc * i, nx.ones_like(x))
    return y, s, f


def check_no_outputs(x: Any, compiler: str | None = None, **options: Any) -> None:
    """jit of functions that return no tensor (None, an empty tuple, dict or list, nested
    empties) returns what the function returned, as ``jax.jit`` does, on the first
    (compiling) call and on cached ones; a hook inside still runs on every call, with
    the values the program computed (``x`` + 1)."""
    seen: list[Any] = []

    def record(v: Any) -> None:
        seen.append((v.shape, v.dtype, v.to_numpy().copy()))

    def only_hook(a: Any) -> None:
        nx.hook(a + 1, record)

    want = x.to_numpy() + np.asarray(1, dtype=x.dtype.numpy_dtype)
    cases: list[tuple[Callable[..., Any], Any]] = [
        (lambda a: None, None), (lambda a: (), ()), (lambda a: {}, {}), (lambda a: [], []),
        (lambda a: ((), {"k": []}, None), ((), {"k": []}, None)), (only_hook, None),
    ]  # fmt: skip
    for fn, expected in cases:
        f = nx.jit(fn, compiler=compiler, **options)
        for _ in range(3):  # the first call compiles; the others run the cached program
            got = f(x)
            assert type(got) is type(expected) and got == expected, (fn, got)
        g = nx.compile(fn, nx.template(x.shape, x.dtype), compiler=compiler, **options)
        got = g(x)
        assert type(got) is type(expected) and got == expected, (fn, got)
    assert len(seen) == 4
    for shape, dtype, values in seen:
        assert shape == x.shape and dtype is x.dtype
        np.testing.assert_array_equal(values, want)
    assert nx.jit(lambda: None, compiler=compiler, **options)() is None


# ---------------------------------------------------------------- every public op, traced
F, S, B = nx.float32, nx.int32, nx.bool_


def _c(name: str, fn: Callable[..., Any], *args: Any) -> Any:
    return pytest.param(fn, args, id=name)


# fmt: off
OPS = [
    # element-wise
    *[_c(n, getattr(nx, n), t(F), t(F, seed=1)) for n in (
        "add", "subtract", "multiply", "divide", "maximum", "minimum", "atan2", "pow",
        "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    )],
    *[_c(n, getattr(nx, n), t(S), t(S, seed=1, nonzero=True)) for n in (
        "floor_divide", "remainder", "bitwise_and", "bitwise_or", "bitwise_xor", "quotient",
    )],
    _c("shifts", lambda a: (nx.bitwise_left_shift(a, 2), nx.bitwise_right_shift(a, 1)), t(S)),
    *[_c(n, getattr(nx, n), t(F, positive=True)) for n in (
        "negative", "positive", "abs", "sign", "floor", "ceil", "round", "trunc", "exp", "log",
        "sqrt", "square", "reciprocal", "tanh", "sigmoid", "expm1", "log1p", "rsqrt", "cbrt",
        "sin", "cos", "tan", "sinh", "cosh", "asinh", "atan", "isnan", "isinf", "isfinite",
        "erf", "erfc", "real", "conj",
    )],
    _c("asin_acos_atanh_erfinv", lambda a: (nx.asin(a / 10), nx.acos(a / 10), nx.atanh(a / 10),
                                            nx.erf_inv(a / 10)), t(F)),
    _c("acosh", lambda a: nx.acosh(a + 1), t(F, positive=True)),
    _c("logical", lambda a, b: (nx.logical_and(a, b), nx.logical_or(a, b),
                                nx.logical_xor(a, b), nx.logical_not(a)), t(B), t(B, seed=1)),
    _c("bitwise_not", lambda a: (nx.bitwise_invert(a), nx.bitwise_not(a), nx.population_count(a),
                                 nx.count_leading_zeros(a)), t(S)),
    _c("where", lambda c, a, b: nx.where(c, a, b), t(B), t(F), t(F, seed=2)),
    _c("clip", lambda a: nx.clip(a, -1.0, 2.0), t(F)),
    _c("astype", lambda a: (a.astype(nx.int16), a.astype(nx.bfloat16), a.astype(nx.float64)), t(F)),
    _c("bitcast", lambda a: nx.bitcast(a, nx.int32), t(F)),
    _c("scalars_weak", lambda a: a * 2 + 1.5 - a / 3, t(nx.float16)),
    _c("complex", lambda a: (nx.real(a), nx.imag(a), nx.conj(a), nx.abs(a)), t(nx.complex64)),
    # reductions
    *[_c(n, lambda a, n=n: (getattr(nx, n)(a), getattr(nx, n)(a, axis=1, keepdims=True)), t(F))
      for n in ("sum", "prod", "mean", "var", "std", "max", "min", "argmax", "argmin")],
    _c("all_any", lambda a: (nx.all(a, axis=0), nx.any(a)), t(B)),
    # linalg
    _c("matmul", lambda a, b: (a @ b.T, nx.dot(a, b.T), nx.tensordot(a, b, axes=2),
                               nx.vecdot(a, b), nx.outer(a[0], b[1])), t(F), t(F, seed=1)),
    _c("dot_general", lambda a, b: nx.dot_general(a, b, ((1,), (1,))), t(F), t(F, seed=1)),
    _c("einsum", lambda a, b: (nx.einsum("ij,kj->ik", a, b), nx.einsum("ii->i", a[:, :3]),
                               nx.einsum("...j,...j", a, b)), t(F), t(F, seed=1)),
    _c("cholesky", lambda a: nx.cholesky(a), spd()),
    _c("solve_inv_det", lambda a, b: (nx.solve(a, b), nx.inv(a), nx.det(a)), spd(), t(F, (3, 2))),
    _c("triangular_solve", lambda a, b: nx.triangular_solve(a, b), spd(), t(F, (3, 2))),
    _c("lu_qr", lambda a: (nx.lu(a), nx.qr(a)), spd()),
    _c("eigh_svd", lambda a: (nx.eigh(a), nx.svd(a)), spd()),
    # shape
    _c("shape_ops", lambda a: (a.reshape(4, 3), nx.transpose(a), nx.permute_dims(a, (1, 0)),
                               nx.matrix_transpose(a), nx.broadcast_to(a, (2, 3, 4)),
                               nx.expand_dims(a, 0), nx.squeeze(nx.expand_dims(a, 0), 0),
                               nx.flip(a, axis=1), nx.ravel(a), nx.tile(a, (2, 1)),
                               nx.repeat(a, 2, axis=0), nx.moveaxis(a, 0, 1),
                               nx.swapaxes(a, 0, 1), nx.roll(a, 1, axis=1)), t(F)),
    _c("join", lambda a, b: (nx.concatenate([a, b]), nx.concat([a, b], axis=1), nx.stack([a, b]),
                             nx.broadcast_arrays(a, b[0])), t(F), t(F, seed=1)),
    _c("pad", lambda a: (nx.pad(a, 1), nx.pad_general(a, [(1, 0, 1), (0, 2, 0)], value=5.0)), t(F)),
    _c("split", lambda a: (nx.split(a, 2, axis=1), nx.array_split(a, 3)), t(F)),
    # indexing
    _c("getitem", lambda a: (a[1], a[:, 1:3], a[::-1, ::2], a[None, 0, ...]), t(F)),
    _c("take_along_axis", lambda a, i: nx.take_along_axis(a, i, axis=1), t(F),
       nx.tensor([[0, 1], [2, 3], [3, 0]])),
    _c("dynamic_slice", lambda a, s: (nx.dynamic_slice(a, [s, 1], [2, 2]),
                                      nx.put_slice(a, [s, 0], nx.ones((1, 4)))), t(F), nx.tensor(1)),
    _c("indexed", lambda a, i, u: (nx.indexed_add(a, i, u), nx.indexed_put(a, i, u)), t(F),
       nx.tensor([[0, 1], [2, 3]]), t(F, (2,))),
    # window, conv
    _c("window", lambda a: (nx.window_sum(a, (2, 2)), nx.window_max(a, (2, 2), strides=(1, 2)),
                            nx.window_min(a, (1, 2)), nx.window_prod(a, (2, 1)),
                            nx.window_mean(a, (2, 2), padding="same")), t(F)),
    _c("window_scatter", lambda a, s: (nx.window_scatter_max(a, s, 0.0, (2, 2), strides=(2, 2)),
                                       nx.window_scatter_min(a, s, 0.0, (2, 2), strides=(2, 2))),
       t(F, (4, 4)), t(F, (2, 2), seed=1)),
    _c("conv", lambda x, k: (nx.conv(x, k), nx.conv(x, k, strides=2, padding="same")),
       t(F, (1, 2, 6)), t(F, (3, 2, 2), seed=1)),
    # sort, cumulative
    _c("sort", lambda a: (nx.sort(a, axis=1), nx.argsort(a, axis=0, descending=True),
                          nx.top_k(a, 2), nx.cumsum(a, axis=1), nx.cumprod(a, axis=0),
                          nx.cumulative_max(a, axis=1), nx.cumulative_min(a, axis=0)), t(F)),
    # fft
    _c("fft", lambda a: (nx.fft.fft(a), nx.ifft(nx.fft.fft(a, n=8))), t(F)),
    # composites
    _c("composites", lambda a: (nx.logsumexp(a, axis=1), nx.logaddexp(a, a[0] * 3.0),
                                nx.softmax(a), nx.log_softmax(a, axis=0),
                                nx.vector_norm(a), nx.matrix_norm(a), nx.norm(a), nx.diag(a[0]),
                                nx.diagonal(a), nx.tril(a), nx.triu(a, k=1),
                                nx.isclose(a, a + 1e-9), nx.allclose(a, a)), t(F)),
    _c("activations", lambda a: (nx.relu(a), nx.gelu(a), nx.gelu(a, approximate=True),
                                 nx.silu(a), nx.softplus(a), nx.nn.sigmoid(a)), t(F)),
    _c("one_hot", lambda i: nx.one_hot(i, 4), nx.tensor([0, 3, 1])),
    _c("reduce", lambda a: (nx.reduce(a, 0.0, lambda x, y: x + y * y, axis=1),
                            nx.window_reduce(a, -np.inf, (2, 2), nx.maximum, strides=2)),
       t(F, (4, 6))),
    _c("meshgrid_batched", lambda a, b: (nx.meshgrid(a, b), list(nx.to_batched(a, 2))),
       t(F, (4,)), t(F, (3,), seed=1)),
    # creation inside a trace (constants and parameters mixed)
    _c("creation", lambda a: (a + nx.zeros_like(a), nx.ones((3, 4)) * a, nx.full_like(a, 2.0) + a,
                              a * nx.arange(4), nx.iota((3, 4), axis=1) + a,
                              nx.eye(3, 4) - a, nx.linspace(0.0, 1.0, 4) * a), t(F)),
]
# fmt: on
