"""The second batch of element-wise ops against numpy: transcendental functions,
classification, complex parts and shifts, over every dtype, edge shapes and refusals."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import numerix as nx
from numerix import dtypes
from numerix.primitives import REGISTRY
from numerix.testing.oracle import (
    ALL,
    ALL_PAIRS,
    BINARY_SHAPES,
    COMPLEX,
    FLOATS,
    INTS,
    UNARY_SHAPES,
    check,
    expected_promotion,
    ids,
    inexact,
    noncontiguous,
    oracle,
    pair_ids,
    real_of,
    sample,
    shape_id,
    t,
)
from numerix.testing.suite.elementwise import kit_family, kit_oracle, kit_rule


def _declared(family: str, arity: int, category: str | None = None) -> dict[str, Any]:
    """name -> (numerix fn, numpy reference, domain) for each primitive whose declaration
    asks for ``family``'s check (:func:`kit_family`), of ``category`` if given."""
    return {
        p.name: (getattr(nx, p.name), kit_oracle(p), p.extra.get("domain"))
        for p in REGISTRY
        if kit_family(p) == family
        and p.extra["arity"] == arity
        and category in (None, p.extra["category"])
    }


# transcendental functions, from their declarations (``domain=``): "any", "unit" (|x| < 1),
# "ge1", "gtm1" or "pos"; the real-only ones refuse complex
UNARY_INEXACT: dict[str, tuple[Callable[..., Any], Callable[..., Any], str]] = _declared(
    "domain", 1, "inexact"
)
REAL_ONLY: dict[str, tuple[Callable[..., Any], Callable[..., Any], str]] = _declared(
    "domain", 1, "real_inexact"
)
BINARY_INEXACT: dict[str, tuple[Callable[..., Any], Callable[..., Any], str]] = _declared(
    "domain", 2
)
_other = set(_declared("domain", 1)) - set(UNARY_INEXACT) - set(REAL_ONLY)
if _other:
    raise LookupError(f"{sorted(_other)}: the kit checks domain= for the inexact categories only")


def _data(d: dtypes.DType, domain: str, shape: tuple[int, ...] = (3, 4)) -> np.ndarray:
    if d.kind == "b":
        return sample(d, shape)
    if domain == "unit" and d.kind in "iu":
        return sample(d, shape, small=True) // 2 if d.kind == "i" else sample(d, shape) % 2
    if domain == "unit":
        return (sample(d, shape) / 5).astype(d.numpy_dtype)
    if domain in ("ge1", "pos", "gtm1"):
        return sample(d, shape, positive=True) + np.asarray(1 if domain == "ge1" else 0).astype(
            d.numpy_dtype
        )
    return sample(d, shape)


@pytest.mark.parametrize("d", ALL, ids=ids)
@pytest.mark.parametrize("name", sorted(UNARY_INEXACT) + sorted(REAL_ONLY))
def test_unary_inexact(name: str, d: dtypes.DType) -> None:
    fn, ref, domain = {**UNARY_INEXACT, **REAL_ONLY}[name]
    if name in REAL_ONLY and d.kind == "c":
        with pytest.raises(nx.DTypeError):
            fn(t(sample(d)))
        return
    a = _data(d, domain)
    c = inexact(d)
    check(fn(t(a, d)), oracle(ref, a, compute=c, out=c), c)


@pytest.mark.parametrize("shape", UNARY_SHAPES, ids=shape_id)
@pytest.mark.parametrize("name", sorted(UNARY_INEXACT) + sorted(REAL_ONLY))
def test_unary_inexact_shapes(name: str, shape: tuple[int, ...]) -> None:
    fn, ref, domain = {**UNARY_INEXACT, **REAL_ONLY}[name]
    a = _data(dtypes.float32, domain, shape)
    check(fn(t(a)), oracle(ref, a, compute=dtypes.float32, out=dtypes.float32), dtypes.float32)


SPECIAL = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, np.inf, -np.inf, np.nan]


