"""Element-wise arithmetic, math, comparison, logical and bitwise ops, where, clip, astype.

Binary ops broadcast as numpy does and promote with :mod:`numerix.dtypes`'s table
(Python scalars weak). Each public function is one line over a primitive, or a
composite of primitives.
"""

from __future__ import annotations

from typing import Any

from numerix import _tensor, dtypes
from numerix._array_api import placement
from numerix._meeting import DEALLOCATED
from numerix._shapes import broadcast_shapes
from numerix._tensor import Tensor
from numerix.errors import ArgumentError, DTypeError, ShapeError
from numerix.ops._core import (
    _PY_SCALARS,
    _scalar_for,
    as_tensor,
    bind,
    cast,
    check_concrete,
    check_scalar_fits,
    converted_out,
    describe,
    elementwise_binary,
    elementwise_unary,
    keep_plan,
    new_out,
    scalar_operand,
    unify,
)
from numerix.ops._fast import BINARY, UNARY, fast_op
from numerix.ops.transfer import backend_copy, backend_transfer
from numerix.primitives import creation as creation_primitives
from numerix.primitives import elementwise as elementwise_primitives

__all__ = [
    "add", "subtract", "multiply", "divide", "floor_divide", "remainder", "pow",
    "maximum", "minimum", "negative", "positive", "abs", "sign", "floor", "ceil", "round",
    "trunc", "exp", "log", "sqrt", "square", "reciprocal", "tanh", "sigmoid",
    "exp2", "expm1", "log1p", "rsqrt", "cbrt", "sin", "cos", "tan", "asin", "acos", "atan",
    "sinh", "cosh", "asinh", "acosh", "atanh", "atan2", "isnan", "isinf", "isfinite",
    "real", "imag", "conj", "bitwise_left_shift", "bitwise_right_shift",
    "erf", "erfc", "erf_inv",
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "logical_and", "logical_or", "logical_xor", "logical_not",
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_invert", "bitwise_not",
    "where", "clip", "astype",
    "population_count", "count_leading_zeros", "bitcast",
]  # fmt: skip


# ---------------------------------------------------------------- arithmetic


@fast_op(elementwise_primitives.add, BINARY)
def add(x1: Any, x2: Any, /) -> Tensor:
    """``x1 + x2`` element-wise, broadcasting (array API ``add``; integers wrap around)."""
    return elementwise_binary(elementwise_primitives.add, x1, x2)


@fast_op(elementwise_primitives.subtract, BINARY)
def subtract(x1: Any, x2: Any, /) -> Tensor:
    """``x1 - x2`` element-wise, broadcasting (array API ``subtract``)."""
    return elementwise_binary(elementwise_primitives.subtract, x1, x2)


@fast_op(elementwise_primitives.multiply, BINARY)
def multiply(x1: Any, x2: Any, /) -> Tensor:
    """``x1 * x2`` element-wise, broadcasting (array API ``multiply``)."""
    return elementwise_binary(elementwise_primitives.multiply, x1, x2)


@fast_op(elementwise_primitives.divide, BINARY)
def divide(x1: Any, x2: Any, /) -> Tensor:
    """True division; integer inputs compute in float32 (as ``Nx.divide`` and JAX).

    >>> import numerix as nx
    >>> nx.divide(nx.tensor([1, 2]), 4).tolist()
    [0.25, 0.5]
    """
    return elementwise_binary(elementwise_primitives.divide, x1, x2)


@fast_op(elementwise_primitives.floor_divide, BINARY)
def floor_divide(x1: Any, x2: Any, /) -> Tensor:
    """``floor(x1 / x2)`` (numpy ``floor_divide``; integer division by zero gives 0)."""
    return elementwise_binary(elementwise_primitives.floor_divide, x1, x2)


@fast_op(elementwise_primitives.remainder, BINARY)
def remainder(x1: Any, x2: Any, /) -> Tensor:
    """``x1 - floor(x1 / x2) * x2``: the result has the sign of ``x2`` (numpy ``remainder``)."""
    return elementwise_binary(elementwise_primitives.remainder, x1, x2)


@fast_op(elementwise_primitives.pow, BINARY)
def pow(x1: Any, x2: Any, /) -> Tensor:
    """``x1 ** x2`` (array API ``pow``)."""
    return elementwise_binary(elementwise_primitives.pow, x1, x2)


