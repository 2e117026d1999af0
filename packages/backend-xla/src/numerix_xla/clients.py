"""XLA clients, as EXLA has them: ``host``, ``cuda``, ``rocm``, ``tpu``, each a singleton.

A client's options (``platform``, ``default_device_id``, ``preallocate``,
``memory_fraction``) come from the settings (``[backends.xla.clients.<name>]``).
JAX reads the memory options once, from ``XLA_PYTHON_CLIENT_PREALLOCATE`` and
``XLA_PYTHON_CLIENT_MEM_FRACTION``, when it starts a GPU platform: they are applied
just before, and asking for other values after the platform started is an error
rather than a silent no-op.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import Any

from numerix.errors import BackendOptionError

__all__ = ["CLIENTS", "Client", "get_client", "client_options"]

#: numerix client name -> JAX platform name
CLIENTS: dict[str, str] = {"host": "cpu", "cuda": "cuda", "rocm": "rocm", "tpu": "tpu"}

_DEFAULTS: dict[str, Any] = {
    "platform": None,
    "default_device_id": 0,
    "preallocate": True,
    "memory_fraction": 0.9,
}


@dataclass(frozen=True)
class Client:
    """One XLA client: a JAX platform and the options it was started with."""

    name: str
    platform: str
    default_device_id: int
    preallocate: bool
    memory_fraction: float

    def devices(self) -> list[Any]:
        import jax

        try:
            return list(jax.devices(self.platform))
        except RuntimeError:
            return []

    def device(self, device_id: int) -> Any:
        devs = self.devices()
        if not 0 <= device_id < len(devs):
            raise BackendOptionError(
                f"backend 'xla': client {self.name!r} has {len(devs)} device(s) "
                f"(ids 0..{len(devs) - 1}), no device_id {device_id}"
                if devs
                else f"backend 'xla': client {self.name!r} has no devices on this machine; "
                f"use client='host'"
            )
        return devs[device_id]


_lock = threading.Lock()
_clients: dict[str, Client] = {}


def client_options(name: str) -> dict[str, Any]:
    """The options of client ``name``: its ``[backends.xla.clients.<name>]`` settings over
    the defaults."""
    opts = dict(_DEFAULTS)
    try:
        from numerix.configuration import settings

        xla = getattr(settings().backends, "xla", None)
    except ImportError:  # pragma: no cover - configuration is part of the core
        xla = None
    if xla is not None:
        c = xla.clients.get(name)
        if c is not None:
            opts.update({k: v for k, v in c.model_dump().items() if v is not None})
    return opts


def _started(platform: str) -> bool:
    # JAX keeps the started backends in xla_bridge._backends (a private registry: if it
    # moves, we only lose the "already started" check, never correctness)
    try:
        from jax._src import xla_bridge

        return platform in getattr(xla_bridge, "_backends", {})
    except Exception:
        return False


def get_client(name: str) -> Client:
    """The client singleton ``name``, starting it (and its memory options) on first use."""
    c = _clients.get(name)
    if c is not None:
        return c
    if name not in CLIENTS:
        raise BackendOptionError(
            f"backend 'xla': unknown client {name!r}; clients are {', '.join(CLIENTS)}"
        )
    with _lock:
        c = _clients.get(name)
        if c is not None:
            return c
        o = client_options(name)
        platform = CLIENTS.get(o["platform"] or name, o["platform"] or name)
        if platform != "cpu":
            _apply_memory_options(name, platform, o)
        c = Client(
            name, platform, int(o["default_device_id"]), bool(o["preallocate"]),
            float(o["memory_fraction"]),
        )  # fmt: skip
        _clients[name] = c
        return c


def _apply_memory_options(name: str, platform: str, o: dict[str, Any]) -> None:
    want = {
        "XLA_PYTHON_CLIENT_PREALLOCATE": "true" if o["preallocate"] else "false",
        "XLA_PYTHON_CLIENT_MEM_FRACTION": f"{float(o['memory_fraction']):g}",
    }
    if _started(platform):
        have = {k: os.environ.get(k) for k in want}
        wrong = {k: v for k, v in want.items() if have[k] is not None and have[k] != v}
        if wrong or any(
            have[k] is None and k.endswith("FRACTION") and want[k] != "0.9" for k in want
        ):
            raise BackendOptionError(
                f"backend 'xla': client {name!r} ({platform}) was already started by JAX with "
                f"other memory options; set preallocate/memory_fraction before the first use of "
                f"that platform in this process (or in the config file / environment)"
            )
        return
    os.environ.update(want)
