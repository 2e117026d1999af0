"""The blocks of :mod:`numerix.random`: the Threefry-2x32 hash, which a backend may run as
one native kernel (the core's version is twenty rounds of uint32 add, xor and shifts), and
the inverse error function as XLA approximates it, which ``normal`` and
``truncated_normal`` turn their uniform draws with (the core's version writes XLA's
polynomials with numerix ops; a backend whose own ``erf_inv`` is XLA's runs that)."""

from __future__ import annotations

import math

from numerix import dtypes
from numerix._shapes import broadcast_shapes
from numerix.primitives import _batch
from numerix.primitives._registry import batch_rule, declare_block, nondifferentiable, vjp_rule


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


def xla_erf_inv_shape_rule(x: tuple[int, ...]) -> tuple[int, ...]:
    return x


def xla_erf_inv_dtype_rule(x: dtypes.DType) -> dtypes.DType:
    return x


xla_erf_inv = declare_block(
    "xla_erf_inv", "random", inputs=("x",),
    shape_rule=xla_erf_inv_shape_rule, dtype_rule=xla_erf_inv_dtype_rule,
    doc="the inverse error function of a float tensor as XLA approximates it (lax.erf_inv, "
        "M. Giles' polynomials; float16 and bfloat16 computed in float32), bit for bit: the "
        "core's version needs float64 for a float32 x, to fuse its multiply-adds as XLA does",
)  # fmt: skip


@vjp_rule("xla_erf_inv")
def xla_erf_inv_vjp(ops, cotangent, out, x):  # type: ignore[no-untyped-def]
    # d/dx erfinv(x) = sqrt(pi) / 2 * exp(erfinv(x) ** 2)
    return (ops.multiply(cotangent, ops.exp(ops.square(out)) * (math.sqrt(math.pi) / 2)),)


# both are element-wise (threefry2x32 broadcasts its four words as numpy does)
batch_rule("threefry2x32", "xla_erf_inv")(_batch.elementwise)
