"""The ``[backends.torch]`` settings, read through numerix's configuration."""

from __future__ import annotations

from typing import Any


def torch_settings_value(key: str) -> Any:
    """One field of ``[backends.torch]`` (None when the configuration does not set it)."""
    from numerix.configuration import settings

    sub = getattr(settings().backends, "torch", None)
    return None if sub is None else getattr(sub, key, None)
