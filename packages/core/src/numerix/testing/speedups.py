"""The compiled fast path against the Python path, on one backend.

:mod:`numerix._speedups` serves the hot ops from a memo of what the Python rules
decided (docs/decisions.md 38), calling the backend's kernel or its
:meth:`~numerix.backend.Backend.fast_kernel` shortcut. This module runs every op that
has the fast path both ways on the same operands (every dtype the backend holds; 0-d,
empty, one and two dimensions; Python floats and ints on either side, with their edge values)
and requires the same outcome: the same error (type and message), or tensors of the same
type, shape, dtype and backend whose payloads have the same type and the same bits.

A backend's tests call :func:`check_backend` (``packages/*/tests/test_speedups.py``);
it fails when the fast path is never taken, so a fast path switched off by mistake is
seen too.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

import numerix as nx
from numerix import _dispatch, _tensor, dtypes
from numerix.errors import IndexingError, NumerixError
from numerix.ops import _fast, elementwise, linalg, reduction
from numerix.testing.oracle import sample

__all__ = [
    "fast_ops", "same_outcome", "check_backend", "check_huge_slices", "check_rows", "shortcuts",
    "shortcuts_asked", "SCALARS", "INTS", "SLICES", "HUGE_SLICES", "INDEXES", "RESHAPES",
    "SHAPES",
]  # fmt: skip

#: Python floats on the scalar side: their edge values (signed zero, NaN, infinities,
#: overflow of every float dtype, a value no binary float holds).
SCALARS = (1.0001, -0.0, 0.0, math.nan, math.inf, -math.inf, 1e300, -1e-300, 1 / 3, 65504.0)

#: Python ints on the scalar side: every integer dtype's edges and past them (the
#: Python op refuses an int that does not fit), and beyond float16's range.
INTS = (0, 1, -1, 2, 127, 128, 255, 256, -129, 65504, 70000, 2**31, 2**63 - 1, 2**64, -(2**63) - 1,
        10**40)  # fmt: skip

# asked again after the others: operands the fast path keeps for a few recent scalars of a
# form (found again, and -0.0 not taken for 0.0)
_AGAIN = (1 / 3, -0.0, 2**64)

#: Keys of x[key]: the fast path's (one slice of ints, positive step) and its edges.
SLICES = (
    slice(1, 3), slice(None), slice(None, None, 2), slice(1, None, 3), slice(-2, None),
    slice(None, -1), slice(5, 1), slice(-100, 100), slice(2, 2), slice(0, 1, 5),
    slice(None, None, -1), slice(3, 0, -2), slice(0, 0, 0), slice(2 ** 70, None),
    slice(True, None), slice(1.0, 2), slice(None, None, 2**63 - 1), slice(None, -(2**70)),
    slice(-(2**70), 2**70, 2**64),
)  # fmt: skip

#: Keys whose bounds or steps are past int64 (numpy clamps them), on axis 0 and beyond.
HUGE_SLICES = (
    slice(None, None, 2**63 - 1), slice(None, None, 2**63), slice(None, None, 2**70),
    slice(2**70, None), slice(None, -(2**70)), slice(-(2**70), 2**70, 2**64),
    slice(1, None, 2**63 - 1), slice(None, None, -(2**63)), slice(None, None, -(2**70)),
    slice(2**63, None, -1), slice(-(2**63), None), slice(None, 2**63),
    (slice(None, None, 2**63 - 1), slice(2**70, None)), (Ellipsis, slice(None, None, -(2**64))),
    (slice(None, None, -(2**63)), slice(None, None, 2**63)), (None, slice(None, None, 2**63)),
)  # fmt: skip

#: Keys of x[i]: Python ints within axis 0 (from either end) and past it, and what is
#: not a Python int (a bool, an int too large for an index).
INDEXES = (0, 1, -1, 2, -2, -3, 3, -4, 2**70, True, False)

#: Shapes for x.reshape(shape), for an x of 6 elements (and the other sizes' errors).
RESHAPES = ((6,), (2, 3), (3, 2), (1, 6, 1), (-1,), (2, -1), (4,), (2, 3.0), [2, 3], (0,))

#: Operand shapes: 0-d, empty, one element, a vector, a matrix.
SHAPES = ((), (0,), (1,), (3,), (2, 3))
_MATMULS = (((2, 3), (3, 4)), ((0, 3), (3, 2)), ((2, 0), (0, 2)), ((1, 1), (1, 1)),
            ((2, 3), (2, 3)), ((3,), (3, 2)), ((2, 3, 4), (4, 2)))  # fmt: skip


def fast_ops() -> list[Any]:
    """Every public op the compiled fast path wraps (none where it is not built)."""
    if _fast.SPEEDUPS is None:
        return []
    out = []
    for mod in (elementwise, linalg, reduction):
        for name in mod.__all__:
            op = getattr(mod, name)
            if type(op) is _fast.SPEEDUPS.Op:
                out.append(op)
    return out


def _outcome(f: Callable[..., Any], *args: Any) -> Any:
    try:
        return f(*args)
    except Exception as e:  # compared with the other path's
        return e


def same_outcome(what: str, fast: Any, slow: Any) -> None:
    """Raise AssertionError unless the two outcomes (a tensor or an exception) agree."""
    if isinstance(slow, Exception) or isinstance(fast, Exception):
        if type(fast) is not type(slow) or str(fast) != str(slow):
            raise AssertionError(f"{what}: the fast path gave {fast!r}, the Python path {slow!r}")
        return
    if type(fast) is not type(slow):
        raise AssertionError(f"{what}: {type(fast).__name__} against {type(slow).__name__}")
    if not isinstance(slow, nx.Tensor):
        if fast != slow:
            raise AssertionError(f"{what}: {fast!r} against {slow!r}")
        return
    if (fast.shape, fast.dtype, fast.backend) != (slow.shape, slow.dtype, slow.backend):
        raise AssertionError(f"{what}: {fast.describe()} against {slow.describe()}")
    if type(fast.data) is not type(slow.data):
        raise AssertionError(
            f"{what}: payload {type(fast.data).__name__} against {type(slow.data).__name__}"
        )
    a, b = np.asarray(fast.backend.to_numpy(fast)), np.asarray(slow.backend.to_numpy(slow))
    if a.dtype != b.dtype or a.shape != b.shape or a.tobytes() != b.tobytes():
        raise AssertionError(f"{what}: values differ:\n{a!r}\nagainst\n{b!r}")


def _operands(
    backend: Any, kinds: tuple[dtypes.DType, ...], shapes: tuple[tuple[int, ...], ...]
) -> Iterator[tuple[tuple[int, ...], Any, Any]]:
    for d in kinds:
        for shape in shapes:
            try:
                x = nx.tensor(sample(d, shape, 1), dtype=d, backend=backend)
                y = nx.tensor(sample(d, shape, 2), dtype=d, backend=backend)
            except NumerixError:  # a dtype this backend does not hold
                break
            yield shape, x, y


def _both(what: str, op: Any, *args: Any) -> None:
    same_outcome(what, _outcome(op, *args), _outcome(op.__wrapped__, *args))


def _check_ops(backend: Any, kinds: tuple[dtypes.DType, ...],
               shapes: tuple[tuple[int, ...], ...]) -> None:  # fmt: skip
    operands = list(_operands(backend, kinds, shapes))
    # a 0-d tensor of each dtype, to meet the others (the t0 and 0t forms)
    zero_d = {x.dtype: x for shape, x, _ in operands if shape == ()}
    for op in fast_ops():
        name = op.__name__
        if name == "matmul":
            for d in kinds:
                for s1, s2 in _MATMULS:
                    try:
                        a = nx.tensor(sample(d, s1, 1), dtype=d, backend=backend)
                        b = nx.tensor(sample(d, s2, 2), dtype=d, backend=backend)
                    except NumerixError:
                        break
                    _both(f"matmul of {a.describe()} and {b.describe()}", op, a, b)
            continue
        unary = op.__wrapped__.__code__.co_argcount == 1
        for shape, x, y in operands:
            what = f"{name} on {x.describe()}"
            if unary:
                _both(what, op, x)
                continue
            _both(what, op, x, y)
            z = zero_d.get(x.dtype)
            if len(shape) == 1 and z is not None:  # empty and not: each new shape compiles on xla
                _both(f"{what} and {z.describe()}", op, x, z)
                _both(f"{z.describe()} and {what}", op, z, x)
            if shape == () or (len(shape) == 1 and shape[0] > 1):
                for s in (*SCALARS, *INTS, *_AGAIN):
                    _both(f"{what} and {s!r}", op, x, s)
                    _both(f"{s!r} and {what}", op, s, x)


def _check_methods(backend: Any, kinds: tuple[dtypes.DType, ...],
                   shapes: tuple[tuple[int, ...], ...]) -> None:  # fmt: skip
    getitem = _tensor.python_method("__getitem__")
    reshape = _tensor.python_method("reshape")
    # x.sum(): the op's fast path from the base, against the op's Python path (what the
    # Python method calls, the compiled module off)
    reductions = [(name, getattr(reduction, name)) for name in _tensor.REDUCTION_METHODS]
    for shape, x, _ in _operands(backend, kinds, shapes):
        for name, op in reductions:
            python = getattr(op, "__wrapped__", op)
            same_outcome(f"{x.describe()}.{name}()", _outcome(getattr(x, name)),
                         _outcome(python, x))  # fmt: skip
        if shape:
            for key in SLICES:
                same_outcome(f"{x.describe()}[{key}]", _outcome(x.__getitem__, key),
                             _outcome(getitem, x, key))  # fmt: skip
            # x[i], also of a transposed matrix: a strided payload, which the Python
            # path's reshape may copy where an index gives a view; the layout must agree
            for y in (x, nx.transpose(x)) if len(shape) == 2 else (x,):
                for i in INDEXES:
                    what = f"{y.describe()}[{i!r}]"
                    fast, slow = _outcome(y.__getitem__, i), _outcome(getitem, y, i)
                    same_outcome(what, fast, slow)
                    if isinstance(slow, nx.Tensor) and _layout(fast.data) != _layout(slow.data):
                        raise AssertionError(f"{what}: payload strides {_layout(fast.data)} "
                                             f"against {_layout(slow.data)}")  # fmt: skip
    for _, x, _ in _operands(backend, kinds, ((2, 3),)):
        for s in RESHAPES:
            fast, slow = _outcome(x.reshape, s), _outcome(reshape, x, s)
            same_outcome(f"{x.describe()}.reshape({s})", fast, slow)
            if (slow is x) != (fast is x):
                raise AssertionError(f"{x.describe()}.reshape({s}): x itself on one path only")


def _layout(payload: Any) -> Any:
    """A payload's strides, where it has them (numpy's ``strides``, torch's ``stride()``)."""
    strides = getattr(payload, "strides", None)
    if strides is None and callable(getattr(payload, "stride", None)):
        strides = payload.stride()
    return None if strides is None else tuple(strides)


