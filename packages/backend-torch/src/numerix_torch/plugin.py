"""The ``numerix.plugins`` entry point of numerix-torch: names the backend, its settings and
the compiler; imports neither PyTorch nor the backend or compiler module."""

from __future__ import annotations

import functools
from typing import Any

from numerix.hookspecs import hookimpl
from numerix.plugins import BackendEntry, CompilerEntry


@hookimpl
def numerix_backends() -> list[BackendEntry]:
    return [
        BackendEntry(
            name="torch",
            target="numerix_torch.backend:TorchBackend",
            contract=2,
            description="LibTorch through PyTorch: cpu, cuda and mps devices",
        )
    ]


@hookimpl
def numerix_settings_models() -> list[tuple[str, Any]]:
    return [("torch", torch_settings())]


@functools.cache
def torch_settings() -> type[Any]:
    """The ``[backends.torch]`` settings model (pydantic is imported here, not at discovery)."""
    from typing import Literal

    from pydantic import BaseModel, ConfigDict, Field

    class TorchSettings(BaseModel):
        """Settings of the ``torch`` backend."""

        model_config = ConfigDict(extra="forbid")

        device: Literal["cpu", "cuda", "mps"] | None = Field(
            default=None,
            description="The device tensors go to when none is named; unset: cuda when "
            "available, else cpu.",
        )
        device_id: int | None = Field(
            default=None, ge=0, description="The index of the cuda device (default 0)."
        )
        memory_fraction: float | None = Field(
            default=None,
            gt=0.0,
            le=1.0,
            description="The fraction of GPU memory this process may use "
            "(torch.cuda.set_per_process_memory_fraction); applied when a cuda tensor is "
            "first created.",
        )
        num_threads: int | None = Field(
            default=None, ge=1, description="The number of CPU threads (torch.set_num_threads)."
        )

    return TorchSettings


@hookimpl
def numerix_compilers() -> list[CompilerEntry]:
    return [
        CompilerEntry(
            name="torch",
            target="numerix_torch.compiler:TorchCompiler",
            contract=1,
            description="one torch function per graph: replayed, or torch.compile (inductor)",
        )
    ]
