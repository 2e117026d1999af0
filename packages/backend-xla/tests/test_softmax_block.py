"""softmax and log_softmax in the xla compiler's program: the block kernels' lax
operations themselves, with no nested jit and no custom derivative (``jax.nn.softmax``
is a ``custom_jvp``, ``jax.nn.log_softmax`` a nested ``jax.jit``)."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

import numerix as nx
from numerix.defn import ArgSpec
from numerix_xla import compiler as xc


def _program(fn: Any, x: nx.Tensor) -> tuple[str, Any]:
    graph = nx.trace(fn, x)
    run = xc.XlaCompiler().compile(
        graph, [ArgSpec(x.shape, x.dtype, x.backend)], xc.XlaCompiler.default_options
    )
    text = run.lowered.lower(jax.ShapeDtypeStruct(x.shape, x.dtype.numpy_dtype)).as_text()  # type: ignore[attr-defined]
    jaxpr = jax.make_jaxpr(run.lowered)(x.data)  # type: ignore[attr-defined]
    return text, jaxpr


def test_softmax_blocks_lower_flat_in_the_xla_compiler() -> None:
    x = nx.tensor(np.arange(12.0, dtype=np.float32).reshape(3, 4), backend="xla")

    def f(a: Any) -> Any:
        return nx.softmax(a, axis=(0, 1)), nx.log_softmax(a.astype(nx.float16), axis=0)

    text, jaxpr = _program(f, x)
    assert text.count("func.func") == 1 and "call @" not in text, text
    (outer,) = jaxpr.jaxpr.eqns
    inner = [e.primitive.name for e in outer.params["jaxpr"].jaxpr.eqns]
    assert not {"jit", "pjit", "custom_jvp_call", "custom_vjp_call"} & set(inner), inner
    # the blocks' own form: one maximum and one sum each, no maximum's tie rule
    assert inner.count("reduce_max") == 2 and inner.count("reduce_sum") == 2, inner