def check_backend(
    backend: Any,
    *,
    kinds: tuple[dtypes.DType, ...] = dtypes.ALL_DTYPES,
    shapes: tuple[tuple[int, ...], ...] = SHAPES,
) -> None:
    """Every fast op, ``x[a:b:c]``, ``x[i]``, ``x.reshape`` and ``x.sum()`` (``prod``, ``max``,
    ``min``, ``all``, ``any``) both ways on ``backend`` (a backend
    object), over the dtypes ``kinds`` (those the backend holds) and operands of
    ``shapes``; AssertionError at the first difference, or when the compiled module is
    built but took no call on this backend."""
    if _fast.SPEEDUPS is None:
        raise AssertionError("numerix._speedups is not built or is turned off")
    _fast.SPEEDUPS.clear()
    _check_ops(backend, kinds, shapes)
    _check_methods(backend, kinds, shapes)
    hot: tuple[Any, ...] = (nx.add, nx.exp, nx.matmul)
    for op in hot:
        if not [m for m in op.memo() if m[0] is backend and m[3]]:
            raise AssertionError(f"{op.__name__}: the fast path took no call on {backend!r}")


def check_huge_slices(backend: Any, kinds: tuple[dtypes.DType, ...]) -> None:
    """``x[key]`` for every key of :data:`HUGE_SLICES` on a 4×3 tensor of each dtype of
    ``kinds`` on ``backend``, through Tensor's operator and through the Python path: the
    values, shape and dtype numpy gives, and no warning (torch warns of a step it
    truncates). Works with the compiled module off too."""
    python = _tensor.python_method("__getitem__")
    for d in kinds:
        host = sample(d, (4, 3), 0)
        x = nx.tensor(host, dtype=d, backend=backend)
        for key in HUGE_SLICES:
            want = host[key]
            for way, f in (("x[key]", type(x).__getitem__), ("the Python path", python)):
                with warnings.catch_warnings():
                    warnings.simplefilter("error")
                    got = f(x, key)
                    _same_as_numpy(f"{way} of {x.describe()}[{key!r}]", got, want, d)


