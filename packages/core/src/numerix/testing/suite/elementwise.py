"""Element-wise ops against numpy: every dtype, edge shapes, promotion, refusals.

Each op is described once (numerix function, numpy reference, the dtype rule its
docstring states, and the values to sample); the tests below run every description
over every dtype and dtype pair.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

import numerix as nx
from numerix import dtypes
from numerix.defn.compilers import compilers_serving
from numerix.primitives import REGISTRY
from numerix.testing.oracle import (
    ALL,
    ALL_PAIRS,
    BINARY_SHAPES,
    FLOATS,
    INTS,
    REAL,
    UNARY_SHAPES,
    Cases,
    check,
    expected_promotion,
    ids,
    noncontiguous,
    oracle,
    pair_ids,
    sample,
    shape_id,
    t,
    weak_expected,
)

Rule = Callable[[dtypes.DType], "tuple[dtypes.DType, dtypes.DType] | None"]

# ---------------------------------------------------------------- dtype rules
# promoted dtype -> (compute dtype, result dtype), or None where the op refuses it


def numeric(p: dtypes.DType) -> tuple[dtypes.DType, dtypes.DType] | None:
    return None if p.kind == "b" else (p, p)


def inexact(p: dtypes.DType) -> tuple[dtypes.DType, dtypes.DType] | None:
    # bool and integers compute in float32 (as JAX and Nx)
    return (dtypes.float32, dtypes.float32) if p.kind in "biu" else (p, p)


def real(p: dtypes.DType) -> tuple[dtypes.DType, dtypes.DType] | None:
    return (p, p) if p.kind in "iuf" else None


def real_inexact(p: dtypes.DType) -> tuple[dtypes.DType, dtypes.DType] | None:
    return None if p.kind == "c" else inexact(p)


def int_or_bool(p: dtypes.DType) -> tuple[dtypes.DType, dtypes.DType] | None:
    return (p, p) if p.kind in "biu" else None


def compare(p: dtypes.DType) -> tuple[dtypes.DType, dtypes.DType] | None:
    return (p, dtypes.bool_)


def order(p: dtypes.DType) -> tuple[dtypes.DType, dtypes.DType] | None:
    return None if p.kind == "c" else (p, dtypes.bool_)


def magnitude(p: dtypes.DType) -> tuple[dtypes.DType, dtypes.DType] | None:
    if p.kind == "b":
        return None
    return (p, {dtypes.complex64: dtypes.float32, dtypes.complex128: dtypes.float64}.get(p, p))


# ---------------------------------------------------------------- op descriptions


@dataclass(frozen=True)
class BinOp:
    name: str
    fn: Callable[[Any, Any], nx.Tensor]
    ref: Callable[[Any, Any], Any]
    rule: Rule
    lhs: dict[str, Any] = field(default_factory=dict)
    rhs: dict[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        return self.name


#: The binary rows: every one is a primitive's, made from its declaration (below).
BINARY: list[BinOp] = []

# logical ops take every dtype (non-zero is true) and need no promotion
LOGICAL = [
    ("logical_and", nx.logical_and, np.logical_and),
    ("logical_or", nx.logical_or, np.logical_or),
    ("logical_xor", nx.logical_xor, np.logical_xor),
]


@dataclass(frozen=True)
class UnOp:
    name: str
    fn: Callable[[Any], nx.Tensor]
    ref: Callable[[Any], Any]
    rule: Rule
    kw: dict[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        return self.name


#: The rows of the unary ops that are not primitives; the primitives' rows are made from
#: their declarations (below).
UNARY = [
    UnOp("positive", nx.positive, np.positive, numeric),
    UnOp("trunc", nx.trunc, np.trunc, real),
    UnOp("square", nx.square, np.square, numeric),
    UnOp("reciprocal", nx.reciprocal, np.reciprocal, inexact, {"nonzero": True}),
    UnOp("logical_not", nx.logical_not, np.logical_not, compare),
]


#: The kit's own dtype expectation for each category a declaration names (the same
#: categories as the core's tables, written here again on purpose: an oracle).
KIT_RULES: dict[str, Rule] = {
    "numeric": numeric,
    "inexact": inexact,
    "real": real,
    "real_inexact": real_inexact,
    "integer_or_bool": int_or_bool,
    "compare": compare,
    "order": order,
    "abs": magnitude,
}


def kit_family(p: Any) -> str | None:
    """Which of the kit's element-wise checks a primitive's declaration asks for: None
    without ``oracle=``; ``"domain"`` with ``domain=`` (a transcendental function, over its
    domain and at the special values: elementwise_more); ``"classify"`` for its category
    (values holding NaN and infinities: elementwise_more); else ``"rows"`` (UNARY and
    BINARY here, which the compiled and fuzz checks read too)."""
    if p.family != "elementwise" or p.extra.get("oracle") is None:
        return None
    if "domain" in p.extra:
        return "domain"
    return "classify" if p.extra["category"] == "classify" else "rows"


def kit_oracle(p: Any) -> Callable[..., Any]:
    """The numpy reference a declaration names: a numpy function's name, or a function."""
    o = p.extra["oracle"]
    return o if callable(o) else getattr(np, o)


def kit_rule(p: Any) -> Rule:
    """The kit's own dtype expectation for a declaration's category."""
    rule = KIT_RULES.get(p.extra["category"])
    if rule is None:
        raise LookupError(
            f"{p.name}: the kit has no dtype expectation for category "
            f"{p.extra['category']!r}; write its row by hand"
        )
    return rule


