"""Random numbers from explicit keys: counter-based, the same bits on every backend.

Follows ``jax.random`` (argument order, defaults, algorithms) and ``Nx.Random``: a key
is a ``uint32[2]`` tensor, every sampler is a pure function of its key, and fresh
randomness comes from :func:`split` or :func:`fold_in`, never from hidden state. The
generator is Threefry-2x32 (20 rounds), written once here from numerix ops (uint32
add, xor, shifts), so it runs eagerly and inside ``jit``/``defn`` on every backend and
compiler, and a new backend gets it for free.

The bits equal ``jax.random``'s default implementation (``threefry2x32`` with
``jax_threefry_partitionable=True``, JAX's default since 0.5): element ``i`` of an
array of shape ``s`` hashes the 64-bit counter ``i`` (its high and low words) with
the key, and a 32-bit draw is the xor of the two output words. ``bits``, ``uniform``,
``randint``, ``permutation``, ``choice``, ``split`` and ``fold_in`` match JAX bit for
bit; ``normal`` computes ``erf_inv`` with XLA's approximation written here, so it is
JAX's numbers bit for bit on every backend and compiler, in every float dtype (XLA's
float32 ``log`` and its float64 one, glibc's, are written here too); the other
samplers that go through ``log`` or ``erf`` (``truncated_normal``, ``gumbel``,
``exponential``, ``categorical``) match it to the backend's rounding of those
functions (a few ulp).

# Note: a Python float ``p`` or bound takes float32 (numerix's default float), where JAX
# with 64-bit types enabled would take float64.

>>> import numerix as nx
>>> k = nx.random.key(0)
>>> k.tolist()
[0, 0]
>>> nx.random.bits(k, (3,)).tolist()
[4070199207, 4202968722, 1427181096]
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from numerix import _log_table, dtypes
from numerix._shapes import broadcast_shapes, check_shape, normalize_axis, size_of
from numerix._tensor import Tensor
from numerix.dtypes import DType
from numerix.errors import ArgumentError, DTypeError, ShapeError
from numerix.ops._core import is_concrete, new_out, resolve, run_block, unify
from numerix.ops.creation import arange, full, iota, tensor
from numerix.ops.elementwise import (
    abs,
    add,
    astype,
    bitcast,
    bitwise_and,
    bitwise_left_shift,
    bitwise_or,
    bitwise_right_shift,
    bitwise_xor,
    clip,
    equal,
    erf,
    greater,
    isnan,
    less,
    less_equal,
    log,
    log1p,
    logical_and,
    maximum,
    multiply,
    negative,
    not_equal,
    remainder,
    sqrt,
    subtract,
    where,
)
from numerix.ops.indexing import take, take_along_axis
from numerix.ops.reduction import argmax, sum
from numerix.ops.shape import expand_dims, moveaxis, reshape, stack, transpose
from numerix.ops.sort import argsort, cumsum, top_k
from numerix.ops.transfer import backend_transfer
from numerix.primitives import random as random_primitives

__all__ = [
    "key", "split", "fold_in", "bits", "uniform", "normal", "truncated_normal", "randint",
    "bernoulli", "categorical", "choice", "permutation", "gumbel", "exponential",
    "threefry2x32",
]  # fmt: skip

_UINT = {8: dtypes.uint8, 16: dtypes.uint16, 32: dtypes.uint32, 64: dtypes.uint64}
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = 0x1BD11BDA  # Threefry's key-schedule constant


# ---------------------------------------------------------------- checks


def _check_key(op: str, k: Any, backend: Any = None) -> Tensor:
    """``k`` as a ``uint32[2]`` tensor, on ``backend`` when one is given."""
    if type(k) is not Tensor:
        try:
            k = tensor(k, backend=backend)
        except DTypeError as e:
            raise DTypeError(f"{op}: the key must be a uint32[2] tensor: {e}") from None
    elif backend is not None and is_concrete(k):
        target = resolve(backend, op)
        if k.backend is not target:
            k = backend_transfer(k, target)
    if k.dtype is not dtypes.uint32:
        raise DTypeError(
            f"{op}: the key must be a uint32[2] tensor, got {k.describe()}: make one with "
            f"numerix.random.key(seed) (or split/fold_in an existing key)"
        )
    if k.shape != (2,):
        hint = (
            "; it holds several keys: pass one of them, e.g. keys[0]"
            if k.ndim > 1 and k.shape[-1] == 2
            else ""
        )
        raise ShapeError(
            f"{op}: the key must have shape (2,), got {k.describe()}{hint}: make one with "
            f"numerix.random.key(seed)"
        )
    return k


def _together(op: str, k: Tensor, *xs: Tensor) -> list[Tensor]:
    """The key and tensor parameters on one backend (a trace captures the others; host
    tensors move to the key's backend), as every op's operands meet."""
    return unify(op, k, *xs)[1]


def _float_dtype(op: str, dtype: Any, *, complex_ok: bool = False) -> DType:
    d = dtypes.as_dtype(dtype, op)
    if d.kind == "f" or (complex_ok and d.kind == "c"):
        return d
    kinds = "a floating or complex" if complex_ok else "a floating"
    raise DTypeError(
        f"{op}: dtype must be {kinds} dtype, got {d}: sample floats and convert, or use "
        f"numerix.random.randint for integers"
    )


def _check_param_shape(op: str, shape: tuple[int, ...], *params: Tensor) -> None:
    shapes = [p.shape for p in params]
    got = broadcast_shapes(op, shape, *shapes)
    if got != shape:
        listing = ", ".join(p.describe() for p in params)
        raise ShapeError(
            f"{op}: parameters ({listing}) must broadcast to the shape argument {shape}, "
            f"but broadcasting gives {got}: give a shape that holds them"
        )


def _param(op: str, name: str, x: Any, dtype: DType, backend: Any) -> Tensor:
    """A float parameter (bound, mean) as a tensor of ``dtype`` on the key's backend."""
    if type(x) is Tensor:
        if x.dtype.kind == "c":
            raise DTypeError(f"{op}: {name} must be real, got {x.describe()}")
        return astype(x, dtype) if x.dtype is not dtype else x
    real = (int, float, np.integer, np.floating, np.ndarray, list, tuple)
    if isinstance(x, bool) or not isinstance(x, real):
        raise DTypeError(f"{op}: {name} must be a real number or tensor, got {x!r}")
    return tensor(x, dtype=dtype, backend=backend)


# ---------------------------------------------------------------- threefry2x32


def _rotl(x: Tensor, r: int) -> Tensor:
    return bitwise_or(bitwise_left_shift(x, r), bitwise_right_shift(x, 32 - r))


def threefry2x32(k1: Any, k2: Any, x1: Any, x2: Any) -> tuple[Tensor, Tensor]:
    """The Threefry-2x32 block cipher (20 rounds, Salmon et al. 2011) of the counter
    words ``(x1, x2)`` under the key words ``(k1, k2)``, element-wise with broadcasting.

    All four are uint32 tensors (or Python ints); the result is two uint32 tensors of the
    broadcast shape. It is ``jax.random``'s ``threefry2x32_p``, bit for bit. A backend may
    run it as one kernel (block ``threefry2x32``); the core's version is the fallback.

    >>> import numerix as nx
    >>> y1, y2 = nx.random.threefry2x32(0, 0, nx.tensor(0, dtype=nx.uint32), 0)
    >>> y1.item(), y2.item()
    (1797259609, 2579123966)
    """
    op = "random.threefry2x32"
    if all(type(t) is not Tensor for t in (k1, k2, x1, x2)):
        k1 = tensor(k1, dtype=dtypes.uint32)
    words = [t if type(t) is Tensor else _word(op, t) for t in (k1, k2, x1, x2)]
    for t in words:
        if t.dtype is not dtypes.uint32:
            raise DTypeError(f"{op}: operands must be uint32, got {t.describe()}")
    backend, words = unify(op, *words)
    shape = broadcast_shapes(op, *(t.shape for t in words))
    out = (new_out(shape, dtypes.uint32, backend), new_out(shape, dtypes.uint32, backend))
    return run_block(random_primitives.threefry2x32, out, _threefry2x32_core, *words)


def _word(op: str, v: Any) -> Any:
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool) and 0 <= v < 2**32:
        return tensor(int(v), dtype=dtypes.uint32, backend="binary")
    raise DTypeError(f"{op}: operands must be uint32 tensors or ints in [0, 2**32), got {v!r}")


