"""The ``numerix.plugins`` entry point of numerix-xla: names the backend and its settings;
imports neither JAX nor the backend module."""

from __future__ import annotations

import functools
from typing import Any

from numerix.hookspecs import hookimpl
from numerix.plugins import BackendEntry, CompilerEntry


@hookimpl
def numerix_backends() -> list[BackendEntry]:
    return [
        BackendEntry(
            name="xla",
            target="numerix_xla.backend:XlaBackend",
            contract=2,
            description="XLA through JAX: host, cuda, rocm and tpu clients",
        )
    ]


@hookimpl
def numerix_compilers() -> list[CompilerEntry]:
    return [
        CompilerEntry(
            "xla",
            "numerix_xla.compiler:XlaCompiler",
            contract=1,
            description="the whole graph as one jax.jit program on an xla device",
            serves="xla",
            # one fused program against the evaluator's kernel per op: the evaluator is
            # slower (a softmax 1.9x) or level (the MLP predict, whose time is its two
            # products: 1.02x over ten rounds of benchmarks/auto_compiler.py), and its
            # first call compiles each kernel
            outruns=("evaluator",),
        )
    ]


@hookimpl
def numerix_settings_models() -> list[tuple[str, Any]]:
    return [("xla", xla_settings())]


@functools.cache
def xla_settings() -> type[Any]:
    """The ``[backends.xla]`` settings model (pydantic is imported here, not at discovery)."""
    from typing import Literal

    from pydantic import BaseModel, ConfigDict, Field, model_validator

    class XlaClientSettings(BaseModel):
        """Options of one XLA client (``[backends.xla.clients.cuda]``), as EXLA's."""

        model_config = ConfigDict(extra="forbid")

        platform: Literal["host", "cpu", "cuda", "rocm", "tpu"] | None = Field(
            default=None,
            description="The JAX platform the client runs on; defaults to the client's name "
            "(host runs on cpu).",
        )
        default_device_id: int = Field(
            default=0, ge=0, description="The device tensors go to when no device_id is given."
        )
        preallocate: bool = Field(
            default=True,
            description="Reserve the GPU memory up front (XLA_PYTHON_CLIENT_PREALLOCATE); "
            "applied before JAX starts the platform.",
        )
        memory_fraction: float = Field(
            default=0.9,
            gt=0.0,
            le=1.0,
            description="The fraction of GPU memory XLA may use "
            "(XLA_PYTHON_CLIENT_MEM_FRACTION); applied before JAX starts the platform.",
        )

    class XlaDistributedSettings(BaseModel):
        """One process of a computation over several hosts (``jax.distributed``):
        ``[backends.xla.distributed]``, read when the xla backend first starts."""

        model_config = ConfigDict(extra="forbid")

        coordinator_address: str = Field(
            description="host:port where process 0 serves the coordinator and the others "
            "reach it (127.0.0.1:1234 for processes on one machine).",
        )
        num_processes: int = Field(ge=1, description="How many processes take part.")
        process_id: int = Field(ge=0, description="This process's index, 0 to num_processes-1.")
        local_device_ids: list[int] | None = Field(
            default=None,
            description="The devices of this host this process uses (default: all of them).",
        )
        initialization_timeout: int = Field(
            default=300,
            ge=1,
            description="Seconds to wait for every process to join before giving up.",
        )
        cpu_collectives: Literal["gloo", "mpi"] = Field(
            default="gloo",
            description="How CPU devices of different processes exchange data "
            "(jax_cpu_collectives_implementation).",
        )

        @model_validator(mode="after")
        def _process_in_range(self) -> Any:
            if self.process_id >= self.num_processes:
                raise ValueError(
                    f"process_id {self.process_id} is not below num_processes {self.num_processes}"
                )
            return self

    class XlaSettings(BaseModel):
        """Settings of the ``xla`` backend."""

        model_config = ConfigDict(extra="forbid")

        client: Literal["host", "cuda", "rocm", "tpu"] = Field(
            default="host", description="The client tensors go to when none is named."
        )
        clients: dict[Literal["host", "cuda", "rocm", "tpu"], XlaClientSettings] = Field(
            default_factory=dict, description="Options per client."
        )
        kernel_cache_size: int = Field(
            default=512,
            ge=1,
            description="The most jitted kernels the xla backend keeps (an LRU; each holds "
            "one compiled program, about 1.5 MB on CPU); read when the backend loads. The "
            "compiled fast path's shortcuts count the programs they trace against the same "
            "bound, apart (so at most twice it in all).",
        )
        x64: bool | None = Field(
            default=None,
            description="JAX's process-wide 64-bit mode (jax_enable_x64), which "
            "float64/int64/uint64/complex128 need on xla. Unset, numerix turns it on when the "
            "first 64-bit tensor is made on xla, with a warning; true turns it on then without "
            "the warning; false leaves JAX's mode alone and refuses 64-bit tensors on xla "
            "while it is off. Never changed at import or when another backend is chosen.",
        )
        distributed: XlaDistributedSettings | None = Field(
            default=None,
            description="Join a computation over several processes and hosts "
            "(jax.distributed.initialize) when the xla backend first starts: its devices "
            "are then every process's (numerix.get_backend('xla', devices='all')). Unset: "
            "one process.",
        )

    return XlaSettings
