"""Fallbacks of the element-wise family: the exact ones (signs, rounding, classification,
order, bits) (see :mod:`numerix.ops.fallbacks`).

Each is bit-exact with numpy (``binary``), signed zeros, infinities and unsigned
wrap-around included; only the complex magnitude (and the complex sign, which divides
by it) rounds. They are written with required primitives alone (arithmetic,
``equal``, ``less``, ``select``, ``bitwise_and``/``bitwise_or``, ``bitcast``,
``as_type``, ``pow``, ``sqrt``, ``real``/``imag``/``conj``, ``from_numpy``) and with
``full`` for a constant of an input's shape, and through the private helpers below
and :mod:`numerix.ops.fallbacks._common`'s rather than through one another's primitives: no fallback here reaches another
optional primitive, so none can cycle, and the transcendental fallbacks may build on
any of them.

The sign of a float is read and set on its bits (``bitcast`` to the signed integer of
its width), which is what makes ``negative``, ``abs`` and ``round`` exact at ``-0.0``
and on NaN. Shifts multiply or floor-divide by ``pow(2, k)`` (wrapping: ``2**63`` in
int64 is its sign bit, as the multiplier it stands for), with the out-of-range amounts
masked as ``binary`` masks them.
"""

from __future__ import annotations

import numpy as np

from numerix import dtypes
from numerix._tensor import Tensor
from numerix.dtypes import DType
from numerix.ops.fallbacks._common import (
    and_,
    copysign,
    fabs,
    filled_like,
    float_bits,
    from_bits,
    nan_mask,
    not_,
    or_,
    pattern,
    scalar,
)
from numerix.primitives import elementwise as ep
from numerix.primitives import fallback_rule

# ---------------------------------------------------------------- helpers (required core only)


def _isfinite(x: Tensor) -> Tensor:
    # x - x is exactly 0 for a finite x (each part of a complex), NaN for inf and NaN
    if x.dtype.kind in "fc":
        return ep.equal.bind(ep.subtract.bind(x, x), scalar(x, 0))
    return filled_like(x, True, dtypes.bool_)


def _isinf(x: Tensor) -> Tensor:
    if x.dtype.kind == "c":
        return or_(_isinf(ep.real.bind(x)), _isinf(ep.imag.bind(x)))
    if x.dtype.kind == "f":
        return and_(ep.equal.bind(x, x), not_(_isfinite(x)))
    return filled_like(x, False, dtypes.bool_)


def _negative(x: Tensor) -> Tensor:
    d = x.dtype
    if d.kind in "iu":
        return ep.subtract.bind(scalar(x, 0), x)  # wraps: -INT_MIN is INT_MIN, unsigned mod 2**n
    if d.kind == "f":
        # the sign bit flipped (adding the top bit carries nowhere): -0.0, NaN's sign too
        b = float_bits(x)
        return from_bits(ep.add.bind(b, scalar(b, pattern(b.dtype, 1 << (d.bits - 1)))), d)
    # complex: (-0 - re) + (-0 - im)j, each part exact, its zero's sign flipped
    return ep.subtract.bind(scalar(x, complex(-0.0, -0.0)), x)


def _cabs(x: Tensor) -> Tensor:
    """numpy's complex magnitude: inf where either part is inf (even beside NaN), NaN
    where a part is NaN, else the hypotenuse. complex64 squares its parts in float64
    (exact) and rounds the root once; complex128 scales by the larger part, m *
    sqrt(1 + (n/m)**2), a few ulps (the kit's tolerance is 1e-12)."""
    re, im = fabs(ep.real.bind(x)), fabs(ep.imag.bind(x))
    d = re.dtype
    if d is dtypes.float32:
        a, b = (ep.as_type.bind(t, dtype=dtypes.float64) for t in (re, im))
        r = ep.sqrt.bind(ep.add.bind(ep.multiply.bind(a, a), ep.multiply.bind(b, b)))
        r = ep.as_type.bind(r, dtype=d)
    else:
        swap = ep.less.bind(re, im)  # NaN in either part: no swap, NaN reaches r
        m, n = ep.select.bind(swap, im, re), ep.select.bind(swap, re, im)
        zero = ep.equal.bind(m, scalar(m, 0))
        q = ep.divide.bind(n, ep.select.bind(zero, scalar(m, 1), m))
        s = ep.sqrt.bind(ep.add.bind(scalar(q, 1), ep.multiply.bind(q, q)))
        r = ep.select.bind(zero, n, ep.multiply.bind(m, s))  # at m == 0, n is 0 or NaN
    return ep.select.bind(or_(_isinf(re), _isinf(im)), scalar(r, np.inf), r)