@fast_op(elementwise_primitives.maximum, BINARY)
def maximum(x1: Any, x2: Any, /) -> Tensor:
    """Element-wise maximum; NaN propagates (numpy ``maximum``)."""
    return elementwise_binary(elementwise_primitives.maximum, x1, x2)


@fast_op(elementwise_primitives.minimum, BINARY)
def minimum(x1: Any, x2: Any, /) -> Tensor:
    """Element-wise minimum; NaN propagates (numpy ``minimum``)."""
    return elementwise_binary(elementwise_primitives.minimum, x1, x2)


@fast_op(elementwise_primitives.negative, UNARY)
def negative(x: Any, /) -> Tensor:
    """``-x`` (unsigned integers wrap around, as numpy)."""
    return elementwise_unary(elementwise_primitives.negative, x)


def positive(x: Any, /) -> Tensor:
    """``+x``: ``x`` itself for numeric tensors; bool is refused as by ``negative``."""
    t = as_tensor(x, "positive")
    if t.dtype.kind == "b":
        raise DTypeError(f"positive: unsupported dtype for {t.describe()}; takes numeric dtypes")
    return t


@fast_op(elementwise_primitives.abs, UNARY)
def abs(x: Any, /) -> Tensor:
    """Absolute value; complex input gives its real magnitude."""
    return elementwise_unary(elementwise_primitives.abs, x)


@fast_op(elementwise_primitives.sign, UNARY)
def sign(x: Any, /) -> Tensor:
    """-1, 0 or 1 by the sign of ``x`` (NaN stays NaN)."""
    return elementwise_unary(elementwise_primitives.sign, x)


def floor(x: Any, /) -> Tensor:
    """Largest integer not above ``x``; integer tensors are returned unchanged."""
    t = as_tensor(x, "floor")
    return t if t.dtype.kind in "iu" else elementwise_unary(elementwise_primitives.floor, t)


def ceil(x: Any, /) -> Tensor:
    """Smallest integer not below ``x``; integer tensors are returned unchanged."""
    t = as_tensor(x, "ceil")
    return t if t.dtype.kind in "iu" else elementwise_unary(elementwise_primitives.ceil, t)


def round(x: Any, /) -> Tensor:
    """Round half to even (numpy / array API ``round``); integer tensors unchanged."""
    t = as_tensor(x, "round")
    return t if t.dtype.kind in "iu" else elementwise_unary(elementwise_primitives.round, t)


def trunc(x: Any, /) -> Tensor:
    """Round toward zero."""
    t = as_tensor(x, "trunc")
    if t.dtype.kind in "iu":
        return t
    if t.dtype.kind != "f":
        raise DTypeError(
            f"trunc: unsupported dtype for {t.describe()}; trunc takes real numeric dtypes "
            f"(integer or floating, not bool or complex)"
        )
    return where(less(t, 0), ceil(t), floor(t))


@fast_op(elementwise_primitives.exp, UNARY)
def exp(x: Any, /) -> Tensor:
    """``e ** x``; integers compute in float32."""
    return elementwise_unary(elementwise_primitives.exp, x)


@fast_op(elementwise_primitives.log, UNARY)
def log(x: Any, /) -> Tensor:
    """Natural logarithm; integers compute in float32."""
    return elementwise_unary(elementwise_primitives.log, x)


@fast_op(elementwise_primitives.sqrt, UNARY)
def sqrt(x: Any, /) -> Tensor:
    """Square root; integers compute in float32."""
    return elementwise_unary(elementwise_primitives.sqrt, x)


def square(x: Any, /) -> Tensor:
    """``x * x``."""
    t = as_tensor(x, "square")
    if t.dtype.kind == "b":
        raise DTypeError(
            f"square: unsupported dtype for {t.describe()}; square takes numeric dtypes (not bool)"
        )
    return multiply(t, t)


def reciprocal(x: Any, /) -> Tensor:
    """``1 / x``; integers compute in float32."""
    return divide(1, as_tensor(x, "reciprocal"))


@fast_op(elementwise_primitives.tanh, UNARY)
def tanh(x: Any, /) -> Tensor:
    """Hyperbolic tangent; integers compute in float32."""
    return elementwise_unary(elementwise_primitives.tanh, x)


@fast_op(elementwise_primitives.sigmoid, UNARY)
def sigmoid(x: Any, /) -> Tensor:
    """The logistic function ``1 / (1 + exp(-x))``, without overflow for large ``|x|``."""
    return elementwise_unary(elementwise_primitives.sigmoid, x)


