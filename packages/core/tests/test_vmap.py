"""numerix.vmap's transform on binary: arguments (in_axes, out_axes, keyword arguments,
axis_size, trees), its errors, one batched call per primitive, and its composition with
jit, grad, vjp, jvp, cond, loops, random and itself; the Jacobians built on it. Every
result is checked against a Python loop over the batch (or numpy's closed form). The
conformance kit's vmap family checks each primitive's rule on every backend."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import numerix as nx
from numerix.defn.batching import BatchingError

RNG = np.random.default_rng(7)
X = RNG.standard_normal((4, 3, 5)).astype(np.float32)
W = RNG.standard_normal((5, 2)).astype(np.float32)


def f(a: nx.Tensor) -> nx.Tensor:
    return nx.sum(nx.tanh(a @ nx.tensor(W)), axis=0) + nx.max(a)


def _loop(fn: Any, *args: np.ndarray, axes: tuple[Any, ...] | None = None) -> np.ndarray:
    axes = axes or (0,) * len(args)
    n = next(a.shape[ax] for a, ax in zip(args, axes) if ax is not None)
    outs = []
    for i in range(n):
        ex = [a if ax is None else np.take(a, i, axis=ax) for a, ax in zip(args, axes)]
        outs.append(np.asarray(fn(*[nx.tensor(e) for e in ex])))
    return np.stack(outs)


def _same(got: nx.Tensor, want: np.ndarray, exact: bool = True) -> None:
    g = np.asarray(got)
    assert g.dtype == want.dtype and g.shape == want.shape, (g.dtype, g.shape, want.shape)
    if exact:
        np.testing.assert_array_equal(g, want)
    else:
        np.testing.assert_allclose(g, want, rtol=2e-6, atol=2e-6)


# ---------------------------------------------------------------- arguments


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
def test_in_axes_moves_the_batch(axis: int) -> None:
    x = np.moveaxis(X, 0, axis)
    _same(nx.vmap(f, in_axes=axis)(nx.tensor(x)), _loop(f, x, axes=(axis,)), exact=False)


@pytest.mark.parametrize("out_axis", [0, 1, -1, 2])
def test_out_axes_places_the_batch(out_axis: int) -> None:
    g = nx.vmap(lambda a: a * 2.0, out_axes=out_axis)(nx.tensor(X))
    _same(g, np.moveaxis(X * 2.0, 0, out_axis))


def test_unmapped_arguments_and_trees() -> None:
    def h(p: dict[str, nx.Tensor], x: nx.Tensor, scale: float) -> tuple[nx.Tensor, nx.Tensor]:
        return x @ p["w"] * scale, nx.sum(p["b"] * x)

    p = {"w": nx.tensor(W), "b": nx.tensor(X[0, 0])}
    a, b = nx.vmap(h, in_axes=({"w": None, "b": None}, 0, None))(p, nx.tensor(X[:, 0]), 3.0)
    _same(a, np.stack([X[i, 0] @ W * np.float32(3.0) for i in range(4)]), exact=False)
    _same(b, np.stack([np.sum(X[0, 0] * X[i, 0]) for i in range(4)]), exact=False)
    # a prefix: None for the whole tree of the first argument
    a2, _ = nx.vmap(h, in_axes=(None, 0, None))(p, nx.tensor(X[:, 0]), 3.0)
    _same(a2, np.asarray(a))


def test_keyword_arguments_are_mapped_over_axis_0() -> None:
    g = nx.vmap(lambda x, *, y: x - y, in_axes=None)(nx.tensor(X[0]), y=nx.tensor(X))
    _same(g, X[0] - X)


def test_axis_size_when_nothing_is_mapped() -> None:
    g = nx.vmap(lambda x: x + 1.0, in_axes=None, axis_size=3)(nx.tensor([1.0, 2.0]))
    _same(g, np.tile(np.array([2.0, 3.0], np.float32), (3, 1)))
    empty = nx.vmap(lambda x: nx.sum(x), in_axes=0)(nx.zeros((0, 4)))
    _same(empty, np.zeros((0,), np.float32))


def test_python_numbers_unmapped_and_returned() -> None:
    g = nx.vmap(lambda x, s: (x * s, 1.5), in_axes=(0, None))(nx.tensor([1.0, 2.0]), 2.0)
    _same(g[0], np.array([2.0, 4.0], np.float32))
    _same(g[1], np.array([1.5, 1.5], np.float32))  # an output that no example changes


def test_functools_metadata_is_kept() -> None:
    def named(x: nx.Tensor) -> nx.Tensor:
        """Doc."""
        return x

    v = nx.vmap(named)
    assert v.__name__ == "named" and v.__doc__ == "Doc."


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "call, err, pattern",
    [
        (lambda: nx.vmap(nx.add)(nx.zeros(3), nx.zeros(4)), nx.ShapeError,
         r"^vmap: the mapped axes differ in size: argument 0 \(f32\[3\] binary\(cpu\)\) axis 0 "
         r"has 3; argument 1 \(f32\[4\] binary\(cpu\)\) axis 0 has 4"),
        (lambda: nx.vmap(nx.sum, in_axes=2)(nx.zeros((2, 2))), nx.AxisError,
         r"^vmap: in_axes gives axis 2 for argument 0, f32\[2\]\[2\] binary\(cpu\), which has 2 "
         r"dimension\(s\); valid axes are -2..1"),
        (lambda: nx.vmap(nx.sum)(nx.tensor(1.0)), nx.AxisError, r"a 0-d tensor with no axis"),
        (lambda: nx.vmap(lambda a, b: a)(nx.zeros(2), 3.0), nx.ArgumentError,
         r"^vmap: argument 1 is the Python float 3.0, which has no axis 0 to map over; pass "
         r"in_axes=None"),
        (lambda: nx.vmap(nx.add, in_axes=(0,))(nx.zeros(2), nx.zeros(2)), nx.ArgumentError,
         r"^vmap: in_axes has 1 entries for 2 positional argument"),
        (lambda: nx.vmap(nx.add, in_axes=((0, 0), 0))(nx.zeros(2), nx.zeros(2)),
         nx.ArgumentError, r"^vmap: in_axes\[0\] \(\(0, 0\)\) does not match"),
        (lambda: nx.vmap(nx.sum, in_axes="0"), nx.ArgumentError, r"^vmap: in_axes holds '0'"),
        (lambda: nx.vmap(nx.sum, in_axes={"a": 0})(nx.zeros(2)), nx.ArgumentError,
         r"^vmap: in_axes must be an int, None, or a tuple/list"),
        (lambda: nx.vmap(lambda a: a, out_axes=None)(nx.zeros(2)), nx.ArgumentError,
         r"^vmap: out_axes gives None for output 0 \(f32 per example\), but it depends"),
        (lambda: nx.vmap(lambda a: a, out_axes=2)(nx.zeros(2)), nx.AxisError,
         r"^vmap: out_axes gives axis 2 for output 0"),
        (lambda: nx.vmap(lambda a: a, in_axes=None)(nx.zeros(2)), nx.ArgumentError,
         r"^vmap: no argument is mapped .* pass axis_size=N"),
        (lambda: nx.vmap(lambda a: a, axis_size=3)(nx.zeros(2)), nx.ShapeError,
         r"^vmap: axis_size=3 but the mapped axes have size 2"),
        (lambda: nx.vmap(lambda a: a, axis_size=-1), nx.ArgumentError, r"axis_size must be"),
        (lambda: nx.vmap(3), TypeError, r"^vmap: fn must be callable"),
    ],
)  # fmt: skip
def test_errors_name_the_argument_and_the_fix(call: Any, err: type, pattern: str) -> None:
    with pytest.raises(err, match=pattern):
        call()


def test_a_missing_rule_is_named() -> None:
    from numerix.primitives import REGISTRY

    prim = REGISTRY["sin"]
    saved = prim.batch
    object.__setattr__(prim, "batch", None)
    try:
        with pytest.raises(BatchingError, match=r"^vmap: the primitive 'sin' has no batching rule"):
            nx.vmap(nx.sin)(nx.zeros(2))
    finally:
        object.__setattr__(prim, "batch", saved)


# ---------------------------------------------------------------- one call per primitive


def test_the_batched_program_has_one_node_per_primitive() -> None:
    # under a trace the walk records the batched primitives: no node per example
    one = nx.trace(f, nx.template((3, 5)))
    many = nx.trace(nx.vmap(f), nx.template((1000, 3, 5)))
    prims = [n.op for n in many.nodes if n.op not in ("parameter", "constant")]
    assert len(prims) <= 2 * len([n for n in one.nodes if n.op not in ("parameter", "constant")])
    assert all(n.shape is None or n.shape[:1] in ((1000,), ()) or n.op == "constant"
               for n in many.nodes if n.op != "parameter")  # fmt: skip


def test_eager_vmap_runs_each_kernel_once(monkeypatch: pytest.MonkeyPatch) -> None:
    be = nx.get_backend("binary")
    calls: list[str] = []
    for name in ("tanh", "dot", "reduce", "add"):
        original = getattr(type(be), name)

        def spy(self: Any, *a: Any, _n: str = name, _o: Any = original, **k: Any) -> Any:
            calls.append(_n)
            return _o(self, *a, **k)

        monkeypatch.setattr(type(be), name, spy)
    nx.vmap(f)(nx.tensor(X))
    assert sorted(calls) == ["add", "dot", "reduce", "reduce", "tanh"], calls


# ---------------------------------------------------------------- composition


def test_jit_of_vmap_and_vmap_of_jit() -> None:
    want = _loop(f, X)
    _same(nx.jit(nx.vmap(f))(nx.tensor(X)), want, exact=False)
    _same(nx.vmap(nx.jit(f))(nx.tensor(X)), want, exact=False)


def test_per_example_gradients() -> None:
    def loss(w: nx.Tensor, x: nx.Tensor) -> nx.Tensor:
        return nx.sum(nx.tanh(x @ w) ** 2)

    w = nx.tensor(W)
    got = nx.vmap(nx.grad(loss), in_axes=(None, 0))(w, nx.tensor(X[:, 0]))
    want = np.stack([np.asarray(nx.grad(loss)(w, nx.tensor(X[i, 0]))) for i in range(4)])
    _same(got, want, exact=False)
    jitted = nx.jit(nx.vmap(nx.grad(loss), in_axes=(None, 0)))(w, nx.tensor(X[:, 0]))
    _same(jitted, want, exact=False)


def test_grad_of_vmap_vjp_and_jvp() -> None:
    x = nx.tensor(X)
    g = nx.grad(lambda x: nx.sum(nx.vmap(f)(x)))(x)
    want = nx.grad(lambda x: sum(nx.sum(f(x[i])) for i in range(4)))(x)
    _same(g, np.asarray(want), exact=False)
    out, pull = nx.vjp(nx.vmap(nx.sin), x)
    _same(pull(nx.ones_like(out))[0], np.cos(X), exact=False)
    _, t = nx.jvp(nx.vmap(nx.sin), (x,), (nx.ones_like(x),))
    _same(t, np.cos(X), exact=False)


def test_nested_vmap() -> None:
    h = nx.vmap(nx.vmap(lambda a, b: nx.sum(a * b)), in_axes=(0, None))
    a = X[:, :, 0]  # (4, 3)
    b = X[0, :, 1]  # (3,)
    got = h(nx.tensor(X), nx.tensor(b[:, None] * np.ones((1, 5), np.float32)))
    want = np.einsum("ijk,jk->ij", X, np.broadcast_to(b[:, None], (3, 5)))
    _same(got, want.astype(np.float32), exact=False)
    assert a.shape == (4, 3)


def test_cond_with_a_batched_predicate_selects() -> None:
    def g(a: nx.Tensor) -> nx.Tensor:
        return nx.cond(nx.sum(a) > 0, lambda b: b * 2.0, lambda b: -b, a)

    want = np.stack([x * 2 if x.sum() > 0 else -x for x in X])
    for run in (nx.vmap(g), nx.jit(nx.vmap(g))):
        _same(run(nx.tensor(X)), want)


def test_cond_with_an_unbatched_predicate_stays_a_cond() -> None:
    def g(a: nx.Tensor, flag: nx.Tensor) -> nx.Tensor:
        return nx.cond(flag, lambda b: b * 2.0, lambda b: -b, a)

    for flag in (True, False):
        v = nx.vmap(g, in_axes=(0, None))
        graph = nx.trace(v, nx.template((4, 3, 5)), nx.template((), nx.bool))
        assert [n.op for n in graph.nodes].count("cond") == 1
        _same(nx.jit(v)(nx.tensor(X), nx.tensor(flag)), X * 2 if flag else -X)


def test_while_loop_with_a_batched_predicate() -> None:
    def doubling(limit: nx.Tensor) -> nx.Tensor:
        s = nx.while_loop(
            lambda s: s[0] < limit, lambda s: (s[0] + 1.0, s[1] * 2.0), (nx.tensor(0.0), 1.0)
        )
        return s[1]

    lim = np.array([1.0, 3.0, 0.0, 5.0], np.float32)
    want = np.array([2.0, 8.0, 1.0, 32.0], np.float32)
    for run in (nx.vmap(doubling), nx.jit(nx.vmap(doubling))):
        _same(run(nx.tensor(lim)), want)


def test_fori_loop_keeps_its_counter_unbatched_and_its_grad() -> None:
    def power(a: nx.Tensor) -> nx.Tensor:
        return nx.fori_loop(0, 3, lambda i, s: s * a, nx.tensor(1.0))

    a = np.array([1.0, 2.0, -3.0], np.float32)
    _same(nx.jit(nx.vmap(power))(nx.tensor(a)), a**3)
    graph = nx.trace(nx.vmap(power), nx.template((3,)))
    loop = next(n for n in graph.nodes if n.op == "while")
    assert loop.params == {"trip_count": 3}  # the static trip count grad reads survives
    _same(nx.vmap(nx.grad(power))(nx.tensor(a)), 3 * a**2)


def test_random_keys_batched_and_broadcast() -> None:
    keys = nx.random.split(nx.random.key(0), 3)
    draw = nx.vmap(lambda k: nx.random.normal(k, (4,)))(keys)
    want = np.stack([np.asarray(nx.random.normal(keys[i], (4,))) for i in range(3)])
    _same(draw, want)
    assert not np.array_equal(want[0], want[1])  # independent streams
    same = nx.vmap(lambda k, x: nx.random.normal(k, (4,)) + x, in_axes=(None, 0))(
        nx.random.key(1), nx.zeros((3, 4))
    )
    s = np.asarray(same)
    assert np.array_equal(s[0], s[1]) and np.array_equal(s[1], s[2])  # one key: one draw


def test_hook_sees_the_batched_value() -> None:
    seen: list[Any] = []
    nx.vmap(lambda a: nx.hook(a * 2.0, lambda v: seen.append(v.shape)))(nx.tensor(X))
    assert seen == [(4, 3, 5)]


def test_stop_grad_survives_batching() -> None:
    def h(x: nx.Tensor) -> nx.Tensor:
        return nx.sum(nx.vmap(lambda a: a * nx.stop_grad(a))(x))

    _same(nx.grad(h)(nx.tensor(X)), X)


# ---------------------------------------------------------------- the Jacobians


A = (RNG.standard_normal((6, 6)) / 3).astype(np.float32)


def _fn(x: nx.Tensor) -> nx.Tensor:
    return nx.tanh(nx.tensor(A) @ x) * x


def _jac(x: np.ndarray) -> np.ndarray:
    x64 = x.astype(np.float64)
    t = np.tanh(A.astype(np.float64) @ x64)
    return (np.diag(t) + (x64 * (1 - t**2))[:, None] * A).astype(np.float32)


@pytest.mark.parametrize("which", ["jacrev", "jacfwd"])
def test_jacobians_match_the_closed_form(which: str) -> None:
    x = RNG.standard_normal(6).astype(np.float32)
    jac = getattr(nx, which)
    _same(jac(_fn)(nx.tensor(x)), _jac(x), exact=False)
    _same(nx.jit(jac(_fn))(nx.tensor(x)), _jac(x), exact=False)


def test_jacobian_trees_argnums_and_aux() -> None:
    def g(a: nx.Tensor, b: nx.Tensor) -> dict[str, nx.Tensor]:
        return {"s": nx.sum(a * b), "v": a * 2.0}

    a, b = nx.tensor([1.0, 2.0]), nx.tensor([3.0, 4.0])
    for jac in (nx.jacrev, nx.jacfwd):
        j = jac(g, argnums=(0, 1))(a, b)
        _same(j["s"][0], np.array([3.0, 4.0], np.float32))
        _same(j["s"][1], np.array([1.0, 2.0], np.float32))
        _same(j["v"][0], np.diag([2.0, 2.0]).astype(np.float32))
        _same(j["v"][1], np.zeros((2, 2), np.float32))
        single = jac(lambda a: (a * a, nx.sum(a)), has_aux=True)(a)
        _same(single[0], np.diag([2.0, 4.0]).astype(np.float32))
        _same(single[1], np.array(3.0, np.float32))
    with pytest.raises(nx.ArgumentError, match=r"^jacrev: argnums 2 names argument 2"):
        nx.jacrev(g, argnums=2)(a, b)


def test_hessian() -> None:
    x = np.array([0.5, -1.0, 2.0], np.float32)
    h = nx.hessian(lambda x: nx.sum(nx.sin(x) * x))(nx.tensor(x))
    want = np.diag(2 * np.cos(x) - x * np.sin(x)).astype(np.float32)
    _same(h, want, exact=False)


def test_trace_only_activation_blocks_batch_under_jit_and_grad() -> None:
    # relu and the stability shift of softmax/logsumexp are blocks of a trace: batched as
    # themselves (their rules hold for any shape), under jit and grad
    def loss(w: nx.Tensor, x: nx.Tensor) -> nx.Tensor:
        h = nx.relu(x @ w)
        return nx.logsumexp(h) - nx.sum(nx.softmax(h) * h)

    w = nx.tensor(W)
    xs = X[:, 0]  # (4, 5)
    want = np.stack([np.asarray(nx.grad(loss)(w, nx.tensor(xs[i]))) for i in range(4)])
    for run in (nx.vmap(nx.grad(loss), in_axes=(None, 0)),
                nx.jit(nx.vmap(nx.grad(loss), in_axes=(None, 0)))):  # fmt: skip
        _same(run(w, nx.tensor(xs)), want, exact=False)
    g = nx.trace(nx.vmap(nx.grad(loss), in_axes=(None, 0)), nx.template((5, 2)),
                 nx.template((4, 5)))  # fmt: skip
    assert any(n.op == "block" and n.value.name == "relu" for n in g.nodes)
