"""Replay: a traced graph written out as the source of one Python function over payloads.

:func:`lower` turns a :class:`~numerix.defn.expr.Graph` into ``program(x0, x1, ...)``,
a plain function of the arguments' payloads (``Tensor.data``) returning the outputs'
payloads. Each node becomes one line: the backend's :meth:`~numerix.Backend.lower`
function for the primitive when it offers one (``v5 = np.add(v3, v4)`` on ``binary``),
else a call of the primitive method on ``Tensor`` shells. ``cond`` and ``while`` become
Python ``if``/``while`` over the concrete predicate, a ``block`` the backend's
``block_<name>`` or the core's version inlined, a ``hook`` a call of its function.
Constants and captured tensors move to the backend once, when lowering. Each
intermediate is deleted right after its last use, so memory is freed as the graph
runs. The function holds no state: threads may run it at once.

The ``evaluator`` compiler runs graphs this way; :func:`run_program` wraps a program
into the ``Executable`` a compiler returns (:func:`runner` does it for any function
of payloads: the xla compiler's jitted program too).
"""

from __future__ import annotations

import contextvars
import itertools
import linecache
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from numerix._meeting import DEALLOCATED, deallocated_error, meeting_backend
from numerix._tensor import Tensor
from numerix.backend import Backend
from numerix.defn.expr import COND, ELEM, HOOK, WHILE, Graph, Node
from numerix.defn.graph import GraphWalk, native_block
from numerix.ops._core import new_out, on_backend
from numerix.primitives._registry import op_name

__all__ = ["Program", "lower", "run_program", "runner"]

_new = Tensor.__new__
_files = itertools.count()
# The linecache entries of programs that were collected, removed at the next lowering:
# a program dies when the collector says, possibly while linecache.checkcache() walks
# the cache (doctest and pdb call it), which a key removed under it breaks (KeyError).
# The finalizer only appends here; list.append is safe wherever it runs.
_dead_sources: list[str] = []


def _forget_dead_sources() -> None:
    while _dead_sources:
        linecache.cache.pop(_dead_sources.pop(), None)


_Type = tuple[tuple[int, ...], Any]


class Program:
    """A lowered graph: ``fn(*payloads) -> tuple of payloads``, and its source."""

    __slots__ = ("backend", "captured", "fn", "outputs", "source")

    def __init__(
        self, fn: Callable[..., tuple[Any, ...]], source: str, backend: Backend,
        outputs: list[_Type], captured: Sequence[weakref.ref[Tensor]] = (),
    ) -> None:  # fmt: skip
        self.fn = fn
        self.source = source
        self.backend = backend
        self.outputs = outputs
        #: weak references to the tensors the graph captured (see :func:`runner`)
        self.captured = captured

    def __repr__(self) -> str:
        return self.source


def lower(graph: Graph, backend: Backend) -> Program:
    """``graph`` as one Python function running on ``backend`` (see the module)."""
    w = _Writer(backend)
    env: dict[int, Any] = {}
    params = []
    for p in graph.parameters:
        env[p.id] = v = w.var()
        params.append(v)
    w.graph(graph, env, 1, owned=set(params))
    outs = [env[o.id] for o in graph.outputs]
    w.emit(f"return ({''.join(o + ', ' for o in outs)})", 1)
    source = f"def program({', '.join(params)}):\n" + "\n".join(w.lines) + "\n"
    filename = f"<numerix program {next(_files)}>"
    _forget_dead_sources()
    # the source shows in tracebacks
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), w.ns)
    fn = w.ns["program"]
    # ... for as long as the program lives: its lines leave linecache at the first
    # lowering after it was collected
    weakref.finalize(fn, _dead_sources.append, filename)
    outputs: list[_Type] = [(o.shape, o.dtype) for o in graph.outputs]  # type: ignore[misc]
    return Program(fn, source, backend, outputs, w.captured)


