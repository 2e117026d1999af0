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

from numerix._meeting import meeting_backend
from numerix.backend import Backend
from numerix.configuration import get_default_backend
from numerix.defn.compilers import ArgSpec, Compiler, Executable
from numerix.defn.replay import lower, run_program

__all__ = ["Evaluator", "target_backend"]


def target_backend(args_spec: Sequence[ArgSpec]) -> Backend:
    """The backend a program runs on: where the arguments meet (host arguments join
    another backend, as in eager code; see :func:`numerix._meeting.meeting_backend`),
    else the default backend."""
    return meeting_backend("jit", args_spec, noun="argument") or get_default_backend()


class Evaluator(Compiler):
    """Runs the graph on the arguments' backend (the default backend when there are
    none); captured tensors move there once, when compiling."""

    name = "evaluator"

    def compile(
        self, graph: Any, args_spec: Sequence[ArgSpec], options: Mapping[str, Any]
    ) -> Executable:
        backend = target_backend(args_spec)
        return run_program(lower(graph, backend), args_spec)
