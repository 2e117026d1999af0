"""The ``torch`` compiler: a traced graph lowered to one Python function over torch tensors.

Compiling resolves each node to the bound kernel of the :class:`TorchBackend` of the
program's device and preallocates its ``out`` shell (a numerix Tensor whose shape, dtype
and backend never change); captured tensors and constants move to the device once. The
graph is then written out as the source of one function (``cond`` and ``while`` as Python
``if``/``while`` over the concrete predicate, blocks as the backend's ``block_<name>`` or
the core's fallback inlined): a call is a flat sequence of kernel calls, with no
validation and no Tensor created but the outputs. Each shell's array is dropped after its
last use, so intermediates are freed as the evaluator frees them.

Options: ``mode`` (``"replay"``: run that function; ``"inductor"``: hand it to
``torch.compile(fullgraph=True)``), ``device`` and ``device_id`` (default: the
arguments' torch device, else the torch backend's default device).
"""

from __future__ import annotations

import itertools
import linecache
import re
import threading
import warnings
from collections.abc import Callable, Mapping, Sequence
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
from numerix.errors import ArgumentError

__all__ = ["TorchCompiler", "InductorFallbackWarning"]

MODES = ("replay", "inductor")
_new = Tensor.__new__
_files = itertools.count()


class InductorFallbackWarning(UserWarning):
    """``mode="inductor"`` could not compile a graph; it runs in ``replay`` mode."""


class TorchCompiler(Compiler):
    """Lowers a graph to one function of torch kernel calls; ``mode="inductor"`` hands it
    to ``torch.compile``."""

    name = "torch"
    backend = "torch"
    default_options: Mapping[str, Any] = {"mode": "replay", "device": None, "device_id": None}

    def compile(
        self, graph: Any, args_spec: Sequence[ArgSpec], options: Mapping[str, Any]
    ) -> Executable:
        mode = options["mode"]
        if mode not in MODES:
            raise ArgumentError(
                f"jit: compiler 'torch' got mode={mode!r}; modes are 'replay' (the default) "
                f"and 'inductor' (torch.compile)"
            )
        backend = _target(args_spec, options["device"], options["device_id"])
        program = _Lowering(backend).program(graph)
        moves = [i for i, s in enumerate(args_spec) if s.backend is not backend]
        outs = [(o.shape, o.dtype) for o in graph.outputs]
        factory = program.factory
        if mode == "inductor":
            factory = _inductor(graph, program)
        return _runner(factory, len(args_spec), moves, outs, backend)


# ---------------------------------------------------------------- the device


def _target(specs: Sequence[ArgSpec], device: Any, device_id: Any) -> Backend:
    """The torch backend a program runs on: the options', else the arguments' (when they
    live on torch), else the torch backend's default device."""
    from numerix.plugins import get_backend

    args = [s.backend for s in specs if s.backend.name == "torch"]
    if device is None and device_id is None:
        if args:
            first = args[0]
            for b in args[1:]:
                if b is not first:
                    from numerix.errors import BackendMismatchError

                    listing = ", ".join(
                        f"{s.dtype.short}{list(s.shape)} on {s.backend!r}" for s in specs
                    )
                    raise BackendMismatchError(
                        f"jit: the arguments live on different torch devices ({listing}); "
                        f"move them to one first, or pass device=/device_id= to the compiler"
                    )
            return first
        return get_backend("torch")
    if device is None:  # only an index: the device type of the arguments, else cuda
        device = args[0].options["device"] if args else "cuda"
    opts = {"device": device} if device_id is None else {"device": device, "device_id": device_id}
    return get_backend("torch", **opts)


# ---------------------------------------------------------------- lowering


class _Program:
    """The generated source and the factory making one instance of it."""

    def __init__(
        self, factory: Callable[[], Any], source: str, ops: dict[int, str], device: Any
    ) -> None:
        self.factory = factory
        self.device = device
        self.source = source
        self.ops = ops  # line number -> the op written there (for error messages)


