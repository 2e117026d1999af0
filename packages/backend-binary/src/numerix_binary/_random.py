"""Binary kernel of the threefry2x32 block (mixed into BinaryBackend): the core's twenty
rounds, computed in place in two buffers and one scratch array instead of a new array
per operation."""

from __future__ import annotations

import numpy as np

from numerix._tensor import Tensor

_U32 = np.uint32
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))


def threefry2x32(
    k1: np.ndarray, k2: np.ndarray, x1: np.ndarray, x2: np.ndarray, shape: tuple[int, ...]
) -> tuple[np.ndarray, np.ndarray]:
    ks = (k1, k2, k1 ^ k2 ^ _U32(0x1BD11BDA))
    y1 = np.empty(shape, _U32)
    y2 = np.empty(shape, _U32)
    np.add(x1, ks[0], out=y1)
    np.add(x2, ks[1], out=y2)
    tmp = np.empty(shape, _U32)
    for i in range(5):
        for r in _ROTATIONS[i % 2]:
            np.add(y1, y2, out=y1)
            np.left_shift(y2, _U32(r), out=tmp)
            np.right_shift(y2, _U32(32 - r), out=y2)
            np.bitwise_or(y2, tmp, out=y2)
            np.bitwise_xor(y2, y1, out=y2)
        np.add(y1, ks[(i + 1) % 3], out=y1)
        np.add(y2, ks[(i + 2) % 3] + _U32(i + 1), out=y2)
    return y1, y2


class RandomKernels:
    """numpy kernel of the threefry2x32 block."""

    __slots__ = ()

    def block_threefry2x32(
        self, out: tuple[Tensor, Tensor], k1: Tensor, k2: Tensor, x1: Tensor, x2: Tensor
    ) -> tuple[Tensor, Tensor]:
        a, b, c, d = (np.asarray(t.data) for t in (k1, k2, x1, x2))
        out[0].data, out[1].data = threefry2x32(a, b, c, d, out[0].shape)
        return out
