"""Fallbacks of the element-wise family: the transcendental functions (see
:mod:`numerix.ops.fallbacks`).

Each is composed from the required core alone: ``exp``, ``log``, ``sin``, ``cos``,
``atan2``, ``sqrt`` and ``pow`` (the backend's), IEEE arithmetic, ``equal``/``less``,
``select``, ``as_type``, ``bitcast`` with ``bitwise_and``/``bitwise_or`` (the sign of a
float is read and set on its bits, so odd functions keep ``-0.0``), ``real``/``imag``/
``conj`` for complex inputs, and ``full`` for a constant. The functions call one another through
the private helpers below, never through an optional primitive, so no fallback here can
reach another one (or itself).

The compositions are the numerically sound ones: no cancellation near the zeros of the
functions, no overflow before the result overflows, special values (``±0``, ``±inf``,
NaN, the domain edges) as numpy gives them. float16 and bfloat16 compute in float32 and
round once, as ``binary`` does. A complex result is assembled from its two real parts
exactly (``_complex``), so signed zeros land on numpy's side of each branch cut, and
infinite and NaN parts give numpy's values (C99's special cases).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from numerix import dtypes
from numerix._tensor import Tensor
from numerix.dtypes import DType
from numerix.ops import elementwise as ew
from numerix.ops.fallbacks._common import (
    and_,
    copysign,
    fabs,
    filled_like,
    float_bits,
    from_bits,
    holds,
    is_half,
    or_,
    pattern,
    scalar,
)
from numerix.primitives import fallback_rule

_F32 = dtypes.float32
_F64 = dtypes.float64
_LN2 = math.log(2.0)
_SQRT_PI = math.sqrt(math.pi)
_INF = math.inf

Fn = Callable[[Tensor], Tensor]

# ---------------------------------------------------------------- helpers


def _run(fn: Fn, x: Tensor) -> Tensor:
    """``fn(x)``, float16 and bfloat16 computed in float32 and rounded once."""
    d = x.dtype
    if is_half(d):
        return ew.astype(fn(ew.astype(x, _F32)), d)
    return fn(x)


def _where(c: Tensor, a: Any, b: Any) -> Tensor:
    return ew.where(c, a, b)


def _neg(x: Tensor) -> Tensor:
    return ew.multiply(x, -1.0)  # exact for a real float, -0.0 and NaN included


def _lt(a: Any, b: Any) -> Tensor:
    return ew.less(a, b)


def _eq(a: Any, b: Any) -> Tensor:
    return ew.equal(a, b)


def _parts(z: Tensor) -> tuple[Tensor, Tensor]:
    return ew.real(z), ew.imag(z)


def _complex(re: Tensor, im: Tensor, d: DType) -> Tensor:
    """``re + i im`` in complex dtype ``d``, both parts exact, signed zeros included:
    ``(re, -0) - (+0, -im)``, where ``conj`` gives the ``-0`` and ``(-im, -0) * i`` is
    ``(+0, -im)`` to the bit (``-im * 0 + 0`` is ``+0``, ``-im + -0 * 0`` is ``-im``);
    ``re - 0`` is ``re`` and ``-0 - (-im)`` is ``im``. An infinite ``im`` (whose product
    with 0 would be NaN) or a NaN one subtracts a constant ``(+0, ∓inf)`` or ``(+0,
    nan)`` instead."""
    a = ew.conj(ew.astype(re, d))
    finite = _lt(fabs(im), _INF)
    e = ew.multiply(ew.conj(ew.astype(_neg(_where(finite, im, 0.0)), d)), 1j)
    k = _where(
        _lt(im, 0.0), filled_like(a, complex(0.0, _INF)), filled_like(a, complex(0.0, math.nan))
    )
    k = _where(_lt(0.0, im), filled_like(a, complex(0.0, -_INF)), k)
    return ew.subtract(a, _where(finite, e, k))


def _shifted(z: Tensor, by: float, sign: float = 1.0) -> Tensor:
    """``by + sign * z`` with the imaginary part's zero signed as the real ``by`` leaves it
    (``1 - (2 + 0i)`` is ``-1 - 0i``, on the right side of a branch cut; the complex
    subtraction would give ``+0``)."""
    x, y = _parts(z)
    if sign < 0:
        x, y = _neg(x), _neg(y)
    return _complex(ew.add(x, by), y, z.dtype)


def _wide(x: Tensor) -> DType:
    """float64 where ``x``'s backend holds it, else float32 (the compute dtype of a
    float16 or bfloat16 ``x``, and float32's own)."""
    return _F64 if holds(x.backend, _F64) else _F32


# ---------------------------------------------------------------- real compositions
# x is float32 or float64 in each