@pytest.mark.parametrize("d", FLOATS, ids=ids)
@pytest.mark.parametrize("name", sorted(UNARY_INEXACT) + sorted(REAL_ONLY))
def test_unary_special_values_elementwise_more(name: str, d: dtypes.DType) -> None:
    fn, ref, _ = {**UNARY_INEXACT, **REAL_ONLY}[name]
    a = np.asarray(SPECIAL, dtype=d.numpy_dtype)
    with np.errstate(all="raise"):
        r = fn(t(a))
    check(r, oracle(ref, a, compute=d, out=d), d)


@pytest.mark.parametrize("d", ALL, ids=ids)
def test_erf_inv(d: dtypes.DType) -> None:
    a = _data(d, "unit")
    if d.kind == "c":
        with pytest.raises(nx.DTypeError):
            nx.erf_inv(t(a))
        return
    c = inexact(d)
    r = nx.erf_inv(t(a, d))
    assert r.dtype is c
    # the round trip erf(erf_inv(y)) == y (no independent erf_inv oracle without scipy)
    check(nx.erf(r), oracle(lambda v: v, a, compute=c, out=c), c)
    # and erf_inv(erf(x)) == x away from the flat tails
    x = (sample(dtypes.float64) / 3).astype(c.numpy_dtype)
    y = nx.erf(t(x))
    want = oracle(lambda v: v, x, compute=c, out=c)
    check(nx.erf_inv(y), want, c)


@pytest.mark.parametrize("shape", UNARY_SHAPES, ids=shape_id)
def test_erf_inv_shapes(shape: tuple[int, ...]) -> None:
    a = sample(dtypes.float64, shape) / 5
    check(nx.erf(nx.erf_inv(t(a))), a, dtypes.float64)


def test_erf_inv_special_values() -> None:
    a = np.asarray([1.0, -1.0, 1.5, -2.0, np.nan, 0.0, np.inf, -np.inf])
    want = np.asarray([np.inf, -np.inf, np.nan, np.nan, np.nan, 0.0, np.nan, np.nan])
    for d in FLOATS:
        with np.errstate(all="raise"):
            check(nx.erf_inv(t(a, d)), want.astype(d.numpy_dtype), d)


@pytest.mark.parametrize("p", ALL_PAIRS, ids=pair_ids)
@pytest.mark.parametrize("name", sorted(BINARY_INEXACT))
def test_binary_inexact(name: str, p: tuple[dtypes.DType, dtypes.DType]) -> None:
    fn, ref, _ = BINARY_INEXACT[name]
    a, b = sample(p[0], seed=1), sample(p[1], seed=2)
    e = expected_promotion(*p)
    rule = None if e is None else kit_rule(REGISTRY[name])(e)
    if rule is None:
        with pytest.raises(nx.DTypeError):
            fn(t(a), t(b))
        return
    check(fn(t(a), t(b)), oracle(ref, a, b, compute=rule[0], out=rule[1]), rule[1])


@pytest.mark.parametrize("shapes", BINARY_SHAPES, ids=shape_id)
@pytest.mark.parametrize("name", sorted(BINARY_INEXACT))
def test_binary_inexact_shapes(name: str, shapes: tuple[tuple[int, ...], tuple[int, ...]]) -> None:
    fn, ref, _ = BINARY_INEXACT[name]
    a, b = sample(dtypes.float64, shapes[0], 1), sample(dtypes.float64, shapes[1], 2)
    check(fn(t(a), t(b)), ref(a, b), dtypes.float64)


@pytest.mark.parametrize("name", sorted(BINARY_INEXACT))
def test_binary_inexact_special_values(name: str) -> None:
    fn, ref, _ = BINARY_INEXACT[name]
    v = np.asarray(SPECIAL)
    a, b = np.meshgrid(v, v)
    check(fn(t(a), t(b)), ref(a, b), dtypes.float64)


# ---------------------------------------------------------------- classification

# from the declarations of the ``classify`` category
CLASSIFY = {name: (fn, ref) for name, (fn, ref, _) in _declared("classify", 1).items()}


def _with_specials(d: dtypes.DType) -> np.ndarray:
    a = sample(d, (12,))
    if d.kind == "f":
        a[:4] = np.asarray([np.nan, np.inf, -np.inf, 0.0]).astype(d.numpy_dtype)
    if d.kind == "c":
        a[:5] = np.asarray([complex(np.nan, 0), complex(0, np.inf), complex(-np.inf, 1),
                            complex(1, np.nan), 0]).astype(d.numpy_dtype)  # fmt: skip
    return a


