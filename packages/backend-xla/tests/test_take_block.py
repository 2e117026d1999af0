"""The take block in the xla compiler's program: the kernel's one ``gather``, inlined, with
no nested jit and no clamp of its own (the core wraps and clamps a traced index first)."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

import numerix as nx
from numerix.defn import ArgSpec
from numerix_xla import compiler as xc


def test_take_block_lowers_to_one_gather_in_the_xla_compiler() -> None:
    a = np.arange(24, dtype=np.float32).reshape(4, 3, 2)
    i = np.array([[3, -1], [0, 2]], np.int64)
    x, k = nx.tensor(a, backend="xla"), nx.tensor(i, backend="xla")

    def f(u: Any, j: Any) -> Any:
        return u[j], nx.take(u, j[0], axis=0)

    graph = nx.trace(f, x, k)
    assert [n.value.name for n in graph.nodes if n.op == "block"] == ["take", "take"]
    specs = [ArgSpec(t.shape, t.dtype, t.backend) for t in (x, k)]
    run = xc.XlaCompiler().compile(graph, specs, xc.XlaCompiler.default_options)
    structs = [jax.ShapeDtypeStruct(t.shape, t.dtype.numpy_dtype) for t in (x, k)]
    text = run.lowered.lower(*structs).as_text()  # type: ignore[attr-defined]
    assert text.count("func.func") == 1 and "call @" not in text, text
    jaxpr = jax.make_jaxpr(run.lowered)(x.data, k.data)  # type: ignore[attr-defined]
    (outer,) = jaxpr.jaxpr.eqns
    inner = [e.primitive.name for e in outer.params["jaxpr"].jaxpr.eqns]
    assert not {"jit", "pjit"} & set(inner), inner
    assert inner.count("gather") == 2, inner
    got, first = run([x, k])
    assert got.dtype is nx.float32 and got.shape == (2, 2, 3, 2)
    np.testing.assert_array_equal(got.to_numpy(), a[i])
    np.testing.assert_array_equal(first.to_numpy(), a[i[0]])