def _expm1_r(x: Tensor) -> Tensor:
    """Kahan's expm1: with ``u = exp(x)`` rounded, ``(u - 1) * (x / log(u))`` is within a
    few ulps (the rounding error of ``u`` cancels between ``u - 1`` and ``log(u)``); ``u ==
    1`` gives ``x`` (so ``-0.0`` stays), ``u - 1 == -1`` gives -1 and ``u == inf`` gives
    inf. The quotient ``x / log(u)`` is near 1, so nothing overflows before ``u``."""
    u = ew.exp(x)
    um1 = ew.subtract(u, 1.0)
    k = ew.multiply(um1, ew.divide(x, ew.log(u)))
    return _where(_eq(u, 1.0), x, _where(_eq(um1, -1.0), um1, _where(_eq(u, _INF), u, k)))


def _log1p_r(x: Tensor) -> Tensor:
    """Kahan's log1p: with ``u = 1 + x`` rounded (``u - 1`` is then exact),
    ``log(u) * (x / (u - 1))`` is within a few ulps; ``u == 1`` gives ``x`` and ``u ==
    inf`` gives inf. ``x = -1`` gives ``-inf``, ``x < -1`` NaN (``log`` of a negative)."""
    u = ew.add(x, 1.0)
    k = ew.multiply(ew.log(u), ew.divide(x, ew.subtract(u, 1.0)))
    return _where(_eq(u, 1.0), x, _where(_eq(u, _INF), u, k))


# past this |x| e**-|x| is below an ulp of e**|x| in float32 and float64 alike
_HYPERBOLIC_BIG = 20.0


def _half_exp(ax: Tensor) -> Tensor:
    """``exp(ax) / 2`` for large ``ax`` as ``(h / 2) * h`` with ``h = exp(ax / 2)``: finite
    up to the result's own overflow (``exp(ax)`` alone overflows first)."""
    h = ew.exp(ew.multiply(ax, 0.5))
    return ew.multiply(ew.multiply(h, 0.5), h)


def _sinh_r(x: Tensor) -> Tensor:
    """``sinh(|x|) = (t + t / (t + 1)) / 2`` with ``t = expm1(|x|)``: every term positive,
    so no cancellation near 0; ``exp(|x|) / 2`` past 20; the sign of ``x`` set on the
    bits."""
    ax = fabs(x)
    t = _expm1_r(ax)
    small = ew.multiply(ew.add(t, ew.divide(t, ew.add(t, 1.0))), 0.5)
    return copysign(_where(_lt(ax, _HYPERBOLIC_BIG), small, _half_exp(ax)), x)


def _cosh_r(x: Tensor) -> Tensor:
    """``(e + 1 / e) / 2`` with ``e = exp(|x|)`` (a sum of positive terms), ``exp(|x|) / 2``
    past 20."""
    ax = fabs(x)
    e = ew.exp(ax)
    small = ew.add(ew.multiply(e, 0.5), ew.divide(0.5, e))
    return _where(_lt(ax, _HYPERBOLIC_BIG), small, _half_exp(ax))


def _tanh_r(x: Tensor) -> Tensor:
    """``tanh(|x|) = -t / (t + 2)`` with ``t = expm1(-2|x|)`` in [-1, 0]: no overflow, no
    cancellation (``t + 2`` lies in [1, 2]); the sign of ``x`` set on the bits."""
    ax = fabs(x)
    t = _expm1_r(ew.multiply(ax, -2.0))
    return copysign(ew.divide(_neg(t), ew.add(t, 2.0)), x)


def _tan_r(x: Tensor) -> Tensor:
    return ew.divide(ew.sin(x), ew.cos(x))


def _one_minus_sq(x: Tensor) -> Tensor:
    """``1 - x**2`` as ``(1 - x) * (1 + x)``: ``1 - x`` is exact near 1, where ``x*x``
    would cancel."""
    return ew.multiply(ew.subtract(1.0, x), ew.add(x, 1.0))


def _asin_r(x: Tensor) -> Tensor:
    return ew.atan2(x, ew.sqrt(_one_minus_sq(x)))


def _acos_r(x: Tensor) -> Tensor:
    return ew.atan2(ew.sqrt(_one_minus_sq(x)), x)


def _atan_r(x: Tensor) -> Tensor:
    return ew.atan2(x, filled_like(x, 1.0))


# past this |x| (2**28), 1 + x*x is x*x to the last bit: asinh(x) = log(2|x|)
_INVERSE_BIG = float(2**28)


