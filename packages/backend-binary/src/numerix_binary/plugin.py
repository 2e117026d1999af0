"""The ``numerix.plugins`` entry point of numerix-binary: names the backend, imports nothing heavy."""

from __future__ import annotations

from numerix.hookspecs import hookimpl
from numerix.plugins import BackendEntry


@hookimpl
def numerix_backends() -> list[BackendEntry]:
    return [
        BackendEntry(
            name="binary",
            target="numerix_binary.backend:BinaryBackend",
            contract=1,
            description="host memory, numpy kernels (the reference backend)",
        )
    ]
