"""Torch kernels of the softmax blocks (mixed into TorchBackend): ``torch.softmax`` and
``torch.log_softmax``.

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
    """torch kernels of the softmax and log_softmax blocks."""

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