def _floor(x: Tensor) -> Tensor:
    """x - remainder(x, 1): remainder is exact (fmod, plus 1 for a negative x, whose
    rounding the subtraction undoes), and the difference an integer, exact; -0.0 keeps
    its sign (-0.0 - +0.0). inf and NaN (remainder NaN) are their own floor."""
    if x.dtype.kind in "iu":
        return x
    r = ep.remainder.bind(x, scalar(x, 1))
    return ep.select.bind(ep.equal.bind(r, r), ep.subtract.bind(x, r), x)


def _round_real(x: Tensor) -> Tensor:
    """Half to even on |x| (|x| - floor(|x|) is exact there), the sign put back on the
    bits: -0.4 rounds to -0.0, as in numpy."""
    if x.dtype.kind in "iu":
        return x
    a = fabs(x)
    f = _floor(a)
    frac = ep.subtract.bind(a, f)  # NaN for inf: no rounding up, f is inf
    half = scalar(a, 0.5)
    odd = ep.equal.bind(ep.remainder.bind(f, scalar(f, 2)), scalar(f, 1))
    up = or_(ep.less.bind(half, frac), and_(ep.equal.bind(frac, half), odd))
    return copysign(ep.select.bind(up, ep.add.bind(f, scalar(f, 1)), f), x)


def _round_complex(z: Tensor) -> Tensor:
    """Each part rounded: z - d with d = z - round(z) built exactly (finite parts; 0 for
    inf and NaN), and each part's zero given the sign of the part it came from."""
    re, im = ep.real.bind(z), ep.imag.bind(z)

    def offset(p: Tensor) -> Tensor:  # p - round(p), exact; never -0.0
        return ep.select.bind(_isfinite(p), ep.subtract.bind(p, _round_real(p)), scalar(p, 0))

    c = z.dtype
    # dim * 1j is (dim*0 - 0) + dim j, exact for a finite dim; the sum's zeros are +0
    d = ep.add.bind(
        ep.as_type.bind(offset(re), dtype=c),
        ep.multiply.bind(ep.as_type.bind(offset(im), dtype=c), scalar(z, 1j)),
    )
    conj = ep.conj.bind
    # per part, p - d leaves a zero result +0 (and -0.0 - 0 is -0.0); -((-p) + d) leaves it
    # -0: the first where the part is >= 0 (or -0.0), the second where it is < 0
    aa = ep.subtract.bind(z, d)
    bb = _negative(ep.add.bind(_negative(z), d))
    ab = conj(ep.subtract.bind(conj(z), conj(d)))
    ba = conj(_negative(ep.add.bind(_negative(conj(z)), conj(d))))
    neg_re, neg_im = ep.less.bind(re, scalar(re, 0)), ep.less.bind(im, scalar(im, 0))
    return ep.select.bind(neg_re, ep.select.bind(neg_im, bb, ba), ep.select.bind(neg_im, ab, aa))


def _pow2(x: Tensor, k: Tensor) -> Tensor:
    """2**k in ``x``'s dtype, k in [0, bits): wraps to the sign bit at bits - 1."""
    return ep.pow.bind(scalar(x, 2), k)


def _shr(x: Tensor, k: int) -> Tensor:
    """x >> k (arithmetic for signed; k below bits - 1 for signed) for a fixed k."""
    return ep.floor_divide.bind(x, scalar(x, 1 << k))