class _Lowering:
    """Writes a graph as the source of ``program(x0, x1, ...) -> (raw outputs)``."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self.ns: dict[str, Any] = {"_new": _new, "_T": Tensor}
        self.shells: list[tuple[tuple[int, ...], Any]] = []
        self.lines: list[str] = []
        self.moved: dict[int, str] = {}  # node id -> global holding its moved tensor
        self.names = itertools.count()

    # -- names
    def glob(self, value: Any, prefix: str = "g") -> str:
        name = f"{prefix}{next(self.names)}"
        self.ns[name] = value
        return name

    def shell(self, shape: tuple[int, ...], dtype: Any) -> str:
        self.shells.append((shape, dtype))
        return f"s{len(self.shells) - 1}"

    def emit(self, line: str, indent: int, op: str | None = None) -> None:
        self.lines.append("    " * indent + line + (f"  # {op}" if op else ""))

    # -- the program
    def program(self, graph: Graph) -> _Program:
        env: dict[int, Any] = {}
        params = []
        for i, p in enumerate(graph.parameters):
            s = self.shell(p.shape, p.dtype)
            self.emit(f"{s}.data = x{i}", 1)
            env[p.id] = s
            params.append(f"x{i}")
        self.graph(graph, env, 1, owned=set(env.values()))
        outs = [self.value(env[o.id]) for o in graph.outputs]
        self.emit(f"return ({''.join(o + ', ' for o in outs)})", 1)
        head = f"def program({', '.join(params)}):"
        body = "\n".join([head, *self.lines])
        n = len(self.shells)
        unpack = f"    {''.join(f's{i}, ' for i in range(n))}= shells\n" if n else ""
        source = f"def _make(shells):\n{unpack}" + _indent(body) + "\n    return program\n"
        filename = f"<numerix-torch program {next(_files)}>"
        # the source shows in tracebacks and in torch.compile's messages
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        exec(compile(source, filename, "exec"), self.ns)
        make = self.ns["_make"]
        specs, backend = list(self.shells), self.backend

        def factory() -> Any:
            shells = []
            for shape, dtype in specs:
                t = _new(Tensor)
                t.shape, t.dtype, t.backend, t.data = shape, dtype, backend, None
                shells.append(t)
            return make(shells)

        ops = {}  # line number -> the op written there, from its comment
        for k, line in enumerate(source.splitlines(), 1):
            if "  # " in line:
                ops[k] = line.rsplit("  # ", 1)[1]
        return _Program(factory, source, ops, getattr(backend, "torch_device", None))

    def value(self, name: str) -> str:
        return f"{name}.data"

    def graph(self, g: Graph, env: dict[int, Any], indent: int, owned: set[str]) -> None:
        """Write the nodes of ``g`` (its parameters already in ``env``); each shell this
        level owns is dropped after its last use, unless it is an output."""
        uses: list[tuple[int, list[str]]] = []  # (line index after the node, input names)
        for n in g.nodes:
            if n.op == PARAMETER:
                continue
            ins = [env[i.id] if isinstance(i, Node) else None for i in n.inputs]
            self.node(n, env, indent, owned)
            uses.append((len(self.lines), [x for x in ins if isinstance(x, str)]))
        keep = {env[o.id] for o in g.outputs if isinstance(env[o.id], str)}
        last: dict[str, int] = {}
        for k, names in uses:
            for name in names:
                last[name] = k
        frees: dict[int, list[str]] = {}
        for name, k in last.items():
            if name in owned and name not in keep:
                frees.setdefault(k, []).append(name)
        for k in sorted(frees, reverse=True):
            line = "    " * indent + " = ".join(f"{s}.data" for s in sorted(frees[k])) + " = None"
            self.lines.insert(k, line)

    def args(self, n: Node, env: dict[int, Any]) -> list[str]:
        out = []
        for i in n.inputs:
            if isinstance(i, Node):
                out.append(env[i.id])
            else:  # a plain value among the inputs
                out.append(self.glob(i))
        return out

    def kwargs(self, params: Mapping[str, Any]) -> str:
        return "".join(f", {k}={self.glob(v)}" for k, v in params.items())

    def node(self, n: Node, env: dict[int, Any], indent: int, owned: set[str]) -> None:
        op = n.op
        if op in (CONSTANT, TENSOR):
            name = self.moved.get(n.id)
            if name is None:
                from numerix.ops._core import on_backend

                name = self.moved[n.id] = self.glob(on_backend(n.value, self.backend), "c")
            env[n.id] = name
        elif op == ELEM:
            env[n.id] = env[n.inputs[0].id][n.params["index"]]
        elif op == HOOK:
            (x,) = self.args(n, env)
            self.emit(f"{self.glob(n.value, 'h')}(_fresh({x}))", indent, op)
            self.ns["_fresh"] = _fresh
            env[n.id] = x
        elif op == COND:
            self.cond(n, env, indent, owned)
        elif op == WHILE:
            self.loop(n, env, indent, owned)
        elif op == BLOCK:
            self.block(n, env, indent, owned)
        else:
            s = self.shell(n.shape, n.dtype)  # type: ignore[arg-type]
            k = self.glob(getattr(self.backend, op), "k")
            self.emit(
                f"{k}({s}, {', '.join(self.args(n, env))}{self.kwargs(n.params)})", indent, op
            )
            env[n.id] = s
            owned.add(s)

    def results(self, n: Node, owned: set[str]) -> list[str]:
        assert n.types is not None
        rs = [self.shell(s, d) for s, d in n.types]
        owned.update(rs)
        return rs

    def sub(self, g: Graph, values: list[str], env: dict[int, Any], indent: int) -> list[str]:
        """Inline subgraph ``g`` on ``values`` (its explicit arguments, as shell names) and
        its free values; returns the names of its outputs."""
        senv: dict[int, Any] = {}
        for p, v in zip(g.parameters, [*values, *(env[f.id] for f in g.free)]):
            senv[p.id] = v
        self.graph(g, senv, indent, owned=set())
        return [senv[o.id] for o in g.outputs]

    def cond(self, n: Node, env: dict[int, Any], indent: int, owned: set[str]) -> None:
        ins = self.args(n, env)
        rs = self.results(n, owned)
        self.emit(f"if {ins[0]}.data:", indent, COND)
        for k, g in enumerate(n.subgraphs):
            if k:
                self.emit("else:", indent)
            outs = self.sub(g, ins[1 : 1 + g.n_args], env, indent + 1)
            self.emit(_assign(rs, outs), indent + 1)
        env[n.id] = rs

    def loop(self, n: Node, env: dict[int, Any], indent: int, owned: set[str]) -> None:
        cg, body = n.subgraphs
        ins = self.args(n, env)
        # the state lives in its own shells, set from the body's outputs at once at the end
        # of each iteration: a body shell may be overwritten while the old state is read
        state = self.results(n, owned)
        self.emit(_assign(state, ins[: cg.n_args]), indent, WHILE)
        self.emit("while True:", indent)
        (c,) = self.sub(cg, state, env, indent + 1)
        self.emit(f"if not {c}.data:", indent + 1)
        self.emit("break", indent + 2)
        outs = self.sub(body, state, env, indent + 1)
        self.emit(_assign(state, outs), indent + 1)
        env[n.id] = state

    def block(self, n: Node, env: dict[int, Any], indent: int, owned: set[str]) -> None:
        method = n.value.method
        ins = self.args(n, env)
        if getattr(type(self.backend), method, None) is not None:
            k = self.glob(getattr(self.backend, method), "k")
            if n.types is not None:
                rs = self.results(n, owned)
                out = "(" + "".join(r + ", " for r in rs) + ")"
                env[n.id] = rs
            else:
                out = self.shell(n.shape, n.dtype)  # type: ignore[arg-type]
                owned.add(out)
                env[n.id] = out
            self.emit(f"{k}({out}, {', '.join(ins)}{self.kwargs(n.params)})", indent, method)
            return
        outs = self.sub(n.fallback, ins, env, indent)
        env[n.id] = outs if n.types is not None else outs[0]


def _assign(targets: list[str], sources: list[str]) -> str:
    if not targets:
        return "pass"
    lhs = "".join(f"{t}.data, " for t in targets)
    rhs = "".join(f"{s}.data, " for s in sources)
    return f"{lhs}= {rhs}".rstrip()


def _indent(text: str) -> str:
    return "\n".join("    " + line if line else line for line in text.splitlines())


def _fresh(s: Tensor) -> Tensor:
    t = _new(Tensor)
    t.shape, t.dtype, t.backend, t.data = s.shape, s.dtype, s.backend, s.data
    return t


# ---------------------------------------------------------------- running


def _runner(
    factory: Callable[[], Any],
    n_args: int,
    moves: list[int],
    outs: list[tuple[tuple[int, ...], Any]],
    backend: Backend,
) -> Executable:
    """``run(args)``: takes a program instance from a pool (its shells are its own: two
    threads never share one), calls it on the arguments' arrays, wraps the outputs."""
    pool: list[Any] = [factory()]
    ns: dict[str, Any] = {"_new": _new, "_T": Tensor, "_B": backend, "pool": pool}
    ns["factory"] = factory
    ns["_move"] = _mover(backend)
    args = ", ".join(
        f"_move(args[{i}])" if i in moves else f"args[{i}].data" for i in range(n_args)
    )
    names = [f"o{i}" for i in range(len(outs))]
    lines = [
        "def run(args):",
        "    try:",
        "        p = pool.pop()",
        "    except IndexError:",
        "        p = factory()",
        "    try:",
        f"        {''.join(o + ', ' for o in names)}= p({args})",
        "    finally:",
        "        pool.append(p)",
    ]
    for i, (shape, dtype) in enumerate(outs):
        ns[f"S{i}"], ns[f"D{i}"] = shape, dtype
        lines += [
            f"    t{i} = _new(_T)",
            f"    t{i}.shape, t{i}.dtype, t{i}.backend, t{i}.data = S{i}, D{i}, _B, o{i}",
        ]
    lines.append(f"    return [{', '.join(f't{i}' for i in range(len(outs)))}]")
    exec("\n".join(lines), ns)
    run: Executable = ns["run"]
    return run


