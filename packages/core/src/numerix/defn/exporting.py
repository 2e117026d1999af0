"""Programs that outlive their process: :func:`export` writes a compiled program as bytes,
:func:`load_exported` runs it in another process, without the Python source.

The bytes are numerix's envelope around the compiler's own payload::

    b"NUMERIX-PROGRAM\\n"           16 bytes, the magic number
    header length                   8 bytes, little-endian
    header                          JSON: format, numerix version, compiler, the name of
                                    the function, the arguments' and results' trees,
                                    shapes and dtypes, the payload's length and SHA-256
    payload                         what the compiler's ``export`` wrote (the xla
                                    compiler: serialized StableHLO, and the compiled
                                    executable for machines like this one)

The header is plain JSON, so a program's signature can be read without loading it
(:func:`exported_signature`). See docs/export.md.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
from collections.abc import Callable, Sequence
from typing import Any

from numerix import dtypes, plugins
from numerix._version import __version__
from numerix.backend import Backend
from numerix.compiler import ArgSpec, Compiler
from numerix.configuration import get_default_backend
from numerix.defn.compilers import meeting_backend, resolve_compiler
from numerix.defn.expr import format_type, num_leaves, plain_spec, trace_flat, unflatten
from numerix.defn.jit import Compiled
from numerix.defn.trace import Template, flatten_plain, leaf_spec
from numerix.dtypes import DType
from numerix.errors import ArgumentError, FileFormatError
from numerix.ops._core import resolve

__all__ = ["export", "load_exported", "Exported", "exported_signature"]

MAGIC = b"NUMERIX-PROGRAM\n"
#: the envelope's version; a newer one is refused with the numerix version that wrote it
FORMAT = 1
_LEN = struct.Struct("<Q")


# ---------------------------------------------------------------------------- trees
class _Slot:
    """A leaf's place in a tree being written out."""


def _encode_tree(treedef: Any, op: str) -> Any:
    """``treedef`` (a :class:`~numerix.defn.expr.PlainTree` or optree's) as JSON: ``"*"``
    a leaf, ``{"tuple"|"list": [...]}``, ``{"dict": [[key, value], ...]}`` (str or int
    keys), ``{"none": null}``."""
    skeleton = unflatten(treedef, [_Slot() for _ in range(num_leaves(treedef))])

    def enc(x: Any) -> Any:
        t = type(x)
        if t is _Slot:
            return "*"
        if x is None:
            return {"none": None}
        if t is tuple:
            return {"tuple": [enc(v) for v in x]}
        if t is list:
            return {"list": [enc(v) for v in x]}
        if t is dict:
            for k in x:
                if type(k) not in (str, int):
                    raise ArgumentError(
                        f"{op}: a dict key is a {type(k).__name__} ({k!r:.40}); an exported "
                        f"program's arguments and results use str or int keys"
                    )
            return {"dict": [[k, enc(v)] for k, v in x.items()]}
        raise ArgumentError(
            f"{op}: a {t.__name__} in the arguments or results; an exported program's "
            f"trees are tuples, lists, dicts and None (convert a {t.__name__} to one)"
        )

    return enc(skeleton)


def _decode_tree(data: Any, where: str) -> Any:
    """The structure :func:`_encode_tree` wrote: a :class:`~numerix.defn.expr.PlainTree`
    (optree's for a dict mixing str and int keys), as ``flatten_plain`` makes of the
    arguments a loaded program is called with."""

    def dec(x: Any) -> Any:
        if x == "*":
            return _Slot()
        if type(x) is dict and len(x) == 1:
            ((kind, v),) = x.items()
            if kind == "none" and v is None:
                return None
            if kind in ("tuple", "list") and type(v) is list:
                items = [dec(i) for i in v]
                return tuple(items) if kind == "tuple" else items
            if kind == "dict" and type(v) is list:
                out = {}
                for pair in v:
                    if type(pair) is not list or len(pair) != 2 or type(pair[0]) not in (str, int):
                        break
                    out[pair[0]] = dec(pair[1])
                else:
                    return out
        raise FileFormatError(f"{where}: the header's tree {x!r:.80} is malformed")

    skeleton = dec(data)
    plain = plain_spec(skeleton, _Slot)
    if plain is not None:
        return plain
    import optree  # a dict mixing key types: optree orders them

    return optree.tree_flatten(skeleton, is_leaf=lambda v: type(v) is _Slot)[1]