def check_rows(backend: Any, kinds: tuple[dtypes.DType, ...], n: int = 5) -> None:
    """``x[i]`` for every ``i`` in ``range(-n, n)`` of a vector and an n×3 tensor of each
    dtype of ``kinds`` on ``backend``, through Tensor's operator and through the Python
    path: the values, shape and dtype numpy gives; and the same :class:`IndexingError` on
    both for ints past either end, asked first on a fresh memo (the plan of a shape is
    made on an int out of range) and again after the rows. Works with the compiled module
    off too."""
    python = _tensor.python_method("__getitem__")
    for d in kinds:
        for shape in ((n,), (n, 3)):
            host = sample(d, shape, 0)
            x = nx.tensor(host, dtype=d, backend=backend)
            if _fast.SPEEDUPS is not None:
                _fast.SPEEDUPS.clear()
            _check_outside(x, python)
            for i in range(-n, n):
                want = np.asarray(host[i])
                for way, f in (("x[i]", type(x).__getitem__), ("the Python path", python)):
                    _same_as_numpy(f"{way} of {x.describe()}[{i}]", f(x, i), want, d)
            _check_outside(x, python)


def _same_as_numpy(what: str, got: Any, want: np.ndarray, d: dtypes.DType) -> None:
    """``got`` has numpy's answer ``want``: its shape, the dtype ``d`` and the same bytes."""
    values = got.to_numpy()
    if got.shape != want.shape or got.dtype is not d or values.dtype != want.dtype:
        raise AssertionError(
            f"{what}: {got.describe()}, numpy gives {want.dtype}{list(want.shape)}"
        )
    if values.tobytes() != want.tobytes():
        raise AssertionError(f"{what}: {values.tolist()}, numpy gives {want.tolist()}")


