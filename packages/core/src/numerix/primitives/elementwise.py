"""Element-wise primitives: unary, binary, select and as_type.

Binary primitives receive two inputs of one *compute* dtype whose shapes broadcast
to ``out.shape`` (the backend broadcasts, as numpy does); unary primitives receive
one input of the compute dtype. The dtype rules are precomputed tables, one per
category, so that the eager hot path is one dict lookup.
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, Any

import numpy as np

from numerix import dtypes
from numerix._shapes import broadcast_shapes
from numerix.dtypes import ALL_DTYPES, PROMOTION_TABLE, DType
from numerix.primitives import _batch
from numerix.primitives._registry import (
    REGISTRY,
    Primitive,
    batch_rule,
    nondifferentiable,
    vjp_rule,
)
from numerix.primitives.nn import tanh_grad

if TYPE_CHECKING:
    from numerix._tensor import Tensor

#: What a derivative rule returns: one cotangent (or None) per input.
Cotangents = tuple["Tensor | None", ...]

# ---------------------------------------------------------------- dtype categories
# Each category maps the promoted input dtype to (compute dtype, output dtype), or None
# when the op refuses that dtype; `accepts` says what it takes, for the error message.

_NUMERIC = "bool is refused (cast with astype)"


def _table_numeric(d: DType) -> tuple[DType, DType] | None:
    return None if d.kind == "b" else (d, d)


def _table_real(d: DType) -> tuple[DType, DType] | None:
    return (d, d) if d.kind in "iuf" else None


def _table_real_or_bool(d: DType) -> tuple[DType, DType] | None:
    return (d, d) if d.kind in "biuf" else None


def _table_any(d: DType) -> tuple[DType, DType] | None:
    return (d, d)


def _table_inexact(d: DType) -> tuple[DType, DType] | None:
    # integers and bool compute in the default float, as Nx and JAX do
    if d.kind in "biu":
        return (dtypes.default_float(), dtypes.default_float())
    return (d, d)


def _table_real_inexact(d: DType) -> tuple[DType, DType] | None:
    if d.kind == "c":
        return None
    return _table_inexact(d)


def _table_integer_or_bool(d: DType) -> tuple[DType, DType] | None:
    return (d, d) if d.kind in "biu" else None


def _table_integer(d: DType) -> tuple[DType, DType] | None:
    return (d, d) if d.kind in "iu" else None


def _table_compare(d: DType) -> tuple[DType, DType] | None:
    return (d, dtypes.bool_)


def _table_order(d: DType) -> tuple[DType, DType] | None:
    return None if d.kind == "c" else (d, dtypes.bool_)


def _table_abs(d: DType) -> tuple[DType, DType] | None:
    if d.kind == "b":
        return None
    if d is dtypes.complex64:
        return (d, dtypes.float32)
    if d is dtypes.complex128:
        return (d, dtypes.float64)
    return (d, d)


def _table_real_part(d: DType) -> tuple[DType, DType] | None:
    if d is dtypes.complex64:
        return (d, dtypes.float32)
    if d is dtypes.complex128:
        return (d, dtypes.float64)
    return None


def _table_complex(d: DType) -> tuple[DType, DType] | None:
    return (d, d) if d.kind == "c" else None


def _table_classify(d: DType) -> tuple[DType, DType] | None:
    return (d, dtypes.bool_)


_CATEGORY_ACCEPTS = {
    _table_numeric: "numeric dtypes (not bool)",
    _table_real: "real numeric dtypes (integer or floating, not bool or complex)",
    _table_real_or_bool: "real dtypes (bool, integer or floating, not complex)",
    _table_any: "any dtype",
    _table_inexact: "numeric dtypes (integers compute in float32)",
    _table_real_inexact: "real dtypes (integers compute in float32; not complex)",
    _table_integer_or_bool: "integer or bool dtypes",
    _table_integer: "integer dtypes",
    _table_compare: "any dtype",
    _table_order: "real dtypes (complex numbers have no order)",
    _table_abs: "numeric dtypes (not bool)",
    _table_real_part: "complex dtypes",
    _table_complex: "complex dtypes",
    _table_classify: "any dtype",
}


# one table per category, shared by the primitives of that category (read-only)
@functools.cache
def _unary_table(cat) -> dict[DType, tuple[DType, DType] | None]:  # type: ignore[no-untyped-def]
    return {d: cat(d) for d in ALL_DTYPES}


@functools.cache
def _binary_table(cat) -> dict[tuple[DType, DType], tuple[DType, DType] | None]:  # type: ignore[no-untyped-def]
    # the category of each promoted dtype, read from the unary table (12 calls, not 144)
    unary = _unary_table(cat)
    return {pair: None if p is None else unary[p] for pair, p in PROMOTION_TABLE.items()}


# ---------------------------------------------------------------- rules


def elementwise_unary_shape_rule(x: tuple[int, ...]) -> tuple[int, ...]:
    return x


def elementwise_binary_shape_rule(
    x1: tuple[int, ...], x2: tuple[int, ...], op: str = "binary"
) -> tuple[int, ...]:
    return broadcast_shapes(op, x1, x2)


def _unary(name: str, cat, doc: str, **kit: Any) -> Primitive:  # type: ignore[no-untyped-def]
    """Declare a unary element-wise primitive of dtype category ``cat``.

    ``kit`` names the primitive's numpy oracle for the conformance kit, which then checks
    it on every backend and compiler with no row of its own (the kit's dtype expectation
    comes from its own table of categories, not from this one): ``oracle=`` is a numpy
    function's name (``"exp2"``) or, where numpy has none, a function of numpy arrays
    (below). How the kit draws the inputs: ``sample=`` (``{"positive": True}``,
    ``"nonzero"``, ``"small"``, ``"coarse"`` for values on a 0.5 grid) for the kit's
    element-wise rows, or ``domain=`` (``"any"``, ``"unit"`` for |x| < 1, ``"pos"``,
    ``"gtm1"``, ``"ge1"``) for a transcendental function, checked over its domain and at
    the special values with numpy's floating-point errors raised. The ``classify``
    category is checked on values holding NaN and infinities."""
    table = _unary_table(cat)

    def dtype_rule(x: DType) -> DType:
        r = table[x]
        if r is None:
            raise dtypes.DTypeError(f"{name}: unsupported dtype {x}")
        return r[1]

    return REGISTRY.declare(
        name, "elementwise", inputs=("x",), shape_rule=elementwise_unary_shape_rule,
        dtype_rule=dtype_rule, doc=doc, table=table, accepts=_CATEGORY_ACCEPTS[cat], arity=1,
        category=cat.__name__.removeprefix("_table_"), **kit,
    )  # fmt: skip


def _binary(name: str, cat, doc: str, **kit: Any) -> Primitive:  # type: ignore[no-untyped-def]
    """Declare a binary element-wise primitive; ``kit`` as for :func:`_unary`, with
    ``sample=`` for both operands or ``lhs=`` and ``rhs=`` for each."""
    table = _binary_table(cat)

    def dtype_rule(x1: DType, x2: DType) -> DType:
        r = table[(x1, x2)]
        if r is None:
            raise dtypes.DTypeError(f"{name}: unsupported dtypes {x1} and {x2}")
        return r[1]

    return REGISTRY.declare(
        name, "elementwise", inputs=("x1", "x2"), shape_rule=elementwise_binary_shape_rule,
        dtype_rule=dtype_rule, doc=doc, table=table, accepts=_CATEGORY_ACCEPTS[cat],
        unary_table=_unary_table(cat), arity=2, category=cat.__name__.removeprefix("_table_"),
        **kit,
    )  # fmt: skip


# ---------------------------------------------------------------- oracles numpy lacks
# functions of numpy arrays, evaluated by the kit on inputs widened to float64


def sigmoid_oracle(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def rsqrt_oracle(x: np.ndarray) -> np.ndarray:
    return 1 / np.sqrt(x)


# numpy has no erf: math's, element by element, in float64
_math_erf = np.frompyfunc(math.erf, 1, 1)
_math_erfc = np.frompyfunc(math.erfc, 1, 1)


def erf_oracle(x: np.ndarray) -> np.ndarray:
    return np.asarray(_math_erf(x), np.float64)


def erfc_oracle(x: np.ndarray) -> np.ndarray:
    return np.asarray(_math_erfc(x), np.float64)


# ---------------------------------------------------------------- unary
negative = _unary("negative", _table_numeric, "-x (integers wrap around)", oracle="negative")
abs = _unary("abs", _table_abs, "|x|; complex gives the real magnitude", oracle="abs")
sign = _unary("sign", _table_numeric, "-1, 0 or 1 (x/|x| for complex)", oracle="sign")
floor = _unary("floor", _table_real, "largest integer <= x; integers unchanged", oracle="floor")
ceil = _unary("ceil", _table_real, "smallest integer >= x; integers unchanged", oracle="ceil")
round = _unary(
    "round", _table_numeric, "round half to even; integers unchanged", oracle="round",
    sample={"coarse": True},
)  # fmt: skip
exp = _unary("exp", _table_inexact, "e**x", oracle="exp")
log = _unary("log", _table_inexact, "natural logarithm", oracle="log", sample={"positive": True})
sqrt = _unary("sqrt", _table_inexact, "square root", oracle="sqrt", sample={"positive": True})
tanh = _unary("tanh", _table_inexact, "hyperbolic tangent", oracle="tanh")
sigmoid = _unary(
    "sigmoid", _table_real_inexact, "1 / (1 + exp(-x)), computed without overflow",
    oracle=sigmoid_oracle,
)  # fmt: skip
exp2 = _unary("exp2", _table_inexact, "2**x", oracle="exp2")
expm1 = _unary("expm1", _table_inexact, "exp(x) - 1, accurate near 0", oracle="expm1", domain="any")
log1p = _unary(
    "log1p", _table_inexact, "log(1 + x), accurate near 0", oracle="log1p", domain="gtm1"
)
rsqrt = _unary("rsqrt", _table_inexact, "1 / sqrt(x)", oracle=rsqrt_oracle, domain="pos")
cbrt = _unary("cbrt", _table_real_inexact, "real cube root", oracle="cbrt", domain="any")
sin = _unary("sin", _table_inexact, "sine", oracle="sin", domain="any")
cos = _unary("cos", _table_inexact, "cosine", oracle="cos", domain="any")
tan = _unary("tan", _table_inexact, "tangent", oracle="tan", domain="unit")
asin = _unary(
    "asin", _table_inexact, "inverse sine (principal value)", oracle="arcsin", domain="unit"
)
acos = _unary(
    "acos", _table_inexact, "inverse cosine (principal value)", oracle="arccos", domain="unit"
)
atan = _unary(
    "atan", _table_inexact, "inverse tangent (principal value)", oracle="arctan", domain="any"
)
sinh = _unary("sinh", _table_inexact, "hyperbolic sine", oracle="sinh", domain="any")
cosh = _unary("cosh", _table_inexact, "hyperbolic cosine", oracle="cosh", domain="any")
asinh = _unary("asinh", _table_inexact, "inverse hyperbolic sine", oracle="arcsinh", domain="any")
acosh = _unary("acosh", _table_inexact, "inverse hyperbolic cosine", oracle="arccosh", domain="ge1")
atanh = _unary(
    "atanh", _table_inexact, "inverse hyperbolic tangent", oracle="arctanh", domain="unit"
)
erf = _unary("erf", _table_real_inexact, "the error function", oracle=erf_oracle, domain="any")
erfc = _unary(
    "erfc", _table_real_inexact, "1 - erf(x), accurate for large x", oracle=erfc_oracle,
    domain="any",
)  # fmt: skip
# no numpy oracle: the kit checks the round trip through erf (test_erf_inv)
erf_inv = _unary("erf_inv", _table_real_inexact, "inverse of erf: +-inf at +-1, NaN beyond")
isnan = _unary(
    "isnan", _table_classify, "x is NaN -> bool (false for bool and integers)", oracle="isnan"
)
isinf = _unary(
    "isinf", _table_classify, "x is +-inf -> bool (false for bool and integers)", oracle="isinf"
)
isfinite = _unary(
    "isfinite", _table_classify, "x is neither NaN nor inf -> bool", oracle="isfinite"
)
# the public ops take every dtype (the primitives complex only): test_real_imag_conj
real = _unary("real", _table_real_part, "real part of a complex number")
imag = _unary("imag", _table_real_part, "imaginary part of a complex number")
conj = _unary("conj", _table_complex, "complex conjugate")
bitwise_invert = _unary(
    "bitwise_invert", _table_integer_or_bool, "~x (logical not on bool)", oracle="invert"
)

# ---------------------------------------------------------------- binary
add = _binary("add", _table_numeric, "x1 + x2 (integers wrap around)", oracle="add")
subtract = _binary("subtract", _table_numeric, "x1 - x2 (integers wrap around)", oracle="subtract")
multiply = _binary("multiply", _table_numeric, "x1 * x2 (integers wrap around)", oracle="multiply")
divide = _binary(
    "divide", _table_inexact, "true division; integers compute in float32",
    oracle="true_divide", rhs={"nonzero": True},
)  # fmt: skip
floor_divide = _binary(
    "floor_divide", _table_real, "floor(x1 / x2); integer division by 0 gives 0",
    oracle="floor_divide", rhs={"nonzero": True},
)  # fmt: skip
remainder = _binary(
    "remainder", _table_real, "x1 - floor(x1/x2)*x2, the sign of x2 (numpy)",
    oracle="remainder", rhs={"nonzero": True},
)  # fmt: skip
# integer exponents stay >= 0 in the kit's rows (negative ones:
# test_pow_negative_integer_exponent)
pow = _binary(
    "pow", _table_numeric, "x1 ** x2", oracle="power", lhs={"positive": True},
    rhs={"positive": True, "small": True},
)  # fmt: skip
maximum = _binary("maximum", _table_real, "element-wise max; NaN propagates", oracle="maximum")
minimum = _binary("minimum", _table_real, "element-wise min; NaN propagates", oracle="minimum")
bitwise_and = _binary("bitwise_and", _table_integer_or_bool, "x1 & x2", oracle="bitwise_and")
bitwise_or = _binary("bitwise_or", _table_integer_or_bool, "x1 | x2", oracle="bitwise_or")
bitwise_xor = _binary("bitwise_xor", _table_integer_or_bool, "x1 ^ x2", oracle="bitwise_xor")
atan2 = _binary(
    "atan2", _table_real_inexact, "angle of (x2, x1) in [-pi, pi]; as numpy arctan2",
    oracle="arctan2", domain="any",
)  # fmt: skip
# no numpy oracle: numpy's shifts differ for amounts < 0 or >= the bit width; the kit
# checks them against Python integers (test_shift_*)
bitwise_left_shift = _binary(
    "bitwise_left_shift", _table_integer, "x1 << x2; amounts < 0 or >= the bit width give 0"
)
bitwise_right_shift = _binary(
    "bitwise_right_shift", _table_integer,
    "x1 >> x2 (arithmetic for signed); amounts < 0 or >= the bit width give -1 for negative "
    "signed x1, else 0",
)  # fmt: skip
# comparisons: the kit's values lie on a 0.5 grid, so that ties occur
equal = _binary(
    "equal", _table_compare, "x1 == x2 -> bool", oracle="equal", sample={"coarse": True}
)
not_equal = _binary(
    "not_equal", _table_compare, "x1 != x2 -> bool", oracle="not_equal", sample={"coarse": True}
)
less = _binary("less", _table_order, "x1 < x2 -> bool", oracle="less", sample={"coarse": True})
less_equal = _binary(
    "less_equal", _table_order, "x1 <= x2 -> bool", oracle="less_equal", sample={"coarse": True}
)
greater = _binary(
    "greater", _table_order, "x1 > x2 -> bool", oracle="greater", sample={"coarse": True}
)
greater_equal = _binary(
    "greater_equal", _table_order, "x1 >= x2 -> bool", oracle="greater_equal",
    sample={"coarse": True},
)  # fmt: skip


# ---------------------------------------------------------------- select, as_type


def select_shape_rule(
    pred: tuple[int, ...], on_true: tuple[int, ...], on_false: tuple[int, ...]
) -> tuple[int, ...]:
    return broadcast_shapes("where", pred, on_true, on_false)


def select_dtype_rule(pred: DType, on_true: DType, on_false: DType) -> DType:
    return dtypes.promote_types(on_true, on_false, "where")


select = REGISTRY.declare(
    "select", "elementwise", inputs=("pred", "on_true", "on_false"),
    shape_rule=select_shape_rule, dtype_rule=select_dtype_rule,
    doc="on_true where pred else on_false; pred is bool, branches share out.dtype, all broadcast",
)  # fmt: skip


def as_type_shape_rule(x: tuple[int, ...], *, dtype: DType) -> tuple[int, ...]:
    return x


def as_type_dtype_rule(x: DType, *, dtype: DType) -> DType:
    return dtype


as_type = REGISTRY.declare(
    "as_type", "elementwise", inputs=("x",), out_params=("dtype",),
    shape_rule=as_type_shape_rule, dtype_rule=as_type_dtype_rule,
    doc="convert to out.dtype with numpy casting, except float to int: truncate toward "
    "zero, saturate at the int's min/max, NaN to 0 (decision 7)",
)  # fmt: skip


# ---------------------------------------------------------------- bits
# no numpy oracle (numpy counts no leading zeros): the kit checks both against Python
# integers' bit patterns (test_bit_counts)

population_count = _unary(
    "population_count", _table_integer, "number of bits set in x's bit pattern, in x's dtype"
)
count_leading_zeros = _unary(
    "count_leading_zeros", _table_integer,
    "number of 0 bits above the highest set bit (the bit width for 0), in x's dtype; signed "
    "integers count in their two's complement pattern",
)  # fmt: skip


def bitcast_shape_rule(x: tuple[int, ...], *, dtype: DType) -> tuple[int, ...]:
    return x


def bitcast_dtype_rule(x: DType, *, dtype: DType) -> DType:
    for d in (x, dtype):
        if d.kind not in "iuf":
            raise dtypes.DTypeError(f"bitcast: takes integer and floating dtypes, got {d}")
    if x.numpy_dtype.itemsize != dtype.numpy_dtype.itemsize:
        raise dtypes.DTypeError(
            f"bitcast: {x} ({x.numpy_dtype.itemsize * 8} bits) and {dtype} "
            f"({dtype.numpy_dtype.itemsize * 8} bits) differ in bit width"
        )
    return dtype


bitcast = REGISTRY.declare(
    "bitcast", "elementwise", inputs=("x",), out_params=("dtype",),
    shape_rule=bitcast_shape_rule, dtype_rule=bitcast_dtype_rule,
    doc="reinterpret x's bits as out.dtype (integer or floating, of x's bit width); NaN payloads "
        "are kept",
)  # fmt: skip


# ---------------------------------------------------------------- derivative rules
# Complex inputs follow JAX: a rule is the transpose of the derivative's linear map, with
# no conjugation (holomorphic f gives ``cotangent * f'(z)``), so ``grad`` of a real
# function of ``z`` equals ``jax.grad``'s: conj of the steepest-ascent direction.


def _unbroadcast(ops: Any, cotangent: Tensor, x: Tensor) -> Tensor:
    """Sum ``cotangent`` (the broadcast shape) back to ``x``'s shape and dtype."""
    shape = x.shape
    lead = cotangent.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, d in enumerate(shape) if d == 1 and cotangent.shape[lead + i] != 1
    )
    if axes and len(axes) == lead:  # leading axes alone: summed away, no reshape after
        cotangent = ops.sum(cotangent, axis=axes)
    elif axes:
        cotangent = ops.reshape(ops.sum(cotangent, axis=axes, keepdims=True), (1,) * lead + shape)
    if cotangent.ndim != len(shape):
        cotangent = ops.reshape(cotangent, shape)
    if cotangent.dtype is not x.dtype:
        cotangent = ops.astype(cotangent, x.dtype)
    return cotangent


