"""grad, value_and_grad, vjp, jvp, stop_grad and the custom rules: against central
finite differences in float64 and closed forms, composed with jit, with themselves
and with control flow, and their errors."""

from __future__ import annotations

import numpy as np
import pytest

import numerix as nx
from numerix.defn.autodiff import (
    CotangentError,
    CustomRuleError,
    HasAuxError,
    MissingRuleError,
    NonDifferentiableDTypeError,
    NonScalarOutputError,
    NonTensorLeafError,
    WhileLoopGradError,
)
from numerix.primitives import BLOCKS, REGISTRY

F64 = nx.float64
RNG = np.random.default_rng(7)


def t64(a):
    return nx.tensor(np.asarray(a, dtype=np.float64), dtype=F64)


def numeric_grad(f, x, eps=1e-6):
    """Central differences of the scalar ``f`` (numpy in, float out) at ``x``."""
    x = np.asarray(x, dtype=np.float64)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        g[i] = (f(x + d) - f(x - d)) / (2 * eps)
    return g


def check_fd(fn, *arrays, argnum=0, rtol=1e-6, atol=1e-7):
    """grad of ``fn`` (numerix) at float64 ``arrays`` equals central differences."""
    tensors = [t64(a) for a in arrays]
    got = nx.grad(fn, argnums=argnum)(*tensors)
    assert got.dtype is F64 and got.shape == tensors[argnum].shape

    def at(v):
        args = list(tensors)
        args[argnum] = t64(v)
        return float(fn(*args).item())

    want = numeric_grad(at, arrays[argnum])
    np.testing.assert_allclose(got.to_numpy(), want, rtol=rtol, atol=atol)


def mlp_loss(params, x, y):
    w1, b1, w2, b2 = params
    h = nx.relu(x @ w1 + b1)
    logp = nx.log_softmax(h @ w2 + b2, axis=-1)
    return -nx.mean(nx.sum(y * logp, axis=-1))


def mlp_numpy(params, x, y):
    """The loss and its gradient written out by hand in numpy (the oracle)."""
    w1, b1, w2, b2 = params
    z1 = x @ w1 + b1
    h = np.maximum(z1, 0)
    z2 = h @ w2 + b2
    z2 = z2 - z2.max(axis=-1, keepdims=True)
    logp = z2 - np.log(np.exp(z2).sum(axis=-1, keepdims=True))
    n = x.shape[0]
    loss = -(y * logp).sum(axis=-1).mean()
    dz2 = (np.exp(logp) - y) / n
    dw2, db2 = h.T @ dz2, dz2.sum(0)
    dz1 = (dz2 @ w2.T) * (z1 > 0)
    dw1, db1 = x.T @ dz1, dz1.sum(0)
    return loss, (dw1, db1, dw2, db2)


def mlp_data(dtype=np.float32, n=8, d=5, hidden=6, k=3):
    x = RNG.standard_normal((n, d)).astype(dtype)
    y = np.eye(k, dtype=dtype)[RNG.integers(0, k, n)]
    params = [
        (RNG.standard_normal((d, hidden)) * 0.5).astype(dtype),
        (RNG.standard_normal(hidden) * 0.1).astype(dtype),
        (RNG.standard_normal((hidden, k)) * 0.5).astype(dtype),
        (RNG.standard_normal(k) * 0.1).astype(dtype),
    ]
    return params, x, y


# ---------------------------------------------------------------- closed forms


@pytest.mark.parametrize(
    ("fn", "deriv"),
    [
        (lambda x: nx.sum(x * x), lambda x: 2 * x),
        (lambda x: nx.sum(nx.sin(x)), np.cos),
        (lambda x: nx.sum(nx.exp(x) / 2.0), lambda x: np.exp(x) / 2),
        (lambda x: nx.sum(nx.log(x * x + 1.0)), lambda x: 2 * x / (x * x + 1)),
        (lambda x: nx.mean(nx.tanh(x)), lambda x: (1 - np.tanh(x) ** 2) / x.size),
        (lambda x: nx.max(x), lambda x: (x == x.max()).astype(x.dtype)),
    ],
)
def test_grad_closed_forms(fn, deriv):
    a = np.array([0.3, -1.2, 2.5, 0.7])
    got = nx.grad(fn)(t64(a))
    assert got.dtype is F64 and got.shape == (4,)
    np.testing.assert_allclose(got.to_numpy(), deriv(a), rtol=1e-12)