def _asinh_r(x: Tensor) -> Tensor:
    """``asinh(|x|) = log1p(|x| + x**2 / (1 + sqrt(1 + x**2)))`` (no cancellation, accurate
    near 0), ``log(|x|) + log(2)`` past ``2**28`` (where ``x**2`` could overflow); the
    sign of ``x`` set on the bits."""
    ax = fabs(x)
    a2 = ew.multiply(ax, ax)
    small = _log1p_r(ew.add(ax, ew.divide(a2, ew.add(ew.sqrt(ew.add(a2, 1.0)), 1.0))))
    big = ew.add(ew.log(ax), _LN2)
    return copysign(_where(_lt(ax, _INVERSE_BIG), small, big), x)


def _acosh_r(x: Tensor) -> Tensor:
    """``acosh(x) = log1p(t + sqrt(t * (t + 2)))`` with ``t = x - 1`` (exact near 1, where
    the plain ``log(x + sqrt(x*x - 1))`` cancels), ``log(x) + log(2)`` past ``2**28``;
    ``x < 1`` gives NaN through the root or the ``log1p``."""
    t = ew.subtract(x, 1.0)
    small = _log1p_r(ew.add(t, ew.sqrt(ew.multiply(t, ew.add(t, 2.0)))))
    big = ew.add(ew.log(x), _LN2)
    return _where(_lt(x, _INVERSE_BIG), small, big)


def _atanh_r(x: Tensor) -> Tensor:
    """``atanh(|x|) = log1p(2|x| / (1 - |x|)) / 2``: ``1 - |x|`` is exact near 1 and the
    ``log1p`` accurate near 0; ``|x| = 1`` gives inf, ``|x| > 1`` NaN."""
    ax = fabs(x)
    r = ew.multiply(_log1p_r(ew.divide(ew.multiply(ax, 2.0), ew.subtract(1.0, ax))), 0.5)
    return copysign(r, x)


def _cbrt_r(x: Tensor) -> Tensor:
    """``pow(|x|, 1/3)``, polished by one Newton step ``r - (r - |x| / r**2) / 3`` (written
    so that no ``r**3`` can overflow), in float64 where the backend holds it, rounded
    once; zeros, infinities and NaN pass through; the sign of ``x`` set on the bits."""
    w = ew.astype(x, _wide(x))
    aw = fabs(w)
    r = ew.pow(aw, 1.0 / 3.0)
    r = ew.subtract(r, ew.divide(ew.subtract(r, ew.divide(aw, ew.multiply(r, r))), 3.0))
    edge = or_(_eq(aw, 0.0), _eq(aw, _INF))
    return ew.astype(copysign(_where(edge, aw, r), w), x.dtype)


def _sigmoid_r(x: Tensor) -> Tensor:
    """``1 / (1 + e)`` for ``x >= 0`` and ``e / (1 + e)`` below, with ``e = exp(-|x|)`` in
    (0, 1]: the value numpy's ``1 / (1 + exp(-x))`` has, with no overflow for large
    negative ``x``."""
    e = ew.exp(_neg(fabs(x)))
    d = ew.add(e, 1.0)
    return _where(_lt(x, 0.0), ew.divide(e, d), ew.divide(1.0, d))


# ---------------------------------------------------------------- erf, erfc, erf_inv

# |x| below this: the series; above: the continued fraction (CPython's former erf)
_ERF_CUT = 1.5
_SERIES_TERMS = 24
_CF_TERMS = {4: 16, 8: 40}  # enough for float32 and float64 at |x| = 1.5
_ERFC_ZERO = 30.0  # erfc underflows to 0 below -900 in the exponent: every dtype


def _exp_minus_square(ax: Tensor) -> Tensor:
    """``exp(-ax**2)`` with ``ax**2`` split exactly: ``ax = h + l`` with ``h`` of half the
    mantissa's bits (its square is exact), ``exp(-h*h) * exp(-(ax - h) * (ax + h))``; the
    rounding of ``ax**2`` alone would cost ``ax**2`` ulps."""
    drop = 27 if ax.dtype.itemsize == 8 else 12
    mask = (1 << (8 * ax.dtype.itemsize)) - 1 - ((1 << drop) - 1)
    b = float_bits(ax)
    h = from_bits(and_(b, scalar(b, pattern(b.dtype, mask))), ax.dtype)
    lo = ew.multiply(ew.subtract(ax, h), ew.add(ax, h))
    return ew.multiply(ew.exp(_neg(ew.multiply(h, h))), ew.exp(_neg(lo)))


def _erf_series(x: Tensor) -> Tensor:
    """``erf(x) = 2x/sqrt(pi) * exp(-x**2) * sum (2x**2)**n / (1*3*...*(2n+1))`` for
    ``|x| < 1.5``: every term positive (no cancellation), 24 terms reach 1e-17."""
    x2 = ew.multiply(x, x)
    acc = ew.add(ew.divide(ew.multiply(x2, 2.0), _SERIES_TERMS + 0.5), 2.0)
    for k in range(_SERIES_TERMS - 1, 0, -1):
        acc = ew.add(ew.divide(ew.multiply(x2, acc), k + 0.5), 2.0)
    scale = ew.divide(ew.exp(_neg(x2)), _SQRT_PI)
    return ew.multiply(ew.multiply(acc, x), scale)


