"""The XLA backend: every primitive as a jitted ``jax.lax`` kernel on one XLA device.

Each primitive is one traced function of payloads (``numerix.backend.elementwise`` /
``payload``), compiled with ``jax.jit`` and cached per primitive, static parameters and
operand types (:func:`numerix_xla._kernels.kernel`), one executable each: an eager
``lax`` call dispatches op by op and is slower than a cached jitted one. The core has already
validated and promoted the inputs, so ``jax.numpy``'s checks would be wasted time;
kernels call ``lax`` directly.

Indices, slice starts and scalar values are runtime operands of the kernels, never
part of a kernel's key: ``t[i, j]`` with a new ``i, j`` runs the kernel compiled for
the first one (:data:`numerix_xla._kernels.CACHE_SIZE` bounds the kernels kept).

64-bit types need JAX's process-wide 64-bit mode (``jax_enable_x64``), which numerix
changes only when a 64-bit tensor is about to be made on xla, as the setting
``[backends.xla] x64`` says (:mod:`numerix_xla._x64`): importing this module, or
choosing another backend, leaves JAX alone.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Mapping
from operator import attrgetter, itemgetter
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.experimental import multihost_utils
from jax.sharding import Mesh, NamedSharding, PartitionSpec, SingleDeviceSharding

from numerix import dtypes
from numerix._tensor import Tensor
from numerix.backend import (
    Backend,
    Option,
    ShortcutDeclined,
    elementwise,
    forget_fast_kernels,
    payload,
)
from numerix.dtypes import DType
from numerix.errors import ArgumentError, BackendOptionError
from numerix.primitives import Primitive
from numerix.primitives._registry import op_name
from numerix_xla import _kernels
from numerix_xla._extra import ExtraKernels
from numerix_xla._indexing import IndexingKernels
from numerix_xla._kernels import (
    WIDE,
    check_64bit,
    clear,
    constant,
    constant_key,
    is_constant,
    jitted,
    x64_error,
    x64_on,
)
from numerix_xla._nn import NnKernels
from numerix_xla._x64 import X64Warning
from numerix_xla.clients import (
    CLIENTS,
    default_client,
    get_client,
    kernel_cache_size,
    target_problem,
    x64_setting,
)

__all__ = ["X64Warning", "XlaBackend", "check_64bit", "jitted"]


_kernels.set_cache_size(kernel_cache_size())


# ====================================================================== traced helpers
# Everything below runs while jax traces a kernel: dtypes and shapes are static there, so
# Python branches on them cost nothing at run time.

_F32 = np.dtype(np.float32)
_LOW = frozenset({np.dtype(np.float16), np.dtype(jax.numpy.bfloat16)})


def _is_float(d: np.dtype) -> bool:
    # ml_dtypes' bfloat16 has numpy kind "V", not "f"
    return d.kind == "f" or d in _LOW


def _bcast(a: Any, shape: tuple[int, ...]) -> Any:
    if a.shape == shape:
        return a
    return lax.broadcast_in_dim(a, shape, tuple(range(len(shape) - a.ndim, len(shape))))


def _bcast2(a: Any, b: Any) -> tuple[Any, Any]:
    if a.shape == b.shape:
        return a, b
    shape = np.broadcast_shapes(a.shape, b.shape)
    return _bcast(a, shape), _bcast(b, shape)


def _bcast_divisor(a: Any, b: Any) -> tuple[Any, Any]:
    """``_bcast2`` for a division: XLA rewrites ``a / broadcast(b)`` as ``a *
    broadcast(1 / b)``, a rounding more than numpy's quotient, and 0 where ``1 / b`` is
    subnormal and flushed (``1e308 / 1e308`` was 0.0 in float64). A broadcast float
    divisor goes through an optimization barrier, which keeps the division one."""
    if a.shape == b.shape:
        return a, b
    a2, b2 = _bcast2(a, b)
    if b2 is not b and b.dtype.kind in "fcV":
        b2 = lax.optimization_barrier(b2)
    return a2, b2


@functools.cache
def _np_dtype(d: Any) -> np.dtype:
    return np.dtype(d.numpy_dtype)


def _cvt(a: Any, dtype: Any) -> Any:
    return a if a.dtype == dtype else lax.convert_element_type(a, dtype)


def _const(like: Any, value: Any) -> Any:
    return lax.full_like(like, value)


def _math1(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    # float16 / bfloat16 compute in float32 and round once, as numpy (and binary) do
    def k(a: Any) -> Any:
        if a.dtype in _LOW:
            return _cvt(fn(_cvt(a, _F32)), a.dtype)
        return fn(a)

    return k


def _math2(fn: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    def k(a: Any, b: Any) -> Any:
        a, b = _bcast2(a, b)
        if a.dtype in _LOW:
            return _cvt(fn(_cvt(a, _F32), _cvt(b, _F32)), a.dtype)
        return fn(a, b)

    return k


def _plain2(fn: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    def k(a: Any, b: Any) -> Any:
        a, b = _bcast2(a, b)
        return fn(a, b)

    return k


def _signbit(a: Any) -> Any:
    return lax.bitcast_convert_type(a, np.dtype(f"i{a.dtype.itemsize}")) < 0


def _sign(a: Any) -> Any:
    if a.dtype.kind == "c":
        m = lax.abs(a)
        zero = m == 0
        safe = lax.select(zero, lax.full_like(m, 1), m)
        r = lax.complex(lax.real(a) / safe, lax.imag(a) / safe)
        return lax.select(zero, lax.full_like(a, 0), r)
    if a.dtype.kind == "u":
        return _cvt(a != 0, a.dtype)
    if _is_float(a.dtype):  # numpy's sign of -0.0 is +0.0; XLA's keeps the zero's sign
        return lax.select(a == 0, lax.full_like(a, 0), lax.sign(a))
    return lax.sign(a)


def _round(a: Any) -> Any:
    if a.dtype.kind == "c":
        return lax.complex(_round(lax.real(a)), _round(lax.imag(a)))
    if a.dtype.kind in "iu":
        return a
    return lax.round(a, lax.RoundingMethod.TO_NEAREST_EVEN)


def _divide(a: Any, b: Any) -> Any:
    a, b = _bcast_divisor(a, b)
    if a.dtype in _LOW:
        return _cvt(lax.div(_cvt(a, _F32), _cvt(b, _F32)), a.dtype)
    return lax.div(a, b)


def _log(a: Any) -> Any:
    # XLA's complex log reads a subnormal imaginary part neither as itself nor as a zero of
    # its sign: log(-1 + 1e-310j) was -pi j, where numpy (and the flushed +0) give +pi j.
    # The parts are flushed first, as XLA flushes real operands.
    if a.dtype.kind == "c":
        a = lax.complex(_flushed(lax.real(a)), _flushed(lax.imag(a)))
    return lax.log(a)


def _flushed(a: Any) -> Any:
    """``a`` with its subnormal values replaced by zeros of their sign."""
    tiny = _const(a, np.finfo(a.dtype).tiny)
    return lax.select(lax.abs(a) < tiny, a * _const(a, 0), a)


def _int_identity(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def k(a: Any) -> Any:
        return a if a.dtype.kind in "iu" else fn(a)

    return k


def _abs(a: Any) -> Any:
    return a if a.dtype.kind == "u" else lax.abs(a)


def _negative(a: Any) -> Any:
    # lax.neg refuses unsigned integers; numpy wraps around
    return lax.sub(_const(a, 0), a) if a.dtype.kind == "u" else lax.neg(a)


def _sqrt(a: Any) -> Any:
    # XLA's complex sqrt ignores the sign of a zero imaginary part: sqrt(-4 - 0j) is 2j
    # where C99 and numpy give -2j (the lower side of the branch cut)
    r = lax.sqrt(a)
    if a.dtype.kind != "c":
        return r
    im = lax.imag(a)
    negative_zero = lax.bitwise_and(lax.eq(im, lax.full_like(im, 0)), jnp.signbit(im))
    return lax.select(negative_zero, lax.conj(r), r)


def _rsqrt(a: Any) -> Any:
    # 1 / sqrt, correctly rounded twice as binary's; XLA's rsqrt may be an approximation
    return lax.div(lax.full_like(a, 1), _sqrt(a))


def _isnan(a: Any) -> Any:
    if a.dtype.kind == "c":
        return _isnan(lax.real(a)) | _isnan(lax.imag(a))
    if not _is_float(a.dtype):
        return lax.full(a.shape, False)
    if a.dtype in _LOW:
        a = _cvt(a, _F32)
    return a != a


def _isinf(a: Any) -> Any:
    if a.dtype.kind == "c":
        return _isinf(lax.real(a)) | _isinf(lax.imag(a))
    if not _is_float(a.dtype):
        return lax.full(a.shape, False)
    return lax.abs(a) == np.array(np.inf, a.dtype)


def _isfinite(a: Any) -> Any:
    if a.dtype.kind == "c":
        return lax.is_finite(lax.real(a)) & lax.is_finite(lax.imag(a))
    if not _is_float(a.dtype):
        return lax.full(a.shape, True)
    if a.dtype in _LOW:
        a = _cvt(a, _F32)
    return lax.is_finite(a)


def _float_divmod(a: Any, b: Any) -> tuple[Any, Any]:
    # numpy's npy_divmod, step by step: fmod, then the Python sign convention, then the
    # quotient snapped to the nearest integer; b == 0 gives a / b and fmod's NaN
    zero, one = _const(a, 0), _const(a, 1)
    mod = lax.rem(a, b)
    div = lax.div(lax.sub(a, mod), b)
    nz = mod != zero
    adj = nz & ((b < zero) != (mod < zero))
    signed_zero_b = lax.select(_signbit(b), _const(a, -0.0), zero)
    mod = lax.select(adj, lax.add(mod, b), lax.select(nz, mod, signed_zero_b))
    div = lax.select(adj, lax.sub(div, one), div)
    fl = lax.floor(div)
    fl = lax.select(lax.sub(div, fl) > _const(a, 0.5), lax.add(fl, one), fl)
    q = lax.div(a, b)
    signed_zero_q = lax.select(_signbit(q), _const(a, -0.0), zero)
    fl = lax.select(div != zero, fl, signed_zero_q)
    b0 = b == zero
    return lax.select(b0, q, fl), lax.select(b0, lax.rem(a, b), mod)


def _int_divmod(a: Any, b: Any) -> tuple[Any, Any]:
    # XLA gives -1 for x // 0 and x for x % 0; numpy (and binary) give 0 for both
    zero = _const(a, 0)
    b0 = b == zero
    bs = lax.select(b0, _const(b, 1), b)
    q, r = lax.div(a, bs), lax.rem(a, bs)
    if a.dtype.kind == "i":
        adj = (r != zero) & ((r < zero) != (bs < zero))
        q = lax.select(adj, lax.sub(q, _const(q, 1)), q)
        r = lax.select(adj, lax.add(r, bs), r)
    return lax.select(b0, zero, q), lax.select(b0, zero, r)


def _floor_divide(a: Any, b: Any) -> Any:
    a, b = _bcast_divisor(a, b)
    if a.dtype.kind in "iu":
        return _int_divmod(a, b)[0]
    if a.dtype in _LOW:
        return _cvt(_float_divmod(_cvt(a, _F32), _cvt(b, _F32))[0], a.dtype)
    return _float_divmod(a, b)[0]


def _remainder(a: Any, b: Any) -> Any:
    a, b = _bcast_divisor(a, b)
    if a.dtype.kind in "iu":
        return _int_divmod(a, b)[1]
    if a.dtype in _LOW:
        return _cvt(_float_divmod(_cvt(a, _F32), _cvt(b, _F32))[1], a.dtype)
    return _float_divmod(a, b)[1]


def _pow(a: Any, b: Any) -> Any:
    a, b = _bcast2(a, b)
    if a.dtype.kind not in "iu":
        if a.dtype in _LOW:
            return _cvt(lax.pow(_cvt(a, _F32), _cvt(b, _F32)), a.dtype)
        return lax.pow(a, b)
    # lax.pow takes no integers: square-and-multiply over the exponent's bits, wrapping
    # around as numpy's integer power does
    one = _const(a, 1)
    e = lax.bitcast_convert_type(b, np.dtype(f"u{b.dtype.itemsize}")) if b.dtype.kind == "i" else b
    acc, base = one, a
    for i in range(a.dtype.itemsize * 8):
        bit = lax.bitwise_and(lax.shift_right_logical(e, _const(e, i)), _const(e, 1)) != 0
        acc = lax.select(bit, lax.mul(acc, base), acc)
        base = lax.mul(base, base)
    if a.dtype.kind == "u":
        return acc
    # x ** -n as XLA defines it: 1 for x == 1, +-1 for x == -1, else 0
    neg1 = _const(a, -1)
    odd = lax.bitwise_and(b, _const(b, 1)) != 0
    neg = lax.select(a == one, one, lax.select(a == neg1, lax.select(odd, neg1, one), _const(a, 0)))
    return lax.select(b < _const(b, 0), neg, acc)


def _shift_ok(a: Any, b: Any) -> Any:
    bits = _const(b, a.dtype.itemsize * 8)
    return (b < bits) if a.dtype.kind == "u" else ((b >= _const(b, 0)) & (b < bits))


def _shift_left(a: Any, b: Any) -> Any:
    a, b = _bcast2(a, b)
    ok = _shift_ok(a, b)
    r = lax.shift_left(a, lax.select(ok, b, _const(b, 0)))
    return lax.select(ok, r, _const(a, 0))


def _shift_right(a: Any, b: Any) -> Any:
    # out of range: arithmetic shifts saturate to the sign, logical ones to 0 (XLA, binary)
    a, b = _bcast2(a, b)
    ok = _shift_ok(a, b)
    bs = lax.select(ok, b, _const(b, 0))
    if a.dtype.kind == "u":
        return lax.select(ok, lax.shift_right_logical(a, bs), _const(a, 0))
    fill = lax.select(a < _const(a, 0), _const(a, -1), _const(a, 0))
    return lax.select(ok, lax.shift_right_arithmetic(a, bs), fill)


def _compare(fn: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    def k(a: Any, b: Any) -> Any:
        a, b = _bcast2(a, b)
        if a.dtype == np.bool_:
            a, b = _cvt(a, np.uint8), _cvt(b, np.uint8)
        return fn(a, b)

    return k


def _select(p: Any, t: Any, f: Any) -> Any:
    shape = np.broadcast_shapes(p.shape, t.shape, f.shape)
    return lax.select(_bcast(p, shape), _bcast(t, shape), _bcast(f, shape))


def _as_type(a: Any, *, dtype: DType) -> Any:
    to = _np_dtype(dtype)
    if to.kind == "b":
        return a != _const(a, 0)
    if a.dtype.kind == "c" and to.kind != "c":
        a = lax.real(a)
    if to.kind in "iu" and _is_float(a.dtype):
        # NaN -> 0, out of range saturates (binary's rule); compared in a float type
        # that holds both ends exactly, so the ends themselves are not rounded
        w = np.dtype(np.float64) if a.dtype.itemsize == 8 else _F32
        f = _cvt(a, w)
        info = np.iinfo(to)
        lo = _const(f, float(info.min))
        hi = _const(f, 2.0 ** (info.bits - (info.min < 0)))
        t = lax.select(f < _const(f, 0), lax.ceil(f), lax.floor(f))
        over, under = t >= hi, t < lo
        bad = over | under | (t != t)
        r = lax.convert_element_type(lax.select(bad, _const(t, 0), t), to)
        r = lax.select(over, _const(r, info.max), r)
        return lax.select(under, _const(r, info.min), r)
    if a.dtype.kind == "b" and to.kind in "fc":
        # a select, not a convert: XLA's simplifier reads convert(pred) / convert(pred)
        # as a select of the dividend, so False / False gave 0 instead of nan in a
        # compiled program (raw jax.jit does the same)
        shape = a.shape
        return lax.select(a, lax.full(shape, 1, to), lax.full(shape, 0, to))
    return lax.convert_element_type(a, to)


def _keep(r: Any, shape: tuple[int, ...], axes: tuple[int, ...], keepdims: bool) -> Any:
    if not keepdims:
        return r
    return lax.reshape(r, tuple(1 if i in axes else d for i, d in enumerate(shape)))


def _reduce(a: Any, *, kind: str, axes: tuple[int, ...], keepdims: bool, dtype: DType) -> Any:
    """reduce of ``kind``: lax's own reduction (bool max/min as or/and)."""
    shape = a.shape
    if kind in ("all", "any"):
        r = a if a.dtype == np.bool_ else a != _const(a, 0)
        r = (lax.reduce_and if kind == "all" else lax.reduce_or)(r, axes)
        return _keep(r, shape, axes, keepdims)
    if kind in ("sum", "prod"):
        to = _np_dtype(dtype)
        a = _cvt(a, to)
        if a.dtype in _LOW:
            a = _cvt(a, _F32)
        r = (lax.reduce_sum if kind == "sum" else lax.reduce_prod)(a, axes)
        return _keep(_cvt(r, to), shape, axes, keepdims)
    if a.dtype == np.bool_:
        r = (lax.reduce_or if kind == "max" else lax.reduce_and)(a, axes)
    else:
        r = (lax.reduce_max if kind == "max" else lax.reduce_min)(a, axes)
    return _keep(r, shape, axes, keepdims)