@fast_op(elementwise_primitives.exp2, UNARY)
def exp2(x: Any, /) -> Tensor:
    """``2 ** x`` (numpy ``exp2``, ``jax.numpy.exp2``); integers compute in float32."""
    return elementwise_unary(elementwise_primitives.exp2, x)


@fast_op(elementwise_primitives.expm1, UNARY)
def expm1(x: Any, /) -> Tensor:
    """``exp(x) - 1``, accurate for small ``x``; integers compute in float32."""
    return elementwise_unary(elementwise_primitives.expm1, x)


@fast_op(elementwise_primitives.log1p, UNARY)
def log1p(x: Any, /) -> Tensor:
    """``log(1 + x)``, accurate for small ``x``; integers compute in float32."""
    return elementwise_unary(elementwise_primitives.log1p, x)


@fast_op(elementwise_primitives.rsqrt, UNARY)
def rsqrt(x: Any, /) -> Tensor:
    """``1 / sqrt(x)``; integers compute in float32."""
    return elementwise_unary(elementwise_primitives.rsqrt, x)


@fast_op(elementwise_primitives.cbrt, UNARY)
def cbrt(x: Any, /) -> Tensor:
    """Real cube root; integers compute in float32; complex is refused."""
    return elementwise_unary(elementwise_primitives.cbrt, x)


@fast_op(elementwise_primitives.sin, UNARY)
def sin(x: Any, /) -> Tensor:
    """Sine; integers compute in float32."""
    return elementwise_unary(elementwise_primitives.sin, x)


@fast_op(elementwise_primitives.cos, UNARY)
def cos(x: Any, /) -> Tensor:
    """Cosine; integers compute in float32."""
    return elementwise_unary(elementwise_primitives.cos, x)


@fast_op(elementwise_primitives.tan, UNARY)
def tan(x: Any, /) -> Tensor:
    """Tangent; integers compute in float32."""
    return elementwise_unary(elementwise_primitives.tan, x)


@fast_op(elementwise_primitives.asin, UNARY)
def asin(x: Any, /) -> Tensor:
    """Inverse sine (NaN outside [-1, 1] for real input); integers compute in float32."""
    return elementwise_unary(elementwise_primitives.asin, x)


@fast_op(elementwise_primitives.acos, UNARY)
def acos(x: Any, /) -> Tensor:
    """Inverse cosine (NaN outside [-1, 1] for real input); integers compute in float32."""
    return elementwise_unary(elementwise_primitives.acos, x)


@fast_op(elementwise_primitives.atan, UNARY)
def atan(x: Any, /) -> Tensor:
    """Inverse tangent; integers compute in float32."""
    return elementwise_unary(elementwise_primitives.atan, x)


@fast_op(elementwise_primitives.sinh, UNARY)
def sinh(x: Any, /) -> Tensor:
    """Hyperbolic sine; integers compute in float32."""
    return elementwise_unary(elementwise_primitives.sinh, x)


@fast_op(elementwise_primitives.cosh, UNARY)
def cosh(x: Any, /) -> Tensor:
    """Hyperbolic cosine; integers compute in float32."""
    return elementwise_unary(elementwise_primitives.cosh, x)


@fast_op(elementwise_primitives.asinh, UNARY)
def asinh(x: Any, /) -> Tensor:
    """Inverse hyperbolic sine; integers compute in float32."""
    return elementwise_unary(elementwise_primitives.asinh, x)


@fast_op(elementwise_primitives.acosh, UNARY)
def acosh(x: Any, /) -> Tensor:
    """Inverse hyperbolic cosine (NaN below 1 for real input); integers compute in float32."""
    return elementwise_unary(elementwise_primitives.acosh, x)


@fast_op(elementwise_primitives.atanh, UNARY)
def atanh(x: Any, /) -> Tensor:
    """Inverse hyperbolic tangent (+-inf at +-1, NaN beyond); integers compute in float32."""
    return elementwise_unary(elementwise_primitives.atanh, x)


@fast_op(elementwise_primitives.atan2, BINARY)
def atan2(x1: Any, x2: Any, /) -> Tensor:
    """The angle of the point ``(x2, x1)`` in ``[-pi, pi]`` (numpy ``arctan2``); integers
    compute in float32; complex is refused."""
    return elementwise_binary(elementwise_primitives.atan2, x1, x2)