@pytest.mark.parametrize("d", ALL, ids=ids)
@pytest.mark.parametrize("name", sorted(CLASSIFY))
def test_classify(name: str, d: dtypes.DType) -> None:
    fn, ref = CLASSIFY[name]
    a = _with_specials(d)
    want = ref(a.astype(np.float32) if d is dtypes.bfloat16 else a)
    check(fn(t(a, d)), want, dtypes.bool_)


@pytest.mark.parametrize("shape", UNARY_SHAPES, ids=shape_id)
@pytest.mark.parametrize("name", sorted(CLASSIFY))
def test_classify_shapes(name: str, shape: tuple[int, ...]) -> None:
    fn, ref = CLASSIFY[name]
    a = sample(dtypes.float32, shape)
    check(fn(t(a)), ref(a), dtypes.bool_)


# ---------------------------------------------------------------- complex parts


@pytest.mark.parametrize("d", ALL, ids=ids)
def test_real_imag_conj(d: dtypes.DType) -> None:
    a = sample(d)
    check(nx.real(t(a, d)), np.real(a), real_of(d))
    check(nx.imag(t(a, d)), np.imag(a).astype(real_of(d).numpy_dtype), real_of(d))
    check(nx.conj(t(a, d)), np.conj(a) if d.kind != "b" else a, d)


@pytest.mark.parametrize("shape", UNARY_SHAPES, ids=shape_id)
@pytest.mark.parametrize("d", COMPLEX + (dtypes.float32,), ids=ids)
def test_real_imag_conj_shapes(d: dtypes.DType, shape: tuple[int, ...]) -> None:
    a = sample(d, shape)
    check(nx.real(t(a)), np.real(a), real_of(d))
    check(nx.imag(t(a)), np.imag(a), real_of(d))
    check(nx.conj(t(a)), np.conj(a), d)


def test_complex_parts_special_values() -> None:
    a = np.asarray([complex(np.nan, np.inf), complex(-np.inf, -0.0)], np.complex64)
    check(nx.real(t(a)), np.real(a), dtypes.float32)
    check(nx.imag(t(a)), np.imag(a), dtypes.float32)
    check(nx.conj(t(a)), np.conj(a), dtypes.complex64)


# ---------------------------------------------------------------- shifts


def _shift_ref(a: np.ndarray, b: np.ndarray, left: bool) -> np.ndarray:
    # Python ints as the oracle: no overflow, then wrap into the dtype; out-of-range
    # amounts as XLA defines them
    dt = np.result_type(a, b)
    bits = dt.itemsize * 8
    a, b = np.broadcast_arrays(a.astype(dt), b.astype(dt))
    out = []
    for x, s in zip(a.ravel().tolist(), b.ravel().tolist()):
        if s < 0 or s >= bits:
            out.append(0 if left or x >= 0 else -1)
        elif left:
            v = (x << s) & ((1 << bits) - 1)
            out.append(v - (1 << bits) if dt.kind == "i" and v >= 1 << (bits - 1) else v)
        else:
            out.append(x >> s)
    return np.asarray(out, dtype=dt).reshape(a.shape)


SHIFTS = {"left": (nx.bitwise_left_shift, True), "right": (nx.bitwise_right_shift, False)}


@pytest.mark.parametrize("p", ALL_PAIRS, ids=pair_ids)
@pytest.mark.parametrize("name", sorted(SHIFTS))
def test_shift_dtypes(name: str, p: tuple[dtypes.DType, dtypes.DType]) -> None:
    fn, left = SHIFTS[name]
    a, b = sample(p[0], seed=1), sample(p[1], seed=2)
    e = expected_promotion(*p)
    if e is None or e.kind not in "iu":
        with pytest.raises(nx.DTypeError):
            fn(t(a), t(b))
        return
    b = np.abs(b) % 8 if p[1].kind in "iu" else b
    check(fn(t(a), t(b)), _shift_ref(a.astype(e.numpy_dtype), b.astype(e.numpy_dtype), left), e)


