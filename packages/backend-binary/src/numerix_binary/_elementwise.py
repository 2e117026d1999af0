"""The element-wise primitives on numpy, each one payload function (per dtype where a dtype
is computed apart): the core derives the kernel, its lowering and the fast path's shortcut
from it (numerix.backend.elementwise). BinaryBackend.elementwise_kernel runs it in the
kernel context, where numpy's floating-point warnings are off (the lowering and the
shortcut run in the same context: program_context), and makes a numpy scalar result a 0-d
array.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from numerix import dtypes
from numerix.backend import elementwise
from numerix.dtypes import DType

_Fn = Callable[..., Any]
_BF16 = dtypes.bfloat16
_F32 = np.float32


def _in_float32(fn: _Fn) -> elementwise:
    """``fn``, bfloat16 computed in float32 and rounded once (ml_dtypes' bfloat16 lacks
    some ufunc loops; XLA and PyTorch do the same on CPU). Domain edges (log1p(-1),
    asin(2) ...) give inf / NaN as documented."""

    def build(d: DType) -> _Fn:
        if d is not _BF16:
            return fn
        b = d.numpy_dtype
        return lambda a: fn(a.astype(_F32)).astype(b)

    return elementwise.per_dtype(build)


def _classify(fn: _Fn) -> elementwise:
    """isnan, isinf, isfinite: bfloat16 read in float32."""
    return elementwise.per_dtype(lambda d: (lambda a: fn(a.astype(_F32))) if d is _BF16 else fn)


def _rounded(fn: _Fn) -> elementwise:
    """``fn`` (computing in float64), rounded to the operand's dtype."""

    def build(d: DType) -> _Fn:
        dt = d.numpy_dtype
        return lambda a: fn(a).astype(dt)

    return elementwise.per_dtype(build)


def _sign(d: DType) -> _Fn:
    if d.name == "bfloat16":  # ml_dtypes' sign keeps the sign of -0.0; numpy's gives +0.0
        return lambda a: np.where(a == 0, np.zeros((), a.dtype), np.sign(a))
    if d.kind != "c":
        return np.sign

    def complex_sign(a: np.ndarray) -> np.ndarray:
        m = np.abs(a)
        return np.where(m == 0, 0, a / np.where(m == 0, 1, m)).astype(a.dtype)

    return complex_sign


def _sigmoid(d: DType) -> _Fn:
    dt, wide = d.numpy_dtype, d is _BF16

    def sigmoid(a: np.ndarray) -> np.ndarray:
        if wide:
            a = a.astype(_F32)
        # exp(-|x|) never overflows: sigmoid(x) = 1/(1+e^-x) for x>=0, e^x/(1+e^x) for x<0
        e = np.exp(-np.abs(a))
        return np.where(a >= 0, 1 / (1 + e), e / (1 + e)).astype(dt, copy=False)

    return sigmoid


def _atan2(d: DType) -> _Fn:
    if d is not _BF16:
        return np.arctan2
    b = d.numpy_dtype
    return lambda y, x: np.arctan2(y.astype(_F32), x.astype(_F32)).astype(b)


