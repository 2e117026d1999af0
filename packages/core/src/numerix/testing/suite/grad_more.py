"""Derivative rules of the indexing, window, conv, sort, cumulative and fft primitives
and of the linear-algebra and top_k blocks, against central finite differences.

Each case calls a public op. Its trace names the primitive (or block) the op binds and
the parameters it passes; the rule then runs eagerly on the backend under test, with
the op's own output and a random cotangent ``c``, and must satisfy

    Re <c, (f(x + eps v) - f(x - eps v)) / 2 eps>  ==  Re sum_i <rule_i(c), v_i>

for a random direction ``v``, the difference quotient taken on ``binary`` in float64
(``<a, b> = sum(a * b)``, bilinear: a rule is the transpose of the derivative, with no
conjugation, as ``jax.vjp``). Every cotangent must have its input's shape and dtype.
Backends without float64 run the rules in float32 (complex64) with a looser tolerance.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import pytest

import numerix as nx
from _numerix_pytestplugin import NOT_CLAIMED
from numerix import dtypes
from numerix.defn.expr import BLOCK, CONSTANT, ELEM, PARAMETER, TENSOR, Graph, Node
from numerix.ops._core import bind, new_out, run_block
from numerix.primitives import BLOCKS, REGISTRY
from numerix.primitives._registry import NONDIFFERENTIABLE

EPS = 1e-5

Case = tuple[str, Callable[..., Any], Sequence[np.ndarray]]


def _wide(kind: str) -> dtypes.DType:
    """The widest dtype of ``kind`` ('f' or 'c') the backend under test holds."""
    claimed = type(nx.get_default_backend()).supported_dtypes
    wide, narrow = (
        (dtypes.float64, dtypes.float32) if kind == "f" else (dtypes.complex128, dtypes.complex64)
    )
    return wide if claimed is None or wide in claimed else narrow


def _t(a: Any, dtype: dtypes.DType) -> nx.Tensor:
    # rounded on the host first: a backend without 64-bit dtypes never sees float64
    return nx.tensor(np.asarray(a).astype(dtype.numpy_dtype), dtype=dtype)


@contextlib.contextmanager
def _claimed(request: pytest.FixtureRequest) -> Iterator[None]:
    """A backend that holds no int64 cannot run the rules, which index with int64 (the
    contract's index dtype): their tests are not claimed there."""
    try:
        yield
    except nx.UnsupportedDTypeError as e:
        backend = nx.get_default_backend()
        claimed = type(backend).supported_dtypes
        if claimed is None or dtypes.int64 in claimed:
            raise
        request.node.user_properties.append(("numerix", NOT_CLAIMED))
        pytest.skip(f"{NOT_CLAIMED}: backend {backend!r} does not claim int64 ({e})")


def _randn(rng: np.random.Generator, shape: tuple[int, ...], kind: str) -> np.ndarray:
    r = rng.standard_normal(shape)
    return r + 1j * rng.standard_normal(shape) if kind == "c" else r


def _widen(d: dtypes.DType) -> dtypes.DType:
    return {"f": dtypes.float64, "c": dtypes.complex128}.get(d.kind, d)


def _target(graph: Graph, name: str) -> Node:
    hits = [n for n in graph.nodes if n.op == name or (n.op == BLOCK and n.value.name == name)]
    assert len(hits) == 1, f"the case must bind {name} once:\n{graph.listing()}"
    return hits[0]


def _run(node: Node, inputs: Sequence[nx.Tensor], backend: Any, widen: bool = False) -> Any:
    """``node`` (a primitive or a block) run eagerly on ``inputs`` (on ``backend``)."""
    dt = _widen if widen else (lambda d: d)
    if node.op == BLOCK:
        if node.types is None:
            out: Any = new_out(node.shape, dt(node.dtype), backend)
        else:
            out = tuple(new_out(s, dt(d), backend) for s, d in node.types)
        return run_block(node.value, out, node.fallback_fn, *inputs, **node.params)
    return bind(REGISTRY[node.op], new_out(node.shape, dt(node.dtype), backend), *inputs,
                **node.params)  # fmt: skip


def _inputs(graph: Graph, target: Node, args: Sequence[nx.Tensor]) -> list[nx.Tensor]:
    """The values ``target``'s inputs take when ``args`` are passed: the graph evaluated
    eagerly, node by node, up to ``target``."""
    backend = nx.get_default_backend()
    env: dict[int, Any] = {p.id: a for p, a in zip(graph.parameters, args)}
    for n in graph.nodes:
        if n is target:
            break
        if n.op in (CONSTANT, TENSOR):
            env[n.id] = nx.tensor(n.value.to_numpy(), dtype=n.value.dtype)
        elif n.op == ELEM:
            env[n.id] = env[n.inputs[0].id][n.params["index"]]
        elif n.op != PARAMETER:
            env[n.id] = _run(n, [env[i.id] for i in n.inputs], backend)
    return [env[i.id] for i in target.inputs]


Gauge = Callable[[list[np.ndarray], list[np.ndarray]], list[np.ndarray]]


def check_vjp(
    name: str, fn: Callable[..., Any], xs: Sequence[np.ndarray], seed: int = 0,
    gauge: Gauge | None = None,
) -> None:  # fmt: skip
    """Check the rule of primitive or block ``name``, bound once by ``fn`` called on
    ``xs`` (float64 or complex128 arrays), at the inputs it gets there. ``gauge(outs,
    ref)`` turns the outputs of a factorisation unique only up to signs or phases into
    the ones continuing ``ref``, the backend's (as numpy arrays)."""
    target = REGISTRY[name] if name in REGISTRY else BLOCKS[name]
    rule = target.vjp
    assert callable(rule) and rule is not NONDIFFERENTIABLE, f"{name} has no derivative rule"
    dts = [_wide(x.dtype.kind) for x in xs]
    narrow = any(d in (dtypes.float32, dtypes.complex64) for d in dts)
    args = [_t(x, d) for x, d in zip(xs, dts)]
    graph = nx.trace(fn, *args)
    node = _target(graph, name)
    inputs = _inputs(graph, node, args)
    out = _run(node, inputs, nx.get_default_backend())
    outs = out if isinstance(out, tuple) else (out,)

    rng = np.random.default_rng(seed)
    vs = [_randn(rng, t.shape, t.dtype.kind) if t.dtype.kind in "fc" else None for t in inputs]
    cs = [_randn(rng, o.shape, o.dtype.kind) if o.dtype.kind in "fc" else None for o in outs]
    cots = tuple(None if c is None else _t(c, o.dtype) for c, o in zip(cs, outs))
    if isinstance(out, tuple):
        got = rule(nx.ops, cots, outs, *inputs, **node.params)
    else:
        got = rule(nx.ops, cots[0], out, *inputs, **node.params)

    assert isinstance(got, tuple) and len(got) == len(inputs), (
        f"{name}: the rule must return one cotangent per input ({len(inputs)}), got {got!r}"
    )
    rhs = scale = 0.0
    for g, t, v in zip(got, inputs, vs):
        if g is None:
            continue
        assert v is not None, f"{name}: a cotangent for the integer input {t.describe()}"
        assert isinstance(g, nx.Tensor), f"{name}: a cotangent is a {type(g).__name__}"
        assert g.shape == t.shape and g.dtype is t.dtype, (
            f"{name}: cotangent {g.describe()} for input {t.describe()}"
        )
        gv = g.to_numpy().astype(np.complex128) * v
        rhs += float(np.sum(gv).real)
        scale += float(np.sum(np.abs(gv)))

    # the difference quotient on binary in float64, at the inputs rounded as the backend has them
    binary = nx.configuration.resolve_backend("binary")
    wide = [t.to_numpy().astype(_widen(t.dtype).numpy_dtype) for t in inputs]

    ref = [o.to_numpy() for o in outs]

    def at(sign: float) -> list[np.ndarray]:
        moved = [w if v is None else w + sign * EPS * v for w, v in zip(wide, vs)]
        r = _run(node, [nx.tensor(m, backend=binary) for m in moved], binary, widen=True)
        got = [t.to_numpy() for t in (r if isinstance(r, tuple) else (r,))]
        return got if gauge is None else gauge(got, ref)

    lhs = 0.0
    for c, p, m in zip(cs, at(1.0), at(-1.0)):
        if c is None:
            continue
        cd = c * (p.astype(np.complex128) - m) / (2 * EPS)
        lhs += float(np.sum(cd).real)
        scale += float(np.sum(np.abs(cd)))
    rtol = 2e-4 if narrow else 1e-6
    assert abs(lhs - rhs) <= rtol * scale + 1e-9, (
        f"{name}: <c, J v> by finite differences {lhs!r}, by the rule {rhs!r} "
        f"(scale {scale:.3g}) on {nx.get_default_backend()!r}"
    )


def _ids(cases: Sequence[Case]) -> list[str]:
    return [c[0] for c in cases]


def _r(*shape: int, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-2.0, 2.0, shape)


def _c(*shape: int, seed: int = 1) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.uniform(-2.0, 2.0, shape) + 1j * rng.uniform(-2.0, 2.0, shape)


# ---------------------------------------------------------------- indexing

_I = np.array([[2], [0], [2], [1]])  # a repeated row: duplicates add / the last wins

INDEXING: list[Case] = [
    ("gather-take", lambda x: nx.take(x, np.array([2, 0, 2]), axis=1), [_r(2, 3)]),
    ("gather-2d-index", lambda x: x[np.array([[0, 1], [1, 1]])], [_r(2, 3)]),
    ("gather-along-axis", lambda x: nx.take_along_axis(x, np.array([[1, 0, 1]]), axis=0),
     [_r(2, 3)]),
    ("take-size1", lambda x: nx.take(x, np.array([0]), axis=0), [_r(1)]),
    ("take-empty", lambda x: nx.take(x, np.zeros(0, np.int64), axis=0), [_r(3, 2)]),
    ("take-2d-negative", lambda x: x[nx.tensor([[2, -1], [0, 2]])], [_r(3, 2, 2)]),
    ("take-0d", lambda x: nx.take(x, nx.tensor(-2), axis=0), [_r(3)]),
    ("take-complex", lambda x: nx.take(x, np.array([1, 1, 0])), [_c(2, 2)]),
    ("gather-complex", lambda x: x[np.array([1, 1]), np.array([0, 2])], [_c(2, 3)]),
    ("indexed_add", lambda x, u: nx.indexed_add(x, _I, u), [_r(3, 2), _r(4, 2, seed=2)]),
    ("indexed_add-axis1", lambda x, u: nx.indexed_add(x, _I[:2] - 1, u, axes=[1]),
     [_r(2, 2), _r(2, 2, seed=2)]),
    ("indexed_put", lambda x, u: nx.indexed_put(x, _I, u), [_r(3, 2), _r(4, 2, seed=2)]),
    ("indexed_put-empty", lambda x, u: nx.indexed_put(x, _I[:0], u),
     [_r(3, 2), _r(0, 2, seed=2)]),
    ("indexed_put-complex", lambda x, u: nx.indexed_put(x, _I, u),
     [_c(3), _c(4, seed=2)]),
]  # fmt: skip


@pytest.mark.parametrize("case", INDEXING, ids=_ids(INDEXING))
def test_grad_more_indexing(case: Case, request: pytest.FixtureRequest) -> None:
    name, fn, xs = case
    with _claimed(request):
        check_vjp(name.split("-")[0], fn, xs)


# ---------------------------------------------------------------- window

_Z = np.array([1.5, -0.5, 0.0, 2.0, -1.25, 0.75])  # a zero: products of the others

#: the primitive each op of a case's label binds, where the names differ: one primitive
#: per family, the op's name giving its kind
_BINDS = {
    **{f"window_{k}": "window_reduce" for k in ("sum", "prod", "max", "min")},
    **{f"window_scatter_{k}": "window_scatter" for k in ("max", "min")},
    **{f"cumulative_{k}": "cumulative" for k in ("sum", "prod", "max", "min")},
}


def _primitive(label: str) -> str:
    op = label.split("-")[0]
    return _BINDS.get(op, op)


WINDOW: list[Case] = [
    ("window_sum-strided-same", lambda x: nx.window_sum(x, (3,), strides=2, padding="same"),
     [_r(7)]),
    ("window_sum-dilated", lambda x: nx.window_sum(
        x, (2, 2), strides=(1, 2), padding=[(1, 0), (2, 1)], window_dilations=(2, 1)),
     [_r(4, 5)]),
    ("window_sum-0d", lambda x: nx.window_sum(x, ()), [_r()]),
    ("window_sum-empty", lambda x: nx.window_sum(x, (1, 2)), [_r(0, 3)]),
    ("window_sum-padding-only", lambda x: nx.window_sum(x, (1,), padding=[(2, 2)]), [_r(3)]),
    ("window_prod-zero-dilated", lambda x: nx.window_prod(
        x, (2,), padding=[(1, 1)], window_dilations=2), [_Z]),
    ("window_max-strided", lambda x: nx.window_max(x, (2, 2), strides=2, padding="same"),
     [_r(3, 5)]),
    ("window_max-dilated", lambda x: nx.window_max(
        x, (2,), padding=[(1, 0)], window_dilations=2), [_r(4)]),
    ("window_min-strided", lambda x: nx.window_min(x, (3,), strides=2, padding=[(2, 1)]),
     [_r(6)]),
    ("window_max-size1", lambda x: nx.window_max(x, (1, 1)), [_r(1, 1)]),
    ("window_scatter_max", lambda x, s, i: nx.window_scatter_max(
        x, s, i, (2, 2), strides=2, padding="same"), [_r(4, 5), _r(2, 3, seed=2), _r()]),
    ("window_scatter_min", lambda x, s, i: nx.window_scatter_min(
        x, s, i, (3,), strides=1, padding=[(1, 1)]), [_r(4), _r(4, seed=2), _r()]),
]  # fmt: skip


@pytest.mark.parametrize("case", WINDOW, ids=_ids(WINDOW))
def test_grad_more_window(case: Case, request: pytest.FixtureRequest) -> None:
    name, fn, xs = case
    with _claimed(request):
        check_vjp(_primitive(name), fn, xs)


# ---------------------------------------------------------------- conv

CONV: list[Case] = [
    ("conv-1d-strided-same", lambda x, k: nx.conv(x, k, strides=2, padding="same"),
     [_r(2, 3, 7), _r(4, 3, 3, seed=2)]),
    ("conv-2d-dilations", lambda x, k: nx.conv(
        x, k, strides=(2, 1), padding=[(1, 2), (0, 1)], input_dilation=(2, 1),
        kernel_dilation=(1, 2)), [_r(1, 2, 5, 4), _r(3, 2, 2, 3, seed=2)]),
    ("conv-feature-groups", lambda x, k: nx.conv(x, k, strides=2, feature_group_count=2),
     [_r(2, 4, 6), _r(6, 2, 3, seed=2)]),
    ("conv-batch-groups", lambda x, k: nx.conv(x, k, padding=[(2, 0)], batch_group_count=2),
     [_r(4, 2, 5), _r(6, 2, 2, seed=2)]),
    ("conv-complex", lambda x, k: nx.conv(x, k, padding="same", kernel_dilation=2),
     [_c(1, 2, 5), _c(2, 2, 3, seed=2)]),
    ("conv-size1", lambda x, k: nx.conv(x, k), [_r(1, 1, 1), _r(1, 1, 1, seed=2)]),
    ("conv-empty", lambda x, k: nx.conv(x, k), [_r(0, 2, 5), _r(3, 2, 2, seed=2)]),
]  # fmt: skip


@pytest.mark.parametrize("case", CONV, ids=_ids(CONV))
def test_grad_more_conv(case: Case, request: pytest.FixtureRequest) -> None:
    name, fn, xs = case
    with _claimed(request):
        check_vjp(name.split("-")[0], fn, xs)


# ---------------------------------------------------------------- sort, cumulative, fft

SORT: list[Case] = [
    ("sort", lambda x: nx.sort(x), [_r(5)]),
    ("sort-descending-axis0", lambda x: nx.sort(x, axis=0, descending=True), [_r(3, 4)]),
    ("sort-complex", lambda x: nx.sort(x), [_c(4)]),
    ("sort-size1", lambda x: nx.sort(x), [_r(1)]),
    ("sort-empty", lambda x: nx.sort(x, axis=0), [_r(0, 2)]),
    ("top_k", lambda x: nx.top_k(x, 2), [_r(3, 5)]),
    ("top_k-axis0", lambda x: nx.top_k(x, 1, axis=0), [_r(3, 2)]),
    ("top_k-k0", lambda x: nx.top_k(x, 0), [_r(3)]),
    ("cumulative_sum-reverse", lambda x: nx.cumulative_sum(x, axis=1, reverse=True),
     [_r(2, 3)]),
    ("cumulative_sum-complex", lambda x: nx.cumulative_sum(x), [_c(4)]),
    ("cumulative_prod-zero", lambda x: nx.cumulative_prod(x), [_Z]),
    ("cumulative_prod-reverse-complex", lambda x: nx.cumulative_prod(x, axis=0, reverse=True),
     [_c(5, 2)]),
    ("cumulative_min-reverse", lambda x: nx.cumulative_min(x, axis=0, reverse=True),
     [_r(4, 2)]),
    ("cumulative_max", lambda x: nx.cumulative_max(x), [_r(6)]),
    ("cumulative_min-reverse-empty", lambda x: nx.cumulative_min(x, axis=0, reverse=True),
     [_r(0, 2)]),
]  # fmt: skip

FFT: list[Case] = [
    ("fft", lambda x: nx.fft.fft(x), [_c(2, 4)]),
    ("fft-padded-axis0", lambda x: nx.fft.fft(x, n=5, axis=0), [_c(3, 2)]),
    ("fft-truncated-ortho", lambda x: nx.fft.fft(x, n=2, norm="ortho"), [_c(4)]),
    ("fft-real", lambda x: nx.fft.fft(x), [_r(3)]),
    ("fft-empty", lambda x: nx.fft.fft(x, n=3), [_c(2, 0)]),
    ("ifft", lambda x: nx.ifft(x), [_c(3)]),
    ("ifft-padded", lambda x: nx.ifft(x, n=4), [_c(2, 3)]),
    ("ifft-size1", lambda x: nx.ifft(x), [_c(1)]),
]  # fmt: skip


@pytest.mark.parametrize("case", SORT, ids=_ids(SORT))
def test_grad_more_sort(case: Case, request: pytest.FixtureRequest) -> None:
    name, fn, xs = case
    with _claimed(request):
        check_vjp(_primitive(name), fn, xs)


@pytest.mark.parametrize("case", FFT, ids=_ids(FFT))
def test_grad_more_fft(case: Case, request: pytest.FixtureRequest) -> None:
    name, fn, xs = case
    with _claimed(request):
        check_vjp(name.split("-")[0], fn, xs)


# ---------------------------------------------------------------- linear-algebra blocks


def _phases(p: np.ndarray) -> np.ndarray:
    return p / np.where(np.abs(p) == 0, 1, np.abs(p))


def _eigh_gauge(outs: list[np.ndarray], ref: list[np.ndarray]) -> list[np.ndarray]:
    # each eigenvector turned to the phase of the reference one
    w, v = outs
    p = np.sum(np.conj(ref[1]) * v, axis=-2, keepdims=True)
    return [w, v * np.conj(_phases(p))]


def _hpd(n: int, kind: str = "f", seed: int = 3) -> np.ndarray:
    a = _c(n, n, seed=seed) if kind == "c" else _r(n, n, seed=seed)
    return a @ np.conj(a.T) + n * np.eye(n)


def _tri(n: int, kind: str = "f", seed: int = 4) -> np.ndarray:
    a = _c(n, n, seed=seed) if kind == "c" else _r(n, n, seed=seed)
    return a + 4 * np.eye(n)


def _qr_gauge(outs: list[np.ndarray], ref: list[np.ndarray]) -> list[np.ndarray]:
    # the phases of r's diagonal turned to the reference's (q's columns in step)
    q, r = outs
    k = min(r.shape[-2:])
    turn = _phases(np.diagonal(r[..., :k, :k], axis1=-2, axis2=-1)) * np.conj(
        _phases(np.diagonal(ref[1][..., :k, :k], axis1=-2, axis2=-1))
    )
    q = q.astype(np.complex128)
    q[..., :, :k] = q[..., :, :k] * turn[..., None, :]
    r = r.astype(np.complex128)
    r[..., :k, :] = r[..., :k, :] * np.conj(turn)[..., :, None]
    return [q, r]


def _svd_gauge(outs: list[np.ndarray], ref: list[np.ndarray]) -> list[np.ndarray]:
    # each pair of singular vectors turned so that vh's row has the reference's phase
    u, s, vh = outs
    k = s.shape[-1]
    p = _phases(np.sum(np.conj(ref[2][..., :k, :]) * vh[..., :k, :], axis=-1))
    u = u.astype(np.complex128)
    u[..., :, :k] = u[..., :, :k] * p[..., None, :]
    vh = vh.astype(np.complex128)
    vh[..., :k, :] = vh[..., :k, :] * np.conj(p)[..., :, None]
    return [u, s, vh]


LINALG: list[tuple[str, Callable[..., Any], Sequence[np.ndarray], Gauge | None]] = [
    ("cholesky", lambda x: nx.cholesky(x), [_hpd(3)], None),
    ("cholesky-upper-complex", lambda x: nx.cholesky(x, upper=True), [_hpd(3, "c")], None),
    ("cholesky-batch-size1", lambda x: nx.cholesky(x), [np.stack([_hpd(1), _hpd(1, seed=5)])],
     None),
    ("triangular_solve", lambda a, b: nx.triangular_solve(a, b), [_tri(3), _r(3, 2)], None),
    ("triangular_solve-upper-right-transpose", lambda a, b: nx.triangular_solve(
        a, b, lower=False, left_side=False, transform_a="transpose"), [_tri(3), _r(2, 3)], None),
    ("triangular_solve-adjoint-complex", lambda a, b: nx.triangular_solve(
        a, b, transform_a="adjoint"), [_tri(2, "c"), _c(2, 2)], None),
    ("solve-complex-batch", lambda a, b: nx.solve(a, b), [_c(2, 2, 2) + 3 * np.eye(2),
     _c(2, 2, 1)], None),
    ("inv-complex", lambda x: nx.inv(x), [_tri(2, "c")], None),
    ("det-complex-batch", lambda x: nx.det(x), [_c(2, 2, 2)], None),
    ("det-empty", lambda x: nx.det(x), [_r(0, 0)], None),
    ("eigh", lambda x: nx.eigh(x), [_hpd(3)], _eigh_gauge),
    ("eigh-complex", lambda x: nx.eigh(x), [_hpd(3, "c")], _eigh_gauge),
    ("eigh-size1", lambda x: nx.eigh(x), [_hpd(1)], _eigh_gauge),
    ("cholesky-empty-batch", lambda x: nx.cholesky(x), [np.zeros((2, 0, 0))], None),
    ("qr", lambda x: nx.qr(x), [_r(4, 3)], _qr_gauge),
    ("qr-wide-complex", lambda x: nx.qr(x), [_c(2, 3)], _qr_gauge),
    ("qr-square-complete-batch", lambda x: nx.qr(x, mode="complete"), [_r(2, 2, 2)],
     _qr_gauge),
    ("svd-tall", lambda x: nx.svd(x, full_matrices=False), [_r(4, 2)], _svd_gauge),
    ("svd-wide-complex", lambda x: nx.svd(x, full_matrices=False), [_c(2, 3)], _svd_gauge),
    ("svd-square-full", lambda x: nx.svd(x), [_r(3, 3)], _svd_gauge),
    ("svd-empty", lambda x: nx.svd(x, full_matrices=False), [_r(0, 3)], _svd_gauge),
]  # fmt: skip


@pytest.mark.parametrize("case", LINALG, ids=[c[0] for c in LINALG])
def test_grad_more_linalg(case: Any, request: pytest.FixtureRequest) -> None:
    name, fn, xs, gauge = case
    with _claimed(request):
        check_vjp(name.split("-")[0], fn, xs, gauge=gauge)


def test_grad_more_linalg_not_unique(request: pytest.FixtureRequest) -> None:
    # vectors that are not unique have no derivative (a named error); singular values
    # and r still do
    with _claimed(request):
        x = _t(_r(3, 2), _wide("f"))
        u, s, vh = nx.svd(x)
        cs = nx.ones_like(s)
        rule = BLOCKS["svd"].vjp
        with pytest.raises(
            nx.ArgumentError, match=r"^svd: .* full_matrices=True .* full_matrices=False"
        ):
            rule(nx.ops, (nx.ones_like(u), cs, None), (u, s, vh), x, full_matrices=True)
        (g,) = rule(nx.ops, (None, cs, None), (u, s, vh), x, full_matrices=True)
        un, vn = u.to_numpy(), vh.to_numpy()
        want = un[:, :2] @ vn  # u_k diag(1) vh
        assert g.shape == x.shape and g.dtype is x.dtype
        np.testing.assert_allclose(g.to_numpy(), want, rtol=1e-5, atol=1e-6)
        q, r = nx.qr(x, mode="complete")
        with pytest.raises(nx.ArgumentError, match=r"^qr: .* mode='complete' .* mode='reduced'"):
            BLOCKS["qr"].vjp(nx.ops, (nx.ones_like(q), None), (q, r), x, mode="complete")
        cr = _t(_r(3, 2, seed=6), x.dtype)
        (g,) = BLOCKS["qr"].vjp(nx.ops, (None, cr), (q, r), x, mode="complete")
        qn, rn = nx.qr(x)
        (want_g,) = BLOCKS["qr"].vjp(nx.ops, (None, cr[:2]), (qn, rn), x, mode="reduced")
        np.testing.assert_allclose(g.to_numpy(), want_g.to_numpy(), rtol=1e-5, atol=1e-6)


def test_grad_more_lu_through_fallback(request: pytest.FixtureRequest) -> None:
    # lu has no rule: grad differentiates the core's elimination (pivots held)
    with _claimed(request):
        x = np.array([[0.5, -1.25], [2.0, 0.75]])  # the rows swap
        cs = [np.random.default_rng(8).standard_normal((2, 2)) for _ in range(2)]

        def f(t: nx.Tensor) -> nx.Tensor:
            _, low, up = nx.lu(t)
            c0, c1 = (c.astype(t.dtype.numpy_dtype) for c in cs)
            return nx.sum(low * c0) + nx.sum(up * c1)

        dt = _wide("f")
        got = nx.grad(f)(_t(x, dt))
        assert got.shape == (2, 2) and got.dtype is dt
        want = np.zeros_like(x)
        with nx.default_backend("binary"):
            for i, j in np.ndindex(2, 2):
                e = np.zeros_like(x)
                e[i, j] = EPS
                want[i, j] = (f(nx.tensor(x + e)).item() - f(nx.tensor(x - e)).item()) / (2 * EPS)
        tol = 1e-3 if dt is dtypes.float32 else 1e-6
        np.testing.assert_allclose(got.to_numpy(), want, rtol=tol, atol=tol)