def _encode_types(types: Sequence[tuple[Any, Any]]) -> list[Any]:
    # (shape, dtype) pairs: graph outputs are single-valued nodes
    return [[list(shape), dtype.name] for shape, dtype in types]


def _decode_types(data: Any, where: str) -> list[tuple[tuple[int, ...], DType]]:
    out = []
    if type(data) is not list:
        raise FileFormatError(f"{where}: the header's types {data!r:.80} are malformed")
    for item in data:
        ok = (
            type(item) is list
            and len(item) == 2
            and type(item[0]) is list
            and all(type(d) is int and d >= 0 for d in item[0])
            and type(item[1]) is str
        )
        if not ok:
            raise FileFormatError(f"{where}: the header's type {item!r:.80} is malformed")
        try:
            dtype = dtypes.as_dtype(item[1])
        except Exception:
            raise FileFormatError(
                f"{where}: the header names dtype {item[1]!r}, which numerix {__version__} "
                f"does not hold"
            ) from None
        out.append((tuple(item[0]), dtype))
    return out


# ---------------------------------------------------------------------------- export
def export(
    fn: Callable[..., Any],
    *templates: Any,
    compiler: str | Compiler | None = None,
    **compiler_options: Any,
) -> bytes:
    """``fn`` compiled for arguments shaped as ``templates``, as bytes that
    :func:`load_exported` runs in another process without the Python source
    (``jax.export``; EXLA's serialized executables).

    ``fn`` is a function or a :func:`numerix.jit` of one (whose compiler and options are
    used, unless given here); ``templates`` are :func:`numerix.template` s or tensors, in
    tuples, lists and dicts, as for :func:`numerix.compile`. The compiler must be one that
    exports: ``"xla"`` writes the program as serialized StableHLO (portable to other
    machines and JAX releases that read it), with the compiled executable beside it for a
    machine like this one (same platform, device kind and JAX release: no compilation on
    load). Captured tensors become constants of the program.

    :raises ArgumentError: the compiler does not export (naming those that do), or the
        arguments or results use a tree node other than tuple, list, dict or None.

    >>> import numerix as nx
    >>> f = nx.jit(lambda x: x.sum(), compiler="evaluator")
    >>> nx.export(f, nx.template((3,)))
    Traceback (most recent call last):
    ...
    numerix.errors.ArgumentError: export: compiler 'evaluator' cannot export a program...
    """
    jitted = getattr(fn, "jitted", None)
    options = dict(compiler_options)
    if jitted is not None:
        if jitted.static_argnames:
            raise ArgumentError(
                f"export: {jitted!r} has static arguments {list(jitted.static_argnames)}; "
                f"export functools.partial(fn, {jitted.static_argnames[0]}=...) of the "
                f"function itself, with the static values bound"
            )
        if compiler is None:
            compiler = jitted.compiler
            options = {**jitted.options, **options}
        fn = jitted.fn
    leaves, tree = flatten_plain((templates, {}), "export")
    specs = []
    for x in leaves:
        shape, dtype = leaf_spec(x, "export")
        b = getattr(x, "backend", None) or get_default_backend()
        specs.append(ArgSpec(shape, dtype, b))
    met = meeting_backend("export", specs, noun="argument")
    comp, options = resolve_compiler(compiler, options, met or get_default_backend(), "export")
    if not comp.exports:
        raise ArgumentError(
            f"export: compiler {comp.name!r} cannot export a program; compilers that can: "
            f"{', '.join(_exporting()) or 'none installed'} (pass compiler='xla', or save "
            f"the weights with numerix.save)"
        )
    name = getattr(fn, "__name__", "fn")
    graph = trace_flat(fn, [(s.shape, s.dtype) for s in specs], tree, op="export")
    header = {
        "format": FORMAT,
        "numerix": __version__,
        "compiler": comp.name,
        "name": name if isinstance(name, str) else "fn",
        "in_tree": _encode_tree(tree, "export"),
        "inputs": _encode_types([(s.shape, s.dtype) for s in specs]),
        "out_tree": _encode_tree(graph.out_tree, "export"),
        "outputs": _encode_types([(o.shape, o.dtype) for o in graph.outputs]),
    }
    payload = comp.export(graph, specs, options)
    header["payload"] = {"bytes": len(payload), "sha256": hashlib.sha256(payload).hexdigest()}
    head = json.dumps(header, separators=(",", ":")).encode()
    return b"".join((MAGIC, _LEN.pack(len(head)), head, payload))