@fast_op(elementwise_primitives.erf, UNARY)
def erf(x: Any, /) -> Tensor:
    """The error function; integers compute in float32; complex is refused."""
    return elementwise_unary(elementwise_primitives.erf, x)


@fast_op(elementwise_primitives.erfc, UNARY)
def erfc(x: Any, /) -> Tensor:
    """The complementary error function ``1 - erf(x)``; integers compute in float32."""
    return elementwise_unary(elementwise_primitives.erfc, x)


@fast_op(elementwise_primitives.erf_inv, UNARY)
def erf_inv(x: Any, /) -> Tensor:
    """The inverse error function: ``erf(erf_inv(y)) == y`` on ``[-1, 1]``, +-inf at +-1,
    NaN beyond; integers compute in float32; complex is refused."""
    return elementwise_unary(elementwise_primitives.erf_inv, x)


@fast_op(elementwise_primitives.isnan, UNARY)
def isnan(x: Any, /) -> Tensor:
    """``x`` is NaN (either part, for complex) -> bool; false for bool and integers."""
    return elementwise_unary(elementwise_primitives.isnan, x)


@fast_op(elementwise_primitives.isinf, UNARY)
def isinf(x: Any, /) -> Tensor:
    """``x`` is +-inf (either part, for complex) -> bool; false for bool and integers."""
    return elementwise_unary(elementwise_primitives.isinf, x)


@fast_op(elementwise_primitives.isfinite, UNARY)
def isfinite(x: Any, /) -> Tensor:
    """``x`` is neither NaN nor infinite -> bool; true for bool and integers."""
    return elementwise_unary(elementwise_primitives.isfinite, x)


def real(x: Any, /) -> Tensor:
    """The real part: float32 / float64 for complex64 / complex128; other tensors are
    returned unchanged."""
    t = as_tensor(x, "real")
    return elementwise_unary(elementwise_primitives.real, t) if t.dtype.kind == "c" else t


def imag(x: Any, /) -> Tensor:
    """The imaginary part: float32 / float64 for complex64 / complex128; zeros of ``x``'s
    dtype for other tensors."""
    t = as_tensor(x, "imag")
    if t.dtype.kind == "c":
        return elementwise_unary(elementwise_primitives.imag, t)
    return creation_primitives.full.bind(
        shape=t.shape, dtype=t.dtype, value=_scalar_for(0, t.dtype, "imag"), backend=t.backend
    )


def conj(x: Any, /) -> Tensor:
    """The complex conjugate; other tensors are returned unchanged."""
    t = as_tensor(x, "conj")
    return elementwise_unary(elementwise_primitives.conj, t) if t.dtype.kind == "c" else t


# ---------------------------------------------------------------- comparison


@fast_op(elementwise_primitives.equal, BINARY)
def equal(x1: Any, x2: Any, /) -> Tensor:
    """``x1 == x2`` element-wise -> bool."""
    return elementwise_binary(elementwise_primitives.equal, x1, x2)


@fast_op(elementwise_primitives.not_equal, BINARY)
def not_equal(x1: Any, x2: Any, /) -> Tensor:
    """``x1 != x2`` element-wise -> bool."""
    return elementwise_binary(elementwise_primitives.not_equal, x1, x2)


@fast_op(elementwise_primitives.less, BINARY)
def less(x1: Any, x2: Any, /) -> Tensor:
    """``x1 < x2`` element-wise -> bool."""
    return elementwise_binary(elementwise_primitives.less, x1, x2)


@fast_op(elementwise_primitives.less_equal, BINARY)
def less_equal(x1: Any, x2: Any, /) -> Tensor:
    """``x1 <= x2`` element-wise -> bool."""
    return elementwise_binary(elementwise_primitives.less_equal, x1, x2)


@fast_op(elementwise_primitives.greater, BINARY)
def greater(x1: Any, x2: Any, /) -> Tensor:
    """``x1 > x2`` element-wise -> bool."""
    return elementwise_binary(elementwise_primitives.greater, x1, x2)


@fast_op(elementwise_primitives.greater_equal, BINARY)
def greater_equal(x1: Any, x2: Any, /) -> Tensor:
    """``x1 >= x2`` element-wise -> bool."""
    return elementwise_binary(elementwise_primitives.greater_equal, x1, x2)


# ---------------------------------------------------------------- logical and bitwise


