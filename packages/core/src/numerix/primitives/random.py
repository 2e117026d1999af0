"""The block of :mod:`numerix.random`: the Threefry-2x32 hash, which a backend may run as
one native kernel (the core's version is twenty rounds of uint32 add, xor and shifts)."""

from __future__ import annotations

from numerix.primitives._registry import declare_block, nondifferentiable

threefry2x32 = declare_block(
    "threefry2x32", "random", inputs=("k1", "k2", "x1", "x2"),
    doc="Threefry-2x32, 20 rounds, of the uint32 counter words (x1, x2) under the key words "
        "(k1, k2), element-wise with broadcasting; out is a pair of uint32 tensors "
        "(jax.random's threefry2x32_p)",
)  # fmt: skip

nondifferentiable("threefry2x32")
