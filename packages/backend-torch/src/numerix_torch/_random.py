"""Torch kernel of the threefry2x32 block (mixed into TorchBackend).

torch has no uint32 add or shift on CPU, so the core's version (the block's fallback)
widens every uint32 operation to int64 and masks it back. Here the twenty rounds run on
the words' int32 view, in place in two buffers and one scratch tensor: add and xor are
the same bits in two's complement, a left shift too, and a logical right shift by ``s``
is the arithmetic one with the ``s`` copies of the sign bit masked off."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

import torch

from numerix._tensor import Tensor

_I32 = torch.int32
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = 0x1BD11BDA  # Threefry's key-schedule constant (below 2**31: the same int32)

#: True while the torch compiler traces a program into a graph of aten ops for inductor
_FOR_GRAPH: ContextVar[bool] = ContextVar("numerix_torch_for_graph", default=False)


@contextlib.contextmanager
def tracing_for_graph() -> Iterator[None]:
    """Kernels written in place run out of place inside: inductor fuses twenty rounds of
    out-of-place ops into one loop in seconds, and the same rounds in place (a chain of
    functionalized copies) took it more than five minutes."""
    token = _FOR_GRAPH.set(True)
    try:
        yield
    finally:
        _FOR_GRAPH.reset(token)


def threefry2x32(
    k1: torch.Tensor, k2: torch.Tensor, x1: torch.Tensor, x2: torch.Tensor, shape: tuple[int, ...]
) -> tuple[torch.Tensor, torch.Tensor]:
    """Threefry-2x32 of the uint32 tensors ``x1, x2`` under ``k1, k2`` (broadcast to
    ``shape``), as two uint32 tensors of ``shape``."""
    k1, k2, x1, x2 = (t.view(_I32) for t in (k1, k2, x1, x2))
    ks = (k1, k2, k1 ^ k2 ^ _PARITY)
    if _FOR_GRAPH.get():
        y1, y2 = _rounds(ks, (x1 + ks[0]).expand(shape), (x2 + ks[1]).expand(shape))
        return y1.view(torch.uint32), y2.view(torch.uint32)
    y1 = torch.add(x1, ks[0]).expand(shape).contiguous()
    y2 = torch.add(x2, ks[1]).expand(shape).contiguous()
    tmp = torch.empty_like(y2)
    for i in range(5):
        for r in _ROTATIONS[i % 2]:
            y1.add_(y2)
            torch.bitwise_left_shift(y2, r, out=tmp)
            y2.bitwise_right_shift_(32 - r).bitwise_and_((1 << r) - 1)
            y2.bitwise_or_(tmp).bitwise_xor_(y1)
        y1.add_(ks[(i + 1) % 3])
        y2.add_(ks[(i + 2) % 3] + (i + 1))
    return y1.view(torch.uint32), y2.view(torch.uint32)


def _rounds(
    ks: tuple[torch.Tensor, ...], y1: torch.Tensor, y2: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    # the same rounds out of place, for a graph
    for i in range(5):
        for r in _ROTATIONS[i % 2]:
            y1 = y1 + y2
            y2 = y1 ^ ((y2 << r) | ((y2 >> (32 - r)) & ((1 << r) - 1)))
        y1 = y1 + ks[(i + 1) % 3]
        y2 = y2 + (ks[(i + 2) % 3] + (i + 1))
    return y1.contiguous(), y2.contiguous()


class RandomKernels:
    """torch kernel of the threefry2x32 block."""

    __slots__ = ()

    def block_threefry2x32(
        self, out: tuple[Tensor, Tensor], k1: Tensor, k2: Tensor, x1: Tensor, x2: Tensor
    ) -> tuple[Tensor, Tensor]:
        out[0].data, out[1].data = threefry2x32(k1.data, k2.data, x1.data, x2.data, out[0].shape)
        return out
