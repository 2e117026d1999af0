"""A differential fuzzer: generated ops, dtypes, shapes and values, numpy as the oracle.

Each case draws an op (element-wise unary and binary, reductions, ``matmul``, ``where``,
``softmax``, ``log_softmax`` and ``logsumexp``),
a dtype (every dtype, including those the op refuses), operand shapes from a fixed pool
(0-d, empty, size-1 broadcasting; the pool keeps the kernels a backend compiles few) and
values with the special floats (nan, ±inf, -0.0, subnormals, the extremes of each
integer dtype). It runs the op on the backend under test, eagerly and under ``jit`` with
every compiler serving that backend, and compares with numpy on the same inputs::

    python -m numerix.testing.fuzz xla --examples 100000
    nox -s fuzz -- xla --examples 100000

Every case ends in one outcome (:data:`OUTCOMES`). ``wrong`` is a silent wrong answer
(a result of the wrong dtype, shape or value, or a value numpy computes differently);
``crash`` is an exception that is not a :class:`numerix.NumerixError` (a traceback from
deep inside a library), or a refusal of input numpy accepts and numerix documents;
``refused`` is a named error for input the op's dtype rule refuses, as documented. A
run with any ``wrong`` or ``crash`` fails.

The oracle's own limits, written down (where numpy is not the reference, the case is
counted as ``known`` with the reason, never as agreement):

- **Subnormals on xla**: XLA on CPU flushes subnormal floats to zero (inputs and
  results), after rewriting the program, so one operand (or one part of a complex
  operand) can be flushed and another not. An element that matches numpy with some of
  the operands' subnormals flushed, and the result's, is ``known``.
- **float32 log of a subnormal on xla** is ``log(2**-150) = -103.97`` whatever the
  subnormal (XLA's ``logf`` neither flushes nor reads it): such elements are ``known``.
- **exp2 on xla** is ``exp(x * ln 2)``: rounding the product moves the result by up to
  ``|x| ln 2 / 2`` epsilons (float32 ``exp2(50.0)`` is ``2**50 + 9 * 2**27``), where numpy
  is exact at integers. Elements within ``(|x| + 4)`` epsilons of numpy's are
  ``known`` (docs/known-differences.md).
- **One reading per element**: every differing element must be explained on its own
  (a case may hold a flushed subnormal in one element and a complex infinity in another).
- **Complex special values**: complex results with a non-finite part follow each
  library's own reading of C99 (torch computes ``(1+0j) + (inf+0j)`` as ``inf+nanj``;
  the core's ``sign`` and ``std`` of a complex infinity give nan where numpy gives a
  unit or inf); where every differing element has a non-finite part on one side the
  case is ``known``. Finite complex results are compared like floats.
- **Complex powers beyond their precision**: where ``|b log a|`` times the dtype's
  epsilon exceeds a milliradian, the phase of ``a ** b`` is lost to rounding in any
  library; such elements are ``known``.
- **Precision**: numpy is asked twice, on inputs widened to float64/complex128 (the
  exact answer, rounded) and in the dtype itself; a result matching either agrees.
- **Complex sign past the largest magnitude**: where both parts of ``z`` are finite but
  ``|z|`` overflows, ``z / |z|`` has lost its direction in every library (numpy gives a
  unit on an axis, JAX, torch and numerix zero); such elements are ``known``.
- **Integer powers with a negative exponent**: numpy refuses them; numerix defines
  them (``docs/contract.md``): the case is skipped as ``oracle``.
- **Accumulation at the overflow boundary**: a sum, product, mean, variance or matrix
  product whose partial results can reach the largest finite value of the dtype (a
  bound from the absolute values of finite inputs) depends on the order of
  accumulation and on fused multiply-adds: one library returns the largest finite
  value, another inf, or nan where two infinities meet. Such elements are ``known``.
- **Signed zeros** compare equal (``-0.0 == 0.0``), as numpy's own comparisons do;
  the sign of a zero from ``max``/``min`` of ``±0.0`` is unspecified (docs).
- Floating-point results of inexact ops are held to the kit's tolerance for the op
  and dtype (:func:`numerix.testing.tolerances.tolerance`), numpy computing on the
  inputs rounded to the compute dtype and widened to float64.
"""