def _argreduce(a: Any, *, kind: str, axis: int | None, keepdims: bool) -> Any:
    shape = a.shape
    if a.dtype == np.bool_:
        a = _cvt(a, np.uint8)
    ax = axis
    if ax is None:
        a = lax.reshape(a, (a.size,))
        ax = 0
    r = (lax.argmax if kind == "max" else lax.argmin)(a, ax, np.int64)
    if keepdims:
        return lax.reshape(r, (1,) * len(shape) if axis is None else
                           tuple(1 if i == axis else d for i, d in enumerate(shape)))  # fmt: skip
    return r


def _dot(a: Any, b: Any, *, contract_x: tuple[int, ...], batch_x: tuple[int, ...],
         contract_y: tuple[int, ...], batch_y: tuple[int, ...], dtype: DType) -> Any:  # fmt: skip
    to = _np_dtype(dtype)
    if _is_float(to) or to.kind == "c":
        precision, acc = lax.Precision.HIGHEST, (_F32 if to in _LOW else to)
    else:
        precision, acc = None, to
    dims = ((contract_x, contract_y), (batch_x, batch_y))
    r = lax.dot_general(a, b, dims, precision=precision, preferred_element_type=acc)
    return _cvt(r, to)


def _gather(a: Any, idx: Any, *, axes: tuple[int, ...]) -> Any:
    batch = idx.ndim - 1
    dn = lax.GatherDimensionNumbers(
        offset_dims=tuple(range(batch, batch + a.ndim - len(axes))),
        collapsed_slice_dims=axes,
        start_index_map=axes,
    )
    sizes = tuple(1 if i in axes else d for i, d in enumerate(a.shape))
    return lax.gather(
        a, idx, dn, sizes, mode=lax.GatherScatterMode.PROMISE_IN_BOUNDS,
        indices_are_sorted=False, unique_indices=False,
    )  # fmt: skip