def _exporting() -> list[str]:
    """The installed compilers that export (loads them)."""
    out = []
    for name in sorted(plugins.compiler_entries()):
        try:
            if plugins.get_compiler(name).exports:
                out.append(name)
        except Exception:  # a broken plugin is named where it is asked for by name
            continue
    return out


# ---------------------------------------------------------------------------- load
def _read(data: Any, op: str) -> tuple[dict[str, Any], bytes, str]:
    """The header and payload of an exported program given as bytes or a path."""
    where = op
    if isinstance(data, (str, os.PathLike)):
        where = f"{op}: {os.fspath(data)!r}"
        try:
            with open(data, "rb") as f:
                data = f.read()
        except OSError as e:
            raise FileFormatError(f"{where}: cannot read the file ({e.strerror})") from None
    elif isinstance(data, (bytes, bytearray, memoryview)):
        data = bytes(data)
    else:
        raise ArgumentError(
            f"{op}: takes the bytes numerix.export returned or a path to a file of them, "
            f"got {type(data).__name__}"
        )
    if not data.startswith(MAGIC):
        raise FileFormatError(
            f"{where}: not a numerix exported program (it does not start with {MAGIC!r}); "
            f"make one with numerix.export(fn, *templates)"
        )
    start = len(MAGIC) + _LEN.size
    if len(data) < start:
        raise FileFormatError(f"{where}: truncated ({len(data)} bytes, in the header)")
    (n,) = _LEN.unpack_from(data, len(MAGIC))
    if len(data) < start + n:
        raise FileFormatError(
            f"{where}: truncated ({len(data)} bytes, the header says {start + n} or more)"
        )
    try:
        header = json.loads(data[start : start + n])
    except (ValueError, UnicodeDecodeError):
        raise FileFormatError(f"{where}: the header is not valid JSON") from None
    keys = ("format", "numerix", "compiler", "name", "in_tree", "inputs", "out_tree", "outputs",
            "payload")  # fmt: skip
    if type(header) is not dict or any(k not in header for k in keys):
        raise FileFormatError(f"{where}: the header lacks fields (wants {', '.join(keys)})")
    if header["format"] != FORMAT:
        raise FileFormatError(
            f"{where}: written in format {header['format']!r} by numerix "
            f"{header['numerix']}; numerix {__version__} reads format {FORMAT}: load it with "
            f"that numerix, or export the function again"
        )
    if type(header["compiler"]) is not str or type(header["name"]) is not str:
        raise FileFormatError(f"{where}: the header's compiler or name is not a string")
    payload = data[start + n :]
    check = header["payload"]
    if type(check) is not dict or check.get("bytes") != len(payload):
        raise FileFormatError(
            f"{where}: truncated or padded (the program is {len(payload)} bytes, the header "
            f"says {check.get('bytes') if type(check) is dict else '?'})"
        )
    # the compiler's payload reaches its deserializer (native code) only intact
    if hashlib.sha256(payload).hexdigest() != check.get("sha256"):
        raise FileFormatError(f"{where}: corrupt (the program's checksum does not match)")
    return header, payload, where


