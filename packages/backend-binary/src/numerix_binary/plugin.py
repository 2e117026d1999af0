"""The ``numerix.plugins`` entry point of numerix-binary: names the backend, imports nothing heavy."""

from __future__ import annotations

import functools
from typing import Any

from numerix.hookspecs import hookimpl
from numerix.plugins import BackendEntry


@hookimpl
def numerix_backends() -> list[BackendEntry]:
    return [
        BackendEntry(
            name="binary",
            target="numerix_binary.backend:BinaryBackend",
            contract=2,
            description="host memory, numpy kernels (the reference backend)",
        )
    ]


@hookimpl
def numerix_settings_models() -> list[tuple[str, Any]]:
    return [("binary", _binary_settings())]


@functools.cache
def _binary_settings() -> type[Any]:
    # pydantic is imported here, when the configuration is read, not at plugin discovery
    from typing import Literal

    from pydantic import BaseModel, ConfigDict, Field

    class BinarySettings(BaseModel):
        """Settings of the ``binary`` backend (host memory, numpy kernels)."""

        model_config = ConfigDict(extra="forbid")

        device: Literal["cpu"] = Field(
            default="cpu",
            description="Where tensors live. The binary backend holds host memory only.",
        )

    return BinarySettings
