"""numerix.grad, value_and_grad and jvp against jax.grad, jax.value_and_grad and jax.jvp,
on the xla backend eagerly and under the evaluator and xla compilers; the seeds' MLP
(dense, relu, dense, softmax, cross-entropy) within 1e-6 in float32 on every
compiler."""

from __future__ import annotations

import importlib.util

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import numerix as nx

RNG = np.random.default_rng(11)
COMPILERS = ["evaluator", "xla"]


def xt(a):
    return nx.tensor(np.asarray(a), backend="xla")


FUNCTIONS = {
    "polynomial": (lambda x: nx.sum(x**3 - 2.0 * x), lambda x: jnp.sum(x**3 - 2.0 * x)),
    "transcendental": (
        lambda x: nx.sum(nx.sin(x) * nx.exp(x / 4.0) + nx.tanh(x)),
        lambda x: jnp.sum(jnp.sin(x) * jnp.exp(x / 4.0) + jnp.tanh(x)),
    ),
    "softmax": (
        lambda x: nx.sum(nx.softmax(x, axis=-1) * nx.arange(4.0)),
        lambda x: jnp.sum(jax.nn.softmax(x, axis=-1) * jnp.arange(4.0)),
    ),
    "matmul": (lambda x: nx.sum(nx.tanh(x @ x.T)), lambda x: jnp.sum(jnp.tanh(x @ x.T))),
    "reductions": (
        lambda x: nx.sum(nx.max(x, axis=1) * nx.mean(x, axis=1)) + nx.prod(x[0]),
        lambda x: jnp.sum(jnp.max(x, axis=1) * jnp.mean(x, axis=1)) + jnp.prod(x[0]),
    ),
    "cond": (
        lambda x: nx.cond(nx.sum(x) > 0, lambda y: nx.sum(y * y), lambda y: nx.sum(-y), x),
        lambda x: jax.lax.cond(jnp.sum(x) > 0, lambda y: jnp.sum(y * y), lambda y: jnp.sum(-y), x),
    ),
    "fori_loop": (
        lambda x: nx.sum(nx.fori_loop(0, 3, lambda i, s: nx.sin(s) * x, x)),
        lambda x: jnp.sum(jax.lax.fori_loop(0, 3, lambda i, s: jnp.sin(s) * x, x)),
    ),
    "fori_loop_long": (  # differentiated by a reverse loop over a tape
        lambda x: nx.sum(nx.fori_loop(0, 12, lambda i, s: nx.sin(s) * x + 0.1, x)),
        lambda x: jnp.sum(jax.lax.fori_loop(0, 12, lambda i, s: jnp.sin(s) * x + 0.1, x)),
    ),
}


# every function under the xla compiler; eagerly (grad runs with the default compiler,
# the evaluator, whose per-op kernels each compile once) a few: the core's tests check
# the evaluator against finite differences
CASES = [(name, "xla") for name in sorted(FUNCTIONS)] + [
    (name, "evaluator") for name in ("cond", "fori_loop_long", "softmax")
]


