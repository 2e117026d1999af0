"""The torch backend: every primitive on PyTorch kernels, with the least Python between.

Tensors hold a ``torch.Tensor`` of exactly the numerix dtype (see :mod:`._dtypes` for the
unsigned dtypes torch stores but computes little with) on one torch device.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from numerix import dtypes
from numerix._tensor import Tensor
from numerix.backend import Backend, Option, lowers
from numerix.errors import BackendOptionError
from numerix_torch._dtypes import (
    EMULATED,
    SIGNED_VIEW,
    TORCH,
    bits,
    compute,
    from_key,
    order_key,
    restore,
    unbits,
)
from numerix_torch._elementwise import ElementwiseKernels
from numerix_torch._extra import ExtraKernels
from numerix_torch._indexing import IndexingKernels
from numerix_torch._nn import NnKernels
from numerix_torch._random import RandomKernels
from numerix_torch.settings import torch_settings_value

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
    configured = torch_settings_value("device")
    if configured is not None:
        return str(configured)
    return "cuda" if _device_available("cuda", None) else "cpu"


def _default_device_id(options: dict[str, Any]) -> int | None:
    """The configured cuda device (default 0); None for the other devices."""
    if options["device"] != "cuda":
        return None
    did = torch_settings_value("device_id")
    return 0 if did is None else int(did)


# ---------------------------------------------------------------- helpers


def _saturate(a: torch.Tensor, dst: dtypes.DType) -> torch.Tensor:
    # torch leaves out-of-range float->int casts undefined; NaN becomes 0 and other values
    # saturate, as binary and XLA do. The bounds are powers of two, exact in float32
    if a.dtype in (torch.float16, torch.bfloat16):
        a = a.float()
    info = np.iinfo(dst.numpy_dtype)
    lo, hi = float(info.min), 2.0 ** (info.bits - (info.min < 0))
    f = torch.trunc(a)
    over, under = f >= hi, f < lo
    r = torch.where(over | under | torch.isnan(f), 0, f).to(TORCH[dst])
    top, bottom = _limits(dst, r.device)
    return torch.where(over, top, torch.where(under, bottom, r))


@functools.cache
def _limits(dtype: dtypes.DType, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    info = np.iinfo(dtype.numpy_dtype)
    hi = torch.from_numpy(np.array([info.max], dtype=dtype.numpy_dtype))
    lo = torch.from_numpy(np.array([info.min], dtype=dtype.numpy_dtype))
    return hi.reshape(()).to(device), lo.reshape(()).to(device)


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


# ---------------------------------------------------------------- reduce, by kind


def _sum(out: Tensor, x: Tensor, axes: tuple[int, ...], keepdims: bool) -> Tensor:
    d = x.dtype
    if not axes:  # torch reads dim=() as every axis
        out.data = x.data
    elif not keepdims and len(axes) == x.data.ndim and d not in SIGNED_VIEW:
        out.data = _narrow(torch.sum(x.data), d, out.dtype)  # every axis: the plain call
    else:
        r = torch.sum(bits(x.data, d), dim=axes, keepdim=keepdims)
        out.data = _narrow(r, d, out.dtype)
    return out


def _prod(out: Tensor, x: Tensor, axes: tuple[int, ...], keepdims: bool) -> Tensor:
    d = x.dtype
    if not axes:
        out.data = x.data
        return out
    a = bits(x.data, d)
    if len(axes) == 1:
        r = torch.prod(a, dim=axes[0], keepdim=keepdims)
    else:  # torch.prod takes one axis: move the axes last and flatten them
        k = len(axes)
        moved = a.movedim(axes, tuple(range(a.ndim - k, a.ndim)))
        r = torch.prod(moved.reshape(*moved.shape[: a.ndim - k], -1), dim=-1)
        if keepdims:
            r = r.reshape(out.shape)
    out.data = _narrow(r, d, out.dtype)
    return out


def _extreme(fn: Any) -> Callable[[Tensor, Tensor, tuple[int, ...], bool], Tensor]:
    def kernel(out: Tensor, x: Tensor, axes: tuple[int, ...], keepdims: bool) -> Tensor:
        d = x.dtype
        if not axes:
            out.data = x.data
        elif d in EMULATED:
            out.data = from_key(fn(order_key(x.data, d), dim=axes, keepdim=keepdims), d)
        else:
            out.data = fn(x.data, dim=axes, keepdim=keepdims)
        return out

    return kernel


def _logical(fn: Any) -> Callable[[Tensor, Tensor, tuple[int, ...], bool], Tensor]:
    def kernel(out: Tensor, x: Tensor, axes: tuple[int, ...], keepdims: bool) -> Tensor:
        a = x.data if x.dtype.kind == "b" else bits(x.data, x.dtype) != 0
        out.data = a if not axes else fn(a, dim=axes, keepdim=keepdims)
        return out

    return kernel


#: reduce's kernel of each kind
_REDUCERS = {
    "sum": _sum, "prod": _prod, "max": _extreme(torch.amax), "min": _extreme(torch.amin),
    "all": _logical(torch.all), "any": _logical(torch.any),
}  # fmt: skip
_EXTREMES = {"max": torch.amax, "min": torch.amin}

#: transpose's plan per permutation: 0 the identity (no kernel), 1 a swap of the last two
#: axes (``mT``, a view without permute's parse of the axes), 2 a general permute
_TRANSPOSES: dict[tuple[int, ...], int] = {(): 0, (0,): 0, (0, 1): 0, (1, 0): 1}


def _transpose_plan(axes: tuple[int, ...]) -> int:
    n = len(axes)
    if axes == tuple(range(n)):
        plan = 0
    elif axes == (*range(n - 2), n - 1, n - 2):
        plan = 1
    else:
        plan = 2
    if len(_TRANSPOSES) < 1024:
        _TRANSPOSES[axes] = plan
    return plan


@functools.lru_cache(maxsize=1024)
def _slice_key(start: tuple[int, ...], stop: tuple[int, ...], strides: tuple[int, ...],
               shape: tuple[int, ...]) -> Any:  # fmt: skip
    """The slice kernel's key, kept per call: one slice, or a tuple of them up to the last
    axis the slice narrows (torch's indexing costs about a microsecond per item of the key:
    x[1] on a matrix is x.data[1:2]). Building the slices cost 0.35 us of a 2 us slice."""
    n = len(start)
    while n and start[n - 1] == 0 and stop[n - 1] == shape[n - 1] and strides[n - 1] == 1:
        n -= 1
    if n == 1:
        return slice(start[0], stop[0], strides[0])
    return tuple(map(slice, start[:n], stop[:n], strides[:n]))


def _row(a: torch.Tensor, i: int) -> torch.Tensor:
    """x[i] as the slice and reshape kernels give it, for the fast path (``ix``): a view,
    or, for a row of a strided matrix, the contiguous copy the reshape kernel's ravel
    makes."""
    r = a[i]
    if r.ndim == 1 and not r.is_contiguous():
        return r.contiguous()
    return r


#: a max or min over every axis, to a 0-d result: torch's whole-tensor forms, cheaper
#: than amax/amin with every dim named (NaN propagates through both)
_WHOLE = {"max": torch.max, "min": torch.min}


def _reduce_lowering(p: Any, ins: Any, out: Any) -> Any:
    (shape, d), kind, axes, keep = ins[0], p["kind"], p["axes"], p["keepdims"]
    if not axes:
        return None  # the kernel's own paths
    whole = not keep and len(axes) == len(shape)
    if kind == "sum" and d not in SIGNED_VIEW:
        t = TORCH[out[1]]
        if whole and out[1] is d and d.kind in "fc":
            return torch.sum  # a floating sum keeps its dtype: no conversion after
        if whole:
            return lambda a: torch.sum(a).to(t)
        return lambda a: torch.sum(a, dim=axes, keepdim=keep).to(t)
    if kind in _EXTREMES and d not in EMULATED:
        if whole:
            return _WHOLE[kind]
        return functools.partial(_EXTREMES[kind], dim=axes, keepdim=keep)
    return None


def _dot_lowering(p: Any, ins: Any) -> Any:
    (sa, d), (sb, _) = ins
    if d in SIGNED_VIEW:
        return None
    plan = _dot_plan(len(sa), len(sb), p["contract_x"], p["batch_x"], p["contract_y"],
                     p["batch_y"])  # fmt: skip
    if plan is None:
        return torch.matmul
    mm = _transposed_matmul(len(sa), len(sb), p["contract_x"], p["batch_x"], p["contract_y"])
    return mm or functools.partial(torch.einsum, plan)


@functools.lru_cache(maxsize=512)
def _dot_plan(nx_: int, ny: int, cx: tuple[int, ...], bx: tuple[int, ...],
              cy: tuple[int, ...], by: tuple[int, ...]) -> str | None:  # fmt: skip
    """None for a dot that ``torch.matmul`` computes as it is, else its einsum equation.

    matmul's cases: matrices and vectors; a stack of matrices against a matrix or a
    vector (x's last axis with y's first) or a vector against a stack (y's second-to-last
    axis); two stacks of matrices whose batch axes come first, in order."""
    if len(cx) == 1 and nx_ >= 1 and ny >= 1:
        if not bx:
            if ny <= 2 and cx[0] == nx_ - 1 and cy[0] == 0:
                return None
            if nx_ == 1 and ny > 2 and cy[0] == ny - 2:
                return None
        else:
            nb = len(bx)
            if (nx_ == ny == nb + 2 and bx == by == tuple(range(nb)) and cx[0] == nb + 1
                    and cy[0] == nb):  # fmt: skip
                return None
    letters = iter(_LETTERS)
    sa = [""] * nx_
    sb = [""] * ny
    for i, j in zip(bx, by):
        sa[i] = sb[j] = next(letters)
    for i, j in zip(cx, cy):
        sa[i] = sb[j] = next(letters)
    for i in range(nx_):
        if not sa[i]:
            sa[i] = next(letters)
    fy = [j for j in range(ny) if not sb[j]]
    for j in fy:
        sb[j] = next(letters)
    free_x = [sa[i] for i in range(nx_) if i not in cx and i not in bx]
    so = [sa[i] for i in bx] + free_x + [sb[j] for j in fy]
    return f"{''.join(sa)},{''.join(sb)}->{''.join(so)}"


# ---- dots of transposed matrices (the backward pass's x.T @ g, g @ w.T) as plain matmuls
def _transposed_matmul(nx_: int, ny: int, cx: tuple[int, ...], bx: tuple[int, ...],
                       cy: tuple[int, ...]) -> Callable[..., torch.Tensor] | None:  # fmt: skip
    """The dot of two matrices contracting one axis each as ``matmul`` of transposed views
    (einsum's planning costs more than the product for small matrices), or None."""
    if bx or nx_ != 2 or ny != 2 or len(cx) != 1:
        return None
    ta, tb = cx[0] == 0, cy[0] == 1
    return lambda a, b: torch.matmul(a.T if ta else a, b.T if tb else b)


# ---- end of dots of transposed matrices

_applied: set[str] = set()


def _apply_settings(device: torch.device) -> None:
    """num_threads when the first backend is created; memory_fraction per cuda device."""
    if "threads" not in _applied:
        _applied.add("threads")
        n = torch_settings_value("num_threads")
        if n is not None:
            torch.set_num_threads(int(n))
    key = str(device)
    if device.type == "cuda" and key not in _applied:
        _applied.add(key)
        frac = torch_settings_value("memory_fraction")
        if frac is not None:
            torch.cuda.set_per_process_memory_fraction(float(frac), device)


def check_target(target: str) -> tuple[str, str] | None:
    """Whether the installed PyTorch build is the one ``LIBTORCH_TARGET`` asks for.

    Returns None when it is, else ``(problem, fix)`` with the install command that fixes it.
    """
    cuda, hip = torch.version.cuda, getattr(torch.version, "hip", None)
    if cuda:
        built = "cu" + "".join(cuda.split(".")[:2])
    elif hip:
        built = "rocm" + ".".join(hip.split(".")[:2])
    else:
        built = "cpu"
    if target == built or (target == "rocm" and built.startswith("rocm")):
        return None
    if target.startswith("rocm"):
        index = "rocm6.4" if target == "rocm" else target
    else:
        index = target
    return (
        f"LIBTORCH_TARGET={target}, but the installed torch {torch.__version__} is the {built} "
        f"build",
        f"pip install --force-reinstall torch=={torch.__version__.split('+')[0]} "
        f"--index-url https://download.pytorch.org/whl/{index}",
    )


def _narrow(r: torch.Tensor, d: dtypes.DType, out: dtypes.DType) -> torch.Tensor:
    """A sum or product ``r`` of ``d`` values as ``out``: torch accumulates small integers
    in int64, so an emulated unsigned result wraps back to its width (numpy's modular
    arithmetic) before its bits are read as unsigned."""
    if d in SIGNED_VIEW:
        return unbits(r.to(SIGNED_VIEW[d]), d)
    t = TORCH[out]
    return r if r.dtype is t else r.to(t)


class TorchBackend(
    ElementwiseKernels, NnKernels, IndexingKernels, RandomKernels, ExtraKernels, Backend
):
    """Tensors on one torch device: ``numerix.tensor(x, backend="torch:cuda:1")``."""

    name = "torch"
    accepted_options = (
        Option("device", lambda options: default_device(), choices=DEVICES),
        Option("device_id", _default_device_id, type=int, minimum=0),
    )
    spec_fields = ("device", "device_id")
    supported_dtypes = frozenset(TORCH)
    payload_type = torch.Tensor

    __slots__ = ("torch_device",)

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        d, i = self.options["device"], self.options["device_id"]
        self.torch_device = torch.device(d if i is None else f"{d}:{i}")
        _apply_settings(self.torch_device)

    @classmethod
    def validate_options(cls, options: Any) -> dict[str, Any]:
        merged = super().validate_options(options)
        dev = merged["device"]
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

    @classmethod
    def check_target(cls, target: str) -> tuple[str, str] | None:
        """``numerix doctor``'s LIBTORCH_TARGET check: None, or ``(problem, fix)``."""
        return check_target(target)

    # ------------------------------------------------------------ host exchange
    def from_numpy(self, out: Tensor, array: np.ndarray) -> Tensor:
        if array.dtype.type is not out.dtype.numpy_dtype.type and array.dtype.kind in "iu":
            array = array.view(out.dtype.numpy_dtype)  # e.g. ulonglong, torch takes uint64
        if not array.flags.writeable or not array.flags.c_contiguous:
            # a copy of its own shape: np.ascontiguousarray gives a 0-d array one dimension
            array = array.copy(order="C")
        if array.dtype.name == "bfloat16":
            t = torch.from_numpy(array.view(np.uint16)).view(torch.bfloat16)
        else:
            t = torch.from_numpy(array)
        out.data = t.to(self.torch_device)
        return out

    def to_numpy(self, x: Tensor) -> np.ndarray:
        # the attribute tests cost a tenth of detach() and .device.type: this is the
        # host read of every concrete index's bounds check
        t = x.data
        if t.requires_grad:
            t = t.detach()
        if not t.is_cpu:
            t = t.cpu()
        if t.dtype is torch.bfloat16:
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
        return x.data.__dlpack_device__()

    def synchronize(self, x: Tensor) -> None:
        if self.torch_device.type == "cuda":
            torch.cuda.synchronize(self.torch_device)

    # ------------------------------------------------------------ creation
    def _adopt(self, out: Tensor, array: np.ndarray) -> Tensor:
        # creation computed by numpy on the host (as binary does), then moved
        return self.from_numpy(out, array if array.flags.c_contiguous else array.copy())

    def full(self, out: Tensor, *, value: Any) -> Tensor:
        out.data = torch.full(out.shape, value, dtype=TORCH[out.dtype], device=self.torch_device)
        return out

    def iota(self, out: Tensor, *, axis: int | None) -> Tensor:
        dt = out.dtype.numpy_dtype
        if axis is None:
            return self._adopt(out, np.arange(out.size, dtype=dt).reshape(out.shape))
        n = out.shape[axis]
        view = [1] * len(out.shape)
        view[axis] = n
        return self._adopt(out, np.broadcast_to(np.arange(n, dtype=dt).reshape(view), out.shape))

    def eye(self, out: Tensor, *, k: int) -> Tensor:
        *_, n, m = out.shape
        e = np.eye(n, m, k=k, dtype=out.dtype.numpy_dtype)
        return self._adopt(out, np.broadcast_to(e, out.shape))

    def arange(self, out: Tensor, *, start: Any, step: Any) -> Tensor:
        n = out.shape[0]
        r = np.arange(start, start + n * step, step, dtype=out.dtype.numpy_dtype)[:n]
        return self._adopt(out, r)

    def linspace(self, out: Tensor, *, start: Any, stop: Any, endpoint: bool) -> Tensor:
        r = np.linspace(start, stop, out.shape[0], endpoint=endpoint)
        if out.dtype.kind in "iu":
            r = np.floor(r)
        return self._adopt(out, r.astype(out.dtype.numpy_dtype))

    # ------------------------------------------------------------ element-wise
    def as_type(self, out: Tensor, x: Tensor) -> Tensor:
        a, src, dst = x.data, x.dtype, out.dtype
        if src is dst:
            out.data = a
            return out
        if dst.kind == "b":
            out.data = bits(a, src) != 0
            return out
        if src.kind == "c" and dst.kind != "c":
            a = a.real
        if dst.kind in "iu" and src.kind in "fc":
            out.data = _saturate(a, dst)
            return out
        if dst is dtypes.uint64 and src.kind == "i":  # wraps as numpy: via the bit pattern
            out.data = a.to(torch.int64).view(torch.uint64)
            return out
        if dst in EMULATED and src.kind in "iu":
            out.data = restore(compute(a, src).to(torch.int64), dst)
            return out
        out.data = a.to(TORCH[dst])
        return out

    def bitcast(self, out: Tensor, x: Tensor) -> Tensor:
        out.data = x.data.view(TORCH[out.dtype])
        return out

    def select(self, out: Tensor, pred: Tensor, on_true: Tensor, on_false: Tensor) -> Tensor:
        r = torch.where(pred.data, on_true.data, on_false.data)
        out.data = r if r.shape == out.shape else r.expand(out.shape)
        return out

    # ------------------------------------------------------------ reductions
    @lowers(lambda p, ins, out: _reduce_lowering(p, ins, out))
    def reduce(
        self, out: Tensor, x: Tensor, *, kind: str, axes: tuple[int, ...], keepdims: bool
    ) -> Tensor:
        # the common cases inline, one torch call each: a sum, a max or a min of a dtype
        # torch computes with, over every axis (torch's whole-tensor form) or some
        if axes and x.dtype not in EMULATED:
            a = x.data
            whole = not keepdims and len(axes) == len(x.shape)
            if kind == "sum":
                r = torch.sum(a) if whole else torch.sum(a, axes, keepdims)
                t = TORCH[out.dtype]
                out.data = r if r.dtype is t else r.to(t)
                return out
            fn = _EXTREMES.get(kind)
            if fn is not None:
                out.data = _WHOLE[kind](a) if whole else fn(a, axes, keepdims)
                return out
        return _REDUCERS[kind](out, x, axes, keepdims)

    def argreduce(
        self, out: Tensor, x: Tensor, *, kind: str, axis: int | None, keepdims: bool
    ) -> Tensor:
        fn = torch.argmax if kind == "max" else torch.argmin
        d = x.dtype
        a = x.data
        if d in EMULATED:
            a = order_key(a, d)
        elif d.kind == "b":
            a = a.to(torch.uint8)
        if axis is None:
            r = fn(a.reshape(-1))
            out.data = r.reshape(out.shape) if keepdims else r
        else:
            out.data = fn(a, dim=axis, keepdim=keepdims)
        return out

    # ------------------------------------------------------------ linalg
    @lowers(lambda p, ins, out: _dot_lowering(p, ins))
    def dot(self, out: Tensor, x: Tensor, y: Tensor, *, contract_x: tuple[int, ...],
            batch_x: tuple[int, ...], contract_y: tuple[int, ...],
            batch_y: tuple[int, ...]) -> Tensor:  # fmt: skip
        d, n = x.dtype, len(x.shape)
        # a product of matrices or vectors (x @ w): torch.matmul, no plan looked up
        if (contract_y == (0,) and not batch_x and n <= 2 and len(y.shape) <= 2
                and contract_x == (n - 1,) and d not in SIGNED_VIEW):  # fmt: skip
            out.data = torch.matmul(x.data, y.data)
            return out
        a, b = bits(x.data, d), bits(y.data, d)
        plan = _dot_plan(a.ndim, b.ndim, contract_x, batch_x, contract_y, batch_y)
        if plan is None:
            r = torch.matmul(a, b)
        elif mm := _transposed_matmul(a.ndim, b.ndim, contract_x, batch_x, contract_y):
            r = mm(a, b)
        else:
            r = torch.einsum(plan, a, b)
        out.data = unbits(r, d)
        return out

    # ------------------------------------------------------------ shape
    def reshape(self, out: Tensor, x: Tensor) -> Tensor:
        # torch parses a shape tuple for about half a microsecond: the reshapes the core
        # asks most (to 1-d, to 0-d after x[i], a trailing unit axis for a gather's
        # indices) take torch's shorter calls, each a view where reshape is one
        shape, a = out.shape, x.data
        if len(shape) == 1:
            out.data = a.ravel()
        elif not shape:
            out.data = a.squeeze()  # one element: every axis has size 1
        elif len(shape) == len(x.shape) + 1 and shape[-1] == 1 and shape[:-1] == x.shape:
            out.data = a.unsqueeze(-1)
        else:
            out.data = a.reshape(shape)
        return out

    def transpose(self, out: Tensor, x: Tensor, *, axes: tuple[int, ...]) -> Tensor:
        plan = _TRANSPOSES.get(axes)
        if plan is None:
            plan = _transpose_plan(axes)
        a = x.data
        out.data = a if plan == 0 else a.mT if plan == 1 else a.permute(axes)
        return out

    def broadcast(self, out: Tensor, x: Tensor, *, axes: tuple[int, ...]) -> Tensor:
        shape = [1] * len(out.shape)
        for i, a in enumerate(axes):
            shape[a] = x.shape[i]
        out.data = x.data.reshape(shape).expand(out.shape)
        return out

    def concatenate(self, out: Tensor, *xs: Tensor, axis: int) -> Tensor:
        if len(xs) == 2:  # no list built, the axis positional: torch.cat's shortest parse
            out.data = torch.cat((xs[0].data, xs[1].data), axis)
        else:
            out.data = torch.cat([x.data for x in xs], axis)
        return out

    def slice(self, out: Tensor, x: Tensor, *, start: tuple[int, ...], stop: tuple[int, ...],
              strides: tuple[int, ...]) -> Tensor:  # fmt: skip
        out.data = x.data[_slice_key(start, stop, strides, x.shape)]
        return out

    def reverse(self, out: Tensor, x: Tensor, *, axes: tuple[int, ...]) -> Tensor:
        d = x.dtype
        out.data = unbits(torch.flip(bits(x.data, d), axes), d) if axes else x.data
        return out

    # ------------------------------------------------------------ indexing
    def gather(self, out: Tensor, x: Tensor, indices: Tensor, *, axes: tuple[int, ...]) -> Tensor:
        a, i = x.data, indices.data
        if axes == (0,):
            # a take along the first axis (x[idx]): index_select of the flat index, viewed
            # in the index's shape; one kernel, no advanced-indexing machinery (torch has
            # no 1-d index_select of uint16/32/64: their signed bits are taken instead)
            flat, v = i.reshape(-1), SIGNED_VIEW.get(x.dtype)
            if v is None:
                r = a.index_select(0, flat)
            else:
                r = a.view(v).index_select(0, flat).view(a.dtype)
            out.data = r if i.ndim == 2 else r.view(out.shape)
            return out
        k = len(axes)
        if axes != tuple(range(k)):
            a = a.movedim(axes, tuple(range(k)))
        # one index tensor indexes by itself: a tuple of one costs torch more
        out.data = a[i.squeeze(-1)] if k == 1 else a[i.unbind(-1)]
        return out

    # ------------------------------------------------------------ the compiled fast path
    def fast_kernel(
        self, op: str, form: str, dtype: dtypes.DType
    ) -> tuple[Callable[..., Any], type] | None:
        # the element-wise forms: the payload function itself (Backend.fast_kernel); the
        # others, the torch call the kernel makes for them. Only this class's own kernels.
        short = super().fast_kernel(op, form, dtype)
        if short is not None or form in ("u", "tt", "ts", "st"):
            return short
        if getattr(type(self), op, None) is not getattr(TorchBackend, op, None):
            return None
        if form == "mm" and dtype not in SIGNED_VIEW:  # dot's first branch: torch.matmul
            return torch.matmul, torch.Tensor
        if form == "sl":  # x.data[key]: the same basic slice of axis 0, a view
            return operator.getitem, torch.Tensor
        if form == "ix" and type(self).reshape is TorchBackend.reshape:
            return _row, torch.Tensor
        # "rs": no shortcut. The kernel flattens with ravel, which copies a non-contiguous
        # operand to a contiguous result where a.reshape(shape) returns a strided view
        # (f32[4][1] sliced from f32[4][2]); torch's reshape also parses its shape for
        # half a microsecond more than the ravel/squeeze/unsqueeze the kernel calls.
        return None

    # ------------------------------------------------------------ benchmarks
    bench_raw_name = "torch"

    def bench_raw_matmul(self, x_np: np.ndarray, w_np: np.ndarray) -> Callable[[], Any]:
        """PyTorch's own matmul on this backend's device, for ``numerix bench matmul``."""
        dev = self.torch_device
        x = torch.from_numpy(x_np).to(dev)
        w = torch.from_numpy(w_np).to(dev)
        sync = torch.cuda.synchronize if dev.type == "cuda" else None

        def run() -> Any:
            r = torch.matmul(x, w)
            if sync is not None:
                sync(dev)
            return r

        return run