def exported_signature(data: Any) -> dict[str, Any]:
    """What an exported program takes and returns, read from its header alone (nothing
    is loaded or compiled): ``{"name", "compiler", "numerix", "inputs", "outputs"}``,
    the inputs and outputs as :func:`numerix.template` s in their trees.

    >>> import numerix as nx
    >>> exported_signature(b"not a program")
    Traceback (most recent call last):
    ...
    numerix.errors.FileFormatError: exported_signature: not a numerix exported program ...
    """
    header, _, where = _read(data, "exported_signature")

    def templates(tree_key: str, types_key: str) -> Any:
        tree = _decode_tree(header[tree_key], where)
        types = _decode_types(header[types_key], where)
        if num_leaves(tree) != len(types):
            raise FileFormatError(f"{where}: the header's {tree_key} and {types_key} disagree")
        return unflatten(tree, [Template(s, d, None) for s, d in types])

    inputs = templates("in_tree", "inputs")[0]
    return {
        "name": header["name"],
        "compiler": header["compiler"],
        "numerix": header["numerix"],
        "inputs": inputs,
        "outputs": templates("out_tree", "outputs"),
    }


class _Shown:
    """A leaf shown as its type (``f32[2][3]``)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def _signature(tree: Any, specs: Sequence[ArgSpec]) -> str:
    """The arguments as their tree of types: ``{'b': f32[3]}, f32[5][4]``."""
    shown = [_Shown(format_type(s.shape, s.dtype)) for s in specs]
    rebuilt: Any = unflatten(tree, shown)
    args, kwargs = rebuilt
    return ", ".join([*map(repr, args), *(f"{k}={v!r}" for k, v in kwargs.items())])


class Exported(Compiled):
    """A program :func:`load_exported` read: called with arguments of the shapes and
    dtypes it was exported for, it returns tensors of its backend."""

    _op = "load_exported"
    _made = "exported"
    _again = "export the function again for these shapes and dtypes"

    def __init__(
        self, name: str, run: Any, specs: Any, tree: Any, out_tree: Any, compiler: str
    ) -> None:
        self.__name__ = self.__qualname__ = name
        self.run = run
        self.graph = None  # type: ignore[assignment]
        self.specs = specs
        self.tree = tree
        self.out_tree = out_tree
        #: the compiler that exported it and runs it
        self.compiler = compiler

    @property
    def backend(self) -> Backend:
        """The backend its results live on."""
        return self.run.backend  # type: ignore[attr-defined]

    def __repr__(self) -> str:
        args = _signature(self.tree, self.specs)
        return f"<numerix exported program {self.__name__}({args}) on {self.backend}>"


def load_exported(data: Any, *, backend: Any = None) -> Exported:
    """The program :func:`export` wrote (bytes, or a path to a file holding them), ready
    to call: no Python source, no tracing, and on a machine like the one that exported
    it no compilation.

    :param backend: where it runs: a backend of the exporting compiler's kind (for the
        xla compiler an xla backend, by name or instance: ``"xla"``, another device);
        default: that kind's default.
    :raises FileFormatError: not an exported program, truncated, written by a newer
        numerix, or a payload the compiler cannot read.
    :raises ArgumentError: the compiler that wrote it is not installed (naming those
        that are), or ``backend`` is not of its kind.

    Loading runs what the file holds, as unpickling does: load programs you trust.
    """
    header, payload, where = _read(data, "load_exported")
    comp = plugins.get_compiler(header["compiler"], "load_exported")
    if not getattr(comp, "exports", False):
        raise FileFormatError(
            f"{where}: written by compiler {header['compiler']!r}, which does not load "
            f"exported programs in this installation"
        )
    kind = comp.backend
    if backend is None:
        if kind is None:
            target = get_default_backend()
        else:
            target = resolve(kind, "load_exported")
    else:
        target = resolve(backend, "load_exported")
        if kind is not None and target.name != kind:
            raise ArgumentError(
                f"load_exported: the program was exported by compiler {comp.name!r}, which "
                f"runs on {kind} backends, got backend={target!r}; pass backend={kind!r} "
                f"(or one of its devices)"
            )
    in_tree = _decode_tree(header["in_tree"], where)
    out_tree = _decode_tree(header["out_tree"], where)
    inputs = _decode_types(header["inputs"], where)
    outputs = _decode_types(header["outputs"], where)
    if num_leaves(in_tree) != len(inputs) or num_leaves(out_tree) != len(outputs):
        raise FileFormatError(f"{where}: the header's trees and types disagree")
    specs = [ArgSpec(s, d, target) for s, d in inputs]
    run = comp.load_exported(payload, specs, outputs, target)
    return Exported(header["name"], run, specs, in_tree, out_tree, comp.name)
