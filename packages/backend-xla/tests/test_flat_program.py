"""The xla compiler's program is flat: the body of the one ``jax.jit`` function holds the
``lax`` operations of the primitives themselves, not one nested jitted call per kernel
(each nested call is a function XLA lowers, and compiles, apart)."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

import numerix as nx
from numerix.defn import ArgSpec
from numerix_xla import compiler as xc


def _lowered(fn: Any, *args: Any) -> tuple[Any, str, Any]:
    """The compiled program of ``fn`` for ``args``, its lowered StableHLO text and its jaxpr."""
    graph = nx.trace(fn, *args)
    specs = [ArgSpec(a.shape, a.dtype, a.backend) for a in args]
    run = xc.XlaCompiler().compile(graph, specs, xc.XlaCompiler.default_options)
    structs = [jax.ShapeDtypeStruct(a.shape, a.dtype.numpy_dtype) for a in args]
    text = run.lowered.lower(*structs).as_text()  # type: ignore[attr-defined]
    jaxpr = jax.make_jaxpr(run.lowered)(*[a.data for a in args])  # type: ignore[attr-defined]
    return run, text, jaxpr


def _nested_jits(jaxpr: Any) -> list[str]:
    """The names of the jit equations inside the program's own (outermost) jit."""
    (outer,) = jaxpr.jaxpr.eqns
    inner = outer.params["jaxpr"].jaxpr
    return [str(e.params.get("name")) for e in inner.eqns if e.primitive.name in ("jit", "pjit")]


def test_elementwise_ops_and_a_dot_lower_to_one_function() -> None:
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((2, 3)).astype(np.float32)
    w_np = rng.standard_normal((3, 4)).astype(np.float32)
    x, w = nx.tensor(x_np, backend="xla"), nx.tensor(w_np, backend="xla")

    def f(v: Any, m: Any) -> Any:
        y = nx.exp(v) * 2.0 + v  # exp, multiply by a Python scalar, add
        y = nx.tanh(y) - v  # tanh, subtract
        return nx.dot(y, m)

    run, text, jaxpr = _lowered(f, x, w)
    assert text.count("func.func") == 1, text  # @main alone
    assert "call @" not in text and "func.call" not in text, text
    assert _nested_jits(jaxpr) == [], jaxpr
    for op in ("exponential", "multiply", "add", "tanh", "subtract", "dot_general"):
        assert f"stablehlo.{op}" in text, (op, text)
    y = np.tanh(np.exp(x_np) * np.float32(2.0) + x_np) - x_np
    (got,) = run([x, w])
    assert got.dtype is nx.float32 and got.shape == (2, 4) and got.backend is x.backend
    np.testing.assert_allclose(got.to_numpy(), y @ w_np, rtol=1e-5, atol=1e-6)


def test_control_flow_and_reductions_stay_flat() -> None:
    x_np = np.array([0.5, -1.5, 2.0, 3.0], dtype=np.float32)
    x = nx.tensor(x_np, backend="xla")

    def f(v: Any) -> Any:
        s = nx.sum(v * v)
        y = nx.cond(s > 1.0, lambda a: nx.exp(a - nx.max(a)), lambda a: a + 1.0, v)
        return nx.while_loop(lambda a: nx.sum(a) < 100.0, lambda a: a * 2.0, y)

    run, text, jaxpr = _lowered(f, x)
    assert text.count("func.func") == 1, text
    assert "call @" not in text and "func.call" not in text, text
    assert _nested_jits(jaxpr) == [], jaxpr
    e = np.exp(x_np - x_np.max())
    while e.sum() < 100.0:
        e = e * np.float32(2.0)
    (got,) = run([x])
    assert got.dtype is nx.float32 and got.shape == (4,)
    np.testing.assert_allclose(got.to_numpy(), e, rtol=1e-5)
