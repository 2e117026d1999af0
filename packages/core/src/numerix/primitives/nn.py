"""The blocks of the activations: softmax, log_softmax, relu, and the stability shift.

Each is declared here with its rules; the public ops (:mod:`numerix.ops.composites`)
bind them and write the core's version a backend without the block runs.
"""

from __future__ import annotations

import functools
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
    """``g - exp(out) sum(g, axes)`` (:data:`log_softmax_grad_block`), in float32 for
    float16 and bfloat16."""
    g, o = _widen_pair(ops, cotangent, out)
    fallback = functools.partial(_log_softmax_grad, ops)
    r = grad_block(ops, log_softmax_grad_block, fallback, g, o, axes=axes)
    return (_narrow(ops, r, x.dtype),)


def _log_softmax_grad(ops: Any, g: Tensor, out: Tensor, *, axes: tuple[int, ...]) -> Tensor:
    return g - ops.exp(out) * ops.sum(g, axis=axes, keepdims=True)


def _tanh_grad(g: Tensor, out: Tensor) -> Tensor:
    return g * (1 - out * out)


def grad_block(
    ops: Any, block: Block, fallback: Any, g: Tensor, out: Tensor, **params: Any
) -> Tensor:
    """A derivative rule's result ``fallback(g, out, **params)`` (the cotangent ``g`` and
    the primitive's output ``out``, of one shape and dtype) recorded as ``block``, one
    node, when the rule runs in a trace (as the differentiation transforms run it): a
    backend with ``block_<name>`` computes it in one call, any other runs ``fallback``'s
    ops, the same ones the rule would have recorded. Outside a trace, or for operands
    of different types, ``fallback`` itself."""
    b = g.backend
    if not b.is_tracing or out.backend is not b or g.shape != out.shape or g.dtype is not out.dtype:
        return fallback(g, out, **params)
    r: Tensor = ops.run_block(block, ops.new_out(g.shape, g.dtype, b), fallback, g, out, **params)
    return r


def _grad_block_batch(
    ops: Any, call: Any, args: list[Tensor], batched: list[bool], **params: Any
) -> Tensor:
    # both operands with the batch as axis 0 (one shape again), the axes shifted past it
    if "axes" in params:
        params["axes"] = _batch.shifted(params["axes"])
    return call(*_batch.lift_all(ops, args, batched), **params)


#: the derivative of log_softmax given its output, ``g - exp(out) sum(g, axes)``, as one
#: node of the backward pass (bound by the rule above, inside a trace only): a backend
#: computes it in one call (torch's ``_log_softmax_backward_data``, the kernel its own
#: autograd runs); the core's version is the rule's ops.
log_softmax_grad_block = Block(
    "log_softmax_grad", "grad", ("g", "out"), ("axes",),
    "g - exp(out) * sum(g, axes, keepdims=True): log_softmax's derivative rule, given its "
    "output out and the cotangent g (one shape and float dtype)",
    batch=_grad_block_batch,
)  # fmt: skip

#: tanh's derivative given its output, ``g (1 - out**2)``, as one node of the backward
#: pass for real floating operands (bound by tanh's rule, inside a trace only): torch
#: computes it in one call (``tanh_backward``); the core's version is the rule's ops.
tanh_grad_block = Block(
    "tanh_grad", "grad", ("g", "out"), (),
    "g * (1 - out * out): tanh's derivative rule, given its output out and the cotangent g "
    "(one shape and real floating dtype)",
    batch=_grad_block_batch,
)  # fmt: skip


def tanh_grad(ops: Any, g: Tensor, out: Tensor) -> Tensor:
    """tanh's derivative rule's result (:data:`tanh_grad_block` for real floating
    operands; complex ones keep the ops, whose conjugation convention torch's
    ``tanh_backward`` does not share)."""
    if out.dtype.kind != "f":
        return _tanh_grad(g, out)
    return grad_block(ops, tanh_grad_block, _tanh_grad, g, out)


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
