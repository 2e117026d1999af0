"""The ``torch`` compiler: a traced graph written out as one Python function over torch
tensors, on one torch device.

The graph is lowered by the core's replay (:mod:`numerix.defn.replay`): one line per
node, calling the torch function the backend lowers the primitive to (or the kernel
method on shells), ``cond``/``while`` as Python ``if``/``while``, blocks as the
backend's ``block_<name>`` or the core's version inlined; captured tensors and
constants move to the device once; each intermediate is dropped after its last use. A
call is that function: no validation, no numerix dispatch, no Tensor created but the
outputs; it holds no state, so threads may call it at once.

Options: ``mode`` (``"replay"``: run that function; ``"inductor"``: trace it to a
graph of aten ops and compile that with inductor, or with ``[compile] cache_dir`` into
an AOTInductor package kept there for later processes), ``device`` and ``device_id``
(default: the arguments' torch device, else the torch backend's default device).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import re
import struct
import threading
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from numerix._meeting import check_live, meeting_backend
from numerix.backend import Backend, Option
from numerix.configuration import effective_settings
from numerix.defn.compilers import ArgSpec, Compiler, Executable
from numerix.defn.expr import COND, CONSTANT, FOLD_LIMIT, HOOK, TENSOR, WHILE, Graph
from numerix.defn.kept import (
    cache_root,
    code_version,
    keep_file,
    kept_path,
    program_key,
    read_kept,
)
from numerix.defn.replay import Program, lower, run_program, runner
from numerix.errors import ArgumentError, FileFormatError, first_line
from numerix.plugins import get_backend

__all__ = ["TorchCompiler", "InductorFallbackWarning"]

MODES = ("replay", "inductor")
# an exported program's payload: its header's length (8 bytes, little-endian), the
# header (JSON: torch's release, the device type), the torch.export archive
_LEN = struct.Struct("<Q")


class InductorFallbackWarning(UserWarning):
    """``mode="inductor"`` could not compile a graph; it runs in ``replay`` mode."""


class TorchCompiler(Compiler):
    """Lowers a graph to one function of torch kernel calls; ``mode="inductor"`` compiles
    it with inductor."""

    name = "torch"
    backend = "torch"
    accepted_options = (
        Option(
            "mode",
            "replay",
            choices=MODES,
            fix="replay (the default) runs the lowered kernels, inductor compiles them "
            "with torch's inductor",
        ),
        Option("device", None, type=str),
        Option("device_id", None, type=int, minimum=0),
    )

    def compile(
        self, graph: Any, args_spec: Sequence[ArgSpec], options: Mapping[str, Any]
    ) -> Executable:
        mode = options["mode"]
        backend = _target(args_spec, options["device"], options["device_id"])
        program = lower(graph, backend)
        if mode == "inductor":
            fn = _inductor(graph, program, package_file(graph, args_spec, backend))
            if fn is not program.fn:
                return runner(fn, program.outputs, backend, args_spec, captured=program.captured)
        return run_program(program, args_spec)

    # ------------------------------------------------------------ export
    exports = True

    def export(self, graph: Any, args_spec: Sequence[ArgSpec], options: Mapping[str, Any]) -> bytes:
        """The program as a ``torch.export`` archive of aten ops (the graph inductor
        compiles), with the device type it was made for; a graph with cond, while or
        hook nodes, which such a graph cannot hold, is refused."""
        import torch

        backend = _target(args_spec, options["device"], options["device_id"])
        special = sorted({n.op for n in graph.walk() if n.op in (COND, WHILE, HOOK)})
        if special:
            raise ArgumentError(
                f"export: compiler 'torch' exports a graph of aten ops (torch.export), which "
                f"cannot hold the graph's {', '.join(special)} node(s); export with "
                f"compiler='xla'"
            )
        program = lower(graph, backend)
        try:
            gm, examples, _ = _aten_graph(graph, program)
            with _quiet():
                archive = torch.export.export(_module(gm), tuple(examples), strict=False)
            buf = io.BytesIO()
            torch.export.save(archive, buf)
        except Exception as e:
            raise ArgumentError(f"export: {_why(e, program, 'exporting')[5:]}") from None
        device = getattr(backend, "torch_device", None)
        meta = {"torch": torch.__version__, "device": getattr(device, "type", "cpu")}
        head = json.dumps(meta, separators=(",", ":")).encode()
        return b"".join((_LEN.pack(len(head)), head, buf.getvalue()))

    def load_exported(
        self,
        payload: bytes,
        args_spec: Sequence[ArgSpec],
        outputs: Sequence[tuple[tuple[int, ...], Any]],
        backend: Backend,
    ) -> Executable:
        """The ``torch.export`` archive ``payload`` holds, run on ``backend`` (a device of
        the type it was exported on)."""
        import torch

        def bad(why: str) -> FileFormatError:
            return FileFormatError(f"load_exported: the torch compiler's payload {why}")

        if len(payload) < _LEN.size:
            raise bad("is truncated")
        (n,) = _LEN.unpack_from(payload)
        try:
            meta = json.loads(payload[_LEN.size : _LEN.size + n])
            device = meta["device"]
        except (ValueError, UnicodeDecodeError, TypeError, KeyError):
            raise bad("is corrupt (its header is not what the torch compiler writes)") from None
        here = getattr(getattr(backend, "torch_device", None), "type", "cpu")
        if device != here:
            raise ArgumentError(
                f"load_exported: the program was exported on a torch {device} device, and "
                f"backend {backend!r} is a {here} device; load it with backend=numerix."
                f"get_backend('torch', device={device!r}), or export it again there"
            )
        try:
            module = torch.export.load(io.BytesIO(payload[_LEN.size + n :])).module()
        except Exception as e:
            raise bad(f"cannot be read by torch {torch.__version__} ({type(e).__name__})") from None
        return runner(module, list(outputs), backend, args_spec)


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """A context where torch's export does not warn of its own code's deprecations (its
    pytree's ``LeafSpec``, raised from torch's internals, which a user cannot act on)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r".*LeafSpec", category=FutureWarning)
        yield