def _truth(x: Any, op: str) -> Tensor:
    t = as_tensor(x, op) if type(x) not in _PY_SCALARS else as_tensor(bool(x), op)
    return t if t.dtype is dtypes.bool_ else not_equal(t, 0)


def logical_and(x1: Any, x2: Any, /) -> Tensor:
    """Truth of ``x1 and x2`` element-wise (non-zero is true) -> bool."""
    return elementwise_binary(
        elementwise_primitives.bitwise_and, _truth(x1, "logical_and"), _truth(x2, "logical_and")
    )


def logical_or(x1: Any, x2: Any, /) -> Tensor:
    """Truth of ``x1 or x2`` element-wise -> bool."""
    return elementwise_binary(
        elementwise_primitives.bitwise_or, _truth(x1, "logical_or"), _truth(x2, "logical_or")
    )


def logical_xor(x1: Any, x2: Any, /) -> Tensor:
    """Truth of ``x1 != x2`` as booleans -> bool."""
    return elementwise_binary(
        elementwise_primitives.bitwise_xor, _truth(x1, "logical_xor"), _truth(x2, "logical_xor")
    )


def logical_not(x: Any, /) -> Tensor:
    """Truth of ``not x`` element-wise -> bool."""
    return elementwise_unary(elementwise_primitives.bitwise_invert, _truth(x, "logical_not"))


@fast_op(elementwise_primitives.bitwise_and, BINARY)
def bitwise_and(x1: Any, x2: Any, /) -> Tensor:
    """``x1 & x2`` on integer or bool tensors."""
    return elementwise_binary(elementwise_primitives.bitwise_and, x1, x2)


@fast_op(elementwise_primitives.bitwise_or, BINARY)
def bitwise_or(x1: Any, x2: Any, /) -> Tensor:
    """``x1 | x2`` on integer or bool tensors."""
    return elementwise_binary(elementwise_primitives.bitwise_or, x1, x2)


@fast_op(elementwise_primitives.bitwise_xor, BINARY)
def bitwise_xor(x1: Any, x2: Any, /) -> Tensor:
    """``x1 ^ x2`` on integer or bool tensors."""
    return elementwise_binary(elementwise_primitives.bitwise_xor, x1, x2)


@fast_op(elementwise_primitives.bitwise_invert, UNARY)
def bitwise_invert(x: Any, /) -> Tensor:
    """``~x`` on integer or bool tensors (array API ``bitwise_invert``)."""
    return elementwise_unary(elementwise_primitives.bitwise_invert, x)


bitwise_not = bitwise_invert


@fast_op(elementwise_primitives.bitwise_left_shift, BINARY)
def bitwise_left_shift(x1: Any, x2: Any, /) -> Tensor:
    """``x1 << x2`` on integer tensors; shift amounts that are negative or at least the
    bit width give 0 (as XLA)."""
    return elementwise_binary(elementwise_primitives.bitwise_left_shift, x1, x2)


@fast_op(elementwise_primitives.bitwise_right_shift, BINARY)
def bitwise_right_shift(x1: Any, x2: Any, /) -> Tensor:
    """``x1 >> x2`` on integer tensors, arithmetic for signed ones; shift amounts that are
    negative or at least the bit width give -1 for negative ``x1``, else 0 (as XLA)."""
    return elementwise_binary(elementwise_primitives.bitwise_right_shift, x1, x2)


# ---------------------------------------------------------------- where, clip, astype