def _threefry2x32_core(k1: Tensor, k2: Tensor, x1: Tensor, x2: Tensor) -> tuple[Tensor, Tensor]:
    """Threefry-2x32 from uint32 add, xor and shifts: the block's fallback."""
    ks = (k1, k2, bitwise_xor(bitwise_xor(k1, k2), _PARITY))
    x1 = add(x1, ks[0])
    x2 = add(x2, ks[1])
    for i in range(5):
        for r in _ROTATIONS[i % 2]:
            x1 = add(x1, x2)
            x2 = bitwise_xor(x1, _rotl(x2, r))
        # the key schedule works on the 0-d key words: one full-size add per word
        x1 = add(x1, ks[(i + 1) % 3])
        x2 = add(x2, add(ks[(i + 2) % 3], i + 1))
    return x1, x2


def _counters(shape: tuple[int, ...], backend: Any, wide: bool = False) -> tuple[Tensor, Tensor]:
    """The high and low words of the 64-bit counters 0, 1, ... over ``shape`` (JAX's
    ``iota_2x32_shape``); below 2**32 elements (unless ``wide``) the high words are one
    0-d zero."""
    if not wide and size_of(shape) <= 2**32:
        return full((), 0, dtypes.uint32, backend), iota(
            shape, dtype=dtypes.uint32, backend=backend
        )
    count = iota(shape, dtype=dtypes.uint64, backend=backend)
    low = astype(bitwise_and(count, 0xFFFFFFFF), dtypes.uint32)
    return astype(bitwise_right_shift(count, 32), dtypes.uint32), low


def _hash(k: Tensor, shape: tuple[int, ...]) -> tuple[Tensor, Tensor]:
    hi, lo = _counters(shape, k.backend)
    return threefry2x32(k[0], k[1], hi, lo)


def _bits(k: Tensor, width: int, shape: tuple[int, ...]) -> Tensor:
    y1, y2 = _hash(k, shape)
    if width == 64:
        hi = bitwise_left_shift(astype(y1, dtypes.uint64), 32)
        return bitwise_or(hi, astype(y2, dtypes.uint64))
    b = bitwise_xor(y1, y2)
    if width == 32:
        return b
    return astype(bitwise_and(b, (1 << width) - 1), _UINT[width])


def _split(k: Tensor, shape: tuple[int, ...]) -> Tensor:
    y1, y2 = _hash(k, shape)
    return stack([y1, y2], axis=-1)


# ---------------------------------------------------------------- keys


def key(seed: Any, *, backend: Any = None) -> Tensor:
    """A key from an integer seed: a ``uint32[2]`` tensor holding the seed's high and low
    32-bit words (``jax.random.PRNGKey``, ``Nx.Random.key``).

    :param seed: a Python int in the int64 or uint64 range, or a 0-d integer tensor
        (inside ``jit``, a traced one).
    :param backend: where the key lives (default: the default backend, or the seed
        tensor's).
    :raises DTypeError: for a float, bool or non-scalar seed.

    >>> import numerix as nx
    >>> nx.random.key(42).tolist()
    [0, 42]
    >>> nx.random.key(-1).tolist()
    [4294967295, 4294967295]
    >>> nx.random.key(1.5)
    Traceback (most recent call last):
    ...
    numerix.errors.DTypeError: random.key: the seed must be an integer, got float 1.5: pass int(seed)
    """
    if type(seed) is Tensor:
        if seed.dtype.kind not in "iu" or seed.shape != ():
            raise DTypeError(
                f"random.key: the seed must be a 0-d integer tensor, got {seed.describe()}"
            )
        if backend is not None and is_concrete(seed):
            seed = backend_transfer(seed, resolve(backend, "random.key"))
        s = astype(seed, dtypes.int64) if seed.dtype is not dtypes.uint64 else seed
        s = bitcast(s, dtypes.uint64)
        halves = [bitwise_right_shift(s, 32), bitwise_and(s, 0xFFFFFFFF)]
        return stack([astype(w, dtypes.uint32) for w in halves])
    if isinstance(seed, (np.integer,)):
        seed = int(seed)
    if type(seed) is not int:
        raise DTypeError(
            f"random.key: the seed must be an integer, got {type(seed).__name__} {seed!r}: "
            f"pass int(seed)"
        )
    if not -(2**63) <= seed < 2**64:
        raise ArgumentError(
            f"random.key: the seed {seed} is outside the int64 and uint64 ranges: reduce it, "
            f"e.g. seed % 2**64"
        )
    seed %= 2**64
    words = np.array([seed >> 32, seed & 0xFFFFFFFF], dtype=np.uint32)
    return tensor(words, backend=resolve(backend, "random.key"))


def split(key: Any, num: int | Sequence[int] = 2) -> Tensor:
    """``num`` new keys from ``key``, stacked on a new leading axis: shape ``(num, 2)``,
    or ``(*num, 2)`` for a tuple (``jax.random.split``).

    Use one of them and split the other again; never reuse a key once split.

    >>> import numerix as nx
    >>> k, sub = nx.random.split(nx.random.key(0))
    >>> sub.tolist()
    [928981903, 3453687069]
    """
    k = _check_key("random.split", key)
    shape = check_shape("random.split", num)
    return _split(k, shape)


def fold_in(key: Any, data: Any) -> Tensor:
    """A new key from ``key`` and an integer ``data`` (a step, a device index), taken
    modulo 2**32 (``jax.random.fold_in``).

    :param data: a Python int or a 0-d integer tensor (traced inside ``jit``).
    :raises DTypeError: for a float or non-scalar ``data``.

    >>> import numerix as nx
    >>> nx.random.fold_in(nx.random.key(0), 1).tolist()
    [928981903, 3453687069]
    """
    k = _check_key("random.fold_in", key)
    if type(data) is Tensor:
        if data.dtype.kind not in "iu" or data.shape != ():
            raise DTypeError(
                f"random.fold_in: data must be a 0-d integer tensor, got {data.describe()}"
            )
        d = (
            data
            if data.dtype is dtypes.uint32
            else astype(bitwise_and(data, 0xFFFFFFFF), dtypes.uint32)
        )
    elif isinstance(data, (int, np.integer)) and not isinstance(data, bool):
        d = tensor(int(data) % 2**32, dtype=dtypes.uint32, backend=k.backend)
    else:
        raise DTypeError(
            f"random.fold_in: data must be an integer, got {type(data).__name__} {data!r}"
        )
    y1, y2 = threefry2x32(k[0], k[1], full((), 0, dtypes.uint32, k.backend), d)
    return stack([y1, y2])


# ---------------------------------------------------------------- samplers


def bits(key: Any, shape: Any = (), dtype: Any = dtypes.uint32, *, backend: Any = None) -> Tensor:
    """Uniform random bits as unsigned integers of 8, 16, 32 or 64 bits
    (``jax.random.bits``).

    :raises DTypeError: for a dtype that is not unsigned.

    >>> import numerix as nx
    >>> nx.random.bits(nx.random.key(0), (2,), nx.uint8).tolist()
    [167, 146]
    """
    k = _check_key("random.bits", key, backend)
    d = dtypes.as_dtype(dtype, "random.bits")
    if d.kind != "u":
        raise DTypeError(
            f"random.bits: dtype must be unsigned (uint8, uint16, uint32, uint64), got {d}"
        )
    return _bits(k, d.itemsize * 8, check_shape("random.bits", shape))