def _repeat(d: DType, byte: int) -> int:
    return pattern(d, int.from_bytes(bytes([byte]) * (d.bits // 8), "little"))


# ---------------------------------------------------------------- signs and magnitudes


@fallback_rule("negative")
def negative(out: Tensor, x: Tensor) -> Tensor:
    """-x: integers 0 - x (wrapping), floats the sign bit flipped (bitcast, add), complex
    (-0 - 0j) - x part by part (subtract); exact."""
    return _negative(x)


@fallback_rule("abs")
def abs(out: Tensor, x: Tensor) -> Tensor:
    """|x|: unsigned unchanged, signed select(x < 0, 0 - x, x) (INT_MIN wraps to itself),
    floats the sign bit cleared (bitcast, bitwise_and), complex numpy's hypot (real,
    imag, sqrt; as_type to float64 for complex64)."""
    d = x.dtype
    if d.kind == "u":
        return x
    if d.kind == "i":
        return ep.select.bind(ep.less.bind(x, scalar(x, 0)), _negative(x), x)
    if d.kind == "f":
        return fabs(x)
    return _cabs(x)


@fallback_rule("sign")
def sign(out: Tensor, x: Tensor) -> Tensor:
    """-1, 0 or 1 by less against 0 (select); a float's NaN stays and its zeros give +0.0
    (numpy's sign of -0.0, bfloat16's included); complex x / |x| as ``binary`` divides it
    (0 at 0), with |x| as in ``abs``."""
    d = x.dtype
    if d.kind == "c":
        m = _cabs(x)
        zero = ep.equal.bind(m, scalar(m, 0))
        safe = ep.as_type.bind(ep.select.bind(zero, scalar(m, 1), m), dtype=d)
        return ep.select.bind(zero, scalar(x, 0), ep.divide.bind(x, safe))
    z = scalar(x, 0)
    rest: Tensor = z
    if d.kind == "f":
        rest = ep.select.bind(ep.equal.bind(x, x), z, x)
    neg = ep.select.bind(ep.less.bind(x, z), scalar(x, -1) if d.kind != "u" else z, rest)
    return ep.select.bind(ep.less.bind(z, x), scalar(x, 1), neg)


# ---------------------------------------------------------------- rounding


@fallback_rule("floor")
def floor(out: Tensor, x: Tensor) -> Tensor:
    """x - remainder(x, 1) (remainder, subtract, equal, select); integers unchanged. Exact:
    see :func:`_floor`."""
    return _floor(x)


@fallback_rule("ceil")
def ceil(out: Tensor, x: Tensor) -> Tensor:
    """-floor(-x), both negations exact (bitcast, add); ceil(-0.5) is -0.0 as in numpy."""
    if x.dtype.kind in "iu":
        return x
    return _negative(_floor(_negative(x)))


@fallback_rule("round")
def round(out: Tensor, x: Tensor) -> Tensor:
    """Half to even, from floor on |x| and the parity of the floor (remainder by 2), the
    sign put back on the bits; complex rounds each part (real, imag, conj, as_type);
    integers unchanged. Exact."""
    if x.dtype.kind == "c":
        return _round_complex(x)
    return _round_real(x)


# ---------------------------------------------------------------- classification


@fallback_rule("isnan")
def isnan(out: Tensor, x: Tensor) -> Tensor:
    """not (x == x) (equal); false for bool and integers (full)."""
    return nan_mask(x)


@fallback_rule("isinf")
def isinf(out: Tensor, x: Tensor) -> Tensor:
    """x == x and x - x != 0 (equal, subtract); complex: either part (real, imag)."""
    return _isinf(x)


@fallback_rule("isfinite")
def isfinite(out: Tensor, x: Tensor) -> Tensor:
    """x - x == 0 (subtract, equal): 0 exactly for finite values, NaN for inf and NaN."""
    return _isfinite(x)


# ---------------------------------------------------------------- order and comparison


def _max_min(x1: Tensor, x2: Tensor, take_first_below: bool) -> Tensor:
    if x1.dtype.kind in "iu":
        lt = ep.less.bind(x2, x1) if take_first_below else ep.less.bind(x1, x2)
        return ep.select.bind(lt, x2, x1)
    if x1.dtype is dtypes.float16:
        # numpy's float16 loop keeps x1 on ties (max(-0.0, 0.0) is -0.0) and NaN of either
        lt = ep.less.bind(x2, x1) if take_first_below else ep.less.bind(x1, x2)
        return ep.select.bind(or_(lt, nan_mask(x2)), x2, x1)
    # the other float loops keep x2 on ties (max(-0.0, 0.0) is 0.0) and NaN of either
    lt = ep.less.bind(x1, x2) if take_first_below else ep.less.bind(x2, x1)
    return ep.select.bind(or_(lt, nan_mask(x1)), x1, x2)


@fallback_rule("maximum")
def maximum(out: Tensor, x1: Tensor, x2: Tensor) -> Tensor:
    """The larger by less (select), NaN propagating, ties (-0.0, 0.0) resolved as numpy's
    loop of the dtype resolves them."""
    return _max_min(x1, x2, take_first_below=False)


@fallback_rule("minimum")
def minimum(out: Tensor, x1: Tensor, x2: Tensor) -> Tensor:
    """The smaller by less (select), NaN propagating, ties as numpy."""
    return _max_min(x1, x2, take_first_below=True)


@fallback_rule("not_equal")
def not_equal(out: Tensor, x1: Tensor, x2: Tensor) -> Tensor:
    """not (x1 == x2) (equal): true beside NaN, as numpy."""
    return not_(ep.equal.bind(x1, x2))


@fallback_rule("less_equal")
def less_equal(out: Tensor, x1: Tensor, x2: Tensor) -> Tensor:
    """x1 < x2 or x1 == x2 (less, equal, bitwise_or): false beside NaN."""
    return or_(ep.less.bind(x1, x2), ep.equal.bind(x1, x2))


@fallback_rule("greater")
def greater(out: Tensor, x1: Tensor, x2: Tensor) -> Tensor:
    """x2 < x1 (less)."""
    return ep.less.bind(x2, x1)


@fallback_rule("greater_equal")
def greater_equal(out: Tensor, x1: Tensor, x2: Tensor) -> Tensor:
    """x2 < x1 or x1 == x2 (less, equal, bitwise_or): false beside NaN."""
    return or_(ep.less.bind(x2, x1), ep.equal.bind(x1, x2))


# ---------------------------------------------------------------- bits


@fallback_rule("bitwise_invert")
def bitwise_invert(out: Tensor, x: Tensor) -> Tensor:
    """~x: -1 - x for signed, max - x for unsigned (subtract, no borrow), x == False for
    bool (equal)."""
    d = x.dtype
    if d.kind == "b":
        return not_(x)
    top = -1 if d.kind == "i" else (1 << d.bits) - 1
    return ep.subtract.bind(scalar(x, top), x)


@fallback_rule("bitwise_xor")
def bitwise_xor(out: Tensor, x1: Tensor, x2: Tensor) -> Tensor:
    """(x1 | x2) - (x1 & x2) for integers (the and's bits lie within the or's: no borrow);
    x1 != x2 for bool (equal)."""
    if x1.dtype.kind == "b":
        return not_(ep.equal.bind(x1, x2))
    return ep.subtract.bind(or_(x1, x2), and_(x1, x2))


def _shift_amount(x2: Tensor, top: int) -> tuple[Tensor, Tensor]:
    """(0 <= x2 < top, x2 where so else 0)."""
    ok = ep.less.bind(x2, scalar(x2, top))
    if x2.dtype.kind == "i":
        ok = and_(ok, not_(ep.less.bind(x2, scalar(x2, 0))))
    return ok, ep.select.bind(ok, x2, scalar(x2, 0))


@fallback_rule("bitwise_left_shift")
def bitwise_left_shift(out: Tensor, x1: Tensor, x2: Tensor) -> Tensor:
    """x1 * 2**x2 (pow, multiply, wrapping) for 0 <= x2 < bits, else 0 (less, select)."""
    ok, k = _shift_amount(x2, x1.dtype.bits)
    return ep.select.bind(ok, ep.multiply.bind(x1, _pow2(x1, k)), scalar(x1, 0))


@fallback_rule("bitwise_right_shift")
def bitwise_right_shift(out: Tensor, x1: Tensor, x2: Tensor) -> Tensor:
    """floor_divide(x1, 2**x2) (pow): arithmetic for signed, below bits - 1 (2**(bits-1)
    is out of a signed range); the rest, and every amount out of range, is the sign fill
    (-1 for a negative signed x1, else 0)."""
    d = x1.dtype
    ok, k = _shift_amount(x2, d.bits - (d.kind == "i"))
    fill: Tensor = scalar(x1, 0)
    if d.kind == "i":
        fill = ep.select.bind(ep.less.bind(x1, fill), scalar(x1, -1), fill)
    return ep.select.bind(ok, ep.floor_divide.bind(x1, _pow2(x1, k)), fill)


@fallback_rule("population_count")
def population_count(out: Tensor, x: Tensor) -> Tensor:
    """The classic parallel count on the bit pattern: pairs, nibbles, bytes, then the bytes
    summed into the top one by a multiply (subtract, bitwise_and, add, multiply, and
    floor_divide by powers of two as shifts; each shifted value is masked, so a signed
    x's arithmetic shift counts as a logical one)."""
    d = x.dtype
    m1, m2, m4 = _repeat(d, 0x55), _repeat(d, 0x33), _repeat(d, 0x0F)
    v = ep.subtract.bind(x, and_(_shr(x, 1), scalar(x, m1)))
    v = ep.add.bind(and_(v, scalar(v, m2)), and_(_shr(v, 2), scalar(v, m2)))
    v = and_(ep.add.bind(v, _shr(v, 4)), scalar(v, m4))  # each byte <= 8: v >= 0
    if d.bits > 8:
        v = _shr(ep.multiply.bind(v, scalar(v, _repeat(d, 0x01))), d.bits - 8)
    return v


@fallback_rule("count_leading_zeros")
def count_leading_zeros(out: Tensor, x: Tensor) -> Tensor:
    """A binary search for the highest set bit: where the top s bits are clear (bitwise_and
    with a mask, equal), count s and shift them out (multiply by 2**s), for s = bits/2 ...
    1; then the top bit (select, add). 0 counts the bit width."""
    d = x.dtype
    n = filled_like(x, 0, d)
    u = x
    s = d.bits // 2
    while s:
        mask = pattern(d, ((1 << s) - 1) << (d.bits - s))
        clear = ep.equal.bind(and_(u, scalar(u, mask)), scalar(u, 0))
        n = ep.add.bind(n, ep.select.bind(clear, scalar(n, s), scalar(n, 0)))
        u = ep.select.bind(clear, ep.multiply.bind(u, scalar(u, 1 << s)), u)
        s //= 2
    top = ep.equal.bind(and_(u, scalar(u, pattern(d, 1 << (d.bits - 1)))), scalar(u, 0))
    return ep.add.bind(n, ep.select.bind(top, scalar(n, 1), scalar(n, 0)))