def _eye(shape: tuple[int, ...], dtype: np.dtype) -> Any:
    def f(k: Any) -> Any:  # the diagonal k is a runtime operand
        *batch, n, m = shape
        rows = lax.broadcasted_iota(k.dtype, (n, m), 0)
        r = rows + k == lax.broadcasted_iota(k.dtype, (n, m), 1)
        return lax.broadcast(lax.convert_element_type(r, dtype), tuple(batch))

    return f


def _slice(sizes: tuple[int, ...], strides: tuple[int, ...], *types: Any) -> Any:
    """``a[start : start + (sizes - 1) * strides + 1 : strides]`` with ``start`` a runtime
    operand (one integer per axis): one kernel serves every start."""
    n = len(sizes)
    spans = tuple((d - 1) * s + 1 for d, s in zip(sizes, strides))
    strided = any(s != 1 for s in strides)

    def f(a: Any, start: Any) -> Any:
        # the core's starts are in bounds: XLA's clamp never moves them
        r = lax.dynamic_slice(a, tuple(start[i] for i in range(n)), spans,
                              allow_negative_indices=False)  # fmt: skip
        return lax.slice(r, (0,) * n, spans, strides) if strided else r

    return f


def _index_operand(values: tuple[int, ...], shape: tuple[int, ...]) -> np.ndarray:
    """Python ints as one host array, a kernel's runtime operand (int32 where every axis
    fits, which needs no 64-bit mode)."""
    wide = max(shape, default=0) >= 2**31
    return np.array(values, np.int64 if wide else np.int32)