def uniform(
    key: Any,
    shape: Any = (),
    dtype: Any = dtypes.float32,
    minval: Any = 0.0,
    maxval: Any = 1.0,
    *,
    backend: Any = None,
) -> Tensor:
    """Uniform floats in ``[minval, maxval)`` (``jax.random.uniform``).

    The random bits fill the mantissa of a float in [1, 2), from which 1 is
    subtracted; then the result is scaled to the range with ``u * span + minval``
    rounded once in float32 and float64, as XLA fuses it (JAX's numbers bit for bit).

    :param minval: a number or a tensor broadcasting to ``shape``.
    :param maxval: a number or a tensor broadcasting to ``shape``.
    :raises DTypeError: for a dtype that is not floating.

    >>> import numerix as nx
    >>> nx.random.uniform(nx.random.key(0), (3,)).tolist()
    [0.9476670026779175, 0.9785798788070679, 0.33229148387908936]
    >>> nx.random.uniform(nx.random.key(0), (3,), nx.int32)
    Traceback (most recent call last):
    ...
    numerix.errors.DTypeError: random.uniform: dtype must be a floating dtype, got int32: sample floats and convert, or use numerix.random.randint for integers
    """
    k = _check_key("random.uniform", key, backend)
    d = _float_dtype("random.uniform", dtype)
    s = check_shape("random.uniform", shape)
    return _uniform(k, s, d, minval, maxval, "random.uniform")


def _uniform(k: Tensor, shape: tuple[int, ...], d: DType, lo: Any, hi: Any, op: str) -> Tensor:
    nbits = d.itemsize * 8
    nmant = round(-math.log2(dtypes.finfo(d).eps))  # mantissa bits: 10, 7, 23, 52
    width = 8 if nmant < 8 else nbits
    b = _bits(k, width, shape)
    if width != nbits:
        b = astype(b, _UINT[nbits])
    one = int(np.array(1.0, d.numpy_dtype).view(_UINT[nbits].numpy_dtype))
    f = subtract(bitcast(bitwise_or(bitwise_right_shift(b, width - nmant), one), d), 1.0)
    if type(lo) is not Tensor and type(hi) is not Tensor and lo == 0.0 and hi == 1.0:
        return f  # x * 1 + 0 and max(0, x) are x: skip three full-size ops
    lo_t = _param(op, "minval", lo, d, k.backend)
    hi_t = _param(op, "maxval", hi, d, k.backend)
    _check_param_shape(op, shape, lo_t, hi_t)
    f, lo_t, hi_t = _together(op, f, lo_t, hi_t)
    span = subtract(hi_t, lo_t)
    lo_c, hi_c = _constant(lo, d), _constant(hi, d)
    if d in _FMA:
        x = _scale_fused(f, span, lo_t, lo_c, hi_c)
    else:  # float16, bfloat16: XLA rounds the product and the sum
        x = add(multiply(f, span), lo_t)
    # max(-0.0, +0.0) is +0.0 on XLA, either zero elsewhere: a zero floor is +0.0
    zero = full((), 0.0, d, lo_t.backend)
    if lo_c is not None:
        floor = zero if lo_c == 0 else lo_t
    else:
        floor = where(equal(lo_t, 0.0), zero, lo_t)
    return maximum(floor, x)


# XLA fuses uniform's ``f * span + minval`` into one multiply-add (rounded once) in float32
# and float64; in float16 and bfloat16 it rounds the product and the sum, as the kernels
# do. Per dtype: mantissa bits, and the low mantissa bits cleared to split ``f`` and the
# span into halves whose cross products are exact (``f`` holds at most mantissa-bits
# significant bits: 12 + 11 and 12 + 12 in float32, 26 + 26 and 27 + 26 in float64).
_FMA = {dtypes.float32: (23, 12, 12), dtypes.float64: (52, 27, 26)}


def _constant(x: Any, d: DType) -> Any:
    """A bound given as a Python or numpy number, in ``d`` (numpy's scalar); None for a
    tensor or an array."""
    if type(x) is Tensor or isinstance(x, bool) or np.ndim(x) != 0:
        return None
    if not isinstance(x, (int, float, np.integer, np.floating)):
        return None
    with np.errstate(all="ignore"):  # a bound past the dtype's range is infinite
        return np.asarray(x).astype(d.numpy_dtype)[()]


def _high(x: Tensor, low_bits: int) -> Tensor:
    """``x`` with its ``low_bits`` lowest mantissa bits cleared."""
    nbits = x.dtype.itemsize * 8
    return bitcast(bitwise_and(bitcast(x, _UINT[nbits]), (1 << nbits) - (1 << low_bits)), x.dtype)


def _scale_fused(f: Tensor, span: Tensor, lo: Tensor, lo_c: Any, hi_c: Any) -> Tensor:
    """``f * span + lo`` rounded once, as XLA's fused multiply-add: Boldo and Melquiond's
    emulation ("Emulation of FMA and correctly rounded sums: proved algorithms using
    rounding to odd", 2008) from ops of ``f``'s dtype: Dekker's exact product ``p + e``,
    Knuth's exact sum ``s + t`` of ``p`` and ``lo``, then ``s + (t + e)`` with the inner
    sum rounded to odd. ``f`` is uniform's ``m * 2**-mantissa_bits`` in [0, 1); with
    constant bounds (``lo_c``, ``hi_c``) the steps they make exact are left out.

    # Note: exact wherever the product's rounding error is a float: every span from
    # 2**-103 (float32; 2**-970 in float64) to the largest finite one; below that, the
    # product and the sum are rounded apart.
    """
    d = f.dtype
    npd = d.numpy_dtype
    nmant, f_low, span_low = _FMA[d]
    # a compiler that fuses a multiply into the add or subtract reading it (XLA does)
    # would take p's exact product there, not p: p is read through its bits
    p = bitcast(bitcast(multiply(f, span), _UINT[d.itemsize * 8]), d)
    constant = lo_c is not None and hi_c is not None
    if constant:
        with np.errstate(all="ignore"):  # the span as the kernel computed it
            sc = np.subtract(hi_c, lo_c, dtype=npd)
        a = float(np.abs(sc))
        if lo_c == 0 or not math.isfinite(a) or a < dtypes.finfo(d).smallest_normal * 2.0**nmant:
            return add(p, lo)  # one rounding already (or the span is out of reach)
        if math.frexp(a)[0] == 0.5:  # a power of two: f * span is exact
            return add(p, lo)
    ah = _high(f, f_low)
    al = subtract(f, ah)
    bh: Any  # the span's halves: floats for constant bounds, else tensors
    bl: Any
    if constant:
        bits = np.asarray(sc).view(_UINT[d.itemsize * 8].numpy_dtype)
        bh = (bits & ~np.asarray((1 << span_low) - 1, bits.dtype)).view(npd)[()]
        bh, bl = float(bh), float(np.subtract(sc, bh, dtype=npd))
    else:
        bh = _high(span, span_low)
        bl = subtract(span, bh)
    e = _product_error(p, ah, al, bh, bl)
    s = add(p, lo)
    # Knuth's sum, not Dekker's shorter one for |lo| >= |p|: XLA folds its (p + lo) - lo
    # to p where lo is a constant of the program
    v = subtract(s, p)
    t = add(subtract(p, subtract(s, v)), subtract(lo, v))
    u = add(t, e)
    if constant and _sum_exact(d, lo_c, sc):
        return add(s, u)
    w = subtract(u, t)
    z = add(subtract(t, subtract(u, w)), subtract(e, w))  # u's rounding error
    ub = bitcast(u, _UINT[d.itemsize * 8])
    odd = bitcast(where(equal(less(z, 0.0), less(u, 0.0)), add(ub, 1), subtract(ub, 1)), d)
    inexact_even = logical_and(not_equal(z, 0.0), equal(bitwise_and(ub, 1), 0))
    r = add(s, where(inexact_even, odd, u))
    if constant:
        return r
    return where(isnan(e), s, r)  # an infinite span: the product is infinite (or NaN)