from __future__ import annotations

import argparse
import collections
import itertools
import math
import sys
import traceback
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import seed as fixed_seed
from hypothesis import strategies as st

import numerix as nx
from numerix import dtypes
from numerix.defn.compilers import compilers_serving
from numerix.testing.oracle import BINARY_SHAPES, to_compute
from numerix.testing.suite.elementwise import BINARY, UNARY
from numerix.testing.suite.reduction import REDUCTIONS
from numerix.testing.tolerances import tolerance

__all__ = ["OUTCOMES", "Case", "FuzzReport", "OPS", "fuzz", "main"]

#: The outcomes of a case, in the order a report prints them.
OUTCOMES = ("agree", "refused", "known", "oracle", "wrong", "crash")

UNARY_SHAPES: list[tuple[int, ...]] = [(), (0,), (1,), (5,), (2, 3), (2, 0, 3)]
MATMUL_SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((2, 3), (3, 4)), ((0, 3), (3, 2)), ((2, 0), (0, 2))]


@dataclass(frozen=True)
class FuzzOp:
    """One op of the fuzzer: how to call it on numerix and on numpy.

    ``rule(dtype) -> (compute, out) | None``: the dtype numpy computes in and the
    result's dtype, or None where numerix refuses the dtype with a ``DTypeError``.
    """

    name: str
    arity: int
    fn: Callable[..., Any]
    ref: Callable[..., Any]
    rule: Callable[[dtypes.DType], tuple[dtypes.DType, dtypes.DType] | None]
    params: Callable[[st.DataObject, tuple[int, ...]], dict[str, Any]] = lambda data, shape: {}
    shapes: Sequence[Any] = field(default_factory=list)


def _axis_params(data: st.DataObject, shape: tuple[int, ...]) -> dict[str, Any]:
    axes = [None, *range(-len(shape), len(shape))]
    return {"axis": data.draw(st.sampled_from(axes)), "keepdims": data.draw(st.booleans())}


def _reduction_rule(r: Any) -> Callable[[dtypes.DType], tuple[dtypes.DType, dtypes.DType] | None]:
    def rule(d: dtypes.DType) -> tuple[dtypes.DType, dtypes.DType] | None:
        out = r.out(d)
        return None if out is None else (r.compute(d), out)

    return rule


def _matmul_rule(d: dtypes.DType) -> tuple[dtypes.DType, dtypes.DType] | None:
    return None if d.kind == "b" else (d, d)


def _where_rule(d: dtypes.DType) -> tuple[dtypes.DType, dtypes.DType] | None:
    return (d, d)


def _nn_axis_params(data: st.DataObject, shape: tuple[int, ...]) -> dict[str, Any]:
    """softmax's and log_softmax's axis: None, or one axis in range (a 0-d tensor has only
    None)."""
    return {"axis": data.draw(st.sampled_from([None, *range(-len(shape), len(shape))]))}


def _reduces_nothing(x: np.ndarray, axis: Any) -> bool:
    """Whether a reduced axis is empty (the max of each slice does not exist)."""
    axes = range(x.ndim) if axis is None else [axis]
    return any(x.shape[a] == 0 for a in axes)


def _np_softmax(x: np.ndarray, axis: Any = -1) -> np.ndarray:
    if _reduces_nothing(x, axis):
        return x.copy()
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return np.asarray(e / np.sum(e, axis=axis, keepdims=True))


def _np_log_softmax(x: np.ndarray, axis: Any = -1) -> np.ndarray:
    if _reduces_nothing(x, axis):
        return x.copy()
    t = x - np.max(x, axis=axis, keepdims=True)
    return np.asarray(t - np.log(np.sum(np.exp(t), axis=axis, keepdims=True)))