def _iota(shape: tuple[int, ...], axis: int | None, dtype: np.dtype) -> Any:
    def f() -> Any:
        if axis is None:
            n = int(np.prod(shape, dtype=np.int64))
            return lax.reshape(lax.iota(dtype, n), shape)
        return lax.broadcasted_iota(dtype, shape, axis)

    return f


def _flat(ins: Any) -> list[Any]:
    """A lowering's operand types, ``((shape, dtype), ...)``, as a kernel's key has them."""
    return [v for t in ins for v in t]


def _values(getter: Callable[..., Any], names: tuple[str, ...]) -> Callable[[Any], Any]:
    """``getter(*names)`` (``operator.itemgetter``, ``attrgetter``): one value for one
    name, a tuple for several; None for none."""
    return getter(*names) if names else lambda source: None


def _marked(method: Any, prim: Primitive, spec: Any) -> Any:
    """``method``, the kernel of ``prim`` derived from ``spec``, named and marked as
    such (:func:`numerix.backend.payload_of` reads the mark)."""
    method.__name__ = method.__qualname__ = prim.name
    method.numerix_payload = (method, spec)
    return method


# ====================================================================== the fast path's shortcuts
# Backend.fast_kernel: for (op, form, dtype), one jitted function the compiled fast path
# calls on the payloads, through JAX's C++ dispatch with no Python frame around it. Its
# body runs only while JAX traces a new signature, and traces the very kernel the kernel
# path keeps for those operand types (the same _kernels.kernel key, an inline jit): the
# program and its result are the kernel's. One function serves every shape, so it keeps an
# executable per shape it meets, where the kernel path keeps one kernel per shape in the
# bounded LRU (decision 19): the signatures each shortcut traces are counted, and when
# they pass the bound (_kernels.CACHE_SIZE) between them, the shortcuts that traced the
# most are retired until half the bound is left: the fast path's memo is dropped (its next
# call asks fast_kernel again, which makes a new function for a retired key and gives the
# others back) and the retired functions' executables are released on that next ask,
# outside any trace. An empty operand compiles its (empty) program here, where the kernel
# path puts zeros on the device without one: the same payload either way.

_SHORTCUTS: dict[tuple[str, str, DType], Any] = {}
_TRACED: dict[tuple[str, str, DType], int] = {}  # signatures each shortcut traced
_RETIRED: list[Any] = []
_array_type: type | None = None
_MATMUL = {"contract_x": (1,), "batch_x": (), "contract_y": (0,), "batch_y": ()}
_shortcuts_lock = threading.Lock()  # threads may trace at once


def _count_trace(key: tuple[str, str, DType]) -> None:
    """The shortcut of ``key`` traces a new signature: decline a 64-bit dtype while JAX's
    64-bit mode is off (the fast path calls the kernel: its outcome, as with the mode off
    before the memo), count it, and past the bound retire the fullest shortcuts."""
    op, _, dtype = key
    if dtype in WIDE and not x64_on():
        raise ShortcutDeclined(str(x64_error(op, "xla", dtype)))
    with _shortcuts_lock:
        _TRACED[key] = _TRACED.get(key, 0) + 1
        if sum(_TRACED.values()) > _kernels.CACHE_SIZE:
            _retire()


def _retire() -> None:
    # under _shortcuts_lock
    while _TRACED and sum(_TRACED.values()) > _kernels.CACHE_SIZE // 2:
        key = max(_TRACED, key=_TRACED.__getitem__)
        del _TRACED[key]
        f = _SHORTCUTS.pop(key, None)
        if f is not None:
            _RETIRED.append(f)
    forget_fast_kernels()  # each memo is dropped on its next lookup