def _sum_exact(d: DType, lo: Any, span: Any) -> bool:
    """Whether ``t + e`` in :func:`_scale_fused` is exact for every ``f``: both are
    multiples of the finest step ``g`` of ``p`` (``ulp(span) * 2**-mantissa``) and of
    ``lo``, below ``ulp(s) / 2 + ulp(span) / 2``, and a float holds every multiple of ``g``
    up to ``2**precision * g``."""
    npd = d.numpy_dtype
    nmant = _FMA[d][0]
    g = float(np.spacing(np.abs(span))) * 2.0**-nmant
    if lo != 0:
        g = min(g, float(np.spacing(np.abs(lo))))
    top = 2.0 * max(math.fabs(lo), math.fabs(float(lo) + float(span)))
    if not math.isfinite(top) or top >= float(dtypes.finfo(d).max):
        return False
    bound = float(np.spacing(npd.type(top))) / 2 + float(np.spacing(np.abs(span))) / 2
    return bound <= 2.0 ** (nmant + 1) * g


def normal(
    key: Any, shape: Any = (), dtype: Any = dtypes.float32, *, backend: Any = None
) -> Tensor:
    """Standard normal samples (``jax.random.normal``): ``sqrt(2) * erf_inv(u)`` for
    ``u`` uniform in (-1, 1); complex dtypes draw real and imaginary parts of variance
    1/2 from two split keys.

    :raises DTypeError: for an integer or bool dtype.

    >>> import numerix as nx
    >>> nx.random.normal(nx.random.key(0), (2, 3)).shape
    (2, 3)
    """
    k = _check_key("random.normal", key, backend)
    d = _float_dtype("random.normal", dtype, complex_ok=True)
    s = check_shape("random.normal", shape)
    if d.kind == "c":
        real = dtypes.float32 if d is dtypes.complex64 else dtypes.float64
        k_re, k_im = _split(k, (2,))
        re = astype(_normal_real(k_re, s, real), d)
        im = astype(_normal_real(k_im, s, real), d)
        return (re + im * 1j) / np.sqrt(2.0).item()
    return _normal_real(k, s, d)


def _normal_real(k: Tensor, shape: tuple[int, ...], d: DType) -> Tensor:
    npd = d.numpy_dtype
    lo = float(np.nextafter(np.array(-1.0, npd), np.array(0.0, npd)))
    u = _uniform(k, shape, d, lo, 1.0, "random.normal")
    return multiply(_erf_inv(u), float(np.array(np.sqrt(2), npd)))


# XLA's ``ErfInv32`` (M. Giles, "Approximating the erfinv function"): with
# w = -log1p(-x * x), p(w - 2.5) for w < 5 and p(sqrt(w) - 3) otherwise, by Horner.
_ERF_INV_32: tuple[tuple[float, ...], ...] = (
    (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
     -0.00125372503, -0.00417768164, 0.246640727, 1.50140941),
    (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
     -0.0076224613, 0.00943887047, 1.00167406, 2.83297682),
)  # fmt: skip
# XLA's ``ErfInv64`` (Giles' double-precision version): branches w < 6.25 (23
# coefficients, on w - 3.125), w < 16 (19, on sqrt(w) - 3.25), otherwise (17, on
# sqrt(w) - 5).
_ERF_INV_64: tuple[tuple[float, ...], ...] = (
    (-3.6444120640178196996e-21, -1.685059138182016589e-19, 1.2858480715256400167e-18,
     1.115787767802518096e-17, -1.333171662854620906e-16, 2.0972767875968561637e-17,
     6.6376381343583238325e-15, -4.0545662729752068639e-14, -8.1519341976054721522e-14,
     2.6335093153082322977e-12, -1.2975133253453532498e-11, -5.4154120542946279317e-11,
     1.051212273321532285e-09, -4.1126339803469836976e-09, -2.9070369957882005086e-08,
     4.2347877827932403518e-07, -1.3654692000834678645e-06, -1.3882523362786468719e-05,
     0.0001867342080340571352, -0.00074070253416626697512, -0.0060336708714301490533,
     0.24015818242558961693, 1.6536545626831027356),
    (2.2137376921775787049e-09, 9.0756561938885390979e-08, -2.7517406297064545428e-07,
     1.8239629214389227755e-08, 1.5027403968909827627e-06, -4.013867526981545969e-06,
     2.9234449089955446044e-06, 1.2475304481671778723e-05, -4.7318229009055733981e-05,
     6.8284851459573175448e-05, 2.4031110387097893999e-05, -0.0003550375203628474796,
     0.00095328937973738049703, -0.0016882755560235047313, 0.0024914420961078508066,
     -0.0037512085075692412107, 0.005370914553590063617, 1.0052589676941592334,
     3.0838856104922207635),
    (-2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09,
     -3.7894654401267369937e-09, 7.6157012080783393804e-09, -1.4960026627149240478e-08,
     2.9147953450901080826e-08, -6.7711997758452339498e-08, 2.2900482228026654717e-07,
     -9.9298272942317002539e-07, 4.5260625972231537039e-06, -1.9681778105531670567e-05,
     7.5995277030017761139e-05, -0.00021503011930044477347, -0.00013871931833623122026,
     1.0103004648645343977, 4.8499064014085844221),
)  # fmt: skip


# XLA's ``log1p`` (its CPU and GPU kernel): for |x| < sqrt(2) - 1, Cephes' rational
# approximation x - x**2 / 2 + x**3 * P(x) / Q(x), else log(1 + x).
_LOG1P_P = (4.5270000862445199635215e-5, 4.9854102823193375972212e-1, 6.5787325942061044846969,
            2.9911919328553073277375e1, 6.0949667980987787057556e1, 5.7112963590585538103336e1,
            2.0039553499201281259648e1)  # fmt: skip
_LOG1P_Q = (1.0, 1.5062909083469192043167e1, 8.3047565967967209469434e1,
            2.2176239823732856465394e2, 3.0909872225312059774938e2, 2.1642788614495947685003e2,
            6.0118660497603843919306e1)  # fmt: skip


def _halves(a: Tensor) -> tuple[Tensor, Tensor]:
    """Veltkamp's split of float64 ``a`` into two halves of 26 bits: ``a = hi + lo``."""
    t = multiply(a, 134217729.0)
    hi = subtract(t, subtract(t, a))
    return hi, subtract(a, hi)


def _split_const(v: float) -> tuple[float, float, float]:
    """A float64 constant as ``(v, v_hi, v_lo)``, :func:`_halves` done in Python."""
    t = v * 134217729.0
    hi = t - (t - v)
    return v, hi, v - hi


def _fma64(a: Tensor, b: tuple[Any, Any, Any], c: Any) -> Tensor:
    """``a * b + c`` rounded once (to within an ulp's rare tie), as a fused multiply-add:
    Dekker's exact product and Knuth's exact sum from float64 ops. ``b`` is
    ``(b, b_hi, b_lo)``, split once by the caller."""
    return _fma_split((a, *_halves(a)), b, c)


def _fma_split(a: tuple[Any, Any, Any], b: tuple[Any, Any, Any], c: Any) -> Tensor:
    """:func:`_fma64` of an ``a`` split by the caller too."""
    aa, ah, al = a
    bb, bh, bl = b
    p = multiply(aa, bb)
    e = _product_error(p, ah, al, bh, bl)
    s = add(p, c)
    v = subtract(s, p)
    t = add(subtract(p, subtract(s, v)), subtract(c, v))
    return add(s, add(t, e))