def _np_logsumexp(x: np.ndarray, axis: Any = None, keepdims: bool = False) -> np.ndarray:
    if _reduces_nothing(x, axis):  # log(0): -inf
        return np.asarray(np.log(np.sum(np.exp(x), axis=axis, keepdims=keepdims)))
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)  # an infinite maximum: shift by 0 (no inf - inf)
    r = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return np.asarray(r if keepdims else np.squeeze(r, axis=axis))


def _nn_rule(d: dtypes.DType) -> tuple[dtypes.DType, dtypes.DType] | None:
    """softmax's family: complex refused, bool and integers in float32, float16 and
    bfloat16 computed in float32 and rounded once."""
    if d.kind == "c":
        return None
    if d.kind != "f":
        return (dtypes.float32, dtypes.float32)
    return (dtypes.float32, d) if d in (dtypes.float16, dtypes.bfloat16) else (d, d)


def _logsumexp_rule(d: dtypes.DType) -> tuple[dtypes.DType, dtypes.DType] | None:
    if d.kind == "c":
        return None
    return (dtypes.float32, dtypes.float32) if d.kind != "f" else (d, d)


def _build_ops() -> list[FuzzOp]:
    ops: list[FuzzOp] = []
    for u in UNARY:
        ops.append(FuzzOp(u.name, 1, u.fn, u.ref, u.rule, shapes=UNARY_SHAPES))
    for b in BINARY:
        ops.append(FuzzOp(b.name, 2, b.fn, b.ref, b.rule, shapes=BINARY_SHAPES))
    for r in REDUCTIONS:
        ops.append(
            FuzzOp(r.name, 1, r.fn, r.ref, _reduction_rule(r), _axis_params, shapes=UNARY_SHAPES)
        )
    ops.append(FuzzOp("matmul", 2, nx.matmul, np.matmul, _matmul_rule, shapes=MATMUL_SHAPES))
    ops.append(
        FuzzOp(
            "where",
            2,
            lambda a, b: nx.where(nx.less(a, b) if a.dtype.kind != "c" else nx.equal(a, b), a, b),
            lambda a, b: np.where(np.less(a, b) if a.dtype.kind != "c" else np.equal(a, b), a, b),
            _where_rule,
            shapes=BINARY_SHAPES,
        )
    )
    ops.append(FuzzOp("softmax", 1, nx.softmax, _np_softmax, _nn_rule, _nn_axis_params,
                      shapes=UNARY_SHAPES))  # fmt: skip
    ops.append(FuzzOp("log_softmax", 1, nx.log_softmax, _np_log_softmax, _nn_rule,
                      _nn_axis_params, shapes=UNARY_SHAPES))  # fmt: skip
    ops.append(FuzzOp("logsumexp", 1, nx.logsumexp, _np_logsumexp, _logsumexp_rule,
                      _axis_params, shapes=UNARY_SHAPES))  # fmt: skip
    return ops


#: Every op the fuzzer draws from.
OPS: list[FuzzOp] = _build_ops()


# ---------------------------------------------------------------- values


def _elements(d: dtypes.DType) -> st.SearchStrategy[Any]:
    if d.kind == "b":
        return st.booleans()
    if d.kind in "iu":
        info = np.iinfo(d.numpy_dtype)
        edges = [int(info.min), int(info.max), 0, 1]
        if d.kind == "i":
            edges.append(-1)
        return st.one_of(st.sampled_from(edges), st.integers(int(info.min), int(info.max)))
    if d.kind == "f":
        special = {"allow_nan": True, "allow_infinity": True, "allow_subnormal": True}
        if d is dtypes.float16:
            return st.floats(width=16, **special)
        return (
            st.floats(width=64, **special)
            if d is dtypes.float64
            else st.floats(width=32, **special)
        )
    if d is dtypes.complex64:
        return st.complex_numbers(width=64, allow_nan=True, allow_infinity=True)
    return st.complex_numbers(width=128, allow_nan=True, allow_infinity=True)