def where(
    condition: Any,
    x1: Any = None,
    x2: Any = None,
    /,
    *,
    size: int | None = None,
    fill_value: Any = None,
) -> Any:
    """``x1`` where ``condition`` is true, else ``x2``, broadcasting all three (array API
    ``where``; Nx ``select``). The branches promote together; Python scalars are weak.

    With ``condition`` alone it is :func:`nonzero` of it (as numpy's and JAX's one-argument
    ``where``), taking ``size`` and ``fill_value``; they belong to that form only.

    >>> import numerix as nx
    >>> nx.where(nx.tensor([True, False]), 1.0, nx.tensor([5.0, 6.0])).tolist()
    [1.0, 6.0]
    >>> [i.tolist() for i in nx.where(nx.tensor([0, 7, 0, 8]))]
    [[1, 3]]
    """
    if x1 is None:
        return _where_one(condition, x2, size, fill_value)
    if size is not None or fill_value is not None:
        _where_refuse(condition, x1, x2, size, fill_value)
    if type(condition) is Tensor and type(x1) is Tensor and type(x2) is Tensor:
        cb = condition.backend
        if (
            condition.dtype is dtypes.bool_
            and x1.backend is cb
            and x2.backend is cb
            and cb is not DEALLOCATED
        ):
            cs = condition.shape
            d = x1.dtype
            if x2.dtype is d and x1.shape == cs and x2.shape == cs:
                # three tensors of one shape, the branches of one dtype: no conversion,
                # promotion or broadcast to do
                return cb.select(new_out(cs, d, cb), condition, x1, x2)
            plan = _WHERES.get((cs, x1.shape, x2.shape, d, x2.dtype))
            if plan is not None:
                d, shape = plan
                if x1.dtype is not d:
                    x1 = cast(x1, d)
                if x2.dtype is not d:
                    x2 = cast(x2, d)
                return cb.select(new_out(shape, d, cb), condition, x1, x2)
    elif type(condition) is Tensor and condition.dtype is dtypes.bool_:
        # a tensor and a Python scalar (nx.where(m, x, 0.0)) on the condition's backend: the
        # scalar's 0-d operand is kept per (backend, dtype, value), as the element-wise ops
        # keep theirs
        w1 = type(x1) in _PY_SCALARS
        t, s = (x2, x1) if w1 else (x1, x2)
        cb = condition.backend
        if (
            type(t) is Tensor
            and type(s) in _PY_SCALARS
            and t.backend is cb
            and cb is not DEALLOCATED
        ):
            d = dtypes.weak_promote(t.dtype, s)
            check_scalar_fits("where", s, d)
            st = scalar_operand(s, d, cb)
            if t.dtype is not d:
                t = cast(t, d)
            shape = t.shape
            cs = condition.shape
            if shape != cs:  # the three shapes in the operands' order, as the general path
                # names them
                shape = (
                    broadcast_shapes("where", cs, (), shape)
                    if w1
                    else broadcast_shapes("where", cs, shape, ())
                )
            out = new_out(shape, d, cb)
            return cb.select(out, condition, st, t) if w1 else cb.select(out, condition, t, st)
    op = "where"
    if x2 is None:
        _where_refuse(condition, x1, x2, size, fill_value)
    cond = _truth(condition, op) if type(condition) in _PY_SCALARS else as_tensor(condition, op)
    if cond.dtype is not dtypes.bool_:
        raise DTypeError(
            f"where: condition must be bool, got {cond.describe()}; compare it first, e.g. t != 0"
        )
    w1, w2 = type(x1) in _PY_SCALARS, type(x2) in _PY_SCALARS
    if w1 and w2:
        d = dtypes.result_type(x1, x2)
        check_scalar_fits(op, x1, d)
        check_scalar_fits(op, x2, d)
        backend, (cond,) = unify(op, cond)
        a, b = scalar_operand(x1, d, backend), scalar_operand(x2, d, backend)
    elif w1 or w2:
        t = as_tensor(x2 if w1 else x1, op)
        s = x1 if w1 else x2
        d = dtypes.weak_promote(t.dtype, s)
        check_scalar_fits(op, s, d)
        backend, (cond, t) = unify(op, cond, t)
        st = scalar_operand(s, d, backend)
        t = cast(t, d)
        a, b = (st, t) if w1 else (t, st)
    else:
        backend, (cond, a, b) = unify(op, cond, x1, x2)
        d = dtypes.promote_types(a.dtype, b.dtype, op)
        a, b = cast(a, d), cast(b, d)
    shape = broadcast_shapes(op, cond.shape, a.shape, b.shape)
    if (
        cond is condition
        and type(x1) is Tensor
        and type(x2) is Tensor
        and x1.backend is backend
        and x2.backend is backend
    ):
        # three tensors met on the condition's backend, none moved
        keep_plan(_WHERES, (cond.shape, x1.shape, x2.shape, x1.dtype, x2.dtype), (d, shape))
    return bind(elementwise_primitives.select, new_out(shape, d, backend), cond, a, b)


def _where_one(condition: Any, x2: Any, size: Any, fill_value: Any) -> Any:
    if x2 is not None:
        _where_refuse(condition, None, x2, size, fill_value)
    # through the namespace of Tensor's ops, which loads the composites family on first
    # use: elementwise loads before it
    return _tensor._ops.nonzero(condition, size=size, fill_value=fill_value)


