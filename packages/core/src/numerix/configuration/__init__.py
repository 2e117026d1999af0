"""numerix's configuration, in one place: the default backend and the settings.

- this module: the default backend (per call, per context, process-wide, configured)
  and the public entry points (:func:`config`, :func:`reload_config`, :func:`settings`);
- :mod:`numerix.configuration._state`: where the configuration lives (files, the
  environment) and the state read from it, stdlib only;
- :mod:`numerix.configuration._settings`: the settings model (pydantic-settings), its
  sources and where each value came from. It loads on first use: when nothing is
  configured (no variable, no file) ``import numerix`` and the first tensor never
  import pydantic. Its names are reachable here (``numerix.configuration.NumerixSettings``).

Sources of the settings, highest precedence first:

1. arguments of a call (:func:`load_settings` keywords);
2. the context, ``with numerix.config(...)`` (contextvars: threads and asyncio
   tasks don't see each other's);
3. the environment: ``NUMERIX_…`` variables, nested with ``__``
   (``NUMERIX_BACKENDS__BINARY__DEVICE``), and the ecosystem's bare ``XLA_TARGET`` and
   ``LIBTORCH_TARGET``;
4. the project file: the file named by ``NUMERIX_CONFIG``, else the nearest
   ``numerix.toml`` or ``pyproject.toml`` (``[tool.numerix]``) in the working directory
   or its parents, up to the project's root (the first folder with ``pyproject.toml``
   or ``.git``; outside a project, the working directory alone);
5. the user file, ``$XDG_CONFIG_HOME/numerix/config.toml`` (default
   ``~/.config/numerix/config.toml``);
6. the defaults of the models.

Each installed plugin contributes the model of its ``backends.<name>`` table through
the ``numerix_settings_models`` hook. Every model forbids unknown keys; every error is
a :class:`numerix.ConfigError` naming the source (file and line, or variable) and the
key.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from numerix.backend import Backend
from numerix.configuration import _state
from numerix.errors import (
    ArgumentError,
    BackendNotFoundError,
    ConfigError,
    NumerixError,
    PluginError,
)
from numerix.plugins import backend_class, get_backend, get_compiler, parse_spec

__all__ = [
    "resolve_backend",
    "get_default_backend",
    "set_default_backend",
    "set_global_default_backend",
    "default_backend",
    "config",
    "reload_config",
    "effective_settings",
    "configured_compiler",
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
    eff = _state.context.get()
    if eff is not None:
        return eff.default_backend()
    b = _state.base_backend
    if b is None:
        b = _configured_default()
    return b


def _configured_default() -> Backend:
    with _state.lock:
        if _state.base is None and _state.nothing_configured():
            # no variable, no file: the embedded default, without importing pydantic
            b = resolve_backend(_EMBEDDED_DEFAULT, "get_default_backend")
        else:
            from numerix.configuration._settings import current

            b = current().default_backend()
        _state.base_backend = b
        return b


@contextmanager
def config(**overrides: Any) -> Iterator[Any]:
    """``with numerix.config(default_backend="binary"):`` scopes settings to this context.

    The overrides sit above the environment and the files (see
    :mod:`numerix.configuration`); they are validated on entry. Yields the effective
    :class:`~numerix.configuration.NumerixSettings`.
    """
    from numerix.configuration._settings import config as _config

    with _config(**overrides) as s:
        yield s


def reload_config() -> Any:
    """Read the configuration (environment and files) again; returns the new settings.

    :raises ConfigError: the configuration is invalid.
    """
    from numerix.configuration._settings import reload_config as _reload

    return _reload()


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


def effective_settings() -> Any:
    """The settings in effect here (``with numerix.config(...)`` › the environment and
    files), or None when nothing is configured (and pydantic stays unimported)."""
    eff = _state.context.get()
    if eff is None:
        eff = _state.base
        if eff is None and _state.base_backend is None:
            # reads the environment and files once, as the default backend does
            _configured_default()
            eff = _state.base
    return None if eff is None else eff.settings


def configured_compiler(name: str, op: str) -> Any:
    """The compiler ``name`` that the settings' ``default_compiler`` gave.

    :raises ConfigError: no such compiler (or its plugin is broken), naming the source of
        ``default_compiler`` (variable, or file, line and key) and the installed compilers.
    """
    try:
        return get_compiler(name, op)
    except (ArgumentError, PluginError) as e:
        eff = _state.context.get() or _state.base
        if eff is None:  # nothing configures numerix: the embedded default
            raise
        src = eff.source(("default_compiler",))
        why = " ".join(str(e).split()).removeprefix(f"{op}: ")
        raise ConfigError(f"{src}: default_compiler: {why}") from None


def __getattr__(name: str) -> Any:
    # the settings model and its readers (numerix.configuration._settings) import
    # pydantic: they load on first use
    if name.startswith("__"):
        raise AttributeError(name)
    settings_module = importlib.import_module("numerix.configuration._settings")
    try:
        return getattr(settings_module, name)
    except AttributeError:
        raise AttributeError(f"module 'numerix.configuration' has no attribute {name!r}") from None
