"""Torch kernels of the softmax blocks (mixed into TorchBackend): ``torch.softmax`` and
``torch.log_softmax``; and of the blocks of their backward pass that torch's autograd
runs as one kernel each: log_softmax's (``torch._log_softmax_backward_data``) and
tanh's (``aten.tanh_backward``).

torch takes one axis. Several axes are merged into one first, which is exact (a slice
over several axes is the same elements as their merged axis): adjacent axes by a
reshape (a view), others moved to the end first (a copy). No axes means each element
its own slice: 1 (log: 0) where the element is finite, NaN elsewhere, as the core's
composite gives (``x - x`` is NaN for an infinity). float16 and bfloat16 compute in
float32 (``dtype=`` of torch's functions) and round once. A slice that is all ``-inf``
gives NaN, as in the core.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import torch

from numerix import dtypes
from numerix._tensor import Tensor
from numerix.backend import lowers
from numerix_torch._dtypes import TORCH

_HALF = (torch.float16, torch.bfloat16)
_HALF_DTYPES = (dtypes.float16, dtypes.bfloat16)

_Fn = Callable[..., torch.Tensor]


def _along(fn: _Fn, t: torch.Tensor, axes: tuple[int, ...], alone: float) -> torch.Tensor:
    """``fn`` (``torch.softmax`` or ``torch.log_softmax``) of ``t`` over ``axes``; ``alone``
    is its value on a finite element that is its own slice."""
    if t.numel() == 0:
        return t
    k = len(axes)
    if k == 0:
        return torch.full_like(t, alone).masked_fill_(~torch.isfinite(t), math.nan)
    acc = torch.float32 if t.dtype in _HALF else None
    if k == 1:
        r = fn(t, axes[0], dtype=acc)
    elif axes[-1] - axes[0] == k - 1:  # adjacent: merged by a view
        a0, shape = axes[0], t.shape
        r = fn(t.reshape(*shape[:a0], -1, *shape[axes[-1] + 1 :]), a0, dtype=acc).reshape(shape)
    else:
        n = t.ndim
        ends = tuple(range(n - k, n))
        moved = torch.movedim(t, axes, ends)
        r = fn(moved.reshape(*moved.shape[: n - k], -1), -1, dtype=acc)
        r = torch.movedim(r.reshape(moved.shape), ends, axes)
    return r if acc is None else r.to(t.dtype)


_log_softmax_backward = torch._log_softmax_backward_data
_tanh_backward = torch.ops.aten.tanh_backward.default
_EXACT = (torch.float32, torch.float64)


def _log_softmax_grad(g: torch.Tensor, out: torch.Tensor, axes: tuple[int, ...]) -> torch.Tensor:
    """``g - exp(out) sum(g, axes)`` by torch's backward kernel of log_softmax, which
    takes one axis: several are merged into one as in :func:`_along`, none is each
    element its own slice (a new axis of size 1); float16 and bfloat16 in float32."""
    if g.numel() == 0:
        return torch.empty_like(g)
    dtype = g.dtype
    if dtype not in _EXACT:
        g, out = g.float(), out.float()
    k, shape = len(axes), g.shape
    if k == 1:
        r = _log_softmax_backward(g, out, axes[0], g.dtype)
    elif k == 0:
        r = _log_softmax_backward(g.unsqueeze(-1), out.unsqueeze(-1), -1, g.dtype).squeeze(-1)
    elif axes[-1] - axes[0] == k - 1:  # adjacent: merged by a view
        a0 = axes[0]
        merged = (*shape[:a0], -1, *shape[axes[-1] + 1 :])
        r = _log_softmax_backward(g.reshape(merged), out.reshape(merged), a0, g.dtype)
        r = r.reshape(shape)
    else:
        n = g.ndim
        ends = tuple(range(n - k, n))
        mg, mo = torch.movedim(g, axes, ends), torch.movedim(out, axes, ends)
        flat = (*mg.shape[: n - k], -1)
        r = _log_softmax_backward(mg.reshape(flat), mo.reshape(flat), -1, g.dtype)
        r = torch.movedim(r.reshape(mg.shape), ends, axes)
    return r if r.dtype is dtype else r.to(dtype)


def _log_softmax_grad_lowering(params: Mapping[str, Any], ins: Any, out: Any) -> Any:
    """One axis of float32 or float64: the backward kernel itself."""
    axes = params["axes"]
    if len(axes) != 1 or out[1] not in (dtypes.float32, dtypes.float64):
        return None
    axis, dtype = axes[0], TORCH[out[1]]
    return lambda g, o: _log_softmax_backward(g, o, axis, dtype)


def _lowering(name: str) -> Any:
    """The replay's function of payloads for one axis of a dtype torch computes in (the
    kernel's own first branch); None otherwise (the kernel runs)."""

    def build(params: Mapping[str, Any], ins: Any, out: Any) -> Any:
        axes = params["axes"]
        if len(axes) != 1 or out[1] in _HALF_DTYPES:
            return None
        fn, axis = getattr(torch.Tensor, name), axes[0]
        return lambda a: fn(a, axis)

    return build


class NnKernels:
    """torch kernels of the softmax and log_softmax blocks, and of the backward blocks
    of log_softmax and tanh."""

    __slots__ = ()

    @lowers(_lowering("softmax"))
    def block_softmax(self, out: Tensor, x: Tensor, *, axes: tuple[int, ...]) -> Tensor:
        t = x.data
        if len(axes) == 1 and t.dtype not in _HALF:  # the common call, one torch call
            out.data = t.softmax(axes[0])
        else:
            out.data = _along(torch.softmax, t, axes, 1.0)
        return out

    @lowers(_lowering("log_softmax"))
    def block_log_softmax(self, out: Tensor, x: Tensor, *, axes: tuple[int, ...]) -> Tensor:
        t = x.data
        if len(axes) == 1 and t.dtype not in _HALF:
            out.data = t.log_softmax(axes[0])
        else:
            out.data = _along(torch.log_softmax, t, axes, 0.0)
        return out

    @lowers(_log_softmax_grad_lowering)
    def block_log_softmax_grad(
        self, out: Tensor, g: Tensor, y: Tensor, *, axes: tuple[int, ...]
    ) -> Tensor:
        out.data = _log_softmax_grad(g.data, y.data, axes)
        return out

    @lowers(lambda params, ins, out: _tanh_backward)
    def block_tanh_grad(self, out: Tensor, g: Tensor, y: Tensor) -> Tensor:
        out.data = _tanh_backward(g.data, y.data)
        return out
