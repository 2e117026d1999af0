"""numerix-xla: the XLA backend of numerix, through JAX (EXLA's role in Nx).

Importing this package does not import JAX; the backend module does, on first use.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

__all__ = ["__version__", "set_as_default"]


def set_as_default(clients: Any = ("tpu", "cuda", "rocm", "host"), **options: Any) -> Any:
    """Make the first available client the process-wide default backend, as
    ``EXLA.set_as_nx_default([:tpu, :cuda, :rocm, :host])``; returns that backend.

    :param clients: client names in order of preference.
    :param options: other options of the backend (``device_id``).
    :raises BackendNotFoundError: none of the clients has a device on this machine (the
        message names each client tried).

    >>> import numerix, numerix_xla
    >>> numerix_xla.set_as_default(["cuda", "host"]).name
    'xla'
    >>> _ = numerix.set_global_default_backend(None)
    """
    from numerix.configuration import set_global_default_backend

    return set_global_default_backend([("xla", {"client": c, **options}) for c in clients])