def _product_error(p: Tensor, ah: Any, al: Any, bh: Any, bl: Any) -> Tensor:
    """Dekker's ``a * b - p`` for the product ``p`` of ``a = ah + al`` and ``b = bh + bl``,
    exactly, the halves split so that each partial product is exact."""
    if type(bl) is float and bl == 0.0:  # b of few bits: two products less
        return add(subtract(multiply(ah, bh), p), multiply(al, bh))
    return add(add(add(subtract(multiply(ah, bh), p), multiply(ah, bl)), multiply(al, bh)),
               multiply(al, bl))  # fmt: skip


# XLA's float32 ``log`` on CPU (Cephes' ``logf``, as Eigen evaluates it): log(2**e * m)
# with m in [sqrt(1/2), sqrt(2)), a degree-8 polynomial in m - 1 by three interleaved
# Horner chains of fused multiply-adds, and e * ln(2) added back in two parts.
_LOG_32 = (7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1,
           1.4249322787e-1, -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1,
           3.3333331174e-1)  # fmt: skip
_LN2_LO_32, _LN2_HI_32 = -2.12194440e-4, 0.693359375


def _fma32(a: Tensor, b: Any, c: Any) -> Tensor:
    """float32 ``a * b + c`` rounded once: the product of two float32 numbers is exact in
    float64, and the float64 sum rounded to float32 is the fused result."""
    wide = [astype(v, dtypes.float64, copy=False) if type(v) is Tensor else v for v in (a, b, c)]
    return astype(add(multiply(wide[0], wide[1]), wide[2]), dtypes.float32)


def _log_xla32(x: Tensor) -> Tensor:
    """XLA's float32 ``log`` on CPU, bit for bit, for positive normal ``x`` (the
    arguments ``_log1p_xla`` gives it: numpy's and torch's own float32 ``log`` differ
    from it by up to 4 ulp, which ``normal`` would carry into its samples)."""
    b = bitcast(x, dtypes.uint32)
    e = astype(subtract(astype(bitwise_right_shift(b, 23), dtypes.int32), 126), dtypes.float32)
    m = bitcast(bitwise_or(bitwise_and(b, 0x807FFFFF), 0x3F000000), dtypes.float32)  # [0.5, 1)
    low = less(m, float(np.float32(0.707106781186547524)))
    e = where(low, subtract(e, 1.0), e)
    m = where(low, add(subtract(m, 1.0), m), subtract(m, 1.0))
    m2 = multiply(m, m)
    m3 = multiply(m2, m)
    c = [float(np.float32(v)) for v in _LOG_32]
    y = _fma32(_fma32(full((), c[0], dtypes.float32, x.backend), m, c[1]), m, c[2])
    y1 = _fma32(_fma32(full((), c[3], dtypes.float32, x.backend), m, c[4]), m, c[5])
    y2 = _fma32(_fma32(full((), c[6], dtypes.float32, x.backend), m, c[7]), m, c[8])
    y = _fma32(_fma32(y, m3, y1), m3, y2)
    y = _fma32(y, m3, multiply(e, float(np.float32(_LN2_LO_32))))
    r = add(subtract(m, multiply(m2, 0.5)), y)
    return add(r, multiply(e, _LN2_HI_32))


# The C library's float64 ``log`` (glibc 2.28 and later), which XLA calls on CPU: for
# x = 2**k * z, z in [0x1.6p-1, 0x1.6p0), log(x) = k * ln2 + log(c) + log1p(r) with
# r = z / c - 1 = z * (1 / c) - 1 rounded once, (1 / c, log(c)) from a 128-entry table
# regenerated by numerix._log_table, and log1p(r) - r a degree-6 polynomial. Its five
# coefficients are the published ones of the algorithm (ARM's optimized-routines, MIT
# licence, where glibc's log comes from): a minimax fit whose bits its stated error
# bounds do not determine. ln2 = LN2_HI + LN2_LO (numerix._log_table).
_LOG_A = tuple(float.fromhex(h) for h in (
    "-0x1.0000000000001p-1", "0x1.555555551305bp-2", "-0x1.fffffffeb459p-3",
    "0x1.999b324f10111p-3", "-0x1.55575e506c89fp-3"))  # fmt: skip
_LOG_COLUMNS: dict[str, np.ndarray] = {}


def _log_columns() -> dict[str, np.ndarray]:
    """The table's columns: 1 / c with its two halves, and log(c)."""
    if not _LOG_COLUMNS:
        invc, logc = (np.asarray(col) for col in zip(*_log_table.TABLE))
        t = invc * 134217729.0
        hi = t - (t - invc)
        _LOG_COLUMNS.update(invc=invc, invc_hi=hi, invc_lo=invc - hi, logc=logc)
    return _LOG_COLUMNS


def _log_c64(x: Tensor) -> Tensor:
    """glibc's float64 ``log``, bit for bit, for the arguments ``_log1p_xla`` gives it:
    0 (``-inf``) and positive normal ``x`` below ``1 - 2**-4`` (glibc evaluates
    ``[1 - 2**-4, 1 + 0x1.09p-4]`` with another polynomial, not written here). glibc is
    compiled with fused multiply-adds where x86-64 has them: each ``a * b + c`` of its
    source is one here (:func:`_fma_split`), as GCC contracts it."""
    cols = {n: tensor(v, backend=x.backend) for n, v in _log_columns().items()}
    ix = bitcast(x, dtypes.int64)
    tmp = subtract(ix, _log_table.OFF)
    i = bitwise_and(bitwise_right_shift(tmp, 52 - _log_table.BITS), 2**_log_table.BITS - 1)
    k = bitwise_right_shift(tmp, 52)  # arithmetic: k < 0 below 0x1.6p-1
    z = bitcast(subtract(ix, bitwise_left_shift(k, 52)), dtypes.float64)
    # r = z * (1 / c) - 1 rounded once: the product is p + e exactly, and p - 1 is exact
    invc = take(cols["invc"], i)
    p = multiply(z, invc)
    zh, zl = _halves(z)
    ih, il = take(cols["invc_hi"], i), take(cols["invc_lo"], i)
    e = add(add(add(subtract(multiply(zh, ih), p), multiply(zh, il)), multiply(zl, ih)),
            multiply(zl, il))  # fmt: skip
    r = add(subtract(p, 1.0), e)
    kd = astype(k, dtypes.float64)
    w = add(multiply(kd, _log_table.LN2_HI), take(cols["logc"], i))  # exact
    hi = add(w, r)
    lo = _fma64(kd, _split_const(_log_table.LN2_LO), add(subtract(w, hi), r))
    r2 = multiply(r, r)
    rs, r2s = (r, *_halves(r)), (r2, *_halves(r2))
    a0, a1, a2, a3, a4 = (_split_const(c) for c in _LOG_A)
    t34 = _fma_split(rs, a4, a3[0])
    t12 = _fma_split(rs, a2, a1[0])
    poly = _fma_split(r2s, (t34, *_halves(t34)), t12)
    r3 = multiply(r, r2)
    y = _fma_split((r3, *_halves(r3)), (poly, *_halves(poly)), _fma_split(r2s, a0, lo))
    return where(equal(x, 0.0), full((), float("-inf"), dtypes.float64, x.backend), add(y, hi))


def _sqrt64(w: Tensor) -> Tensor:
    """The correctly rounded float64 square root on every backend (torch's on CPU is an
    ulp off for about 1% of inputs): the backend's root ``s``, moved an ulp where the
    exact residual ``w - s * s`` passes the midpoint with its neighbour. Residuals and
    midpoints are multiples of ``ulp(s)**2``, so the comparisons are exact (for ``w``
    below ``2**996``, where the split of ``s`` cannot overflow; normal's are below 40)."""
    s = sqrt(w)
    b = bitcast(s, dtypes.int64)
    up, down = bitcast(add(b, 1), dtypes.float64), bitcast(subtract(b, 1), dtypes.float64)
    p = multiply(s, s)
    sh, sl = _halves(s)
    err = add(add(subtract(multiply(sh, sh), p), multiply(multiply(sh, sl), 2.0)),
              multiply(sl, sl))  # fmt: skip
    res = subtract(subtract(w, p), err)  # w - s * s, exactly
    above = greater(res, multiply(s, subtract(up, s)))
    below = less_equal(res, negative(multiply(s, subtract(s, down))))
    return where(above, up, where(below, down, s))


