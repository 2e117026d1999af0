"""The ``xla`` compiler: a whole graph as one ``jax.jit`` program (EXLA's role in Nx.Defn).

Compiling lowers the graph into one Python function over JAX values and compiles it
ahead of time with ``jax.jit`` for the signature: one fused XLA executable per
signature, on one device of one client. Primitives replay the xla backend's kernels on
tensor shells that wrap JAX tracers: the kernels are jitted ``lax`` functions, so under
the outer trace they are inlined, not dispatched. ``cond`` and ``while`` become
``lax.cond`` / ``lax.while_loop`` over their lowered subgraphs, hooks
``jax.debug.callback`` (ordered), blocks the backend's ``block_<name>`` or the core's
fallback graph. Captured tensors move to the device once, when compiling, and are
passed to the executable as extra arguments (small constants are literals).
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import struct
import threading
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import jax
import jax.export
import jax.monitoring
import jaxlib
import numpy as np
from jax import lax
from jax.experimental import serialize_executable
from jax.sharding import SingleDeviceSharding

from numerix._dispatch import new_out
from numerix._meeting import check_live, meeting_backend
from numerix._tensor import Tensor
from numerix.backend import Backend, Option
from numerix.configuration import effective_settings
from numerix.defn.compilers import ArgSpec, Compiler, Executable
from numerix.defn.expr import CONSTANT, FOLD_LIMIT, HOOK, PARAMETER, Graph, Node
from numerix.defn.graph import (
    GraphWalk,
    last_reads,
    native_block,
    subgraph_inputs,
)
from numerix.defn.kept import (
    cache_root,
    code_version,
    keep_file,
    kept_path,
    program_key,
    read_kept,
)
from numerix.defn.replay import runner
from numerix.errors import ArgumentError, FileFormatError
from numerix.plugins import get_backend
from numerix_xla._kernels import check_64bit, x64_on
from numerix_xla.backend import XlaBackend

__all__ = ["XlaCompiler"]

_new = Tensor.__new__
# one lowered node: fn(env, caps) computes the node's value from env (tensor shells
# holding JAX values, or lists of them for multi-valued nodes)
_Step = Callable[[list[Any], Sequence[Any]], Any]


class XlaCompiler(Compiler):
    """Lowers a graph to one ``jax.jit`` program on an xla device.

    Options: ``client`` and ``device_id`` (default: those of the arguments' xla backend,
    else the default xla backend), ``donate`` (``True``: the argument buffers are
    donated to the program, as ``jax.jit(donate_argnums=...)``; the tensors passed are
    unusable afterwards), ``donate_leaves`` (the flattened arguments to donate, which
    :func:`numerix.jit` sets from its ``donate_argnums``). The program's ``donated``
    lists the arguments it took the buffers of (device ones only), which jit frees.
    """

    name = "xla"
    backend = "xla"
    #: jit(donate_argnums=...) reaches this compiler as ``donate_leaves``
    donates = True
    # the client is checked against the arguments' backend by target_backend
    accepted_options = (
        Option("client", None),
        Option("device_id", None, type=int, minimum=0),
        Option("donate", False, type=bool),
        Option("donate_leaves", (), type=tuple),
    )

    def compile(
        self, graph: Any, args_spec: Sequence[ArgSpec], options: Mapping[str, Any]
    ) -> Executable:
        backend = target_backend(args_spec, options)
        use_cache_dir(effective_settings())
        if not x64_on():  # JAX would narrow a 64-bit value anywhere in the program
            check_64bit("jit (compiler xla)", backend, _dtypes(graph))
        with collector_paused():
            return self._compile(graph, args_spec, options, backend)

    def _compile(
        self,
        graph: Graph,
        args_spec: Sequence[ArgSpec],
        options: Mapping[str, Any],
        backend: XlaBackend,
    ) -> Executable:
        program, caps, captured, specs, sharding = _program(graph, args_spec, backend)
        n = len(args_spec)
        # host arguments go in as their numpy payloads: jax.jit puts them on the device
        # itself (one C++ step, not a numerix transfer per tensor), hence in_shardings;
        # only device buffers can be donated
        wanted = set(range(n)) if options["donate"] else set(options["donate_leaves"])
        donate = tuple(i for i, s in enumerate(args_spec) if s.backend is backend and i in wanted)
        spread = backend.mesh is not None
        if spread:
            # over several devices the computation follows the data: each argument keeps
            # the sharding it has (split or replicated), XLA propagates them through the
            # program and inserts the collectives, and jax.jit compiles once per
            # arrangement of the arguments, on the first call that brings it; host
            # arguments are replicated first (a program with no argument makes its
            # outputs replicated)
            jitted = jax.jit(
                program,
                out_shardings=None if n + len(caps) else sharding,
                donate_argnums=donate,
            )
        else:
            jitted = jax.jit(
                program, in_shardings=sharding, out_shardings=sharding, donate_argnums=donate
            )
        fn, loaded_from = jitted, None
        if not spread:
            # a program kept by an earlier process runs without tracing or compiling;
            # else it is compiled now (errors surface here, not on the first call), and
            # jax.jit keeps the executable, so calls go through jax's own dispatch
            path = None if donate else program_file(graph, specs, backend)
            loaded = None if path is None else load_program(path, specs, graph, backend)
            if loaded is not None:
                fn, loaded_from = loaded, path
            else:
                lowered = jitted.lower(*specs)
                compiled, here = compile_here(lowered)
                if path is not None and not here:
                    # JAX's cache had it (numerix's file was missing, stale or not
                    # whole): compiled once more, under options JAX files elsewhere
                    compiled, here = compile_here(lowered, _FRESH)
                if path is not None and here:
                    keep_program(path, compiled)
        out_types: list[Any] = [(o.shape, o.dtype) for o in graph.outputs]
        run = runner(
            fn, out_types, backend, args_spec, trailing=tuple(caps),
            bare=len(graph.outputs) == 1, host_payloads=not spread, captured=captured,
        )  # fmt: skip
        run.lowered = jitted  # type: ignore[attr-defined]
        run.donated = donate if options["donate_leaves"] else ()  # type: ignore[attr-defined]
        run.loaded_from = loaded_from  # type: ignore[attr-defined]
        return run

    # ------------------------------------------------------------ export
    exports = True

    def export(self, graph: Any, args_spec: Sequence[ArgSpec], options: Mapping[str, Any]) -> bytes:
        """The program as serialized StableHLO (``jax.export``), with the compiled
        executable for machines like this one beside it (see :meth:`load_exported`);
        captured tensors are constants of the program."""
        backend = target_backend(args_spec, options)
        if backend.mesh is not None:
            raise ArgumentError(
                f"export: compiler 'xla' exports programs of one device, and the arguments "
                f"live on {backend!r}; export with templates of one device "
                f"(numerix.template(shape, dtype, backend='xla'))"
            )
        if not x64_on():
            check_64bit("export (compiler xla)", backend, _dtypes(graph))
        with collector_paused():
            program, caps, _, specs, sharding = _program(graph, args_spec, backend)
            n = len(args_spec)
            jitted = jax.jit(
                lambda *xs: program(*xs, *caps), in_shardings=sharding, out_shardings=sharding
            )
            try:
                hlo = bytes(jax.export.export(jitted)(*specs[:n]).serialize())
                compiled, here = compile_here(jitted.lower(*specs[:n]))
                # an executable JAX read from its persistent cache cannot be written out
                # again whole: the loader compiles the StableHLO instead
                executable = _serialize_executable(compiled) if here else b""
            except Exception as e:
                hooks = " (it calls a hook or print_value: remove them)" * _has_hook(graph)
                raise ArgumentError(
                    f"export: compiler 'xla' cannot export this program{hooks}: "
                    f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
                ) from None
        dev = backend.jax_device
        meta = {
            **_machine(dev),
            "hlo": len(hlo),
            "executable": len(executable),
        }
        head = json.dumps(meta, separators=(",", ":")).encode()
        return b"".join((_LEN.pack(len(head)), head, hlo, executable))

    def load_exported(
        self,
        payload: bytes,
        args_spec: Sequence[ArgSpec],
        outputs: Sequence[tuple[tuple[int, ...], Any]],
        backend: Backend,
    ) -> Executable:
        """The program ``payload`` holds, on ``backend``'s device: its compiled
        executable where this machine is like the exporting one (the same JAX release,
        platform and device kind), else compiled from its StableHLO."""
        assert isinstance(backend, XlaBackend)
        if not x64_on():
            check_64bit(
                "load_exported", backend, {d for _, d in outputs} | {s.dtype for s in args_spec}
            )
        meta, hlo, executable = _unpack(payload)
        dev = backend.jax_device
        sharding = SingleDeviceSharding(dev)
        specs = [
            jax.ShapeDtypeStruct(s.shape, s.dtype.numpy_dtype, sharding=sharding) for s in args_spec
        ]
        single = len(outputs) == 1
        fn: Any = None
        if executable and all(meta.get(k) == v for k, v in _machine(dev).items()):
            fn = _load_executable(executable, len(args_spec), len(outputs), dev)
        if fn is None:
            try:
                exp = jax.export.deserialize(bytearray(hlo))
            except Exception as e:
                raise FileFormatError(
                    f"load_exported: the program's StableHLO cannot be read by JAX "
                    f"{jax.__version__} ({type(e).__name__}); it was written by JAX "
                    f"{meta.get('jax')}"
                ) from None
            if dev.platform not in exp.platforms:
                raise FileFormatError(
                    f"load_exported: the program was exported for {', '.join(exp.platforms)}, "
                    f"and backend {backend!r} is a {dev.platform} device; export it again "
                    f"from a {dev.platform} backend"
                )
            jitted = jax.jit(exp.call, in_shardings=sharding, out_shardings=sharding)
            jitted.lower(*specs).compile()
            fn = jitted
        return runner(fn, list(outputs), backend, args_spec, bare=single, host_payloads=True)


#: the persistent cache directory numerix gave JAX (None: none yet)
_cache_dir_set: str | None = None
_cache_lock = threading.Lock()


def use_cache_dir(settings: Any) -> None:
    """Point JAX's persistent compilation cache at ``[compile] cache_dir`` (every program
    kept, however quick its compilation), unless JAX was given another directory by its
    own configuration, which numerix keeps (with a warning)."""
    global _cache_dir_set
    wanted = None if settings is None else settings.compile.cache_dir
    if wanted is None:
        return
    path = os.path.abspath(os.path.expanduser(wanted))
    if path == _cache_dir_set:
        return
    with _cache_lock:
        current = getattr(jax.config, "jax_compilation_cache_dir", None)
        if current is not None and current != _cache_dir_set and os.path.abspath(current) != path:
            warnings.warn(
                f"[compile] cache_dir is {path!r}, but JAX's compilation cache directory is "
                f"already {current!r} (set outside numerix): numerix leaves JAX's setting "
                f"alone, so the xla compiler's programs are kept there",
                stacklevel=3,
            )
            _cache_dir_set = path
            return
        os.makedirs(path, exist_ok=True)
        jax.config.update("jax_compilation_cache_dir", path)
        # keep every program: numerix's first calls are small, quick compilations
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
        jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
        _cache_dir_set = path


# ---------------------------------------------------------------- the program cache
def program_file(graph: Graph, specs: Sequence[Any], backend: XlaBackend) -> str | None:
    """Where ``[compile] cache_dir`` keeps the compiled program of ``graph`` for the
    abstract arguments ``specs`` (the call's, then the captured tensors') on
    ``backend``'s device: ``<cache_dir>/numerix-xla/<key>.bin`` (see
    :mod:`numerix.defn.kept`); None without a cache directory, or for a graph the
    fingerprint cannot identify.

    The key's own terms: the device, the JAX and jaxlib releases, the JAX settings and
    ``XLA_FLAGS`` that change what XLA compiles, and the code that lowers a graph
    (numerix's and numerix-xla's source files): a program is reused only where
    compiling again would give the same one.
    """
    if cache_root() is None:
        return None
    dev = backend.jax_device
    precision = getattr(jax.config, "jax_default_matmul_precision", None)
    key = program_key(
        graph, specs, sorted(_machine(dev).items()), dev.id, x64_on(), precision,
        os.environ.get("XLA_FLAGS", ""), code_version("numerix_xla"),
    )  # fmt: skip
    return kept_path("numerix-xla", key, ".bin")


def load_program(path: str, specs: Sequence[Any], graph: Graph, backend: XlaBackend) -> Any:
    """The executable kept at ``path``, loaded on ``backend``'s device; None when there
    is none, or it is not whole (the caller compiles, and keeps the new one)."""
    data = read_kept(path)
    if data is None:
        return None
    return _load_executable(data, len(specs), len(graph.outputs), backend.jax_device)


_CACHE_HIT = "/jax/compilation_cache/cache_hits"


#: compiler options that change nothing XLA makes (the option's default, given), but
#: file the program under another key in JAX's cache: a compilation JAX cannot serve
_FRESH = {"xla_embed_ir_in_executable": False}


def compile_here(lowered: Any, options: dict[str, Any] | None = None) -> tuple[Any, bool]:
    """``lowered.compile(options)``, and whether XLA compiled it in this call: False when
    JAX read it from its persistent compilation cache. Such an executable runs, but
    serialized again it lacks its compiled functions (the loaded copy fails when run:
    "Function ... not found"), so it is neither kept nor exported."""
    me = threading.get_ident()
    hits: list[str] = []

    def listen(event: str, **kwargs: Any) -> None:
        if event == _CACHE_HIT and threading.get_ident() == me:
            hits.append(event)

    jax.monitoring.register_event_listener(listen)
    try:
        compiled = lowered.compile(options)
    finally:
        jax.monitoring.unregister_event_listener(listen)
    return compiled, not hits


def keep_program(path: str, compiled: Any) -> None:
    """Keep ``compiled`` at ``path`` (:func:`numerix.defn.kept.keep_file`); a program JAX
    cannot serialize, or a folder that cannot be written, is not kept."""
    data = _serialize_executable(compiled)
    if data:
        keep_file(path, data)


_pause_lock = threading.Lock()
_pauses = 0
_collector_was_on = False


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused (``gc.disable``) for the block, and for
    as long as any thread is inside one; turned back on after the last one if it was on.

    Lowering a graph keeps its nodes, their steps and JAX's tracers alive together: at
    10,000 ops that is enough objects to set off full collections, each traversing the
    whole heap (JAX's own included), which raw ``jax.jit`` of the same function does not
    set off. What a compile allocates is freed by reference counting when it ends.
    """
    global _pauses, _collector_was_on
    with _pause_lock:
        if _pauses == 0:
            _collector_was_on = gc.isenabled()
            gc.disable()
        _pauses += 1
    try:
        yield
    finally:
        with _pause_lock:
            _pauses -= 1
            if _pauses == 0 and _collector_was_on:
                gc.enable()


