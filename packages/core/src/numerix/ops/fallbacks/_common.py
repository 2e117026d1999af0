"""The helpers the fallbacks share: constants on an operand's backend, bool logic, a
float's sign on its bits, the half floats' compute dtype, the index dtype, and casts,
reshapes and transposes that skip the no-ops.

Each binds required primitives only (``from_numpy``, ``equal``, ``select``,
``bitwise_and``, ``bitwise_or``, ``bitcast``, ``as_type``, ``reshape``), except
:func:`filled` and :func:`filled_like`, which bind ``full`` (its fallback is
``from_numpy``), and :func:`transposed`, which binds ``transpose`` (its fallback gathers
and uses no helper that transposes): no helper leads back to a fallback that calls it.

The fallback modules import the primitive modules under one alias each: ``cp``
(creation), ``ep`` (element-wise), ``ip`` (indexing), ``lp`` (linalg), ``rp``
(reduction), ``sp`` (shape).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from numerix import dtypes
from numerix._tensor import Tensor
from numerix.backend import Backend
from numerix.dtypes import DType
from numerix.ops._core import from_numpy
from numerix.primitives import creation as cp
from numerix.primitives import elementwise as ep
from numerix.primitives import shape as sp

# ---------------------------------------------------------------- constants


def const(on: Tensor | Backend, a: Any, dtype: DType | None = None) -> Tensor:
    """A host array or scalar as a tensor on ``on``'s backend (a C-ordered copy of its own)."""
    backend = on if isinstance(on, Backend) else on.backend
    arr = np.array(a, dtype=None if dtype is None else dtype.numpy_dtype, order="C", copy=True)
    return from_numpy(arr, backend=backend)


def scalar(like: Tensor, value: Any) -> Tensor:
    """A 0-d constant of ``like``'s dtype on its backend (``from_numpy``; operands broadcast it)."""
    return const(like, value, like.dtype)


def zeros_like(out: Tensor) -> Tensor:
    """Zeros of ``out``'s shape and dtype (``from_numpy``): a result with nothing to compute."""
    return const(out, np.zeros(out.shape, out.dtype.numpy_dtype))


def _python_value(dtype: DType, v: Any) -> Any:
    """``v`` as the Python scalar ``full`` takes for ``dtype``."""
    if dtype.kind == "b":
        return bool(v)
    if dtype.kind in "iu":
        return int(v)
    if dtype.kind == "f":
        return float(v)
    return complex(v)


def filled(backend: Backend, value: Any, dtype: DType, shape: tuple[int, ...] = ()) -> Tensor:
    """A tensor of ``shape`` and ``dtype`` on ``backend``, every element ``value`` (``full``)."""
    v = _python_value(dtype, value)
    return cp.full.bind(backend=backend, value=v, shape=shape, dtype=dtype)


def filled_like(like: Tensor, value: Any, dtype: DType | None = None) -> Tensor:
    """``like``'s shape on its backend filled with ``value``, in its dtype unless given (``full``)."""
    return filled(like.backend, value, like.dtype if dtype is None else dtype, like.shape)


def broadcast_to(t: Tensor, shape: tuple[int, ...]) -> Tensor:
    """``t`` broadcast to ``shape``, bits unchanged: ``select`` under an all-True mask."""
    return ep.select.bind(const(t, np.ones(shape, bool)), t, t)


# ---------------------------------------------------------------- bool logic


def not_(p: Tensor) -> Tensor:
    """Logical not of a bool tensor (``p == False``)."""
    return ep.equal.bind(p, scalar(p, False))


def and_(a: Tensor, b: Tensor) -> Tensor:
    """``a & b`` (``bitwise_and``): the logical and of bool tensors."""
    return ep.bitwise_and.bind(a, b)


def or_(a: Tensor, b: Tensor) -> Tensor:
    """``a | b`` (``bitwise_or``): the logical or of bool tensors."""
    return ep.bitwise_or.bind(a, b)