def _release_retired() -> None:
    # no memo calls a retired function any more (each was dropped on its lookup)
    while _RETIRED:
        try:
            f = _RETIRED.pop()
        except IndexError:  # another thread took the last one
            return
        f.clear_cache()


def _shortcut_body(kernel: Any, op: str, form: str, dtype: DType) -> Callable[..., Any] | None:
    """What the shortcut of ``kernel`` traces in ``form``, or None for no shortcut."""
    key = (op, form, dtype)
    if form in ("u", "tt", "ts", "st"):
        build = getattr(kernel, "build", None)
        if build is None or getattr(kernel, "arity", 0) != (1 if form == "u" else 2):
            return None
        if form == "u":

            def unary(a: Any) -> Any:
                _count_trace(key)
                return _kernels.kernel(build, a.shape, dtype)(a)

            return unary

        def binary(a: Any, b: Any) -> Any:
            _count_trace(key)
            return _kernels.kernel(build, a.shape, dtype, b.shape, dtype)(a, b)

        return binary
    # dot's and reshape's own kernels (XlaBackend.payload_kernel's kernel_for), for
    # matmul's axes and for the shape asked
    kernel_for = getattr(kernel, "kernel_for", None)
    if kernel_for is not None and form == "mm":

        def matrix(a: Any, b: Any) -> Any:
            _count_trace(key)
            return kernel_for(_MATMUL, (None, dtype), (a.shape, dtype, b.shape, dtype))(a, b)

        return matrix
    if kernel_for is not None and form == "rs":

        def reshape(a: Any, shape: tuple[int, ...]) -> Any:
            _count_trace(key)
            return kernel_for({}, (shape, dtype), (a.shape, dtype))(a)

        return reshape
    # "sl": the shortcut would receive a Python slice, which jit cannot take as a static
    # argument before Python 3.12 (unhashable); the kernel path serves it
    return None