def _mask(ops: Any, pred: Tensor, like: Tensor) -> Tensor:
    return ops.astype(pred, like.dtype)


@vjp_rule("negative")
def negative_vjp(ops: Any, cotangent: Tensor, out: Tensor, x: Tensor) -> Cotangents:
    return (ops.negative(cotangent),)


@vjp_rule("exp")
def exp_vjp(ops: Any, cotangent: Tensor, out: Tensor, x: Tensor) -> Cotangents:
    return (cotangent * out,)


@vjp_rule("exp2")
def exp2_vjp(ops: Any, cotangent: Tensor, out: Tensor, x: Tensor) -> Cotangents:
    # d(2**x) = 2**x * ln 2, in the result's dtype
    return (cotangent * (out * math.log(2.0)),)


@vjp_rule("log")
def log_vjp(ops: Any, cotangent: Tensor, out: Tensor, x: Tensor) -> Cotangents:
    return (cotangent / x,)


@vjp_rule("add")
def add_vjp(ops: Any, cotangent: Tensor, out: Tensor, x1: Tensor, x2: Tensor) -> Cotangents:
    return (_unbroadcast(ops, cotangent, x1), _unbroadcast(ops, cotangent, x2))


@vjp_rule("subtract")
def subtract_vjp(ops: Any, cotangent: Tensor, out: Tensor, x1: Tensor, x2: Tensor) -> Cotangents:
    return (_unbroadcast(ops, cotangent, x1), _unbroadcast(ops, ops.negative(cotangent), x2))


