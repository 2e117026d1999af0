"""Moving tensors between backends and devices: backend_transfer, backend_copy,
backend_deallocate, and device_put (with a :class:`Sharding`: spread over devices)."""

from __future__ import annotations

from typing import Any

from numerix._dispatch import check_concrete, move, new_out
from numerix._frozen import Frozen
from numerix._meeting import DEALLOCATED
from numerix._shapes import normalize_axis
from numerix._tensor import Device, Tensor
from numerix.backend import Backend
from numerix.configuration import get_default_backend, resolve_backend
from numerix.errors import ArgumentError, BackendOptionError, ShapeError
from numerix.ops._core import bind
from numerix.primitives import creation as creation_primitives

__all__ = [
    "backend_transfer", "backend_copy", "backend_deallocate", "device_put", "sharding", "Sharding",
]  # fmt: skip


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


class Sharding(Frozen):
    """How :func:`device_put` spreads a tensor over the devices of ``backend`` (one that
    spans several, such as ``numerix.get_backend("xla", devices=4)``): split along
    ``axis`` (each device holds an equal slice), or replicated on every device
    (``axis=None``). Made by :func:`sharding`."""

    __slots__ = ("axis", "backend")
    backend: Backend
    axis: int | None

    def __init__(self, backend: Backend, axis: int | None = None) -> None:
        if not isinstance(backend, Backend):
            raise ArgumentError(f"Sharding: backend must be a Backend, got {backend!r}")
        if axis is not None and type(axis) is not int:
            raise ArgumentError(f"Sharding: axis must be an int or None, got {axis!r}")
        self._set(backend=backend, axis=axis)


def sharding(
    devices: int | str | tuple[int, ...] = "all",
    axis: int | None = None,
    *,
    backend: str = "xla",
    **options: Any,
) -> Sharding:
    """A :class:`Sharding`: tensors split along ``axis`` (None: replicated) over
    ``devices`` (a count, ``"all"`` or device ids) of ``backend`` (``jax.sharding``'s
    ``NamedSharding`` over a one-axis mesh).

    :raises ArgumentError: the backend does not spread tensors over devices.
    :raises BackendOptionError: more devices than the machine has (naming how many).

    >>> import numerix as nx
    >>> nx.sharding(2, axis=0, backend="binary")
    Traceback (most recent call last):
    ...
    numerix.errors.ArgumentError: sharding: backend 'binary' does not spread tensors over devices...
    """
    name = backend if isinstance(backend, str) else getattr(backend, "name", backend)
    try:
        target = resolve_backend(name, "sharding", devices=devices, **options)
    except BackendOptionError as e:
        if "does not take option(s) 'devices'" not in str(e) and "'devices'" not in str(e):
            raise
        raise ArgumentError(
            f"sharding: backend {name!r} does not spread tensors over devices (it takes no "
            f"devices option); use backend='xla'"
        ) from None
    return Sharding(target, axis)


def device_put(x: Any, where: Any, /) -> Any:
    """``x`` (a tensor, or a tuple, list or dict of them) placed by ``where``: a
    :class:`Sharding` (split over its backend's devices, or replicated on them), or a
    backend or device (as :func:`backend_transfer`). ``jax.device_put``.

    The tensor's repr names the devices (``xla(host:0..3)``); operations on tensors of
    one such backend run on all its devices (XLA's sharding propagation), and a
    compiled function given them runs as one program over the devices.

    :raises AxisError: ``axis`` out of range for a tensor.
    :raises ShapeError: the axis's length is not a multiple of the device count.
    """
    if isinstance(x, tuple):
        return tuple(device_put(v, where) for v in x)
    if isinstance(x, list):
        return [device_put(v, where) for v in x]
    if isinstance(x, dict):
        return {k: device_put(v, where) for k, v in x.items()}
    if type(x) is not Tensor:
        raise ArgumentError(
            f"device_put: expected tensors (in tuples, lists, dicts), got {type(x).__name__}"
        )
    if type(where) is not Sharding:
        return move(x, _target(where, {}, "device_put"), "device_put")
    target = where.backend
    check_concrete(x, "device_put")
    target.check_holds("device_put", x.dtype)
    axis = where.axis
    n = target.device_count
    if axis is not None:
        axis = normalize_axis("device_put", axis, x.ndim, x.shape)
        if x.shape[axis] % n:
            raise ShapeError(
                f"device_put: {x.describe()} cannot be split along axis {axis} over {n} "
                f"devices of {target!r} ({x.shape[axis]} is not a multiple of {n}); pad it "
                f"to a multiple, or use a device count that divides it"
            )
    if n == 1:
        return move(x, target, "device_put")
    done = target.put_sharded(new_out(x.shape, x.dtype, target), x, axis)
    if done is None:
        raise ArgumentError(f"device_put: backend {target!r} cannot spread tensors over devices")
    return done


def finish(value: Any) -> None:
    """Wait until every tensor in ``value`` (a tensor, or tuples, lists and dicts of them)
    is computed (``Backend.synchronize``): what a timing of asynchronous backends waits
    for before its clock stops (``numerix.benchmark``, ``jit(compiler="auto")``)."""
    if type(value) is Tensor:
        value.backend.synchronize(value)
    elif isinstance(value, (tuple, list)):
        for v in value:
            finish(v)
    elif isinstance(value, dict):
        for v in value.values():
            finish(v)