def _array(data: st.DataObject, d: dtypes.DType, shape: tuple[int, ...]) -> np.ndarray:
    n = int(np.prod(shape, dtype=np.int64))
    values = data.draw(st.lists(_elements(d), min_size=n, max_size=n))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if d is dtypes.bfloat16:  # drawn as float32, rounded to bfloat16
            return np.array(values, np.float32).astype(d.numpy_dtype).reshape(shape)
        return np.array(values, dtype=d.numpy_dtype).reshape(shape)


# ---------------------------------------------------------------- comparison


@dataclass
class Case:
    """One drawn case and its outcome."""

    op: str
    dtype: str
    shapes: tuple[tuple[int, ...], ...]
    mode: str
    outcome: str
    detail: str = ""

    def __str__(self) -> str:
        shapes = ", ".join(str(s) for s in self.shapes)
        return f"{self.outcome}: {self.op} {self.dtype} {shapes} [{self.mode}] {self.detail}"


def _is_real_float(a: np.ndarray) -> bool:
    return a.dtype.kind == "f" or a.dtype == dtypes.bfloat16.numpy_dtype


def _flush(a: np.ndarray) -> np.ndarray:
    """``a`` with subnormal floats set to zero of the same sign (XLA on CPU), bfloat16's
    included."""
    if a.size == 0 or not (_is_real_float(a) or a.dtype.kind == "c"):
        return a
    if a.dtype.kind == "c":
        r = a.copy()
        r.real, r.imag = _flush(a.real), _flush(a.imag)
        return r
    wide = a.astype(np.float64)
    tiny = float(nx.finfo(dtypes.as_dtype(a.dtype)).smallest_normal)
    return np.where(np.abs(wide) < tiny, np.copysign(0.0, wide), wide).astype(a.dtype)


def _numpy(
    op: FuzzOp,
    arrays: list[np.ndarray],
    compute: dtypes.DType,
    out: dtypes.DType,
    kw: Any,
    *,
    wide: bool = True,
) -> Any:
    args = [to_compute(a, compute, wide=wide) for a in arrays]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = np.asarray(op.ref(*args, **kw))
        return r.astype(out.numpy_dtype)


def _wide(a: np.ndarray) -> np.ndarray:
    if a.dtype == dtypes.bfloat16.numpy_dtype:
        a = a.astype(np.float32)
    return a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)


def _bad(
    got: np.ndarray, want: np.ndarray, op: str, d: dtypes.DType, backend: str, scale: Any = 1.0
) -> np.ndarray:
    """The elements where ``got`` differs from ``want``: NaN equals NaN (in each part of a
    complex number), infinities are exact, finite values within the tolerance (of the
    complex magnitude, as ``numpy.testing.assert_allclose``), the absolute tolerance
    scaled by ``scale``, the magnitude of the terms an element accumulates."""
    if d.kind in "biu":
        return np.asarray(got != want)
    g, w = _wide(got), _wide(want)
    rtol, atol = tolerance(op, d, backend)
    parts = [(g.real, w.real), (g.imag, w.imag)] if d.kind == "c" else [(g, w)]
    bad = np.zeros(got.shape, bool)
    finite = np.ones(got.shape, bool)
    for gp, wp in parts:
        nan_g, nan_w = np.isnan(gp), np.isnan(wp)
        inf_g, inf_w = np.isinf(gp), np.isinf(wp)
        bad |= (nan_g != nan_w) | (inf_g != inf_w) | (inf_g & inf_w & (gp != wp))
        finite &= ~(nan_g | nan_w | inf_g | inf_w)
    with np.errstate(all="ignore"):
        far = ~(np.abs(g - w) <= atol * scale + rtol * np.abs(w))
    return bad | (finite & far)


