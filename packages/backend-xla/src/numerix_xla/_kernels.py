"""The process-wide cache of the xla backend's jitted kernels.

Every kernel with static parameters is a ``jax.jit`` function built once per
(primitive, static parameters) and kept here; jit's own cache then keys on shapes and
dtypes. :func:`clear` drops them all, with JAX's compiled executables.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax

__all__ = ["clear", "jitted"]

_KERNELS: dict[Any, Callable[..., Any]] = {}


def jitted(
    key: Any, build: Callable[[], Callable[..., Any]], **jit_options: Any
) -> Callable[..., Any]:
    """The jitted kernel for ``key`` (a primitive name and its static parameters), built
    once by ``build()`` and cached for the process; ``jit_options`` go to ``jax.jit``
    (``out_shardings`` for kernels without inputs, whose device is part of ``key``)."""
    fn = _KERNELS.get(key)
    if fn is None:
        fn = _KERNELS[key] = jax.jit(build(), **jit_options)
    return fn


def clear() -> None:
    """Drop every cached kernel and JAX's compiled executables and traces.

    JAX keeps the executables of the module-level jitted kernels (and of every other
    jitted function in the process) in caches of its own, which only
    ``jax.clear_caches()`` empties: a user's own jitted functions compile again on their
    next call too."""
    _KERNELS.clear()
    jax.clear_caches()
