"""The conformance kit's side of its pytest plugin.

pytest loads the plugin through the entry point ``pytest11: numerix``, which names
:mod:`_numerix_pytestplugin`: options, markers, the ``numerix_backend`` fixture, the
per-op report and the hooks, importing nothing of numerix. This module is what they
import when a test runs with a backend selected, by the ``numerix_backend`` fixture
(override it in a conftest) or by ``--numerix-backend=SPEC`` / the ini option
``numerix_backend``; it does not import them back (what it needs of the test, the op and
the ini option, it is given). Once selected, every test runs with that backend as the
default.
A backend claims what it implements, and the kit reports what it does not claim as
*not claimed* (neither passed nor failed):

- dtypes: a test of a dtype outside ``Backend.supported_dtypes`` is not run;
- primitives: the kit reads them off the backend's class (a primitive of the
  registry the class has no method for is not claimed); a test that reaches one of
  them (``NotImplementedError`` from :class:`numerix.backend.Backend`) is not
  claimed. A primitive the class does define and that fails is a failure.

The terminal summary lists, per op, how many of the kit's cases passed, failed or
were not claimed.

The kit compiles thousands of kernels on a compiling backend (one per op, shape and
dtype), so the plugin keeps a test process small and fast:

- it calls :func:`numerix.clear_caches` when the op under test changes and at least
  ``numerix_clear_caches_every`` kit tests (ini option, default 400) ran since the
  last clear, or when the process grew by 1 GiB since then (on Linux): kernels stay
  shared by the cases of one op, and the compiled executables of ops done with are
  freed (and returned to the system);
- under pytest-xdist it puts every case of one op in one group
  (``--dist loadgroup``), so the kernels an op's cases share are compiled by one
  worker only;
- it registers the hypothesis profile ``numerix-ci`` (``--hypothesis-profile=numerix-ci``):
  10 derandomized draws per property instead of the kit's 40.
"""

from __future__ import annotations

import ctypes
import gc
import os
import re
import sys
from collections.abc import Iterator
from typing import Any

import pytest

import numerix as nx
from numerix import _dispatch
from numerix.backend import is_fallback
from numerix.dtypes import DType
from numerix.errors import UnsupportedDTypeError
from numerix.plugins import clear_caches
from numerix.primitives import REGISTRY
from numerix.testing.tolerances import current_op

__all__ = [
    "current_op", "missing_primitive", "prepare", "resolve", "run_with_backend",
    "unclaimed_dtype", "unclaimed_primitives",
]  # fmt: skip


class _Clearing:
    """When to clear the compiled caches: at the first change of op after ``every`` kit
    tests since the last clear, or after ``memory`` bytes of growth of the process
    since the last clear (where the process's size can be read: Linux), whatever the op.
    ``every`` 0 never clears."""

    def __init__(self, every: int, memory: int = 1 << 30) -> None:
        self.every = every
        self.memory = memory
        self.since = 0
        self.op: str | None = None
        self.base = _resident()

    def before(self, op: str) -> None:
        if self.every and (
            (op != self.op and self.since >= self.every)
            or (self.base is not None and (_resident() or 0) - self.base > self.memory)
        ):
            clear_caches()
            _release_memory()
            self.since = 0
            self.base = _resident()
        self.op = op
        self.since += 1


def _resident() -> int | None:
    """The resident size of this process in bytes, or None where it cannot be read."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return None


def _release_memory() -> None:
    # what clear_caches freed goes back to the system (glibc keeps it otherwise)
    gc.collect()
    if _TRIM is not None:
        _TRIM(0)


def _malloc_trim() -> Any:
    try:
        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None


_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
_TRIM = _malloc_trim() if sys.platform.startswith("linux") else None
_CLEARING = pytest.StashKey[_Clearing]()


def resolve(spec: Any) -> Any:
    """The backend the kit runs on, from the plugin's spec (a name, ``name:field``, or
    ``(name, options)``)."""
    return nx.configuration.resolve_backend(spec, "numerix kit")


def prepare(config: pytest.Config, op: str | None, clear_every: int) -> None:
    """Before a test that runs with a backend: every kernel's result checked against its
    primitive's rules (once on, it stays); for a kit test of ``op``, the compiled caches
    cleared when the op changes after ``clear_every`` kit tests (or 1 GiB of growth)."""
    _dispatch.check_rules(True)
    if op is not None:
        clearing = config.stash.get(_CLEARING, None)
        if clearing is None:
            clearing = config.stash[_CLEARING] = _Clearing(clear_every)
        clearing.before(op)


def unclaimed_primitives(backend_class: type) -> frozenset[str]:
    """The primitives of the registry ``backend_class`` has no method for, neither its own
    nor the core's fallback: the kit reports the tests that reach them as not claimed."""
    out = set()
    for p in REGISTRY:
        method = getattr(backend_class, p.name, None)
        if not callable(method) or (is_fallback(method) and p.fallback is None):
            out.add(p.name)
    return frozenset(out)


# the message of Backend.__getattr__ for a primitive a backend has no method for
_MISSING = re.compile(r"does not implement primitive '(\w+)'")


def missing_primitive(exc: BaseException | None, unclaimed: frozenset[str]) -> str | None:
    """What ``exc`` (or what caused it) reports as not claimed, or None: an unclaimed
    primitive's name, or ``"dtype"`` for a dtype the backend does not hold (a grouped
    test walking dtypes reaches one the backend does not claim)."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        group = getattr(exc, "exceptions", None)  # hypothesis reports several as a group
        if isinstance(group, (tuple, list)) and group:
            found = [missing_primitive(e, unclaimed) for e in group]
            return found[0] if all(found) else None
        if isinstance(exc, NotImplementedError):
            m = _MISSING.search(str(exc))
            if m is not None and m.group(1) in unclaimed:
                return m.group(1)
        if isinstance(exc, UnsupportedDTypeError):
            return "dtype"
        exc = exc.__cause__ or exc.__context__
    return None


def _dtypes_of(item: pytest.Item) -> list[DType]:
    out: list[DType] = []

    def walk(v: Any) -> None:
        if isinstance(v, DType):
            out.append(v)
        elif isinstance(v, (tuple, list)):
            for x in v:
                walk(x)

    for v in getattr(getattr(item, "callspec", None), "params", {}).values():
        walk(v)
    return out


def unclaimed_dtype(backend: Any, item: pytest.Item) -> DType | None:
    """The first dtype among ``item``'s parameters that ``backend`` does not claim, or
    None: the plugin reports such a test as not claimed."""
    claimed = type(backend).supported_dtypes
    if claimed is None:
        return None
    missing = [d for d in _dtypes_of(item) if d not in claimed]
    return missing[0] if missing else None


def run_with_backend(backend: Any, op: str | None) -> Iterator[None]:
    """Around a test that runs with ``backend``: that backend is the default, and ``op``
    (a kit test's, else None) is the op the tolerances are read for."""
    token = current_op.set(op)
    try:
        with nx.default_backend(backend):
            yield
    finally:
        current_op.reset(token)
