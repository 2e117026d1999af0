"""Numerical definitions: trace a function to an expression graph, compile it, cache it.

``numerix`` re-exports :func:`defn`, :func:`jit`, :func:`compile`, :func:`template`,
:func:`trace`, :func:`cond`, :func:`while_loop`, :func:`fori_loop`,
:func:`print_value`, :func:`hook` and the differentiation transforms of
:mod:`numerix.defn.autodiff`. See ``docs/defn.md`` and ``docs/grad.md``.
"""

from numerix.defn.autodiff import (
    custom_grad,
    custom_vjp,
    grad,
    jvp,
    stop_grad,
    value_and_grad,
    vjp,
)
from numerix.defn.compilers import ArgSpec, Compiler
from numerix.defn.control import cond, fori_loop, hook, print_value, while_loop
from numerix.defn.expr import ExprBackend, Graph, Node
from numerix.defn.jit import Compiled, Jitted, compile, defn, jit
from numerix.defn.trace import Template, template, trace

__all__ = [
    "defn", "jit", "compile", "template", "trace", "cond", "while_loop", "fori_loop",
    "print_value", "hook", "Compiler", "ArgSpec", "Graph", "Node", "ExprBackend", "Template",
    "Jitted", "Compiled", "grad", "value_and_grad", "vjp", "jvp", "stop_grad", "custom_vjp",
    "custom_grad",
]  # fmt: skip