@vjp_rule("multiply")
def multiply_vjp(ops: Any, cotangent: Tensor, out: Tensor, x1: Tensor, x2: Tensor) -> Cotangents:
    return (_unbroadcast(ops, cotangent * x2, x1), _unbroadcast(ops, cotangent * x1, x2))


@vjp_rule("divide")
def divide_vjp(ops: Any, cotangent: Tensor, out: Tensor, x1: Tensor, x2: Tensor) -> Cotangents:
    g1 = cotangent / x2
    return (_unbroadcast(ops, g1, x1), _unbroadcast(ops, ops.negative(g1 * out), x2))


def _minmax_vjp(ops: Any, cotangent: Tensor, x1: Tensor, x2: Tensor, first: Any) -> Cotangents:
    # ties split the cotangent equally between the operands, as jax.grad does
    half = _mask(ops, ops.equal(x1, x2), cotangent) * 0.5
    w1 = _mask(ops, first(x1, x2), cotangent) + half
    w2 = _mask(ops, first(x2, x1), cotangent) + half
    return (_unbroadcast(ops, cotangent * w1, x1), _unbroadcast(ops, cotangent * w2, x2))


@vjp_rule("maximum")
def maximum_vjp(ops: Any, cotangent: Tensor, out: Tensor, x1: Tensor, x2: Tensor) -> Cotangents:
    return _minmax_vjp(ops, cotangent, x1, x2, ops.greater)