def _describe(bad: np.ndarray, got: np.ndarray, want: np.ndarray) -> str:
    i = tuple(int(k) for k in np.argwhere(bad)[0])
    return (
        f"{int(bad.sum())} of {bad.size} elements differ; at {i}: got {got[i]!r}, numpy {want[i]!r}"
    )


def _judge(
    op: FuzzOp,
    arrays: list[np.ndarray],
    d: dtypes.DType,
    kw: dict[str, Any],
    result: Any,
    backend: str,
) -> tuple[str, str]:
    rule = op.rule(d)
    assert rule is not None
    compute, out = rule
    if not isinstance(result, nx.Tensor):
        return "wrong", f"returned {type(result).__name__}, not a Tensor"
    want = _numpy(op, arrays, compute, out, kw)
    if result.dtype is not out:
        return "wrong", f"dtype {result.dtype}, expected {out}"
    if result.shape != want.shape:
        return "wrong", f"shape {result.shape}, expected {want.shape}"
    got = result.to_numpy()
    if got.dtype != out.numpy_dtype or got.shape != want.shape:
        return "wrong", f"the backend holds {got.dtype}{list(got.shape)}"
    # sums and products of many terms: their rounding error grows with the terms' size
    # (the kit's reduction tests scale their tolerance the same way)
    scale = _magnitude(op.name, arrays, kw, compute) if out.kind in "fc" else 1.0
    bad = _bad(got, want, op.name, out, backend, scale)
    if not bad.any():
        return "agree", ""
    # Each differing element must be explained by one reading of its own (a case may hold
    # a flushed subnormal in one element and a complex infinity in another).
    left = bad.copy()
    if compute.kind in "fc":
        # numpy computing in the dtype itself (not widened) is the other reading
        native = _numpy(op, arrays, compute, out, kw, wide=False)
        left &= _bad(got, native, op.name, out, backend, scale)
        if not left.any():
            return "agree", ""
    reasons: list[str] = []
    if backend == "xla" and compute.kind in "fc":
        flushed = left & _unexplained_by_flush(op, arrays, compute, out, kw, got, backend, scale)
        if (flushed != left).any():
            reasons.append("subnormals flushed (xla)")
        left = flushed
        if op.name == "log" and compute is dtypes.float32 and left.any():
            # XLA's float32 log of a subnormal is log(2**-150) = -103.97, not flushed
            x = np.broadcast_to(to_compute(arrays[0], compute), left.shape)
            sub = (x != 0) & (np.abs(x) < np.finfo(np.float32).tiny)
            if (left & sub).any():
                reasons.append("float32 log of a subnormal (xla)")
            left &= ~(sub & (got == np.float32(math.log(2.0**-150))))
        if op.name == "exp2" and compute.kind == "f" and left.any():
            # XLA's exp2 is exp(x * ln 2): the product's rounding, |x| ln 2 / 2 of an
            # epsilon, is exp's argument error, relative in the result
            x = np.broadcast_to(_wide(to_compute(arrays[0], compute)), left.shape)
            eps = float(nx.finfo(compute).eps)
            g, w = _wide(got), _wide(want)
            with np.errstate(all="ignore"):
                near = np.abs(g - w) <= (np.abs(x) + 4) * eps * np.abs(w)
            if (left & near).any():
                reasons.append("exp2 as exp(x ln 2) (xla)")
            left &= ~near
    if d.kind == "c" and left.any():
        # a differing element with a non-finite part on one side: C99 readings differ; a
        # complex power past its precision: its phase is rounding
        special = ~(np.isfinite(want) & np.isfinite(got))
        if op.name == "pow":
            loose = _pow_beyond_precision(arrays, compute)
        elif op.name == "sign":
            loose = _magnitude_overflows(arrays[0])
        else:
            loose = special
        if (left & special).any():
            reasons.append("complex special values")
        elif (left & loose).any():
            reasons.append(
                "complex power beyond its precision" if op.name == "pow"
                else "complex magnitude past the largest finite value"
            )  # fmt: skip
        left &= ~special & ~loose
    if out.kind == "f" and op.name in _ACCUMULATING and left.any():
        bound = _accumulation_bound(op.name, arrays, kw)
        if bound is not None:
            at_boundary = np.broadcast_to(bound >= _max_of(out), left.shape)
            if (left & at_boundary).any():
                reasons.append("accumulation order at the overflow boundary")
            left &= ~at_boundary
    if left.any():
        return "wrong", _describe(left, got, want)
    return "known", reasons[0]