def runner(
    fn: Callable[..., Any],
    outputs: Sequence[_Type],
    backend: Backend,
    args_spec: Sequence[Any],
    *,
    trailing: Sequence[Any] = (),
    context: Callable[[], Any] | contextvars.Context | None = None,
    bare: bool = False,
    host_payloads: bool = False,
    captured: Sequence[weakref.ref[Tensor]] = (),
) -> Callable[[Sequence[Any]], list[Any]]:
    """``run(args) -> [Tensor]``, written out for this program: ``fn`` called on the
    arguments' payloads (an argument ``args_spec`` places on another backend first
    moved to ``backend``, as eagerly) and then on
    ``trailing`` values (a compiled program's constants), inside ``context()`` when
    given, or in ``context`` when it is a :class:`contextvars.Context` (see
    :func:`in_context`); each output payload wrapped as a tensor of ``backend`` typed as
    ``outputs``.
    ``bare``: ``fn`` returns its one output as it is, not in a sequence.
    ``host_payloads``: ``fn`` takes the numpy payloads of host arguments as they are
    (``jax.jit`` moves them to its device itself, faster than a transfer per tensor).
    ``captured``: weak references to the tensors the program captured; when a call fails
    and one of them was deallocated since, the error says so
    (:class:`~numerix.errors.DeallocatedError`).

    Compilers share it: a call costs one function call and the tensors it returns.
    ``run.backend`` is ``backend``: the backend arguments must meet (see
    :func:`numerix._meeting.meeting_backend`).
    """
    if isinstance(context, contextvars.Context):
        fn, context = in_context(context, fn), None
    ns: dict[str, Any] = {"_new": _new, "_T": Tensor, "_B": backend, "fn": fn}
    ns["_move"] = _mover(backend)
    args = [
        f"args[{i}].data"
        if a.backend is backend or (host_payloads and a.backend.is_host)
        else f"_move(args, {i})"
        for i, a in enumerate(args_spec)
    ]
    n = len(args)
    for k, value in enumerate(trailing):
        ns[f"c{k}"] = value
        args.append(f"c{k}")
    names = [f"o{i}" for i in range(len(outputs))]
    call = f"fn({', '.join(args)})"
    if bare or names:  # a program with no outputs is called for its hooks alone
        call = f"{'o0 ' if bare else ''.join(o + ', ' for o in names)}= {call}"
    if context is None:
        body = [f"    {call}"]
    else:
        ns["_ctx"] = context
        body = ["    with _ctx():", f"        {call}"]
    if captured:  # free until a call fails
        ns["_dead"] = _dead_check(captured)
        body = ["    try:", *("    " + line for line in body), "    except Exception:",
                "        _dead()", "        raise"]  # fmt: skip
    for i, (shape, dtype) in enumerate(outputs):
        ns[f"S{i}"], ns[f"D{i}"] = shape, dtype
        body += [
            f"    t{i} = _new(_T)",
            f"    t{i}.shape = S{i}",
            f"    t{i}.dtype = D{i}",
            f"    t{i}.backend = _B",
            f"    t{i}.data = o{i}",
        ]
    results = ", ".join(f"t{i}" for i in range(len(names)))
    lines = ["def run(args):", *body, f"    return [{results}]"]
    if len(names) == 1:  # also run_one(args) -> the output itself, for jit's fast path
        lines += ["def run_one(args):", *body, "    return t0"]
    exec("\n".join(lines), ns)
    run: Callable[[Sequence[Any]], list[Any]] = ns["run"]
    if len(names) == 1:
        run.one = ns["run_one"]  # type: ignore[attr-defined]
        if context is None and not captured and all(a.endswith(".data") for a in args[:n]):
            # run_one's steps as data, for jit's compiled call (numerix._speedups):
            # (fn, trailing values, output shape, output dtype, backend, bare)
            shape, dtype = outputs[0]
            run.direct = (fn, tuple(trailing), shape, dtype, backend, bare)  # type: ignore[attr-defined]
    run.backend = backend  # type: ignore[attr-defined]
    return run


