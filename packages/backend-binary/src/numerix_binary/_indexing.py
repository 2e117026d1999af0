"""Binary kernel of the take block (mixed into BinaryBackend): rows along axis 0 in one numpy
call.

The core hands an int64 index whose entries are in range. A 1-d tensor is indexed
(``a[i]``: 0.09 us on f32[4], where ``take`` costs 0.2), a larger one taken
(``a.take(i, 0)``: 0.2 us on f32[4][4] and f32[256][256], where ``a[i]`` costs 0.75).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from numerix._tensor import Tensor
from numerix.backend import lowers

_nd = np.ndarray


def _take(a: np.ndarray, i: np.ndarray) -> np.ndarray:
    if a.ndim == 1:
        r = a[i]
        # a 0-d index of a 1-d array gives a numpy scalar: tensors hold arrays
        return r if type(r) is _nd else np.asarray(r, dtype=a.dtype)
    return a.take(i, 0)


def _lowering(params: Mapping[str, Any], ins: Any, out: Any) -> Any:
    return _take


class IndexingKernels:
    """The numpy kernel of the take block."""

    __slots__ = ()

    @lowers(_lowering)
    def block_take(self, out: Tensor, x: Tensor, indices: Tensor) -> Tensor:
        out.data = _take(x.data, indices.data)
        return out

    # moving elements raises no floating-point warning: no kernel context around it
    block_take.quiet = True  # type: ignore[attr-defined]