def _erfc_cf(ax: Tensor) -> Tensor:
    """``erfc(ax)`` for ``ax >= 1.5`` by the continued fraction ``x exp(-x**2) / sqrt(pi) /
    (x**2 + 1/2 - a1 / (x**2 + 5/2 - a2 / (x**2 + 9/2 - ...)))``, ``ak = k (2k - 1) / 2``,
    evaluated from its tail (no overflow); 40 terms reach 1e-15 at 1.5 in float64, 16
    the float32 rounding. ``ax`` is clamped to 30 (erfc is 0 there), NaN kept."""
    ax = _where(_lt(_ERFC_ZERO, ax), _ERFC_ZERO, ax)
    x2 = ew.multiply(ax, ax)
    n = _CF_TERMS[ax.dtype.itemsize]
    t = ew.add(x2, 0.5 + 2 * n)
    for k in range(n, 0, -1):
        t = ew.subtract(ew.add(x2, 0.5 + 2 * (k - 1)), ew.divide(k * (2 * k - 1) / 2, t))
    num = ew.divide(ew.multiply(ax, _exp_minus_square(ax)), _SQRT_PI)
    return ew.divide(num, t)


def _erf_and_erfc(x: Tensor) -> tuple[Tensor, Tensor]:
    """erf and erfc of a real float: the series below 1.5 in magnitude (erfc as ``1 -
    erf`` there, where erf <= 0.967), the continued fraction above (erf as ``±(1 -
    erfc)``, erfc of a negative ``x`` as ``2 - erfc(-x)``)."""
    ax = fabs(x)
    small = _lt(ax, _ERF_CUT)
    s = _erf_series(x)
    c = _erfc_cf(ax)
    erf = _where(small, s, copysign(ew.subtract(1.0, c), x))
    erfc = _where(small, ew.subtract(1.0, s), _where(_lt(x, 0.0), ew.subtract(2.0, c), c))
    return erf, erfc


# Giles' single-precision erf_inv ("Approximating the erfinv function", 2010)
_GILES_LOW = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
              0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)  # fmt: skip
_GILES_HIGH = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
               0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)  # fmt: skip


def _horner(coefficients: tuple[float, ...], v: Tensor) -> Tensor:
    p = filled_like(v, coefficients[0])
    for c in coefficients[1:]:
        p = ew.add(ew.multiply(p, v), c)
    return p


def _erf_inv_r(y: Tensor) -> Tensor:
    """Giles' polynomial in ``w = -log((1 - y)(1 + y))`` (a few 1e-7 off), then Newton
    steps on erf (one in float32, two in float64: quadratic from 1e-7), on ``|y|``
    with the residual taken from erfc where ``|y| > 1/2`` (``1 - |y|`` is exact there,
    so the tails keep their relative accuracy); ``±1`` gives ``±inf``, beyond NaN."""
    ay = fabs(y)
    inner = _lt(ay, 1.0)
    a = _where(inner, ay, 0.0)
    w = _neg(ew.log(_one_minus_sq(a)))
    low = _horner(_GILES_LOW, ew.subtract(w, 2.5))
    high = _horner(_GILES_HIGH, ew.subtract(ew.sqrt(w), 3.0))
    r = ew.multiply(_where(_lt(w, 5.0), low, high), a)
    one_minus = ew.subtract(1.0, a)
    tail = _lt(0.5, a)
    for _ in range(2 if y.dtype.itemsize == 8 else 1):
        erf, erfc = _erf_and_erfc(r)
        resid = _where(tail, ew.subtract(one_minus, erfc), ew.subtract(erf, a))
        slope = ew.multiply(ew.exp(_neg(ew.multiply(r, r))), 2.0 / _SQRT_PI)
        r = ew.subtract(r, ew.divide(resid, slope))
    edge = _where(_eq(ay, 1.0), copysign(filled_like(y, _INF), y), math.nan)
    return _where(inner, copysign(r, y), edge)


# ---------------------------------------------------------------- complex compositions
# each takes the parts (x, y) of z = x + iy and returns the parts of the result