@pytest.mark.parametrize(("name", "compiler"), CASES)
def test_grad_equals_jax_grad(name, compiler):
    ours, theirs = FUNCTIONS[name]
    a = RNG.standard_normal((3, 4)).astype(np.float32)
    g = nx.grad(ours) if compiler == "evaluator" else nx.jit(nx.grad(ours), compiler=compiler)
    got = g(xt(a))
    want = jax.grad(theirs)(jnp.asarray(a))
    assert got.backend.name == "xla" and got.dtype is nx.float32 and got.shape == a.shape
    np.testing.assert_allclose(got.to_numpy(), np.asarray(want), rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("compiler", COMPILERS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_relu_derivative_at_its_kink_equals_jax(compiler, dtype):
    # 0 at 0 and -0.0 (jax.nn.relu, torch.relu), not maximum's shared tie (0.5)
    a = np.array([-1.0, -0.0, 0.0, 2.0, np.inf, -np.inf, np.nan], dtype)

    def f(x):
        return nx.sum(nx.relu(x) * 3.0)

    g = nx.grad(f) if compiler == "evaluator" else nx.jit(nx.grad(f), compiler=compiler)
    got = g(xt(a))
    want = np.asarray(jax.grad(lambda x: jnp.sum(jax.nn.relu(x) * 3.0))(jnp.asarray(a)))
    assert got.dtype is getattr(nx, dtype) and got.shape == a.shape
    np.testing.assert_array_equal(got.to_numpy(), want)
    np.testing.assert_array_equal(nx.relu(xt(a)).to_numpy(), np.asarray(jax.nn.relu(a)))


@pytest.mark.parametrize("compiler", COMPILERS)
def test_second_order_and_jvp_equal_jax(compiler):
    ours, theirs = FUNCTIONS["transcendental"]
    a = RNG.standard_normal(5).astype(np.float32)
    v = RNG.standard_normal(5).astype(np.float32)
    hvp = nx.jit(lambda x, v: nx.jvp(nx.grad(ours), (x,), (v,))[1], compiler=compiler)
    want = jax.jvp(jax.grad(theirs), (jnp.asarray(a),), (jnp.asarray(v),))[1]
    np.testing.assert_allclose(hvp(xt(a), xt(v)).to_numpy(), np.asarray(want), rtol=1e-4, atol=1e-5)
    out, tan = nx.jit(lambda x, v: nx.jvp(ours, (x,), (v,)), compiler=compiler)(xt(a), xt(v))
    j_out, j_tan = jax.jvp(theirs, (jnp.asarray(a),), (jnp.asarray(v),))
    np.testing.assert_allclose(out.item(), float(j_out), rtol=1e-6)
    np.testing.assert_allclose(tan.item(), float(j_tan), rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- the seeds' MLP


def mlp_loss(params, x, y):
    w1, b1, w2, b2 = params
    h = nx.relu(nx.dot(x, w1) + b1)
    probs = nx.softmax(nx.dot(h, w2) + b2, axis=-1)
    return -nx.mean(nx.sum(y * nx.log(probs), axis=-1))


def jax_loss(params, x, y):
    w1, b1, w2, b2 = params
    h = jax.nn.relu(x @ w1 + b1)
    probs = jax.nn.softmax(h @ w2 + b2, axis=-1)
    return -jnp.mean(jnp.sum(y * jnp.log(probs), axis=-1))


def mlp_data():
    x = RNG.random((64, 64)).astype(np.float32)
    y = np.eye(10, dtype=np.float32)[RNG.integers(0, 10, 64)]
    params = [
        (RNG.standard_normal((64, 32)) * 0.1).astype(np.float32),
        np.zeros(32, np.float32),
        (RNG.standard_normal((32, 10)) * 0.1).astype(np.float32),
        np.zeros(10, np.float32),
    ]
    return params, x, y


SETTINGS = [("xla", "evaluator"), ("xla", "xla"), ("binary", "evaluator")]
if importlib.util.find_spec("numerix_torch") is not None:  # the integration environment
    SETTINGS.append(("torch", "torch"))


@pytest.mark.parametrize(("backend", "compiler"), SETTINGS)
def test_mlp_value_and_grad_equals_jax(backend, compiler):
    params, x, y = mlp_data()
    step = nx.jit(nx.value_and_grad(mlp_loss), compiler=compiler)
    ps = [nx.tensor(p, backend=backend) for p in params]
    loss, grads = step(ps, nx.tensor(x, backend=backend), nx.tensor(y, backend=backend))
    j_loss, j_grads = jax.value_and_grad(jax_loss)([jnp.asarray(p) for p in params], x, y)
    assert loss.dtype is nx.float32 and loss.shape == ()
    np.testing.assert_allclose(loss.item(), float(j_loss), rtol=1e-6, atol=1e-6)
    for g, j, p in zip(grads, j_grads, params):
        assert g.dtype is nx.float32 and g.shape == p.shape
        np.testing.assert_allclose(g.to_numpy(), np.asarray(j), rtol=1e-6, atol=1e-6)