def target_backend(args_spec: Sequence[ArgSpec], options: Mapping[str, Any]) -> XlaBackend:
    """The xla backend a program runs on: ``client``/``device_id`` from the options, else
    from the arguments' xla backend, else the default xla backend's. The arguments must
    meet it (:func:`numerix._meeting.meeting_backend`): host ones move, any other
    backend or device is refused, as in eager code."""
    opts: dict[str, Any] = {}
    met = meeting_backend("jit", args_spec, noun="argument")
    if isinstance(met, XlaBackend):
        opts = {k: met.options[k] for k in ("client", "device_id", "devices")}
    client, did = options.get("client"), options.get("device_id")
    if client is not None:
        if not isinstance(client, str):
            raise ArgumentError(
                f"jit: compiler 'xla' takes client as a name ('host', 'cuda'), got {client!r}"
            )
        if opts.get("client") != client:
            opts = {}
        opts["client"] = client
    if did is not None:
        opts["device_id"] = did
        opts.pop("devices", None)
    backend = get_backend("xla", **opts)
    assert isinstance(backend, XlaBackend)
    meeting_backend("jit", args_spec, backend, noun="argument")
    return backend


class _Lowering(GraphWalk):
    """Turns graphs into Python functions over tensor shells of ``backend`` (the one walk
    of :mod:`numerix.defn.graph`: ``env`` maps a node to its step, the context is the
    graph's slots); collects the captured tensors (moved to the device once) that the
    program takes as extra arguments."""

    backend: XlaBackend

    def graph(self, g: Graph) -> Callable[[list[Any], Sequence[Any]], list[Any]]:
        """``f(args, caps)``: the values of ``g.outputs`` from those of ``g.parameters``."""
        slot = {n.id: k for k, n in enumerate(g.nodes)}
        nslots = len(g.nodes)
        param_slots = [slot[p.id] for p in g.parameters]
        out_slots = [slot[o.id] for o in g.outputs]
        made: dict[int, _Step] = {}
        self.walk(g, made, slot)
        # each value is dropped after its last reader: the shells (and what they hold)
        # do not outlive their use while JAX traces the rest of the graph
        frees: dict[int, list[int]] = {}
        keep = set(out_slots)
        for node_id, k in last_reads(g).items():
            if slot[node_id] not in keep:
                frees.setdefault(k, []).append(slot[node_id])
        steps = [
            (slot[n.id], made[n.id], tuple(frees.get(k, ())))
            for k, n in enumerate(g.nodes)
            if n.op != PARAMETER
        ]

        def run(args: list[Any], caps: Sequence[Any]) -> list[Any]:
            env: list[Any] = [None] * nslots
            for s, a in zip(param_slots, args):
                env[s] = a
            for s, step, free in steps:
                env[s] = step(env, caps)
                for f in free:
                    env[f] = None
            return [env[s] for s in out_slots]

        return run

    # ------------------------------------------------------------ one node per kind
    def primitive(self, n: Node, env: dict[int, Any], slot: dict[int, int]) -> _Step:
        b = self.backend
        get = _getter(n.inputs, slot)
        kernel = getattr(b, n.op)
        shape, dtype, params = n.shape, n.dtype, n.params
        assert shape is not None and dtype is not None  # a primitive has one value

        def prim(env: list[Any], caps: Sequence[Any]) -> Any:
            return kernel(new_out(shape, dtype, b), *get(env), **params)

        return prim

    def elem(self, n: Node, env: dict[int, Any], slot: dict[int, int]) -> _Step:
        src, index = slot[n.inputs[0].id], n.params["index"]
        return lambda env, caps: env[src][index]

    def hook(self, n: Node, env: dict[int, Any], slot: dict[int, int]) -> _Step:
        return _hook(n, slot[n.inputs[0].id])

    def block(self, n: Node, env: dict[int, Any], slot: dict[int, int]) -> _Step:
        b = self.backend
        get = _getter(n.inputs, slot)
        impl = native_block(b, n)
        if impl is not None:
            return _native_block(impl, b, n, get)
        fb = self.graph(n.fallback)
        multi = n.types is not None

        def block(env: list[Any], caps: Sequence[Any]) -> Any:
            r = fb(get(env), caps)
            return r if multi else r[0]

        return block

    def constant(self, n: Node, env: dict[int, Any], slot: dict[int, int]) -> _Step:
        b = self.backend
        shape, dtype = n.shape, n.dtype
        assert shape is not None and dtype is not None
        v: Tensor = n.value
        if n.op == CONSTANT and v.size <= FOLD_LIMIT:
            check_live("jit", v, "a captured tensor")
            # small host data: a literal of the program
            lit = np.asarray(v.backend.to_numpy(v), dtype=dtype.numpy_dtype)
            return lambda env, caps: new_out(shape, dtype, b, lit)
        k, _ = self.captured_payload(n)
        return lambda env, caps: new_out(shape, dtype, b, caps[k])

    def cond(self, n: Node, env: dict[int, Any], slot: dict[int, int]) -> _Step:
        b = self.backend
        tg, fg = n.subgraphs
        tf, ff = self.graph(tg), self.graph(fg)
        pred = slot[n.inputs[0].id]
        t_ins, f_ins = subgraph_inputs(n, tg, 1), subgraph_inputs(n, fg, 1)
        targ, farg = [slot[x.id] for x in t_ins], [slot[x.id] for x in f_ins]
        assert n.types is not None
        types = n.types
        t_in, f_in = _types(t_ins), _types(f_ins)

        def cond(env: list[Any], caps: Sequence[Any]) -> Any:
            p = env[pred].data
            if p.dtype != np.bool_:
                p = p != 0

            def branch(fn: Any, types_in: Any, which: int) -> Callable[..., Any]:
                def f(ta: Any, fa: Any) -> Any:
                    xs = (ta, fa)[which]
                    shells = [new_out(s, d, b, x) for x, (s, d) in zip(xs, types_in)]
                    return [o.data for o in fn(shells, caps)]

                return f

            outs = lax.cond(
                p,
                branch(tf, t_in, 0),
                branch(ff, f_in, 1),
                [env[i].data for i in targ],
                [env[i].data for i in farg],
            )
            return [new_out(s, d, b, o) for o, (s, d) in zip(outs, types)]

        return cond

    def loop(self, n: Node, env: dict[int, Any], slot: dict[int, int]) -> _Step:
        b = self.backend
        cg, bg = n.subgraphs
        cf, bf = self.graph(cg), self.graph(bg)
        k = cg.n_args
        init = [slot[i.id] for i in n.inputs[:k]]
        cfree = [slot[f.id] for f in subgraph_inputs(n, cg, 0)[k:]]
        bfree = [slot[f.id] for f in subgraph_inputs(n, bg, 0)[k:]]
        assert n.types is not None
        types = n.types

        def loop(env: list[Any], caps: Sequence[Any]) -> Any:
            cvals = [env[i] for i in cfree]
            bvals = [env[i] for i in bfree]  # closed over by the loop's functions

            def state(xs: Any) -> list[Tensor]:
                return [new_out(s, d, b, x) for x, (s, d) in zip(xs, types)]

            def c(xs: Any) -> Any:
                p = cf(state(xs) + cvals, caps)[0].data
                return p if p.dtype == np.bool_ else p != 0

            def body(xs: Any) -> Any:
                return [o.data for o in bf(state(xs) + bvals, caps)]

            outs = lax.while_loop(c, body, [env[i].data for i in init])
            return state(outs)

        return loop


