"""A numerix backend over array-api-strict: the required core, and nothing else.

Tensors hold ``array_api_strict`` arrays. The kernels use the standard's namespace
only, except where the standard has no such operation (``bitcast``: a host round
trip) and around it: array-api-strict computes with numpy, whose floating-point
warnings numerix never emits (``1 / 0`` is inf, silently), so every kernel runs in
``np.errstate(all="ignore")``. Every other primitive is the core's fallback, written
with these.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import array_api_strict as xp
import numpy as np

import numerix as nx
from numerix import Tensor
from numerix.backend import Backend

__all__ = ["ArrayApiBackend"]

#: the dtypes array-api-strict holds: no float16, no bfloat16
_DTYPES = {d: getattr(xp, d.name) for d in nx.dtypes.ALL_DTYPES if hasattr(xp, d.name)}
_REDUCE: dict[str, Any] = {
    "sum": xp.sum, "prod": xp.prod, "max": xp.max, "min": xp.min, "all": xp.all, "any": xp.any,
}  # fmt: skip
#: reductions of bool: the standard's sum, prod, max and min take numbers only
_BOOL: dict[str, Any] = {"sum": xp.any, "prod": xp.all, "max": xp.any, "min": xp.all}


def _quiet(kernel: Any) -> Any:
    """``kernel`` without numpy's floating-point warnings (numerix gives IEEE results)."""

    @functools.wraps(kernel)
    def run(self: Any, out: Tensor, *args: Any, **params: Any) -> Tensor:
        with np.errstate(all="ignore"):
            out.data = kernel(self, out, *args, **params)
        return out

    return run


def _unary(fn: Any) -> Any:
    return _quiet(lambda self, out, x: fn(x.data))


def _binary(fn: Any) -> Any:
    return _quiet(lambda self, out, x1, x2: fn(x1.data, x2.data))


def _integer_by_zero(fn: Any) -> Any:
    """``fn(x1, x2)``, an integer division by 0 giving 0 (the standard leaves it open)."""

    def kernel(self: Any, out: Tensor, x1: Tensor, x2: Tensor) -> Any:
        a, b = x1.data, x2.data
        if out.dtype.kind not in "iu":
            return fn(a, b)
        zero = b == 0
        return xp.where(zero, 0, fn(a, xp.where(zero, 1, b)))

    return _quiet(kernel)