def _log1p_xla(x: Tensor) -> Tensor:
    """XLA's ``log1p``; in float32 each multiply-add is fused, as XLA fuses it (one
    float64 multiply-add rounded to float32 is the fused float32 one)."""
    f32 = x.dtype is dtypes.float32
    xw = astype(x, dtypes.float64) if f32 else x
    xs = (x, *_halves(x))

    def fma(a: Tensor, b: Tensor, c: Any) -> Tensor:
        if not f32:
            return _fma64(a, xs if b is xw else (b, *_halves(b)), c)
        return _fma32(a, b, c)

    def horner(coefficients: tuple[float, ...]) -> Tensor:
        p = full((), float(x.dtype.numpy_dtype.type(coefficients[0])), x.dtype, x.backend)
        for c in coefficients[1:]:
            p = fma(p, xw, float(x.dtype.numpy_dtype.type(c)))
        return p

    x2 = multiply(x, x)
    r = multiply(multiply(x, x2), horner(_LOG1P_P) / horner(_LOG1P_Q))
    small = add(x, fma(x2, full((), -0.5, xw.dtype, x.backend), r))
    one_plus = add(x, 1.0)
    large = _log_xla32(one_plus) if f32 else _log_c64(one_plus)
    return where(less(abs(x), 0.41421356237309504880), small, large)


def _erf_inv(x: Tensor) -> Tensor:
    """XLA's ``erf_inv``: the backend's block ``xla_erf_inv`` where it has one (a backend
    whose own ``erf_inv`` is XLA's, which needs no float64 for a float32 ``x``), else
    :func:`_erf_inv_xla`."""
    out = new_out(x.shape, x.dtype, x.backend)
    return run_block(random_primitives.xla_erf_inv, out, _erf_inv_xla, x)


def _erf_inv_xla(x: Tensor) -> Tensor:
    """The inverse error function as XLA approximates it (``lax.erf_inv``), from numerix
    ops: ``normal`` and ``truncated_normal`` give JAX's numbers on every backend, where
    ``erf_inv`` is each backend's own (more accurate) kernel. float16 and bfloat16 are
    computed in float32, as XLA does; ``erf_inv(±1)`` is ``±inf``. XLA evaluates the
    float32 polynomial with fused multiply-adds: each step here is one float64
    multiply-add rounded to float32, the same number."""
    if x.dtype.itemsize < 4:
        return astype(_erf_inv_xla(astype(x, dtypes.float32)), x.dtype)
    npd = x.dtype.numpy_dtype

    def c(v: float) -> Tensor:  # the constant rounded to x's dtype, as a 0-d tensor
        return full((), float(npd.type(v)), x.dtype, x.backend)

    w = negative(_log1p_xla(multiply(negative(x), x)))
    if x.dtype is dtypes.float64:
        low_c, mid_c, high_c = _ERF_INV_64
        lt_6 = less(w, 6.25)
        lt_16 = less(w, 16.0)
        s = _sqrt64(w)
        w = where(lt_6, subtract(w, 3.125), subtract(s, where(lt_16, c(3.25), c(5.0))))
        ws = (w, *_halves(w))  # XLA fuses each multiply-add: so does _fma64
        p = where(lt_6, c(low_c[0]), where(lt_16, c(mid_c[0]), c(high_c[0])))
        for i in range(1, 23):
            if i < 17:
                ci = where(lt_6, c(low_c[i]), where(lt_16, c(mid_c[i]), c(high_c[i])))
                p = _fma64(p, ws, ci)
            elif i < 19:
                p = where(lt_16, _fma64(p, ws, where(lt_6, c(low_c[i]), c(mid_c[i]))), p)
            else:
                p = where(lt_6, _fma64(p, ws, c(low_c[i])), p)
    else:
        low_c, high_c = _ERF_INV_32
        lt = less(w, 5.0)
        # the square root taken in float64 and rounded: the correctly rounded float32 root
        # on every backend (torch's float32 sqrt is not, on CPU). The root of a float32
        # lies at least 4 float64 ulps from any float32 midpoint, so a float64 root an
        # ulp off (torch's, for 1% of inputs) rounds to the same float32.
        root = astype(sqrt(astype(w, dtypes.float64)), dtypes.float32)
        w = astype(where(lt, subtract(w, 2.5), subtract(root, 3.0)), dtypes.float64)
        p = where(lt, c(low_c[0]), c(high_c[0]))
        for i in range(1, 9):
            p = _fma32(p, w, where(lt, c(low_c[i]), c(high_c[i])))
    return where(equal(abs(x), 1.0), multiply(x, float("inf")), multiply(p, x))


def _nextafter(x: Tensor, up: bool) -> Tensor:
    """The next float after ``x`` towards +inf (``up``) or -inf, by its bits."""
    u = _UINT[x.dtype.itemsize * 8]
    b = bitcast(x, u)
    sign = 1 << (x.dtype.itemsize * 8 - 1)
    positive = less(b, sign)  # +0 and positive numbers
    step = where(positive if up else ~positive, add(b, 1), subtract(b, 1))
    zero = equal(x, 0.0)
    tiny = sign + 1 if not up else 1  # smallest subnormal of the right sign
    step = where(zero, full((), tiny, u, x.backend), step)
    inf = float("inf") if up else float("-inf")
    return where(equal(x, inf) | (x != x), x, bitcast(step, x.dtype))


def truncated_normal(
    key: Any,
    lower: Any,
    upper: Any,
    shape: Any = None,
    dtype: Any = dtypes.float32,
    *,
    backend: Any = None,
) -> Tensor:
    """Normal samples truncated to the open interval ``(lower, upper)``
    (``jax.random.truncated_normal``): inverse-CDF sampling, clipped into the interval.

    :param shape: the result shape (default: ``lower`` and ``upper`` broadcast).

    >>> import numerix as nx
    >>> x = nx.random.truncated_normal(nx.random.key(0), -1.0, 1.0, (100,))
    >>> bool(nx.all((x > -1) & (x < 1)))
    True
    """
    op = "random.truncated_normal"
    k = _check_key(op, key, backend)
    d = _float_dtype(op, dtype)
    lo = _param(op, "lower", lower, d, k.backend)
    hi = _param(op, "upper", upper, d, k.backend)
    k, lo, hi = _together(op, k, lo, hi)
    if shape is None:
        s = broadcast_shapes(op, lo.shape, hi.shape)
    else:
        s = check_shape(op, shape)
        _check_param_shape(op, s, lo, hi)
    sqrt2 = float(np.array(np.sqrt(2), d.numpy_dtype))
    a = erf(lo / sqrt2)
    b = erf(hi / sqrt2)
    u = _uniform(k, s, d, a, b, op)
    out = multiply(_erf_inv(u), sqrt2)
    return clip(out, _nextafter(lo, True), _nextafter(hi, False))


def _probability(op: str, p: Any, backend: Any) -> Tensor:
    if type(p) is Tensor:
        if p.dtype.kind != "f":
            raise DTypeError(f"{op}: p must be a floating tensor, got {p.describe()}")
        return p
    if isinstance(p, (int, float, np.number)) and not isinstance(p, bool):
        if not 0.0 <= float(p) <= 1.0:
            raise ArgumentError(f"{op}: p must be a probability in [0, 1], got {p!r}")
        return tensor(float(p), dtype=dtypes.float32, backend=backend)
    raise DTypeError(f"{op}: p must be a float or a floating tensor, got {p!r}")