def _mover(backend: Backend) -> Callable[[Tensor], Any]:
    from numerix.ops._core import on_backend

    def move(t: Tensor) -> Any:
        return on_backend(t, backend).data

    return move


# ---------------------------------------------------------------- inductor

_LINE = re.compile(r'<numerix-torch program \d+>", line (\d+)')


def _inductor(graph: Graph, program: _Program) -> Callable[[], Any]:
    """A factory of ``torch.compile``d program instances; a graph inductor cannot take runs
    in replay mode, with an :class:`InductorFallbackWarning` naming the reason."""
    import torch

    special = sorted({n.op for n in graph.walk() if n.op in (COND, WHILE, HOOK)})
    if special:
        warnings.warn(
            f"jit: compiler 'torch' mode='inductor': the graph has {', '.join(special)} "
            f"node(s), which torch.compile(fullgraph=True) cannot trace; it runs in replay mode",
            InductorFallbackWarning,
            stacklevel=5,
        )
        return program.factory
    try:
        gm = _aten_graph(graph, program)
    except Exception as e:  # a kernel torch cannot trace
        warnings.warn(_why(e, program, "tracing"), InductorFallbackWarning, stacklevel=5)
        return program.factory
    compiled = torch.compile(gm, fullgraph=True, dynamic=False)
    state: dict[str, Any] = {"failed": False}
    lock = threading.Lock()

    def factory() -> Any:
        replay = program.factory()

        def run(*xs: Any) -> Any:
            if state["failed"]:
                return replay(*xs)
            try:
                return compiled(*xs)
            except Exception as e:  # any failure of dynamo or inductor
                with lock:
                    first = not state["failed"]
                    state["failed"] = True
                if first:
                    warnings.warn(_why(e, program), InductorFallbackWarning, stacklevel=4)
                return replay(*xs)

        return run

    return factory


def _aten_graph(graph: Graph, program: _Program) -> Any:
    """The program traced to a graph of aten ops (``make_fx`` on fake tensors: the
    kernels' Python, dtype tables and caches included, runs once here), which
    ``torch.compile`` then takes whole."""
    import torch
    from torch.fx.experimental.proxy_tensor import make_fx

    from numerix_torch._dtypes import TORCH

    device = program.device
    examples = [torch.empty(p.shape, dtype=TORCH[p.dtype], device=device) for p in graph.parameters]
    instance = program.factory()  # its shells end up holding fakes: used for this only
    return make_fx(instance, tracing_mode="fake")(*examples)


def _why(e: Exception, program: _Program, step: str = "compiling") -> str:
    text = str(e)
    ops = [program.ops.get(int(m)) for m in _LINE.findall(text)]
    where = next((f" at op {op!r}" for op in reversed(ops) if op), "")
    first = text.strip().splitlines()[0] if text.strip() else type(e).__name__
    return (
        f"jit: compiler 'torch' mode='inductor': {step} failed{where} "
        f"({type(e).__name__}: {first}); this graph runs in replay mode"
    )
