"""The element-wise primitives on PyTorch, each one payload function (per dtype where a
dtype is computed apart): the core derives the kernel, its lowering and the fast path's
shortcut from it (numerix.backend.elementwise)."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import torch

from numerix import dtypes
from numerix.backend import elementwise
from numerix.dtypes import DType
from numerix_torch._dtypes import (
    EMULATED,
    SIGNED_VIEW,
    TORCH,
    bits,
    compute,
    from_key,
    order_key,
    restore,
    unbits,
)

_I64_MIN = -(2**63)
_I64_MAX = 2**63 - 1
_Fn = Callable[..., torch.Tensor]


def _same(a: torch.Tensor) -> torch.Tensor:
    return a


def _wrapping(fn: _Fn) -> elementwise:
    """Exact on the same-width signed bits: add, multiply, the bitwise ops."""

    def build(d: DType) -> _Fn:
        v = SIGNED_VIEW.get(d)
        if v is None:
            return fn
        t = TORCH[d]
        return lambda a, b: fn(a.view(v), b.view(v)).view(t)

    return elementwise.per_dtype(build)


def _on_bits(fn: _Fn) -> elementwise:
    def build(d: DType) -> _Fn:
        v = SIGNED_VIEW.get(d)
        return fn if v is None else (lambda a, b: fn(a.view(v), b.view(v)))

    return elementwise.per_dtype(build)


def _ordered(fn: _Fn, keyed: bool = False) -> elementwise:
    """Emulated unsigned dtypes compare through order keys."""

    def build(d: DType) -> _Fn:
        if d not in EMULATED:
            return fn
        if keyed:
            return lambda a, b: from_key(fn(order_key(a, d), order_key(b, d)), d)
        return lambda a, b: fn(order_key(a, d), order_key(b, d))

    return elementwise.per_dtype(build)


def _int_same(fn: _Fn) -> elementwise:
    """``fn``, and integers themselves (floor, ceil)."""
    return elementwise.per_dtype(lambda d: _same if d.kind in "iu" else fn)


def _classify(fn: _Fn, ints: bool) -> elementwise:
    def build(d: DType) -> _Fn:
        if d.kind in "fc":
            return fn
        return lambda a: torch.full(a.shape, ints, dtype=torch.bool, device=a.device)

    return elementwise.per_dtype(build)


def _negative(d: DType) -> _Fn:
    if d in SIGNED_VIEW:
        return lambda a: unbits(torch.neg(bits(a, d)), d)
    return operator.neg


def _sign(d: DType) -> _Fn:
    if d.kind == "c":
        return torch.sgn
    if d.kind == "u":
        t = SIGNED_VIEW.get(d, TORCH[d])
        return lambda a: unbits((bits(a, d) != 0).to(t), d)
    if d.kind == "f":  # torch's sign of NaN is 0
        return lambda a: torch.where(torch.isnan(a), a, torch.sign(a))
    return torch.sign


def _round(d: DType) -> _Fn:
    if d.kind in "iu":
        return _same
    if d.kind == "c":
        return lambda a: torch.complex(torch.round(a.real), torch.round(a.imag))
    return torch.round


def _cbrt(a: torch.Tensor) -> torch.Tensor:
    # torch has no cbrt: a pow in float64, polished by one Newton step, rounded once
    w = a.double()
    r = torch.sign(w) * torch.abs(w).pow(1.0 / 3.0)
    ok = torch.isfinite(r) & (r != 0)
    rs = torch.where(ok, r, 1.0)
    r = torch.where(ok, r - (rs * rs * rs - w) / (3.0 * rs * rs), r)
    return r.to(a.dtype)


def _udivmod64(a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    # unsigned 64-bit division on int64 bit patterns; division by 0 gives 0 and 0 (numpy)
    zero, big = b == 0, b < 0  # big: divisor >= 2**63
    bs = torch.where(zero | big, 1, b)
    q = torch.div((a >> 1) & _I64_MAX, bs, rounding_mode="trunc") << 1
    r = a - q * bs
    fix = (r ^ _I64_MIN) >= (bs ^ _I64_MIN)  # r < 2 * bs: one correction at most
    q, r = q + fix.to(torch.int64), torch.where(fix, r - bs, r)
    ge = (a ^ _I64_MIN) >= (b ^ _I64_MIN)
    q = torch.where(big, ge.to(torch.int64), q)
    r = torch.where(big, torch.where(ge, a - b, a), r)
    return torch.where(zero, 0, q), torch.where(zero, 0, r)


def _unsigned64(which: int) -> _Fn:
    def f(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return _udivmod64(a.view(torch.int64), b.view(torch.int64))[which].view(torch.uint64)

    return f


def _floor_divide(d: DType) -> _Fn:
    if d.kind == "f":
        return lambda a, b: torch.div(a, b, rounding_mode="floor")
    if d is dtypes.uint64:
        return _unsigned64(0)

    def f(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        a, b = compute(a, d), compute(b, d)
        zero = b == 0
        # torch raises on integer division by 0 (numpy gives 0) and MIN // -1 may trap
        bad = zero | (b == -1) if d.kind == "i" else zero
        q = torch.div(a, torch.where(bad, 1, b), rounding_mode="floor")
        if d.kind == "i":
            q = torch.where(b == -1, torch.neg(a), q)
        return restore(torch.where(zero, 0, q), d)

    return f


def _float_remainder(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    # a zero remainder takes the divisor's sign, as numpy's (torch's keeps the dividend's:
    # remainder(-4.0, 2.0) was -0.0)
    r = torch.remainder(a, b)
    return torch.where(r == 0, torch.copysign(torch.zeros_like(r), b), r)


def _remainder(d: DType) -> _Fn:
    if d.kind == "f":
        return _float_remainder
    if d is dtypes.uint64:
        return _unsigned64(1)

    def f(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        a, b = compute(a, d), compute(b, d)
        bad = (b == 0) | (b == -1) if d.kind == "i" else b == 0
        return restore(torch.remainder(a, torch.where(bad, 1, b)), d)

    return f


def _pow(d: DType) -> _Fn:
    if d is dtypes.uint64:

        def u64(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
            # exponents >= 2**63 are negative as int64: a**b = (a**(b>>1))**2 * a**(b&1)
            a, b = a.view(torch.int64), b.view(torch.int64)
            h = torch.pow(a, (b >> 1) & _I64_MAX)
            return (h * h * torch.where((b & 1) == 1, a, 1)).view(torch.uint64)

        return u64
    if d in EMULATED:
        return lambda a, b: restore(torch.pow(compute(a, d), compute(b, d)), d)
    if d.kind == "c":
        # x ** 0 is 1 for every complex x (C99's cpow, numpy, XLA); torch gives nan+nanj
        # for a zero base
        return lambda a, b: torch.where(b == 0, torch.ones((), dtype=a.dtype), torch.pow(a, b))
    return torch.pow


def _left_shift(d: DType) -> _Fn:
    w = d.numpy_dtype.itemsize * 8

    def f(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        a, b = bits(a, d), bits(b, d)
        ok = (b >= 0) & (b < w)
        return unbits(torch.where(ok, torch.bitwise_left_shift(a, torch.where(ok, b, 0)), 0), d)

    return f


def _right_shift(d: DType) -> _Fn:
    w = d.numpy_dtype.itemsize * 8
    v = SIGNED_VIEW.get(d)
    if v is not None:  # uint16/32/64 on their signed bits, not widened

        def logical(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
            a, b = a.view(v), b.view(v)
            ok = (b >= 0) & (b < w)  # an amount of 2**(w-1) or more reads negative: refused
            s = torch.where(ok, b, 0)
            # a logical shift is the arithmetic one with the copies of the sign bit cleared
            # by the mask 2**(w-s) - 1, written (2 << (w-1-s)) - 1 so that no shift
            # reaches w (s = 0 wraps to 0 - 1: every bit)
            mask = torch.bitwise_left_shift(2, w - 1 - s) - 1
            r = torch.bitwise_right_shift(a, s).bitwise_and_(mask)
            return torch.where(ok, r, 0).view(TORCH[d])

        return logical

    def f(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        a, b = compute(a, d), compute(b, d)
        ok = (b >= 0) & (b < w)
        r = torch.bitwise_right_shift(a, torch.where(ok, b, 0))
        fill: Any = torch.where(a < 0, -1, 0) if d.kind == "i" else 0
        return restore(torch.where(ok, r, fill), d)

    return f


class ElementwiseKernels:
    """The element-wise primitives (the class the torch backend takes them from)."""

    negative = elementwise.per_dtype(_negative)
    abs = elementwise.per_dtype(lambda d: _same if d.kind == "u" else torch.abs)
    sign = elementwise.per_dtype(_sign)
    floor = _int_same(torch.floor)
    ceil = _int_same(torch.ceil)
    round = elementwise.per_dtype(_round)
    exp = elementwise(torch.exp)
    log = elementwise(torch.log)
    sqrt = elementwise(torch.sqrt)
    tanh = elementwise(torch.tanh)
    sigmoid = elementwise(torch.sigmoid)
    exp2 = elementwise(torch.exp2)
    expm1 = elementwise(torch.expm1)
    log1p = elementwise(torch.log1p)
    rsqrt = elementwise(torch.rsqrt)
    cbrt = elementwise(_cbrt)
    sin = elementwise(torch.sin)
    cos = elementwise(torch.cos)
    tan = elementwise(torch.tan)
    asin = elementwise(torch.asin)
    acos = elementwise(torch.acos)
    atan = elementwise(torch.atan)
    sinh = elementwise(torch.sinh)
    cosh = elementwise(torch.cosh)
    asinh = elementwise(torch.asinh)
    acosh = elementwise(torch.acosh)
    atanh = elementwise(torch.atanh)
    erf = elementwise(torch.erf)
    erfc = elementwise(torch.erfc)
    erf_inv = elementwise(torch.special.erfinv)
    isnan = _classify(torch.isnan, False)
    isinf = _classify(torch.isinf, False)
    isfinite = _classify(torch.isfinite, True)
    real = elementwise(lambda a: a.real.clone())
    imag = elementwise(lambda a: a.imag.clone())
    conj = elementwise(torch.conj_physical)
    bitwise_invert = elementwise.per_dtype(
        lambda d: lambda a: unbits(torch.bitwise_not(bits(a, d)), d)
    )

    # binary: the wrap-around ones are exact on the same-width signed bits
    add = _wrapping(torch.add)
    subtract = _wrapping(torch.sub)
    multiply = _wrapping(torch.mul)
    bitwise_and = _wrapping(torch.bitwise_and)
    bitwise_or = _wrapping(torch.bitwise_or)
    bitwise_xor = _wrapping(torch.bitwise_xor)
    equal = _on_bits(torch.eq)
    not_equal = _on_bits(torch.ne)
    less = _ordered(torch.lt)
    less_equal = _ordered(torch.le)
    greater = _ordered(torch.gt)
    greater_equal = _ordered(torch.ge)
    maximum = _ordered(torch.maximum, keyed=True)
    minimum = _ordered(torch.minimum, keyed=True)
    divide = elementwise(torch.true_divide)
    atan2 = elementwise(torch.atan2)
    floor_divide = elementwise.per_dtype(_floor_divide)
    remainder = elementwise.per_dtype(_remainder)
    pow = elementwise.per_dtype(_pow)
    bitwise_left_shift = elementwise.per_dtype(_left_shift)
    bitwise_right_shift = elementwise.per_dtype(_right_shift)