def bernoulli(key: Any, p: Any = 0.5, shape: Any = None, *, backend: Any = None) -> Tensor:
    """Booleans that are True with probability ``p`` (``jax.random.bernoulli``): a
    uniform sample of ``p``'s dtype below ``p``.

    :param p: a float in [0, 1] (float32) or a floating tensor broadcasting to ``shape``.
    :param shape: the result shape (default: ``p``'s).
    :raises ArgumentError: for a Python ``p`` outside [0, 1].

    >>> import numerix as nx
    >>> nx.random.bernoulli(nx.random.key(0), 0.5, (4,)).tolist()
    [False, False, True, True]
    >>> nx.random.bernoulli(nx.random.key(0), 1.5)
    Traceback (most recent call last):
    ...
    numerix.errors.ArgumentError: random.bernoulli: p must be a probability in [0, 1], got 1.5
    """
    op = "random.bernoulli"
    k = _check_key(op, key, backend)
    k, pt = _together(op, k, _probability(op, p, k.backend))
    if shape is None:
        s = pt.shape
    else:
        s = check_shape(op, shape)
        _check_param_shape(op, s, pt)
    return less(_uniform(k, s, pt.dtype, 0.0, 1.0, op), pt)


def gumbel(
    key: Any, shape: Any = (), dtype: Any = dtypes.float32, *, backend: Any = None
) -> Tensor:
    """Standard Gumbel samples, ``-log(-log(u))`` for ``u`` uniform in [tiny, 1)
    (``jax.random.gumbel``, mode ``"low"``).

    >>> import numerix as nx
    >>> nx.random.gumbel(nx.random.key(0), (2,)).dtype
    numerix.float32
    """
    k = _check_key("random.gumbel", key, backend)
    d = _float_dtype("random.gumbel", dtype)
    return _gumbel(k, check_shape("random.gumbel", shape), d)


def _gumbel(k: Tensor, shape: tuple[int, ...], d: DType) -> Tensor:
    tiny = float(dtypes.finfo(d).smallest_normal)
    u = _uniform(k, shape, d, tiny, 1.0, "random.gumbel")
    return negative(log(negative(log(u))))


def exponential(
    key: Any, shape: Any = (), dtype: Any = dtypes.float32, *, backend: Any = None
) -> Tensor:
    """Standard exponential samples, ``-log1p(-u)`` (``jax.random.exponential``).

    >>> import numerix as nx
    >>> bool(nx.all(nx.random.exponential(nx.random.key(0), (5,)) >= 0))
    True
    """
    k = _check_key("random.exponential", key, backend)
    d = _float_dtype("random.exponential", dtype)
    u = _uniform(k, check_shape("random.exponential", shape), d, 0.0, 1.0, "random.exponential")
    return negative(log1p(negative(u)))


# ---------------------------------------------------------------- integers


def _clip_convert(v: Tensor, d: DType) -> Tensor:
    """``v`` converted to the integer dtype ``d``, saturating (JAX's
    ``_convert_and_clip_integer``)."""
    vi, di = dtypes.iinfo(v.dtype), dtypes.iinfo(d)
    lo, hi = max(int(di.min), int(vi.min)), min(int(di.max), int(vi.max))
    if lo > int(vi.min) or hi < int(vi.max):
        v = clip(v, lo, hi)
    return astype(v, d)


def _int_bound(op: str, name: str, v: Any, backend: Any, d: DType) -> Tensor:
    if type(v) is Tensor:
        t = v
    elif isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        # a bound within the draw's dtype takes that dtype: an int32 draw on xla makes no
        # 64-bit tensor, which would turn JAX's 64-bit mode on; one outside it saturates
        info = dtypes.iinfo(d)
        wide = dtypes.int64 if int(v) < 2**63 else dtypes.uint64
        t = tensor(int(v), dtype=d if info.min <= int(v) <= info.max else wide, backend=backend)
    elif isinstance(v, (list, tuple, np.ndarray)):
        t = tensor(v, backend=backend)
    else:
        raise DTypeError(
            f"{op}: {name} must be an integer, got {type(v).__name__} {v!r}: pass int({name}) "
            f"(randint draws integers in [minval, maxval))"
        )
    if t.dtype.kind not in "iu":
        raise DTypeError(
            f"{op}: {name} must be an integer or integer tensor, got {t.describe()}: convert "
            f"it with astype (randint draws integers in [minval, maxval))"
        )
    return t


def randint(
    key: Any,
    shape: Any,
    minval: Any,
    maxval: Any,
    dtype: Any = dtypes.int64,
    *,
    backend: Any = None,
) -> Tensor:
    """Uniform integers in ``[minval, maxval)`` (``jax.random.randint``, same bits).

    Each value takes two draws of the dtype's width and reduces them modulo the span,
    which keeps the bias small; 8- and 16-bit dtypes sample in 32 bits. A ``maxval``
    beyond the dtype's range counts as one past its maximum; ``maxval <= minval`` gives
    ``minval``.

    :raises DTypeError: for a non-integer dtype or a float bound.

    >>> import numerix as nx
    >>> nx.random.randint(nx.random.key(0), (5,), 0, 10).tolist()
    [5, 1, 5, 7, 3]
    >>> nx.random.randint(nx.random.key(0), (5,), 0.0, 10)
    Traceback (most recent call last):
    ...
    numerix.errors.DTypeError: random.randint: minval must be an integer, got float 0.0: pass int(minval) (randint draws integers in [minval, maxval))
    """
    op = "random.randint"
    k = _check_key(op, key, backend)
    d = dtypes.as_dtype(dtype, op)
    if d.kind not in "iu":
        raise DTypeError(
            f"{op}: dtype must be an integer dtype, got {d}: use numerix.random.uniform for floats"
        )
    s = check_shape(op, shape)
    lo = _int_bound(op, "minval", minval, k.backend, d)
    hi = _int_bound(op, "maxval", maxval, k.backend, d)
    _check_param_shape(op, s, lo, hi)
    k, lo, hi = _together(op, k, lo, hi)
    info = dtypes.iinfo(d)
    if info.bits < 32:
        lo = clip(astype(lo, dtypes.int32), int(info.min), int(info.max))
        hi = clip(astype(hi, dtypes.int32), int(info.min), int(info.max) + 1)
        return astype(_randint(k, s, lo, hi, dtypes.int32), d)
    return _randint(k, s, lo, hi, d)