def _unexplained_by_flush(
    op: FuzzOp,
    arrays: list[np.ndarray],
    compute: dtypes.DType,
    out: dtypes.DType,
    kw: dict[str, Any],
    got: np.ndarray,
    backend: str,
    scale: Any,
) -> np.ndarray:
    """The elements of ``got`` that no flushing of subnormals explains. XLA on CPU flushes
    subnormal operands and results, but it rewrites programs first, so an operand can reach
    the flushing instruction unflushed (a division becomes a multiplication by a
    reciprocal; a complex op becomes real ops on its parts): every subset of the operands,
    and of the real and imaginary parts of complex ones, flushed, with the result
    flushed too, is a reading XLA can give."""
    parts: list[tuple[int, str]] = []
    for i, a in enumerate(arrays):
        if a.dtype.kind == "c":
            parts += [(i, "real"), (i, "imag")]
        elif _is_real_float(a):
            parts.append((i, ""))
    left = np.ones(got.shape, bool)
    for n in range(1, len(parts) + 1):
        for chosen in itertools.combinations(parts, n):
            flushed_in = [a.copy() for a in arrays]
            for i, part in chosen:
                if part:
                    setattr(flushed_in[i], part, _flush(getattr(arrays[i], part)))
                else:
                    flushed_in[i] = _flush(arrays[i])
            reading = _flush(_numpy(op, flushed_in, compute, out, kw))
            left &= _bad(got, reading, op.name, out, backend, scale)
            if not left.any():
                return left
    return left


#: Ops that add or multiply many terms: where partial results reach the largest finite
#: value, the order of accumulation (blocking, fused multiply-add) decides between a
#: finite result, an infinity and a NaN.
_ACCUMULATING = frozenset({"matmul", "sum", "prod", "mean", "var", "std"})


def _pow_beyond_precision(arrays: list[np.ndarray], compute: dtypes.DType) -> np.ndarray:
    """The elements of a complex ``a ** b`` whose ``|b log a|`` is so large that rounding
    in the dtype moves their phase by more than a milliradian (or is not finite): any
    phase is then as right as another."""
    a, b = np.broadcast_arrays(*(to_compute(x, compute) for x in arrays))
    eps = float(nx.finfo(dtypes.float32 if compute is dtypes.complex64 else dtypes.float64).eps)
    with np.errstate(all="ignore"):
        z = b * np.log(a)
        return np.asarray(~np.isfinite(z) | (np.abs(z) * eps > 1e-3))


def _magnitude_overflows(a: np.ndarray) -> np.ndarray:
    """The elements of a complex ``a`` whose magnitude ``|a|`` overflows its dtype although
    both parts are finite: ``sign(a) = a / |a|`` loses its direction there in every
    library (numpy returns a unit on an axis, JAX, torch and numerix zero)."""
    with np.errstate(all="ignore"):
        return np.asarray(np.isfinite(a) & ~np.isfinite(np.abs(a)))