@vjp_rule("minimum")
def minimum_vjp(ops: Any, cotangent: Tensor, out: Tensor, x1: Tensor, x2: Tensor) -> Cotangents:
    return _minmax_vjp(ops, cotangent, x1, x2, ops.less)


@vjp_rule("select")
def select_vjp(
    ops: Any, cotangent: Tensor, out: Tensor, pred: Tensor, on_true: Tensor, on_false: Tensor
) -> Cotangents:
    zero = ops.zeros_like(cotangent)
    return (
        None,
        _unbroadcast(ops, ops.where(pred, cotangent, zero), on_true),
        _unbroadcast(ops, ops.where(pred, zero, cotangent), on_false),
    )


@vjp_rule("as_type")
def as_type_vjp(ops: Any, cotangent: Tensor, out: Tensor, x: Tensor) -> Cotangents:
    # a cast to or from an integer or bool carries no derivative; complex to real (which
    # astype reaches through real()) and real to complex drop the imaginary part
    if x.dtype.kind not in "fc" or out.dtype.kind not in "fc":
        return (None,)
    if cotangent.dtype.kind == "c" and x.dtype.kind != "c":
        cotangent = ops.real(cotangent)
    return (cotangent if cotangent.dtype is x.dtype else ops.astype(cotangent, x.dtype),)