def declared_rows(primitives: Any) -> tuple[list[UnOp], list[BinOp]]:
    """Rows for the element-wise primitives whose declaration names a numpy oracle
    (``_unary("exp2", _table_inexact, "2**x", oracle="exp2")``) and no other check
    (:func:`kit_family`): a new primitive with a numpy namesake is checked by the kit, on
    every backend and compiler, with no row of its own. A primitive with an oracle must
    have no row above (a core test checks)."""
    unary: list[UnOp] = []
    binary: list[BinOp] = []
    for p in primitives:
        if kit_family(p) != "rows":
            continue
        rule, fn, ref = kit_rule(p), getattr(nx, p.name), kit_oracle(p)
        sample = p.extra.get("sample", {})
        if p.extra["arity"] == 1:
            unary.append(UnOp(p.name, fn, ref, rule, dict(sample)))
        else:
            lhs, rhs = p.extra.get("lhs", sample), p.extra.get("rhs", sample)
            binary.append(BinOp(p.name, fn, ref, rule, dict(lhs), dict(rhs)))
    return unary, binary


_DECLARED = declared_rows(REGISTRY)
UNARY += _DECLARED[0]
BINARY += _DECLARED[1]
_sigmoid = next(op.ref for op in UNARY if op.name == "sigmoid")


def draw(d: dtypes.DType, shape: tuple[int, ...], seed: int, kw: dict[str, Any]) -> np.ndarray:
    kw = dict(kw)
    coarse = kw.pop("coarse", False)
    a = sample(d, shape, seed, **kw)
    if coarse and d.kind in "fc":
        # values on a 0.5 grid: ties for comparisons, halves for round-half-to-even
        a = (np.round(a.astype(np.complex128 if d.kind == "c" else np.float64) * 2) / 2).astype(
            d.numpy_dtype
        )
    return a


def expect_binary(
    op: BinOp, a: np.ndarray, b: np.ndarray, compute: dtypes.DType, out: dtypes.DType
):
    return oracle(op.ref, a, b, compute=compute, out=out)


# ---------------------------------------------------------------- binary ops


@pytest.mark.parametrize("shapes", BINARY_SHAPES, ids=shape_id)
@pytest.mark.parametrize("dtype", ALL, ids=ids)
@pytest.mark.parametrize("op", BINARY, ids=str)
def test_binary_one_dtype(op: BinOp, dtype: dtypes.DType, shapes: Any) -> None:
    a = draw(dtype, shapes[0], 1, op.lhs)
    b = draw(dtype, shapes[1], 2, op.rhs)
    rule = op.rule(dtype)
    if rule is None:
        with pytest.raises(
            nx.DTypeError, match=f"^{op.name}: unsupported dtypes {dtype} and {dtype}"
        ):
            op.fn(t(a), t(b))
        return
    check(op.fn(t(a), t(b)), expect_binary(op, a, b, *rule), rule[1])


@pytest.mark.parametrize(
    ("op", "dtype"), [(o, d) for o in BINARY for d in ALL if o.rule(d)], ids=lambda x: str(x)
)
def test_binary_noncontiguous_numpy_inputs(op: BinOp, dtype: dtypes.DType) -> None:
    rule = op.rule(dtype)
    assert rule is not None
    a = draw(dtype, (3, 4), 3, op.lhs)
    b = draw(dtype, (3, 4), 4, op.rhs)
    a1, b1 = noncontiguous(a), noncontiguous(b[:, :1].copy())  # (3, 1), strided
    check(op.fn(t(a1), t(b1)), expect_binary(op, a, b[:, :1], *rule), rule[1])
    # a numpy array meets a tensor directly, as an operand
    check(op.fn(t(a1), b1), expect_binary(op, a, b[:, :1], *rule), rule[1])


@pytest.mark.parametrize("pair", ALL_PAIRS, ids=pair_ids)
def test_binary_promotion(pair: tuple[dtypes.DType, dtypes.DType]) -> None:
    da, db = pair
    p = expected_promotion(da, db)
    cases = Cases()
    for op in BINARY:
        with cases.case(op.name):
            a = draw(da, (3, 4), 5, op.lhs)
            b = draw(db, (4,), 6, op.rhs)
            if p is None:
                with pytest.raises(
                    nx.DTypeError, match=f"^{op.name}: cannot promote {da} with {db}"
                ):
                    op.fn(t(a), t(b))
                continue
            rule = op.rule(p)
            if rule is None:
                with pytest.raises(
                    nx.DTypeError, match=f"^{op.name}: unsupported dtypes {da} and {db}"
                ):
                    op.fn(t(a), t(b))
                continue
            check(op.fn(t(a), t(b)), expect_binary(op, a, b, *rule), rule[1])
    for name, fn, ref in LOGICAL:
        with cases.case(name):
            a = draw(da, (3, 4), 5, {})
            b = draw(db, (4,), 6, {})
            check(
                fn(t(a), t(b)),
                ref(
                    a.astype(np.float32) if da is dtypes.bfloat16 else a,
                    b.astype(np.float32) if db is dtypes.bfloat16 else b,
                ),
                dtypes.bool_,
            )
    cases.finish()


def _truth(a: np.ndarray) -> np.ndarray:
    return np.asarray(a).astype(np.float32) != 0 if a.dtype == dtypes.bfloat16.numpy_dtype else a


@pytest.mark.parametrize("shapes", BINARY_SHAPES, ids=shape_id)
@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_logical_ops(dtype: dtypes.DType, shapes: Any) -> None:
    # every dtype is accepted (non-zero is true) and the result is bool
    a, b = sample(dtype, shapes[0], 1), sample(dtype, shapes[1], 2)
    for _, fn, ref in LOGICAL:
        want = ref(_truth(a), _truth(b))
        check(fn(t(a), t(b)), want, dtypes.bool_)
        check(fn(noncontiguous(a), t(b)), want, dtypes.bool_)
        for s in (0, 2, 0.0, 1.5, True, False, 1j):
            check(fn(t(a), s), ref(_truth(a), s), dtypes.bool_)
            check(fn(s, t(b)), ref(s, _truth(b)), dtypes.bool_)