def _module(gm: Any) -> Any:
    """The aten graph ``gm`` as the module ``torch.export`` takes."""
    import torch

    class Program(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.gm = gm

        def forward(self, *xs: Any) -> Any:
            return tuple(self.gm(*xs))

    return Program()


# ---------------------------------------------------------------- the device


def _target(specs: Sequence[ArgSpec], device: Any, device_id: Any) -> Backend:
    """The torch backend a program runs on: the options', else the arguments' (when they
    live on torch), else the torch backend's default device. The arguments must meet it
    (:func:`numerix._meeting.meeting_backend`): host ones move, any other backend or
    device is refused, as in eager code."""
    met = meeting_backend("jit", specs, noun="argument")
    on_torch = met if met is not None and met.name == "torch" else None
    if device is None and device_id is None:
        backend = on_torch or get_backend("torch")
    else:
        if device is None:  # only an index: the device type of the arguments, else cuda
            device = on_torch.options["device"] if on_torch is not None else "cuda"
        opts = {"device": device}
        if device_id is not None:
            opts["device_id"] = device_id
        backend = get_backend("torch", **opts)
    meeting_backend("jit", specs, backend, noun="argument")
    return backend


# ---------------------------------------------------------------- inductor

#: the inductor cache directory numerix set (None: none yet)
_cache_dir_set: str | None = None


def use_cache_dir(settings: Any) -> None:
    """Point inductor's caches (its FX graph cache, the compiled kernels) at
    ``<[compile] cache_dir>/torch-inductor``, so that another process's compilation of
    the same graph loads them; a directory the program gave torch itself
    (``TORCHINDUCTOR_CACHE_DIR``) is kept, with a warning."""
    global _cache_dir_set
    wanted = None if settings is None else settings.compile.cache_dir
    if wanted is None:
        return
    path = os.path.join(os.path.abspath(os.path.expanduser(wanted)), "torch-inductor")
    if path == _cache_dir_set:
        return
    from torch._inductor.runtime.cache_dir_utils import default_cache_dir

    current = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    ours = (None, _cache_dir_set, os.path.abspath(default_cache_dir()))
    if current is not None and current not in ours and os.path.abspath(current) != path:
        warnings.warn(
            f"[compile] cache_dir is {wanted!r}, but torch's inductor cache directory is "
            f"already {current!r} (TORCHINDUCTOR_CACHE_DIR, set outside numerix): numerix "
            f"leaves it, so mode='inductor' keeps its compiled graphs there",
            stacklevel=4,
        )
        _cache_dir_set = path
        return
    os.makedirs(path, exist_ok=True)
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = path
    _cache_dir_set = path


_LINE = re.compile(r'<numerix program \d+>", line (\d+)')


def _inductor(graph: Graph, program: Program, path: str | None) -> Callable[..., Any]:
    """``program.fn`` compiled by inductor: with a cache directory, as an AOTInductor
    package kept at ``path`` (loaded from there when an earlier process kept it), else in
    this process. A graph inductor cannot take runs in replay mode (``program.fn``
    itself), with an :class:`InductorFallbackWarning` naming the reason."""
    special = sorted({n.op for n in graph.walk() if n.op in (COND, WHILE, HOOK)})
    if special:
        warnings.warn(
            f"jit: compiler 'torch' mode='inductor': the graph has {', '.join(special)} "
            f"node(s), which a graph of aten ops for inductor cannot hold; it runs in replay mode",
            InductorFallbackWarning,
            stacklevel=5,
        )
        return program.fn
    if path is not None:
        loaded = _load_package(path, program.backend)
        if loaded is not None:
            return _guarded(loaded, program)
    use_cache_dir(effective_settings())
    try:
        gm, real, examples = _aten_graph(graph, program)
    except Exception as e:  # a kernel torch cannot trace
        warnings.warn(_why(e, program, "tracing"), InductorFallbackWarning, stacklevel=5)
        return program.fn
    try:
        if path is not None:
            compiled = _package(gm, real, path, program.backend)
        else:
            import torch._inductor

            # inductor itself, without dynamo: jit's cache already keys the program on
            # the arguments' shapes, dtypes and device, so dynamo's guards (tens of
            # microseconds a call) would only check again what the key did
            compiled = torch._inductor.compile(gm, examples)
    except Exception as e:
        warnings.warn(_why(e, program), InductorFallbackWarning, stacklevel=5)
        return program.fn
    return _guarded(compiled, program)


def _guarded(compiled: Callable[..., Any], program: Program) -> Callable[..., Any]:
    """``compiled`` called on contiguous arguments (inductor's code asserts their
    strides; a contiguous tensor is passed as it is); after a failure of its code, the
    program runs in replay mode, with one warning."""
    state: dict[str, Any] = {"failed": False}
    lock = threading.Lock()
    replay = program.fn

    def run(*xs: Any) -> Any:
        if state["failed"]:
            return replay(*xs)
        try:
            return compiled(*[x.contiguous() for x in xs])
        except Exception as e:  # any failure of inductor's code
            with lock:
                first = not state["failed"]
                state["failed"] = True
            if first:
                warnings.warn(_why(e, program), InductorFallbackWarning, stacklevel=4)
            return replay(*xs)

    return run


# ---------------------------------------------------------------- AOTInductor packages


def package_file(graph: Graph, specs: Sequence[ArgSpec], backend: Backend) -> str | None:
    """Where ``[compile] cache_dir`` keeps ``mode="inductor"``'s package of ``graph`` for
    the arguments ``specs`` on ``backend``'s device:
    ``<cache_dir>/numerix-torch/<key>.pt2`` (see :mod:`numerix.defn.kept`); None without
    a cache directory, or for a graph the fingerprint cannot identify.

    The key's own terms: the torch release, the device, the CPU's vector instructions
    (inductor writes code for them), numerix's and numerix-torch's source files, and the
    values of the tensors the program captured (a package holds them as its constants;
    the fingerprint gives them by type).
    """
    if cache_root() is None:
        return None
    import torch

    values = hashlib.sha256()
    for n in graph.walk():
        if n.op == TENSOR or (n.op == CONSTANT and n.value.size > FOLD_LIMIT):
            check_live("jit", n.value, "a captured tensor")
            values.update(n.value.backend.to_numpy(n.value).tobytes())
    device = str(getattr(backend, "torch_device", "cpu"))
    key = program_key(
        graph, specs, torch.__version__, device, torch.backends.cpu.get_cpu_capability(),
        values.hexdigest(), code_version("numerix_torch"),
    )  # fmt: skip
    return kept_path("numerix-torch", key, ".pt2")


def _package(gm: Any, examples: Sequence[Any], path: str, backend: Backend) -> Callable[..., Any]:
    """``gm`` compiled ahead of time (``torch.export``, then AOTInductor) into a package,
    kept at ``path`` and loaded from it."""
    import torch
    import torch._inductor

    tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.pt2"
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with _quiet():
        archive = torch.export.export(_module(gm), tuple(examples), strict=False)
        torch._inductor.aoti_compile_and_package(archive, package_path=tmp)
    loaded = _load_package(tmp, backend, check=False)
    keep_file(path, written=tmp)
    if loaded is None:
        raise RuntimeError(f"the AOTInductor package written at {tmp!r} could not be loaded")
    return loaded


def _load_package(path: str, backend: Backend, *, check: bool = True) -> Callable[..., Any] | None:
    """The package at ``path`` (its digest checked first: a package is machine code),
    loaded by torch's C++ loader, which imports neither inductor nor dynamo; None when
    there is none, or it cannot be loaded."""
    import torch

    if check and read_kept(path) is None:
        return None
    device = getattr(backend, "torch_device", None)
    index = -1 if device is None or device.type == "cpu" or device.index is None else device.index
    try:
        loader = torch._C._aoti.AOTIModelPackageLoader(path, "model", False, 1, index)
    except Exception:
        return None
    run = loader.run

    def call(*xs: Any) -> Any:
        return run(list(xs))

    return call


def _aten_graph(graph: Graph, program: Program) -> tuple[Any, list[Any], list[Any]]:
    """The program traced to a graph of aten ops (``make_fx`` on fake tensors: the
    kernels' Python, dtype tables and caches included, runs once here), which inductor
    then compiles whole; the example arguments (contiguous) it was traced for, real and
    as the fake tensors inductor compiles for."""
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.proxy_tensor import make_fx
    from torch.fx.experimental.symbolic_shapes import ShapeEnv

    from numerix_torch._dtypes import TORCH
    from numerix_torch._random import tracing_for_graph

    device = getattr(program.backend, "torch_device", None)
    examples = [
        torch.empty(p.shape, dtype=TORCH[p.dtype], device=device)  # type: ignore[arg-type, index]
        for p in graph.parameters
    ]
    # the program's constants and captured tensors are real tensors (moved to the device
    # once, at lowering): make_fx takes them into the graph as its constants
    # fake tensors of a mode with a shape environment (static shapes): inductor keys its
    # FX graph cache on it, and bypasses the cache for a graph traced without one
    fake = FakeTensorMode(shape_env=ShapeEnv(), allow_non_fake_inputs=True)
    fakes = [fake.from_tensor(e, static_shapes=True) for e in examples]
    with tracing_for_graph():
        gm = make_fx(program.fn, tracing_mode="fake", _allow_non_fake_inputs=True)(*fakes)
    return gm, examples, fakes


def _op_at(program: Program, line: int) -> str | None:
    """The op written on ``line`` of the program's source (its ``# op`` comment)."""
    lines = program.source.splitlines()
    if 1 <= line <= len(lines) and "  # " in lines[line - 1]:
        return lines[line - 1].rsplit("  # ", 1)[1]
    return None


def _why(e: Exception, program: Program, step: str = "compiling") -> str:
    ops = [_op_at(program, int(m)) for m in _LINE.findall(str(e))]
    where = next((f" at op {op!r}" for op in reversed(ops) if op), "")
    first = first_line(e)
    return (
        f"jit: compiler 'torch' mode='inductor': {step} failed{where} "
        f"({type(e).__name__}: {first}); this graph runs in replay mode"
    )