def _unary_vjp(name: str, derivative: Any) -> None:
    """Attach ``cotangent * derivative(ops, out, x)`` as ``name``'s rule."""

    def rule(ops: Any, cotangent: Tensor, out: Tensor, x: Tensor) -> Cotangents:
        return (cotangent * derivative(ops, out, x),)

    rule.__name__ = rule.__qualname__ = f"{name}_vjp"
    vjp_rule(name)(rule)


def _abs_derivative(ops: Any, out: Tensor, x: Tensor) -> Tensor:
    if x.dtype.kind == "c":
        # conj(x) / |x|, 0 at 0 (JAX's choice)
        safe = ops.astype(ops.where(ops.equal(out, 0), ops.ones_like(out), out), x.dtype)
        return ops.conj(x) / safe
    return ops.where(ops.greater_equal(x, 0), ops.ones_like(x), ops.negative(ops.ones_like(x)))


_SQRT_PI = 1.7724538509055160273


_unary_vjp("abs", _abs_derivative)
_unary_vjp("sqrt", lambda ops, out, x: 0.5 / out)
_unary_vjp("rsqrt", lambda ops, out, x: -0.5 * out / x)
_unary_vjp("cbrt", lambda ops, out, x: 1 / (3 * out * out))
_unary_vjp("expm1", lambda ops, out, x: out + 1)
_unary_vjp("log1p", lambda ops, out, x: 1 / (x + 1))
_unary_vjp("sigmoid", lambda ops, out, x: out * (1 - out))
_unary_vjp("sin", lambda ops, out, x: ops.cos(x))
_unary_vjp("cos", lambda ops, out, x: ops.negative(ops.sin(x)))
_unary_vjp("tan", lambda ops, out, x: 1 + out * out)
_unary_vjp("asin", lambda ops, out, x: ops.rsqrt(1 - x * x))
_unary_vjp("acos", lambda ops, out, x: ops.negative(ops.rsqrt(1 - x * x)))
_unary_vjp("atan", lambda ops, out, x: 1 / (1 + x * x))
_unary_vjp("sinh", lambda ops, out, x: ops.cosh(x))
_unary_vjp("cosh", lambda ops, out, x: ops.sinh(x))
_unary_vjp("asinh", lambda ops, out, x: ops.rsqrt(x * x + 1))
# Note: 1/(sqrt(x-1) sqrt(x+1)), not rsqrt(x*x - 1): the two differ in sign for complex x
# with negative real part, and only the first is acosh's derivative there
_unary_vjp("acosh", lambda ops, out, x: 1 / (ops.sqrt(x - 1) * ops.sqrt(x + 1)))
_unary_vjp("atanh", lambda ops, out, x: 1 / (1 - x * x))
_unary_vjp("erf", lambda ops, out, x: (2 / _SQRT_PI) * ops.exp(ops.negative(x * x)))
_unary_vjp("erfc", lambda ops, out, x: (-2 / _SQRT_PI) * ops.exp(ops.negative(x * x)))
_unary_vjp("erf_inv", lambda ops, out, x: (_SQRT_PI / 2) * ops.exp(out * out))