def _where_refuse(condition: Any, x1: Any, x2: Any, size: Any, fill_value: Any) -> None:
    given = ", ".join(describe(v) for v in (condition, x1, x2) if v is not None)
    if x1 is None or x2 is None:
        raise ArgumentError(
            f"where: got the condition and one branch ({given}); give both branches, "
            f"where(condition, x1, x2), or the condition alone for the indices of its nonzero "
            f"elements, where(condition)"
        )
    raise ArgumentError(
        f"where: size= and fill_value= belong to the one-argument form, where(condition), "
        f"got them with both branches ({given}); drop them"
    )


# where's eager plans (decision 34) for a bool condition and two tensors on its backend,
# per (the three shapes, the branches' dtypes): the dtype the branches promote to and
# out's shape, as the checks and the broadcast rule gave them on the first call (tensor
# shapes hold Python ints only; a call they refuse keeps nothing). Three tensors of one
# shape whose branches share a dtype need no plan.
_WHERES: dict[tuple[Any, ...], tuple[Any, ...]] = {}


def clip(x: Any, /, min: Any = None, max: Any = None) -> Tensor:
    """Limit values to ``[min, max]`` (array API ``clip``); the result keeps ``x``'s dtype.

    >>> import numerix as nx
    >>> nx.clip(nx.tensor([-2, 0, 9]), 0, 5).tolist()
    [0, 0, 5]
    """
    t = as_tensor(x, "clip")
    if t.dtype.kind in "bc":
        raise DTypeError(f"clip: takes real numeric tensors, got {t.describe()}")
    out = t
    for bound, fn, name in ((min, maximum, "min"), (max, minimum, "max")):
        if bound is None:
            continue
        if type(bound) in _PY_SCALARS:
            if dtypes.weak_promote(t.dtype, bound) is not t.dtype:
                raise DTypeError(
                    f"clip: {type(bound).__name__} bound {bound!r} would change the dtype of "
                    f"{t.describe()}; give a bound of its kind"
                )
            check_scalar_fits("clip", bound, t.dtype)
        else:
            # numpy arrays and lists are bounds of their own dtype, checked as tensors
            bound = as_tensor(bound, "clip")
            if dtypes.PROMOTION_TABLE[(t.dtype, bound.dtype)] is not t.dtype:
                raise DTypeError(
                    f"clip: {name} {bound.describe()} would change the dtype of {t.describe()}; "
                    f"cast it with astype({t.dtype.name})"
                )
        out = fn(out, bound)
    return out if out.shape == t.shape else _broadcast_back(out, t)


def _broadcast_back(out: Tensor, t: Tensor) -> Tensor:
    # clip's result keeps x's shape; a bound that broadcasts x to a larger shape is an error
    raise ShapeError(
        f"clip: bounds broadcast {t.describe()} to shape {out.shape}; bounds must broadcast to x's "
        f"shape"
    )


def astype(x: Any, dtype: Any, /, *, copy: bool = True, device: Any = None) -> Tensor:
    """``x`` converted to ``dtype`` (array API ``astype``; numpy casting: floats to ints
    truncate toward zero, complex to bool is ``x != 0`` as in numpy and JAX, complex to
    another real dtype is refused), on ``device`` where one is given (a tensor's
    ``.device``, or a backend spec such as ``"torch:cpu"``)."""
    t = as_tensor(x, "astype")
    if device is not None:
        target = placement("astype", device)
        if target is not t.backend:
            t, copy = backend_transfer(t, target), False  # the move made a new tensor
    d = dtypes.as_dtype(dtype, "astype")
    if t.dtype.kind == "c" and d.kind == "b":
        return not_equal(t, 0)
    if t.dtype.kind == "c" and d.kind != "c":
        raise DTypeError(
            f"astype: casting complex {t.describe()} to {d} would drop the imaginary part; take "
            f"numerix.real(x) first"
        )
    if d is t.dtype:
        # inside a trace a value is never written to: the copy is the value itself
        if copy and not t.backend.is_tracing:
            return backend_copy(t)
        return t
    return bind(elementwise_primitives.as_type, converted_out(t, d, "astype"), t)


# ---------------------------------------------------------------- bits


