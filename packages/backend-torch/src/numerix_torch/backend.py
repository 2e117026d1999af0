"""The torch backend: every primitive on PyTorch kernels, with the least Python between.

Tensors hold a ``torch.Tensor`` of exactly the numerix dtype (see :mod:`._dtypes` for the
unsigned dtypes torch stores but computes little with) on one torch device.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
import torch

from numerix._tensor import Tensor
from numerix.backend import Backend
from numerix.errors import BackendOptionError
from numerix_torch._dtypes import TORCH
from numerix_torch._extra import ExtraKernels

__all__ = ["TorchBackend"]

DEVICES = ("cpu", "cuda", "mps")


def _device_available(device: str, device_id: int | None) -> bool:
    if device == "cpu":
        return device_id in (None, 0)
    if device == "cuda":
        n = torch.cuda.device_count() if torch.cuda.is_available() else 0
        return n > 0 and (device_id is None or device_id < n)
    if device == "mps":
        mps = getattr(torch.backends, "mps", None)
        return bool(mps and mps.is_available()) and device_id in (None, 0)
    return False


def default_device() -> str:
    """The configured device, else ``cuda`` when available, else ``cpu``."""
    from numerix_torch.settings import torch_settings_value

    configured = torch_settings_value("device")
    if configured is not None:
        return str(configured)
    return "cuda" if _device_available("cuda", None) else "cpu"


class TorchBackend(ExtraKernels, Backend):
    """Tensors on one torch device: ``numerix.tensor(x, backend="torch:cuda:1")``."""

    name = "torch"
    default_options: ClassVar[dict[str, Any]] = {"device": None, "device_id": None}
    spec_fields = ("device", "device_id")
    supported_dtypes = frozenset(TORCH)

    __slots__ = ("torch_device",)

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        d, i = self.options["device"], self.options["device_id"]
        self.torch_device = torch.device(d if i is None else f"{d}:{i}")

    @classmethod
    def validate_options(cls, options: Any) -> dict[str, Any]:
        merged = super().validate_options(options)
        if merged["device"] is None:
            merged["device"] = default_device()
        dev, did = merged["device"], merged["device_id"]
        if dev not in DEVICES:
            raise BackendOptionError(
                f"backend 'torch': unknown device {dev!r}; devices are {', '.join(DEVICES)}"
            )
        if did is not None and (not isinstance(did, int) or isinstance(did, bool) or did < 0):
            raise BackendOptionError(
                f"backend 'torch': device_id must be a non-negative int, got {did!r}"
            )
        if did is None and dev == "cuda":
            from numerix_torch.settings import torch_settings_value

            did = torch_settings_value("device_id")
            merged["device_id"] = 0 if did is None else did
        if dev == "cpu" and merged["device_id"] not in (None, 0):
            raise BackendOptionError("backend 'torch': the cpu device has no device_id")
        if dev == "cpu":
            merged["device_id"] = None
        if not _device_available(dev, merged["device_id"]):
            raise BackendOptionError(
                f"backend 'torch': device {dev}"
                + ("" if merged["device_id"] is None else f":{merged['device_id']}")
                + f" is not available on this machine (devices: {', '.join(cls.devices())})"
            )
        return merged

    def device_name(self) -> str:
        d, i = self.options["device"], self.options["device_id"]
        return d if i is None else f"{d}:{i}"

    @classmethod
    def is_available(cls, **options: Any) -> bool:
        dev = options.get("device") or default_device()
        return dev in DEVICES and _device_available(dev, options.get("device_id"))

    @classmethod
    def devices(cls) -> list[str]:
        out = ["cpu"]
        if torch.cuda.is_available():
            out += [f"cuda:{i}" for i in range(torch.cuda.device_count())]
        if _device_available("mps", None):
            out.append("mps")
        return out

    # ------------------------------------------------------------ host exchange
    def from_numpy(self, out: Tensor, array: np.ndarray) -> Tensor:
        if not array.flags.writeable or not array.flags.c_contiguous:
            array = (
                np.ascontiguousarray(array).copy()
                if not array.flags.writeable
                else (np.ascontiguousarray(array))
            )
        if array.dtype.name == "bfloat16":
            t = torch.from_numpy(array.view(np.uint16)).view(torch.bfloat16)
        else:
            t = torch.from_numpy(array)
        out.data = t.to(self.torch_device)
        return out

    def to_numpy(self, x: Tensor) -> np.ndarray:
        t = x.data.detach()
        if t.device.type != "cpu":
            t = t.cpu()
        if t.dtype == torch.bfloat16:
            return t.view(torch.uint16).numpy().view(x.dtype.numpy_dtype)
        return t.numpy()

    def from_dlpack(self, out: Tensor, source: Any) -> Tensor | None:
        try:
            t = torch.from_dlpack(source)
        except Exception:
            return None
        if t.dtype != TORCH[out.dtype] or tuple(t.shape) != out.shape:
            return None
        out.data = t.to(self.torch_device)
        return out

    def to_dlpack(self, x: Tensor, *args: Any, **kwargs: Any) -> Any:
        return x.data.__dlpack__(*args, **kwargs)

    def dlpack_device(self, x: Tensor) -> tuple[int, int]:
        return x.data.__dlpack_device__()  # type: ignore[no-any-return]

    def synchronize(self, x: Tensor) -> None:
        if self.torch_device.type == "cuda":
            torch.cuda.synchronize(self.torch_device)

    # ------------------------------------------------------------ benchmarks
    @classmethod
    def bench_raw_matmul(
        cls, x_np: np.ndarray, w_np: np.ndarray, device: Any = None
    ) -> Callable[[], Any]:
        """Raw PyTorch's matmul for ``numerix bench matmul``."""
        x = torch.from_numpy(x_np)
        w = torch.from_numpy(w_np)

        def run() -> Any:
            return torch.matmul(x, w)

        return run

    bench_raw_name = "torch (raw)"