def test_grad_0d_and_float32_and_python_float():
    g = nx.grad(lambda x: x * x * x)(nx.tensor(2.0))
    assert g.shape == () and g.dtype is nx.float32 and g.item() == 12.0
    g = nx.grad(lambda x: x * x * x)(2.0)  # a Python float is a 0-d float32 tensor
    assert g.shape == () and g.dtype is nx.float32 and g.item() == 12.0


def test_grad_empty_and_size_one_broadcast():
    # an empty input: the gradient is empty, of the input's shape and dtype
    g = nx.grad(lambda x: nx.sum(x * 3.0))(nx.zeros((0, 3), dtype=F64))
    assert g.shape == (0, 3) and g.dtype is F64
    # a size-1 axis broadcast against a larger one sums the cotangent back
    check_fd(lambda b, x: nx.sum(nx.sin(x * b)), np.array([[0.5], [2.0]]), np.ones((2, 3)))


# ---------------------------------------------------------------- finite differences


@pytest.mark.parametrize(
    "case",
    ["broadcast", "dot", "softmax", "reductions", "shape_ops", "where", "pow"],
)
def test_grad_against_finite_differences(case):
    a = RNG.standard_normal((3, 4))
    b = RNG.standard_normal((4, 2))
    fns = {
        "broadcast": lambda x, y: nx.sum(x * nx.sum(y, axis=1) - x / 3.0),
        "dot": lambda x, y: nx.sum(nx.tanh(x @ y)),
        "softmax": lambda x, y: nx.sum(nx.softmax(x, axis=-1) * nx.arange(4.0, dtype=F64)),
        "reductions": lambda x, y: nx.max(x, axis=0) @ nx.min(y, axis=1) + nx.prod(x[0]),
        "shape_ops": lambda x, y: nx.sum(nx.concatenate([x.T, y], axis=1)[1:3] ** 2),
        "where": lambda x, y: nx.sum(nx.where(x > 0, x * x, -x)),
        "pow": lambda x, y: nx.sum(nx.abs(x) ** 1.5),
    }
    check_fd(fns[case], a, b)


BLOCK_CASES = {
    "det": lambda m: nx.det(m),
    "inv": lambda m: nx.sum(nx.inv(m) * nx.arange(4.0, dtype=F64).reshape((2, 2))),
    "solve": lambda m: nx.sum(nx.solve(m, nx.ones((2,), dtype=F64))),
}


@pytest.mark.parametrize("name", sorted(BLOCK_CASES))
def test_grad_through_blocks_with_their_rule_and_through_their_core_version(name):
    a = np.array([[2.0, 1.0], [0.5, 3.0]])
    check_fd(BLOCK_CASES[name], a)
    block = BLOCKS[name]
    rule = block.vjp
    object.__setattr__(block, "vjp", None)  # no rule: grad goes through the core's version
    try:
        check_fd(BLOCK_CASES[name], a)
    finally:
        object.__setattr__(block, "vjp", rule)