SCALARS = {"bool": True, "int": 3, "float": 1.5, "complex": 0.5 + 1j}


@pytest.mark.parametrize("kind", SCALARS, ids=str)
@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_binary_python_scalars_are_weak(dtype: dtypes.DType, kind: str) -> None:
    s = SCALARS[kind]
    w = weak_expected(dtype, s)
    cases = Cases()
    for op in BINARY:
        a = draw(dtype, (2, 3), 7, {"positive": True, "coarse": "coarse" in op.lhs})
        rule = op.rule(w)
        for side in ("tensor-scalar", "scalar-tensor"):
            args = (t(a), s) if side == "tensor-scalar" else (s, t(a))
            with cases.case(f"{op.name} {side}"):
                if rule is None:
                    with pytest.raises(nx.DTypeError, match=f"^{op.name}: unsupported dtypes"):
                        op.fn(*args)
                    continue
                npargs = (a, np.asarray(s)) if side == "tensor-scalar" else (np.asarray(s), a)
                check(op.fn(*args), oracle(op.ref, *npargs, compute=rule[0], out=rule[1]), rule[1])
    cases.finish()


@pytest.mark.parametrize("dtype", [dtypes.float16, dtypes.bfloat16, dtypes.float32], ids=ids)
def test_python_floats_beyond_the_dtype_overflow_as_numpy(dtype: dtypes.DType) -> None:
    # a weak Python float too large for the tensor's dtype is cast as numpy casts it
    # (to +-inf; within half an ulp of the largest value, to it), never refused
    a = np.array([1.0, -2.0, 0.0], dtype.numpy_dtype)
    big = float(dtypes.finfo(dtype).max)
    for s in (1e300, -1e300, big * (1 + 2.0**-30)):
        with np.errstate(over="ignore", invalid="ignore"):
            v = np.array(s, dtype.numpy_dtype)
            want_add, want_mul = a + v, a * v
        check(nx.add(t(a), s), want_add, dtype)
        check(nx.multiply(s, t(a)), want_mul, dtype)
        check(nx.full((2,), s, dtype=dtype), np.full(2, v), dtype)


def test_python_scalar_operands_kept_apart_by_type_sign_and_dtype() -> None:
    # the 0-d operand a Python scalar becomes is kept per (backend, dtype, value): keys
    # that compare equal (0.0 and -0.0; 1, 1.0 and True) must not share one
    a = np.array([1.0, -2.0], np.float32)
    for s in (0.0, -0.0, 0.0, -0.0):
        got = nx.multiply(t(a), s)
        check(got, a * np.float32(s), nx.float32)
        assert (np.signbit(np.asarray(got)) == np.signbit(a * np.float32(s))).all(), s
        check(nx.add(s, t(a)), np.float32(s) + a, nx.float32)
    i = np.array([1, -2], np.int8)
    for s, want in ((1, nx.int8), (True, nx.int8), (1.0, nx.float32), (1, nx.int8)):
        check(nx.add(t(i), s), i.astype(want.numpy_dtype) + want.numpy_dtype.type(s), want)
    b = np.array([True, False])
    check(nx.add(t(b), 1), b.astype(np.int64) + 1, nx.int64)
    check(nx.logical_xor(t(b), True), b ^ True, nx.bool_)
    with np.errstate(invalid="ignore"):
        check(nx.add(t(a), float("nan")), a + np.float32("nan"), nx.float32)
    # more values than are kept: each op still meets its own
    for s in range(0, 1100, 7):
        check(nx.multiply(t(a), float(s)), a * np.float32(s), nx.float32)


@pytest.mark.parametrize(
    ("x", "s", "want"),
    [
        # the examples the promotion rules are stated with
        (nx.float32, 1.0, nx.float32),
        (nx.int8, 1, nx.int8),
        (nx.uint8, 1, nx.uint8),
        (nx.int16, 1.5, nx.float32),
        (nx.bool, 1, nx.int64),
        (nx.bool, 1.0, nx.float32),
        (nx.float16, 1.0, nx.float16),
        (nx.bfloat16, 2, nx.bfloat16),
        (nx.float64, 1j, nx.complex128),
        (nx.float16, 1j, nx.complex64),
        (nx.int32, 1j, nx.complex64),
    ],
    ids=str,
)
def test_weak_scalar_examples(x: dtypes.DType, s: Any, want: dtypes.DType) -> None:
    a = sample(x, (4,), 8, positive=True)
    r = nx.add(t(a), s)
    check(r, oracle(np.add, a, np.asarray(s), compute=want, out=want), want)
    assert nx.result_type(t(a), s) is want


@pytest.mark.parametrize(
    ("x", "y"),
    [(1, 2), (1, 2.5), (2.5, 1), (True, 2), (2, True), (1, 2j), (1.5, 2j), (False, 0.5)],
    ids=str,
)
def test_binary_two_python_scalars(x: Any, y: Any) -> None:
    # two weak scalars: the first takes its default dtype, the second promotes weakly
    first = {bool: nx.bool, int: nx.int64, float: nx.float32, complex: nx.complex64}[type(x)]
    want = weak_expected(first, y)
    check(nx.add(x, y), oracle(np.add, np.asarray(x), np.asarray(y), compute=want, out=want), want)
    d = inexact(want)[1]
    check(
        nx.divide(x, y), oracle(np.true_divide, np.asarray(x), np.asarray(y), compute=d, out=d), d
    )


def test_binary_two_bool_scalars_refused() -> None:
    with pytest.raises(nx.DTypeError, match=r"^add: unsupported dtypes bool and bool"):
        nx.add(True, False)


