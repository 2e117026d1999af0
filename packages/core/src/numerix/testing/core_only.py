"""A backend restricted to the required core: every optional primitive by the core's
fallback.

``core_only(cls)`` is a subclass of backend class ``cls`` that keeps ``cls``'s methods for
the required primitives (:data:`numerix.primitives.REQUIRED`) and its host exchange, and
runs the core's fallback for every other primitive, whether ``cls`` implements it or not.
Registered under a name of its own and run through the kit, it checks the fallbacks
against the kit's oracles on a library the kit already trusts (``binary``'s numpy)::

    numerix.register_backend("binary_core", core_only(BinaryBackend, "binary_core"))

and on a backend of one's own, it shows what the backend owes to its own optional
kernels. The blocks (``block_<name>``) are dropped too: the core's composites run.
"""

from __future__ import annotations

from typing import Any

from numerix.backend import Backend, fallback_kernel
from numerix.plugins import backend_class
from numerix.primitives._registry import BLOCKS, REGISTRY

__all__ = ["core_backend", "core_only"]


def core_only(cls: type[Backend], name: str, keep: tuple[str, ...] = ()) -> type[Backend]:
    """A subclass of ``cls`` named ``name`` that implements only the required core (and
    the primitives named in ``keep``: to check one family's fallbacks over another's
    native kernels)."""
    body: dict[str, Any] = {"name": name, "__slots__": (), "__module__": __name__}
    for p in REGISTRY:
        if not p.required and p.name not in keep:
            body[p.name] = fallback_kernel(p)
    for b in BLOCKS.values():
        if hasattr(cls, b.method):
            body[b.method] = None  # run_block finds no method: the core's composite runs

    def fast_kernel(self: Any, op: str, form: str, dtype: Any) -> Any:
        # the parent's shortcuts are its own kernels: only a required primitive's is kept
        p = REGISTRY._prims.get(op)
        if p is None or not (p.required or op in keep):
            return None
        return cls.fast_kernel(self, op, form, dtype)

    body["fast_kernel"] = fast_kernel
    sub: type[Backend] = type(f"{cls.__name__}CoreOnly", (cls,), body)
    return sub


def core_backend() -> type[Backend]:
    """A base class for a test's own backend: ``binary`` restricted to the required core
    (:func:`core_only`), which registers (registration refuses a class without the
    required core). Subclass it and set ``name``."""
    return core_only(backend_class("binary"), "")
