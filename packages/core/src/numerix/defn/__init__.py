"""Numerical definitions: trace a function to an expression graph, compile it, cache it.

``numerix`` re-exports :func:`defn`, :func:`jit`, :func:`compile`, :func:`template`,
:func:`trace`, :func:`cond`, :func:`while_loop`, :func:`fori_loop`,
:func:`print_value` and :func:`hook`. See ``docs/defn.md``.
"""

from numerix.defn.compilers import ArgSpec, Compiler
from numerix.defn.control import cond, fori_loop, hook, print_value, while_loop
from numerix.defn.expr import ExprBackend, Graph, Node
from numerix.defn.jit import Compiled, Jitted, compile, defn, jit
from numerix.defn.trace import Template, template, trace

__all__ = [
    "defn", "jit", "compile", "template", "trace", "cond", "while_loop", "fori_loop",
    "print_value", "hook", "Compiler", "ArgSpec", "Graph", "Node", "ExprBackend", "Template",
    "Jitted", "Compiled",
]  # fmt: skip