def _dtypes(g: Graph) -> set[Any]:
    """The dtypes of every value of ``g`` and of its subgraphs (arguments included)."""
    out: set[Any] = set()
    for n in g.nodes:
        if n.types is not None:
            out.update(d for _, d in n.types)
        else:
            out.add(n.dtype)
        for sub in n.subgraphs:
            out |= _dtypes(sub)
    return out


def _getter(inputs: Sequence[Any], slot: dict[int, int]) -> Callable[[list[Any]], list[Any]]:
    """``get(env)``: the node's input values (non-node inputs passed as they are)."""
    if all(isinstance(i, Node) for i in inputs):
        idx = [slot[i.id] for i in inputs]
        return lambda env: [env[i] for i in idx]
    parts = [(True, slot[i.id]) if isinstance(i, Node) else (False, i) for i in inputs]
    return lambda env: [env[v] if is_node else v for is_node, v in parts]


def _types(nodes: Sequence[Node]) -> list[tuple[Any, Any]]:
    return [(x.shape, x.dtype) for x in nodes]


def _hook(n: Node, src: int) -> _Step:
    fn, shape, dtype = n.value, n.shape, n.dtype
    assert shape is not None and dtype is not None

    def call(a: Any) -> None:
        # the callback gets a host (binary) tensor: calling back into JAX from a
        # callback may deadlock on accelerators
        t = new_out(shape, dtype, get_backend("binary"), np.asarray(a, dtype=dtype.numpy_dtype))
        fn(t)

    def hook(env: list[Any], caps: Sequence[Any]) -> Any:
        x = env[src]
        jax.debug.callback(call, x.data, ordered=True)
        return x

    return hook


