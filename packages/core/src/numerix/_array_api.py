"""numerix as an array API namespace: the version, devices and the inspection object.

``numerix`` itself is the namespace (``x.__array_namespace__()`` returns it). This module
holds what the standard adds beside the ops: :func:`__array_namespace_info__` and its
:class:`Info`, and :func:`placement`, which reads the ``device=`` keyword of the creation
ops. :class:`~numerix._tensor.Device` (what ``Tensor.device`` returns) and the version
constants live with the tensor, in the low layer, and are re-exported here.
"""

from __future__ import annotations

from typing import Any

from numerix import dtypes
from numerix._tensor import API_VERSION, API_VERSIONS, Device
from numerix.backend import Backend
from numerix.configuration import get_default_backend, resolve_backend
from numerix.dtypes import DType
from numerix.errors import ArgumentError, DTypeError
from numerix.plugins import devices as _device_specs

__all__ = ["API_VERSION", "API_VERSIONS", "Device", "Info", "__array_namespace_info__"]

#: The standard's dtypes, in its order (numerix's float16 and bfloat16 are extras the
#: standard does not name, so :meth:`Info.dtypes` leaves them out).
_STANDARD_DTYPES: tuple[DType, ...] = (
    dtypes.bool_, dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64,
    dtypes.uint8, dtypes.uint16, dtypes.uint32, dtypes.uint64,
    dtypes.float32, dtypes.float64, dtypes.complex64, dtypes.complex128,
)  # fmt: skip
#: The kind strings of the standard's ``dtypes(kind=...)``.
_KINDS = (
    "bool",
    "signed integer",
    "unsigned integer",
    "integral",
    "real floating",
    "complex floating",
    "numeric",
)


def placement(op: str, device: Any, backend: Any = None) -> Any:
    """The backend a creation op puts its result on, from the standard's ``device=`` and
    numerix's own ``backend=``: whichever is given (a :class:`Device` becomes its backend
    instance; a string or backend instance is a backend spec), None for the default
    backend. Giving both is an :class:`~numerix.errors.ArgumentError` unless they name
    the same backend."""
    if device is None:
        return backend
    target = device.backend if isinstance(device, Device) else resolve_backend(device, op)
    if backend is not None and resolve_backend(backend, op) is not target:
        raise ArgumentError(
            f"{op}: device={device!r} and backend={backend!r} name different places; "
            f"give one of them"
        )
    return target


def _check_device(device: Any, op: str) -> Backend:
    if device is None:
        return get_default_backend()
    if isinstance(device, Device):
        return device.backend
    return resolve_backend(device, op)


class Info:
    """The array API inspection object :func:`__array_namespace_info__` returns: what
    numerix can do, and its devices and dtypes, as seen from the default backend (the one
    new tensors are created on) at the time of the call."""

    __slots__ = ()

    def capabilities(self) -> dict[str, Any]:
        """``{"boolean indexing": True, "data-dependent shapes": True, "max dimensions":
        None}``.

        numerix differs from the standard's reading in one place: operations whose result
        shape depends on the values (boolean-mask indexing, ``nonzero``, the ``unique_*``
        functions) run eagerly only; under a trace (``jit``, ``grad``) they raise, as in
        JAX, since a traced value has no known shape. numerix sets no limit of its own on
        the number of dimensions (``None``); the backend's library may (numpy's is 64).
        """
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": None}

    def default_device(self) -> Device:
        """The device of the default backend (:func:`numerix.get_default_backend`)."""
        return Device(get_default_backend())

    def default_dtypes(self, *, device: Any = None) -> dict[str, DType]:
        """numerix's default dtypes, the same on every device: ``"real floating"``
        float32 (a Python float becomes float32, as in JAX and torch; the standard allows
        float32 or float64), ``"complex floating"`` complex64, ``"integral"`` and
        ``"indexing"`` int64."""
        _check_device(device, "default_dtypes")
        real = dtypes.default_float()
        return {
            "real floating": real,
            "complex floating": dtypes.promote_types(real, dtypes.complex64),
            "integral": dtypes.default_int(),
            "indexing": dtypes.int64,
        }

    def dtypes(self, *, device: Any = None, kind: Any = None) -> dict[str, DType]:
        """The standard's dtypes that ``device``'s backend (default: the default backend)
        holds, by name; ``kind`` (None, a kind string of the standard such as ``"real
        floating"`` or ``"integral"``, or a tuple of them) keeps those of that kind.
        numerix's extra dtypes (float16, bfloat16) are not listed."""
        be = _check_device(device, "dtypes")
        if kind is not None:
            for k in kind if isinstance(kind, tuple) else (kind,):
                if k not in _KINDS:
                    raise DTypeError(
                        f"dtypes: unknown kind {k!r}; give None, one of {', '.join(_KINDS)}, "
                        f"or a tuple of them"
                    )
        held = be.supported_dtypes
        return {
            d.name: d
            for d in _STANDARD_DTYPES
            if (held is None or d in held) and (kind is None or dtypes.isdtype(d, kind))
        }

    def devices(self) -> list[Device]:
        """The devices of the default backend on this machine (``numerix.devices(name)``
        as :class:`Device` objects); :meth:`default_device` is one of them."""
        name = get_default_backend().name
        return [Device(resolve_backend(spec, "devices")) for spec in _device_specs(name)]

    def __repr__(self) -> str:
        return "numerix.__array_namespace_info__()"


def __array_namespace_info__() -> Info:
    """The array API inspection object: ``capabilities()``, ``default_device()``,
    ``default_dtypes()``, ``dtypes()`` and ``devices()`` (see :class:`Info`).

    >>> import numerix as nx
    >>> info = nx.__array_namespace_info__()
    >>> info.default_dtypes()["real floating"]
    numerix.float32
    """
    return Info()