@pytest.mark.parametrize("dtype", INTS, ids=ids)
def test_python_int_out_of_range_is_refused(dtype: dtypes.DType) -> None:
    info = np.iinfo(dtype.numpy_dtype)
    x = t(sample(dtype, (3,), 9))
    for v in (int(info.max) + 1, int(info.min) - 1):
        with pytest.raises(nx.DTypeError, match=rf"^add: Python int {v} does not fit {dtype}"):
            nx.add(x, v)
        with pytest.raises(nx.DTypeError, match=rf"^less: Python int {v} does not fit {dtype}"):
            nx.less(v, x)
    # the extremes themselves fit
    check(nx.maximum(x, int(info.max)), np.full(3, info.max, dtype.numpy_dtype), dtype)
    check(nx.minimum(x, int(info.min)), np.full(3, info.min, dtype.numpy_dtype), dtype)


def test_two_python_ints_out_of_int64_range_are_refused() -> None:
    with pytest.raises(
        nx.DTypeError, match=r"^add: Python int 9223372036854775808 does not fit int64"
    ):
        nx.add(2**63, 1)
    with pytest.raises(
        nx.DTypeError, match=r"^multiply: Python int -9223372036854775809 does not fit"
    ):
        nx.multiply(1, -(2**63) - 1)


@pytest.mark.parametrize("other", [nx.int8, nx.int16, nx.int32, nx.int64], ids=ids)
def test_uint64_with_signed_is_refused(other: dtypes.DType) -> None:
    a, b = t(sample(nx.uint64, (3,), 1)), t(sample(other, (3,), 2))
    with pytest.raises(nx.DTypeError, match=rf"^add: cannot promote uint64 with {other}.*astype"):
        nx.add(a, b)
    with pytest.raises(nx.DTypeError, match=rf"^equal: cannot promote {other} with uint64"):
        nx.equal(b, a)
    # the fix the message names works
    check(
        nx.add(a.astype(nx.int64), b),
        sample(nx.uint64, (3,), 1).astype(np.int64) + sample(other, (3,), 2).astype(np.int64),
        nx.int64,
    )


def test_numpy_arrays_and_scalars_are_strong() -> None:
    # numpy values carry their dtype (as in numpy 2 / NEP 50): they promote as tensors do
    a = sample(nx.float32, (3,), 1)
    b = np.arange(3, dtype=np.float64)
    check(nx.add(t(a), b), a.astype(np.float64) + b, nx.float64)
    check(nx.add(t(a), np.float64(2.0)), a.astype(np.float64) + 2.0, nx.float64)
    i8 = sample(nx.int8, (3,), 2)
    check(nx.multiply(t(i8), np.int16(3)), i8.astype(np.int16) * np.int16(3), nx.int16)


@pytest.mark.parametrize("dtype", [nx.int8, nx.int16, nx.int32, nx.int64], ids=ids)
def test_pow_negative_integer_exponent(dtype: dtypes.DType) -> None:
    # numerix defines x ** -n on integers as XLA does: 1 for x == 1, +-1 for x == -1
    # (by the parity of n), 0 otherwise; non-negative exponents are numpy's
    base = np.array([[1], [-1], [2], [-3], [0], [5]], dtype=dtype.numpy_dtype)
    exp = np.array([-3, -2, -1, 0, 1, 2], dtype=dtype.numpy_dtype)
    b, e = np.broadcast_arrays(base.astype(np.int64), exp.astype(np.int64))
    with np.errstate(all="ignore"):
        pos = np.power(b, np.maximum(e, 0))
    neg = np.where(b == 1, 1, np.where(b == -1, np.where(e % 2 == 0, 1, -1), 0))
    want = np.where(e < 0, neg, pos).astype(dtype.numpy_dtype)
    check(nx.pow(t(base), t(exp)), want, dtype)
    check(t(base) ** -1, np.where(base == 1, 1, np.where(base == -1, -1, 0)), dtype)


@pytest.mark.parametrize("dtype", [nx.float32, nx.float64, nx.complex64, nx.complex128], ids=ids)
def test_pow_zero_exponent_is_one(dtype: dtypes.DType) -> None:
    # x ** 0 is 1 for every x, zero, nan and infinities included (C99, numpy, XLA), eagerly
    # and under every compiler serving the backend
    specials = [0, 2, np.nan, np.inf] + (
        [complex(0, 1), complex(np.nan, 1)] if dtype.kind == "c" else []
    )
    base = np.array(specials, dtype=dtype.numpy_dtype)
    zero = np.zeros_like(base)
    want = np.ones_like(base)
    check(nx.pow(t(base), t(zero)), want, dtype)
    check(t(base) ** 0, want, dtype)
    for name in compilers_serving(nx.get_default_backend()):
        check(nx.jit(nx.pow, compiler=name)(t(base), t(zero)), want, dtype)


@pytest.mark.parametrize("dtype", [nx.complex64, nx.complex128], ids=ids)
def test_complex_sqrt_keeps_the_sign_of_a_zero_imaginary_part(dtype: dtypes.DType) -> None:
    # the branch cut along the negative reals: sqrt(-4 - 0j) is -2j, sqrt(-4 + 0j) is 2j
    # (C99, numpy), eagerly and under every compiler serving the backend
    a = np.array(
        [-4 + 0j, complex(-4, -0.0), complex(4, -0.0), complex(0, -0.0)], dtype.numpy_dtype
    )
    want = np.sqrt(a)
    for got in [nx.sqrt(t(a))] + [
        nx.jit(nx.sqrt, compiler=c)(t(a)) for c in compilers_serving(nx.get_default_backend())
    ]:
        check(got, want, dtype)
        np.testing.assert_array_equal(np.signbit(got.to_numpy().imag), np.signbit(want.imag))