def _check_outside(x: Any, python: Any) -> None:
    n = x.shape[0]
    for i in (n, -n - 1, 2**63 - 1, -(2**63), 2**63, -(2**63) - 1, 2**70):
        fast, slow = _outcome(type(x).__getitem__, x, i), _outcome(python, x, i)
        if not isinstance(slow, IndexingError):
            raise AssertionError(f"{x.describe()}[{i}]: the Python path gave {slow!r}")
        same_outcome(f"{x.describe()}[{i}]", fast, slow)


def shortcuts(backend: Any) -> set[tuple[str, str, str]]:
    """(op, dtype, form) of every memo entry on ``backend`` that uses the backend's own
    shortcut (:meth:`~numerix.backend.Backend.fast_kernel`)."""
    out: set[tuple[str, str, str]] = set()
    if _fast.SPEEDUPS is None:
        return out
    for op in [*fast_ops(), *_fast.METHOD_OPS.values()]:
        for b, d, form, taken, short in op.memo():
            if b is backend and taken and short:
                out.add((getattr(op, "__name__", op.primitive.name), d.name, form))
    return out


@contextmanager
def shortcuts_asked() -> Iterator[None]:
    """The rule check off inside (no backend is asked for a shortcut while it is on, and
    the kit's plugin turns it on), back as it was after; every memo dropped on either
    side, so none keeps a shortcut past the block."""
    was = _dispatch.rule_checks_enabled()
    _dispatch.check_rules(False)
    if _fast.SPEEDUPS is not None:
        _fast.SPEEDUPS.clear()
    try:
        yield
    finally:
        _dispatch.check_rules(was)
        if _fast.SPEEDUPS is not None:
            _fast.SPEEDUPS.clear()