def nan_mask(x: Tensor) -> Tensor:
    """Where ``x`` is NaN: the one value unequal to itself (complex: either part NaN)."""
    if x.dtype.kind in "fc":
        return not_(ep.equal.bind(x, x))
    return filled_like(x, False, dtypes.bool_)


# ---------------------------------------------------------------- a float's bits

_SIGNED = {8: dtypes.int8, 16: dtypes.int16, 32: dtypes.int32, 64: dtypes.int64}


def pattern(d: DType, bits: int) -> int:
    """The integer of ``d`` whose bit pattern is ``bits`` (negative for a signed ``d``
    with the top bit set)."""
    if d.kind == "i" and bits >> (d.bits - 1):
        return bits - (1 << d.bits)
    return bits


def float_bits(x: Tensor) -> Tensor:
    """The bits of a real float tensor as the signed integer of its width (``bitcast``)."""
    return ep.bitcast.bind(x, dtype=_SIGNED[x.dtype.bits])


def from_bits(b: Tensor, d: DType) -> Tensor:
    """The float tensor of dtype ``d`` whose bits are ``b`` (``bitcast``)."""
    return ep.bitcast.bind(b, dtype=d)


def fabs(x: Tensor) -> Tensor:
    """|x| of a real float, exactly: its sign bit cleared (``-0.0`` gives ``0.0``, NaN
    loses its sign as in numpy)."""
    b = float_bits(x)
    return from_bits(and_(b, scalar(b, (1 << (x.dtype.bits - 1)) - 1)), x.dtype)


def copysign(mag: Tensor, sign: Tensor) -> Tensor:
    """|mag| with the sign bit of ``sign`` (real floats of one dtype), exactly: it makes
    an odd function give ``f(-0.0) = -0.0`` and ``f(-inf) = -f(inf)``."""
    b = float_bits(mag)
    top = 1 << (mag.dtype.bits - 1)
    kept = and_(b, scalar(b, top - 1))
    return from_bits(or_(kept, and_(float_bits(sign), scalar(b, pattern(b.dtype, top)))), mag.dtype)


# ---------------------------------------------------------------- dtypes


def is_half(d: DType) -> bool:
    """Whether ``d`` is float16 or bfloat16 (computed in float32 and rounded once)."""
    return d is dtypes.float16 or d is dtypes.bfloat16


def compute_dtype(d: DType) -> DType:
    """Where binary computes ``d``: float32 for the half floats, ``d`` itself otherwise."""
    return dtypes.float32 if is_half(d) else d


def holds(backend: Backend, d: DType) -> bool:
    """Whether ``backend`` holds tensors of ``d`` (``supported_dtypes`` None: every dtype)."""
    claimed = backend.supported_dtypes
    return claimed is None or d in claimed


def index_dtype(backend: Backend) -> DType:
    """int64, the dtype of gather's indices, unless the backend holds no int64 tensors
    (then int32: a backend without int64 holds no tensor of 2**31 elements either)."""
    return dtypes.int64 if holds(backend, dtypes.int64) else dtypes.int32


# ---------------------------------------------------------------- no-op-aware moves


def cast(t: Tensor, dtype: DType) -> Tensor:
    """``t`` in ``dtype`` (``as_type``; ``t`` itself when it is already)."""
    return t if t.dtype is dtype else ep.as_type.bind(t, dtype=dtype)


def reshaped(t: Tensor, shape: tuple[int, ...]) -> Tensor:
    """``t`` in ``shape`` (``reshape``; ``t`` itself when it has it already)."""
    return t if t.shape == shape else sp.reshape.bind(t, shape=shape)


def flat(t: Tensor) -> Tensor:
    """``t`` laid out flat, in C order."""
    return reshaped(t, (t.size,))


def transposed(t: Tensor, axes: tuple[int, ...]) -> Tensor:
    """``t`` with its axes permuted (``transpose``; ``t`` itself for the identity)."""
    return t if axes == tuple(range(t.ndim)) else sp.transpose.bind(t, axes=axes)
