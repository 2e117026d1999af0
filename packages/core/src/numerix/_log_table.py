"""The table of the C library's float64 ``log`` (glibc 2.28 and later), regenerated.

glibc computes ``log(x)`` for ``x = 2**k * z`` (``z`` in ``[0x1.6p-1, 0x1.6p0)``, split
into 128 subintervals by the top bits of its mantissa) as
``k * ln2 + log(c) + log1p(z / c - 1)``, with ``1 / c`` and ``log(c)`` from a table and
``log1p`` a polynomial in ``r = z * (1 / c) - 1``. Its documentation gives the
construction of the table: ``c`` is near the centre of its subinterval, chosen among
the ``2**29`` float64 ``1 / c`` on either side of ``1 / centre`` such that

1. ``log(c)`` rounded to float64 is a multiple of ``2**-43`` (so ``0x1.8p9 + log(c)``,
   and ``k * ln2_hi + log(c)``, round exactly),
2. the rounding error of ``z - c_hi - c_lo`` (``c`` as a sum of two float64) is below
   ``2**-66`` relative to ``c``, for every ``z`` of the subinterval, and
3. the rounding error of ``log(c)`` is the smallest.

:func:`generate` does that search; :data:`TABLE` is its output, written here by
``python -m numerix._log_table``. Condition 1 means ``-log(1 / c)`` lies on the grid
``j * 2**-43``: each grid point ``g`` has one candidate, the float64 nearest to
``exp(-g)``; the search walks the grid (about 1.4 million points per entry, in blocks
where ``exp(-g)`` is a quadratic in the step, its fractional part in 64-bit fixed point)
and keeps the points within ``2**-12`` ulp of a float64, whose errors are then computed
exactly. ``numerix.random`` uses the table (``_log_c64``) so that ``normal`` in float64
rounds as XLA's CPU log does, which is glibc's: 0 of 1.5 million inputs differ.
"""

from __future__ import annotations

import decimal
import math
import struct
from fractions import Fraction

import numpy as np

__all__ = ["TABLE", "LN2_HI", "LN2_LO", "generate", "entry"]

BITS = 7  # 128 subintervals
OFF = 0x3FE6000000000000  # the bits of 0x1.6p-1, the bottom of z's range
GRID = 43  # log(c) on multiples of 2**-43
# ln(2) = LN2_HI + LN2_LO: LN2_HI rounded to a multiple of 2**-42, so that k * LN2_HI
# is exact for |k| < 2**11 and k * LN2_HI + log(c) too; LN2_LO the rest, rounded
_LN2 = decimal.Context(prec=60).ln(2)
LN2_HI = float(round(_LN2 * 2**42)) / 2**42
LN2_LO = float(_LN2 - decimal.Decimal(LN2_HI))


def _double(bits: int) -> float:
    return float(struct.unpack("<d", struct.pack("<Q", bits))[0])


def _z_error(invc: float, lo: float, last: float) -> Fraction:
    """The largest rounding error of ``(z - c_hi) - c_lo`` over ``z`` in ``[lo, last]``:
    ``z - c_hi`` is exact, so the error is ``c_lo``'s distance to the multiples of the
    ulp of the largest result, reached at an end of the subinterval."""
    c = 1 / Fraction(invc)
    chi = float(c)
    clo = Fraction(float(c - Fraction(chi)))
    top = max(abs(Fraction(lo) - chi - clo), abs(Fraction(last) - chi - clo))
    ulp = Fraction(2) ** (math.floor(math.log2(top)) - 52)
    q = clo / ulp
    return abs(q - round(q)) * ulp


def entry(i: int, *, half: int = 2**29, block: int = 2**14) -> tuple[float, float]:
    """``(1 / c, log(c))`` of subinterval ``i`` (0 to 127), by the construction above."""
    ctx = decimal.Context(prec=60)
    with decimal.localcontext(ctx):  # every Decimal operation at 60 digits
        return _entry(i, ctx, half, block)