@vjp_rule("tanh")
def tanh_vjp(ops: Any, cotangent: Tensor, out: Tensor, x: Tensor) -> Cotangents:
    """``cotangent (1 - out**2)``, one block node for real floats (:func:`tanh_grad`)."""
    return (tanh_grad(ops, cotangent, out),)


@vjp_rule("real")
def real_vjp(ops: Any, cotangent: Tensor, out: Tensor, x: Tensor) -> Cotangents:
    return (ops.astype(cotangent, x.dtype),)


@vjp_rule("imag")
def imag_vjp(ops: Any, cotangent: Tensor, out: Tensor, x: Tensor) -> Cotangents:
    return (ops.astype(cotangent, x.dtype) * -1j,)


@vjp_rule("conj")
def conj_vjp(ops: Any, cotangent: Tensor, out: Tensor, x: Tensor) -> Cotangents:
    return (ops.conj(cotangent),)


@vjp_rule("remainder")
def remainder_vjp(ops: Any, cotangent: Tensor, out: Tensor, x1: Tensor, x2: Tensor) -> Cotangents:
    if out.dtype.kind != "f":
        return (None, None)
    g2 = ops.negative(cotangent * ops.floor_divide(x1, x2))
    return (_unbroadcast(ops, cotangent, x1), _unbroadcast(ops, g2, x2))