class XlaBackend(NnKernels, IndexingKernels, ExtraKernels, Backend):
    """Tensors on one device of one XLA client: ``numerix.tensor(x, backend="xla:cuda:1")``."""

    name = "xla"
    numeric_notes = (
        "subnormal floats are flushed to zero (5e-324 <= 0 is True; 1e-40 * 1 is 0.0 in float32)",
        "max/min of -0.0 and 0.0 give +0.0 for max and -0.0 for min",
        "abs(inf + nan j) is nan (C99 and numpy: inf)",
    )
    # XLA flushes subnormal floats to zero on CPU and GPU (denormals-are-zero)
    flushes_denormals = True
    accepted_options = (
        Option("client", lambda options: default_client(), choices=tuple(CLIENTS)),
        Option(
            "device_id",
            lambda options: get_client(options["client"]).default_device_id,
            type=int,
            minimum=0,
        ),
        # several devices: tensors spread over them (see validate_options)
        Option("devices", None),
    )
    spec_fields = ("client", "device_id")

    __slots__ = ("client", "jax_device", "mesh", "placement")

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.client = get_client(self.options["client"])
        did = self.options["device_id"]
        self.jax_device = self.client.device(self.client.default_device_id if did is None else did)
        ids = self.options["devices"]
        #: the devices' mesh (one axis, ``"devices"``) of a backend over several devices
        self.mesh: Mesh | None = None
        #: where created tensors go: the device, or every device of the mesh (replicated)
        self.placement: Any = SingleDeviceSharding(self.jax_device)
        if ids is not None:
            self.mesh = Mesh(np.array([self.client.device(i) for i in ids]), ("devices",))
            self.placement = NamedSharding(self.mesh, PartitionSpec())

    @classmethod
    def validate_options(cls, options: Mapping[str, Any]) -> dict[str, Any]:
        """``devices`` (several devices: tensors are spread over them, see
        :meth:`put_sharded`) is a count (the first N), ``"all"`` or device ids, made a
        sorted tuple of two or more ids with ``device_id`` its first; one device is the
        backend of that device (``devices=None``)."""
        opts = super().validate_options(options)
        want = opts["devices"]
        if want is None:
            return opts
        n = len(get_client(opts["client"]).devices())
        if want == "all":
            ids: tuple[int, ...] = tuple(range(n))
        elif type(want) is int:
            ids = tuple(range(want))
        elif isinstance(want, (tuple, list)) and all(type(i) is int for i in want):
            ids = tuple(sorted(set(want)))
            if len(ids) != len(want):
                raise BackendOptionError(f"backend 'xla': devices {want!r} repeat a device")
        else:
            raise BackendOptionError(
                f"backend 'xla': devices must be a count, 'all' or a tuple of device ids, "
                f"got {want!r}"
            )
        if not ids or ids[0] < 0 or ids[-1] >= n:
            raise BackendOptionError(
                f"backend 'xla': devices={want!r}, and client {opts['client']!r} has {n} "
                f"device(s) (ids 0..{n - 1}); for simulated host devices start the process "
                f"with XLA_FLAGS=--xla_force_host_platform_device_count=N"
            )
        if options.get("device_id", ids[0]) != ids[0]:
            raise BackendOptionError(
                f"backend 'xla': device_id={options['device_id']} is not the first of "
                f"devices {ids}; give device_id (one device) or devices (several)"
            )
        opts["device_id"] = ids[0]
        opts["devices"] = ids if len(ids) > 1 else None
        return opts

    @property
    def device_count(self) -> int:
        ids = self.options["devices"]
        return 1 if ids is None else len(ids)

    def unsupported(self, op: str, dtype: Any) -> Any:
        if dtype in WIDE and not x64_on():
            return x64_error(op, self, dtype)
        return super().unsupported(op, dtype)

    @classmethod
    def clear_caches(cls) -> None:
        # also JAX's own caches, where the executables are: see numerix_xla._kernels.clear
        with _shortcuts_lock:
            _SHORTCUTS.clear()
            _TRACED.clear()
            _RETIRED.clear()
        clear()

    # ------------------------------------------------------------ the compiled fast path
    def fast_kernel(self, op: str, form: str, dtype: Any) -> tuple[Callable[..., Any], type] | None:
        # the jitted function itself (a PjitFunction: C++ dispatch), one per (op, form,
        # dtype) for every shape and device: see "the fast path's shortcuts" above
        global _array_type
        _release_retired()
        if dtype in WIDE and not x64_on():
            return None
        kernel = getattr(type(self), op, None)
        if kernel is not getattr(XlaBackend, op, None):
            return None  # a subclass's own kernel: the shortcuts, kept per key, are ours
        key = (op, form, dtype)
        f = _SHORTCUTS.get(key)
        if f is None:
            body = _shortcut_body(kernel, op, form, dtype)
            if body is None:
                return None
            f = jax.jit(body, inline=True, static_argnums=(1,) if form == "rs" else ())
            f = _SHORTCUTS.setdefault(key, f)  # another thread's, if it made one first
        if _array_type is None:
            _array_type = type(self.put(np.zeros((), np.float32)))
        return f, _array_type

    def device_name(self) -> str:
        ids = self.options["devices"]
        if ids is None:
            return f"{self.options['client']}:{self.options['device_id']}"
        if ids == tuple(range(ids[0], ids[-1] + 1)):
            return f"{self.options['client']}:{ids[0]}..{ids[-1]}"
        return f"{self.options['client']}:{','.join(map(str, ids))}"

    @classmethod
    def is_available(cls, **options: Any) -> bool:
        client = options.get("client") or default_client()
        if client not in CLIENTS:
            return False
        n = len(get_client(client).devices())
        did = options.get("device_id")
        try:
            ids = cls.validate_options(options)["devices"] or ()
        except BackendOptionError:
            return False
        return n > 0 and (did is None or did < n) and all(i < n for i in ids)

    @classmethod
    def devices(cls) -> list[str]:
        out = []
        for name in CLIENTS:
            for i, _ in enumerate(get_client(name).devices()):
                out.append(f"{name}:{i}")
        return out

    @classmethod
    def check_target(cls, target: str) -> tuple[str, str] | None:
        """For ``numerix doctor``: ``(problem, fix)`` when ``XLA_TARGET=target`` cannot work
        here (its JAX plugin is not installed, or reaches no device), else None."""
        return target_problem(target)

    # ------------------------------------------------------------ host exchange
    def put(self, array: Any) -> Any:
        """``array`` (numpy or jax) committed to this backend's device (every device of a
        backend over several: replicated)."""
        return jax.device_put(array, self.placement)

    def process_group(self) -> tuple[int, int]:
        return jax.process_index(), jax.process_count()

    def _gathered(self, x: Tensor, op: str) -> np.ndarray:
        """Every process's ``x`` stacked along a new first axis (a host array)."""
        if not x.data.is_fully_addressable:
            raise ArgumentError(
                f"{op}: {x.describe()} spans the devices of several processes already; "
                f"collectives take each process's own tensor (to_numpy() gathers this one)"
            )
        return np.asarray(multihost_utils.process_allgather(x.data, tiled=False))

    def all_reduce(self, out: Tensor, x: Tensor, op: str) -> Tensor | None:
        every = self._gathered(x, "all_reduce")
        reduce: Any = {"sum": np.sum, "max": np.max, "min": np.min}[op]
        out.data = self.put(np.asarray(reduce(every, axis=0), dtype=every.dtype))
        return out

    def all_gather(self, out: Tensor, x: Tensor) -> Tensor | None:
        out.data = self.put(self._gathered(x, "all_gather"))
        return out

    def put_sharded(self, out: Tensor, x: Tensor, axis: int | None) -> Tensor | None:
        if self.mesh is None:
            return None  # one device: the core moves the tensor
        spec = PartitionSpec() if axis is None else PartitionSpec(*([None] * axis), "devices")
        data = x.data if isinstance(x.backend, XlaBackend) else x.backend.to_numpy(x)
        out.data = jax.device_put(data, NamedSharding(self.mesh, spec))
        return out

    def from_numpy(self, out: Tensor, array: np.ndarray) -> Tensor:
        if out.dtype in WIDE:
            check_64bit("from_numpy", self, (out.dtype,))
        out.data = self.put(array)
        return out

    def to_numpy(self, x: Tensor) -> np.ndarray:
        data = x.data
        if isinstance(data, jax.core.Tracer):
            # refused at once: JAX's own error for a tracer describes where it was traced,
            # which costs tens of milliseconds (check_rules asks for every kernel it checks)
            raise TypeError(f"to_numpy: {x.describe()} is being traced; it has no value yet")
        if not data.is_fully_addressable and not data.is_fully_replicated:
            # split over the devices of several processes: gathered from each, a
            # collective every process makes at the same point (docs/scaling.md)
            return np.asarray(multihost_utils.process_allgather(data, tiled=True))
        return np.asarray(data)

    def from_dlpack(self, out: Tensor, source: Any) -> Tensor | None:
        try:
            arr = jax.dlpack.from_dlpack(source)
        except Exception:
            return None
        if arr.dtype != out.dtype.numpy_dtype or tuple(arr.shape) != out.shape:
            return None
        if out.dtype in WIDE:
            check_64bit("from_dlpack", self, (out.dtype,))
        out.data = self.put(arr)
        return out

    def to_dlpack(self, x: Tensor, *args: Any, **kwargs: Any) -> Any:
        return x.data.__dlpack__(*args, **kwargs)

    def dlpack_device(self, x: Tensor) -> tuple[int, int]:
        kind, index = x.data.__dlpack_device__()
        return int(kind), int(index)

    def deallocate(self, x: Tensor) -> None:
        if not is_constant(x.data):  # a shared 0-d constant stays for its other holders
            x.data.delete()

    def synchronize(self, x: Tensor) -> None:
        x.data.block_until_ready()

    def device_memory(self) -> tuple[int, int] | None:
        # the allocator's figures (GPU, TPU); a CPU device has none (memory_stats() is
        # None): its arrays are host memory. JAX cannot reset the peak.
        devices = [self.jax_device] if self.mesh is None else list(self.mesh.devices.flat)
        in_use = peak = 0
        for d in devices:
            stats = d.memory_stats()
            if not stats or "peak_bytes_in_use" not in stats:
                return None
            in_use += int(stats.get("bytes_in_use", 0))
            peak += int(stats["peak_bytes_in_use"])
        return in_use, peak

    # ------------------------------------------------------------ creation
    def _created(self, key: Any, build: Callable[[], Callable[..., Any]]) -> Callable[..., Any]:
        # kernels without inputs would run on JAX's default device: pin their output
        return jitted((*key, self.placement), build, out_shardings=self.placement)

    def full(self, out: Tensor, *, value: Any) -> Tensor:
        if out.dtype in WIDE:
            check_64bit("full", self, (out.dtype,))
        dt = _np_dtype(out.dtype)
        if out.shape == ():
            k = constant_key(value)
            if k is None:
                out.data = self.put(np.array(value, dtype=dt))
            else:
                out.data = constant(
                    (self.placement, out.dtype, k), lambda: self.put(np.array(value, dtype=dt))
                )
            return out
        v = np.array(value, dtype=dt)
        shape = out.shape
        key = ("full", shape, out.dtype)
        out.data = self._created(key, lambda: lambda s: lax.broadcast(s, shape))(v)
        return out

    def iota(self, out: Tensor, *, axis: int | None) -> Tensor:
        if out.dtype in WIDE:
            check_64bit("iota", self, (out.dtype,))
        key = ("iota", out.shape, axis, out.dtype.name)
        dt, shape = _np_dtype(out.dtype), out.shape
        out.data = self._created(key, lambda: _iota(shape, axis, dt))()
        return out

    def eye(self, out: Tensor, *, k: int) -> Tensor:
        if out.dtype in WIDE:
            check_64bit("eye", self, (out.dtype,))
        key = ("eye", out.shape, out.dtype.name)
        dt, shape = _np_dtype(out.dtype), out.shape
        n, m = shape[-2:]
        # past the corners every k gives the same matrix: clamped, it fits in int32
        k_ = np.int32(min(max(k, -n), m))
        out.data = self._created(key, lambda: _eye(shape, dt))(k_)
        return out

    # ------------------------------------------------------------ kernels from payload functions
    # Each primitive below is one traced function (numerix.backend.elementwise / payload);
    # its method, its lowering and the fast path's shortcut run the one jitted kernel
    # _kernels.kernel keeps per (primitive, static parameters, operand types), one
    # executable each (a jitted function kept per primitive and parameters would keep one
    # per shape it met: a sum over 2,000 lengths held 3 GB). JAX keys its traces on the
    # function it jits: _kernels.kernel jits a fresh one around the payload function per
    # kernel, released with it. A method whose output has no element runs no kernel: XLA
    # would compile a program per shape and dtype to produce none (ExtraKernels._zeros
    # puts an empty host array on the device instead). A payload kernel's method turns
    # JAX's 64-bit mode on (or refuses) for a 64-bit output as check_64bit says, named
    # after the public op (op_name: sum, argmax), and its lowering once, for the program.

    @classmethod
    def elementwise_kernel(cls, spec: elementwise, prim: Primitive) -> Callable[..., Any]:
        def build(*types: Any) -> Callable[..., Any]:
            return spec(types[1])  # the first operand's dtype (types: shape, dtype, ...)

        method: Any
        if len(prim.inputs) == 1:

            def method(self: Any, out: Tensor, x: Tensor) -> Tensor:
                if 0 in out.shape:
                    return self._zeros(out)
                out.data = _kernels.kernel(build, x.shape, x.dtype)(x.data)
                return out

        else:

            def method(self: Any, out: Tensor, x1: Tensor, x2: Tensor) -> Tensor:
                if 0 in out.shape:
                    return self._zeros(out)
                k = _kernels.kernel(build, x1.shape, x1.dtype, x2.shape, x2.dtype)
                out.data = k(x1.data, x2.data)
                return out

        method.lowering = lambda params, ins, out: _kernels.kernel(build, *_flat(ins))
        method.build, method.arity = build, len(prim.inputs)  # the fast path's shortcut's
        return _marked(method, prim, spec)

    @classmethod
    def payload_kernel(cls, spec: payload, prim: Primitive) -> Callable[..., Any]:
        fn, op, names = spec.fn, prim.name, prim.params
        reads = spec.out_keywords(prim)
        # a kernel's key: build, the parameters' values, the output's (``reads``), then
        # the operand types; each group of values is one value, a tuple, or None
        values, read = _values(itemgetter, names), _values(attrgetter, reads)
        picked = _values(itemgetter, reads)  # read, from a lowering's (shape, dtype)

        def build(pvals: Any, rvals: Any, *types: Any) -> Callable[..., Any]:
            kw = dict(zip(names, pvals if len(names) > 1 else (pvals,)))
            kw.update(zip(reads, rvals if len(reads) > 1 else (rvals,)))
            return functools.partial(fn, **kw) if kw else fn

        def kernel_for(params: Any, out: tuple[Any, DType], types: Any) -> Callable[..., Any]:
            """The kernel for ``params``, the output's ``(shape, dtype)`` and the operand
            ``types``: the method's, its lowering's and the fast path's shortcut's."""
            got = picked({"shape": out[0], "dtype": out[1]})
            return _kernels.kernel(build, values(params), got, *types)

        method: Any
        if prim.inputs == ("x",):  # the method per arity: no operand tuple to make

            def method(self: Any, out: Tensor, x: Tensor, **params: Any) -> Tensor:
                if out.dtype in WIDE:
                    check_64bit(op_name(op, params), self, (out.dtype,))
                if 0 in out.shape:
                    return self._zeros(out)
                k = _kernels.kernel(build, values(params), read(out), x.shape, x.dtype)
                out.data = k(x.data)
                return out

        elif len(prim.inputs) == 2 and not prim.inputs[1].startswith("*"):

            def method(self: Any, out: Tensor, x: Tensor, y: Tensor, **params: Any) -> Tensor:
                if out.dtype in WIDE:
                    check_64bit(op_name(op, params), self, (out.dtype,))
                if 0 in out.shape:
                    return self._zeros(out)
                k = _kernels.kernel(build, values(params), read(out), x.shape, x.dtype,
                                    y.shape, y.dtype)  # fmt: skip
                out.data = k(x.data, y.data)
                return out

        else:

            def method(self: Any, out: Tensor, *xs: Tensor, **params: Any) -> Tensor:
                if out.dtype in WIDE:
                    check_64bit(op_name(op, params), self, (out.dtype,))
                if 0 in out.shape:
                    return self._zeros(out)
                k = _kernels.kernel(build, values(params), read(out), *_kernels.types(*xs))
                out.data = k(*[x.data for x in xs])
                return out

        def lowering(params: Any, ins: Any, out: tuple[Any, DType]) -> Any:
            if 0 in out[0]:
                return None  # the method puts zeros
            if out[1] in WIDE:
                check_64bit(op_name(op, params), "xla", (out[1],))
            return kernel_for(params, out, _flat(ins))

        method.lowering, method.kernel_for = lowering, kernel_for
        return _marked(method, prim, spec)

    # ------------------------------------------------------------ element-wise
    as_type = payload(_as_type)
    bitcast = payload(lambda a, *, dtype: lax.bitcast_convert_type(a, _np_dtype(dtype)))

    negative = elementwise(_negative)
    abs = elementwise(_abs)
    sign = elementwise(_sign)
    floor = elementwise(_int_identity(lax.floor))
    ceil = elementwise(_int_identity(lax.ceil))
    round = elementwise(_round)
    exp = elementwise(_math1(lax.exp))
    log = elementwise(_math1(_log))
    sqrt = elementwise(_math1(_sqrt))
    tanh = elementwise(_math1(lax.tanh))
    sigmoid = elementwise(_math1(lax.logistic))
    exp2 = elementwise(_math1(lax.exp2))
    expm1 = elementwise(_math1(lax.expm1))
    log1p = elementwise(_math1(lax.log1p))
    rsqrt = elementwise(_math1(_rsqrt))
    cbrt = elementwise(_math1(lax.cbrt))
    sin = elementwise(_math1(lax.sin))
    cos = elementwise(_math1(lax.cos))
    tan = elementwise(_math1(lax.tan))
    asin = elementwise(_math1(lax.asin))
    acos = elementwise(_math1(lax.acos))
    atan = elementwise(_math1(lax.atan))
    sinh = elementwise(_math1(lax.sinh))
    cosh = elementwise(_math1(lax.cosh))
    asinh = elementwise(_math1(lax.asinh))
    acosh = elementwise(_math1(lax.acosh))
    atanh = elementwise(_math1(lax.atanh))
    erf = elementwise(_math1(lax.erf))
    erfc = elementwise(_math1(lax.erfc))
    erf_inv = elementwise(_math1(lax.erf_inv))
    isnan = elementwise(_isnan)
    isinf = elementwise(_isinf)
    isfinite = elementwise(_isfinite)
    real = elementwise(lax.real)
    imag = elementwise(lax.imag)
    conj = elementwise(lax.conj)
    bitwise_invert = elementwise(lax.bitwise_not)
    population_count = elementwise(lax.population_count)
    count_leading_zeros = elementwise(lax.clz)

    add = elementwise(_plain2(lax.add))
    subtract = elementwise(_plain2(lax.sub))
    multiply = elementwise(_plain2(lax.mul))
    divide = elementwise(_divide)
    floor_divide = elementwise(_floor_divide)
    remainder = elementwise(_remainder)
    pow = elementwise(_pow)
    maximum = elementwise(_plain2(lax.max))
    minimum = elementwise(_plain2(lax.min))
    bitwise_and = elementwise(_plain2(lax.bitwise_and))
    bitwise_or = elementwise(_plain2(lax.bitwise_or))
    bitwise_xor = elementwise(_plain2(lax.bitwise_xor))
    atan2 = elementwise(_math2(lax.atan2))
    bitwise_left_shift = elementwise(_shift_left)
    bitwise_right_shift = elementwise(_shift_right)
    equal = elementwise(_compare(lax.eq))
    not_equal = elementwise(_compare(lax.ne))
    less = elementwise(_compare(lax.lt))
    less_equal = elementwise(_compare(lax.le))
    greater = elementwise(_compare(lax.gt))
    greater_equal = elementwise(_compare(lax.ge))

    select = payload(_select)

    # ------------------------------------------------------------ reductions
    reduce = payload(_reduce, reads=("dtype",))
    argreduce = payload(_argreduce)

    # ------------------------------------------------------------ linalg
    dot = payload(_dot, reads=("dtype",))

    # ------------------------------------------------------------ shape
    reshape = payload(lambda a, *, shape: lax.reshape(a, shape))
    transpose = payload(lambda a, *, axes: lax.transpose(a, axes))
    broadcast = payload(lambda a, *, axes, shape: lax.broadcast_in_dim(a, shape, axes))
    concatenate = payload(lambda *a, axis: lax.concatenate(a, axis))
    reverse = payload(lambda a, *, axes: lax.rev(a, axes))
    gather = payload(_gather)

    def slice(self, out: Tensor, x: Tensor, *, start: tuple[int, ...], stop: tuple[int, ...],
              strides: tuple[int, ...]) -> Tensor:  # fmt: skip
        if 0 in out.shape:
            return self._zeros(out)
        sizes = out.shape
        if not sizes:  # a 0-d operand has nothing to slice
            out.data = x.data
            return out
        k = _kernels.kernel(_slice, sizes, strides, x.shape, x.dtype)
        out.data = k(x.data, _index_operand(start, x.shape))
        return out

    # ------------------------------------------------------------ benchmarks
    bench_raw_name = "jax"

    def bench_raw_matmul(self, x_np: np.ndarray, w_np: np.ndarray) -> Callable[[], Any]:
        """JAX's own matmul on this backend's device, for ``numerix bench matmul``
        (jitted jnp.dot, synchronised)."""
        x = self.put(x_np)
        w = self.put(w_np)
        f = jax.jit(jax.numpy.dot)

        def run() -> Any:
            return f(x, w).block_until_ready()

        return run


if x64_setting() is False and not x64_on():
    # what the kit and backend_transfer read; the kernels check the live mode themselves
    XlaBackend.supported_dtypes = frozenset(d for d in dtypes.ALL_DTYPES if d not in WIDE)
