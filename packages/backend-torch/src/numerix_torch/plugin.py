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

    from pydantic import BaseModel, ConfigDict, Field, model_validator

    class TorchDistributedSettings(BaseModel):
        """One process of a computation over several processes (``torch.distributed``):
        ``[backends.torch.distributed]``, read when the first torch backend is created."""

        model_config = ConfigDict(extra="forbid")

        init_method: str = Field(
            description="Where the processes meet (tcp://127.0.0.1:29500, or file:///path).",
        )
        world_size: int = Field(ge=1, description="How many processes take part.")
        rank: int = Field(ge=0, description="This process's index, 0 to world_size-1.")
        process_group: Literal["gloo", "nccl", "mpi"] = Field(
            default="gloo",
            description="torch's communication backend: gloo on CPU, nccl between GPUs.",
        )
        timeout: int = Field(
            default=300, ge=1, description="Seconds to wait for every process to join."
        )

        @model_validator(mode="after")
        def _rank_in_range(self) -> Any:
            if self.rank >= self.world_size:
                raise ValueError(f"rank {self.rank} is not below world_size {self.world_size}")
            return self

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
        distributed: TorchDistributedSettings | None = Field(
            default=None,
            description="Join a process group (torch.distributed.init_process_group) when "
            "the first torch backend is created; numerix.distributed's collectives then "
            "run over it. Unset: one process.",
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
            serves="torch",
        )
    ]