def _pow(d: DType) -> _Fn:
    if d.kind != "i":
        return np.power
    dt = d.numpy_dtype

    def int_pow(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        if (b < 0).any():
            # numpy raises on negative integer exponents; define x**-n as XLA does:
            # 1 for x == 1, +-1 for x == -1, else 0
            r = np.power(a, np.where(b < 0, 0, b))
            neg = np.where(a == 1, 1, np.where(a == -1, np.where(b % 2 == 0, 1, -1), 0))
            return np.where(b < 0, neg, r).astype(dt)
        return np.power(a, b)

    return int_pow


def _shift(shift: _Fn, d: DType) -> _Fn:
    # numpy leaves shifts by negative or too-large amounts to C (undefined); mask them:
    # out of range, left shifts and logical right shifts give 0, arithmetic right shifts
    # the sign (XLA)
    bits, signed = d.numpy_dtype.itemsize * 8, d.kind == "i"
    sign_fill = signed and shift is np.right_shift

    def shifted(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        ok = ((b >= 0) & (b < bits)) if signed else (b < bits)
        if ok.ndim == 0 and ok:  # one amount in range (a rotation's): no per-element select
            return shift(a, b.astype(a.dtype, copy=False))
        r = shift(a, np.where(ok, b, 0).astype(a.dtype, copy=False))
        fill = np.where(a < 0, -1, 0) if sign_fill else 0
        return np.where(ok, r, fill).astype(a.dtype, copy=False)

    return shifted


_ERF = np.frompyfunc(math.erf, 1, 1)
_ERFC = np.frompyfunc(math.erfc, 1, 1)


def _erf(a: np.ndarray) -> np.ndarray:
    # numpy has no erf; math.erf is correctly rounded enough in float64 for every dtype
    return np.asarray(_ERF(np.asarray(a, dtype=np.float64)), dtype=np.float64)


def _erfc(a: np.ndarray) -> np.ndarray:
    return np.asarray(_ERFC(np.asarray(a, dtype=np.float64)), dtype=np.float64)


def _erf_inv(a: np.ndarray) -> np.ndarray:
    # Giles' single-precision approximation, then two Newton steps on erf in float64
    y = np.asarray(a, dtype=np.float64)
    with np.errstate(all="ignore"):
        inner = np.abs(y) < 1
        yi = np.where(inner, y, 0.0)
        w = -np.log((1.0 - yi) * (1.0 + yi))
        lo = w - 2.5
        p = np.full_like(y, 2.81022636e-08)
        for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                  -0.00125372503, -0.00417768164, 0.246640727, 1.50140941):  # fmt: skip
            p = c + p * lo
        hi = np.sqrt(w) - 3.0
        q = np.full_like(y, -0.000200214257)
        for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
                  -0.0076224613, 0.00943887047, 1.00167406, 2.83297682):  # fmt: skip
            q = c + q * hi
        r = np.where(w < 5.0, p, q) * yi
        for _ in range(2):
            r = r - (_erf(r) - yi) / (2.0 / math.sqrt(math.pi) * np.exp(-r * r))
        edge = np.where(np.abs(y) == 1, np.copysign(np.inf, y), np.nan)
        return np.where(inner, r, edge)


class ElementwiseKernels:
    """The element-wise primitives (the class the binary backend takes them from)."""

    __slots__ = ()

    negative = elementwise(np.negative)
    abs = elementwise(np.abs)
    sign = elementwise.per_dtype(_sign)
    floor = elementwise(np.floor)
    ceil = elementwise(np.ceil)
    round = elementwise(np.round)
    exp = _in_float32(np.exp)
    log = _in_float32(np.log)
    sqrt = _in_float32(np.sqrt)
    tanh = _in_float32(np.tanh)
    sigmoid = elementwise.per_dtype(_sigmoid)
    exp2 = _in_float32(np.exp2)
    expm1 = _in_float32(np.expm1)
    log1p = _in_float32(np.log1p)
    rsqrt = _in_float32(lambda a: np.reciprocal(np.sqrt(a)))
    cbrt = _in_float32(np.cbrt)
    sin = _in_float32(np.sin)
    cos = _in_float32(np.cos)
    tan = _in_float32(np.tan)
    asin = _in_float32(np.arcsin)
    acos = _in_float32(np.arccos)
    atan = _in_float32(np.arctan)
    sinh = _in_float32(np.sinh)
    cosh = _in_float32(np.cosh)
    asinh = _in_float32(np.arcsinh)
    acosh = _in_float32(np.arccosh)
    atanh = _in_float32(np.arctanh)
    erf = _rounded(_erf)
    erfc = _rounded(_erfc)
    erf_inv = _rounded(_erf_inv)
    isnan = _classify(np.isnan)
    isinf = _classify(np.isinf)
    isfinite = _classify(np.isfinite)
    real = elementwise(lambda a: np.real(a).copy())
    imag = elementwise(lambda a: np.imag(a).copy())
    conj = elementwise(np.conj)
    bitwise_invert = elementwise(np.invert)

    # binary
    add = elementwise(np.add)
    subtract = elementwise(np.subtract)
    multiply = elementwise(np.multiply)
    divide = elementwise(np.true_divide)
    floor_divide = elementwise(np.floor_divide)
    remainder = elementwise(np.remainder)
    pow = elementwise.per_dtype(_pow)
    atan2 = elementwise.per_dtype(_atan2)
    bitwise_left_shift = elementwise.per_dtype(lambda d: _shift(np.left_shift, d))
    bitwise_right_shift = elementwise.per_dtype(lambda d: _shift(np.right_shift, d))
    maximum = elementwise(np.maximum)
    minimum = elementwise(np.minimum)
    bitwise_and = elementwise(np.bitwise_and)
    bitwise_or = elementwise(np.bitwise_or)
    bitwise_xor = elementwise(np.bitwise_xor)
    equal = elementwise(np.equal)
    not_equal = elementwise(np.not_equal)
    less = elementwise(np.less)
    less_equal = elementwise(np.less_equal)
    greater = elementwise(np.greater)
    greater_equal = elementwise(np.greater_equal)