def _native_block(impl: Any, b: Backend, n: Node, get: Callable[[list[Any]], list[Any]]) -> _Step:
    types, shape, dtype, params = n.types, n.shape, n.dtype, n.params

    def block(env: list[Any], caps: Sequence[Any]) -> Any:
        if types is not None:
            outs: Any = tuple(new_out(s, d, b) for s, d in types)
        else:
            outs = new_out(shape, dtype, b)  # type: ignore[arg-type]
        r = impl(b, outs, *get(env), **params)
        return list(r) if isinstance(r, tuple) else r

    return block


def _program(
    graph: Graph, args_spec: Sequence[ArgSpec], backend: XlaBackend
) -> tuple[Callable[..., Any], list[Any], Any, list[Any], Any]:
    """``graph`` as a function of JAX values (the arguments, then the captured tensors'
    payloads), those payloads, the weak references to the captured tensors, the
    abstract values of both, and where the backend places values (its device, or its
    devices replicated)."""
    lowering = _Lowering(backend)
    body = lowering.graph(graph)
    caps = list(lowering.captured_payloads)
    n = len(args_spec)
    in_types = [(s.shape, s.dtype) for s in args_spec]
    single = len(graph.outputs) == 1

    def program(*xs: Any) -> Any:
        args = [new_out(s, d, backend, x) for x, (s, d) in zip(xs[:n], in_types)]
        outs = [o.data for o in body(args, xs[n:])]
        return outs[0] if single else outs  # one output: as raw jax.jit returns it

    sharding = backend.placement
    specs = [
        jax.ShapeDtypeStruct(s.shape, s.dtype.numpy_dtype, sharding=sharding) for s in args_spec
    ] + [jax.ShapeDtypeStruct(c.shape, c.dtype, sharding=sharding) for c in caps]
    return program, caps, lowering.captured, specs, sharding