def test_bool_true_divide_by_false_is_ieee() -> None:
    # bools divide in float32: False / False is nan, True / False inf, eagerly and under
    # every compiler serving the backend (a fusing compiler must not fold the conversions)
    a = np.array([[False, True, False], [True, False, True]])
    b = np.array(False)
    with np.errstate(all="ignore"):
        want = np.true_divide(a, b).astype(np.float32)
    check(nx.divide(t(a), t(b)), want, nx.float32)
    for name in compilers_serving(nx.get_default_backend()):
        check(nx.jit(nx.divide, compiler=name)(t(a), t(b)), want, nx.float32)
        check(nx.jit(lambda x, y: x / y, compiler=name)(t(a), t(np.array([False, True, True]))),
              np.true_divide(a, np.array([False, True, True]), dtype=np.float32), nx.float32)  # fmt: skip


def test_integer_division_by_zero_follows_numpy() -> None:
    a = np.array([7, -7, 0, 3], np.int32)
    z = np.zeros(4, np.int32)
    with np.errstate(all="ignore"):
        check(nx.floor_divide(t(a), t(z)), np.floor_divide(a, z), nx.int32)
        check(nx.remainder(t(a), t(z)), np.remainder(a, z), nx.int32)
        check(
            nx.divide(t(a), t(z)),
            np.true_divide(a.astype(np.float32), z.astype(np.float32)),
            nx.float32,
        )


@pytest.mark.filterwarnings("ignore:.*encountered in:RuntimeWarning")  # numpy warns too
@pytest.mark.parametrize("dtype", FLOATS, ids=ids)
def test_maximum_minimum_propagate_nan(dtype: dtypes.DType) -> None:
    a = np.array([np.nan, 1.0, np.nan, -np.inf], dtype.numpy_dtype)
    b = np.array([0.0, np.nan, np.nan, 2.0], dtype.numpy_dtype)
    wide = [x.astype(np.float32) for x in (a, b)]
    check(nx.maximum(t(a), t(b)), np.maximum(*wide), dtype)
    check(nx.minimum(t(a), t(b)), np.minimum(*wide), dtype)


@pytest.mark.filterwarnings("ignore:.*encountered in:RuntimeWarning")  # numpy warns too
@pytest.mark.parametrize("dtype", FLOATS, ids=ids)
def test_comparisons_with_nan_and_inf(dtype: dtypes.DType) -> None:
    a = np.array([np.nan, 1.0, np.inf, -np.inf, 0.0], dtype.numpy_dtype)
    b = np.array([np.nan, np.nan, np.inf, 0.0, -0.0], dtype.numpy_dtype)
    wa, wb = a.astype(np.float32), b.astype(np.float32)
    for fn, ref in [(nx.equal, np.equal), (nx.not_equal, np.not_equal), (nx.less, np.less),
                    (nx.less_equal, np.less_equal), (nx.greater, np.greater),
                    (nx.greater_equal, np.greater_equal)]:  # fmt: skip
        check(fn(t(a), t(b)), ref(wa, wb), nx.bool)


BINARY_OPERATORS = [
    (operator.add, nx.add), (operator.sub, nx.subtract), (operator.mul, nx.multiply),
    (operator.truediv, nx.divide), (operator.floordiv, nx.floor_divide),
    (operator.mod, nx.remainder), (operator.pow, nx.pow), (operator.and_, nx.bitwise_and),
    (operator.or_, nx.bitwise_or), (operator.xor, nx.bitwise_xor), (operator.eq, nx.equal),
    (operator.ne, nx.not_equal), (operator.lt, nx.less), (operator.le, nx.less_equal),
    (operator.gt, nx.greater), (operator.ge, nx.greater_equal),
]  # fmt: skip


@pytest.mark.parametrize("dtype", [nx.int32, nx.uint8, nx.float32, nx.bool], ids=ids)
@pytest.mark.parametrize(("pyop", "fn"), BINARY_OPERATORS, ids=lambda x: getattr(x, "__name__", ""))
def test_operators_are_the_ops(pyop: Any, fn: Any, dtype: dtypes.DType) -> None:
    a = sample(dtype, (2, 3), 1, positive=True)
    b = sample(dtype, (3,), 2, positive=True, small=True)
    s = 2 if dtype.kind != "b" else True
    for args in [(t(a), t(b)), (t(a), s), (s, t(b)), (a, t(b)), (t(a), b)]:
        try:
            want = fn(*args)
        except nx.DTypeError as e:
            with pytest.raises(nx.DTypeError, match=str(e).split(";")[0].split("(")[0]):
                pyop(*args)
            continue
        got = pyop(*args)
        assert isinstance(got, nx.Tensor)
        check(got, want.to_numpy(), want.dtype)
        # and it agrees with numpy (numpy promotes these dtypes the same way)
        npargs = [x.to_numpy() if isinstance(x, nx.Tensor) else x for x in args]
        with np.errstate(all="ignore"):
            ref = np.asarray(pyop(*npargs))
        if pyop is operator.truediv and ref.dtype == np.float64 and dtype.kind in "biu":
            ref = oracle(np.true_divide, *npargs, compute=nx.float32, out=nx.float32)
        np.testing.assert_allclose(
            got.to_numpy().astype(np.float64), ref.astype(np.float64), rtol=1e-6
        )


def test_unary_operators() -> None:
    a = sample(nx.int16, (2, 3), 1)
    check(-t(a), -a, nx.int16)
    check(+t(a), a, nx.int16)
    check(abs(t(a)), np.abs(a), nx.int16)
    check(~t(a), ~a, nx.int16)
    m = sample(nx.bool, (4,), 2)
    check(~t(m), ~m, nx.bool)
    with pytest.raises(nx.DTypeError, match=r"^negative: unsupported dtype"):
        -t(m)
    with pytest.raises(nx.DTypeError, match=r"^positive: unsupported dtype"):
        +t(m)


# ---------------------------------------------------------------- unary ops


