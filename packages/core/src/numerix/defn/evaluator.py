"""The ``evaluator`` compiler: interprets a graph with the backend of the arguments.

Compiling resolves each node to a bound backend method, moves constants and captured
tensors to the backend once, and computes where each intermediate is used last; a
run then calls the primitives in order (the core validated everything while
tracing) and drops each intermediate right after its last use. Unlike Nx's
evaluator, the trace is cached with the program (by :func:`numerix.jit`), never
redone per call.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from numerix._tensor import Tensor
from numerix.backend import Backend
from numerix.defn.compilers import ArgSpec, Compiler, Executable
from numerix.defn.expr import (
    BLOCK,
    COND,
    CONSTANT,
    ELEM,
    HOOK,
    PARAMETER,
    TENSOR,
    WHILE,
    Graph,
    Node,
)
from numerix.errors import BackendMismatchError

__all__ = ["Evaluator", "target_backend"]

_new = Tensor.__new__
_PRIM, _ELEM, _HOOK, _COND, _WHILE, _BLOCK, _NATIVE = range(7)


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
    """Interprets the graph on the arguments' backend (the default backend when there
    are none); captured tensors move there once, when compiling."""

    name = "evaluator"

    def compile(
        self, graph: Any, args_spec: Sequence[ArgSpec], options: Mapping[str, Any]
    ) -> Executable:
        backend = target_backend(args_spec)
        program = _Program(graph, backend, {})
        moves = [
            i for i, s in enumerate(args_spec) if s.backend is not backend
        ]  # host arguments meeting another backend move per call, as eagerly
        if not moves:
            return program.run

        def run(args: Sequence[Any]) -> list[Any]:
            from numerix.ops._core import on_backend

            args = list(args)
            for i in moves:
                args[i] = on_backend(args[i], backend)
            return program.run(args)

        return run


class _Program:
    """One graph, ready to run on ``backend``."""

    __slots__ = ("backend", "init", "instrs", "out_slots", "param_slots")

    def __init__(self, graph: Graph, backend: Backend, moved: dict[int, Tensor]) -> None:
        from numerix.ops._core import on_backend

        self.backend = backend
        slot: dict[int, int] = {}
        init: list[Any] = []

        def new_slot(value: Any = None) -> int:
            init.append(value)
            return len(init) - 1

        for n in graph.nodes:
            if n.op in (CONSTANT, TENSOR):
                v = moved.get(n.id)
                if v is None:
                    v = moved[n.id] = on_backend(n.value, backend)
                slot[n.id] = new_slot(v)
            else:
                slot[n.id] = new_slot()
        self.param_slots = [slot[p.id] for p in graph.parameters]
        self.out_slots = [slot[o.id] for o in graph.outputs]

        raw: list[list[Any]] = []
        for n in graph.nodes:
            if n.op in (PARAMETER, CONSTANT, TENSOR):
                continue
            ins = [slot[i.id] if isinstance(i, Node) else new_slot(i) for i in n.inputs]
            raw.append(self._instr(n, slot[n.id], ins, moved))

        # drop each value right after the instruction that uses it last
        last: dict[int, int] = {}
        for k, ins in enumerate(r[3] for r in raw):
            for s in ins:
                last[s] = k
        keep = set(self.out_slots)
        frees: list[list[int]] = [[] for _ in raw]
        for s, k in last.items():
            if s not in keep:
                frees[k].append(s)
        self.instrs = [(*r, tuple(f)) for r, f in zip(raw, frees)]
        self.init = init

    def _instr(self, n: Node, out: int, ins: list[int], moved: dict[int, Tensor]) -> list[Any]:
        b = self.backend
        if n.op == ELEM:
            return [_ELEM, out, None, ins, None, None, n.params["index"]]
        if n.op == HOOK:
            return [_HOOK, out, n.value, ins, None, None, None]
        if n.op == COND:
            t, f = n.subgraphs
            progs = (_Program(t, b, moved), _Program(f, b, moved))
            args = _split_args(n, ins, 1, (t, f))
            return [_COND, out, progs, ins, None, None, args]
        if n.op == WHILE:
            c, body = n.subgraphs
            progs = (_Program(c, b, moved), _Program(body, b, moved))
            args = _split_args(n, ins, 0, (c, body))
            return [_WHILE, out, progs, ins, c.n_args, None, args]
        if n.op == BLOCK:
            impl = getattr(type(b), n.value.method, None)
            if impl is not None:
                return [_NATIVE, out, impl, ins, n.types or n.shape, n.dtype, n.params]
            return [_BLOCK, out, _Program(n.fallback, b, moved), ins, n.types, None, None]
        return [_PRIM, out, getattr(b, n.op), ins, n.shape, n.dtype, n.params]

    def run(self, args: Sequence[Any]) -> list[Any]:
        env = self.init.copy()
        for s, a in zip(self.param_slots, args):
            env[s] = a
        backend = self.backend
        for kind, slot, fn, ins, shape, dtype, params, frees in self.instrs:
            if kind == _PRIM:
                out = _new(Tensor)
                out.shape = shape
                out.dtype = dtype
                out.backend = backend
                out.data = None
                env[slot] = fn(out, *[env[i] for i in ins], **params)
            elif kind == _ELEM:
                env[slot] = env[ins[0]][params]
            elif kind == _HOOK:
                v = env[ins[0]]
                fn(v)
                env[slot] = v
            elif kind == _COND:
                branch = 0 if _truth(env[ins[0]]) else 1
                env[slot] = fn[branch].run([env[i] for i in params[branch]])
            elif kind == _WHILE:
                cond, body = fn
                cargs, bargs = params
                state = [env[i] for i in cargs[:shape]]
                cfree = [env[i] for i in cargs[shape:]]
                bfree = [env[i] for i in bargs[shape:]]
                while _truth(cond.run(state + cfree)[0]):
                    state = body.run(state + bfree)
                env[slot] = state
            elif kind == _NATIVE:
                outs = _outs(shape, dtype, backend)
                r = fn(backend, outs, *[env[i] for i in ins], **params)
                env[slot] = list(r) if isinstance(r, tuple) else r
            else:  # _BLOCK: the core's version
                r = fn.run([env[i] for i in ins])
                env[slot] = r if shape is not None else r[0]
            for f in frees:
                env[f] = None
        return [env[s] for s in self.out_slots]


def _split_args(n: Node, ins: list[int], skip: int, graphs: Sequence[Graph]) -> list[list[int]]:
    """The slots each subgraph of ``n`` takes: its explicit arguments (the node's inputs
    after ``skip``), then its free values."""
    slot_of = dict(zip((i.id for i in n.inputs), ins))
    out = []
    for g in graphs:
        explicit = ins[skip : skip + g.n_args]
        out.append(explicit + [slot_of[f.id] for f in g.free])
    return out


def _outs(types: Any, dtype: Any, backend: Backend) -> Any:
    def one(shape: tuple[int, ...], d: Any) -> Tensor:
        t = _new(Tensor)
        t.shape, t.dtype, t.backend, t.data = shape, d, backend, None
        return t

    if dtype is None:
        return tuple(one(s, d) for s, d in types)
    return one(types, dtype)


def _truth(t: Tensor) -> bool:
    return bool(t.backend.to_numpy(t))
