"""Moved: the default backend lives in :mod:`numerix.configuration`."""

from numerix.configuration import _configured_default, get_default_backend, resolve_backend

__all__ = ["get_default_backend", "resolve_backend", "_configured_default"]
