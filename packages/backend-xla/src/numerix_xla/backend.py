"""The XLA backend: every primitive as a jitted ``jax.lax`` kernel on one XLA device.

Kernels are ``jax.jit``-compiled ``lax`` functions cached per primitive and static
parameters (:func:`jitted`): an eager ``lax`` call dispatches op by op and is slower
than a cached jitted one. The core has already validated and promoted the inputs, so
``jax.numpy``'s checks would be wasted time; kernels call ``lax`` directly.

64-bit types are enabled (``jax_enable_x64``) when this module is imported, so that
float64 / int64 / uint64 / complex128 tensors keep their dtype. This is process-wide:
other JAX code in the process also gets 64-bit defaults (``jnp.arange(3)`` is int64).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, ClassVar

import jax
import numpy as np

from numerix._tensor import Tensor
from numerix.backend import Backend
from numerix.errors import BackendOptionError
from numerix_xla._extra import ExtraKernels
from numerix_xla.clients import CLIENTS, get_client

jax.config.update("jax_enable_x64", True)

__all__ = ["XlaBackend", "jitted"]


def jitted(key: Any, build: Callable[[], Callable[..., Any]]) -> Callable[..., Any]:
    """The jitted kernel for ``key`` (a primitive name and its static parameters), built
    once by ``build()`` and cached for the process."""
    fn = _KERNELS.get(key)
    if fn is None:
        fn = _KERNELS[key] = jax.jit(build())
    return fn


_KERNELS: dict[Any, Callable[..., Any]] = {}


class XlaBackend(ExtraKernels, Backend):
    """Tensors on one device of one XLA client: ``numerix.tensor(x, backend="xla:cuda:1")``."""

    name = "xla"
    default_options: ClassVar[dict[str, Any]] = {"client": "host", "device_id": None}
    spec_fields = ("client", "device_id")

    __slots__ = ("client", "jax_device")

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.client = get_client(self.options["client"])
        did = self.options["device_id"]
        self.jax_device = self.client.device(self.client.default_device_id if did is None else did)

    @classmethod
    def validate_options(cls, options: Any) -> dict[str, Any]:
        merged = super().validate_options(options)
        c = merged["client"]
        if c not in CLIENTS:
            raise BackendOptionError(
                f"backend 'xla': unknown client {c!r}; clients are {', '.join(CLIENTS)}"
            )
        did = merged["device_id"]
        if did is not None and (not isinstance(did, int) or isinstance(did, bool) or did < 0):
            raise BackendOptionError(
                f"backend 'xla': device_id must be a non-negative int, got {did!r}"
            )
        if did is None:
            merged["device_id"] = get_client(c).default_device_id
        return merged

    def device_name(self) -> str:
        return f"{self.options['client']}:{self.options['device_id']}"

    @classmethod
    def is_available(cls, **options: Any) -> bool:
        client = options.get("client", "host")
        if client not in CLIENTS:
            return False
        n = len(get_client(client).devices())
        did = options.get("device_id")
        return n > 0 and (did is None or did < n)

    @classmethod
    def devices(cls) -> list[str]:
        out = []
        for name in CLIENTS:
            for i, _ in enumerate(get_client(name).devices()):
                out.append(f"{name}:{i}")
        return out

    # ------------------------------------------------------------ host exchange
    def put(self, array: Any) -> Any:
        """``array`` (numpy or jax) committed to this backend's device."""
        return jax.device_put(array, self.jax_device)

    def from_numpy(self, out: Tensor, array: np.ndarray) -> Tensor:
        out.data = self.put(array)
        return out

    def to_numpy(self, x: Tensor) -> np.ndarray:
        return np.asarray(x.data)

    def from_dlpack(self, out: Tensor, source: Any) -> Tensor | None:
        try:
            arr = jax.dlpack.from_dlpack(source)
        except Exception:
            return None
        if arr.dtype != out.dtype.numpy_dtype or tuple(arr.shape) != out.shape:
            return None
        out.data = self.put(arr)
        return out

    def to_dlpack(self, x: Tensor, *args: Any, **kwargs: Any) -> Any:
        return x.data.__dlpack__(*args, **kwargs)

    def dlpack_device(self, x: Tensor) -> tuple[int, int]:
        return x.data.__dlpack_device__()  # type: ignore[no-any-return]

    def deallocate(self, x: Tensor) -> None:
        x.data.delete()

    # ------------------------------------------------------------ benchmarks
    @classmethod
    def bench_raw_matmul(
        cls, x_np: np.ndarray, w_np: np.ndarray, device: Any = None
    ) -> Callable[[], Any]:
        """Raw JAX's matmul for ``numerix bench matmul`` (jitted jnp.dot, synchronised)."""
        dev = jax.devices("cpu")[0]
        x = jax.device_put(x_np, dev)
        w = jax.device_put(w_np, dev)
        f = jax.jit(jax.numpy.dot)

        def run() -> Any:
            return f(x, w).block_until_ready()

        return run

    bench_raw_name = "jax (raw)"


@functools.cache
def _np_dtype(d: Any) -> np.dtype:
    return np.dtype(d.numpy_dtype)