def _tanh_parts(x: Tensor, y: Tensor) -> tuple[Tensor, Tensor]:
    """Kahan's tanh: ``t = tan(y)``, ``b = 1 + t**2``, ``s = sinh(x)``, ``rho = sqrt(1 +
    s**2)``: ``(b rho s + i t) / (1 + b s**2)``, accurate near the poles where the
    textbook ``(sinh 2x + i sin 2y) / (cosh 2x + cos 2y)`` cancels; past ``|x| = 22``
    ``±1 + 4i sin(y) cos(y) exp(-2|x|)``. Infinite and NaN parts as numpy's ctanh: ``x =
    ±inf`` gives ``±1 ± 0i``, a NaN ``x`` NaN (an imaginary zero kept), a non-finite
    ``y`` with finite ``x`` NaN (a real zero kept)."""
    ax = fabs(x)
    near = _lt(ax, 22.0)
    xs = _where(near, x, 0.0)
    t = _tan_r(y)
    b = ew.add(ew.multiply(t, t), 1.0)
    s = _sinh_r(xs)
    bs = ew.multiply(b, s)
    rho = ew.sqrt(ew.add(ew.multiply(s, s), 1.0))
    den = ew.add(ew.multiply(bs, s), 1.0)
    e = ew.exp(_neg(ax))
    sc = ew.multiply(ew.sin(y), ew.cos(y))
    one = copysign(filled_like(x, 1.0), x)
    re = _where(near, ew.divide(ew.multiply(bs, rho), den), one)
    im = _where(near, ew.divide(t, den), ew.multiply(ew.multiply(sc, 4.0), ew.multiply(e, e)))
    y_finite = _lt(fabs(y), _INF)
    re = _where(y_finite, re, _where(_eq(x, 0.0), x, math.nan))
    im = _where(y_finite, im, math.nan)
    x_inf = _eq(ax, _INF)
    re = _where(x_inf, one, re)
    im = _where(x_inf, copysign(filled_like(x, 0.0), _where(y_finite, sc, y)), im)
    x_num = _eq(x, x)
    re = _where(x_num, re, x)
    im = _where(x_num, im, _where(_eq(y, 0.0), y, math.nan))
    return re, im


def _atanh_parts(x: Tensor, y: Tensor) -> tuple[Tensor, Tensor]:
    """numpy's catanh: ``log1p(4|x| / ((1 - |x|)**2 + y**2)) / 4 + i atan2(2|y|, (1 -
    |x|)(1 + |x|) - y**2) / 2``, the signs of x and y set on the parts; an infinite part
    gives ``±0 ± i pi/2`` (a NaN ``y`` staying NaN), a zero ``x`` a zero real part."""
    ax, ay = fabs(x), fabs(y)
    am1 = ew.subtract(1.0, ax)
    y2 = ew.multiply(ay, ay)
    re = _log1p_r(ew.divide(ew.multiply(ax, 4.0), ew.add(ew.multiply(am1, am1), y2)))
    im = ew.atan2(ew.multiply(ay, 2.0), ew.subtract(_one_minus_sq(ax), y2))
    re, im = copysign(ew.multiply(re, 0.25), x), copysign(ew.multiply(im, 0.5), y)
    inf = or_(_eq(ax, _INF), _eq(ay, _INF))
    re = _where(or_(inf, _eq(x, 0.0)), copysign(filled_like(x, 0.0), x), re)
    im = _where(inf, _where(_eq(y, y), copysign(filled_like(y, math.pi / 2), y), y), im)
    return re, im


def _asin_parts(z: Tensor) -> tuple[Tensor, Tensor]:
    """Kahan's arcsin: with ``m = sqrt(1 - z)`` and ``p = sqrt(1 + z)`` (principal roots),
    ``atan2(x, Re(m p)) + i asinh(Im(conj(m) p))``: no cancellation, numpy's branch
    cuts."""
    x = ew.real(z)
    mr, mi = _parts(ew.sqrt(_shifted(z, 1.0, -1.0)))
    pr, pi = _parts(ew.sqrt(_shifted(z, 1.0)))
    re = ew.atan2(x, ew.subtract(ew.multiply(mr, pr), ew.multiply(mi, pi)))
    im = _asinh_r(ew.subtract(ew.multiply(mr, pi), ew.multiply(mi, pr)))
    return re, im


def _acos_parts(z: Tensor) -> tuple[Tensor, Tensor]:
    """Kahan's arccos: ``2 atan2(Re m, Re p) + i asinh(Im(conj(p) m))`` with ``m`` and ``p``
    as for arcsin."""
    mr, mi = _parts(ew.sqrt(_shifted(z, 1.0, -1.0)))
    pr, pi = _parts(ew.sqrt(_shifted(z, 1.0)))
    re = ew.multiply(ew.atan2(mr, pr), 2.0)
    im = _asinh_r(ew.subtract(ew.multiply(pr, mi), ew.multiply(pi, mr)))
    return re, im