def _randint(k: Tensor, shape: tuple[int, ...], lo: Tensor, hi: Tensor, d: DType) -> Tensor:
    top = min(int(dtypes.iinfo(d).max), int(dtypes.iinfo(hi.dtype).max))
    hi_out_of_range = greater(hi, full((), top, hi.dtype, k.backend))
    lo = _clip_convert(lo, d)
    hi = _clip_convert(hi, d)
    nbits = dtypes.iinfo(d).bits
    keys = _split(k, (2,))
    high_bits = _bits(keys[0], nbits, shape)
    low_bits = _bits(keys[1], nbits, shape)
    u = _UINT[nbits]
    span = bitcast(subtract(hi, lo), u) if d.kind == "i" else subtract(hi, lo)
    empty = less_equal(hi, lo)
    span = where(empty, full((), 1, u, k.backend), span)
    span = where(logical_and(hi_out_of_range, ~empty), add(span, 1), span)
    # span 0 is the whole range (2**nbits): the offset is the low word, as XLA's x % 0 = x
    whole = equal(span, 0)
    safe = where(whole, full((), 1, u, k.backend), span)
    mult = remainder(full((), 2 ** (nbits // 2), u, k.backend), safe)
    mult = remainder(multiply(mult, mult), safe)
    offset = add(multiply(remainder(high_bits, safe), mult), remainder(low_bits, safe))
    offset = where(whole, low_bits, remainder(offset, safe))
    return add(lo, bitcast(offset, d) if d.kind == "i" else offset)


# ---------------------------------------------------------------- permutations and choices


def _shuffle(k: Tensor, x: Tensor, axis: int) -> Tensor:
    # JAX's _shuffle: sort by fresh 32-bit keys, rounds enough to make collisions rare
    rounds = math.ceil(3 * math.log(max(1, size_of(x.shape))) / math.log(2**32 - 1))
    for _ in range(rounds):
        pair = _split(k, (2,))
        k, sub = pair[0], pair[1]
        order = argsort(_bits(sub, 32, x.shape), axis=axis)
        x = take_along_axis(x, order, axis=axis)
    return x


def permutation(
    key: Any, x: Any, axis: int = 0, independent: bool = False, *, backend: Any = None
) -> Tensor:
    """A random permutation of ``range(x)`` (int64) for an int ``x``, or of a tensor's
    slices along ``axis`` (``jax.random.permutation``, same bits). ``independent=True``
    shuffles each line along ``axis`` on its own.

    :raises ShapeError: for a 0-d tensor.

    >>> import numerix as nx
    >>> nx.random.permutation(nx.random.key(0), 5).tolist()
    [0, 1, 4, 3, 2]
    """
    op = "random.permutation"
    k = _check_key(op, key, backend)
    if type(x) is not Tensor and isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        n = operator.index(x)
        if n < 0:
            raise ShapeError(f"{op}: x must be a non-negative int or a tensor, got {n}")
        return _shuffle(k, arange(n, backend=k.backend), 0)
    k, t = _together(op, k, x if type(x) is Tensor else tensor(x, backend=k.backend))
    if t.ndim == 0:
        raise ShapeError(
            f"{op}: x must be an int or a tensor of at least one dimension, got {t.describe()}"
        )
    ax = normalize_axis(op, axis, t.ndim, t.shape)
    if independent or t.ndim == 1:
        return _shuffle(k, t, ax)
    order = _shuffle(k, arange(t.shape[ax], backend=k.backend), 0)
    return take(t, order, axis=ax)


def choice(
    key: Any,
    a: Any,
    shape: Any = (),
    replace: bool = True,
    p: Any = None,
    axis: int = 0,
    *,
    backend: Any = None,
) -> Tensor:
    """A random sample of ``a``'s slices along ``axis`` (of ``range(a)`` for an int)
    (``jax.random.choice``, same bits).

    :param p: the probability of each entry (a 1-d tensor of ``a.shape[axis]``), or
        None for uniform.
    :raises ArgumentError: for ``replace=False`` with more draws than entries.

    >>> import numerix as nx
    >>> nx.random.choice(nx.random.key(0), 10, (3,), replace=False).tolist()
    [0, 1, 8]
    >>> nx.random.choice(nx.random.key(0), 3, (4,), replace=False)
    Traceback (most recent call last):
    ...
    numerix.errors.ArgumentError: random.choice: cannot take 4 samples from a population of 3 without replacement: draw at most 3, or pass replace=True
    """
    op = "random.choice"
    k = _check_key(op, key, backend)
    s = check_shape(op, shape)
    if type(a) is not Tensor and isinstance(a, (int, np.integer)) and not isinstance(a, bool):
        arr = None
        n = operator.index(a)
        ax = 0
    else:
        k, arr = _together(op, k, a if type(a) is Tensor else tensor(a, backend=k.backend))
        if arr.ndim == 0:
            raise ShapeError(f"{op}: a must be an int or a tensor of at least one dimension")
        ax = normalize_axis(op, axis, arr.ndim, arr.shape)
        n = arr.shape[ax]
    draws = size_of(s)
    out_shape = s if arr is None else arr.shape[:ax] + s + arr.shape[ax + 1 :]
    if draws == 0:
        return full(out_shape, 0, dtypes.int64 if arr is None else arr.dtype, k.backend)
    if n <= 0:
        raise ArgumentError(f"{op}: a must hold at least one entry unless no samples are taken")
    if not replace and draws > n:
        raise ArgumentError(
            f"{op}: cannot take {draws} samples from a population of {n} without "
            f"replacement: draw at most {n}, or pass replace=True"
        )
    if p is None:
        if replace:
            ind = randint(k, s, 0, n)
        else:
            perm = permutation(k, n if arr is None else arr, ax)
            if arr is not None:
                return reshape(take(perm, arange(draws, backend=k.backend), axis=ax), out_shape)
            ind = perm[:draws]
    else:
        k, pt = _together(op, k, p if type(p) is Tensor else tensor(p, backend=k.backend))
        if pt.dtype.kind in "iub":
            pt = astype(pt, dtypes.float32)
        if pt.shape != (n,):
            raise ShapeError(
                f"{op}: p must be None or a 1-d tensor of a.shape[axis] = {n} entries, got "
                f"{pt.describe()}"
            )
        if replace:
            cum = cumsum(pt)
            r = multiply(cum[-1], subtract(1.0, _uniform(k, s, pt.dtype, 0.0, 1.0, op)))
            # searchsorted(cum, r, side="left"): how many cumulative sums lie below r
            ind = sum(less(cum, expand_dims(r, -1)), axis=-1, dtype=dtypes.int64)
        else:
            g = add(_gumbel(k, (n,), pt.dtype), log(pt))
            ind = top_k(g, draws)[1]
    if arr is None:
        return reshape(ind, s)
    return reshape(take(arr, reshape(ind, (draws,)), axis=ax), out_shape)


def categorical(
    key: Any, logits: Any, axis: int = -1, shape: Any = None, replace: bool = True,
    *, backend: Any = None,
) -> Tensor:  # fmt: skip
    """Indices (int64) drawn from the categorical distributions ``softmax(logits, axis)``
    by the Gumbel-max trick (``jax.random.categorical``); ``replace=False`` takes the
    Gumbel top-k.

    :param shape: the result shape; its trailing dimensions must match ``logits``'s
        without ``axis`` (default: exactly those).

    >>> import numerix as nx
    >>> logits = nx.log(nx.tensor([0.0, 1.0, 0.0]))
    >>> nx.random.categorical(nx.random.key(0), logits, shape=(4,)).tolist()
    [1, 1, 1, 1]
    """
    op = "random.categorical"
    k = _check_key(op, key, backend)
    lg = logits if type(logits) is Tensor else tensor(logits, backend=k.backend)
    k, lg = _together(op, k, lg)
    if lg.dtype.kind != "f":
        raise DTypeError(f"{op}: logits must be floating, got {lg.describe()}")
    if lg.ndim == 0:
        raise ShapeError(f"{op}: logits must have at least one dimension, got {lg.describe()}")
    ax = normalize_axis(op, axis, lg.ndim, lg.shape)
    batch = lg.shape[:ax] + lg.shape[ax + 1 :]
    if shape is None:
        s = batch
    else:
        s = check_shape(op, shape)
        tail = s[len(s) - len(batch) :] if batch else ()
        if len(s) < len(batch) or any(b not in (1, d) for b, d in zip(batch, tail)):
            raise ShapeError(
                f"{op}: shape {s} must end with the batch shape {batch} of {lg.describe()} "
                f"(its shape without axis {ax})"
            )
    prefix = s[: len(s) - len(batch)]
    if replace:
        lines = list(s[len(s) - len(batch) :])
        lines.insert(ax, lg.shape[ax])
        g = _gumbel(k, (*prefix, *lines), lg.dtype)
        lead = tuple(range(len(prefix)))
        return argmax(add(g, expand_dims(lg, lead) if lead else lg), axis=len(prefix) + ax)
    draws = size_of(prefix)
    if draws > lg.shape[ax]:
        raise ArgumentError(
            f"{op}: cannot take {draws} samples without replacement from {lg.shape[ax]} "
            f"categories: draw at most {lg.shape[ax]}, or pass replace=True"
        )
    g = add(lg, _gumbel(k, lg.shape, lg.dtype))
    idx = top_k(moveaxis(g, ax, -1), draws)[1]  # batch + (draws,)
    idx = transpose(idx, (idx.ndim - 1, *range(idx.ndim - 1)))
    return reshape(idx, s)
