"""The rest of a JAX user's toolkit on the backend under test: :func:`numerix.scan`,
:func:`numerix.checkpoint`, ``x.at[...]`` updates, :mod:`numerix.tree` and
``jit(static_argnums=, donate_argnums=)``.

These are built on the graph (scan is a loop node, checkpoint a block, ``x.at`` a few
scatters and a sort) rather than on primitives of their own, so a backend gets them
from its primitives and its compilers: each case runs eagerly and jitted with every
compiler serving the backend, and composed with ``grad`` and ``vmap``, against a Python
loop or numpy (``ufunc.at`` for the updates). Inputs are float32 and int32, which every
backend holds; integers must match bit for bit, floats to a few ulps (a compiler may
fuse or reorder float32 arithmetic).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

import numerix as nx
from numerix import plugins
from numerix.defn.compilers import compilers_serving

# float32 against float32 computed another way (a loop, numpy, an unrolled graph): a
# few ulps of fused or reordered arithmetic
RTOL = 2e-6
# a derivative through a loop or a chain of layers, against another graph's
RTOL_GRAD = 2e-5

_NX_DTYPES = {np.dtype(np.float32): nx.float32, np.dtype(np.int32): nx.int32}


def _runs(fn: Callable[..., Any]) -> list[tuple[str, Callable[..., Any]]]:
    """``fn`` eagerly, then jitted with each compiler serving the default backend."""
    out: list[tuple[str, Callable[..., Any]]] = [("eager", fn)]
    for name in compilers_serving(nx.get_default_backend()):
        out.append((f"jit({name})", nx.jit(fn, compiler=name)))
    return out


def _check(got: Any, want: np.ndarray, where: str, rtol: float = RTOL) -> None:
    """``got`` is a tensor of the backend under test with ``want``'s dtype and shape, and
    its values: integers exactly, floats to ``rtol``."""
    dt = _NX_DTYPES[want.dtype]
    assert type(got) is nx.Tensor, f"{where}: got {type(got).__name__}, not a tensor"
    assert got.dtype is dt and got.shape == want.shape, (
        f"{where}: got {got.describe()}, want {dt}{list(want.shape)}"
    )
    assert got.backend.name == nx.get_default_backend().name, (
        f"{where}: the result lives on {got.backend.name}, not on the backend under test"
    )
    h = got.to_numpy()
    if dt.kind != "f":
        np.testing.assert_array_equal(h, want, err_msg=where, strict=True)
    else:
        scale = max(1.0, float(np.abs(want).max(initial=0)))
        np.testing.assert_allclose(h, want, rtol=rtol, atol=rtol * scale, err_msg=where)


def _check_all(got: Any, want: Sequence[np.ndarray], where: str, rtol: float = RTOL) -> None:
    """The leaves of the tree ``got`` against ``want``, in order."""
    leaves = nx.tree.leaves(got)
    assert len(leaves) == len(want), f"{where}: {len(leaves)} leaves, want {len(want)}"
    for j, (g, w) in enumerate(zip(leaves, want)):
        _check(g, w, f"{where}, leaf {j}", rtol)


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _f32(*shape: int, lo: float = -1.0, hi: float = 1.0, seed: int = 0) -> np.ndarray:
    return _rng(seed).uniform(lo, hi, shape).astype(np.float32)


def _i32(*shape: int, lo: int = -5, hi: int = 6, seed: int = 0) -> np.ndarray:
    return _rng(seed).integers(lo, hi, shape).astype(np.int32)


def _t(a: np.ndarray) -> nx.Tensor:
    """``a`` on the backend under test."""
    return nx.tensor(a)


# ---------------------------------------------------------------- scan

#: 5 steps: with unroll=2 the loop runs two iterations and one step is left over
XS = _f32(5, 3, seed=1)
KS = _i32(5, seed=2)
F32 = np.float32


def _zeros3() -> nx.Tensor:
    return nx.zeros(3, dtype=nx.float32)


def _step(c: nx.Tensor, x: nx.Tensor) -> tuple[nx.Tensor, nx.Tensor]:
    c = c * 0.5 + x
    return c, nx.sum(c * x)


def _step_loop(xs: np.ndarray, c: np.ndarray | None = None, reverse: bool = False) -> list[Any]:
    """:func:`_step` scanned over ``xs`` by a numpy loop: ``[carry, ys]``."""
    c = np.zeros(3, F32) if c is None else c
    ys = np.zeros(len(xs), F32)
    for i in reversed(range(len(xs))) if reverse else range(len(xs)):
        c = c * F32(0.5) + xs[i]
        ys[i] = np.sum(c * xs[i], dtype=F32)
    return [c, ys]


def _tree_step(c: dict[str, nx.Tensor], x: tuple[nx.Tensor, nx.Tensor]) -> Any:
    a, k = x
    n = c["n"] + k
    s = c["s"] * 0.5 + a
    return {"n": n, "s": s}, (nx.sum(s), n * 2)


def _tree_loop() -> list[np.ndarray]:
    n, s = np.int32(1), np.zeros(3, F32)
    y0, y1 = np.zeros(5, F32), np.zeros(5, np.int32)
    for i in range(5):
        n = np.int32(n + KS[i])
        s = s * F32(0.5) + XS[i]
        y0[i], y1[i] = np.sum(s, dtype=F32), n * 2
    # leaves in tree order: the carry's dict by sorted key, then the ys tuple
    return [np.asarray(n, np.int32), s, y0, y1]


def _length_loop() -> list[np.ndarray]:
    c, ys = np.int32(1), []
    for _ in range(4):
        ys.append(c)
        c = np.int32(c * 3 - 1)
    return [np.asarray(c, np.int32), np.array(ys, np.int32)]


def _one_i32() -> nx.Tensor:
    return nx.tensor(1, dtype=nx.int32)


#: name: (function of tensors, its arguments, the loop's leaves)
SCANS: dict[str, tuple[Callable[..., Any], tuple[np.ndarray, ...], Callable[[], list[Any]]]] = {
    "scan": (lambda xs: nx.scan(_step, _zeros3(), xs), (XS,), lambda: _step_loop(XS)),
    "scan reverse": (
        lambda xs: nx.scan(_step, _zeros3(), xs, reverse=True),
        (XS,), lambda: _step_loop(XS, reverse=True),
    ),
    "scan unroll=2": (
        lambda xs: nx.scan(_step, _zeros3(), xs, unroll=2), (XS,), lambda: _step_loop(XS)
    ),
    "scan reverse unroll=2": (
        lambda xs: nx.scan(_step, _zeros3(), xs, reverse=True, unroll=2),
        (XS,), lambda: _step_loop(XS, reverse=True),
    ),
    "scan of trees": (
        lambda xs, ks: nx.scan(_tree_step, {"n": _one_i32(), "s": _zeros3()}, (xs, ks)),
        (XS, KS), _tree_loop,
    ),
    "scan xs=None length=4": (
        lambda: nx.scan(lambda c, _: (c * 3 - 1, c), _one_i32(), None, length=4),
        (), _length_loop,
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", list(SCANS))
def test_toolkit_scan_matches_a_loop(name: str) -> None:
    fn, args, loop = SCANS[name]
    want = loop()
    for how, f in _runs(fn):
        _check_all(f(*[_t(a) for a in args]), want, f"{name}, {how}")


def test_toolkit_scan_is_traced_once() -> None:
    # a 1,000-step scan is one while node whose body is traced once, and jit traces it once
    xs = _f32(1000, 3, seed=3)
    fn = lambda xs: nx.scan(_step, _zeros3(), xs)  # noqa: E731
    g = nx.trace(fn, nx.template((1000, 3), nx.float32))
    ops = [node.op for node in g.walk()]
    assert ops.count("while") == 1, f"a 1,000-step scan traces to {ops.count('while')} while nodes"
    assert len(ops) < 100, f"a 1,000-step scan traces to {len(ops)} nodes: unrolled?"
    want = _step_loop(xs)
    for name in compilers_serving(nx.get_default_backend()):
        f = nx.jit(fn, compiler=name)
        _check_all(f(_t(xs)), want, f"1,000-step scan, jit({name})", RTOL_GRAD)
        _check_all(f(_t(xs * 2)), _step_loop(xs * 2), f"1,000-step scan again, jit({name})",
                   RTOL_GRAD)  # fmt: skip
        assert f.trace_count == 1, f"jit({name}) traced a scan {f.trace_count} times"  # type: ignore[attr-defined]


W3 = _f32(3, lo=0.5, hi=1.5, seed=4)


def _rnn(reverse: bool, unroll: int) -> Callable[[nx.Tensor, nx.Tensor], nx.Tensor]:
    def loss(w: nx.Tensor, xs: nx.Tensor) -> nx.Tensor:
        def cell(h: nx.Tensor, x: nx.Tensor) -> tuple[nx.Tensor, nx.Tensor]:
            h = nx.tanh(h * w + x)
            return h, nx.sum(h * x)

        h, ys = nx.scan(cell, _zeros3(), xs, reverse=reverse, unroll=unroll)
        return nx.sum(ys * nx.arange(1, 6, dtype=nx.float32)) + nx.sum(h)

    return loss


def _rnn_unrolled(reverse: bool) -> Callable[[nx.Tensor, nx.Tensor], nx.Tensor]:
    def loss(w: nx.Tensor, xs: nx.Tensor) -> nx.Tensor:
        h = _zeros3()
        total = nx.zeros((), dtype=nx.float32)
        for i in reversed(range(5)) if reverse else range(5):
            h = nx.tanh(h * w + xs[i])
            total = total + nx.sum(h * xs[i]) * float(i + 1)
        return total + nx.sum(h)

    return loss


@pytest.mark.parametrize("reverse, unroll", [(False, 1), (True, 2)], ids=["forward", "reverse"])
def test_toolkit_scan_grad_matches_the_unrolled_loop(reverse: bool, unroll: int) -> None:
    args = (_t(W3), _t(XS))
    want = [g.to_numpy() for g in nx.grad(_rnn_unrolled(reverse), argnums=(0, 1))(*args)]
    value = _rnn_unrolled(reverse)(*args).to_numpy()
    for how, f in _runs(nx.value_and_grad(_rnn(reverse, unroll), argnums=(0, 1))):
        v, g = f(*args)
        where = f"grad of an rnn scan (reverse={reverse}, unroll={unroll}), {how}"
        _check(v, value, f"{where}, value", RTOL_GRAD)
        _check_all(g, want, where, RTOL_GRAD)


def test_toolkit_vmap_of_scan_matches_a_loop() -> None:
    b = 3
    xss = _f32(b, 5, 3, seed=5)
    inits = _f32(b, 3, seed=6)
    fn = lambda c, xs: nx.scan(_step, c, xs)  # noqa: E731
    loops = [_step_loop(xss[k], inits[k]) for k in range(b)]
    want = [np.stack([lp[j] for lp in loops]) for j in range(2)]
    shared = [_step_loop(xss[k], inits[0]) for k in range(b)]
    want_shared = [np.stack([lp[j] for lp in shared]) for j in range(2)]
    for how, f in _runs(nx.vmap(fn)):
        _check_all(f(_t(inits), _t(xss)), want, f"vmap of scan, {how}")
    for how, f in _runs(nx.vmap(fn, in_axes=(None, 0))):
        _check_all(f(_t(inits[0]), _t(xss)), want_shared, f"vmap of scan, init unmapped, {how}")


# ---------------------------------------------------------------- checkpoint

WL = _f32(3, 3, lo=-0.8, hi=0.8, seed=7)
H0 = _f32(2, 3, seed=8)


def _layer(w: nx.Tensor, h: nx.Tensor) -> nx.Tensor:
    return nx.tanh(h @ w) + h * 0.5


def _net(layer: Callable[[nx.Tensor, nx.Tensor], nx.Tensor]) -> Callable[..., nx.Tensor]:
    def loss(w: nx.Tensor, h: nx.Tensor) -> nx.Tensor:
        for _ in range(3):
            h = layer(w, h)
        return nx.sum(h * h)

    return loss


def test_toolkit_checkpoint_keeps_values_and_gradients() -> None:
    plain, remat = _net(_layer), _net(nx.checkpoint(_layer))
    args = (_t(WL), _t(H0))
    value = plain(*args).to_numpy()
    want = [g.to_numpy() for g in nx.grad(plain, argnums=(0, 1))(*args)]
    for how, f in _runs(nx.value_and_grad(remat, argnums=(0, 1))):
        v, g = f(*args)
        _check(v, value, f"checkpoint value, {how}")
        _check_all(g, want, f"grad through checkpoint, {how}", RTOL_GRAD)
    # vmap of the gradient: a batch of weights, one input
    ws = np.stack([WL, WL * 0.5, -WL])
    want_b = np.stack([nx.grad(plain)(_t(w), args[1]).to_numpy() for w in ws])
    for how, f in _runs(nx.vmap(nx.grad(remat), in_axes=(0, None))):
        _check(f(_t(ws), args[1]), want_b, f"vmap(grad) through checkpoint, {how}", RTOL_GRAD)


def test_toolkit_checkpoint_differentiates_closed_over_values() -> None:
    h = _f32(4, seed=9)

    def loss(w: nx.Tensor, h: nx.Tensor) -> nx.Tensor:
        f = nx.checkpoint(lambda x: nx.sin(x * w))  # w is closed over, not an argument
        return nx.sum(f(h))

    w = np.asarray(0.75, F32)
    h64 = h.astype(np.float64)
    want = np.asarray(np.sum(h64 * np.cos(h64 * 0.75)), F32)
    for how, g in _runs(nx.grad(loss)):
        _check(g(_t(w), _t(h)), want, f"grad of a closed-over value through checkpoint, {how}")


# ---------------------------------------------------------------- x.at[...]

#: rows 1 and 4 repeated (1 three times), 2, 3 and 5 untouched; the key is
#: ``x.at[IDX, 1:]``: a repeated advanced index and a slice
IDX = np.array([1, 4, 1, 0, 1, 4], np.int32)
AT_KEY = (IDX, slice(1, None))
HOWS = ["set", "add", "subtract", "multiply", "divide", "min", "max", "get"]


def _at_values(dtype: Any) -> tuple[np.ndarray, np.ndarray]:
    """``x`` (6, 3) and the values (6, 2) of the updates; nonzero values (a divide),
    small integers (a product of three stays small)."""
    if dtype is np.int32:
        v = _i32(6, 2, lo=1, hi=4, seed=11) * np.where(_i32(6, 2, lo=0, hi=2, seed=12), 1, -1)
        return _i32(6, 3, seed=10), v.astype(np.int32)
    v = _f32(6, 2, lo=0.5, hi=2.0, seed=11) * np.where(_i32(6, 2, lo=0, hi=2, seed=12), 1, -1)
    return _f32(6, 3, lo=-3, hi=3, seed=10), v.astype(F32)


def _numpy_at(a: np.ndarray, how: str, key: Any, v: np.ndarray) -> np.ndarray:
    """JAX's ``a.at[key].how(v)`` by numpy: ``ufunc.at`` (every value of a repeated
    position), fancy assignment for ``set`` (the last wins)."""
    if how == "get":
        return a[key]
    out = a.copy()
    if how == "set":
        out[key] = v
    elif how == "divide":  # JAX's: a multiply by the reciprocals
        np.multiply.at(out, key, (1 / v).astype(a.dtype))
    else:
        ufunc = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply,
                 "min": np.minimum, "max": np.maximum}[how]  # fmt: skip
        ufunc.at(out, key, v)
    return out


def _at(how: str) -> Callable[..., nx.Tensor]:
    if how == "get":
        return lambda x, i, v: x.at[i, 1:].get()
    return lambda x, i, v: getattr(x.at[i, 1:], how)(v)


@pytest.mark.parametrize("dtype", [np.float32, np.int32], ids=["float32", "int32"])
@pytest.mark.parametrize("how", HOWS)
def test_toolkit_at_updates_match_numpy(how: str, dtype: Any) -> None:
    x, v = _at_values(dtype)
    if how == "divide" and dtype is np.int32:
        with pytest.raises(nx.DTypeError, match=r"^at\[\]\.divide: .* is not floating"):
            _t(x).at[_t(IDX), 1:].divide(_t(v))
        return
    want = _numpy_at(x, how, AT_KEY, v)
    for where, f in _runs(_at(how)):
        t = _t(x)
        _check(f(t, _t(IDX), _t(v)), want, f"x.at[idx, 1:].{how} ({dtype.__name__}), {where}")
        np.testing.assert_array_equal(t.to_numpy(), x, err_msg=f"{how}: x changed, {where}")


def _at_grad_want(how: str, x: np.ndarray, v: np.ndarray, wt: np.ndarray) -> list[np.ndarray]:
    """d/dx and d/dv of ``sum(x.at[IDX, 1:].how(v) * wt)``, in float64."""
    x, v, wt = x.astype(np.float64), v.astype(np.float64), wt.astype(np.float64)
    if how == "add":
        return [wt.astype(F32), wt[IDX, 1:].astype(F32)]
    prod = np.ones_like(x)
    np.multiply.at(prod, AT_KEY, v)
    dv = np.empty_like(v)
    for j, row in enumerate(IDX):
        others = np.prod([v[k] for k in range(len(IDX)) if k != j and IDX[k] == row], axis=0)
        dv[j] = wt[row, 1:] * x[row, 1:] * others
    return [(wt * prod).astype(F32), dv.astype(F32)]


@pytest.mark.parametrize("how", ["add", "multiply"])
def test_toolkit_at_grad(how: str) -> None:
    x, v = _at_values(np.float32)
    wt = _f32(6, 3, seed=13)
    update = _at(how)

    def loss(x: nx.Tensor, v: nx.Tensor, i: nx.Tensor, wt: nx.Tensor) -> nx.Tensor:
        return nx.sum(update(x, i, v) * wt)

    want = _at_grad_want(how, x, v, wt)
    for where, g in _runs(nx.grad(loss, argnums=(0, 1))):
        got = g(_t(x), _t(v), _t(IDX), _t(wt))
        _check_all(got, want, f"grad of x.at[idx, 1:].{how}, {where}", RTOL_GRAD)


@pytest.mark.parametrize("how", ["set", "add", "max"])
def test_toolkit_vmap_of_at(how: str) -> None:
    # a batch of tensors, of repeated indices and of values: each example its own
    b = 3
    xs = _f32(b, 6, 3, lo=-3, hi=3, seed=14)
    idx = _rng(15).integers(0, 6, (b, 6)).astype(np.int32)
    idx[:, 1] = idx[:, 0]  # a repeat in every example
    vs = _f32(b, 6, 2, lo=-3, hi=3, seed=16)
    want = np.stack([_numpy_at(xs[k], how, (idx[k], slice(1, None)), vs[k]) for k in range(b)])
    for where, f in _runs(nx.vmap(_at(how))):
        _check(f(_t(xs), _t(idx), _t(vs)), want, f"vmap of x.at[idx, 1:].{how}, {where}")
    # the indices shared by the batch
    want_shared = np.stack([_numpy_at(xs[k], how, AT_KEY, vs[k]) for k in range(b)])
    for where, f in _runs(nx.vmap(_at(how), in_axes=(0, None, 0))):
        _check(f(_t(xs), _t(IDX), _t(vs)), want_shared,
               f"vmap of x.at[idx, 1:].{how}, idx unmapped, {where}")  # fmt: skip


# ---------------------------------------------------------------- numerix.tree


def test_toolkit_tree_round_trip() -> None:
    a, b, c, d = _f32(2, 3, seed=17), _i32(4, seed=18), _f32(3, seed=19), _i32(2, 2, seed=20)
    ta, tb, tc, td = _t(a), _t(b), _t(c), _t(d)
    tree = {"w": [ta, (tb, None)], "b": (tc, {"k": td})}
    leaves, structure = nx.tree.flatten(tree)
    # dict keys in sorted order, None an empty subtree, the leaves themselves
    assert [id(t) for t in leaves] == [id(tc), id(td), id(ta), id(tb)]
    rebuilt = nx.tree.unflatten(structure, leaves)
    assert nx.tree.structure(rebuilt) == structure and rebuilt["w"][1][1] is None
    assert rebuilt["w"][0] is ta and rebuilt["b"][1]["k"] is td
    doubled = nx.tree.map(lambda t: t * 2, tree)
    assert nx.tree.structure(doubled) == structure
    _check_all(doubled, [c * 2, d * 2, a * 2, b * 2], "tree.map")
    summed = nx.tree.map(lambda s, t: s + t, tree, doubled)
    _check_all(summed, [c * 3, d * 3, a * 3, b * 3], "tree.map of two trees")
    for name in compilers_serving(nx.get_default_backend()):
        out = nx.jit(lambda p: nx.tree.map(lambda t: t - 1, p), compiler=name)(tree)
        assert nx.tree.structure(out) == structure, f"jit({name}) changed the tree"
        _check_all(out, [c - 1, d - 1, a - 1, b - 1], f"tree.map under jit({name})")


# ---------------------------------------------------------------- jit's JAX keywords


def _power(x: nx.Tensor, n: int, scale: nx.Tensor) -> nx.Tensor:
    for _ in range(n):
        x = x * scale
    return x


def test_toolkit_jit_static_argnums() -> None:
    x, s = _f32(4, seed=21), np.asarray(1.5, F32)
    s2 = np.asarray(-0.5, F32)
    for name in compilers_serving(nx.get_default_backend()):
        f = nx.jit(_power, static_argnums=1, compiler=name)
        for n, scale, traces in ((2, s, 1), (3, s, 2), (2, s2, 2), (0, s, 3)):
            want = x.copy()
            for _ in range(n):
                want = want * scale
            _check(f(_t(x), n, _t(scale)), want, f"static n={n}, jit({name})")
            # a new static value traces again; a new dynamic one does not
            got = f.trace_count  # type: ignore[attr-defined]
            assert got == traces, f"jit({name}): {got} traces after n={n}, want {traces}"


def test_toolkit_jit_donate_argnums() -> None:
    a, b = _f32(2, 3, seed=22), _f32(2, 3, seed=23)
    want = a * F32(2) + b
    for name in compilers_serving(nx.get_default_backend()):
        donates = bool(getattr(plugins.get_compiler(name, "kit"), "donates", False))
        by_num = nx.jit(lambda a, b: a * 2 + b, donate_argnums=0, compiler=name)
        by_name = nx.jit(lambda a, b: a * 2 + b, donate_argnames="a", compiler=name)
        for how, f in (("donate_argnums=0", by_num), ("donate_argnames='a'", by_name)):
            where = f"{how}, jit({name}) (donates: {donates})"
            for _ in range(2):  # a second call, with a new tensor to donate
                ta, tb = _t(a), _t(b)
                _check(f(ta, b=tb) if "names" in how else f(ta, tb), want, where)
                np.testing.assert_array_equal(tb.to_numpy(), b, err_msg=f"{where}: b changed")
                if donates:
                    with pytest.raises(nx.DeallocatedError):
                        ta.to_numpy()
                    with pytest.raises(nx.DeallocatedError):
                        ta + 1
                else:
                    _check(ta, a, f"{where}: the donated tensor keeps its values")
