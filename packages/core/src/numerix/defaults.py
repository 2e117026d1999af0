"""Default backends: process-wide, context-local (contextvars) and per call, as in Nx."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from numerix import _config_state
from numerix.backend import Backend
from numerix.errors import BackendNotFoundError, NumerixError
from numerix.plugins import backend_class, get_backend, parse_spec

__all__ = [
    "resolve_backend",
    "get_default_backend",
    "set_default_backend",
    "set_global_default_backend",
    "default_backend",
    "config",
    "reload_config",
]

_EMBEDDED_DEFAULT = "binary"
_global_default: Backend | None = None
_context_default: ContextVar[Backend | None] = ContextVar("numerix_default_backend", default=None)


def resolve_backend(spec: Any, op: str = "backend", **options: Any) -> Backend:
    """Turn a backend spec into a backend instance.

    ``spec`` is a :class:`~numerix.backend.Backend` instance, a name (``"binary"``), a
    ``"name:field:field"`` string (``"xla:cuda:1"``), a ``(name, options)`` tuple, or a
    priority list of those, of which the first available on this machine wins.
    """
    if isinstance(spec, Backend):
        if options:
            return get_backend(spec.name, **{**spec.options, **options})
        return spec
    if isinstance(spec, list):
        if options:
            raise BackendNotFoundError(f"{op}: options cannot be combined with a priority list")
        tried = []
        for s in spec:
            try:
                name, opts = parse_spec(s, op)
                cls = backend_class(name, op)
            except NumerixError as e:
                tried.append(f"{s!r} ({e})")
                continue
            if cls.is_available(**opts):
                return get_backend(name, **opts)
            tried.append(f"{s!r} (device not available on this machine)")
        raise BackendNotFoundError(
            f"{op}: none of the backends in the priority list is available: " + "; ".join(tried)
        )
    name, opts = parse_spec(spec, op)
    opts.update(options)
    return get_backend(name, **opts)


def get_default_backend() -> Backend:
    """The backend new tensors are created on.

    In order: the context's (:func:`default_backend`, :func:`set_default_backend`), the
    process-wide one (:func:`set_global_default_backend`), then the configuration's
    ``default_backend`` (``with numerix.config(...)``, ``NUMERIX_DEFAULT_BACKEND``, the
    project and user files), whose default is ``"binary"``.

    :raises ConfigError: the configured backend is unknown or not available here.
    """
    b = _context_default.get()
    if b is not None:
        return b
    b = _global_default
    if b is not None:
        return b
    eff = _config_state.context.get()
    if eff is not None:
        return eff.default_backend()
    b = _config_state.base_backend
    if b is None:
        b = _configured_default()
    return b


def _configured_default() -> Backend:
    with _config_state.lock:
        if _config_state.base is None and _config_state.nothing_configured():
            # no variable, no file: the embedded default, without importing pydantic
            b = resolve_backend(_EMBEDDED_DEFAULT, "get_default_backend")
        else:
            from numerix.configuration import current

            b = current().default_backend()
        _config_state.base_backend = b
        return b


@contextmanager
def config(**overrides: Any) -> Iterator[Any]:
    """``with numerix.config(default_backend="binary"):`` scopes settings to this context.

    The overrides sit above the environment and the files (see
    :mod:`numerix.configuration`); they are validated on entry. Yields the effective
    :class:`~numerix.configuration.NumerixSettings`.
    """
    from numerix.configuration import config as _config

    with _config(**overrides) as s:
        yield s


def reload_config() -> Any:
    """Read the configuration (environment and files) again; returns the new settings.

    :raises ConfigError: the configuration is invalid.
    """
    return _config_state.reload_config()


def set_default_backend(spec: Any, **options: Any) -> Backend:
    """Set the default backend of the current context (thread / asyncio task); returns it.

    ``set_default_backend(None)`` clears it: the process-wide default, else the
    configuration's, applies again.
    """
    if spec is None and not options:
        _context_default.set(None)
        return get_default_backend()
    b = resolve_backend(spec, "set_default_backend", **options)
    _context_default.set(b)
    return b


def set_global_default_backend(spec: Any, **options: Any) -> Backend:
    """Set the process-wide default backend (contexts that set their own keep theirs).

    ``set_global_default_backend(None)`` clears it: the configuration's default
    (``NUMERIX_DEFAULT_BACKEND``, the config files, ``"binary"``) applies again.
    """
    global _global_default
    if spec is None and not options:
        _global_default = None
        return get_default_backend()
    b = resolve_backend(spec, "set_global_default_backend", **options)
    _global_default = b
    return b


@contextmanager
def default_backend(spec: Any, **options: Any) -> Iterator[Backend]:
    """``with numerix.default_backend("xla", client="cuda"):`` scopes the default backend."""
    b = resolve_backend(spec, "default_backend", **options)
    token = _context_default.set(b)
    try:
        yield b
    finally:
        _context_default.reset(token)