class ArrayApiBackend(Backend):
    """``numerix.tensor(x, backend="array_api")``: array-api-strict arrays."""

    name = "array_api"
    supported_dtypes = frozenset(_DTYPES)

    __slots__ = ()

    # ------------------------------------------------------------ host exchange
    def from_numpy(self, out: Tensor, array: np.ndarray) -> Tensor:
        out.data = xp.asarray(array)
        return out

    def to_numpy(self, x: Tensor) -> np.ndarray:
        return np.asarray(x.data)

    # the DLPack exchange (np.from_dlpack(tensor)): the standard's own protocol
    def to_dlpack(self, x: Tensor, *args: Any, **kwargs: Any) -> Any:
        return x.data.__dlpack__(*args, **kwargs)

    def dlpack_device(self, x: Tensor) -> tuple[int, int]:
        return x.data.__dlpack_device__()

    # ------------------------------------------------------------ conversions
    @_quiet
    def as_type(self, out: Tensor, x: Tensor) -> Any:
        a, to = x.data, _DTYPES[out.dtype]
        if out.dtype.kind == "b":
            return a != 0
        if x.dtype.kind == "c" and out.dtype.kind != "c":
            a = xp.real(a)  # numpy's rule, the real part (the standard has no such cast)
        if out.dtype.kind in "iu" and a.dtype in (xp.float32, xp.float64):
            # truncate, saturate at the integer's range, NaN to 0 (decision 7); the bounds
            # are powers of two, exact in every float dtype (iinfo.max may round up)
            info = xp.iinfo(to)
            hi = 2.0 ** (info.bits - (info.min < 0))
            f = xp.trunc(a)
            over, under = f >= hi, f < info.min
            inside = xp.astype(xp.where(over | under | xp.isnan(f), 0.0, f), to)
            return xp.where(over, xp.asarray(info.max, dtype=to), xp.where(under, info.min, inside))
        return xp.astype(a, to)

    def bitcast(self, out: Tensor, x: Tensor) -> Tensor:
        # the standard has no bitcast: through the host, numpy's view of the same bytes
        out.data = xp.asarray(np.asarray(x.data).view(out.dtype.numpy_dtype))
        return out

    # ------------------------------------------------------------ arithmetic
    add = _binary(xp.add)
    subtract = _binary(xp.subtract)
    multiply = _binary(xp.multiply)
    divide = _binary(xp.divide)
    floor_divide = _integer_by_zero(xp.floor_divide)
    remainder = _integer_by_zero(xp.remainder)

    @_quiet
    def pow(self, out: Tensor, x1: Tensor, x2: Tensor) -> Any:
        a, b = x1.data, x2.data
        if out.dtype.kind != "i":
            return xp.pow(a, b)
        # x ** -n for integers (the standard leaves it open): 1 for x == 1, +-1 for
        # x == -1, else 0
        neg = b < 0
        r = xp.pow(a, xp.where(neg, 0, b))
        odd = xp.remainder(b, 2) == 1
        one = xp.ones_like(a)
        small = xp.where(a == 1, one, xp.where(a == -1, xp.where(odd, -one, one), 0))
        return xp.where(neg, small, r)

    exp = _unary(xp.exp)
    log = _unary(xp.log)
    sin = _unary(xp.sin)
    cos = _unary(xp.cos)
    sqrt = _unary(xp.sqrt)
    atan2 = _binary(xp.atan2)
    real = _unary(xp.real)
    imag = _unary(xp.imag)
    conj = _unary(xp.conj)

    # ------------------------------------------------------------ comparisons and bits
    equal = _binary(xp.equal)

    @_quiet
    def less(self, out: Tensor, x1: Tensor, x2: Tensor) -> Any:
        a, b = x1.data, x2.data
        if x1.dtype.kind == "b":  # the standard orders numbers only: False < True
            return xp.logical_and(xp.logical_not(a), b)
        return xp.less(a, b)

    bitwise_and = _binary(xp.bitwise_and)
    bitwise_or = _binary(xp.bitwise_or)

    @_quiet
    def select(self, out: Tensor, pred: Tensor, on_true: Tensor, on_false: Tensor) -> Any:
        return xp.broadcast_to(xp.where(pred.data, on_true.data, on_false.data), out.shape)

    # ------------------------------------------------------------ reductions, shapes, indices
    @_quiet
    def reduce(
        self, out: Tensor, x: Tensor, *, kind: str, axes: tuple[int, ...], keepdims: bool
    ) -> Any:
        a = x.data
        if x.dtype.kind == "b" and kind in _BOOL:
            return _BOOL[kind](a, axis=axes, keepdims=keepdims)
        if kind in ("sum", "prod"):  # the standard's default widens small integers
            return _REDUCE[kind](a, axis=axes, keepdims=keepdims, dtype=_DTYPES[out.dtype])
        return _REDUCE[kind](a, axis=axes, keepdims=keepdims)

    def reshape(self, out: Tensor, x: Tensor) -> Tensor:
        out.data = xp.reshape(x.data, out.shape)
        return out

    def gather(self, out: Tensor, x: Tensor, indices: Tensor, *, axes: tuple[int, ...]) -> Tensor:
        # the standard's take reads one axis: the gathered axes, moved to the front, are
        # flattened into one, and each index row becomes one linear index into it
        a, idx = x.data, indices.data
        rest = [i for i in range(a.ndim) if i not in axes]
        sizes = [x.shape[i] for i in axes]
        kept = [x.shape[i] for i in rest]
        a = xp.reshape(xp.permute_dims(a, (*axes, *rest)), (math.prod(sizes), *kept))
        linear = idx[..., 0]
        for k in range(1, len(axes)):
            linear = linear * sizes[k] + idx[..., k]
        flat = xp.take(a, xp.reshape(linear, (-1,)), axis=0)
        out.data = xp.reshape(flat, out.shape)
        return out
