"""The one walk over a traced graph that the compilers turn into code.

:class:`GraphWalk` visits the nodes of a :class:`~numerix.defn.expr.Graph` in order
(parameters excepted: their values are given) and dispatches each to one method per
node kind: ``constant`` (a ``constant`` or captured ``tensor``), ``elem`` (one value of
a multi-valued node), ``hook``, ``cond``, ``loop`` (``while``), ``block`` and
``primitive`` (everything else). A subclass says what each kind becomes; ``env`` maps a
node's id to what the subclass made of it, and extra arguments of :meth:`~GraphWalk.walk`
reach every method.

Two subclasses: the replay's source writer (:mod:`numerix.defn.replay`, the evaluator's
and the torch compiler's programs) and the xla compiler's lowering to one ``jax.jit``
function (``numerix_xla.compiler``). What both compute about a node is here too:
:func:`subgraph_inputs` (the values a ``cond`` branch or a ``while`` function takes),
:func:`native_block` (the backend's own ``block_<name>``, else the core's graph),
:meth:`GraphWalk.captured_payload` (a captured tensor moved to the backend once) and
:func:`last_reads` (where each value is read for the last time), and
:func:`fingerprint` (what a program compiled from the graph is filed under).
"""

from __future__ import annotations

import hashlib
import weakref
from collections.abc import Callable
from typing import Any

from numerix._meeting import check_live
from numerix._tensor import Tensor
from numerix.backend import Backend
from numerix.defn.expr import (
    BLOCK,
    COND,
    CONSTANT,
    ELEM,
    FOLD_LIMIT,
    HOOK,
    PARAMETER,
    TENSOR,
    WHILE,
    Graph,
    Node,
    freeze,
)
from numerix.ops import _core

__all__ = ["GraphWalk", "fingerprint", "last_reads", "native_block", "subgraph_inputs"]

#: node kind -> the name of the GraphWalk method visiting it (any other op: ``primitive``)
_KINDS = {
    CONSTANT: "constant",
    TENSOR: "constant",
    ELEM: "elem",
    HOOK: "hook",
    COND: "cond",
    WHILE: "loop",
    BLOCK: "block",
}


