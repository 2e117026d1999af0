"""numerix.vjp through the rules of conv, the window ops, sort, the cumulative ops,
gather/scatter, fft and the linear-algebra blocks against jax.vjp, on the xla backend,
eagerly and under the xla compiler: the same cotangents, complex conventions included
(a rule is the transpose of the derivative, no conjugation).

The ops that read one triangle of a matrix (cholesky, eigh) are compared on a
symmetrised argument, where numerix and JAX define the same function (decision 22)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import numerix as nx

RNG = np.random.default_rng(5)


def _r(*shape: int) -> np.ndarray:
    return RNG.uniform(-2.0, 2.0, shape)


def _c(*shape: int) -> np.ndarray:
    return RNG.uniform(-2.0, 2.0, shape) + 1j * RNG.uniform(-2.0, 2.0, shape)


def _hpd(n: int, kind: str) -> np.ndarray:
    a = _c(n, n) if kind == "c" else _r(n, n)
    return a @ np.conj(a.T) + n * np.eye(n)


def _pool(x: Any) -> Any:
    return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "SAME")


def _herm_nx(x: Any) -> Any:
    return (x + nx.conj(nx.matrix_transpose(x))) / 2


def _herm_jax(x: Any) -> Any:
    return (x + jnp.conj(jnp.swapaxes(x, -1, -2))) / 2


_IDX = np.array([[2], [0], [2]])

# name: (numerix function, jax function, arguments)
CASES: dict[str, tuple[Callable[..., Any], Callable[..., Any], list[np.ndarray]]] = {
    "conv-groups-dilations": (
        lambda x, k: nx.conv(x, k, strides=(2, 1), padding="same", kernel_dilation=(1, 2),
                             feature_group_count=2),
        lambda x, k: jax.lax.conv_general_dilated(x, k, (2, 1), "SAME", rhs_dilation=(1, 2),
                                                  feature_group_count=2),
        [_r(2, 4, 5, 6), _r(4, 2, 3, 2)],
    ),
    "conv-complex-input-dilation": (
        lambda x, k: nx.conv(x, k, padding=[(1, 0)], input_dilation=2),
        lambda x, k: jax.lax.conv_general_dilated(x, k, (1,), [(1, 0)], lhs_dilation=(2,)),
        [_c(1, 2, 4), _c(3, 2, 2)],
    ),
    "max-pool": (
        lambda x: nx.window_max(x, (1, 1, 2, 2), strides=(1, 1, 2, 2), padding="same"),
        _pool,
        [_r(2, 3, 5, 4)],
    ),
    "window-sum": (
        lambda x: nx.window_sum(x, (2, 3), strides=(1, 2), window_dilations=(2, 1)),
        lambda x: jax.lax.reduce_window(x, 0.0, jax.lax.add, (2, 3), (1, 2), "VALID",
                                        window_dilation=(2, 1)),
        [_r(5, 7)],
    ),
    "sort-descending": (
        lambda x: nx.sort(x, axis=0, descending=True),
        lambda x: -jnp.sort(-x, axis=0),
        [_r(4, 3)],
    ),
    "top-k": (lambda x: nx.top_k(x, 2)[0], lambda x: jax.lax.top_k(x, 2)[0], [_r(3, 5)]),
    "cumsum-reverse-complex": (
        lambda x: nx.cumulative_sum(x, axis=1, reverse=True),
        lambda x: jax.lax.cumsum(x, axis=1, reverse=True),
        [_c(2, 4)],
    ),
    "cumprod-with-zero": (
        lambda x: nx.cumulative_prod(x),
        lambda x: jnp.cumprod(x),
        [np.array([1.5, -0.5, 0.0, 2.0, 0.75])],
    ),
    "cummax": (lambda x: nx.cumulative_max(x), lambda x: jax.lax.cummax(x), [_r(6)]),
    "gather": (
        lambda x: nx.take(x, np.array([2, 0, 2]), axis=1),
        lambda x: jnp.take(x, np.array([2, 0, 2]), axis=1),
        [_r(2, 3)],
    ),
    "indexed-add": (
        lambda x, u: nx.indexed_add(x, _IDX, u),
        lambda x, u: x.at[_IDX[:, 0]].add(u),
        [_r(3, 2), _r(3, 2)],
    ),
    "fft-padded-complex": (
        lambda x: nx.fft.fft(x, n=6),
        lambda x: jnp.fft.fft(x, n=6),
        [_c(2, 4)],
    ),
    "ifft-truncated": (lambda x: nx.ifft(x, n=3), lambda x: jnp.fft.ifft(x, n=3), [_c(5)]),
    "solve-complex": (
        lambda a, b: nx.solve(a, b),
        lambda a, b: jnp.linalg.solve(a, b),
        [_c(3, 3) + 4 * np.eye(3), _c(3, 2)],
    ),
    "inv": (lambda x: nx.inv(x), lambda x: jnp.linalg.inv(x), [_r(3, 3) + 4 * np.eye(3)]),
    "det-complex": (lambda x: nx.det(x), lambda x: jnp.linalg.det(x), [_c(2, 3, 3)]),
    "triangular-solve-adjoint": (
        lambda a, b: nx.triangular_solve(a, b, lower=False, transform_a="adjoint"),
        lambda a, b: jax.lax.linalg.triangular_solve(
            jnp.triu(a), b, left_side=True, lower=False, conjugate_a=True, transpose_a=True
        ),
        [_c(3, 3) + 4 * np.eye(3), _c(3, 2)],
    ),
    "cholesky-complex": (
        lambda x: nx.cholesky(_herm_nx(x)),
        lambda x: jnp.linalg.cholesky(_herm_jax(x)),
        [_hpd(3, "c")],
    ),
    "eigh": (
        lambda x: nx.eigh(_herm_nx(x)),
        lambda x: tuple(jnp.linalg.eigh(_herm_jax(x))),
        [_hpd(3, "f")],
    ),
    "qr": (lambda x: nx.qr(x), lambda x: tuple(jnp.linalg.qr(x)), [_r(4, 3)]),
    "svd-complex": (
        lambda x: nx.svd(x, full_matrices=False),
        lambda x: tuple(jnp.linalg.svd(x, full_matrices=False)),
        [_c(3, 2)],
    ),
}  # fmt: skip


def _numpy(t: Any) -> Any:
    return tuple(_numpy(x) for x in t) if isinstance(t, (tuple, list)) else t.to_numpy()


@pytest.mark.parametrize("compiler", [None, "xla"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_vjp_equals_jax_vjp(name: str, compiler: str | None) -> None:
    ours, theirs, args = CASES[name]
    j_out, j_vjp = jax.vjp(theirs, *[jnp.asarray(a) for a in args])
    leaves, tree = jax.tree_util.tree_flatten(j_out)
    cots = [
        (RNG.standard_normal(x.shape) + (1j * RNG.standard_normal(x.shape) if x.dtype.kind == "c"
                                         else 0)).astype(x.dtype)
        for x in leaves
    ]  # fmt: skip
    want = j_vjp(jax.tree_util.tree_unflatten(tree, [jnp.asarray(c) for c in cots]))
    nx_cot = jax.tree_util.tree_unflatten(tree, [nx.tensor(c, backend="xla") for c in cots])
    if isinstance(nx_cot, list):
        nx_cot = tuple(nx_cot)

    def pullback(*xs: Any) -> Any:
        return nx.vjp(ours, *xs)[1](nx_cot)

    run = pullback if compiler is None else nx.jit(pullback, compiler=compiler)
    got = run(*[nx.tensor(a, backend="xla") for a in args])
    assert len(got) == len(want)
    for g, w, a in zip(got, want, args):
        assert g.shape == a.shape and g.dtype.numpy_dtype == a.dtype, (g.describe(), a.dtype)
        np.testing.assert_allclose(_numpy(g), np.asarray(w), rtol=1e-9, atol=1e-10)