def in_context(ctx: contextvars.Context, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` run in ``ctx`` (``Context.run``: tens of ns, where entering a context
    manager such as ``np.errstate`` costs about 1 µs). A context in use (by another
    thread, or by this one: a program run from inside a program) refuses to be entered
    twice; the call then runs in a copy of it, which holds the same values."""
    run = ctx.run

    def call(*payloads: Any) -> Any:
        try:
            return run(fn, *payloads)
        except RuntimeError as e:
            # refused by Context.run itself (the traceback ends here), not raised by fn
            if e.__traceback__ is None or e.__traceback__.tb_next is not None:
                raise
            if not str(e).startswith("cannot enter context"):
                raise
        return ctx.copy().run(fn, *payloads)

    return call


def run_program(program: Program, args_spec: Sequence[Any]) -> Callable[[Sequence[Any]], list[Any]]:
    """:func:`runner` for a lowered :class:`Program`, inside its backend's
    :meth:`~numerix.Backend.program_context` (or in it, when it is a
    :class:`contextvars.Context`)."""
    b = program.backend
    ctx: Any = None
    if type(b).program_context is not Backend.program_context:
        made = b.program_context()
        ctx = made if isinstance(made, contextvars.Context) else b.program_context
    run = runner(program.fn, program.outputs, b, args_spec, context=ctx, captured=program.captured)
    run.program = program  # type: ignore[attr-defined]  # for inspection: its source
    return run


def _mover(backend: Backend) -> Callable[[Sequence[Tensor], int], Any]:
    def move(args: Sequence[Tensor], i: int) -> Any:
        """The payload of ``args[i]`` on ``backend``: host tensors move, others must be
        on it already (the meeting rule)."""
        t = args[i]
        if not t.backend.is_host:
            meeting_backend("jit", args, target=backend, noun="argument")
        return on_backend(t, backend).data

    return move


def _dead_check(captured: Sequence[weakref.ref[Tensor]]) -> Callable[[], None]:
    """``check()``: raise :class:`DeallocatedError` if a captured tensor was deallocated
    (the program may still hold its buffer: xla's is deleted with it)."""

    def check() -> None:
        for ref in captured:
            t = ref()
            if t is not None and t.backend is DEALLOCATED:
                raise deallocated_error(
                    "jit", t, "a tensor the program captured when it was compiled"
                ) from None

    return check


# ---------------------------------------------------------------- helpers the source calls


def _method_call(
    backend: Backend,
    method: Callable[..., Any],
    ins: Sequence[Any],
    out: Any,
    multi: bool,
    params: Mapping[str, Any],
) -> Callable[..., Any]:
    """A function of payloads calling ``method(outnew_out(s), *input_shells, **params)``;
    inputs typed None are plain values, passed as they are."""
    params = dict(params)
    typed = tuple(ins)

    def call(*payloads: Any) -> Any:
        args = [
            x if t is None else new_out(t[0], t[1], backend, x) for t, x in zip(typed, payloads)
        ]
        if multi:
            shells = tuple(new_out(s, d, backend) for s, d in out)
            r = method(shells, *args, **params)
            return tuple(t.data for t in r)
        s, d = out
        return method(new_out(s, d, backend), *args, **params).data

    return call


def _wrapper(shape: tuple[int, ...], dtype: Any, backend: Backend) -> Callable[[Any], Tensor]:
    return lambda data: new_out(shape, dtype, backend, data)


def _truth_of(backend: Backend, dtype: Any) -> Callable[[Any], bool]:
    def truth(data: Any) -> bool:
        return bool(backend.to_numpy(new_out((), dtype, backend, data)))

    return truth


class _Writer(GraphWalk):
    """Writes the lines of ``program``; values are local variables ``v0, v1 ...`` (the
    one walk of :mod:`numerix.defn.graph`: ``env`` maps a node to its variable, or the
    list of them of a multi-valued node; the context is the indent and the names the
    level owns)."""

    def __init__(self, backend: Backend) -> None:
        super().__init__(backend)
        self.ns: dict[str, Any] = {}
        self.lines: list[str] = []
        self.moved: dict[int, str] = {}  # node id -> global holding its payload
        self.names = itertools.count()
        self.globals = itertools.count()
        #: per level being written: (line index after each node, names the node read)
        self._uses: list[list[tuple[int, list[str]]]] = []

    def var(self) -> str:
        return f"v{next(self.names)}"

    def glob(self, value: Any, prefix: str = "g") -> str:
        name = f"{prefix}{next(self.globals)}"
        self.ns[name] = value
        return name

    def emit(self, line: str, indent: int, op: str | None = None) -> None:
        self.lines.append("    " * indent + line + (f"  # {op}" if op else ""))

    def graph(self, g: Graph, env: dict[int, Any], indent: int, owned: set[str]) -> None:
        """Write the nodes of ``g`` (its parameters already in ``env``); each variable this
        level owns is deleted after its last use, unless it is an output."""
        uses: list[tuple[int, list[str]]] = []
        self._uses.append(uses)
        try:
            self.walk(g, env, indent, owned)
        finally:
            self._uses.pop()
        keep = set(_names([env[o.id] for o in g.outputs]))
        last: dict[str, int] = {}
        for k, names in uses:
            for name in names:
                last[name] = k
        frees: dict[int, list[str]] = {}
        for name, k in last.items():
            if name in owned and name not in keep:
                frees.setdefault(k, []).append(name)
        for k in sorted(frees, reverse=True):
            self.lines.insert(k, "    " * indent + "del " + ", ".join(sorted(frees[k])))

    def visited(self, n: Node, env: dict[int, Any], indent: int, owned: set[str]) -> None:
        read = _names([env[i.id] for i in n.inputs if isinstance(i, Node)])
        self._uses[-1].append((len(self.lines), read))

    def args(self, n: Node, env: dict[int, Any]) -> list[str]:
        return [env[i.id] if isinstance(i, Node) else self.glob(i) for i in n.inputs]

    # ------------------------------------------------------------ one node per kind
    def constant(self, n: Node, env: dict[int, Any], indent: int, owned: set[str]) -> str:
        name = self.moved.get(n.id)
        if name is None:
            _, payload = self.captured_payload(n)
            name = self.moved[n.id] = self.glob(payload, "c")
        return name

    def elem(self, n: Node, env: dict[int, Any], indent: int, owned: set[str]) -> str:
        src, i = env[n.inputs[0].id], n.params["index"]
        if isinstance(src, list):
            return src[i]
        v = self.var()
        owned.add(v)
        self.emit(f"{v} = {src}[{i}]", indent, ELEM)
        return v

    def hook(self, n: Node, env: dict[int, Any], indent: int, owned: set[str]) -> str:
        (x,) = self.args(n, env)
        assert n.shape is not None
        wrap = self.glob(_wrapper(n.shape, n.dtype, self.backend), "w")
        self.emit(f"{self.glob(n.value, 'h')}({wrap}({x}))", indent, HOOK)
        return x

    def primitive(self, n: Node, env: dict[int, Any], indent: int, owned: set[str]) -> str:
        b, op = self.backend, n.op
        if n.dtype is not None:  # Primitive.bind's rule, once per program
            b.check_holds(op_name(op, n.params), n.dtype)
        ins = [(i.shape, i.dtype) if isinstance(i, Node) else None for i in n.inputs]
        out = (n.shape, n.dtype)
        fn = None
        if None not in ins:
            fn = b.lower(op, n.params, tuple(ins), out)  # type: ignore[arg-type]
        if fn is None:
            fn = _method_call(b, getattr(b, op), ins, out, False, n.params)
        v = self.var()
        owned.add(v)
        self.emit(f"{v} = {self.glob(fn, 'k')}({', '.join(self.args(n, env))})", indent, op)
        return v

    def results(self, n: Node, owned: set[str]) -> list[str]:
        assert n.types is not None
        rs = [self.var() for _ in n.types]
        owned.update(rs)
        return rs

    def sub(self, g: Graph, values: list[str], env: dict[int, Any], indent: int) -> list[str]:
        """Inline subgraph ``g`` on ``values`` (its explicit arguments) and its free
        values; returns the names of its outputs."""
        senv: dict[int, Any] = {}
        for p, v in zip(g.parameters, [*values, *(env[f.id] for f in g.free)]):
            senv[p.id] = v
        self.graph(g, senv, indent, owned=set())
        return [senv[o.id] for o in g.outputs]

    def truth(self, n: Node) -> str:
        pred = n.inputs[0]
        return self.glob(_truth_of(self.backend, pred.dtype), "t")

    def cond(self, n: Node, env: dict[int, Any], indent: int, owned: set[str]) -> None:
        ins = self.args(n, env)
        rs = self.results(n, owned)
        self.emit(f"if {self.truth(n)}({ins[0]}):", indent, COND)
        for k, g in enumerate(n.subgraphs):
            if k:
                self.emit("else:", indent)
            outs = self.sub(g, ins[1 : 1 + g.n_args], env, indent + 1)
            self.emit(_assign(rs, outs), indent + 1)
        env[n.id] = rs

    def loop(self, n: Node, env: dict[int, Any], indent: int, owned: set[str]) -> None:
        cg, body = n.subgraphs
        ins = self.args(n, env)
        state = self.results(n, owned)
        self.emit(_assign(state, ins[: cg.n_args]), indent, WHILE)
        self.emit("while True:", indent)
        (c,) = self.sub(cg, state, env, indent + 1)
        truth = self.glob(_truth_of(self.backend, cg.outputs[0].dtype), "t")
        self.emit(f"if not {truth}({c}):", indent + 1)
        self.emit("break", indent + 2)
        outs = self.sub(body, state, env, indent + 1)
        self.emit(_assign(state, outs), indent + 1)
        env[n.id] = state

    def block(self, n: Node, env: dict[int, Any], indent: int, owned: set[str]) -> None:
        b = self.backend
        method = n.value.method
        ins = self.args(n, env)
        impl = native_block(b, n)
        if impl is None:  # the core's version, inlined
            outs = self.sub(n.fallback, ins, env, indent)
            # what the inlined version computed belongs to this level from here on
            given = set(ins) | set(self.ns)
            owned.update(o for o in outs if o not in given)
            env[n.id] = outs if n.types is not None else outs[0]
            return
        types = [(i.shape, i.dtype) for i in n.inputs]
        multi = n.types is not None
        out: Any = n.types if multi else (n.shape, n.dtype)
        # a block's method may carry a lowering as a primitive's does (@lowers)
        fn = None if multi else b.lower(method, n.params, tuple(types), out)
        if fn is None:
            fn = _method_call(b, impl.__get__(b, type(b)), types, out, multi, n.params)
        fn = self.glob(fn, "k")
        if multi:
            rs = self.results(n, owned)
            self.emit(f"{''.join(r + ', ' for r in rs)}= {fn}({', '.join(ins)})", indent, method)
            env[n.id] = rs
        else:
            v = env[n.id] = self.var()
            owned.add(v)
            self.emit(f"{v} = {fn}({', '.join(ins)})", indent, method)


def _names(values: list[Any]) -> list[str]:
    out: list[str] = []
    for v in values:
        if isinstance(v, list):
            out.extend(v)
        else:
            out.append(v)
    return out


def _assign(targets: list[str], sources: list[str]) -> str:
    if not targets:
        return "pass"
    return f"{''.join(t + ', ' for t in targets)}= {''.join(s + ', ' for s in sources)}".rstrip()
