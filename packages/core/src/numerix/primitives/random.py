"""The block of :mod:`numerix.random`: the Threefry-2x32 hash, which a backend may run as
one native kernel (the core's version is twenty rounds of uint32 add, xor and shifts)."""

from __future__ import annotations

from numerix import dtypes
from numerix._shapes import broadcast_shapes
from numerix.primitives._registry import declare_block, nondifferentiable


def threefry2x32_shape_rule(*words: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    shape = broadcast_shapes("random.threefry2x32", *words)
    return shape, shape


def threefry2x32_dtype_rule(*words: dtypes.DType) -> tuple[dtypes.DType, dtypes.DType]:
    return dtypes.uint32, dtypes.uint32


threefry2x32 = declare_block(
    "threefry2x32", "random", inputs=("k1", "k2", "x1", "x2"),
    shape_rule=threefry2x32_shape_rule, dtype_rule=threefry2x32_dtype_rule,
    doc="Threefry-2x32, 20 rounds, of the uint32 counter words (x1, x2) under the key words "
        "(k1, k2), element-wise with broadcasting; out is a pair of uint32 tensors "
        "(jax.random's threefry2x32_p)",
)  # fmt: skip

nondifferentiable("threefry2x32")