def _entry(i: int, ctx: decimal.Context, half: int, block: int) -> tuple[float, float]:
    dec = decimal.Decimal
    lo, hi = _double(OFF + (i << (52 - BITS))), _double(OFF + ((i + 1) << (52 - BITS)))
    last = math.nextafter(hi, 0.0)
    x0 = 1.0 / ((lo + hi) / 2)
    ulp_exp = -52 if x0 >= 1.0 else -53
    a, b = x0 - half * 2.0**ulp_exp, x0 + half * 2.0**ulp_exp
    first = int(-ctx.ln(dec(b)) * 2**GRID) - 1
    stop = int(-ctx.ln(dec(a)) * 2**GRID) + 2
    step = dec(2) ** -GRID
    to_ulps = dec(2) ** -ulp_exp
    near = np.uint64(2**52)  # 2**-12 ulp, in units of 2**-64
    grid: list[int] = []
    for j0 in range(first, stop, block):
        # exp(-(j0 + t) * step) in ulps of 1/c, to second order in t (the third order
        # is below 2**-38 ulp over a block), as fractions of one in 64-bit fixed point
        e0 = ctx.multiply(ctx.exp(-dec(j0) * step), to_ulps)
        terms = []
        for v in (e0, -e0 * step, e0 * step * step / 2):
            v = ctx.plus(v)
            frac = v - v.to_integral_value(rounding=decimal.ROUND_FLOOR)
            terms.append(np.uint64(int((frac * 2**64).to_integral_value()) % 2**64))
        t = np.arange(min(block, stop - j0), dtype=np.uint64)
        with np.errstate(over="ignore"):
            v = terms[0] + terms[1] * t + terms[2] * (t * t)
        d = np.minimum(v, np.uint64(0) - v)
        grid.extend(j0 + int(k) for k in np.nonzero(d < near)[0])
    scored = []
    for j in grid:
        g = dec(j) * step
        invc = float(ctx.exp(-g))
        if a <= invc <= b:
            scored.append((abs(ctx.ln(dec(invc)) + g), j, invc))
    for _, j, invc in sorted(scored):
        if _z_error(invc, lo, last) * Fraction(invc) < Fraction(2) ** -66:
            return invc, j * 2.0**-GRID
    raise ValueError(f"no candidate for subinterval {i}")  # pragma: no cover


def generate() -> list[tuple[float, float]]:
    """The whole table (a few seconds)."""
    return [entry(i) for i in range(2**BITS)]


