"""Xla kernels of the softmax blocks (mixed into XlaBackend).

Each is one jitted ``lax`` function per (block, axes, operand type) (:func:`numerix_xla._kernels.kernel`),
the computation of ``jax.nn.softmax`` / ``jax.nn.log_softmax`` written with ``lax``
itself: jax's own functions are a ``custom_jvp`` and a nested ``jax.jit``, which would
sit as calls inside the xla compiler's program. The result is the core's composite: the
maximum of each slice subtracted first (a slice of only ``-inf`` gives NaN, as
``-inf - -inf``), float16 and bfloat16 computed in float32 and rounded once, no axes
meaning each element its own slice.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import ml_dtypes
import numpy as np
from jax import lax

from numerix.backend import lowers
from numerix_xla import _kernels

if TYPE_CHECKING:
    from numerix._tensor import Tensor

_HALF = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))
_F32 = np.dtype(np.float32)


def _softmax(axes: tuple[int, ...], log: bool, *types: Any) -> Callable[[Any], Any]:
    """The kernel of softmax (``log``: log_softmax) over ``axes``, for operands of ``types``."""

    def f(x: Any) -> Any:
        a = lax.convert_element_type(x, _F32) if x.dtype in _HALF else x
        kept = tuple(d for d in range(a.ndim) if d not in axes)

        def back(r: Any) -> Any:  # a reduction over axes, broadcast back to a's shape
            return lax.broadcast_in_dim(r, a.shape, kept)

        s = a - back(lax.reduce_max(a, axes))
        if log:
            r = s - back(lax.log(lax.reduce_sum(lax.exp(s), axes)))
        else:
            e = lax.exp(s)
            r = e / back(lax.reduce_sum(e, axes))
        return r if r.dtype == x.dtype else lax.convert_element_type(r, x.dtype)

    return f


class NnKernels:
    """lax kernels of the softmax and log_softmax blocks."""

    __slots__ = ()

    @lowers(lambda params, ins, out: _kernels.kernel(_softmax, params["axes"], False, *ins[0]))
    def block_softmax(self, out: Tensor, x: Tensor, *, axes: tuple[int, ...]) -> Tensor:
        out.data = _kernels.kernel(_softmax, axes, False, x.shape, x.dtype)(x.data)
        return out

    @lowers(lambda params, ins, out: _kernels.kernel(_softmax, params["axes"], True, *ins[0]))
    def block_log_softmax(self, out: Tensor, x: Tensor, *, axes: tuple[int, ...]) -> Tensor:
        out.data = _kernels.kernel(_softmax, axes, True, x.shape, x.dtype)(x.data)
        return out