def _magnitude(
    name: str, arrays: list[np.ndarray], kw: dict[str, Any], compute: dtypes.DType
) -> Any:
    """Per output element, the size of the terms it accumulates (1 for other ops): the sum
    of their magnitudes for sum and matmul, the largest magnitude for mean and std, its
    square for var (the kit's reduction scales)."""
    if name not in _ACCUMULATING or name == "prod":
        return 1.0
    xs = [np.abs(_wide(to_compute(a, compute))) for a in arrays]
    axis, keepdims = kw.get("axis"), kw.get("keepdims", False)
    with np.errstate(all="ignore"):
        if name == "matmul":
            m = np.asarray(xs[0] @ xs[1])
        elif name == "sum":
            m = np.asarray(np.sum(xs[0], axis=axis, keepdims=keepdims))
        else:
            top = np.max(xs[0], axis=axis, keepdims=keepdims, initial=0.0)
            m = np.asarray(top * top if name == "var" else top)
    return np.maximum(np.nan_to_num(m, nan=np.inf), 1.0)


def _max_of(d: dtypes.DType) -> float:
    return float(nx.finfo(d).max)


def _accumulation_bound(name: str, arrays: list[np.ndarray], kw: dict[str, Any]) -> Any:
    """A bound on the magnitude the finite terms of the op can reach, per output element
    (inf where it overflows float64 itself): where it reaches the dtype's largest value,
    those terms overflow to an infinity or not by the order of accumulation, and meet the
    inputs' own infinities as an infinity or a NaN. None for complex inputs."""
    if any(a.dtype.kind == "c" for a in arrays):
        return None
    xs = [np.nan_to_num(np.abs(_wide(a)), nan=0.0, posinf=0.0) for a in arrays]
    with np.errstate(all="ignore"):
        if name == "matmul":
            return np.asarray(xs[0] @ xs[1])
        axis, keepdims = kw.get("axis"), kw.get("keepdims", False)
        if name == "prod":
            return np.asarray(np.prod(np.maximum(xs[0], 1.0), axis=axis, keepdims=keepdims))
        if name in ("var", "std"):  # squared deviations from the mean: |x - m| <= 2 max|x|
            return np.asarray(4 * np.sum(xs[0] * xs[0], axis=axis, keepdims=keepdims))
        return np.asarray(np.sum(xs[0], axis=axis, keepdims=keepdims))


# ---------------------------------------------------------------- the run


@dataclass
class FuzzReport:
    """Counts per outcome, per op, and the first cases of each bad outcome."""

    backend: str
    counts: collections.Counter[str] = field(default_factory=collections.Counter)
    per_op: dict[str, collections.Counter[str]] = field(default_factory=dict)
    known: collections.Counter[str] = field(default_factory=collections.Counter)
    examples: list[Case] = field(default_factory=list)

    def add(self, case: Case) -> None:
        self.counts[case.outcome] += 1
        self.per_op.setdefault(case.op, collections.Counter())[case.outcome] += 1
        if case.outcome == "known":
            self.known[case.detail] += 1
        if case.outcome in ("wrong", "crash") and len(self.examples) < 50:
            self.examples.append(case)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def ok(self) -> bool:
        return self.counts["wrong"] == 0 and self.counts["crash"] == 0

    def format(self) -> str:
        lines = [f"numerix fuzz on {self.backend}: {self.total} cases"]
        lines.append("  " + "  ".join(f"{o} {self.counts[o]}" for o in OUTCOMES))
        for why, n in sorted(self.known.items()):
            lines.append(f"  known difference, {why}: {n}")
        for c in self.examples:
            lines.append(f"  {c}")
        return "\n".join(lines)


def _dtype_pool() -> list[dtypes.DType]:
    return list(dtypes.ALL_DTYPES)


def _jitted(op: FuzzOp, kw: dict[str, Any], compiler: str, cache: dict[Any, Any]) -> Any:
    key = (op.name, tuple(sorted(kw.items())), compiler)
    if key not in cache:
        cache[key] = nx.jit(lambda *a: op.fn(*a, **kw), compiler=compiler)
    return cache[key]


