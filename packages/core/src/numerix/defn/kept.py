"""Compiled programs kept between processes, under ``[compile] cache_dir``.

A compiler that can write its compiled program to a file and load it again (the xla
compiler's executables, the torch compiler's AOTInductor packages) keeps it in
``<cache_dir>/<folder>/<key><suffix>``, where the key is computed before anything is
lowered or compiled: :func:`program_key`. A later process that traces the same graph for
the same arguments finds the file and skips lowering and compilation.

Files are written whole (a temporary file renamed) beside the SHA-256 of their bytes,
and read back only when the digest matches: a cut or altered file is compiled again and
rewritten, never loaded (a compiler's file may be machine code).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import threading
from collections.abc import Sequence
from typing import Any

from numerix.configuration import effective_settings
from numerix.defn.graph import fingerprint

__all__ = ["cache_root", "code_version", "keep_file", "kept_path", "program_key", "read_kept"]

#: what a kept file's sidecar (``<file>.sha256``) starts with, then the file's digest
_SIDECAR = b"numerix-kept 1\n"


def program_key(graph: Any, specs: Sequence[Any], *context: Any) -> str | None:
    """The key a compiled program of ``graph`` is kept under: the graph's
    :func:`~numerix.defn.graph.fingerprint`, the arguments' shapes and dtypes (``specs``:
    anything with ``shape`` and ``dtype``), and ``context``, the compiler's own terms (its
    library's release, the device, the settings and the source files that change what it
    compiles: see :func:`code_version`), each by its ``repr``. None for a graph the
    fingerprint cannot identify (it calls back into Python)."""
    digest = fingerprint(graph)
    if digest is None:
        return None
    h = hashlib.sha256()
    h.update(digest.encode())
    h.update(repr([(tuple(s.shape), str(s.dtype)) for s in specs]).encode())
    h.update(repr(context).encode())
    return h.hexdigest()


def cache_root() -> str | None:
    """``[compile] cache_dir``, absolute; None where the settings give none (a compiler
    asks first, and computes no key: nothing is kept)."""
    settings = effective_settings()
    root = None if settings is None else settings.compile.cache_dir
    return None if root is None else os.path.abspath(os.path.expanduser(root))


def kept_path(folder: str, key: str | None, suffix: str) -> str | None:
    """``<[compile] cache_dir>/<folder>/<key><suffix>``; None without a cache directory
    in the settings, or without a key."""
    root = cache_root()
    if root is None or key is None:
        return None
    return os.path.join(root, folder, key + suffix)


@functools.cache
def code_version(*modules: str) -> str:
    """numerix's source files and those of the packages ``modules`` names, by path, size
    and modification time: a program kept by a process that ran other code is not
    reused."""
    h = hashlib.sha256()
    for module in ("numerix", *modules):
        spec = importlib.util.find_spec(module)
        roots = [] if spec is None else list(spec.submodule_search_locations or ())
        for root in roots:
            for folder, subs, files in sorted(os.walk(root)):
                subs[:] = sorted(d for d in subs if d != "__pycache__")
                for name in sorted(files):
                    if name.endswith((".py", ".so", ".pyd")):
                        st = os.stat(os.path.join(folder, name))
                        h.update(f"{module} {os.path.relpath(folder, root)}/{name} "
                                 f"{st.st_size} {st.st_mtime_ns}\n".encode())  # fmt: skip
    return h.hexdigest()


def read_kept(path: str) -> bytes | None:
    """The bytes kept at ``path``; None when there are none, or they are not whole (their
    digest is missing or differs)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
        with open(path + ".sha256", "rb") as f:
            sidecar = f.read()
    except OSError:
        return None
    if sidecar != _SIDECAR + hashlib.sha256(data).hexdigest().encode():
        return None
    return data


def keep_file(path: str, data: bytes | None = None, *, written: str | None = None) -> bool:
    """Keep ``data`` at ``path`` (or move the file ``written`` there), then its digest
    beside it, each whole (a temporary file renamed: a reader sees an old file, none, or
    the new one, and a file without its digest is not read). False when the folder
    cannot be written (the program is then not kept)."""
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if written is not None:
            with open(written, "rb") as f:
                data = f.read()
        assert data is not None
        tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
        _remove(path + ".sha256")  # the old digest first: never a new file with an old digest
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
        with open(tmp, "wb") as f:
            f.write(_SIDECAR + hashlib.sha256(data).hexdigest().encode())
        os.replace(tmp, path + ".sha256")
    except OSError:
        return False
    finally:
        if written is not None:
            _remove(written)
    return True


def _remove(path: str) -> None:
    try:
        os.remove(path)
    except OSError:
        pass