class GraphWalk:
    """Visits a graph's nodes for ``backend`` (see the module); collects the tensors the
    graph captured, moved to ``backend`` once each."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        #: the payloads of the captured tensors on ``backend``, in the order first met
        self.captured_payloads: list[Any] = []
        #: weak references to those tensors, as the user holds them (a program whose
        #: call fails says when one was deallocated since)
        self.captured: list[weakref.ref[Tensor]] = []
        self._captured_index: dict[int, int] = {}
        self._visit: dict[str, Callable[..., Any]] = {
            op: getattr(self, name) for op, name in _KINDS.items()
        }
        self._primitive = self.primitive

    def walk(self, g: Graph, env: dict[int, Any], *context: Any) -> None:
        """Visit every node of ``g`` but its parameters (whose entries ``env`` holds):
        ``env[n.id] = method(n, env, *context)``; a method returning None leaves ``env``
        as it set it."""
        visit, primitive = self._visit, self._primitive
        for n in g.nodes:
            op = n.op
            if op == PARAMETER:
                continue
            r = visit.get(op, primitive)(n, env, *context)
            if r is not None:
                env[n.id] = r
            self.visited(n, env, *context)

    def visited(self, n: Node, env: dict[int, Any], *context: Any) -> None:
        """Called after each node (nothing by default)."""

    # one method per node kind
    def constant(self, n: Node, env: dict[int, Any], *context: Any) -> Any:
        raise NotImplementedError

    def elem(self, n: Node, env: dict[int, Any], *context: Any) -> Any:
        raise NotImplementedError

    def hook(self, n: Node, env: dict[int, Any], *context: Any) -> Any:
        raise NotImplementedError

    def cond(self, n: Node, env: dict[int, Any], *context: Any) -> Any:
        raise NotImplementedError

    def loop(self, n: Node, env: dict[int, Any], *context: Any) -> Any:
        raise NotImplementedError

    def block(self, n: Node, env: dict[int, Any], *context: Any) -> Any:
        raise NotImplementedError

    def primitive(self, n: Node, env: dict[int, Any], *context: Any) -> Any:
        raise NotImplementedError

    # what every walk needs
    def captured_payload(self, n: Node) -> tuple[int, Any]:
        """``(k, payload)``: the ``k``-th captured value, ``n``'s tensor moved to the
        backend (once per node, however often it is visited). A deallocated tensor
        raises :class:`~numerix.errors.DeallocatedError`."""
        k = self._captured_index.get(n.id)
        if k is None:
            v: Tensor = n.value
            check_live("jit", v, "a captured tensor")
            k = self._captured_index[n.id] = len(self.captured_payloads)
            self.captured_payloads.append(_core.on_backend(v, self.backend).data)
            self.captured.append(weakref.ref(v))
        return k, self.captured_payloads[k]


def subgraph_inputs(n: Node, g: Graph, skip: int) -> list[Any]:
    """The values subgraph ``g`` of node ``n`` takes, in the order of its parameters: its
    explicit arguments (``n.inputs`` from ``skip``: after a ``cond``'s predicate) and then
    its free values (nodes of the enclosing graph)."""
    return [*n.inputs[skip : skip + g.n_args], *g.free]


def native_block(backend: Backend, n: Node) -> Callable[..., Any] | None:
    """The backend class's own function for block ``n`` (``block_<name>``, called as
    ``impl(backend, out, *inputs, **params)``), or None: the core's version
    (``n.fallback``, a graph) runs instead."""
    return getattr(type(backend), n.value.method, None)


def last_reads(g: Graph) -> dict[int, int]:
    """Node id -> the position in ``g.nodes`` of the last node reading it as an input
    (a ``cond``'s or ``while``'s free values are among its inputs). Values no node
    reads are absent; ``g.outputs`` are read after the last node."""
    last: dict[int, int] = {}
    for k, n in enumerate(g.nodes):
        for i in n.inputs:
            if isinstance(i, Node):
                last[i.id] = k
    return last


class Unfingerprinted(Exception):
    """A graph :func:`fingerprint` cannot identify (it calls Python: a hook)."""


def fingerprint(g: Graph) -> str | None:
    """A digest that two graphs share only when every program compiled from them is the
    same, given the same argument types: each node's kind, inputs, parameters and type,
    in order, subgraphs included; the values of the constants a program may hold as
    literals (those of at most :data:`~numerix.defn.expr.FOLD_LIMIT` elements); a
    captured tensor, or a larger constant, by its type alone (a compiled program takes
    those as extra arguments, as :class:`GraphWalk` collects them). A block is its name
    and parameters, and for one recorded with its own graph (a custom derivative, a
    checkpoint), that graph.

    None where the graph cannot be identified: it calls back into Python (a hook), or
    holds a parameter with no faithful text. The code that compiles a graph is not part
    of the digest: a cache keyed by it adds the compiler's version (see the xla
    compiler's program cache).
    """
    h = hashlib.sha256()
    try:
        _digest(g, h)
    except (Unfingerprinted, TypeError):
        return None
    return h.hexdigest()


def _digest(g: Graph, h: Any) -> None:
    index = {n.id: k for k, n in enumerate(g.nodes)}
    h.update(f"graph {len(g.nodes)} {g.n_args} {len(g.free)}\n".encode())
    for n in g.nodes:
        op = n.op
        if op == HOOK:
            raise Unfingerprinted(op)
        ins = tuple(("node", index[i.id]) if isinstance(i, Node) else freeze(i) for i in n.inputs)
        h.update(repr((op, ins, freeze(n.params), n.shape, str(n.dtype), n.types)).encode())
        if op in (CONSTANT, TENSOR):
            v = n.value
            if op == CONSTANT and v.size <= FOLD_LIMIT:
                check_live("jit", v, "a captured tensor")
                h.update(v.backend.to_numpy(v).tobytes())
        elif op == BLOCK:
            h.update(f"block {n.value.name}".encode())
            if n.fallback_fn is None and n._fallback is not None:
                _digest(n._fallback, h)  # recorded with its own graph
        for sub in n.subgraphs:
            _digest(sub, h)
        h.update(b"\n")
    h.update(repr([index[o.id] for o in g.outputs]).encode())
