"""The ``evaluator`` compiler: runs a graph with the backend of the arguments.

Compiling writes the graph out as one Python function (:mod:`numerix.defn.replay`):
each node a call of the backend's lowered kernel, or of its primitive method, in
order, with no validation left (the core checked everything while tracing);
constants and captured tensors move to the backend once; each intermediate is
dropped right after its last use. Unlike Nx's evaluator, the trace is cached with the
program (by :func:`numerix.jit`), never redone per call.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from numerix.backend import Backend
from numerix.defn.compilers import ArgSpec, Compiler, Executable
from numerix.defn.replay import lower, run_program
from numerix.errors import BackendMismatchError

__all__ = ["Evaluator", "target_backend"]


def target_backend(args_spec: Sequence[ArgSpec]) -> Backend:
    """The backend a program runs on: the arguments' (host arguments join another
    backend, as in eager code), else the default backend."""
    from numerix.defaults import get_default_backend

    target: Backend | None = None
    host: Backend | None = None
    for s in args_spec:
        b = s.backend
        if b.is_host:
            host = host or b
        elif target is None:
            target = b
        elif b is not target:
            listing = ", ".join(
                f"{a.dtype.short}{list(a.shape)} on {a.backend!r}" for a in args_spec
            )
            raise BackendMismatchError(
                f"jit: the arguments live on different backends or devices ({listing}); move "
                f"them to one first, e.g. numerix.backend_transfer(t, {target.name!r})"
            )
    return target or host or get_default_backend()


class Evaluator(Compiler):
    """Runs the graph on the arguments' backend (the default backend when there are
    none); captured tensors move there once, when compiling."""

    name = "evaluator"

    def compile(
        self, graph: Any, args_spec: Sequence[ArgSpec], options: Mapping[str, Any]
    ) -> Executable:
        backend = target_backend(args_spec)
        return run_program(lower(graph, backend), args_spec)