def test_mlp_against_hand_written_backward():
    params, x, y = mlp_data(np.float64)
    value, grads = nx.value_and_grad(mlp_loss)([t64(p) for p in params], t64(x), t64(y))
    want_loss, want = mlp_numpy(params, x, y)
    assert value.dtype is F64 and value.shape == ()
    np.testing.assert_allclose(value.item(), want_loss, rtol=1e-12)
    assert isinstance(grads, list) and len(grads) == 4
    for g, w, p in zip(grads, want, params):
        assert g.dtype is F64 and g.shape == p.shape
        np.testing.assert_allclose(g.to_numpy(), w, rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------- the API


def test_argnums_pytrees_and_has_aux():
    def f(p, x, scale):
        return nx.sum(p["w"] * x) * scale + nx.sum(p["b"][0] ** 2), {"n": nx.sum(x)}

    p = {"w": t64([1.0, 2.0]), "b": [t64([3.0])]}
    x, s = t64([4.0, 5.0]), t64(2.0)
    (value, aux), (gp, gs) = nx.value_and_grad(f, argnums=(0, 2), has_aux=True)(p, x, s)
    assert value.item() == 2 * (4 + 10) + 9 and aux["n"].item() == 9.0
    assert set(gp) == {"w", "b"} and isinstance(gp["b"], list)
    np.testing.assert_array_equal(gp["w"].to_numpy(), [8.0, 10.0])
    np.testing.assert_array_equal(gp["b"][0].to_numpy(), [6.0])
    assert gs.item() == 14.0 and gs.dtype is F64
    g, aux = nx.grad(f, has_aux=True)(p, x, s)
    np.testing.assert_array_equal(g["w"].to_numpy(), [8.0, 10.0])


def test_unused_input_gets_zeros_and_keywords_pass_through():
    g = nx.grad(lambda x, y, k=1.0: nx.sum(y) * k, argnums=(0, 1))(t64([1.0]), t64([2.0]), k=3.0)
    np.testing.assert_array_equal(g[0].to_numpy(), [0.0])
    np.testing.assert_array_equal(g[1].to_numpy(), [3.0])


def test_other_arguments_may_be_any_python_value():
    def loss(w, mode, scale=1.0):
        return nx.sum(w * w) * (2.0 if mode == "train" else 1.0) * scale

    w = t64([1.0, -2.0])
    np.testing.assert_array_equal(nx.grad(loss)(w, "train").to_numpy(), [4.0, -8.0])
    np.testing.assert_array_equal(nx.grad(loss)(w, "eval", scale=3.0).to_numpy(), [6.0, -12.0])
    value, _ = nx.value_and_grad(loss)(w, None)
    assert value.item() == 5.0


def test_closed_over_same_value_is_not_differentiated():
    # d/dy (y * x) at y = x is x: the closure's x is a constant to grad
    x = t64([3.0, -2.0])
    np.testing.assert_array_equal(nx.grad(lambda y: nx.sum(y * x))(x).to_numpy(), [3.0, -2.0])

    @nx.jit
    def inside(x):
        return nx.grad(lambda y: nx.sum(y * x))(x)

    np.testing.assert_array_equal(inside(x).to_numpy(), [3.0, -2.0])


def test_composition_grad_of_grad_jit_of_grad_grad_of_jit():
    x = t64([0.5, -1.5])

    def f(x):
        return nx.sum(x**3)

    np.testing.assert_allclose(nx.grad(f)(x).to_numpy(), 3 * x.to_numpy() ** 2)
    hess_diag = nx.grad(lambda x: nx.sum(nx.grad(f)(x)))(x)
    np.testing.assert_allclose(hess_diag.to_numpy(), 6 * x.to_numpy())
    third = nx.grad(lambda x: nx.sum(nx.grad(lambda z: nx.sum(nx.grad(f)(z)))(x)))(x)
    np.testing.assert_allclose(third.to_numpy(), [6.0, 6.0])
    jg = nx.jit(nx.grad(f), compiler="evaluator")
    np.testing.assert_allclose(jg(x).to_numpy(), 3 * x.to_numpy() ** 2)
    assert jg.is_cached(x)
    np.testing.assert_allclose(nx.grad(nx.jit(f))(x).to_numpy(), 3 * x.to_numpy() ** 2)

    @nx.defn
    def step(w):
        return w - 0.1 * nx.grad(f)(w)

    np.testing.assert_allclose(step(x).to_numpy(), x.to_numpy() - 0.3 * x.to_numpy() ** 2)


def test_grad_inside_a_branch_closing_over_values_of_the_enclosing_trace():
    @nx.jit
    def f(x, w):
        def branch(y):
            return nx.grad(lambda z: nx.sum(z * w * z))(y), nx.grad(lambda z: nx.sum(w))(y)

        return nx.cond(nx.sum(x) > 0, branch, lambda y: (y, y), x)

    g, zero = f(t64([1.0, 1.0]), t64([2.0, 3.0]))
    np.testing.assert_array_equal(g.to_numpy(), [4.0, 6.0])
    np.testing.assert_array_equal(zero.to_numpy(), [0.0, 0.0])


def test_backward_pass_is_recorded_in_the_graph():
    g = nx.trace(nx.grad(lambda x: nx.sum(nx.exp(x))), nx.template((3,), F64))
    listing = str(g)
    assert "block grad_input" in listing and listing.count("exp") == 1
    assert [o.shape for o in g.outputs] == [(3,)]


def test_vjp_and_jvp():
    a = np.array([0.3, -0.8, 1.1])
    out, f_vjp = nx.vjp(lambda x: nx.sin(x) * x, t64(a))
    np.testing.assert_allclose(out.to_numpy(), np.sin(a) * a)
    ct = np.array([1.0, 2.0, -1.0])
    (g,) = f_vjp(t64(ct))
    np.testing.assert_allclose(g.to_numpy(), ct * (np.cos(a) * a + np.sin(a)), rtol=1e-12)
    # jvp: J v against the closed form and against finite differences of the function
    v = np.array([0.5, 1.0, 2.0])
    out, tan = nx.jvp(
        lambda x, y: (nx.sin(x) * y, nx.sum(x * y)), (t64(a), t64(a)), (t64(v), t64(v))
    )
    np.testing.assert_allclose(out[0].to_numpy(), np.sin(a) * a)
    want = np.cos(a) * v * a + np.sin(a) * v
    np.testing.assert_allclose(tan[0].to_numpy(), want, rtol=1e-12)
    np.testing.assert_allclose(tan[1].item(), 2 * (a * v).sum(), rtol=1e-12)
    assert tan[0].dtype is F64 and tan[1].shape == ()
    eps = 1e-6
    fd = (np.sin(a + eps * v) * (a + eps * v) - np.sin(a - eps * v) * (a - eps * v)) / (2 * eps)
    np.testing.assert_allclose(tan[0].to_numpy(), fd, rtol=1e-7)


def test_vjp_and_jvp_take_python_floats_for_0d_values():
    out, tangent = nx.jvp(lambda x: x * x, (3.0,), (1.0,))
    assert (out.item(), tangent.item()) == (9.0, 6.0) and tangent.dtype is nx.float32
    _, f_vjp = nx.vjp(lambda x: x * x, 3.0)
    assert f_vjp(2.0)[0].item() == 12.0


def test_vjp_and_jvp_inside_jit():
    @nx.jit
    def both(x, c, v):
        _, f_vjp = nx.vjp(lambda y: y * y, x)
        _out, t = nx.jvp(lambda y: nx.exp(y), (x,), (v,))
        return f_vjp(c)[0], t

    x = t64([1.0, 2.0])
    g, t = both(x, t64([1.0, 0.5]), t64([1.0, 1.0]))
    np.testing.assert_allclose(g.to_numpy(), [2.0, 2.0])
    np.testing.assert_allclose(t.to_numpy(), np.exp([1.0, 2.0]))


def test_stop_grad():
    x = t64([2.0, 3.0])
    g = nx.grad(lambda x: nx.sum(x * nx.stop_grad(x)))(x)
    np.testing.assert_array_equal(g.to_numpy(), [2.0, 3.0])
    assert nx.stop_grad(x) is x  # eagerly the identity
    pair = nx.jit(lambda x: nx.stop_grad((x, {"a": x * 2})))(x)
    np.testing.assert_array_equal(pair[1]["a"].to_numpy(), [4.0, 6.0])


def test_custom_vjp_and_custom_grad():
    @nx.custom_vjp
    def clip_gradient(x):
        return x

    clip_gradient.defvjp(lambda x: (x, None), lambda _, g: (nx.clip(g, -1.0, 1.0),))
    g = nx.grad(lambda x: nx.sum(clip_gradient(x) * 5.0))(t64([1.0, 2.0]))
    np.testing.assert_array_equal(g.to_numpy(), [1.0, 1.0])
    assert clip_gradient(t64([4.0])).item() == 4.0

    @nx.custom_vjp
    def f(pair):
        return pair[0] * pair[1]

    f.defvjp(lambda p: (f(p), p), lambda p, g: ((g * p[1] * 10.0, None),))
    g = nx.grad(lambda p: f(p))((t64(2.0), t64(3.0)))
    assert g[0].item() == 30.0 and g[1].item() == 0.0

    def softsign(x):
        return nx.custom_grad(x / (1.0 + nx.abs(x)), [x], lambda g: [g * 7.0])

    g = nx.grad(lambda x: nx.sum(softsign(x)))(t64([1.0, -2.0]))
    np.testing.assert_array_equal(g.to_numpy(), [7.0, 7.0])


def test_custom_rules_under_cond_and_fori():
    def body(x):
        return nx.custom_grad(x * 2.0, [x], lambda g: [g * 5.0])

    f = lambda x: nx.cond(nx.sum(x) > 0, body, lambda y: y * 1.0, x)  # noqa: E731
    np.testing.assert_array_equal(nx.grad(lambda x: nx.sum(f(x)))(t64([1.0])).to_numpy(), [5.0])


def test_cond_differentiates_the_taken_branch():
    def f(x):
        return nx.cond(nx.sum(x) > 0, lambda y: nx.sum(y * y), lambda y: nx.sum(nx.sin(y)), x)

    a = np.array([0.5, 1.5])
    np.testing.assert_allclose(nx.grad(f)(t64(a)).to_numpy(), 2 * a)
    np.testing.assert_allclose(nx.grad(f)(t64(-a)).to_numpy(), np.cos(-a))
    check_fd(f, a)


@pytest.mark.parametrize("trips", [3, 12])  # unrolled; a reverse loop over a tape
def test_fori_loop_with_static_trip_count(trips):
    def f(x, w):
        return nx.sum(nx.fori_loop(0, trips, lambda i, s: nx.tanh(s * w + 0.1 * i) + 0.5, x))

    x, w = np.array([0.2, -0.4]), np.array([1.5, 0.5])
    check_fd(f, x, w, argnum=0)
    check_fd(f, x, w, argnum=1)
    # second order: the backward loop is itself a fori_loop with a static trip count
    g = nx.grad(f)
    check_fd(lambda x, w: nx.sum(g(x, w) * w), x, w, argnum=0, rtol=1e-5, atol=1e-7)
    # a cond inside the body
    h = lambda x: nx.sum(  # noqa: E731
        nx.fori_loop(0, trips, lambda i, s: nx.cond(i % 2 == 0, nx.sin, nx.cos, s) * 1.1, x)
    )
    check_fd(h, x)
    if trips > 3:  # the graph does not grow with the trip count
        assert len(nx.trace(g, t64(x), t64(w)).nodes) < 40


def test_while_loop_with_data_dependent_trip_count_is_refused():
    def f(x):
        return nx.sum(nx.while_loop(lambda s: nx.sum(s) < 10.0, lambda s: s * 2.0, x))

    with pytest.raises(WhileLoopGradError, match="fori_loop"):
        nx.grad(f)(t64([1.0]))
    # a loop the output does not depend on through floats is fine
    g = nx.grad(lambda x: nx.sum(x) + nx.while_loop(lambda i: i < 3, lambda i: i + 1, 0) * 0.0)
    np.testing.assert_array_equal(g(t64([1.0])).to_numpy(), [1.0])


# ---------------------------------------------------------------- errors


def test_errors_name_the_input_and_the_fix():
    with pytest.raises(NonDifferentiableDTypeError, match=r"argument 0 is s32\[2\].*astype"):
        nx.grad(lambda n: nx.sum(n) * 1.0)(nx.tensor([1, 2], dtype=nx.int32))
    with pytest.raises(NonDifferentiableDTypeError, match=r"argument 1\['k'\] is pred"):
        nx.grad(lambda a, d: a, argnums=1)(1.0, {"k": nx.tensor(True)})
    with pytest.raises(NonDifferentiableDTypeError, match="Python int 3"):
        nx.grad(lambda n: n * 1.0)(3)
    with pytest.raises(NonScalarOutputError, match=r"returned f32\[2\].*numerix.vjp"):
        nx.grad(lambda x: x * 2.0)(nx.tensor([1.0, 2.0]))
    with pytest.raises(NonDifferentiableDTypeError, match="0-d float"):
        nx.grad(lambda x: nx.argmax(x))(nx.tensor([1.0, 2.0]))
    with pytest.raises(NonTensorLeafError, match=r"argument 0\[1\] is a str"):
        nx.grad(lambda p: p[0])((1.0, "lr"))
    with pytest.raises(HasAuxError, match="pair"):
        nx.grad(lambda x: (x, x, x), has_aux=True)(1.0)
    with pytest.raises(nx.ArgumentError, match="argnums"):
        nx.grad(lambda x: x, argnums=[0])
    _, f_vjp = nx.vjp(lambda x: (x, x * 2.0), nx.tensor([1.0]))
    with pytest.raises(CotangentError, match="structure"):
        f_vjp(nx.tensor([1.0]))
    with pytest.raises(CotangentError, match="tangent"):
        nx.jvp(lambda x: x, (nx.tensor([1.0]),), (nx.tensor([1.0], dtype=F64),))
    for cls in (NonDifferentiableDTypeError, NonScalarOutputError, NonTensorLeafError):
        assert issubclass(cls, nx.NumerixError)


def test_custom_rule_errors():
    @nx.custom_vjp
    def f(x, y):
        return x * y

    with pytest.raises(CustomRuleError, match="defvjp"):
        f(1.0, 2.0)
    f.defvjp(lambda x, y: (x * y, (x, y)), lambda r, g: (g * r[1],))
    with pytest.raises(CustomRuleError, match="1 cotangents for 2 input"):
        nx.grad(f)(1.0, 2.0)
    f.defvjp(lambda x, y: (x * y, (x, y)), lambda r, g: (nx.ones((3,)), None))
    with pytest.raises(CustomRuleError, match=r"f32\[3\].*input 0"):
        nx.grad(f)(1.0, 2.0)
    with pytest.raises(CustomRuleError, match="custom_grad: fn returned"):
        nx.grad(lambda x: nx.custom_grad(x, [x], lambda g: g))(1.0)


def test_a_primitive_without_a_rule_is_named():
    prim = REGISTRY["sin"]
    rule = prim.vjp
    object.__setattr__(prim, "vjp", None)
    try:
        with pytest.raises(MissingRuleError, match=r"'sin' has no derivative rule.*stop_grad"):
            nx.grad(lambda x: nx.sin(x))(1.0)
    finally:
        object.__setattr__(prim, "vjp", rule)


def test_backward_of_a_dense_layer_has_no_shuffling_and_one_node_per_derivative():
    """A dense layer's backward pass: the weight's cotangent is one dot already in the
    weight's axis order (no transpose after it: an update reading it walks it
    contiguously), the bias's one sum over the batch (no reshape after it), and the
    derivatives of tanh and log_softmax one block node each (a backend may run each as
    one kernel); the values are the derivatives' all the same."""
    x, y = RNG.standard_normal((5, 3)), RNG.standard_normal((5, 4))

    def loss(w, b):
        return nx.sum(nx.log_softmax(nx.tanh(t64(x) @ w + b), axis=-1) * t64(y))

    w, b = RNG.standard_normal((3, 4)), RNG.standard_normal(4)
    graph = nx.trace(nx.grad(loss, argnums=(0, 1)), t64(w), t64(b))
    ops = [n.value.name if n.op == "block" else n.op for n in graph.nodes]
    assert "transpose" not in ops and "reshape" not in ops
    assert ops.count("tanh_grad") == ops.count("log_softmax_grad") == 1
    check_fd(loss, w, b, argnum=0)
    check_fd(loss, w, b, argnum=1)
    # grad of grad runs through the blocks' core versions
    check_fd(lambda w, b: nx.sum(nx.grad(loss)(w, b) ** 2), w, b, rtol=1e-5, atol=1e-6)
    # complex tanh keeps its ops (torch's tanh_backward conjugates, the rule does not)
    z = nx.tensor(np.array([0.5 + 0.25j, -1.0 + 0.5j]))
    ops = [n.value.name for n in nx.trace(nx.grad(lambda z: nx.real(nx.sum(nx.tanh(z)))), z).nodes
           if n.op == "block"]  # fmt: skip
    assert "tanh_grad" not in ops
