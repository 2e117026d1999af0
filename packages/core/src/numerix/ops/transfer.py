"""Moving tensors between backends and devices: backend_transfer, backend_copy, backend_deallocate."""

from __future__ import annotations

from typing import Any

from numerix._meeting import DEALLOCATED
from numerix._tensor import Tensor
from numerix.backend import Backend
from numerix.ops._core import bind, check_concrete, new_out
from numerix.primitives import creation as P

__all__ = ["backend_transfer", "backend_copy", "backend_deallocate"]


def _target(backend: Any, options: dict[str, Any], op: str) -> Backend:
    from numerix.defaults import get_default_backend, resolve_backend

    return resolve_backend(get_default_backend() if backend is None else backend, op, **options)


def backend_transfer(t: Tensor, backend: Any = None, **options: Any) -> Tensor:
    """``t`` on ``backend`` (default: the default backend), without a copy where the two
    backends can share memory (DLPack), through host memory otherwise (``Nx.backend_transfer``).

    >>> import numerix as nx
    >>> nx.backend_transfer(nx.tensor([1, 2]), "binary").tolist()
    [1, 2]
    """
    if type(t) is not Tensor:
        raise TypeError(f"backend_transfer: expected a Tensor, got {type(t).__name__}")
    target = _target(backend, options, "backend_transfer")
    if t.backend is target:
        return t
    check_concrete(t, "backend_transfer")
    if t.dtype not in (target.supported_dtypes or (t.dtype,)):
        raise target.unsupported("backend_transfer", t.dtype)
    out = new_out(t.shape, t.dtype, target)
    done = target.from_dlpack(out, t)
    if done is not None:
        return done
    return bind(P.from_numpy, out, t.backend.to_numpy(t))


def backend_copy(t: Tensor, backend: Any = None, **options: Any) -> Tensor:
    """A copy of ``t`` on ``backend`` (default: ``t``'s own) that shares no memory with it."""
    if type(t) is not Tensor:
        raise TypeError(f"backend_copy: expected a Tensor, got {type(t).__name__}")
    target = (
        t.backend if backend is None and not options else _target(backend, options, "backend_copy")
    )
    check_concrete(t, "backend_copy")
    host = t.backend.to_numpy(t).copy()
    return bind(P.from_numpy, new_out(t.shape, t.dtype, target), host)


def backend_deallocate(t: Tensor) -> None:
    """Free ``t``'s memory now (``Nx.backend_deallocate``); using ``t`` afterwards raises."""
    if type(t) is not Tensor:
        raise TypeError(f"backend_deallocate: expected a Tensor, got {type(t).__name__}")
    t.backend.deallocate(t)
    t.data = None
    t.backend = DEALLOCATED
