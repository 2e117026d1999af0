"""numerix-xla: the XLA backend of numerix, through JAX (EXLA's role in Nx).

Importing this package does not import JAX; the backend module does, on first use.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

__all__ = ["__version__", "set_as_default"]


def set_as_default(clients: Any = ("tpu", "cuda", "rocm", "host"), **options: Any) -> Any:
    """Make the first available client the default backend, as ``EXLA.set_as_nx_default``.

    >>> import numerix_xla
    >>> numerix_xla.set_as_default(["cuda", "host"]).name
    'xla'
    """
    import numerix

    return numerix.set_global_default_backend([("xla", {"client": c, **options}) for c in clients])
