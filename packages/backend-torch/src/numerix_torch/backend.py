"""The torch backend: every primitive on PyTorch kernels, with the least Python between.

Tensors hold a ``torch.Tensor`` of exactly the numerix dtype (see :mod:`._dtypes` for the
unsigned dtypes torch stores but computes little with) on one torch device.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from typing import Any, TypeVar

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


# ---------------------------------------------------------------- kernel factories
_I64_MIN = -(2**63)
_I64_MAX = 2**63 - 1
#: What the factories below return, typed so that mypy reads a class attribute holding one
#: as a method and checks it against the contract (tools/contract_check.py).
_Unary = Callable[[Any, Tensor, Tensor], Tensor]
_Binary = Callable[[Any, Tensor, Tensor, Tensor], Tensor]
_F = TypeVar("_F", bound=Callable[..., Any])


# Each factory's kernel carries its lowering (numerix.backend.lowers): the same torch call
# on the payloads, for the evaluator's replayed programs.


def _calls(
    fn: Callable[..., Any], when: Callable[[dtypes.DType], bool] | None = None
) -> Callable[[_F], _F]:
    """Mark the element-wise kernel it decorates as storing exactly ``fn(*payloads)`` in
    ``out.data`` for operands of a dtype ``d`` with ``when(d)`` (every dtype for None):
    the compiled fast path's shortcut past the kernel (:meth:`TorchBackend.fast_kernel`).
    ``fn`` must be the kernel's own call for those dtypes, returning a new tensor or a
    view exactly as the kernel does (never the operand itself). The mark names its kernel:
    a wrapper that copies the kernel's attributes (functools.wraps) is not taken for it."""

    def mark(kernel: Any) -> Any:
        kernel.torch_call = (kernel, fn, when)
        return kernel

    return mark


def _unviewed(d: dtypes.DType) -> bool:
    """Whether a kernel computes on ``d`` itself, not on the signed view of its bits."""
    return d not in SIGNED_VIEW


def _unemulated(d: dtypes.DType) -> bool:
    """Whether torch computes with ``d`` (order, powers), not with an emulation of it."""
    return d not in EMULATED


def _math(fn: Callable[[torch.Tensor], torch.Tensor]) -> _Unary:
    @_calls(fn)
    @lowers(lambda params, ins, out: fn)
    def kernel(self: Any, out: Tensor, x: Tensor) -> Tensor:
        out.data = fn(x.data)
        return out

    return kernel


def _wrapping(fn: Callable[..., torch.Tensor]) -> _Binary:
    def lowering(params: Any, ins: Any, out: Any) -> Any:
        d = ins[0][1]
        v = SIGNED_VIEW.get(d)
        if v is None:
            return fn
        t = TORCH[d]
        return lambda a, b: fn(a.view(v), b.view(v)).view(t)

    @_calls(fn, _unviewed)
    @lowers(lowering)
    def kernel(self: Any, out: Tensor, x1: Tensor, x2: Tensor) -> Tensor:
        v = SIGNED_VIEW.get(x1.dtype)
        if v is None:
            out.data = fn(x1.data, x2.data)
        else:
            out.data = fn(x1.data.view(v), x2.data.view(v)).view(TORCH[x1.dtype])
        return out

    return kernel


def _on_bits(fn: Callable[..., torch.Tensor]) -> _Binary:
    def lowering(params: Any, ins: Any, out: Any) -> Any:
        v = SIGNED_VIEW.get(ins[0][1])
        return fn if v is None else (lambda a, b: fn(a.view(v), b.view(v)))

    @_calls(fn, _unviewed)
    @lowers(lowering)
    def kernel(self: Any, out: Tensor, x1: Tensor, x2: Tensor) -> Tensor:
        v = SIGNED_VIEW.get(x1.dtype)
        if v is None:
            out.data = fn(x1.data, x2.data)
        else:
            out.data = fn(x1.data.view(v), x2.data.view(v))
        return out

    return kernel


def _ordered(fn: Callable[..., torch.Tensor], keyed: bool = False) -> _Binary:
    # emulated unsigned dtypes compare through order keys: the method's own path
    @_calls(fn, _unemulated)
    @lowers(lambda params, ins, out: None if ins[0][1] in EMULATED else fn)
    def kernel(self: Any, out: Tensor, x1: Tensor, x2: Tensor) -> Tensor:
        d = x1.dtype
        if d in EMULATED:
            r = fn(order_key(x1.data, d), order_key(x2.data, d))
            out.data = from_key(r, d) if keyed else r
        else:
            out.data = fn(x1.data, x2.data)
        return out

    return kernel


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