@fast_op(elementwise_primitives.population_count, UNARY)
def population_count(x: Any, /) -> Tensor:
    """The number of bits set in each element, in ``x``'s dtype (``Nx.population_count``,
    ``jax.lax.population_count``; numpy's ``bitwise_count``, which counts ``|x|``).

    Signed integers count their two's complement pattern (``-1`` has every bit set).

    :param x: an integer tensor (bool, floating and complex are refused).
    :raises DTypeError: for a non-integer tensor.

    >>> import numerix as nx
    >>> nx.population_count(nx.tensor([0, 7, -1], dtype=nx.int8)).tolist()
    [0, 3, 8]
    >>> nx.population_count(nx.tensor([1.0]))
    Traceback (most recent call last):
    ...
    numerix.errors.DTypeError: population_count: unsupported dtype for f32[1] binary(cpu); population_count takes integer dtypes
    """
    return elementwise_unary(elementwise_primitives.population_count, x)


@fast_op(elementwise_primitives.count_leading_zeros, UNARY)
def count_leading_zeros(x: Any, /) -> Tensor:
    """The number of 0 bits above the highest set bit, in ``x``'s dtype
    (``Nx.count_leading_zeros``, ``jax.lax.clz``); 0 gives the bit width.

    Signed integers count their two's complement pattern (negative numbers give 0).

    :param x: an integer tensor (bool, floating and complex are refused).
    :raises DTypeError: for a non-integer tensor.

    >>> import numerix as nx
    >>> nx.count_leading_zeros(nx.tensor([0, 1, 255, -1], dtype=nx.int16)).tolist()
    [16, 15, 8, 0]
    >>> nx.count_leading_zeros(nx.tensor([True]))
    Traceback (most recent call last):
    ...
    numerix.errors.DTypeError: count_leading_zeros: unsupported dtype for pred[1] binary(cpu); count_leading_zeros takes integer dtypes
    """
    return elementwise_unary(elementwise_primitives.count_leading_zeros, x)


def bitcast(x: Any, dtype: Any, /) -> Tensor:
    """``x``'s bits reinterpreted as ``dtype``, shape unchanged (``Nx.bitcast``,
    ``jax.lax.bitcast_convert_type``; numpy's ``x.view(dtype)`` for one bit width).

    Both dtypes must be integer or floating and of the same bit width. Note: numpy's
    ``view`` also takes bool, complex and other widths (changing the last dimension);
    numerix, as Nx and XLA, refuses them.

    :param x: an integer or floating tensor.
    :param dtype: an integer or floating dtype of ``x``'s bit width.
    :raises DTypeError: for bool or complex, or for dtypes of different bit widths.

    >>> import numerix as nx
    >>> nx.bitcast(nx.tensor([1.0], dtype=nx.float32), nx.int32).tolist()
    [1065353216]
    >>> nx.bitcast(nx.tensor([1.0], dtype=nx.float32), nx.int64)
    Traceback (most recent call last):
    ...
    numerix.errors.DTypeError: bitcast: float32 (32 bits) and int64 (64 bits) differ in bit width; got f32[1] binary(cpu): bitcast to a dtype of the same width (e.g. int32 for float32) or convert with astype
    """
    t = as_tensor(x, "bitcast")
    d = dtypes.as_dtype(dtype, "bitcast")
    assert elementwise_primitives.bitcast.dtype_rule is not None
    try:
        elementwise_primitives.bitcast.dtype_rule(t.dtype, dtype=d)
    except DTypeError as e:
        raise DTypeError(
            f"{e}; got {t.describe()}: bitcast to a dtype of the same width (e.g. int32 for "
            f"float32) or convert with astype"
        ) from None
    if d is t.dtype:
        return t
    return bind(elementwise_primitives.bitcast, converted_out(t, d, "bitcast"), t)


# ---------------------------------------------------------------- Tensor's methods
# attached to Tensor by numerix.ops (the low layer does not import this one)


def tensor_copy(self: Tensor) -> Tensor:
    """A copy of the tensor on its own backend, sharing no memory with it (numpy's
    ``copy``, torch's ``clone``); inside a trace, the value itself (a traced value is
    never written to)."""
    return astype(self, self.dtype, copy=True)


def tensor_numpy(self: Tensor) -> Any:
    """The values as a numpy array in host memory (torch's ``Tensor.numpy``), read-only
    as :meth:`Tensor.to_numpy`'s (``np.array(t)`` gives a writable copy). Inside a trace
    it raises :class:`~numerix.TracingError`: a traced tensor has no values yet."""
    check_concrete(self, "numpy")
    return self.to_numpy()
