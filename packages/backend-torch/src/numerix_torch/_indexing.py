"""Torch kernel of the take block (mixed into TorchBackend): rows along axis 0 in one torch
call.

The core hands an int64 index whose entries are in range. A 1-d index is
``index_select`` (1.46 us on f32[4][4], 1.51 on f32[256][256], where ``a[i]`` costs 1.64
and 2.07); any other index shape, and the unsigned dtypes ``index_select`` does not
implement (uint16/32/64), index with it (``a[i]``), which gives ``i.shape +
a.shape[1:]`` as the block does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

from numerix._tensor import Tensor
from numerix.backend import lowers

_NO_SELECT = frozenset({torch.uint16, torch.uint32, torch.uint64})


def _take(a: torch.Tensor, i: torch.Tensor) -> torch.Tensor:
    if i.ndim == 1 and a.dtype not in _NO_SELECT:
        return a.index_select(0, i)
    return a[i]


def _lowering(params: Mapping[str, Any], ins: Any, out: Any) -> Any:
    return _take


class IndexingKernels:
    """The torch kernel of the take block."""

    __slots__ = ()

    @lowers(_lowering)
    def block_take(self, out: Tensor, x: Tensor, indices: Tensor) -> Tensor:
        out.data = _take(x.data, indices.data)
        return out
