"""Numerical definitions: trace a function to an expression graph, compile it, cache it.

``numerix`` re-exports :func:`defn`, :func:`jit`, :func:`compile`, :func:`template`,
:func:`trace`, :func:`cond`, :func:`while_loop`, :func:`fori_loop`,
:func:`print_value`, :func:`hook`, :func:`stream` and the differentiation transforms of
:mod:`numerix.defn.autodiff`. See ``docs/defn.md`` and ``docs/grad.md``.
"""

import importlib as _importlib
from typing import Any

from numerix.defn.compilers import ArgSpec, Compiler
from numerix.defn.expr import ExprBackend, Graph, Node
from numerix.defn.jit import Compiled, Jitted, compile, defn, jit
from numerix.defn.trace import Template, template, trace

__all__ = [
    "defn", "jit", "compile", "template", "trace", "cond", "while_loop", "fori_loop",
    "print_value", "hook", "Compiler", "ArgSpec", "Graph", "Node", "ExprBackend", "Template",
    "Jitted", "Compiled", "grad", "value_and_grad", "vjp", "jvp", "stop_grad", "custom_vjp",
    "custom_grad", "checkpoint", "vmap", "jacrev", "jacfwd", "hessian", "scan", "stream",
    "export", "load_exported", "Choice",
]  # fmt: skip

# The transforms and control flow load on first use (PEP 562): jit, compile and
# load_exported need none of autodiff's 88 KiB of bytecode, nor control's (which loads
# the indexing ops).
_TRANSFORMS = {
    "Choice": "numerix.defn.auto",
    **dict.fromkeys(("cond", "fori_loop", "hook", "print_value", "scan", "while_loop"),
                    "numerix.defn.control"),
    **dict.fromkeys(("grad", "value_and_grad", "vjp", "jvp", "stop_grad", "custom_vjp",
                     "custom_grad", "checkpoint"), "numerix.defn.autodiff"),
    "vmap": "numerix.defn.batching",
    "stream": "numerix.defn.streaming",
    **dict.fromkeys(("export", "load_exported"), "numerix.defn.exporting"),
    **dict.fromkeys(("jacrev", "jacfwd", "hessian"), "numerix.defn.jacobians"),
}  # fmt: skip


def __getattr__(name: str) -> Any:
    module = _TRANSFORMS.get(name)
    if module is None:
        raise AttributeError(f"module 'numerix.defn' has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_TRANSFORMS})