@vjp_rule("pow")
def pow_vjp(ops: Any, cotangent: Tensor, out: Tensor, x1: Tensor, x2: Tensor) -> Cotangents:
    if out.dtype.kind not in "fc":
        return (None, None)
    zero = ops.zeros_like(out)
    # as jax.grad: d/dx1 is 0 where x2 == 0 and d/dx2 is 0 where x1 == 0 (not 0 * -inf)
    d1 = ops.where(ops.equal(x2, 0), zero, x2 * ops.pow(x1, x2 - 1))
    d2 = ops.where(ops.equal(x1, 0), zero, ops.log(ops.where(ops.equal(x1, 0), 1, x1)) * out)
    return (_unbroadcast(ops, cotangent * d1, x1), _unbroadcast(ops, cotangent * d2, x2))


@vjp_rule("atan2")
def atan2_vjp(ops: Any, cotangent: Tensor, out: Tensor, x1: Tensor, x2: Tensor) -> Cotangents:
    g = cotangent / (x1 * x1 + x2 * x2)
    return (_unbroadcast(ops, g * x2, x1), _unbroadcast(ops, ops.negative(g * x1), x2))


# rounding, classification, comparison and bit ops: piecewise constant or integer-valued
nondifferentiable(
    "sign", "floor", "ceil", "round", "isnan", "isinf", "isfinite", "floor_divide",
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "bitwise_invert", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
    "bitwise_right_shift", "population_count", "count_leading_zeros", "bitcast",
)  # fmt: skip


# ---------------------------------------------------------------- batching rule

# every element-wise primitive broadcasts as numpy does: the batch lines up as axis 0
batch_rule(*[p.name for p in REGISTRY if p.family == "elementwise"])(_batch.elementwise)