def _acosh_parts(z: Tensor) -> tuple[Tensor, Tensor]:
    """Kahan's arccosh: with ``a = sqrt(z - 1)`` and ``b = sqrt(z + 1)``, ``asinh(Re(conj(a)
    b)) + 2i atan2(Im a, Re b)`` (real part >= 0, as numpy's)."""
    ar, ai = _parts(ew.sqrt(_shifted(z, -1.0)))
    br, bi = _parts(ew.sqrt(_shifted(z, 1.0)))
    re = _asinh_r(ew.add(ew.multiply(ar, br), ew.multiply(ai, bi)))
    im = ew.multiply(ew.atan2(ai, br), 2.0)
    return re, im


def _log1p_c(z: Tensor) -> Tensor:
    """Kahan's log1p on complex numbers: ``log(u) * (z / (u - 1))`` with ``u = 1 + z``
    (``u - 1`` exact near 0; ``log(u) / (u - 1)`` is smooth there), ``z`` where ``u == 1``;
    ``log(u)`` itself where a part of ``z`` is 1 or more in magnitude (nothing cancels
    there, and ``u = 0`` or an infinite ``z`` keep ``log``'s special values)."""
    x, y = _parts(z)
    u = _shifted(z, 1.0)
    k = ew.multiply(ew.log(u), ew.divide(z, ew.subtract(u, 1.0)))
    near = and_(_lt(fabs(x), 1.0), _lt(fabs(y), 1.0))
    return _where(_eq(u, 1.0), z, _where(near, k, ew.log(u)))


def _swap_in(fn: Callable[[Tensor, Tensor], tuple[Tensor, Tensor]]) -> Fn:
    """``-i f(iz)``: tan from tanh, atan from atanh (``iz = -y + ix``; ``-i (a + ib) = b -
    ia``)."""

    def g(z: Tensor) -> Tensor:
        x, y = _parts(z)
        a, b = fn(_neg(y), x)
        return _complex(b, _neg(a), z.dtype)

    return g


def _tanh_c(z: Tensor) -> Tensor:
    return _complex(*_tanh_parts(*_parts(z)), z.dtype)


def _atanh_c(z: Tensor) -> Tensor:
    return _complex(*_atanh_parts(*_parts(z)), z.dtype)


Parts = tuple[Any, Any]


def _edges(z: Tensor, parts: Parts, at_inf: Parts, at_nan: list[tuple[Any, Any, Any]]) -> Tensor:
    """The parts of an inverse trigonometric or hyperbolic function at the edges of the
    plane, as numpy gives them: ``at_inf`` where a part of ``z = x + iy`` is infinite
    (and none NaN), and where one is NaN the first of ``at_nan``'s ``(condition, re, im)``
    that holds, else NaN; ``parts`` elsewhere. Returns the complex result."""
    x, y = _parts(z)
    re, im = parts
    a_inf = or_(_eq(fabs(x), _INF), _eq(fabs(y), _INF))
    re, im = _where(a_inf, at_inf[0], re), _where(a_inf, at_inf[1], im)
    nre, nim = filled_like(x, math.nan), filled_like(x, math.nan)
    for cond, r, i in reversed(at_nan):
        nre, nim = _where(cond, r, nre), _where(cond, i, nim)
    numbers = and_(_eq(x, x), _eq(y, y))
    return _complex(_where(numbers, re, nre), _where(numbers, im, nim), z.dtype)


def _asin_c(z: Tensor) -> Tensor:
    x, y = _parts(z)
    ax, ay = fabs(x), fabs(y)
    at_inf = (copysign(ew.atan2(ax, ay), x), copysign(filled_like(y, _INF), y))
    at_nan = [
        (_eq(ay, _INF), math.nan, y),
        (_eq(ax, _INF), math.nan, _INF),
        (_eq(x, 0.0), x, math.nan),
    ]
    return _edges(z, _asin_parts(z), at_inf, at_nan)


def _acos_c(z: Tensor) -> Tensor:
    x, y = _parts(z)
    ax, ay = fabs(x), fabs(y)
    at_inf = (ew.atan2(ay, x), copysign(filled_like(y, _INF), _neg(y)))
    at_nan = [(_eq(ay, _INF), math.nan, _neg(y)), (_eq(ax, _INF), math.nan, -_INF),
              (_eq(x, 0.0), math.pi / 2, math.nan)]  # fmt: skip
    return _edges(z, _acos_parts(z), at_inf, at_nan)