@pytest.mark.parametrize("d", INTS, ids=ids)
@pytest.mark.parametrize("name", sorted(SHIFTS))
def test_shift_out_of_range(name: str, d: dtypes.DType) -> None:
    fn, left = SHIFTS[name]
    bits = d.numpy_dtype.itemsize * 8
    info = np.iinfo(d.numpy_dtype)
    xs = [info.min, info.max, 0, 1, 5] + ([-1, -7] if d.kind == "i" else [])
    ss = [0, 1, bits - 1, bits, bits + 1, info.max] + ([-1, info.min] if d.kind == "i" else [])
    a, b = np.meshgrid(np.asarray(xs, d.numpy_dtype), np.asarray(ss, d.numpy_dtype))
    check(fn(t(a), t(b)), _shift_ref(a, b, left), d)


@pytest.mark.parametrize("shapes", BINARY_SHAPES, ids=shape_id)
@pytest.mark.parametrize("name", sorted(SHIFTS))
def test_shift_shapes(name: str, shapes: tuple[tuple[int, ...], tuple[int, ...]]) -> None:
    fn, left = SHIFTS[name]
    a = sample(dtypes.int32, shapes[0], 1)
    b = np.abs(sample(dtypes.int32, shapes[1], 2))
    check(fn(t(a), t(b)), _shift_ref(a, b, left), dtypes.int32)


def test_shift_operators() -> None:
    a = np.asarray([-8, 3, 100], np.int16)
    x = t(a)
    check(x << 2, _shift_ref(a, np.int16(2), True), dtypes.int16)
    check(x >> 1, _shift_ref(a, np.int16(1), False), dtypes.int16)
    check(1 << t(np.asarray([0, 3], np.int16)), np.asarray([1, 8], np.int16), dtypes.int16)
    check(64 >> t(np.asarray([0, 3], np.int16)), np.asarray([64, 8], np.int16), dtypes.int16)
    with pytest.raises(nx.DTypeError):
        t(np.asarray([1.0])) << 1


# ---------------------------------------------------------------- bits


def _pattern(v: int, bits: int) -> int:
    # the unsigned bit pattern of a Python int (two's complement for negatives)
    return v & ((1 << bits) - 1)


def _bits_ref(a: np.ndarray, fn: Callable[[int, int], int]) -> np.ndarray:
    bits = a.dtype.itemsize * 8
    out = [fn(_pattern(int(v), bits), bits) for v in a.ravel().tolist()]
    return np.asarray(out, dtype=np.int64).astype(a.dtype).reshape(a.shape)


BIT_COUNTS: dict[str, tuple[Callable[..., Any], Callable[[int, int], int]]] = {
    "population_count": (nx.population_count, lambda p, bits: bin(p).count("1")),
    "count_leading_zeros": (nx.count_leading_zeros, lambda p, bits: bits - p.bit_length()),
}


def _bit_edges(d: dtypes.DType) -> np.ndarray:
    info = np.iinfo(d.numpy_dtype)
    bits = d.numpy_dtype.itemsize * 8
    vals = {0, 1, 2, 3, 5, info.max, info.min, info.max - 1}
    vals |= {1 << i for i in range(bits - (d.kind == "i"))}
    vals |= {(1 << i) - 1 for i in range(1, bits - (d.kind == "i"))}
    if d.kind == "i":
        vals |= {-1, -2, -(1 << (bits - 2))}
    return np.asarray(sorted(vals), d.numpy_dtype)


@pytest.mark.parametrize("d", ALL, ids=ids)
@pytest.mark.parametrize("name", sorted(BIT_COUNTS))
def test_bit_counts(name: str, d: dtypes.DType) -> None:
    fn, ref = BIT_COUNTS[name]
    if d.kind not in "iu":
        with pytest.raises(nx.DTypeError, match=rf"{name}: unsupported dtype for .* takes integer"):
            fn(t(sample(d), d))
        return
    for a in (sample(d), _bit_edges(d)):
        check(fn(t(a)), _bits_ref(a, ref), d)


@pytest.mark.parametrize("shape", UNARY_SHAPES, ids=shape_id)
@pytest.mark.parametrize("name", sorted(BIT_COUNTS))
def test_bit_counts_shapes(name: str, shape: tuple[int, ...]) -> None:
    fn, ref = BIT_COUNTS[name]
    a = sample(dtypes.int16, shape)
    for arr in (a, noncontiguous(a)):
        check(fn(t(arr)), _bits_ref(a, ref), dtypes.int16)