def _classify(fn: Callable[[torch.Tensor], torch.Tensor], x: Tensor, ints: bool) -> torch.Tensor:
    if x.dtype.kind in "fc":
        return fn(x.data)
    return torch.full(x.data.shape, ints, dtype=torch.bool, device=x.data.device)


def _cbrt(a: torch.Tensor) -> torch.Tensor:
    # torch has no cbrt: a pow in float64, polished by one Newton step, rounded once
    w = a.double()
    r = torch.sign(w) * torch.abs(w).pow(1.0 / 3.0)
    ok = torch.isfinite(r) & (r != 0)
    rs = torch.where(ok, r, 1.0)
    r = torch.where(ok, r - (rs * rs * rs - w) / (3.0 * rs * rs), r)
    return r.to(a.dtype)


def _pattern64(a: torch.Tensor, d: dtypes.DType) -> torch.Tensor:
    # the bit pattern of an integer of any width, zero-extended into int64
    if d.kind == "u" or d is dtypes.int64:
        return compute(a, d).to(torch.int64)
    w = d.numpy_dtype.itemsize * 8
    return a.to(torch.int64) & ((1 << w) - 1)


def _udivmod64(a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    # unsigned 64-bit division on int64 bit patterns; division by 0 gives 0 and 0 (numpy)
    zero, big = b == 0, b < 0  # big: divisor >= 2**63
    bs = torch.where(zero | big, 1, b)
    q = torch.div((a >> 1) & _I64_MAX, bs, rounding_mode="trunc") << 1
    r = a - q * bs
    fix = (r ^ _I64_MIN) >= (bs ^ _I64_MIN)  # r < 2 * bs: one correction at most
    q, r = q + fix.to(torch.int64), torch.where(fix, r - bs, r)
    ge = (a ^ _I64_MIN) >= (b ^ _I64_MIN)
    q = torch.where(big, ge.to(torch.int64), q)
    r = torch.where(big, torch.where(ge, a - b, a), r)
    return torch.where(zero, 0, q), torch.where(zero, 0, r)


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


class TorchBackend(NnKernels, IndexingKernels, RandomKernels, ExtraKernels, Backend):
    """Tensors on one torch device: ``numerix.tensor(x, backend="torch:cuda:1")``."""

    name = "torch"
    accepted_options = (
        Option("device", lambda options: default_device(), choices=DEVICES),
        Option("device_id", _default_device_id, type=int, minimum=0),
    )
    spec_fields = ("device", "device_id")
    supported_dtypes = frozenset(TORCH)

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

    @_calls(operator.neg, _unviewed)
    def negative(self, out: Tensor, x: Tensor) -> Tensor:
        d = x.dtype
        out.data = unbits(torch.neg(bits(x.data, d)), d) if d in SIGNED_VIEW else -x.data
        return out

    @_calls(torch.abs, lambda d: d.kind != "u")  # unsigned: the operand itself
    def abs(self, out: Tensor, x: Tensor) -> Tensor:
        out.data = x.data if x.dtype.kind == "u" else torch.abs(x.data)
        return out

    def sign(self, out: Tensor, x: Tensor) -> Tensor:
        d = x.dtype
        if d.kind == "c":
            out.data = torch.sgn(x.data)
        elif d.kind == "u":
            out.data = unbits((bits(x.data, d) != 0).to(SIGNED_VIEW.get(d, TORCH[d])), d)
        elif d.kind == "f":  # torch's sign of NaN is 0
            a = x.data
            out.data = torch.where(torch.isnan(a), a, torch.sign(a))
        else:
            out.data = torch.sign(x.data)
        return out

    def floor(self, out: Tensor, x: Tensor) -> Tensor:
        out.data = x.data if x.dtype.kind in "iu" else torch.floor(x.data)
        return out

    def ceil(self, out: Tensor, x: Tensor) -> Tensor:
        out.data = x.data if x.dtype.kind in "iu" else torch.ceil(x.data)
        return out

    def round(self, out: Tensor, x: Tensor) -> Tensor:
        d = x.dtype
        if d.kind in "iu":
            out.data = x.data
        elif d.kind == "c":
            out.data = torch.complex(torch.round(x.data.real), torch.round(x.data.imag))
        else:
            out.data = torch.round(x.data)
        return out

    exp = _math(torch.exp)
    log = _math(torch.log)
    sqrt = _math(torch.sqrt)
    tanh = _math(torch.tanh)
    sigmoid = _math(torch.sigmoid)
    exp2 = _math(torch.exp2)
    expm1 = _math(torch.expm1)
    log1p = _math(torch.log1p)
    rsqrt = _math(torch.rsqrt)
    sin = _math(torch.sin)
    cos = _math(torch.cos)
    tan = _math(torch.tan)
    asin = _math(torch.asin)
    acos = _math(torch.acos)
    atan = _math(torch.atan)
    sinh = _math(torch.sinh)
    cosh = _math(torch.cosh)
    asinh = _math(torch.asinh)
    acosh = _math(torch.acosh)
    atanh = _math(torch.atanh)
    erf = _math(torch.erf)
    erfc = _math(torch.erfc)
    erf_inv = _math(torch.special.erfinv)

    def cbrt(self, out: Tensor, x: Tensor) -> Tensor:
        out.data = _cbrt(x.data)
        return out

    def isnan(self, out: Tensor, x: Tensor) -> Tensor:
        out.data = _classify(torch.isnan, x, False)
        return out

    def isinf(self, out: Tensor, x: Tensor) -> Tensor:
        out.data = _classify(torch.isinf, x, False)
        return out

    def isfinite(self, out: Tensor, x: Tensor) -> Tensor:
        out.data = _classify(torch.isfinite, x, True)
        return out

    def real(self, out: Tensor, x: Tensor) -> Tensor:
        out.data = x.data.real.clone()
        return out

    def imag(self, out: Tensor, x: Tensor) -> Tensor:
        out.data = x.data.imag.clone()
        return out

    def conj(self, out: Tensor, x: Tensor) -> Tensor:
        out.data = torch.conj_physical(x.data)
        return out

    def bitwise_invert(self, out: Tensor, x: Tensor) -> Tensor:
        d = x.dtype
        out.data = unbits(torch.bitwise_not(bits(x.data, d)), d)
        return out

    # binary: the wrap-around ones are exact on the same-width signed bits
    add = _wrapping(torch.add)
    subtract = _wrapping(torch.sub)
    multiply = _wrapping(torch.mul)
    bitwise_and = _wrapping(torch.bitwise_and)
    bitwise_or = _wrapping(torch.bitwise_or)
    bitwise_xor = _wrapping(torch.bitwise_xor)
    equal = _on_bits(torch.eq)
    not_equal = _on_bits(torch.ne)
    less = _ordered(torch.lt)
    less_equal = _ordered(torch.le)
    greater = _ordered(torch.gt)
    greater_equal = _ordered(torch.ge)
    maximum = _ordered(torch.maximum, keyed=True)
    minimum = _ordered(torch.minimum, keyed=True)

    @_calls(torch.true_divide)
    @lowers(lambda params, ins, out: torch.true_divide)
    def divide(self, out: Tensor, x1: Tensor, x2: Tensor) -> Tensor:
        out.data = torch.true_divide(x1.data, x2.data)
        return out

    @_calls(torch.atan2)
    def atan2(self, out: Tensor, x1: Tensor, x2: Tensor) -> Tensor:
        out.data = torch.atan2(x1.data, x2.data)
        return out

    def floor_divide(self, out: Tensor, x1: Tensor, x2: Tensor) -> Tensor:
        d = x1.dtype
        a, b = x1.data, x2.data
        if d.kind == "f":
            out.data = torch.div(a, b, rounding_mode="floor")
        elif d is dtypes.uint64:
            out.data = _udivmod64(a.view(torch.int64), b.view(torch.int64))[0].view(torch.uint64)
        else:
            a, b = compute(a, d), compute(b, d)
            zero = b == 0
            # torch raises on integer division by 0 (numpy gives 0) and MIN // -1 may trap
            bad = zero | (b == -1) if d.kind == "i" else zero
            q = torch.div(a, torch.where(bad, 1, b), rounding_mode="floor")
            if d.kind == "i":
                q = torch.where(b == -1, torch.neg(a), q)
            out.data = restore(torch.where(zero, 0, q), d)
        return out

    def remainder(self, out: Tensor, x1: Tensor, x2: Tensor) -> Tensor:
        d = x1.dtype
        a, b = x1.data, x2.data
        if d.kind == "f":
            out.data = torch.remainder(a, b)
        elif d is dtypes.uint64:
            out.data = _udivmod64(a.view(torch.int64), b.view(torch.int64))[1].view(torch.uint64)
        else:
            a, b = compute(a, d), compute(b, d)
            bad = (b == 0) | (b == -1) if d.kind == "i" else b == 0
            out.data = restore(torch.remainder(a, torch.where(bad, 1, b)), d)
        return out

    @_calls(torch.pow, lambda d: d.kind != "c" and d not in EMULATED)
    def pow(self, out: Tensor, x1: Tensor, x2: Tensor) -> Tensor:
        d = x1.dtype
        a, b = x1.data, x2.data
        if d is dtypes.uint64:
            # exponents >= 2**63 are negative as int64: a**b = (a**(b>>1))**2 * a**(b&1)
            a, b = a.view(torch.int64), b.view(torch.int64)
            h = torch.pow(a, (b >> 1) & _I64_MAX)
            out.data = (h * h * torch.where((b & 1) == 1, a, 1)).view(torch.uint64)
        elif d in EMULATED:
            out.data = restore(torch.pow(compute(a, d), compute(b, d)), d)
        elif d.kind == "c":
            # x ** 0 is 1 for every complex x (C99's cpow, numpy, XLA); torch gives nan+nanj
            # for a zero base
            out.data = torch.where(b == 0, torch.ones((), dtype=a.dtype), torch.pow(a, b))
        else:
            out.data = torch.pow(a, b)
        return out

    def bitwise_left_shift(self, out: Tensor, x1: Tensor, x2: Tensor) -> Tensor:
        d = x1.dtype
        a, b = bits(x1.data, d), bits(x2.data, d)
        ok = (b >= 0) & (b < d.numpy_dtype.itemsize * 8)
        r = torch.bitwise_left_shift(a, torch.where(ok, b, 0))
        out.data = unbits(torch.where(ok, r, 0), d)
        return out

    def bitwise_right_shift(self, out: Tensor, x1: Tensor, x2: Tensor) -> Tensor:
        d = x1.dtype
        w = d.numpy_dtype.itemsize * 8
        v = SIGNED_VIEW.get(d)
        if v is not None:  # uint16/32/64 on their signed bits, not widened
            a, b = x1.data.view(v), x2.data.view(v)
            ok = (b >= 0) & (b < w)  # an amount of 2**(w-1) or more reads negative: refused
            s = torch.where(ok, b, 0)
            # a logical shift is the arithmetic one with the copies of the sign bit cleared
            # by the mask 2**(w-s) - 1, written (2 << (w-1-s)) - 1 so that no shift
            # reaches w (s = 0 wraps to 0 - 1: every bit)
            mask = torch.bitwise_left_shift(2, w - 1 - s) - 1
            r = torch.bitwise_right_shift(a, s).bitwise_and_(mask)
            out.data = torch.where(ok, r, 0).view(TORCH[d])
            return out
        a, b = compute(x1.data, d), compute(x2.data, d)
        ok = (b >= 0) & (b < w)
        r = torch.bitwise_right_shift(a, torch.where(ok, b, 0))
        fill: Any = torch.where(a < 0, -1, 0) if d.kind == "i" else 0
        out.data = restore(torch.where(ok, r, fill), d)
        return out

    def population_count(self, out: Tensor, x: Tensor) -> Tensor:
        d = x.dtype
        v = _pattern64(x.data, d)
        v = v - ((v >> 1) & 0x5555555555555555)
        v = (v & 0x3333333333333333) + ((v >> 2) & 0x3333333333333333)
        v = (v + (v >> 4)) & 0x0F0F0F0F0F0F0F0F
        v = ((v * 0x0101010101010101) >> 56) & 0xFF
        out.data = restore(v, d)
        return out

    def count_leading_zeros(self, out: Tensor, x: Tensor) -> Tensor:
        d = x.dtype
        u = _pattern64(x.data, d)
        n = torch.zeros_like(u)
        s = 32
        while s:  # binary search for the highest set bit, shifting it to the top
            top_zero = ((u >> (64 - s)) & ((1 << s) - 1)) == 0
            n = n + torch.where(top_zero, s, 0)
            u = torch.where(top_zero, u << s, u)
            s //= 2
        n = n + (u >= 0).to(torch.int64)  # only 0 leaves the top bit clear
        out.data = restore(n - (64 - d.numpy_dtype.itemsize * 8), d)
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
        # the torch call a kernel makes, where it is all the kernel does for this dtype
        # (marked by _calls): the kernel's Python frame and out.data less. Only this
        # class's own kernels (a subclass's kernel of its own has no mark).
        kernel = getattr(type(self), op, None)
        if form in ("u", "tt", "ts", "st"):
            marked, fn, when = getattr(kernel, "torch_call", (None, None, None))
            if fn is None or marked is not kernel or (when is not None and not when(dtype)):
                return None
            return fn, torch.Tensor
        if kernel is not getattr(TorchBackend, op, None):
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
