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
from numerix.backend import Backend, elementwise, payload

__all__ = ["ArrayApiBackend"]

#: the dtypes array-api-strict holds: no float16, no bfloat16
_DTYPES = {d: getattr(xp, d.name) for d in nx.dtypes.ALL_DTYPES if hasattr(xp, d.name)}
_REDUCE: dict[str, Any] = {
    "sum": xp.sum, "prod": xp.prod, "max": xp.max, "min": xp.min, "all": xp.all, "any": xp.any,
}  # fmt: skip
#: reductions of bool: the standard's sum, prod, max and min take numbers only
_BOOL: dict[str, Any] = {"sum": xp.any, "prod": xp.all, "max": xp.any, "min": xp.all}


def _quiet(fn: Any) -> Any:
    """``fn`` of arrays without numpy's floating-point warnings (numerix gives IEEE
    results: 1 / 0 is inf, silently)."""

    @functools.wraps(fn)
    def run(*arrays: Any, **params: Any) -> Any:
        with np.errstate(all="ignore"):
            return fn(*arrays, **params)

    return run


def _ew(fn: Any) -> elementwise:
    return elementwise(_quiet(fn))


def _integer_by_zero(fn: Any) -> elementwise:
    """``fn(a, b)``, an integer division by 0 giving 0 (the standard leaves it open)."""

    def build(dtype: nx.DType) -> Any:
        if dtype.kind not in "iu":
            return _quiet(fn)

        def by_zero(a: Any, b: Any) -> Any:
            zero = b == 0
            return xp.where(zero, 0, fn(a, xp.where(zero, 1, b)))

        return _quiet(by_zero)

    return elementwise.per_dtype(build)


def _pow(dtype: nx.DType) -> Any:
    if dtype.kind != "i":
        return xp.pow

    def integer_pow(a: Any, b: Any) -> Any:
        # x ** -n for integers (the standard leaves it open): 1 for x == 1, +-1 for
        # x == -1, else 0
        neg = b < 0
        r = xp.pow(a, xp.where(neg, 0, b))
        odd = xp.remainder(b, 2) == 1
        one = xp.ones_like(a)
        small = xp.where(a == 1, one, xp.where(a == -1, xp.where(odd, -one, one), 0))
        return xp.where(neg, small, r)

    return integer_pow


def _less(dtype: nx.DType) -> Any:
    if dtype.kind == "b":  # the standard orders numbers only: False < True
        return lambda a, b: xp.logical_and(xp.logical_not(a), b)
    return _quiet(xp.less)


def _as_type(a: Any, *, dtype: nx.DType) -> Any:
    to = _DTYPES[dtype]
    if dtype.kind == "b":
        return a != 0
    if xp.isdtype(a.dtype, "complex floating") and dtype.kind != "c":
        a = xp.real(a)  # numpy's rule, the real part (the standard has no such cast)
    if dtype.kind in "iu" and a.dtype in (xp.float32, xp.float64):
        # truncate, saturate at the integer's range, NaN to 0 (decision 7); the bounds
        # are powers of two, exact in every float dtype (iinfo.max may round up)
        info = xp.iinfo(to)
        hi = 2.0 ** (info.bits - (info.min < 0))
        f = xp.trunc(a)
        over, under = f >= hi, f < info.min
        inside = xp.astype(xp.where(over | under | xp.isnan(f), 0.0, f), to)
        return xp.where(over, xp.asarray(info.max, dtype=to), xp.where(under, info.min, inside))
    return xp.astype(a, to)


def _bitcast(a: Any, *, dtype: nx.DType) -> Any:
    # the standard has no bitcast: through the host, numpy's view of the same bytes
    return xp.asarray(np.asarray(a).view(dtype.numpy_dtype))


def _reduce(a: Any, *, kind: str, axes: tuple[int, ...], keepdims: bool, dtype: nx.DType) -> Any:
    if a.dtype == xp.bool and kind in _BOOL:
        return _BOOL[kind](a, axis=axes, keepdims=keepdims)
    if kind in ("sum", "prod"):  # the standard's default widens small integers
        return _REDUCE[kind](a, axis=axes, keepdims=keepdims, dtype=_DTYPES[dtype])
    return _REDUCE[kind](a, axis=axes, keepdims=keepdims)


def _gather(a: Any, idx: Any, *, axes: tuple[int, ...]) -> Any:
    # the standard's take reads one axis: the gathered axes, moved to the front, are
    # flattened into one, and each index row becomes one linear index into it
    rest = [i for i in range(a.ndim) if i not in axes]
    sizes = [a.shape[i] for i in axes]
    kept = [a.shape[i] for i in rest]
    a = xp.reshape(xp.permute_dims(a, (*axes, *rest)), (math.prod(sizes), *kept))
    linear = idx[..., 0]
    for k in range(1, len(axes)):
        linear = linear * sizes[k] + idx[..., k]
    flat = xp.take(a, xp.reshape(linear, (-1,)), axis=0)
    return xp.reshape(flat, (*idx.shape[:-1], *kept))


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

    # ------------------------------------------------------------ the required core: one
    # function of arrays per primitive (numerix.backend.elementwise / payload)
    as_type = payload(_quiet(_as_type))
    bitcast = payload(_bitcast)
    add = _ew(xp.add)
    subtract = _ew(xp.subtract)
    multiply = _ew(xp.multiply)
    divide = _ew(xp.divide)
    floor_divide = _integer_by_zero(xp.floor_divide)
    remainder = _integer_by_zero(xp.remainder)
    pow = elementwise.per_dtype(lambda dtype: _quiet(_pow(dtype)))
    exp = _ew(xp.exp)
    log = _ew(xp.log)
    sin = _ew(xp.sin)
    cos = _ew(xp.cos)
    sqrt = _ew(xp.sqrt)
    atan2 = _ew(xp.atan2)
    real = _ew(xp.real)
    imag = _ew(xp.imag)
    conj = _ew(xp.conj)
    equal = _ew(xp.equal)
    less = elementwise.per_dtype(_less)
    bitwise_and = _ew(xp.bitwise_and)
    bitwise_or = _ew(xp.bitwise_or)
    select = payload(
        _quiet(lambda p, t, f, *, shape: xp.broadcast_to(xp.where(p, t, f), shape)),
        reads=("shape",),
    )
    reduce = payload(_quiet(_reduce), reads=("dtype",))
    reshape = payload(lambda a, *, shape: xp.reshape(a, shape))
    gather = payload(_gather)