# fmt: off
_HEX = (
    ("0x1.734f0c3e0de9fp+0", "-0x1.7cc7f79e69000p-2"),
    ("0x1.713786a2ce91fp+0", "-0x1.76feec20d0000p-2"),
    ("0x1.6f26008fab5a0p+0", "-0x1.713e31351e000p-2"),
    ("0x1.6d1a61f138c7dp+0", "-0x1.6b85b38287800p-2"),
    ("0x1.6b1490bc5b4d1p+0", "-0x1.65d5590807800p-2"),
    ("0x1.69147332f0cbap+0", "-0x1.602d076180000p-2"),
    ("0x1.6719f18224223p+0", "-0x1.5a8ca86909000p-2"),
    ("0x1.6524f99a51ed9p+0", "-0x1.54f4356035000p-2"),
    ("0x1.63356aa8f24c4p+0", "-0x1.4f637c36b4000p-2"),
    ("0x1.614b36b9ddc14p+0", "-0x1.49da7fda85000p-2"),
    ("0x1.5f66452c65c4cp+0", "-0x1.445923989a800p-2"),
    ("0x1.5d867b5912c4fp+0", "-0x1.3edf439b0b800p-2"),
    ("0x1.5babccb5b90dep+0", "-0x1.396ce448f7000p-2"),
    ("0x1.59d61f2d91a78p+0", "-0x1.3401e17bda000p-2"),
    ("0x1.5805612465687p+0", "-0x1.2e9e2ef468000p-2"),
    ("0x1.56397cee76bd3p+0", "-0x1.2941b3830e000p-2"),
    ("0x1.54725e2a77f93p+0", "-0x1.23ec58cda8800p-2"),
    ("0x1.52aff42064583p+0", "-0x1.1e9e129279000p-2"),
    ("0x1.50f22dbb2bddfp+0", "-0x1.1956d2b48f800p-2"),
    ("0x1.4f38f4734ded7p+0", "-0x1.141679ab9f800p-2"),
    ("0x1.4d843cfde2840p+0", "-0x1.0edd094ef9800p-2"),
    ("0x1.4bd3ec078a3c8p+0", "-0x1.09aa518db1000p-2"),
    ("0x1.4a27fc3e0258ap+0", "-0x1.047e65263b800p-2"),
    ("0x1.4880524d48434p+0", "-0x1.feb224586f000p-3"),
    ("0x1.46dce1b192d0bp+0", "-0x1.f474a7517b000p-3"),
    ("0x1.453d9d3391854p+0", "-0x1.ea4443d103000p-3"),
    ("0x1.43a2744b4845ap+0", "-0x1.e020d44e9b000p-3"),
    ("0x1.420b54115f8fbp+0", "-0x1.d60a22977f000p-3"),
    ("0x1.40782da3ef4b1p+0", "-0x1.cc00104959000p-3"),
    ("0x1.3ee8f5d57fe8fp+0", "-0x1.c202956891000p-3"),
    ("0x1.3d5d9a00b4ce9p+0", "-0x1.b81178d811000p-3"),
    ("0x1.3bd60c010c12bp+0", "-0x1.ae2c9ccd3d000p-3"),
    ("0x1.3a5242b75dab8p+0", "-0x1.a45402e129000p-3"),
    ("0x1.38d22cd9fd002p+0", "-0x1.9a877681df000p-3"),
    ("0x1.3755bc5847a1cp+0", "-0x1.90c6d69483000p-3"),
    ("0x1.35dce49ad36e2p+0", "-0x1.87120a645c000p-3"),
    ("0x1.34679984dd440p+0", "-0x1.7d68fb4143000p-3"),
    ("0x1.32f5cceffcb24p+0", "-0x1.73cb83c627000p-3"),
    ("0x1.3187775a10d49p+0", "-0x1.6a39a9b376000p-3"),
    ("0x1.301c8373e3990p+0", "-0x1.60b3154b7a000p-3"),
    ("0x1.2eb4ebb95f841p+0", "-0x1.5737d76243000p-3"),
    ("0x1.2d50a0219a9d1p+0", "-0x1.4dc7b8fc23000p-3"),
    ("0x1.2bef9a8b7fd2ap+0", "-0x1.4462c51d20000p-3"),
    ("0x1.2a91c7a0c1babp+0", "-0x1.3b08abc830000p-3"),
    ("0x1.293726014b530p+0", "-0x1.31b996b490000p-3"),
    ("0x1.27dfa5757a1f5p+0", "-0x1.2875490a44000p-3"),
    ("0x1.268b39b1d3bbfp+0", "-0x1.1f3b9f879a000p-3"),
    ("0x1.2539d838ff5bdp+0", "-0x1.160c8252ca000p-3"),
    ("0x1.23eb7aac9083bp+0", "-0x1.0ce7f57f72000p-3"),
    ("0x1.22a012ba940b6p+0", "-0x1.03cdc49fea000p-3"),
    ("0x1.2157996cc4132p+0", "-0x1.f57bdbc4b8000p-4"),
    ("0x1.201201dd2fc9bp+0", "-0x1.e370896404000p-4"),
    ("0x1.1ecf4494d480bp+0", "-0x1.d17983ef94000p-4"),
    ("0x1.1d8f5528f6569p+0", "-0x1.bf9674ed8a000p-4"),
    ("0x1.1c52311577e7cp+0", "-0x1.adc79202f6000p-4"),
    ("0x1.1b17c74cb26e9p+0", "-0x1.9c0c3e7288000p-4"),
    ("0x1.19e010c2c1ab6p+0", "-0x1.8a646b372c000p-4"),
    ("0x1.18ab07bb670bdp+0", "-0x1.78d01b3ac0000p-4"),
    ("0x1.1778a25efbcb6p+0", "-0x1.674f145380000p-4"),
    ("0x1.1648d354c31dap+0", "-0x1.55e0e6d878000p-4"),
    ("0x1.151b990275fddp+0", "-0x1.4485cdea1e000p-4"),
    ("0x1.13f0ea432d24cp+0", "-0x1.333d94d6aa000p-4"),
    ("0x1.12c8b7210f9dap+0", "-0x1.22079f8c56000p-4"),
    ("0x1.11a3028ecb531p+0", "-0x1.10e4698622000p-4"),
    ("0x1.107fbda8434afp+0", "-0x1.ffa6c6ad20000p-5"),
    ("0x1.0f5ee0f4e6bb3p+0", "-0x1.dda8d4a774000p-5"),
    ("0x1.0e4065d2a9fcep+0", "-0x1.bbcece4850000p-5"),
    ("0x1.0d244632ca521p+0", "-0x1.9a1894012c000p-5"),
    ("0x1.0c0a77ce2981ap+0", "-0x1.788583302c000p-5"),
    ("0x1.0af2f83c636d1p+0", "-0x1.5715e67d68000p-5"),
    ("0x1.09ddb98a01339p+0", "-0x1.35c8a49658000p-5"),
    ("0x1.08cabaf52e7dfp+0", "-0x1.149e364154000p-5"),
    ("0x1.07b9f2f4e28fbp+0", "-0x1.e72c082eb8000p-6"),
    ("0x1.06ab58c358f19p+0", "-0x1.a55f152528000p-6"),
    ("0x1.059eea5ecf92cp+0", "-0x1.63d62cf818000p-6"),
    ("0x1.04949cdd12c90p+0", "-0x1.228fb8caa0000p-6"),
    ("0x1.038c6c6f0ada9p+0", "-0x1.c317b20f90000p-7"),
    ("0x1.02865137932a9p+0", "-0x1.419355daa0000p-7"),
    ("0x1.0182427ea7348p+0", "-0x1.81203c2ec0000p-8"),
    ("0x1.008040614b195p+0", "-0x1.0040979240000p-9"),
    ("0x1.fe01ff726fa1ap-1", "0x1.feff384900000p-9"),
    ("0x1.fa11cc261ea74p-1", "0x1.7dc41353d0000p-7"),
    ("0x1.f6310b081992ep-1", "0x1.3cea3c4c28000p-6"),
    ("0x1.f25f63ceeadcdp-1", "0x1.b9fc114890000p-6"),
    ("0x1.ee9c8039113e7p-1", "0x1.1b0d8ce110000p-5"),
    ("0x1.eae8078cbb1abp-1", "0x1.58a5bd001c000p-5"),
    ("0x1.e741aa29d0c9bp-1", "0x1.95c8340d88000p-5"),
    ("0x1.e3a91830a99b5p-1", "0x1.d276aef578000p-5"),
    ("0x1.e01e009609a56p-1", "0x1.07598e598c000p-4"),
    ("0x1.dca01e577bb98p-1", "0x1.253f5e30d2000p-4"),
    ("0x1.d92f20b7c9103p-1", "0x1.42edd8b380000p-4"),
    ("0x1.d5cac66fb5ccep-1", "0x1.606598757c000p-4"),
    ("0x1.d272caa5ede9dp-1", "0x1.7da76356a0000p-4"),
    ("0x1.cf26e3e6b2ccdp-1", "0x1.9ab434e1c6000p-4"),
    ("0x1.cbe6da2a77902p-1", "0x1.b78c7bb0d6000p-4"),
    ("0x1.c8b266d37086dp-1", "0x1.d431332e72000p-4"),
    ("0x1.c5894bd5d5804p-1", "0x1.f0a3171de6000p-4"),
    ("0x1.c26b533bb9f8cp-1", "0x1.067152b914000p-3"),
    ("0x1.bf583eeece73fp-1", "0x1.147858292b000p-3"),
    ("0x1.bc4fd75db96c1p-1", "0x1.2266ecdca3000p-3"),
    ("0x1.b951e0c864a28p-1", "0x1.303d7a6c55000p-3"),
    ("0x1.b65e2c5ef3e2cp-1", "0x1.3dfc33c331000p-3"),
    ("0x1.b374867c9888bp-1", "0x1.4ba366b7a8000p-3"),
    ("0x1.b094b211d304ap-1", "0x1.5933928d1f000p-3"),
    ("0x1.adbe885f2ef7ep-1", "0x1.66acd2418f000p-3"),
    ("0x1.aaf1d31603da2p-1", "0x1.740f8ec669000p-3"),
    ("0x1.a82e63fd358a7p-1", "0x1.815c0f51af000p-3"),
    ("0x1.a5740ef09738bp-1", "0x1.8e92954f68000p-3"),
    ("0x1.a2c2a90ab4b27p-1", "0x1.9bb3602f84000p-3"),
    ("0x1.a01a01393f2d1p-1", "0x1.a8bed1c2c0000p-3"),
    ("0x1.9d79f24db3c1bp-1", "0x1.b5b515c01d000p-3"),
    ("0x1.9ae2505c7b190p-1", "0x1.c2967ccbcc000p-3"),
    ("0x1.9852ef297ce2fp-1", "0x1.cf635d5486000p-3"),
    ("0x1.95cbaeea44b75p-1", "0x1.dc1bd3446c000p-3"),
    ("0x1.934c69de74838p-1", "0x1.e8c01b8cfe000p-3"),
    ("0x1.90d4f2f6752e6p-1", "0x1.f5509c0179000p-3"),
    ("0x1.8e6528effd79dp-1", "0x1.00e6c121fb800p-2"),
    ("0x1.8bfce9fcc007cp-1", "0x1.071b80e93d000p-2"),
    ("0x1.899c0dabec30ep-1", "0x1.0d46b9e867000p-2"),
    ("0x1.87427aa2317fbp-1", "0x1.13687334bd000p-2"),
    ("0x1.84f00acb39a08p-1", "0x1.1980d67234800p-2"),
    ("0x1.82a49e8653e55p-1", "0x1.1f8ffe0cc8000p-2"),
    ("0x1.8060195f40260p-1", "0x1.2595fd7636800p-2"),
    ("0x1.7e22563e0a329p-1", "0x1.2b9300914a800p-2"),
    ("0x1.7beb377dcb5adp-1", "0x1.3187210436000p-2"),
    ("0x1.79baa679725c2p-1", "0x1.377266dec1800p-2"),
    ("0x1.77907f2170657p-1", "0x1.3d54ffbaf3000p-2"),
    ("0x1.756cadbd6130cp-1", "0x1.432eee32fe000p-2"),
)
# fmt: on

TABLE: tuple[tuple[float, float], ...] = tuple(
    (float.fromhex(a), float.fromhex(b)) for a, b in _HEX
)


if __name__ == "__main__":  # pragma: no cover
    for invc, logc in generate():
        print(f'    ("{invc.hex()}", "{logc.hex()}"),')
