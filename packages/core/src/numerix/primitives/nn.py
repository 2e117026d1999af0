"""The blocks of the activations: softmax, log_softmax, relu, and the stability shift.

Each is declared here with its rules; the public ops (:mod:`numerix.ops.composites`)
bind them and write the core's version a backend without the block runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from numerix import dtypes
from numerix.dtypes import DType
from numerix.primitives import _batch
from numerix.primitives._registry import (
    NONDIFFERENTIABLE,
    Block,
    batch_rule,
    declare_block,
    vjp_rule,
)
from numerix.primitives.linalg_blocks import same_dtype_rule, same_shape_rule

if TYPE_CHECKING:
    from numerix._tensor import Tensor

_HALF = (dtypes.float16, dtypes.bfloat16)

#: softmax and log_softmax as blocks: a backend computes each in one native call
#: (``torch.softmax``, one jitted lax function, numpy's four ops in one kernel); the core's
#: version is the fallback. ``x`` is a float tensor, ``axes`` sorted non-negative axes
#: (possibly none: each element is its own slice).
softmax_block = declare_block(
    "softmax", "nn", inputs=("x",), params=("axes",),
    shape_rule=same_shape_rule, dtype_rule=same_dtype_rule,
    doc="exp(x - m) / sum(exp(x - m), axes), m the maximum over axes; a slice that is all "
        "-inf gives NaN; float16/bfloat16 compute in float32, rounded once",
)  # fmt: skip
log_softmax_block = declare_block(
    "log_softmax", "nn", inputs=("x",), params=("axes",),
    shape_rule=same_shape_rule, dtype_rule=same_dtype_rule,
    doc="(x - m) - log(sum(exp(x - m), axes)), m the maximum over axes; a slice that is all "
        "-inf gives NaN; float16/bfloat16 compute in float32, rounded once",
)  # fmt: skip


@vjp_rule("softmax")
def softmax_vjp(
    ops: Any, cotangent: Tensor, out: Tensor, x: Tensor, *, axes: tuple[int, ...]
) -> tuple[Tensor]:
    """``g s - s sum(g s, axes)``, in float32 for float16 and bfloat16."""
    g, s = _widen_pair(ops, cotangent, out)
    gs = g * s
    return (_narrow(ops, gs - s * ops.sum(gs, axis=axes, keepdims=True), x.dtype),)


@vjp_rule("log_softmax")
def log_softmax_vjp(
    ops: Any, cotangent: Tensor, out: Tensor, x: Tensor, *, axes: tuple[int, ...]
) -> tuple[Tensor]:
    """``g - exp(out) sum(g, axes)``, in float32 for float16 and bfloat16."""
    g, o = _widen_pair(ops, cotangent, out)
    return (_narrow(ops, g - ops.exp(o) * ops.sum(g, axis=axes, keepdims=True), x.dtype),)


def _widen_pair(ops: Any, a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    if a.dtype in _HALF:
        return ops.astype(a, dtypes.float32), ops.astype(b, dtypes.float32)
    return a, b


def _narrow(ops: Any, r: Tensor, dtype: DType) -> Tensor:
    return r if r.dtype is dtype else ops.astype(r, dtype)


#: the maximum subtracted for stability by logsumexp, softmax and log_softmax: their
#: result does not depend on it, so no derivative flows through it (JAX's
#: ``stop_gradient`` there) and the backward pass skips the maximum's rule for ties. A
#: block whose core version is the identity (``numerix.stop_grad``'s, one layer up),
#: bound only inside a trace.
stability_shift_block = Block(
    "stability_shift",
    "grad",
    ("x",),
    (),
    "the identity; no derivative flows through (the shift of softmax and logsumexp)",
    vjp=NONDIFFERENTIABLE,
    batch=_batch.elementwise,
)


def relu_vjp(ops: Any, cotangent: Tensor, out: Tensor, x: Tensor) -> tuple[Tensor]:
    """1 where ``x > 0``, else 0."""
    return (ops.where(ops.greater(x, 0), cotangent, ops.zeros_like(cotangent)),)


#: relu as one node in a trace, for its derivative: 1 where ``x > 0``, else 0 (0 at 0,
#: as ``jax.nn.relu`` and ``torch.relu`` give), where ``maximum``'s rule would share a
#: tie with the constant 0 (0.5). Its core version is ``maximum(x, 0)``.
relu_block = Block(
    "relu", "grad", ("x",), (), "max(x, 0) with derivative 1 where x > 0", relu_vjp,
    batch=_batch.elementwise,
)  # fmt: skip


# ---------------------------------------------------------------- batching rule


@batch_rule("softmax", "log_softmax")
def softmax_batch(
    ops: Any, call: Any, args: list[Tensor], batched: list[bool], *, axes: tuple[int, ...]
) -> Tensor:
    return call(args[0], axes=_batch.shifted(axes))