@pytest.mark.parametrize("shape", UNARY_SHAPES, ids=shape_id)
@pytest.mark.parametrize("dtype", ALL, ids=ids)
@pytest.mark.parametrize("op", UNARY, ids=str)
def test_unary(op: UnOp, dtype: dtypes.DType, shape: tuple[int, ...]) -> None:
    a = draw(dtype, shape, 11, op.kw)
    rule = op.rule(dtype)
    if rule is None:
        with pytest.raises(nx.DTypeError, match=f"^{op.name}: unsupported dtype"):
            op.fn(t(a))
        return
    check(op.fn(t(a)), oracle(op.ref, a, compute=rule[0], out=rule[1]), rule[1])


@pytest.mark.parametrize(
    ("op", "dtype"), [(o, d) for o in UNARY for d in ALL if o.rule(d)], ids=lambda x: str(x)
)
def test_unary_noncontiguous_numpy_input(op: UnOp, dtype: dtypes.DType) -> None:
    rule = op.rule(dtype)
    assert rule is not None
    a = draw(dtype, (3, 5), 12, op.kw)
    want = oracle(op.ref, a, compute=rule[0], out=rule[1])
    check(op.fn(t(noncontiguous(a))), want, rule[1])
    check(op.fn(noncontiguous(a)), want, rule[1])  # a bare numpy array is an operand too


@pytest.mark.filterwarnings("ignore:.*encountered in:RuntimeWarning")  # numpy warns too
@pytest.mark.parametrize("dtype", FLOATS, ids=ids)
def test_unary_special_values(dtype: dtypes.DType) -> None:
    a = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 2.5, -2.5, 0.5, 1.5], dtype.numpy_dtype)
    for fn, ref in [(nx.sign, np.sign), (nx.abs, np.abs), (nx.floor, np.floor), (nx.ceil, np.ceil),
                    (nx.round, np.round), (nx.exp, np.exp), (nx.tanh, np.tanh),
                    (nx.negative, np.negative), (nx.sigmoid, _sigmoid), (nx.trunc, np.trunc)]:  # fmt: skip
        want = oracle(ref, a, compute=dtype, out=dtype)
        got = fn(t(a))
        check(got, want, dtype)
        # the zeros' signs too (sign(-0.0) is +0.0, floor(-0.0) is -0.0), NaN aside
        g, w = np.asarray(got.to_numpy(), np.float64), np.asarray(want, np.float64)
        keep = ~np.isnan(w)
        assert (np.signbit(g[keep]) == np.signbit(w[keep])).all(), (fn.__name__, g, w)
    pos = np.array([0.0, np.inf, 1.0, -1.0, np.nan], dtype.numpy_dtype)
    for fn, ref in [(nx.log, np.log), (nx.sqrt, np.sqrt)]:
        check(fn(t(pos)), oracle(ref, pos, compute=dtype, out=dtype), dtype)


@pytest.mark.parametrize("dtype", FLOATS, ids=ids)
def test_sigmoid_does_not_overflow(dtype: dtypes.DType) -> None:
    a = np.array([-1e4, -100.0, -30.0, 0.0, 30.0, 100.0, 1e4], np.float64)
    a = a.astype(dtype.numpy_dtype)
    with np.errstate(over="raise"):
        r = nx.sigmoid(t(a))
    check(r, oracle(_sigmoid, a, compute=dtype, out=dtype), dtype)


@pytest.mark.parametrize("dtype", INTS, ids=ids)
def test_integer_wraparound_as_numpy(dtype: dtypes.DType) -> None:
    info = np.iinfo(dtype.numpy_dtype)
    a = np.array([info.max, info.min, 1], dtype.numpy_dtype)
    with np.errstate(all="ignore"):
        check(nx.add(t(a), 1), a + dtype.numpy_dtype.type(1), dtype)
        check(nx.negative(t(a)), np.negative(a), dtype)
        check(nx.abs(t(a)), np.abs(a), dtype)


def test_math_on_lists_and_scalars() -> None:
    # Python data becomes a tensor of its default dtype first
    check(nx.exp(1), np.exp(np.float32(1)), nx.float32)
    check(nx.sqrt([4, 9]), np.sqrt(np.array([4, 9], np.float32)), nx.float32)
    check(nx.negative([[1.5, 2.0]]), np.negative(np.array([[1.5, 2.0]], np.float32)), nx.float32)
    check(nx.abs(-3), np.int64(3), nx.int64)


# ---------------------------------------------------------------- refusals, messages pinned


def test_refusal_messages() -> None:
    b = t(np.array([True, False]))
    f = t(np.array([1.0, 2.0], np.float32))
    c = t(np.array([1j, 2.0], np.complex64))
    with pytest.raises(
        nx.DTypeError,
        match=r"^add: unsupported dtypes bool and bool \(pred\[2\] "
        r"\w+\([^)]*\), pred\[2\] \w+\([^)]*\)\); add takes "
        r"numeric dtypes \(not bool\)",
    ):
        nx.add(b, b)
    with pytest.raises(
        nx.DTypeError,
        match=r"^bitwise_and: unsupported dtypes float32 and float32 "
        r".*takes integer or bool dtypes",
    ):
        nx.bitwise_and(f, f)
    with pytest.raises(
        nx.DTypeError,
        match=r"^bitwise_invert: unsupported dtype for f32\[2\] "
        r"\w+\([^)]*\); bitwise_invert takes integer or bool",
    ):
        nx.bitwise_invert(f)
    with pytest.raises(
        nx.DTypeError,
        match=r"^less: unsupported dtypes complex64 and complex64 .*"
        r"complex numbers have no order",
    ):
        nx.less(c, c)
    with pytest.raises(nx.DTypeError, match=r"^maximum: unsupported dtypes complex64 and float32"):
        nx.maximum(c, f)
    with pytest.raises(nx.DTypeError, match=r"^sigmoid: unsupported dtype for c64\[2\]"):
        nx.sigmoid(c)
    with pytest.raises(nx.DTypeError, match=r"^floor: unsupported dtype for c64\[2\]"):
        nx.floor(c)
    with pytest.raises(nx.DTypeError, match=r"^square: unsupported dtype for pred\[2\]"):
        nx.square(b)
    with pytest.raises(nx.DTypeError, match=r"^trunc: unsupported dtype for c64\[2\]"):
        nx.trunc(c)


