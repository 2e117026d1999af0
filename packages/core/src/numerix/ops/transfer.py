"""Moving tensors between backends and devices: backend_transfer, backend_copy, backend_deallocate."""

from __future__ import annotations

from typing import Any

from numerix._dispatch import check_concrete, move, new_out
from numerix._meeting import DEALLOCATED
from numerix._tensor import Device, Tensor
from numerix.backend import Backend
from numerix.configuration import get_default_backend, resolve_backend
from numerix.ops._core import bind
from numerix.primitives import creation as creation_primitives

__all__ = ["backend_transfer", "backend_copy", "backend_deallocate"]


def _target(backend: Any, options: dict[str, Any], op: str) -> Backend:
    if type(backend) is Device:  # a tensor's .device: its backend instance
        backend = backend.backend
    return resolve_backend(get_default_backend() if backend is None else backend, op, **options)


def backend_transfer(t: Tensor, backend: Any = None, **options: Any) -> Tensor:
    """``t`` on ``backend`` (default: the default backend), without a copy where the two
    backends can share memory (DLPack), through host memory otherwise (``Nx.backend_transfer``).
    ``backend`` is a backend spec, a backend instance or a device (another tensor's
    ``.device``).

    >>> import numerix as nx
    >>> nx.backend_transfer(nx.tensor([1, 2]), "binary").tolist()
    [1, 2]
    """
    if type(t) is not Tensor:
        raise TypeError(f"backend_transfer: expected a Tensor, got {type(t).__name__}")
    return move(t, _target(backend, options, "backend_transfer"), "backend_transfer")


def backend_copy(t: Tensor, backend: Any = None, **options: Any) -> Tensor:
    """A copy of ``t`` on ``backend`` (default: ``t``'s own) that shares no memory with it."""
    if type(t) is not Tensor:
        raise TypeError(f"backend_copy: expected a Tensor, got {type(t).__name__}")
    target = (
        t.backend if backend is None and not options else _target(backend, options, "backend_copy")
    )
    check_concrete(t, "backend_copy")
    host = t.backend.to_numpy(t).copy()
    return bind(creation_primitives.from_numpy, new_out(t.shape, t.dtype, target), host)


def backend_deallocate(t: Tensor) -> None:
    """Free ``t``'s memory now (``Nx.backend_deallocate``); using ``t`` afterwards raises."""
    if type(t) is not Tensor:
        raise TypeError(f"backend_deallocate: expected a Tensor, got {type(t).__name__}")
    t.backend.deallocate(t)
    t.data = None
    t.backend = DEALLOCATED