def _asinh_c(z: Tensor) -> Tensor:
    """``asinh(z) = -i asin(iz)``."""
    x, y = _parts(z)
    ax, ay = fabs(x), fabs(y)
    p, q = _asin_parts(_complex(_neg(y), x, z.dtype))
    at_inf = (copysign(filled_like(x, _INF), x), copysign(ew.atan2(ay, ax), y))
    at_nan = [
        (_eq(ay, _INF), _INF, math.nan),
        (_eq(ax, _INF), x, math.nan),
        (_eq(y, 0.0), math.nan, y),
    ]
    return _edges(z, (q, _neg(p)), at_inf, at_nan)


def _acosh_c(z: Tensor) -> Tensor:
    x, y = _parts(z)
    ax, ay = fabs(x), fabs(y)
    at_inf = (filled_like(x, _INF), copysign(ew.atan2(ay, x), y))
    at_nan = [(_eq(ay, _INF), _INF, math.nan), (_eq(ax, _INF), _INF, math.nan),
              (_eq(x, 0.0), math.nan, math.pi / 2)]  # fmt: skip
    return _edges(z, _acosh_parts(z), at_inf, at_nan)


def _sinh_c(z: Tensor) -> Tensor:
    """``sinh x cos y + i cosh x sin y``; a real ``z`` keeps its imaginary zero (as numpy's
    csinh: no ``inf * 0`` once ``sinh x`` overflows), and a non-finite ``y`` gives ``x + i
    nan`` for a zero ``x``, ``inf + i nan`` for an infinite one, else NaN."""
    x, y = _parts(z)
    re = ew.multiply(_sinh_r(x), ew.cos(y))
    im = _where(_eq(y, 0.0), y, ew.multiply(_cosh_r(x), ew.sin(y)))
    y_finite = _lt(fabs(y), _INF)
    edge = _where(_eq(x, 0.0), x, _where(_eq(fabs(x), _INF), _INF, math.nan))
    re = _where(y_finite, re, edge)
    return _complex(re, _where(y_finite, im, math.nan), z.dtype)


def _cosh_c(z: Tensor) -> Tensor:
    """``cosh x cos y + i sinh x sin y``; a real ``z`` gives the imaginary zero of sign
    ``sign(x) sign(y)`` (as numpy's ccosh), and a non-finite ``y`` ``nan + 0i`` for a
    zero ``x``, ``inf + i nan`` for an infinite one, else NaN."""
    x, y = _parts(z)
    re = ew.multiply(_cosh_r(x), ew.cos(y))
    zero = ew.multiply(copysign(filled_like(x, 1.0), x), y)
    im = _where(_eq(y, 0.0), zero, ew.multiply(_sinh_r(x), ew.sin(y)))
    y_finite = _lt(fabs(y), _INF)
    re = _where(y_finite, re, _where(_eq(fabs(x), _INF), _INF, math.nan))
    im = _where(y_finite, im, _where(_eq(x, 0.0), 0.0, math.nan))
    return _complex(re, im, z.dtype)


def _expm1_c(z: Tensor) -> Tensor:
    """numpy's complex expm1: ``expm1(x) cos(y) - 2 sin(y/2)**2 + i exp(x) sin(y)``
    (the real part without the cancellation of ``exp(z) - 1`` near 0)."""
    x, y = _parts(z)
    h = ew.sin(ew.multiply(y, 0.5))
    re = ew.subtract(ew.multiply(_expm1_r(x), ew.cos(y)), ew.multiply(ew.multiply(h, h), 2.0))
    return _complex(re, ew.multiply(ew.exp(x), ew.sin(y)), z.dtype)


def _real_or_complex(real: Fn, complex_: Fn) -> Fn:
    def fn(x: Tensor) -> Tensor:
        return complex_(x) if x.dtype.kind == "c" else real(x)

    return fn


# ---------------------------------------------------------------- the fallbacks


@fallback_rule("sigmoid")
def sigmoid(out: Tensor, x: Tensor) -> Tensor:
    """``1 / (1 + exp(-x))`` without overflow (see ``_sigmoid_r``); uses exp, divide,
    less, select, bitcast, bitwise_and."""
    return _run(_sigmoid_r, x)


def _exp2_c(z: Tensor) -> Tensor:
    """numpy's complex exp2: ``exp(z log 2)``, the product taken part by part (a complex
    product with ``log 2 + 0i`` would make ``inf * 0`` NaN)."""
    x, y = _parts(z)
    return ew.exp(_complex(ew.multiply(x, _LN2), ew.multiply(y, _LN2), z.dtype))


@fallback_rule("exp2")
def exp2(out: Tensor, x: Tensor) -> Tensor:
    """``pow(2, x)``: the backend's pow, one rounding; complex ``exp(z log 2)``."""
    return _run(_real_or_complex(lambda v: ew.pow(2.0, v), _exp2_c), x)