def fuzz(
    backend: str,
    *,
    examples: int = 1000,
    compiled: bool = True,
    seed: int | None = 0,
    stop_on_failure: bool = False,
    ops: Sequence[FuzzOp] | None = None,
) -> FuzzReport:
    """Run ``examples`` generated cases on ``backend``; each case runs eagerly and, with
    ``compiled``, under ``jit`` with every compiler serving the backend.

    ``seed``: a fixed seed (the same cases every run) or None (new cases each run).
    ``stop_on_failure``: raise ``AssertionError`` at the first wrong answer or crash,
    after hypothesis has shrunk it to a minimal case.
    """
    report = FuzzReport(backend)
    pool = list(OPS if ops is None else ops)
    dtype_pool = _dtype_pool()
    compilers = list(compilers_serving(nx.get_backend(backend))) if compiled else []
    programs: dict[Any, Any] = {}

    def run_case(data: st.DataObject) -> None:
        op = data.draw(st.sampled_from(pool), label="op")
        d = data.draw(st.sampled_from(dtype_pool), label="dtype")
        shapes = data.draw(st.sampled_from(list(op.shapes)), label="shapes")
        if op.arity == 1:
            shapes = (shapes,)
        arrays = [_array(data, d, s) for s in shapes]
        kw = op.params(data, shapes[0])
        if op.name == "pow" and d.kind in "iu" and any((a < 0).any() for a in arrays[1:]):
            report.add(Case(op.name, d.short, shapes, "eager", "oracle", "negative int power"))
            return
        tensors = [nx.tensor(a, backend=backend) for a in arrays]
        modes: list[tuple[str, Callable[..., Any]]] = [("eager", lambda *a: op.fn(*a, **kw))]
        modes += [(f"jit[{c}]", _jitted(op, kw, c, programs)) for c in compilers]
        for mode, call in modes:
            case = Case(op.name, d.short, tuple(shapes), mode, "crash")
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    result = call(*tensors)
            except nx.NumerixError as e:
                if op.rule(d) is None and isinstance(e, nx.DTypeError):
                    case.outcome = "refused"
                elif isinstance(e, nx.ShapeError) and _numpy_refuses(op, arrays, d, kw):
                    case.outcome = "refused"  # numpy refuses it too (an empty max)
                else:
                    case.detail = f"{type(e).__name__}: {e}"
            except Exception as e:  # anything else is a foreign traceback
                case.detail = f"{type(e).__name__}: {e} " + _where(e)
            else:
                if op.rule(d) is None:
                    case.outcome, case.detail = "wrong", "accepted a dtype the op refuses"
                else:
                    case.outcome, case.detail = _judge(op, arrays, d, kw, result, backend)
            report.add(case)
            if stop_on_failure and case.outcome in ("wrong", "crash"):
                raise AssertionError(str(case))

    test = settings(
        max_examples=examples,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        print_blob=False,
    )(given(st.data())(run_case))
    if seed is not None:
        test = fixed_seed(seed)(test)
    with nx.default_backend(backend):
        test()
    return report


def _numpy_refuses(
    op: FuzzOp, arrays: list[np.ndarray], d: dtypes.DType, kw: dict[str, Any]
) -> bool:
    rule = op.rule(d)
    if rule is None:
        return False
    try:
        _numpy(op, arrays, rule[0], rule[1], kw)
    except ValueError:
        return True
    return False


def _where(e: BaseException) -> str:
    frames = traceback.extract_tb(e.__traceback__)
    return f"(raised in {frames[-1].filename}:{frames[-1].lineno})" if frames else ""


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m numerix.testing.fuzz BACKEND [--examples N] [--seed S] [--eager-only]``."""
    p = argparse.ArgumentParser(prog="python -m numerix.testing.fuzz", description=__doc__)
    p.add_argument("backend")
    p.add_argument("--examples", type=int, default=10_000)
    p.add_argument("--seed", type=int, default=None, help="fixed cases (default: new ones)")
    p.add_argument("--eager-only", action="store_true", help="no compiled runs")
    args = p.parse_args(argv)
    report = fuzz(
        args.backend, examples=args.examples, compiled=not args.eager_only, seed=args.seed
    )
    print(report.format())
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
