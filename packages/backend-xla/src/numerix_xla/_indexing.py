"""Xla kernel of the take block (mixed into XlaBackend): rows along axis 0 as one jitted
``lax.gather``.

The core hands an int64 index whose entries are in range (it refuses the others and
wraps negative ones), so the gather promises in-bounds indices: XLA's default mode
would clamp an index silently, and ``jnp.take``'s default fills. One kernel per
operand types (:func:`numerix_xla._kernels.kernel`); the index gets its unit last axis inside the
kernel, where the reshape costs nothing. An output with no element is made without a
program, as the slice kernel makes it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from jax import lax

from numerix.backend import lowers
from numerix_xla import _kernels

if TYPE_CHECKING:
    from numerix._tensor import Tensor


def _take(*types: Any) -> Any:
    def f(a: Any, i: Any) -> Any:
        batch = i.ndim
        dn = lax.GatherDimensionNumbers(
            offset_dims=tuple(range(batch, batch + a.ndim - 1)),
            collapsed_slice_dims=(0,),
            start_index_map=(0,),
        )
        return lax.gather(
            a, lax.expand_dims(i, (batch,)), dn, (1, *a.shape[1:]),
            mode=lax.GatherScatterMode.PROMISE_IN_BOUNDS,
            indices_are_sorted=False, unique_indices=False,
        )  # fmt: skip

    return f


def _lowering(params: Mapping[str, Any], ins: Any, out: Any) -> Any:
    # an empty output has no program: the method makes it
    return None if 0 in out[0] else _kernels.kernel(_take, *ins[0], *ins[1])


class IndexingKernels:
    """The lax kernel of the take block."""

    __slots__ = ()

    if TYPE_CHECKING:

        def _zeros(self, out: Tensor) -> Tensor: ...

    @lowers(_lowering)
    def block_take(self, out: Tensor, x: Tensor, indices: Tensor) -> Tensor:
        if 0 in out.shape:
            return self._zeros(out)
        k = _kernels.kernel(_take, x.shape, x.dtype, indices.shape, indices.dtype)
        out.data = k(x.data, indices.data)
        return out