@fallback_rule("expm1")
def expm1(out: Tensor, x: Tensor) -> Tensor:
    """Kahan's ``(u - 1) * x / log(u)``; complex as numpy's (see ``_expm1_c``)."""
    return _run(_real_or_complex(_expm1_r, _expm1_c), x)


@fallback_rule("log1p")
def log1p(out: Tensor, x: Tensor) -> Tensor:
    """Kahan's ``log(u) * x / (u - 1)``, real and complex."""
    return _run(_real_or_complex(_log1p_r, _log1p_c), x)


@fallback_rule("rsqrt")
def rsqrt(out: Tensor, x: Tensor) -> Tensor:
    """``1 / sqrt(x)``, as ``binary`` computes it (two roundings)."""
    return _run(lambda v: ew.divide(1.0, ew.sqrt(v)), x)


@fallback_rule("cbrt")
def cbrt(out: Tensor, x: Tensor) -> Tensor:
    """pow and one Newton step in float64 (see ``_cbrt_r``)."""
    return _cbrt_r(x)


@fallback_rule("tan")
def tan(out: Tensor, x: Tensor) -> Tensor:
    """``sin / cos``; complex as ``-i tanh(iz)`` (Kahan's tanh)."""
    return _run(_real_or_complex(_tan_r, _swap_in(_tanh_parts)), x)


@fallback_rule("asin")
def asin(out: Tensor, x: Tensor) -> Tensor:
    """``atan2(x, sqrt((1 - x)(1 + x)))``; complex by Kahan's formula."""
    return _run(_real_or_complex(_asin_r, _asin_c), x)


@fallback_rule("acos")
def acos(out: Tensor, x: Tensor) -> Tensor:
    """``atan2(sqrt((1 - x)(1 + x)), x)``; complex by Kahan's formula."""
    return _run(_real_or_complex(_acos_r, _acos_c), x)


@fallback_rule("atan")
def atan(out: Tensor, x: Tensor) -> Tensor:
    """``atan2(x, 1)``; complex as ``-i atanh(iz)``."""
    return _run(_real_or_complex(_atan_r, _swap_in(_atanh_parts)), x)


@fallback_rule("sinh")
def sinh(out: Tensor, x: Tensor) -> Tensor:
    """Through expm1 (see ``_sinh_r``); complex ``sinh x cos y + i cosh x sin y``."""
    return _run(_real_or_complex(_sinh_r, _sinh_c), x)


@fallback_rule("cosh")
def cosh(out: Tensor, x: Tensor) -> Tensor:
    """``(e + 1/e) / 2`` (see ``_cosh_r``); complex ``cosh x cos y + i sinh x sin y``."""
    return _run(_real_or_complex(_cosh_r, _cosh_c), x)


@fallback_rule("tanh")
def tanh(out: Tensor, x: Tensor) -> Tensor:
    """Through ``expm1(-2|x|)`` (see ``_tanh_r``); complex by Kahan's formula."""
    return _run(_real_or_complex(_tanh_r, _tanh_c), x)


@fallback_rule("asinh")
def asinh(out: Tensor, x: Tensor) -> Tensor:
    """Through log1p (see ``_asinh_r``); complex as ``-i asin(iz)``."""
    return _run(_real_or_complex(_asinh_r, _asinh_c), x)


@fallback_rule("acosh")
def acosh(out: Tensor, x: Tensor) -> Tensor:
    """Through log1p (see ``_acosh_r``); complex by Kahan's formula."""
    return _run(_real_or_complex(_acosh_r, _acosh_c), x)


@fallback_rule("atanh")
def atanh(out: Tensor, x: Tensor) -> Tensor:
    """``log1p(2|x| / (1 - |x|)) / 2``; complex as numpy's catanh."""
    return _run(_real_or_complex(_atanh_r, _atanh_c), x)


@fallback_rule("erf")
def erf(out: Tensor, x: Tensor) -> Tensor:
    """Series below 1.5, continued fraction above (see ``_erf_and_erfc``)."""
    return _run(lambda v: _erf_and_erfc(v)[0], x)


@fallback_rule("erfc")
def erfc(out: Tensor, x: Tensor) -> Tensor:
    """``1 - erf`` below 1.5, continued fraction above (see ``_erf_and_erfc``), in float64
    where the backend holds it and rounded once: ``1 - erf`` loses up to 5 bits near 1.5
    (40 float64 ulps, nothing once rounded to float32)."""
    w = ew.astype(x, _wide(x))
    return ew.astype(_erf_and_erfc(w)[1], x.dtype)


@fallback_rule("erf_inv")
def erf_inv(out: Tensor, x: Tensor) -> Tensor:
    """Giles' polynomial refined by Newton steps on erf (see ``_erf_inv_r``)."""
    return _run(_erf_inv_r, x)