def test_incompatible_broadcast_shapes() -> None:
    a, b = nx.ones((2, 3)), nx.ones((4,))
    msg = (
        r"^add: shapes \(2, 3\) and \(4,\) cannot be broadcast together \(dimensions must be "
        r"equal or 1, aligned from the right\)"
    )
    with pytest.raises(nx.ShapeError, match=msg):
        nx.add(a, b)
    with pytest.raises(
        nx.ShapeError, match=r"^less: shapes \(3, 2\) and \(3,\) cannot be broadcast"
    ):
        nx.less(nx.ones((3, 2)), nx.ones((3,)))
    with pytest.raises(
        nx.ShapeError, match=r"^add: shapes \(2, 0\) and \(3,\) cannot be broadcast"
    ):
        nx.add(nx.ones((2, 0)), nx.ones((3,)))


# ---------------------------------------------------------------- where


@pytest.mark.parametrize("pair", ALL_PAIRS, ids=pair_ids)
def test_where_promotes_branches(pair: tuple[dtypes.DType, dtypes.DType]) -> None:
    da, db = pair
    cond = sample(nx.bool, (3, 1), 1)
    a = sample(da, (1, 4), 2)
    b = sample(db, (), 3)
    p = expected_promotion(da, db)
    if p is None:
        with pytest.raises(nx.DTypeError, match=f"^where: cannot promote {da} with {db}"):
            nx.where(t(cond), t(a), t(b))
        return
    want = np.where(cond, a.astype(p.numpy_dtype), b.astype(p.numpy_dtype))
    check(nx.where(t(cond), t(a), t(b)), want, p)


@pytest.mark.parametrize("shapes", [((), (), ()), ((0,), (0,), ()), ((2, 0), (1,), (2, 1)),
                                    ((5,), (5,), (5,)), ((2, 3), (), (3,)), ((), (2, 3), (2, 1))],
                         ids=shape_id)  # fmt: skip
@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_where_shapes(dtype: dtypes.DType, shapes: Any) -> None:
    sc, sa, sb = shapes
    cond, a, b = sample(nx.bool, sc, 4), sample(dtype, sa, 5), sample(dtype, sb, 6)
    check(nx.where(t(cond), t(a), t(b)), np.where(cond, a, b), dtype)
    check(nx.where(noncontiguous(cond), noncontiguous(a), t(b)), np.where(cond, a, b), dtype)


@pytest.mark.parametrize("kind", SCALARS, ids=str)
@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_where_python_scalars_are_weak(dtype: dtypes.DType, kind: str) -> None:
    s = SCALARS[kind]
    w = weak_expected(dtype, s)
    cond = sample(nx.bool, (2, 3), 7)
    a = sample(dtype, (2, 3), 8)
    sv = np.asarray(s).astype(w.numpy_dtype)
    check(nx.where(t(cond), t(a), s), np.where(cond, a.astype(w.numpy_dtype), sv), w)
    check(nx.where(t(cond), s, t(a)), np.where(cond, sv, a.astype(w.numpy_dtype)), w)


def test_where_two_scalars_and_errors() -> None:
    cond = sample(nx.bool, (4,), 9)
    check(nx.where(t(cond), 1, 2), np.where(cond, 1, 2).astype(np.int64), nx.int64)
    check(nx.where(t(cond), 1, 2.5), np.where(cond, 1, 2.5).astype(np.float32), nx.float32)
    check(nx.where(True, 1.5, 2.5), np.float32(1.5), nx.float32)
    with pytest.raises(nx.DTypeError, match=r"^where: condition must be bool, got s64\[3\]"):
        nx.where(nx.tensor([1, 0, 1]), 1, 2)
    with pytest.raises(
        nx.ShapeError, match=r"^where: shapes \(2,\) and \(3,\) and \(\) cannot be "
    ):
        nx.where(nx.tensor([True, False]), nx.ones((3,)), 0.0)
    with pytest.raises(nx.DTypeError, match=r"^where: Python int 300 does not fit int8"):
        nx.where(t(cond), t(np.ones(4, np.int8)), 300)
    with pytest.raises(
        nx.DTypeError, match=r"^where: Python int 9223372036854775808 does not fit int64"
    ):
        nx.where(t(cond), 2**63, 0)


# ---------------------------------------------------------------- clip


@pytest.mark.parametrize("dtype", REAL, ids=ids)
def test_clip(dtype: dtypes.DType) -> None:
    a = sample(dtype, (3, 4), 10)
    lo, hi = (2, 6) if dtype.kind == "u" else (-2, 3)
    if dtype.kind == "f":
        lo, hi = float(lo) + 0.5, float(hi) - 0.25
    check(nx.clip(t(a), lo, hi), np.clip(a, lo, hi), dtype)
    check(nx.clip(t(a), min=lo), np.clip(a, lo, None), dtype)
    check(nx.clip(t(a), max=hi), np.clip(a, None, hi), dtype)
    check(nx.clip(t(a)), a, dtype)
    check(t(a).clip(lo, hi), np.clip(a, lo, hi), dtype)
    # tensor bounds of the same dtype, broadcasting against x
    blo = sample(dtype, (1, 4), 11)
    bhi = (blo.astype(np.float64) + 3).astype(dtype.numpy_dtype)
    check(nx.clip(t(a), t(blo), t(bhi)), np.clip(a, blo, bhi), dtype)
    # numpy arrays as bounds behave as tensors of their dtype
    check(nx.clip(t(a), blo, bhi), np.clip(a, blo, bhi), dtype)
    # edge shapes and a non-contiguous input
    for s in [(), (0,), (2, 0)]:
        e = sample(dtype, s, 12)
        check(nx.clip(t(e), lo, hi), np.clip(e, lo, hi), dtype)
    check(nx.clip(noncontiguous(a), lo, hi), np.clip(a, lo, hi), dtype)


