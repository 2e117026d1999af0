"""The torch backend: every primitive on PyTorch kernels, with the least Python between.

Tensors hold a ``torch.Tensor`` of exactly the numerix dtype (see :mod:`._dtypes` for the
unsigned dtypes torch stores but computes little with) on one torch device.
"""

from __future__ import annotations

import atexit
import datetime
import functools
import math
import operator
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from numerix import dtypes
from numerix._tensor import Tensor
from numerix._threads import call_in_slices
from numerix.backend import Backend, Option, lowers, payload
from numerix.errors import ArgumentError, BackendOptionError, ConfigError, first_line
from numerix_torch._dtypes import (
    EMULATED,
    NUMERIX,
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
_Fn = Callable[..., torch.Tensor]


def _same(a: torch.Tensor) -> torch.Tensor:
    return a


def _narrowing(d: dtypes.DType, out: dtypes.DType) -> Callable[[torch.Tensor], torch.Tensor]:
    """A sum or product of ``d`` values as ``out``: torch accumulates small integers in
    int64, so an emulated unsigned result wraps back to its width (numpy's modular
    arithmetic) before its bits are read as unsigned."""
    if d in SIGNED_VIEW:
        v = SIGNED_VIEW[d]
        return lambda r: unbits(r.to(v), d)
    t = TORCH[out]
    return lambda r: r if r.dtype is t else r.to(t)


# ---------------------------------------------------------------- reduce: one plan per node
# A reduction's function of payloads, planned once per (kind, axes, keepdims, dtypes, rank):
# the kernel calls it and the evaluator's replay runs it (its lowering), so the two are one.

#: a max or min over every axis, to a 0-d result: torch's whole-tensor forms, cheaper
#: than amax/amin with every dim named (NaN propagates through both)
_WHOLE = {"max": torch.max, "min": torch.min}
_EXTREMES = {"max": torch.amax, "min": torch.amin}
_LOGICAL = {"all": torch.all, "any": torch.any}


@functools.lru_cache(maxsize=1024)
def _reduce_plan(kind: str, axes: tuple[int, ...], keepdims: bool, d: dtypes.DType,
                 od: dtypes.DType, ndim: int) -> _Fn:  # fmt: skip
    if not axes:  # torch reads dim=() as every axis
        return _same if kind not in _LOGICAL or d.kind == "b" else (lambda a: bits(a, d) != 0)
    whole = not keepdims and len(axes) == ndim
    if kind in _LOGICAL:
        logical = _LOGICAL[kind]
        if d.kind == "b":
            return lambda a: logical(a, axes, keepdims)
        return lambda a: logical(bits(a, d) != 0, axes, keepdims)
    if kind in _EXTREMES:
        if d in EMULATED:
            ext = _EXTREMES[kind]
            return lambda a: from_key(ext(order_key(a, d), dim=axes, keepdim=keepdims), d)
        if whole:
            return _WHOLE[kind]
        ext = _EXTREMES[kind]
        return lambda a: ext(a, axes, keepdims)  # positional: a partial's keywords cost more
    narrow = _narrowing(d, od)
    if kind == "sum":
        if d not in SIGNED_VIEW:
            if od is d and d.kind in "fc":  # a floating sum keeps its dtype: no conversion
                if whole:
                    return torch.sum
                return lambda a: torch.sum(a, axes, keepdims)  # positional, as above
            if whole:
                return lambda a: narrow(torch.sum(a))
        return lambda a: narrow(torch.sum(bits(a, d), dim=axes, keepdim=keepdims))
    if len(axes) == 1:
        return lambda a: narrow(torch.prod(bits(a, d), dim=axes[0], keepdim=keepdims))
    k = len(axes)  # torch.prod takes one axis: move the axes last and flatten them

    def prod(a: torch.Tensor) -> torch.Tensor:
        moved = bits(a, d).movedim(axes, tuple(range(ndim - k, ndim)))
        # the flattened size spelt out: -1 is ambiguous when a kept axis is empty
        r = torch.prod(
            moved.reshape(*moved.shape[: ndim - k], math.prod(moved.shape[ndim - k :])), dim=-1
        )
        if keepdims:
            r = r.reshape([1 if i in axes else n for i, n in enumerate(a.shape)])
        return narrow(r)

    return prod


def _reduce_lowering(p: Any, ins: Any, out: Any) -> _Fn:
    return _reduce_plan(p["kind"], p["axes"], p["keepdims"], ins[0][1], out[1], len(ins[0][0]))


# ---------------------------------------------------------------- dot: one plan per node
@functools.lru_cache(maxsize=512)
def _dot_plan(nx_: int, ny: int, cx: tuple[int, ...], bx: tuple[int, ...],
              cy: tuple[int, ...], by: tuple[int, ...], d: dtypes.DType) -> _Fn:  # fmt: skip
    """The dot's function of payloads: for two matrices contracting one axis each,
    ``torch.mm`` (what ``torch.matmul`` calls for them, without its dispatch), of
    transposed views where the axis is not x's last or y's first (einsum's planning
    costs more than the product for small matrices); ``torch.matmul`` where it computes
    the dot as it is; else einsum; uint16/32/64 on their signed bits."""
    mm = torch.mm
    fn: _Fn
    if not bx and nx_ == ny == 2 and len(cx) == 1:
        ta, tb = cx[0] == 0, cy[0] == 1
        if ta and tb:
            fn = lambda a, b: mm(a.t(), b.t())  # noqa: E731
        elif ta:
            fn = lambda a, b: mm(a.t(), b)  # noqa: E731
        elif tb:
            fn = lambda a, b: mm(a, b.t())  # noqa: E731
        else:
            fn = mm
    else:
        eq = _einsum_equation(nx_, ny, cx, bx, cy, by)
        fn = torch.matmul if eq is None else functools.partial(torch.einsum, eq)
    v = SIGNED_VIEW.get(d)
    if v is None:
        return fn
    t = TORCH[d]
    return lambda a, b: fn(a.view(v), b.view(v)).view(t)


def _dot_lowering(p: Any, ins: Any, out: Any) -> _Fn:
    (sa, d), (sb, _) = ins
    return _dot_plan(len(sa), len(sb), p["contract_x"], p["batch_x"], p["contract_y"],
                     p["batch_y"], d)  # fmt: skip


@functools.lru_cache(maxsize=512)
def _einsum_equation(nx_: int, ny: int, cx: tuple[int, ...], bx: tuple[int, ...],
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


# ---------------------------------------------------------------- payload functions
# One per primitive (numerix.backend.payload): the kernel and its lowering both run it.


def _as_type(a: torch.Tensor, *, dtype: dtypes.DType) -> torch.Tensor:
    src = NUMERIX[a.dtype]
    if src is dtype:
        return a
    if dtype.kind == "b":
        return bits(a, src) != 0
    if src.kind == "c" and dtype.kind != "c":
        a = a.real
    if dtype.kind in "iu" and src.kind in "fc":
        return _saturate(a, dtype)
    if dtype is dtypes.uint64 and src.kind == "i":  # wraps as numpy: via the bit pattern
        return a.to(torch.int64).view(torch.uint64)
    if dtype in EMULATED and src.kind in "iu":
        return restore(compute(a, src).to(torch.int64), dtype)
    return a.to(TORCH[dtype])


def _select(p: torch.Tensor, t: torch.Tensor, f: torch.Tensor, *, shape: tuple[int, ...]) -> Any:
    r = torch.where(p, t, f)
    return r if r.shape == shape else r.expand(shape)


def _argreduce(a: torch.Tensor, *, kind: str, axis: int | None, keepdims: bool) -> torch.Tensor:
    fn = torch.argmax if kind == "max" else torch.argmin
    d = NUMERIX[a.dtype]
    if d in EMULATED:
        a = order_key(a, d)
    elif d.kind == "b":
        a = a.to(torch.uint8)
    if axis is None:
        r = fn(a.reshape(-1))
        return r.reshape((1,) * a.ndim) if keepdims else r
    return fn(a, dim=axis, keepdim=keepdims)


def _reshape(a: torch.Tensor, shape: tuple[int, ...]) -> torch.Tensor:
    # torch parses a shape tuple for about half a microsecond: the reshapes the core asks
    # most (to 1-d, to 0-d after x[i], a trailing unit axis for a gather's indices) take
    # torch's shorter calls, each a view where reshape is one
    if len(shape) == 1:
        return a.ravel()
    if not shape:
        return a.squeeze()  # one element: every axis has size 1
    if len(shape) == a.ndim + 1 and shape[-1] == 1 and shape[:-1] == a.shape:
        return a.unsqueeze(-1)
    return a.reshape(shape)


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


#: transpose's plan per permutation: 0 the identity (no kernel), 1 a swap of the last two
#: axes (``mT``, a view without permute's parse of the axes), 2 a general permute
_TRANSPOSES: dict[tuple[int, ...], int] = {(): 0, (0,): 0, (0, 1): 0, (1, 0): 1}


def _transpose(a: torch.Tensor, *, axes: tuple[int, ...]) -> torch.Tensor:
    plan = _TRANSPOSES.get(axes)
    if plan is None:
        n = len(axes)
        plan = 0 if axes == tuple(range(n)) else 1 if axes == (*range(n - 2), n - 1, n - 2) else 2
        if len(_TRANSPOSES) < 1024:
            _TRANSPOSES[axes] = plan
    return a if plan == 0 else a.mT if plan == 1 else a.permute(axes)


def _broadcast(a: torch.Tensor, *, axes: tuple[int, ...], shape: tuple[int, ...]) -> torch.Tensor:
    view = [1] * len(shape)
    for i, ax in enumerate(axes):
        view[ax] = a.shape[i]
    return a.reshape(view).expand(shape)


def _reverse(a: torch.Tensor, *, axes: tuple[int, ...]) -> torch.Tensor:
    if not axes:
        return a
    d = NUMERIX[a.dtype]
    return unbits(torch.flip(bits(a, d), axes), d)


def _gather(a: torch.Tensor, i: torch.Tensor, *, axes: tuple[int, ...]) -> torch.Tensor:
    if axes == (0,):
        # a take along the first axis (x[idx]): index_select of the flat index, viewed in
        # the index's shape; one kernel, no advanced-indexing machinery (torch has no 1-d
        # index_select of uint16/32/64: their signed bits are taken instead)
        flat, v = i.reshape(-1), SIGNED_VIEW.get(NUMERIX[a.dtype])
        r = a.index_select(0, flat) if v is None else a.view(v).index_select(0, flat).view(a.dtype)
        return r if i.ndim == 2 else r.view((*i.shape[:-1], *a.shape[1:]))
    k = len(axes)
    if axes != tuple(range(k)):
        a = a.movedim(axes, tuple(range(k)))
    # one index tensor indexes by itself: a tuple of one costs torch more
    return a[i.squeeze(-1)] if k == 1 else a[i.unbind(-1)]


_applied: set[str] = set()


def _apply_settings(device: torch.device) -> None:
    """num_threads and the process group when the first backend is created;
    memory_fraction per cuda device."""
    if "threads" not in _applied:
        _applied.add("threads")
        n = torch_settings_value("num_threads")
        if n is not None:
            torch.set_num_threads(int(n))
    if "distributed" not in _applied:
        d = torch_settings_value("distributed")
        if d is not None and not torch.distributed.is_initialized():
            _join(d)
        _applied.add("distributed")
    key = str(device)
    if device.type == "cuda" and key not in _applied:
        _applied.add(key)
        frac = torch_settings_value("memory_fraction")
        if frac is not None:
            torch.cuda.set_per_process_memory_fraction(float(frac), device)


def _leave() -> None:
    """Destroy the process group numerix joined (at exit)."""
    dist = torch.distributed
    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


def _collective_error(op: str, x: Tensor, e: Exception) -> str:
    return (
        f"{op}: torch.distributed refused {x.describe()} ({first_line(e)}); the process group's "
        f"backend may not carry this dtype (gloo: floats and ints)"
    )


def _join(d: Any) -> None:
    """``torch.distributed.init_process_group`` as ``[backends.torch.distributed]`` says,
    waited on in short slices on a daemon thread (Ctrl-C reaches the caller)."""

    def join() -> None:
        torch.distributed.init_process_group(
            d.process_group, init_method=d.init_method, world_size=d.world_size,
            rank=d.rank, timeout=datetime.timedelta(seconds=d.timeout),
        )  # fmt: skip

    e = call_in_slices(join, "numerix-torch-distributed")
    if e is not None:
        raise ConfigError(
            f"[backends.torch.distributed]: rank {d.rank} of {d.world_size} at "
            f"{d.init_method} could not join ({type(e).__name__}: {first_line(e)}); start "
            f"every process with the same init_method and world_size and its own rank"
        ) from None
    # the group's threads must end before the interpreter does: left to the C++
    # destructors at exit, gloo's aborts the process ("terminate called without an
    # active exception")
    atexit.register(_leave)


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

    def process_group(self) -> tuple[int, int]:
        dist = torch.distributed
        if dist.is_available() and dist.is_initialized():
            return dist.get_rank(), dist.get_world_size()
        return 0, 1

    def all_reduce(self, out: Tensor, x: Tensor, op: str) -> Tensor | None:
        dist = torch.distributed
        data = x.data.clone()
        try:
            dist.all_reduce(data, op={"sum": dist.ReduceOp.SUM, "max": dist.ReduceOp.MAX,
                                      "min": dist.ReduceOp.MIN}[op])  # fmt: skip
        except RuntimeError as e:
            raise ArgumentError(_collective_error("all_reduce", x, e)) from None
        out.data = data
        return out

    def all_gather(self, out: Tensor, x: Tensor) -> Tensor | None:
        dist = torch.distributed
        data = x.data.contiguous()
        parts = [torch.empty_like(data) for _ in range(dist.get_world_size())]
        try:
            dist.all_gather(parts, data)
        except RuntimeError as e:
            raise ArgumentError(_collective_error("all_gather", x, e)) from None
        out.data = torch.stack(parts)
        return out

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

    def device_memory(self) -> tuple[int, int] | None:
        # CUDA's caching allocator counts; the CPU's tensors are host memory, and MPS
        # keeps no peak
        if self.torch_device.type != "cuda":
            return None
        dev = self.torch_device
        return int(torch.cuda.memory_allocated(dev)), int(torch.cuda.max_memory_allocated(dev))

    def reset_device_memory_peak(self) -> None:
        if self.torch_device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(self.torch_device)

    # ------------------------------------------------------------ creation
    # iota, eye, arange and linspace: the core's fallbacks (numpy on the host, as these
    # were, then from_numpy)
    def full(self, out: Tensor, *, value: Any) -> Tensor:
        out.data = torch.full(out.shape, value, dtype=TORCH[out.dtype], device=self.torch_device)
        return out

    # ------------------------------------------------------------ element-wise (the rest:
    # ElementwiseKernels)
    as_type = payload(_as_type)
    bitcast = payload(lambda a, *, dtype: a.view(TORCH[dtype]))
    select = payload(_select, reads=("shape",))

    # ------------------------------------------------------------ reductions
    @lowers(_reduce_lowering)
    def reduce(
        self, out: Tensor, x: Tensor, *, kind: str, axes: tuple[int, ...], keepdims: bool
    ) -> Tensor:
        out.data = _reduce_plan(kind, axes, keepdims, x.dtype, out.dtype, len(x.shape))(x.data)
        return out

    argreduce = payload(_argreduce)

    # ------------------------------------------------------------ linalg
    @lowers(_dot_lowering)
    def dot(self, out: Tensor, x: Tensor, y: Tensor, *, contract_x: tuple[int, ...],
            batch_x: tuple[int, ...], contract_y: tuple[int, ...],
            batch_y: tuple[int, ...]) -> Tensor:  # fmt: skip
        plan = _dot_plan(len(x.shape), len(y.shape), contract_x, batch_x, contract_y, batch_y,
                         x.dtype)  # fmt: skip
        out.data = plan(x.data, y.data)
        return out

    # ------------------------------------------------------------ shape and indexing
    reshape = payload(_reshape)
    transpose = payload(_transpose)
    broadcast = payload(_broadcast)

    def concatenate(self, out: Tensor, *xs: Tensor, axis: int) -> Tensor:
        if len(xs) == 2:  # no list built, the axis positional: torch.cat's shortest parse
            out.data = torch.cat((xs[0].data, xs[1].data), axis)
        else:
            out.data = torch.cat([x.data for x in xs], axis)
        return out

    def slice(self, out: Tensor, x: Tensor, *, start: tuple[int, ...], stop: tuple[int, ...],
              strides: tuple[int, ...]) -> Tensor:  # fmt: skip
        # a method: the key reads x.shape, which a payload would read off the torch tensor
        out.data = x.data[_slice_key(start, stop, strides, x.shape)]
        return out

    reverse = payload(_reverse)
    gather = payload(_gather)

    # ------------------------------------------------------------ the compiled fast path
    def fast_kernel(self, op: str, form: str, dtype: dtypes.DType) -> Any:
        # the element-wise forms: the payload function itself (Backend.fast_kernel); the
        # others, the function the kernel runs for them. Only this class's own kernels.
        short = super().fast_kernel(op, form, dtype)
        if short is not None or form in ("u", "tt", "ts", "st"):
            return short
        if getattr(type(self), op, None) is not getattr(TorchBackend, op, None):
            return None
        if form == "mm":  # the dot's plan for two matrices
            return _dot_plan(2, 2, (1,), (), (0,), (), dtype), torch.Tensor
        if form == "rs":
            return _reshape, torch.Tensor
        if form == "sl":  # x.data[key]: the same basic slice of axis 0, a view
            return operator.getitem, torch.Tensor
        if form == "ix" and type(self).reshape is TorchBackend.reshape:
            return _row, torch.Tensor
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