def _has_hook(g: Graph) -> bool:
    return any(n.op == HOOK or any(_has_hook(sub) for sub in n.subgraphs) for n in g.nodes)


# ---------------------------------------------------------------- exported programs
# payload: meta length (8 bytes, little-endian), meta (JSON: the machine, the parts'
# lengths), the StableHLO, the compiled executable (empty where JAX cannot serialize it)
_LEN = struct.Struct("<Q")


def _machine(dev: Any) -> dict[str, str]:
    """What a compiled executable depends on: the JAX release and the device."""
    return {
        "jax": jax.__version__,
        "jaxlib": jaxlib.__version__,
        "platform": dev.platform,
        "device_kind": dev.device_kind,
    }


def _unpack(payload: bytes) -> tuple[dict[str, Any], bytes, bytes]:
    def bad(why: str) -> FileFormatError:
        return FileFormatError(f"load_exported: the xla compiler's payload is {why}")

    if len(payload) < _LEN.size:
        raise bad("truncated")
    (n,) = _LEN.unpack_from(payload)
    try:
        meta = json.loads(payload[_LEN.size : _LEN.size + n])
    except (ValueError, UnicodeDecodeError):
        raise bad("corrupt (its header is not JSON)") from None
    if (
        type(meta) is not dict
        or type(meta.get("hlo")) is not int
        or type(meta.get("executable")) is not int
    ):
        raise bad("corrupt (its header lacks the parts' lengths)")
    start = _LEN.size + n
    end = start + meta["hlo"] + meta["executable"]
    if len(payload) != end:
        raise bad(f"truncated or padded ({len(payload)} bytes where its header says {end})")
    return meta, payload[start : start + meta["hlo"]], payload[start + meta["hlo"] : end]


def _serialize_executable(compiled: Any) -> bytes:
    """The compiled executable's bytes (``jax.experimental.serialize_executable``), or
    nothing where this JAX or device cannot serialize it (the StableHLO serves)."""
    try:
        return bytes(serialize_executable.serialize(compiled)[0])
    except Exception:
        return b""


def _load_executable(data: bytes, n_in: int, n_out: int, dev: Any) -> Any:
    """The executable ``data`` holds, loaded on ``dev``; None where it cannot be (the
    caller compiles the StableHLO instead)."""
    in_tree = jax.tree_util.tree_structure(((0,) * n_in, {}))
    out_tree = jax.tree_util.tree_structure(0 if n_out == 1 else [0] * n_out)
    try:
        return serialize_executable.deserialize_and_load(
            data, in_tree, out_tree, execution_devices=[dev]
        )
    except Exception:
        return None