def test_bit_counts_refusal_message() -> None:
    with pytest.raises(
        nx.DTypeError,
        match=r"population_count: unsupported dtype for pred\[2\] \w+\([^)]*\); population_count "
        r"takes integer dtypes",
    ):
        nx.population_count(t(np.asarray([True, False])))
    with pytest.raises(nx.DTypeError, match=r"count_leading_zeros: .* f32\[1\]"):
        nx.count_leading_zeros(t(np.asarray([1.0], np.float32)))


def _bitcast_ok(a: dtypes.DType, b: dtypes.DType) -> bool:
    return a.kind in "iuf" and b.kind in "iuf" and a.numpy_dtype.itemsize == b.numpy_dtype.itemsize


def _bits_of(a: np.ndarray) -> np.ndarray:
    return a.view(f"u{a.dtype.itemsize}")


@pytest.mark.parametrize("p", ALL_PAIRS, ids=pair_ids)
def test_bitcast(p: tuple[dtypes.DType, dtypes.DType]) -> None:
    src, dst = p
    a = sample(src, (3, 4))
    if src.kind == "f":
        a.reshape(-1)[:3] = np.asarray([np.nan, -np.inf, -0.0]).astype(src.numpy_dtype)
    if not _bitcast_ok(src, dst):
        with pytest.raises(nx.DTypeError, match=r"bitcast: "):
            nx.bitcast(t(a), dst)
        return
    r = nx.bitcast(t(a), dst)
    want = a.view(dst.numpy_dtype)
    check(r, want, dst)
    np.testing.assert_array_equal(_bits_of(r.to_numpy()), _bits_of(want))  # bit for bit
    back = nx.bitcast(r, src)
    check(back, a, src)
    np.testing.assert_array_equal(_bits_of(back.to_numpy()), _bits_of(a))


@pytest.mark.parametrize("shape", UNARY_SHAPES, ids=shape_id)
def test_bitcast_shapes(shape: tuple[int, ...]) -> None:
    a = sample(dtypes.float32, shape)
    for arr in (a, noncontiguous(a)):
        r = nx.bitcast(t(arr), nx.uint32)
        check(r, a.view(np.uint32), dtypes.uint32)
        check(nx.bitcast(r, "float32"), a, dtypes.float32)


def test_bitcast_special_bit_patterns() -> None:
    # NaN payloads, signed zero and subnormals survive a round trip bit for bit
    u = np.asarray([0x7FC00001, 0xFFC00000, 0x7F800001, 0x80000000, 0x00000001, 0x7F7FFFFF],
                   np.uint32)  # fmt: skip
    f = nx.bitcast(t(u), nx.float32)
    np.testing.assert_array_equal(_bits_of(f.to_numpy()), u)
    check(nx.bitcast(f, nx.int32), u.view(np.int32), dtypes.int32)


def test_bitcast_errors() -> None:
    with pytest.raises(
        nx.DTypeError,
        match=r"bitcast: float32 \(32 bits\) and int64 \(64 bits\) differ in bit width; got "
        r"f32\[2\] \w+\([^)]*\)",
    ):
        nx.bitcast(t(np.zeros(2, np.float32)), nx.int64)
    with pytest.raises(
        nx.DTypeError, match=r"bitcast: takes integer and floating dtypes, got bool"
    ):
        nx.bitcast(t(np.zeros(2, np.uint8)), nx.bool_)
    with pytest.raises(
        nx.DTypeError, match=r"bitcast: takes integer and floating dtypes, got bool"
    ):
        nx.bitcast(t(np.zeros(2, bool)), nx.int8)
    with pytest.raises(
        nx.DTypeError, match=r"bitcast: takes integer and floating dtypes, got complex64"
    ):
        nx.bitcast(t(np.zeros(2, np.complex64)), nx.float64)
    with pytest.raises(nx.DTypeError, match=r"bitcast: float16 \(16 bits\) and uint8 \(8 bits\)"):
        nx.bitcast(t(np.zeros(2, np.float16)), "uint8")