@pytest.mark.parametrize("dtype", [nx.bool, nx.complex64, nx.complex128], ids=ids)
def test_clip_refuses_bool_and_complex(dtype: dtypes.DType) -> None:
    with pytest.raises(
        nx.DTypeError, match=rf"^clip: takes real numeric tensors, got {dtype.short}\[3\]"
    ):
        nx.clip(t(sample(dtype, (3,), 1)), 0, 1)


def test_clip_keeps_the_dtype_of_x() -> None:
    x = t(np.array([1, 5, 9], np.int8))
    with pytest.raises(
        nx.DTypeError,
        match=r"^clip: float bound 2.5 would change the dtype of "
        r"s8\[3\] \w+\([^)]*\)",
    ):
        nx.clip(x, 2.5, None)
    with pytest.raises(
        nx.DTypeError, match=r"^clip: complex bound 1j would change the dtype of f32"
    ):
        nx.clip(nx.ones(3), None, 1j)
    with pytest.raises(
        nx.DTypeError,
        match=r"^clip: min s64\[1\] \w+\([^)]*\) would change the "
        r"dtype of s8\[3\]",
    ):
        nx.clip(x, nx.tensor([2]), None)
    with pytest.raises(
        nx.DTypeError,
        match=r"^clip: max s64\[1\] \w+\([^)]*\) would change the "
        r"dtype of s8\[3\]",
    ):
        nx.clip(x, None, np.array([4]))
    with pytest.raises(nx.DTypeError, match=r"^clip: Python int 300 does not fit int8"):
        nx.clip(x, 300, None)
    with pytest.raises(nx.DTypeError, match=r"^clip: Python int -1 does not fit uint8"):
        nx.clip(t(np.ones(3, np.uint8)), -1, 2)
    with pytest.raises(
        nx.ShapeError,
        match=r"^clip: bounds broadcast s8\[3\] \w+\([^)]*\) to shape "
        r"\(2, 3\)",
    ):
        nx.clip(x, t(np.zeros((2, 1), np.int8)), None)


# ---------------------------------------------------------------- astype


def _astype_source(src: dtypes.DType, dst: dtypes.DType) -> np.ndarray:
    # values numpy converts exactly as numerix documents: floats going to integers
    # stay inside the target's range (unsigned: non-negative), so the cast truncates
    a = sample(src, (3, 4), 13)
    if src.kind == "f" and dst.kind == "u":
        a = np.abs(a.astype(np.float32)).astype(src.numpy_dtype)
    return a


@pytest.mark.parametrize("pair", ALL_PAIRS, ids=pair_ids)
def test_astype(pair: tuple[dtypes.DType, dtypes.DType]) -> None:
    src, dst = pair
    a = _astype_source(src, dst)
    if src.kind == "c" and dst.kind != "c" and dst.kind != "b":
        with pytest.raises(
            nx.DTypeError,
            match=rf"^astype: casting complex {src.short}\[3\]\[4\] "
            rf"\w+\([^)]*\) to {dst} would drop the imaginary",
        ):
            nx.astype(t(a), dst)
        return
    via = a.astype(np.float32) if src is dtypes.bfloat16 else a
    with np.errstate(all="ignore"):
        want = via.astype(dst.numpy_dtype)
    for x in (t(a), noncontiguous(a)):
        check(nx.astype(x, dst), want, dst)
    check(t(a).astype(dst.name), want, dst)
    check(t(a).astype(dst.short), want, dst)
    check(nx.astype(t(a[:0]), dst), want[:0], dst)
    check(nx.astype(t(a[0, 0]), dst), want[0, 0], dst)


@pytest.mark.parametrize("dst", INTS, ids=ids)
@pytest.mark.parametrize("src", FLOATS, ids=ids)
def test_astype_float_to_int_saturates(src: dtypes.DType, dst: dtypes.DType) -> None:
    # numpy leaves these casts undefined; the binary backend defines them as XLA does:
    # NaN -> 0, everything else truncated toward zero and saturated at the integer range
    vals = [np.nan, np.inf, -np.inf, 1e30, -1e30, 3e9, -3e9, 7e4, -7e4, 300.7, -300.7, 2.9, -2.9,
            2.0**31, 2.0**63, 2.0**64, -(2.0**63)]  # fmt: skip
    with np.errstate(over="ignore"):
        a = np.array(vals, np.float64).astype(src.numpy_dtype)
    info = np.iinfo(dst.numpy_dtype)
    tr = np.trunc(np.where(np.isnan(a.astype(np.float64)), 0, a.astype(np.float64)))
    want = [info.max if v >= info.max else info.min if v <= info.min else int(v) for v in tr]
    check(nx.astype(t(a), dst), np.array(want, dst.numpy_dtype), dst)


def test_astype_copy_semantics_and_errors() -> None:
    x = t(np.arange(3, dtype=np.float32))
    y = nx.astype(x, nx.float32)
    assert y is not x
    check(y, np.arange(3, dtype=np.float32), nx.float32)
    assert nx.astype(x, nx.float32, copy=False) is x
    assert x.astype("f32", copy=False) is x
    with pytest.raises(nx.DTypeError, match=r"^astype: unknown dtype 'float128'"):
        nx.astype(x, "float128")
