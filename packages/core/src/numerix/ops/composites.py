"""Composites written once from primitives: softmax, logsumexp, norm, split, one_hot, ...

Every function here is built from the public ops (and the small helpers of
``ops._core``); none reads tensor values on the host, so each works eagerly and,
later, traced. The blocks of softmax, log_softmax and relu, with their rules, are
declared in :mod:`numerix.primitives.nn`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from numerix import dtypes
from numerix._shapes import broadcast_shapes, normalize_axes, normalize_axis
from numerix._tensor import Tensor
from numerix.configuration import get_default_backend
from numerix.dtypes import DType
from numerix.errors import ArgumentError, AxisError, DTypeError, ShapeError, TracingError
from numerix.ops._core import (
    _PY_SCALARS,
    as_tensor,
    cast,
    check_concrete,
    check_scalar_fits,
    describe,
    is_concrete,
    new_out,
    result_dtype,
    run_block,
    scalar,
    unify,
)
from numerix.ops.creation import full, iota
from numerix.ops.elementwise import (
    abs,
    add,
    bitcast,
    bitwise_and,
    bitwise_or,
    clip,
    divide,
    equal,
    erf,
    exp,
    floor_divide,
    greater,
    imag,
    isfinite,
    isinf,
    isnan,
    less,
    less_equal,
    log,
    log1p,
    logical_and,
    logical_not,
    logical_or,
    maximum,
    minimum,
    multiply,
    not_equal,
    pow,
    real,
    remainder,
    sigmoid,
    sqrt,
    square,
    subtract,
    tanh,
    where,
)
from numerix.ops.elementwise import round as _round
from numerix.ops.indexing import take
from numerix.ops.linalg_blocks import svd
from numerix.ops.reduction import all as _all
from numerix.ops.reduction import max as _max
from numerix.ops.reduction import min as _min
from numerix.ops.reduction import sum as _sum
from numerix.ops.sets import isin, unique_all, unique_counts, unique_inverse, unique_values
from numerix.ops.shape import (
    broadcast_to,
    concatenate,
    expand_dims,
    moveaxis,
    pad,
    permute_dims,
    reshape,
    squeeze,
)
from numerix.ops.sort import sort
from numerix.ops.window import Padding
from numerix.ops.window import _params as _window_params
from numerix.primitives._registry import fallback_rule
from numerix.primitives.nn import (
    log_softmax_block,
    relu_block,
    softmax_block,
    stability_shift_block,
)
from numerix.primitives.window import window_reduce_shape_rule

__all__ = [
    "logsumexp", "logaddexp", "softmax", "log_softmax", "relu", "gelu", "silu", "softplus",
    "vector_norm", "matrix_norm", "norm",
    "split", "array_split", "meshgrid", "diag", "diagonal", "tril", "triu", "one_hot",
    "isclose", "allclose", "all_close",
    "quotient", "reduce", "window_reduce", "to_batched", "nonzero",
    "copysign", "signbit", "nextafter", "hypot", "log2", "log10", "diff", "unstack",
    "searchsorted", "unique_all", "unique_counts", "unique_inverse", "unique_values", "isin",
]  # fmt: skip

_HALF = (dtypes.float16, dtypes.bfloat16)


def _is_int(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _float_operand(x: Any, op: str) -> tuple[Tensor, DType]:
    """``x`` in the dtype the op computes in, and the dtype of its result.

    Bool and integers give float32 (as the element-wise float math); float16 and
    bfloat16 compute in float32 and are rounded once at the end, so that sums of
    exponentials and squares neither overflow nor lose digits on the way."""
    t = as_tensor(x, op)
    if t.dtype.kind == "c":
        raise DTypeError(
            f"{op}: complex input is not supported, got {t.describe()}; take numerix.real(x) or "
            f"numerix.abs(x) first"
        )
    out = dtypes.default_float() if t.dtype.kind in "biu" else t.dtype
    return cast(t, dtypes.float32 if out in _HALF else out), out


def _axes(op: str, axis: Any, t: Tensor) -> tuple[int, ...]:
    return normalize_axes(op, axis, t.ndim, t.shape)


def _empty_axis(t: Tensor, axes: Sequence[int]) -> bool:
    return any(t.shape[a] == 0 for a in axes)


# ---------------------------------------------------------------- logsumexp, softmax


def _identity(x: Tensor) -> Tensor:
    return x


def _shift(m: Tensor) -> Tensor:
    """``m`` with no derivative flowing through it (a node of its own only in a trace)."""
    if not m.backend.is_tracing:
        return m
    return run_block(stability_shift_block, new_out(m.shape, m.dtype, m.backend), _identity, m)


def logsumexp(x: Any, /, axis: Any = None, keepdims: bool = False) -> Tensor:
    """``log(sum(exp(x), axis))`` computed without overflow (scipy / JAX ``logsumexp``).

    The maximum of each slice is subtracted first; a slice of only ``-inf`` gives
    ``-inf`` (not NaN) and a reduction over an empty axis gives ``-inf``. Bool and
    integers compute in float32; complex input is refused.

    Args:
        x: the tensor.
        axis: an int, a tuple of ints, or None (every axis).
        keepdims: keep the reduced axes with size 1.

    >>> import numerix as nx
    >>> round(nx.logsumexp(nx.tensor([1000.0, 1000.0])).item(), 2)
    1000.69
    >>> nx.logsumexp(nx.tensor([1 + 2j]))
    Traceback (most recent call last):
    numerix.errors.DTypeError: logsumexp: complex input is not supported, ...
    """
    t, out = _float_operand(x, "logsumexp")
    axes = _axes("logsumexp", axis, t)
    keep = bool(keepdims)
    if _empty_axis(t, axes):
        return cast(log(_sum(exp(t), axis=axes, keepdims=keep)), out)
    m = _max(t, axis=axes, keepdims=True)
    # an infinite (or NaN) maximum would turn x - m into NaN: shift by 0 there instead
    m = _shift(where(isfinite(m), m, scalar(0, t.dtype, t.backend)))
    r = log(_sum(exp(t - m), axis=axes, keepdims=True)) + m
    if not keep:
        r = squeeze(r, axes)
    return cast(r, out)


def logaddexp(x1: Any, x2: Any, /) -> Tensor:
    """``log(exp(x1) + exp(x2))`` computed without overflow (numpy's ``logaddexp``),
    element-wise with broadcasting: ``max(x1, x2) + log1p(exp(-|x1 - x2|))``.

    Two equal infinities give that infinity (not NaN), as numpy; a NaN gives NaN. Bool
    and integers compute in float32 (as the element-wise float math); float16 and
    bfloat16 compute in float32 and are rounded once, as numpy's loop does; complex is
    refused. Its derivative is ``exp(x1 - result)`` and ``exp(x2 - result)`` (a half
    each where ``x1 == x2``).

    Args:
        x1: a tensor or a Python number.
        x2: a tensor or a Python number.

    >>> import numerix as nx
    >>> nx.logaddexp(nx.tensor([1000.0, -1000.0]), nx.tensor([1000.0, 0.0])).tolist()
    [1000.6931762695312, 0.0]
    >>> nx.logaddexp(nx.tensor([1j]), 0.0)
    Traceback (most recent call last):
    numerix.errors.DTypeError: logaddexp: complex input is not supported, ...
    """
    _, (a, b) = unify("logaddexp", x1, x2)
    d = result_dtype("logaddexp", x1, x2)
    a, out = _float_operand(cast(a, d), "logaddexp")
    b = cast(b, a.dtype)
    m = maximum(a, b)
    # minimum - maximum, not -|a - b|: at a tie each passes half the derivative on, where
    # abs's derivative of 1 at 0 would cancel maximum's half for x1 (and give x2 all)
    r = m + log1p(exp(minimum(a, b) - m))
    # both +inf or both -inf: a - b is NaN there, the sum is that infinity
    both = logical_and(equal(a, b), logical_not(isfinite(a)))
    return cast(where(both, a, r), out)


def _softmax_axes(op: str, axis: Any, t: Tensor) -> tuple[int, ...]:
    n = t.ndim
    if type(axis) is int and -n <= axis < n:  # the common call: one axis in range
        return (axis + n if axis < 0 else axis,)
    if n == 0 and axis is not None:
        raise AxisError(
            f"{op}: axis {axis!r} is out of range for {t.describe()}, which has no axes; pass "
            f"axis=None or reshape it to 1-d"
        )
    return _axes(op, axis, t)


def _softmax_operand(x: Any, op: str) -> Tensor:
    """``x`` in the dtype of the result: bool and integers as float32, floats as they
    are (the block computes float16 and bfloat16 in float32 and rounds once)."""
    t = as_tensor(x, op)
    kind = t.dtype.kind
    if kind == "f":
        return t
    if kind == "c":
        raise DTypeError(
            f"{op}: complex input is not supported, got {t.describe()}; take numerix.real(x) or "
            f"numerix.abs(x) first"
        )
    return cast(t, dtypes.default_float())


def softmax(x: Any, /, axis: Any = -1) -> Tensor:
    """``exp(x) / sum(exp(x), axis)``, computed stably (JAX ``nn.softmax``, scipy ``softmax``).

    The maximum along ``axis`` is subtracted before exponentiating, so large inputs do
    not overflow. A slice that is all ``-inf`` has no softmax and gives NaN, as in JAX
    and scipy. Bool and integers compute in float32; float16 and bfloat16 in float32,
    rounded once; complex input is refused.

    Args:
        x: the tensor.
        axis: an int, a tuple of ints, or None (every axis); default the last.

    >>> import numerix as nx
    >>> nx.softmax(nx.tensor([1000.0, 1000.0])).tolist()
    [0.5, 0.5]
    >>> nx.softmax(nx.tensor(1.0))
    Traceback (most recent call last):
    numerix.errors.AxisError: softmax: axis -1 is out of range for ...
    """
    t = _softmax_operand(x, "softmax")
    axes = _softmax_axes("softmax", axis, t)
    # the block's rules are the identity: out is x's type (block_out would cost 0.7 us)
    out = new_out(t.shape, t.dtype, t.backend)
    return run_block(softmax_block, out, softmax_fallback, t, axes=axes)


@fallback_rule("softmax")
def softmax_fallback(x: Tensor, *, axes: tuple[int, ...]) -> Tensor:
    """The composite: the maximum subtracted (with no derivative through it), then
    ``e / sum(e)``."""
    t = cast(x, dtypes.float32) if x.dtype in _HALF else x
    if _empty_axis(t, axes):
        return x  # no element: nothing to normalise
    e = exp(t - _shift(_max(t, axis=axes, keepdims=True)))
    return cast(e / _sum(e, axis=axes, keepdims=True), x.dtype)


def log_softmax(x: Any, /, axis: Any = -1) -> Tensor:
    """``log(softmax(x, axis))``, computed as ``x - logsumexp(x, axis)`` without overflow
    or ``log(0)`` (JAX ``nn.log_softmax``, scipy ``log_softmax``).

    A slice that is all ``-inf`` gives NaN, as in JAX. Bool and integers compute in
    float32; float16 and bfloat16 in float32, rounded once; complex input is refused.

    Args:
        x: the tensor.
        axis: an int, a tuple of ints, or None (every axis); default the last.

    >>> import numerix as nx
    >>> [round(v, 4) for v in nx.log_softmax(nx.tensor([0.0, 1000.0])).tolist()]
    [-1000.0, 0.0]
    >>> nx.log_softmax(nx.tensor([1.0]), axis=1)
    Traceback (most recent call last):
    numerix.errors.AxisError: log_softmax: axis 1 is out of range ...
    """
    t = _softmax_operand(x, "log_softmax")
    axes = _softmax_axes("log_softmax", axis, t)
    # the block's rules are the identity: out is x's type (block_out would cost 0.7 us)
    out = new_out(t.shape, t.dtype, t.backend)
    return run_block(log_softmax_block, out, log_softmax_fallback, t, axes=axes)


@fallback_rule("log_softmax")
def log_softmax_fallback(x: Tensor, *, axes: tuple[int, ...]) -> Tensor:
    """The composite: ``s - log(sum(exp(s)))`` with ``s`` the input shifted by its maximum
    (with no derivative through the shift)."""
    t = cast(x, dtypes.float32) if x.dtype in _HALF else x
    if _empty_axis(t, axes):
        return x
    shifted = t - _shift(_max(t, axis=axes, keepdims=True))
    return cast(shifted - log(_sum(exp(shifted), axis=axes, keepdims=True)), x.dtype)


# ---------------------------------------------------------------- activations


def relu(x: Any, /) -> Tensor:
    """``max(x, 0)`` element-wise (``jax.nn.relu``, ``torch.relu``), in ``x``'s dtype; NaN
    stays NaN. Bool and complex input are refused.

    >>> import numerix as nx
    >>> nx.relu(nx.tensor([-1.5, 0.0, 2.0])).tolist()
    [0.0, 0.0, 2.0]
    """
    t = as_tensor(x, "relu")
    if t.dtype.kind in "bc":
        raise DTypeError(f"relu: takes real numeric tensors, got {t.describe()}")
    if not t.backend.is_tracing:
        return maximum(t, 0)
    return run_block(relu_block, new_out(t.shape, t.dtype, t.backend), _relu, t)


def _relu(x: Tensor) -> Tensor:
    return maximum(x, 0)


def gelu(x: Any, /, approximate: bool = False) -> Tensor:
    """The Gaussian error linear unit ``x * Phi(x)``: exact through ``erf`` (PyTorch's
    default), or with ``approximate=True`` the tanh form (JAX's default). Bool and
    integers compute in float32; float16 and bfloat16 in float32, rounded once.

    >>> import numerix as nx
    >>> [round(v, 4) for v in nx.gelu(nx.tensor([-1.0, 0.0, 1.0])).tolist()]
    [-0.1587, 0.0, 0.8413]
    """
    if type(approximate) is not bool:
        raise ArgumentError(f"gelu: approximate must be True or False, got {approximate!r}")
    t, out = _float_operand(x, "gelu")
    if approximate:
        inner = math.sqrt(2.0 / math.pi) * (t + 0.044715 * (t * t * t))
        return cast(0.5 * t * (1.0 + tanh(inner)), out)
    return cast(0.5 * t * (1.0 + erf(t * (1.0 / math.sqrt(2.0)))), out)


def silu(x: Any, /) -> Tensor:
    """``x * sigmoid(x)`` (swish; ``jax.nn.silu``, ``torch.nn.functional.silu``). Bool and
    integers compute in float32; float16 and bfloat16 in float32, rounded once."""
    t, out = _float_operand(x, "silu")
    return cast(t * sigmoid(t), out)


def softplus(x: Any, /) -> Tensor:
    """``log(1 + exp(x))`` without overflow: ``max(x, 0) + log1p(exp(-|x|))``
    (``jax.nn.softplus``). Bool and integers compute in float32; float16 and bfloat16 in
    float32, rounded once."""
    t, out = _float_operand(x, "softplus")
    return cast(maximum(t, 0) + log1p(exp(-abs(t))), out)


# ---------------------------------------------------------------- norms


def _norm_operand(x: Any, op: str) -> tuple[Tensor, DType]:
    """``|x|`` in the dtype the norm computes in, and the (real) dtype of its result."""
    t = as_tensor(x, op)
    out = dtypes.default_float() if t.dtype.kind in "biu" else t.dtype
    out = dtypes.real_dtype(out)
    if t.dtype.kind in "biu" or t.dtype in _HALF:
        t = cast(t, dtypes.float32)
    return abs(t), out


def _check_number_ord(op: str, ord: Any) -> float:
    if isinstance(ord, (bool, np.bool_)) or not isinstance(
        ord, (int, float, np.integer, np.floating)
    ):
        raise ArgumentError(
            f"{op}: ord must be a real number (2, 1, inf, -inf, 0 or any other p), got {ord!r}"
            + ("; for matrix norms use numerix.matrix_norm" if isinstance(ord, str) else "")
        )
    if math.isnan(float(ord)):
        raise ArgumentError(f"{op}: ord must not be NaN")
    return float(ord)


def _vector_norm(
    x: Any, axis: Any, keepdims: bool, ord: float, op: str, *, all_axes: bool = False
) -> Tensor:
    a, out = _norm_operand(x, op)
    axes = tuple(range(a.ndim)) if all_axes else _axes(op, axis, a)
    keep = bool(keepdims)
    if ord == 2:
        r = sqrt(_sum(square(a), axis=axes, keepdims=keep))
    elif ord == 1:
        r = _sum(a, axis=axes, keepdims=keep)
    elif math.isinf(ord):
        if not _empty_axis(a, axes):
            r = (_max if ord > 0 else _min)(a, axis=axes, keepdims=keep)
        elif ord > 0:
            r = _sum(a, axis=axes, keepdims=keep)  # the largest |x| of none is 0, as numpy
        else:
            raise ShapeError(
                f"{op}: ord=-inf over the empty axis/axes {axes} of {_describe(x, op)} has no "
                f"value (the smallest |x| of no elements); use another ord or a non-empty tensor"
            )
    elif ord == 0:
        r = _sum(cast(not_equal(a, 0), a.dtype), axis=axes, keepdims=keep)
    else:
        r = pow(_sum(pow(a, ord), axis=axes, keepdims=keep), 1.0 / ord)
    return cast(r, out)


def _describe(x: Any, op: str) -> str:
    return as_tensor(x, op).describe()


def vector_norm(x: Any, /, *, axis: Any = None, keepdims: bool = False, ord: Any = 2) -> Tensor:
    """The vector ``ord``-norm over ``axis`` (array API ``linalg.vector_norm``).

    ``axis=None`` treats the whole tensor as one vector; a tuple of axes treats those
    axes together as one vector. ``ord`` is 2 (default), 1, ``inf`` (max ``|x|``),
    ``-inf`` (min ``|x|``), 0 (the count of non-zeros) or any other ``p``
    (``sum(|x|**p)**(1/p)``). Complex input gives a real result; bool and integers
    compute in float32; float16 and bfloat16 compute in float32, rounded once.

    Args:
        x: the tensor.
        axis: an int, a tuple of ints, or None (every axis).
        keepdims: keep the reduced axes with size 1.
        ord: the order of the norm.

    >>> import numerix as nx
    >>> nx.vector_norm(nx.tensor([3.0, -4.0])).item()
    5.0
    >>> nx.vector_norm(nx.tensor([3.0, -4.0]), ord="fro")
    Traceback (most recent call last):
    numerix.errors.ArgumentError: vector_norm: ord must be a real number ...
    """
    o = _check_number_ord("vector_norm", ord)
    return _vector_norm(x, axis, keepdims, o, "vector_norm")


def _matrix_ord(op: str, ord: Any) -> Any:
    if isinstance(ord, str):
        if ord in ("fro", "nuc"):
            return ord
    elif not isinstance(ord, (bool, np.bool_)) and isinstance(
        ord, (int, float, np.integer, np.floating)
    ):
        o = float(ord)
        if o in (1.0, -1.0, 2.0, -2.0) or math.isinf(o):
            return o
    raise ArgumentError(
        f"{op}: invalid matrix norm order {ord!r}; use 'fro', 'nuc', 2, -2, 1, -1, inf or -inf"
    )


def _spectral_norm(x: Any, row: int, col: int, keepdims: bool, ord: Any, op: str) -> Tensor:
    # ord 2 / -2 / 'nuc': the largest / smallest / sum of the singular values
    t = as_tensor(x, op)
    out = dtypes.default_float() if t.dtype.kind in "biu" else t.dtype
    out = dtypes.real_dtype(out)
    if t.dtype.kind in "biu" or t.dtype in _HALF:
        t = cast(t, dtypes.float32)
    s = svd(moveaxis(t, (row, col), (-2, -1)), full_matrices=False)[1]
    if ord == "nuc":
        r = _sum(s, axis=-1)
    elif s.shape[-1] != 0:
        r = (_max if ord > 0 else _min)(s, axis=-1)
    elif ord > 0:
        r = _sum(s, axis=-1)  # the largest singular value of an empty matrix is 0, as numpy
    else:
        raise ShapeError(
            f"{op}: ord={_fmt(ord)} of {t.describe()} has no value: the matrices have no "
            f"singular values to take the minimum over (a side of length 0); use ord='fro' or a "
            f"positive order"
        )
    if keepdims:
        r = expand_dims(r, tuple(sorted((row, col))))
    return cast(r, out)


def _matrix_norm(x: Any, row: int, col: int, keepdims: bool, ord: Any, op: str) -> Tensor:
    if ord == "nuc" or (ord != "fro" and _abs_ord(ord) == 2):
        return _spectral_norm(x, row, col, keepdims, ord, op)
    a, out = _norm_operand(x, op)
    if ord == "fro":
        r = sqrt(_sum(square(a), axis=(row, col), keepdims=True))
    else:
        # ord 1 / -1: max / min over columns of the column sums; inf / -inf: over rows of row sums
        summed, over = (row, col) if _abs_ord(ord) == 1 else (col, row)
        s = _sum(a, axis=summed, keepdims=True)
        if a.shape[over] != 0:
            r = (_max if ord > 0 else _min)(s, axis=over, keepdims=True)
        elif ord > 0:
            r = _sum(s, axis=over, keepdims=True)  # the largest sum of none is 0, as numpy
        else:
            raise ShapeError(
                f"{op}: ord={_fmt(ord)} of {_describe(x, op)} has no value: the matrices have no "
                f"{'columns' if over == col else 'rows'} to take the minimum over; use ord='fro' "
                f"or a positive order"
            )
    if not keepdims:
        r = squeeze(r, (row, col))
    return cast(r, out)


def _fmt(o: Any) -> str:
    if isinstance(o, float) and (math.isinf(o) or o.is_integer()):
        return str(o) if math.isinf(o) else str(int(o))
    return repr(o)


def _abs_ord(o: float) -> float:
    return o if o >= 0 else -o


def matrix_norm(x: Any, /, *, keepdims: bool = False, ord: Any = "fro") -> Tensor:
    """The matrix ``ord``-norm over the last two axes, batched (array API
    ``linalg.matrix_norm``).

    ``ord`` is ``"fro"`` (default, Frobenius), ``"nuc"`` (nuclear: the sum of the
    singular values), 2 (the largest singular value), -2 (the smallest), 1 (max column
    sum of ``|x|``), -1 (min column sum), ``inf`` (max row sum) or ``-inf`` (min row
    sum); 2, -2 and ``"nuc"`` go through :func:`numerix.svd`. Complex input gives a
    real result; bool and integers compute in float32.

    Args:
        x: a tensor of at least 2 dimensions.
        keepdims: keep the two reduced axes with size 1.
        ord: the order of the norm.

    >>> import numerix as nx
    >>> nx.matrix_norm(nx.tensor([[1.0, -2.0], [3.0, 4.0]]), ord=1).item()
    6.0
    >>> nx.matrix_norm(nx.tensor([[3.0, 0.0], [0.0, -4.0]]), ord=2).item()
    4.0
    >>> nx.matrix_norm(nx.tensor([[1.0]]), ord=3)
    Traceback (most recent call last):
    numerix.errors.ArgumentError: matrix_norm: invalid matrix norm order 3; ...
    """
    o = _matrix_ord("matrix_norm", ord)
    t = as_tensor(x, "matrix_norm")
    if t.ndim < 2:
        raise ShapeError(
            f"matrix_norm: needs a tensor of at least 2 dimensions (a matrix or a stack of them), "
            f"got {t.describe()}; use vector_norm for vectors"
        )
    return _matrix_norm(t, t.ndim - 2, t.ndim - 1, bool(keepdims), o, "matrix_norm")


def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Tensor:
    """A vector or matrix norm, chosen as ``numpy.linalg.norm`` chooses.

    ``axis=None``: with ``ord=None`` the 2-norm of all elements; with an ``ord`` the
    vector norm of a 1-d tensor or the matrix norm of a 2-d one. An int ``axis`` gives
    a vector norm (see :func:`vector_norm`); a pair of axes gives a matrix norm over
    them (see :func:`matrix_norm`; ``ord=None`` is ``"fro"``).

    Args:
        x: the tensor.
        ord: the order of the norm (None: 2 for vectors, "fro" for matrices).
        axis: None, an int, or a pair of ints.
        keepdims: keep the reduced axes with size 1.

    >>> import numerix as nx
    >>> nx.norm(nx.tensor([[3.0, 0.0], [0.0, 4.0]])).item()
    5.0
    >>> nx.norm(nx.ones((2, 2, 2)), ord=1)
    Traceback (most recent call last):
    numerix.errors.ShapeError: norm: ord=1 with axis=None needs a 1-d or 2-d tensor, ...
    """
    t = as_tensor(x, "norm")
    if axis is None:
        if ord is None:
            return _vector_norm(t, None, keepdims, 2.0, "norm", all_axes=True)
        if t.ndim not in (1, 2):
            raise ShapeError(
                f"norm: ord={ord!r} with axis=None needs a 1-d or 2-d tensor, got {t.describe()}; "
                f"pass axis (an int for a vector norm, a pair for a matrix norm)"
            )
        axes: tuple[int, ...] = tuple(range(t.ndim))
    elif _is_int(axis):
        axes = (normalize_axis("norm", int(axis), t.ndim, t.shape),)
    elif isinstance(axis, (tuple, list)) and all(_is_int(a) for a in axis):
        axes = tuple(normalize_axis("norm", int(a), t.ndim, t.shape) for a in axis)
    else:
        raise ShapeError(f"norm: axis must be None, an int or a pair of ints, got {axis!r}")
    if len(axes) == 1:
        o = 2.0 if ord is None else _check_number_ord("norm", ord)
        return _vector_norm(t, axes, keepdims, o, "norm")
    if len(axes) == 2:
        if axes[0] == axes[1]:
            raise ShapeError(f"norm: repeated axis in {tuple(axis)}; a matrix norm needs two axes")
        mo = _matrix_ord("norm", "fro" if ord is None else ord)
        return _matrix_norm(t, axes[0], axes[1], bool(keepdims), mo, "norm")
    raise ShapeError(
        f"norm: axis {tuple(axes)} names {len(axes)} axes; give one (vector norm) or two (matrix "
        f"norm), or use vector_norm for a norm over more axes at once"
    )


# ---------------------------------------------------------------- split, meshgrid


def _split_at(t: Tensor, ax: int, points: Sequence[int]) -> list[Tensor]:
    bounds = [0, *points, t.shape[ax]]
    lead = (slice(None),) * ax
    return [t[lead + (slice(a, b),)] for a, b in itertools.pairwise(bounds)]


def _split_points(op: str, t: Tensor, ax: int, indices_or_sections: Any, even: bool) -> list[int]:
    n = t.shape[ax]
    if _is_int(indices_or_sections):
        s = int(indices_or_sections)
        if s <= 0:
            raise ShapeError(f"{op}: the number of sections must be positive, got {s}")
        if even and n % s:
            raise ShapeError(
                f"{op}: axis {ax} of {t.describe()} (size {n}) does not split into {s} equal "
                f"sections; give a divisor of {n}, a list of split points, or use array_split"
            )
        each, extra = divmod(n, s)
        sizes = [each + 1] * extra + [each] * (s - extra)
        return [sum(sizes[:i]) for i in range(1, s)]
    seq = indices_or_sections
    if isinstance(seq, np.ndarray) and seq.ndim == 1:
        seq = seq.tolist()
    if isinstance(seq, (list, tuple)) and all(_is_int(i) for i in seq):
        return [int(i) for i in seq]
    raise ShapeError(
        f"{op}: indices_or_sections must be an int or a list of ints, got {indices_or_sections!r}"
    )


def split(x: Any, indices_or_sections: Any, axis: int = 0) -> list[Tensor]:
    """Split ``x`` along ``axis`` into a list of tensors (numpy ``split``).

    An int ``N`` gives ``N`` equal parts (the axis must divide evenly); a list of
    indices gives the parts between them, with Python slice semantics (negative
    indices count from the end; out-of-range or decreasing ones give empty parts).

    Args:
        x: the tensor (at least 1-d).
        indices_or_sections: an int, or a list of split points.
        axis: the axis to split.

    >>> import numerix as nx
    >>> [p.tolist() for p in nx.split(nx.arange(6), [2, 5])]
    [[0, 1], [2, 3, 4], [5]]
    >>> nx.split(nx.arange(5), 2)
    Traceback (most recent call last):
    numerix.errors.ShapeError: split: axis 0 of ... does not split into 2 equal sections; ...
    """
    t = as_tensor(x, "split")
    ax = normalize_axis("split", axis, t.ndim, t.shape)
    return _split_at(t, ax, _split_points("split", t, ax, indices_or_sections, True))


def array_split(x: Any, indices_or_sections: Any, axis: int = 0) -> list[Tensor]:
    """Split ``x`` along ``axis`` as :func:`split`, except that an int ``N`` need not
    divide the axis: the first ``size % N`` parts get one element more (numpy
    ``array_split``).

    >>> import numerix as nx
    >>> [p.tolist() for p in nx.array_split(nx.arange(5), 3)]
    [[0, 1], [2, 3], [4]]
    >>> nx.array_split(nx.arange(5), 0)
    Traceback (most recent call last):
    numerix.errors.ShapeError: array_split: the number of sections must be positive, got 0
    """
    t = as_tensor(x, "array_split")
    ax = normalize_axis("array_split", axis, t.ndim, t.shape)
    return _split_at(t, ax, _split_points("array_split", t, ax, indices_or_sections, False))


def meshgrid(*xs: Any, indexing: str = "xy", sparse: bool = False) -> list[Tensor]:
    """Coordinate grids from 1-d coordinate vectors (numpy / array API ``meshgrid``).

    With ``N`` inputs of lengths ``n0, n1, ...`` each output has shape ``(n0, n1, ...)``
    for ``indexing="ij"`` and ``(n1, n0, ...)`` (the first two swapped) for ``"xy"``.
    Each output keeps its input's dtype; inputs of more dimensions are flattened, as
    numpy does. ``sparse=True`` returns the size-1-broadcastable views instead.

    >>> import numerix as nx
    >>> gx, gy = nx.meshgrid(nx.tensor([1, 2, 3]), nx.tensor([7, 8]))
    >>> gx.tolist(), gy.tolist()
    ([[1, 2, 3], [1, 2, 3]], [[7, 7, 7], [8, 8, 8]])
    >>> nx.meshgrid(nx.tensor([1]), indexing="yx")
    Traceback (most recent call last):
    numerix.errors.ArgumentError: meshgrid: indexing must be 'xy' or 'ij', got 'yx'
    """
    if indexing not in ("xy", "ij"):
        raise ArgumentError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    if not xs:
        return []
    _, ts = unify("meshgrid", *xs)
    ts = [reshape(t, (t.size,)) for t in ts]
    n = len(ts)
    pos = list(range(n))
    if indexing == "xy" and n > 1:
        pos[0], pos[1] = 1, 0
    shape = [0] * n
    for t, p in zip(ts, pos):
        shape[p] = t.shape[0]
    out = []
    for t, p in zip(ts, pos):
        s = [1] * n
        s[p] = t.shape[0]
        g = reshape(t, tuple(s))
        out.append(g if sparse else broadcast_to(g, tuple(shape)))
    return out


# ---------------------------------------------------------------- diagonals and triangles


def _check_k(op: str, name: str, k: Any) -> int:
    if not _is_int(k):
        raise ShapeError(f"{op}: {name} must be an int, got {k!r}")
    return int(k)


def _diag_len(r: int, c: int, k: int) -> int:
    return max(0, min(r, c - k) if k >= 0 else min(r + k, c))


def _diagonal(t: Tensor, k: int) -> Tensor:
    r, c = t.shape[-2:]
    n = _diag_len(r, c, k)
    # element (i, i + k) sits at i * (c + 1) + k of the flattened matrix ((i - k, i): at
    # -k * c + i * (c + 1)): one strided slice, no arithmetic on the values
    flat = reshape(t, (*t.shape[:-2], r * c))
    if n == 0:
        return flat[..., 0:0]
    start = k if k >= 0 else -k * c
    return flat[..., start : start + (n - 1) * (c + 1) + 1 : c + 1]


def diagonal(x: Any, /, offset: int = 0) -> Tensor:
    """The ``offset``-th diagonal of the matrices in the last two axes (array API
    ``linalg.diagonal``): shape ``(..., L)``.

    ``offset > 0`` is above the main diagonal, ``offset < 0`` below; an offset past
    the matrix gives an empty diagonal.

    >>> import numerix as nx
    >>> nx.diagonal(nx.tensor([[1, 2, 3], [4, 5, 6]]), offset=1).tolist()
    [2, 6]
    >>> nx.diagonal(nx.tensor([1, 2]))
    Traceback (most recent call last):
    numerix.errors.ShapeError: diagonal: needs a tensor of at least 2 dimensions, ...
    """
    t = as_tensor(x, "diagonal")
    k = _check_k("diagonal", "offset", offset)
    if t.ndim < 2:
        raise ShapeError(
            f"diagonal: needs a tensor of at least 2 dimensions, got {t.describe()}; use diag to "
            f"build a matrix from a vector"
        )
    return _diagonal(t, k)


def diag(x: Any, /, k: int = 0) -> Tensor:
    """A 2-d matrix with the 1-d ``x`` on its ``k``-th diagonal, or the ``k``-th diagonal
    of the 2-d ``x`` (numpy ``diag``).

    >>> import numerix as nx
    >>> nx.diag(nx.tensor([1, 2]), k=1).tolist()
    [[0, 1, 0], [0, 0, 2], [0, 0, 0]]
    >>> nx.diag(nx.tensor([[1, 2], [3, 4]])).tolist()
    [1, 4]
    >>> nx.diag(nx.tensor(1))
    Traceback (most recent call last):
    numerix.errors.ShapeError: diag: input must be 1-d or 2-d, got ...
    """
    t = as_tensor(x, "diag")
    k = _check_k("diag", "k", k)
    if t.ndim == 2:
        return _diagonal(t, k)
    if t.ndim != 1:
        raise ShapeError(
            f"diag: input must be 1-d or 2-d, got {t.describe()}; use diagonal for the diagonals "
            f"of a stack of matrices"
        )
    m = t.shape[0] + (k if k >= 0 else -k)
    zero = scalar(0, t.dtype, t.backend)
    padded = t if k == 0 else concatenate([t, broadcast_to(zero, (m - t.shape[0],))])
    vals = reshape(padded, (m, 1) if k >= 0 else (1, m))
    rows = iota((m, m), axis=0, backend=t.backend)
    cols = iota((m, m), axis=1, backend=t.backend)
    return where(equal(subtract(cols, rows), k), vals, zero)


def _triangle(op: str, x: Any, k: Any, lower: bool) -> Tensor:
    t = as_tensor(x, op)
    kk = _check_k(op, "k", k)
    if t.ndim < 2:
        raise ShapeError(
            f"{op}: needs a tensor of at least 2 dimensions (a matrix or a stack of them), got "
            f"{t.describe()}"
        )
    r, c = t.shape[-2:]
    rows = iota((r, c), axis=0, backend=t.backend)
    cols = iota((r, c), axis=1, backend=t.backend)
    diff = subtract(cols, rows)  # the diagonal each element lies on
    keep = less_equal(diff, kk) if lower else less_equal(kk, diff)
    return where(keep, t, scalar(0, t.dtype, t.backend))


def tril(x: Any, /, k: int = 0) -> Tensor:
    """The lower triangle of the matrices in the last two axes: elements above the
    ``k``-th diagonal become zero (array API / numpy ``tril``).

    >>> import numerix as nx
    >>> nx.tril(nx.tensor([[1, 2], [3, 4]])).tolist()
    [[1, 0], [3, 4]]
    >>> nx.tril(nx.tensor([1, 2]))
    Traceback (most recent call last):
    numerix.errors.ShapeError: tril: needs a tensor of at least 2 dimensions ...
    """
    return _triangle("tril", x, k, True)


def triu(x: Any, /, k: int = 0) -> Tensor:
    """The upper triangle of the matrices in the last two axes: elements below the
    ``k``-th diagonal become zero (array API / numpy ``triu``).

    >>> import numerix as nx
    >>> nx.triu(nx.tensor([[1, 2], [3, 4]]), k=1).tolist()
    [[0, 2], [0, 0]]
    >>> nx.triu(nx.ones((2, 2)), k=0.5)
    Traceback (most recent call last):
    numerix.errors.ShapeError: triu: k must be an int, got 0.5
    """
    return _triangle("triu", x, k, False)


# ---------------------------------------------------------------- one_hot


def one_hot(
    indices: Any, num_classes: int, *, dtype: Any = dtypes.float32, axis: int = -1
) -> Tensor:
    """One-hot encoding of integer ``indices`` along a new axis of size ``num_classes``
    (JAX ``nn.one_hot``; Nx's ``Nx.equal(Nx.new_axis(t, -1), Nx.iota(...))`` idiom).

    An index outside ``0 .. num_classes - 1`` (negative ones included) gives an
    all-zero row. ``axis`` is where the new axis goes in the result.

    Args:
        indices: an integer tensor.
        num_classes: the size of the new axis.
        dtype: the result dtype (float32 by default).
        axis: the position of the new axis in the result.

    >>> import numerix as nx
    >>> nx.one_hot(nx.tensor([0, 2, 5]), 3, dtype=nx.int32).tolist()
    [[1, 0, 0], [0, 0, 1], [0, 0, 0]]
    >>> nx.one_hot(nx.tensor([0.0]), 3)
    Traceback (most recent call last):
    numerix.errors.DTypeError: one_hot: indices must be integers, ...
    """
    t = as_tensor(indices, "one_hot")
    if t.dtype.kind not in "iu":
        raise DTypeError(
            f"one_hot: indices must be integers, got {t.describe()}; cast them with "
            f"astype(numerix.int64)"
        )
    if not _is_int(num_classes) or int(num_classes) < 0:
        raise ShapeError(f"one_hot: num_classes must be a non-negative int, got {num_classes!r}")
    n = int(num_classes)
    d = dtypes.as_dtype(dtype, "one_hot")
    ax = normalize_axis("one_hot", axis, t.ndim + 1)
    # compare in a wide dtype: an iota in int8 would wrap past 127 classes
    wide = dtypes.uint64 if t.dtype is dtypes.uint64 else dtypes.int64
    shape = [1] * (t.ndim + 1)
    shape[ax] = n
    classes = iota(tuple(shape), axis=ax, dtype=wide, backend=t.backend)
    lead = (*t.shape[:ax], 1, *t.shape[ax:])
    return cast(equal(reshape(cast(t, wide), lead), classes), d)


# ---------------------------------------------------------------- isclose, allclose


def _check_tol(op: str, name: str, v: Any) -> float:
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise DTypeError(f"{op}: {name} must be a real Python number, got {v!r}")
    return float(v)


def isclose(
    a: Any, b: Any, /, *, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> Tensor:
    """Element-wise ``|a - b| <= atol + rtol * |b|`` -> bool, broadcasting (numpy ``isclose``).

    Infinities are close only to themselves; NaN is close to NaN only with
    ``equal_nan``. The comparison runs in ``result_type(a, b, 1.0)``: bool and
    integers in float32 (numerix's weak-scalar form of numpy's rule); note the
    asymmetry in ``b``, as in numpy.

    Args:
        a, b: tensors (or numbers) that broadcast together.
        rtol: relative tolerance.
        atol: absolute tolerance.
        equal_nan: whether NaN compares close to NaN.

    >>> import numerix as nx
    >>> nx.isclose(nx.tensor([1.0, 2.0]), nx.tensor([1.0 + 1e-9, 2.1])).tolist()
    [True, False]
    >>> nx.isclose(nx.tensor([1.0]), nx.tensor([1.0]), rtol="1e-5")
    Traceback (most recent call last):
    numerix.errors.DTypeError: isclose: rtol must be a real Python number, got '1e-5'
    """
    return _isclose("isclose", a, b, rtol, atol, equal_nan)


def _isclose(op: str, a: Any, b: Any, rtol: Any, atol: Any, equal_nan: bool) -> Tensor:
    r, at = _check_tol(op, "rtol", rtol), _check_tol(op, "atol", atol)
    ops = [v if type(v) in _PY_SCALARS else as_tensor(v, op) for v in (a, b)]
    tensors = [v for v in ops if type(v) is Tensor]
    try:
        d = dtypes.result_type(*ops, 1.0)
    except DTypeError as e:
        raise DTypeError(str(e).replace("result_type", op, 1)) from None
    backend, tensors = unify(op, *tensors) if tensors else (get_default_backend(), [])
    if len(tensors) == 2:
        broadcast_shapes(op, tensors[0].shape, tensors[1].shape)
    it = iter(tensors)
    x, y = (cast(next(it), d) if type(v) is Tensor else scalar(v, d, backend) for v in ops)
    within = logical_and(less_equal(abs(x - y), at + r * abs(y)), isfinite(y))
    close = logical_or(within, equal(x, y))
    if equal_nan:
        close = logical_or(close, logical_and(isnan(x), isnan(y)))
    return close


def allclose(
    a: Any, b: Any, /, *, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> Tensor:
    """Whether every element of ``a`` is close to ``b`` (see :func:`isclose`) -> 0-d bool
    tensor (numpy ``allclose``, Nx ``all_close``).

    >>> import numerix as nx
    >>> bool(nx.allclose(nx.tensor([1.0, 2.0]), nx.tensor([1.0, 2.0 + 1e-7])))
    True
    >>> nx.allclose(nx.ones(2), nx.ones(3))
    Traceback (most recent call last):
    numerix.errors.ShapeError: allclose: shapes (2,) and (3,) cannot be broadcast together ...
    """
    return _all(_isclose("allclose", a, b, rtol, atol, equal_nan))


all_close = allclose


# ---------------------------------------------------------------- quotient


def quotient(x1: Any, x2: Any, /) -> Tensor:
    """Integer division truncated toward zero (Nx ``quotient``; C's ``/`` on integers).

    Unlike :func:`numerix.floor_divide` (which rounds toward -inf), ``-7 // 2`` is -3
    here. Integers only (Python ints are weak). Division by zero gives 0, as
    :func:`numerix.floor_divide` (numpy's convention; Nx raises on the binary backend).

    Args:
        x1, x2: integer tensors (or Python ints) that broadcast together.

    >>> import numerix as nx
    >>> nx.quotient(nx.tensor([7, -7, 7, -7]), nx.tensor([2, 2, -2, -2])).tolist()
    [3, -3, -3, 3]
    >>> nx.quotient(nx.tensor([1.0]), 2)
    Traceback (most recent call last):
    numerix.errors.DTypeError: quotient: integer operands only, got ...
    """
    ops = [v if type(v) in _PY_SCALARS else as_tensor(v, "quotient") for v in (x1, x2)]
    d = result_dtype("quotient", *ops)
    tensors = [v for v in ops if type(v) is Tensor]
    if len(tensors) == 2:
        broadcast_shapes("quotient", tensors[0].shape, tensors[1].shape)
    if d.kind not in "iu":
        names = ", ".join(v.describe() if type(v) is Tensor else repr(v) for v in ops)
        raise DTypeError(
            f"quotient: integer operands only, got {names} (promoted to {d}); use "
            f"numerix.trunc(numerix.divide(x1, x2)) for inexact numbers"
        )
    q = floor_divide(x1, x2)
    if d.kind == "u":
        return q
    # floor and truncation differ when the division is inexact and the signs differ
    r = remainder(x1, x2)
    inexact_neg = logical_and(not_equal(r, 0), not_equal(less(x1, 0), less(x2, 0)))
    return where(inexact_neg, q + 1, q)


# ---------------------------------------------------------------- reduce, window_reduce

ReduceFn = Callable[[Tensor, Tensor], Tensor]


def _initial(op: str, initial: Any, t: Tensor) -> Tensor:
    """``initial`` (a Python scalar or a 0-d tensor) in ``t``'s dtype, exactly."""
    if type(initial) is Tensor:
        if initial.ndim != 0:
            raise ShapeError(
                f"{op}: initial must be a Python scalar or a 0-d tensor, got {initial.describe()}"
            )
        if initial.dtype is not t.dtype:
            raise DTypeError(
                f"{op}: initial {initial.describe()} must have x's dtype ({t.describe()}); cast "
                f"it with astype"
            )
        return unify(op, t, initial)[1][1]
    if type(initial) not in _PY_SCALARS:
        raise DTypeError(
            f"{op}: initial must be a Python scalar or a 0-d tensor, got {type(initial).__name__}"
        )
    if dtypes.result_type(t.dtype, initial) is not t.dtype:
        raise DTypeError(
            f"{op}: initial {initial!r} does not fit x's dtype ({t.describe()}); give a value of "
            f"x's kind or cast x first"
        )
    check_scalar_fits(op, initial, t.dtype)
    return scalar(initial, t.dtype, t.backend)


def _step(op: str, fn: ReduceFn, acc: Tensor, part: Tensor) -> Tensor:
    r = fn(acc, part)
    if type(r) is not Tensor:
        raise DTypeError(f"{op}: fn must return a Tensor, got {type(r).__name__}")
    if r.shape != acc.shape or r.dtype is not acc.dtype:
        raise ShapeError(
            f"{op}: fn(acc, x) must return a tensor like acc ({acc.describe()}), got "
            f"{r.describe()}; cast inside fn with astype and keep the shapes element-wise"
        )
    return r


def reduce(
    x: Any, initial: Any, fn: ReduceFn, *, axis: Any = None, keepdims: bool = False
) -> Tensor:
    """Reduce ``x`` over ``axis`` with a function of two tensors (Nx ``reduce``; XLA
    Reduce / ``lax.reduce``).

    ``fn(acc, x_slice)`` combines the accumulator with one slice of ``x`` (both of the
    result's shape and ``x``'s dtype), built from numerix ops; it is applied to the
    slices in index order (row-major over the reduced axes), starting from
    ``initial`` broadcast. The loop is a static Python loop over the reduced size, so
    it traces (one node per step: keep reduced axes short) and reads no values. An
    empty reduction gives ``initial``.

    Args:
        x: the tensor.
        initial: the start value: a Python scalar that fits ``x``'s dtype or a 0-d
            tensor of that dtype.
        fn: ``(acc, x_slice) -> acc``, returning ``acc``'s shape and dtype.
        axis: an int, a tuple of ints, or None (every axis).
        keepdims: keep the reduced axes with size 1.

    >>> import numerix as nx
    >>> nx.reduce(nx.tensor([[1, 2], [3, 4]]), 0, lambda a, b: a + b * b, axis=1).tolist()
    [5, 25]
    >>> nx.reduce(nx.tensor([1, 2]), 0.5, lambda a, b: a + b)
    Traceback (most recent call last):
    numerix.errors.DTypeError: reduce: initial 0.5 does not fit x's dtype ...
    """
    t = as_tensor(x, "reduce")
    axes = _axes("reduce", axis, t)
    init = _initial("reduce", initial, t)
    kept = tuple(a for a in range(t.ndim) if a not in axes)
    rest = tuple(t.shape[a] for a in kept)
    n = 1
    for a in axes:
        n *= t.shape[a]
    # the reduced axes first, flattened, in their order: slices in row-major order
    flat = reshape(permute_dims(t, tuple(sorted(axes)) + kept), (n, *rest))
    acc = broadcast_to(init, rest)
    for i in range(n):
        acc = _step("reduce", fn, acc, flat[i])
    if keepdims:
        acc = reshape(acc, tuple(1 if a in axes else t.shape[a] for a in range(t.ndim)))
    return acc


def window_reduce(
    x: Any, initial: Any, window_shape: Sequence[int], fn: ReduceFn, *,
    strides: int | Sequence[int] | None = None, padding: Padding = "valid",
    window_dilations: int | Sequence[int] | None = None,
) -> Tensor:  # fmt: skip
    """Reduce each window of ``x`` with a function of two tensors (Nx ``window_reduce``;
    XLA ReduceWindow).

    The windows are those of :func:`numerix.window_sum` (same ``window_shape``,
    ``strides``, ``padding`` and ``window_dilations``); padded positions hold
    ``initial``, as XLA. ``fn(acc, part)`` is applied once per window offset, in
    row-major order of the offsets, to the strided slice of every window's element at
    that offset; a static Python loop over the window's volume, so it traces and reads
    no values.

    Args:
        x: the tensor.
        initial: the start value and the padding: a Python scalar that fits ``x``'s
            dtype or a 0-d tensor of that dtype.
        window_shape: the window's size along each axis of ``x``.
        fn: ``(acc, part) -> acc``, returning ``acc``'s shape and dtype.
        strides, padding, window_dilations: as :func:`numerix.window_sum`.

    >>> import numerix as nx
    >>> import math
    >>> x = nx.tensor([1.0, 5.0, 2.0, 4.0])
    >>> nx.window_reduce(x, -math.inf, (2,), nx.maximum, strides=2).tolist()
    [5.0, 4.0]
    >>> nx.window_reduce(x, 0.0, (2, 2), nx.add)
    Traceback (most recent call last):
    numerix.errors.ShapeError: window_reduce: window_shape (2, 2) has 2 entries; it needs 1, ...
    """
    t = as_tensor(x, "window_reduce")
    params = _window_params("window_reduce", t, window_shape, strides, padding, window_dilations)
    init = _initial("window_reduce", initial, t)
    shape = window_reduce_shape_rule(t.shape, **params)
    acc = broadcast_to(init, shape)
    if 0 in shape:
        return acc
    pairs = params["padding"]
    if any(lo or hi for lo, hi in pairs):
        t = pad(t, pairs, constant_values=init)
    win, st, dil = params["window_dimensions"], params["strides"], params["window_dilations"]
    for offset in itertools.product(*(range(w) for w in win)):
        key = tuple(
            slice(o * d, o * d + (k - 1) * s + 1, s) for o, d, k, s in zip(offset, dil, shape, st)
        )
        acc = _step("window_reduce", fn, acc, t[key])
    return acc


# ---------------------------------------------------------------- to_batched


def to_batched(x: Any, batch_size: int, *, leftover: str = "repeat") -> Iterator[Tensor]:
    """Split ``x`` along axis 0 into batches of ``batch_size`` (Nx ``to_batched``).

    Returns an iterator (arguments are checked at once). When the axis does not
    divide evenly, ``leftover="repeat"`` fills the last batch by wrapping around to the
    start of ``x`` (as Nx), ``"discard"`` drops the remaining elements. An empty axis
    gives no batch.

    Args:
        x: a tensor of at least 1 dimension.
        batch_size: the size of each batch (a positive int).
        leftover: ``"repeat"`` or ``"discard"``.

    >>> import numerix as nx
    >>> [b.tolist() for b in nx.to_batched(nx.arange(5), 2)]
    [[0, 1], [2, 3], [4, 0]]
    >>> [b.tolist() for b in nx.to_batched(nx.arange(5), 2, leftover="discard")]
    [[0, 1], [2, 3]]
    >>> nx.to_batched(nx.arange(5), 0)
    Traceback (most recent call last):
    numerix.errors.ArgumentError: to_batched: batch_size must be a positive int, got 0
    """
    t = as_tensor(x, "to_batched")
    if not _is_int(batch_size) or int(batch_size) < 1:
        raise ArgumentError(f"to_batched: batch_size must be a positive int, got {batch_size!r}")
    if leftover not in ("repeat", "discard"):
        raise ArgumentError(f"to_batched: leftover must be 'repeat' or 'discard', got {leftover!r}")
    if t.ndim == 0:
        raise ShapeError(
            f"to_batched: x must have at least 1 dimension to batch along, got {t.describe()}"
        )
    return _batches(t, int(batch_size), leftover == "repeat")


def _batches(t: Tensor, size: int, repeat: bool) -> Iterator[Tensor]:
    n = t.shape[0]
    count = -(-n // size) if repeat else n // size
    for b in range(count):
        lo, hi = b * size, (b + 1) * size
        if hi <= n:
            yield t[lo:hi]
            continue
        # wrap around: the rest of x, then x again from the start (as often as needed)
        parts, need = [t[lo:]], hi - n
        while need:
            take = min(need, n)
            parts.append(t[:take])
            need -= take
        yield concatenate(parts)


# ---------------------------------------------------------------- nonzero


def _fill_values(t: Tensor, fill_value: Any) -> tuple[int, ...]:
    if fill_value is None:
        return (0,) * t.ndim
    fills = tuple(fill_value) if isinstance(fill_value, (tuple, list)) else (fill_value,) * t.ndim
    if len(fills) != t.ndim or not all(_is_int(f) for f in fills):
        raise ArgumentError(
            f"nonzero: fill_value must be an int or a tuple of {t.ndim} ints (one per axis of "
            f"{t.describe()}), got {fill_value!r}"
        )
    for f in fills:
        check_scalar_fits("nonzero", int(f), dtypes.int64)
    return tuple(int(f) for f in fills)


def nonzero(x: Any, /, *, size: int | None = None, fill_value: Any = None) -> tuple[Tensor, ...]:
    """The indices of the nonzero elements of ``x``, one int64 tensor per axis, in
    row-major order (numpy ``nonzero``, array API ``nonzero``). NaN and ``-0.0`` count as
    nonzero and zero, as in numpy; a complex element is nonzero if either part is.

    The output's length depends on the values, so inside :func:`numerix.jit` give
    ``size`` (a static int, as in ``jax.numpy.nonzero``): the first ``size`` indices,
    padded with ``fill_value`` (an int, or one per axis; default 0) when there are fewer.

    :raises ShapeError: for a 0-d ``x`` (as numpy 2 and the array API).
    :raises TracingError: for a traced ``x`` without ``size``.

    >>> import numerix as nx
    >>> rows, cols = nx.nonzero(nx.tensor([[0, 3], [4, 0]]))
    >>> rows.tolist(), cols.tolist()
    ([0, 1], [1, 0])
    >>> [i.tolist() for i in nx.nonzero(nx.tensor([0.0, 2.0, 5.0]), size=4, fill_value=-1)]
    [[1, 2, -1, -1]]
    """
    op = "nonzero"
    t = as_tensor(x, op)
    if t.ndim == 0:
        raise ShapeError(
            f"nonzero: needs a tensor of at least 1 dimension, got {t.describe()} (numpy 2 and "
            f"the array API refuse a 0-d input); make it 1-d first, as numpy's atleast_1d "
            f"does: numerix.nonzero(numerix.reshape(x, (1,)))"
        )
    if size is not None and (not _is_int(size) or size < 0):
        raise ArgumentError(f"nonzero: size must be a non-negative int, got {size!r}")
    fills = _fill_values(t, fill_value)
    mask = t if t.dtype is dtypes.bool_ else not_equal(t, 0)
    if size is None:
        if not is_concrete(t):
            raise TracingError(
                f"nonzero: {t.describe()} is traced inside numerix.jit/defn, and the "
                f"output's shape depends on its values (how many are nonzero); pass a static "
                f"size=, e.g. nonzero(x, size=n, fill_value=-1), as jax.numpy.nonzero takes"
            )
        check_concrete(t, op)
        size = int(_sum(mask))
    size = int(size)
    n = t.size
    b = t.backend
    if n == 0 or size == 0:
        return tuple(full((size,), f, dtype=dtypes.int64, backend=b) for f in fills)
    flat = reshape(mask, (n,))
    # the positions of the nonzeros, and n for the rest: sorted, the nonzeros come first,
    # in order
    keys = sort(where(flat, iota((n,), backend=b), n))
    if size < n:
        keys = keys[:size]
    elif size > n:
        keys = concatenate([keys, full((size - n,), n, dtype=dtypes.int64, backend=b)])
    found = less(keys, n)
    out = []
    stride = n
    for d, f in zip(t.shape, fills):
        stride //= d
        idx = remainder(floor_divide(keys, stride), d) if stride > 1 else remainder(keys, d)
        out.append(where(found, idx, f))
    return tuple(out)


# ---------------------------------------------------------------- the array API's element-wise math

_BITS_INT = {16: dtypes.int16, 32: dtypes.int32, 64: dtypes.int64}


def _real_float(x: Any, op: str) -> Tensor:
    """``x`` as a real floating tensor (bool and integers as float32, as the element-wise
    float math); complex is refused, naming ``op``."""
    t = as_tensor(x, op)
    if t.dtype.kind == "c":
        raise DTypeError(
            f"{op}: complex input is not supported, got {t.describe()}; take numerix.real(x) or "
            f"numerix.abs(x) first"
        )
    return t if t.dtype.kind == "f" else cast(t, dtypes.default_float())


def _real_float_pair(x1: Any, x2: Any, op: str) -> tuple[Tensor, Tensor]:
    """The two operands of a binary real-float op, promoted together (Python scalars weak)
    and broadcast."""
    _, (a, b) = unify(op, x1, x2)
    d = result_dtype(op, x1, x2)
    if d.kind == "c":
        raise DTypeError(
            f"{op}: complex input is not supported, got {describe(x1)} and {describe(x2)}; "
            f"take numerix.real or numerix.abs first"
        )
    if d.kind != "f":
        d = dtypes.default_float()
    s = broadcast_shapes(op, a.shape, b.shape)
    return broadcast_to(cast(a, d), s), broadcast_to(cast(b, d), s)


def _sign_mask(d: DType) -> tuple[DType, int, int]:
    """The same-width signed integer dtype of float dtype ``d``, its sign bit (as that
    integer) and the mask of the other bits."""
    i = _BITS_INT[d.bits]
    return i, -(1 << (d.bits - 1)), (1 << (d.bits - 1)) - 1


def copysign(x1: Any, x2: Any, /) -> Tensor:
    """The magnitude of ``x1`` with the sign bit of ``x2``, element-wise with broadcasting
    (array API / numpy ``copysign``): exact, through the bits, so ``-0.0`` and a NaN's
    sign bit count; bool and integers compute in float32; complex is refused.

    >>> import numerix as nx
    >>> nx.copysign(nx.tensor([1.0, -2.0, 3.0]), nx.tensor([-0.0, 1.0, -1.0])).tolist()
    [-1.0, 2.0, -3.0]
    """
    a, b = _real_float_pair(x1, x2, "copysign")
    i, sign, rest = _sign_mask(a.dtype)
    bits = bitwise_or(bitwise_and(bitcast(a, i), rest), bitwise_and(bitcast(b, i), sign))
    return bitcast(bits, a.dtype)


def signbit(x: Any, /) -> Tensor:
    """Whether the sign bit of ``x`` is set -> bool (array API / numpy ``signbit``): true
    for ``-0.0`` and for a NaN with its sign bit set, read through the bits; integers are
    ``x < 0``, bool is never signed; complex is refused.

    >>> import numerix as nx
    >>> nx.signbit(nx.tensor([-0.0, 0.0, -1.0, float("inf")])).tolist()
    [True, False, True, False]
    """
    t = as_tensor(x, "signbit")
    if t.dtype.kind == "c":
        raise DTypeError(
            f"signbit: complex input is not supported, got {t.describe()}; take numerix.real(x) "
            f"first"
        )
    if t.dtype.kind == "b":
        return not_equal(t, t)
    if t.dtype.kind in "iu":
        return less(t, 0)
    return less(bitcast(t, _BITS_INT[t.dtype.bits]), 0)


def nextafter(x1: Any, x2: Any, /) -> Tensor:
    """The next floating value after ``x1`` towards ``x2``, element-wise with broadcasting
    (array API / numpy ``nextafter``): one step of the last bit of ``x1``'s bits; ``x2``
    itself where the two are equal (so ``nextafter(0.0, -0.0)`` is ``-0.0``), NaN where
    either is NaN, the smallest subnormal of ``x2``'s sign from zero. Bool and integers
    compute in float32; complex is refused.

    >>> import numerix as nx
    >>> nx.nextafter(nx.tensor([1.0], dtype=nx.float32), 2.0).item() - 1.0
    1.1920928955078125e-07
    """
    a, b = _real_float_pair(x1, x2, "nextafter")
    i, sign, _ = _sign_mask(a.dtype)
    bits = bitcast(a, i)
    # one step away from zero adds one to the bits (of either sign), towards zero
    # subtracts one
    away = equal(greater(b, a), greater(a, 0))
    step = where(away, add(bits, 1), subtract(bits, 1))
    tiny = bitwise_or(bitwise_and(bitcast(b, i), sign), 1)
    out = bitcast(where(equal(a, 0), tiny, step), a.dtype)
    out = where(equal(a, b), b, out)
    return where(logical_or(isnan(a), isnan(b)), full(a.shape, math.nan, dtype=a.dtype,
                                                        backend=a.backend), out)  # fmt: skip


def hypot(x1: Any, x2: Any, /) -> Tensor:
    """``sqrt(x1**2 + x2**2)`` element-wise with broadcasting, without overflow or
    underflow on the way (array API / numpy ``hypot``): ``m * sqrt(1 + (n / m)**2)``
    with ``m, n`` the larger and smaller of ``|x1|, |x2|``. An infinity gives ``+inf``
    even beside a NaN, as the standard says. Bool and integers compute in float32;
    float16 and bfloat16 in float32, rounded once; complex is refused.

    >>> import numerix as nx
    >>> x = nx.tensor([3.0, 3e37], dtype=nx.float32)  # (3e37)**2 overflows float32
    >>> nx.hypot(x, nx.tensor([4.0, 4e37], dtype=nx.float32)).tolist()
    [5.0, 4.999999840142846e+37]
    """
    a, b = _real_float_pair(x1, x2, "hypot")
    out = a.dtype
    if out in _HALF:
        a, b = cast(a, dtypes.float32), cast(b, dtypes.float32)
    a, b = abs(a), abs(b)
    m, n = maximum(a, b), minimum(a, b)
    safe = where(equal(m, 0), 1, m)
    r = divide(n, safe)
    h = multiply(m, sqrt(add(multiply(r, r), 1)))
    h = where(equal(m, 0), 0, h)
    h = where(logical_or(isinf(a), isinf(b)), math.inf, h)
    return cast(h, out)


def _exact_log(t: Tensor, y: Tensor, base: int, op: str) -> Tensor:
    """``y`` (``log(t) / log(base)``, rounded twice) replaced by the integer ``k`` where
    ``t`` is the float nearest to ``base ** k``: numpy's ``log2``/``log10`` are exact
    there."""
    info = dtypes.finfo(t.dtype)
    top = math.floor(math.log(info.max, base))
    if base**top > info.max:  # math.log rounds up at a power's edge
        top -= 1
    low = math.ceil(math.log(info.smallest_normal, base))
    powers = np.array([float(base) ** k for k in range(low, top + 1)], dtype=np.float64)
    table = cast(as_tensor(powers, op, t.backend), t.dtype)
    k = where(isfinite(y), _round(y), 0)
    k = clip(k, low, top)
    p = take(table, cast(subtract(k, low), dtypes.int64))
    return where(logical_and(equal(t, p), isfinite(y)), k, y)


def _complex_log(t: Tensor, base: int) -> Tensor:
    """``log(t) / log(base)`` of complex ``t``, each part divided apart: a complex product
    would turn ``log(0) = -inf + 0j`` into ``-inf + nanj``."""
    z = log(t)
    k = math.log(base)
    re, im = cast(divide(real(z), k), t.dtype), cast(divide(imag(z), k), t.dtype)
    return add(re, multiply(im, 1j))


def log2(x: Any, /) -> Tensor:
    """Base-2 logarithm element-wise (array API / numpy ``log2``): exact at the powers of
    two; bool and integers compute in float32, float16 and bfloat16 in float32 rounded
    once; complex is ``log(z) / log(2)`` (the principal branch, as numpy).

    >>> import numerix as nx
    >>> nx.log2(nx.tensor([8.0, 0.5, 0.0, -1.0])).tolist()
    [3.0, -1.0, -inf, nan]
    """
    t = as_tensor(x, "log2")
    if t.dtype.kind == "c":
        return _complex_log(t, 2)
    t, out = _float_operand(_real_float(t, "log2"), "log2")
    y = multiply(log(t), 1 / math.log(2))
    return cast(_exact_log(t, y, 2, "log2"), out)


def log10(x: Any, /) -> Tensor:
    """Base-10 logarithm element-wise (array API / numpy ``log10``): exact at the powers
    of ten; bool and integers compute in float32, float16 and bfloat16 in float32
    rounded once; complex is ``log(z) / log(10)`` (the principal branch, as numpy).

    >>> import numerix as nx
    >>> nx.log10(nx.tensor([1000.0, 0.001, 1.0], dtype=nx.float64)).tolist()
    [3.0, -3.0, 0.0]
    """
    t = as_tensor(x, "log10")
    if t.dtype.kind == "c":
        return _complex_log(t, 10)
    t, out = _float_operand(_real_float(t, "log10"), "log10")
    y = divide(log(t), math.log(10))
    return cast(_exact_log(t, y, 10, "log10"), out)


# ---------------------------------------------------------------- diff, unstack, searchsorted


def diff(
    x: Any, /, *, axis: int = -1, n: int = 1, prepend: Any = None, append: Any = None
) -> Tensor:
    """The ``n``-th forward difference along ``axis`` (array API / numpy ``diff``):
    ``out[i] = x[i + 1] - x[i]``, applied ``n`` times, after joining ``prepend`` and
    ``append`` to ``x`` along ``axis`` (tensors of ``x``'s shape but along ``axis``, or
    scalars, broadcast as numpy does). Bool differences are ``!=``, as numpy's.

    >>> import numerix as nx
    >>> nx.diff(nx.tensor([1, 4, 9, 16])).tolist()
    [3, 5, 7]
    >>> nx.diff(nx.tensor(1))
    Traceback (most recent call last):
    ...
    numerix.errors.ShapeError: diff: ...
    """
    t = as_tensor(x, "diff")
    if t.ndim == 0:
        raise ShapeError(f"diff: {t.describe()} is 0-d; diff needs at least one dimension")
    if not _is_int(n) or n < 0:
        raise ArgumentError(f"diff: n must be an int >= 0, got {n!r}")
    ax = normalize_axis("diff", axis, t.ndim, t.shape)
    parts = []
    for name, extra in (("prepend", prepend), (None, t), ("append", append)):
        if extra is None:
            continue
        if name is None:
            parts.append(extra)
            continue
        _, (e,) = unify("diff", extra)
        if e.ndim == 0:
            e = broadcast_to(e, t.shape[:ax] + (1,) + t.shape[ax + 1 :])
        parts.append(e)
    if len(parts) > 1:
        _, parts = unify("diff", *parts)
        t = concatenate(parts, axis=ax)
    lo = (slice(None),) * ax + (slice(None, -1),)
    hi = (slice(None),) * ax + (slice(1, None),)
    for _ in range(n):
        t = not_equal(t[hi], t[lo]) if t.dtype.kind == "b" else subtract(t[hi], t[lo])
    return t


def unstack(x: Any, /, *, axis: int = 0) -> tuple[Tensor, ...]:
    """The slices of ``x`` along ``axis``, each without that axis, as a tuple (array API
    ``unstack``; the inverse of :func:`stack`).

    >>> import numerix as nx
    >>> [t.tolist() for t in nx.unstack(nx.tensor([[1, 2], [3, 4]]), axis=1)]
    [[1, 3], [2, 4]]
    """
    t = as_tensor(x, "unstack")
    if t.ndim == 0:
        raise ShapeError(f"unstack: {t.describe()} is 0-d; unstack needs at least one dimension")
    ax = normalize_axis("unstack", axis, t.ndim, t.shape)
    pre = (slice(None),) * ax
    return tuple(t[pre + (i,)] for i in range(t.shape[ax]))


def searchsorted(x1: Any, x2: Any, /, *, side: str = "left", sorter: Any = None) -> Tensor:
    """Where ``x2``'s values would go in the sorted 1-d ``x1`` to keep it sorted (array
    API / numpy ``searchsorted``), as int64 of ``x2``'s shape: for ``side="left"`` the
    count of elements of ``x1`` below each value, for ``"right"`` at or below. NaN sorts
    last, as in :func:`sort`. ``sorter`` holds the indices that sort an unsorted ``x1``.

    >>> import numerix as nx
    >>> nx.searchsorted(nx.tensor([1.0, 2.0, 2.0, 3.0]), nx.tensor([2.0, 5.0])).tolist()
    [1, 4]
    """
    if side not in ("left", "right"):
        raise ArgumentError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    _, (a, v) = unify("searchsorted", x1, x2)
    if a.ndim != 1:
        raise ShapeError(f"searchsorted: x1 must be 1-d, got {a.describe()}")
    if a.dtype.kind == "c" or v.dtype.kind == "c":
        raise DTypeError(
            f"searchsorted: complex input is not supported, got {a.describe()} and {v.describe()}"
        )
    if sorter is not None:
        _, (s,) = unify("searchsorted", sorter)
        if s.shape != a.shape or s.dtype.kind not in "iu":
            raise ShapeError(
                f"searchsorted: sorter must be integer indices of x1's shape {a.shape}, got "
                f"{s.describe()}"
            )
        a = take(a, s)
    d = result_dtype("searchsorted", a, v)
    a, v = cast(a, d), cast(v, d)
    col = expand_dims(v, -1)
    if side == "left":  # a < v, with NaN above every number
        below = logical_or(less(a, col), logical_and(isnan(col), logical_not(isnan(a))))
    else:  # not v < a
        below = logical_not(
            logical_or(less(col, a), logical_and(isnan(a), logical_not(isnan(col))))
        )
    return cast(_sum(below, axis=-1), dtypes.int64)
