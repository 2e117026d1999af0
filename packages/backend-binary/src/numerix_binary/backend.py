"""The binary backend: host memory, numpy kernels.

numerix's reference backend (Nx's BinaryBackend, but on numpy, so it is fast too).
Every kernel fills ``out.data`` with a ``numpy.ndarray`` of exactly ``out.dtype``;
bfloat16 is held through ``ml_dtypes``, imported when the first bfloat16 array is made
(:mod:`numerix_binary._bf16`).
"""

from __future__ import annotations

import _thread
import contextvars
import functools
import math
import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from numerix import dtypes
from numerix._tensor import Tensor
from numerix.backend import Backend, Option, SliceByIndexing, elementwise, lowers, pad_plan
from numerix.errors import DTypeError
from numerix.primitives import REGISTRY, Primitive
from numerix.primitives.reduction import reduce_dtypes
from numerix_binary._bf16 import BF16_KIND, numpy_bfloat16
from numerix_binary._bits import BitsKernels
from numerix_binary._conv import ConvKernels
from numerix_binary._elementwise import ElementwiseKernels
from numerix_binary._fft import FftKernels
from numerix_binary._indexing import IndexingKernels
from numerix_binary._linalg import LinalgKernels
from numerix_binary._nn import NnKernels
from numerix_binary._random import RandomKernels
from numerix_binary._sort import SortKernels
from numerix_binary._window import WindowKernels

__all__ = ["BinaryBackend"]

_nd = np.ndarray
# reduce's kernel of each kind: the ufuncs' reduce methods, as np.sum / np.max add a
# Python layer (_wrapreduction) per call; sum and prod take the accumulation dtype
_ACCUMULATORS: dict[str, Any] = {"sum": np.add.reduce, "prod": np.multiply.reduce}
_REDUCERS: dict[str, Any] = {
    **_ACCUMULATORS, "max": np.maximum.reduce, "min": np.minimum.reduce, "all": np.all,
    "any": np.any,
}  # fmt: skip
_asarray = np.asarray
_NX_BF16 = dtypes.bfloat16


def _fill(out: Tensor, r: Any) -> Tensor:
    # ufuncs return numpy scalars for 0-d results; tensors always hold arrays
    out.data = r if type(r) is _nd else _asarray(r, dtype=out.dtype.numpy_dtype)
    return out


_matmul = operator.matmul


@functools.lru_cache(maxsize=1024)
def _slices(start: tuple[int, ...], stop: tuple[int, ...], strides: tuple[int, ...]) -> tuple:
    # the slice kernel's key, kept: building the slices costs more than the view
    return tuple(map(slice, start, stop, strides))


_FLOAT_MAX: dict[np.dtype, float] = {}


def _exact_scalar(value: Any, dt: np.dtype) -> bool:
    """Whether ``np.array(value, dtype=dt)`` can raise no floating-point warning: a Python
    float in range of (or infinite, or NaN in) a float dtype, a Python int or bool in an
    integer one (an int out of range raises OverflowError in any context)."""
    t = type(value)
    if t is float:
        if dt.kind != "f":
            return False
        m = _FLOAT_MAX.get(dt)
        if m is None:
            m = _FLOAT_MAX[dt] = float(np.finfo(dt).max)
        return abs(value) <= m or value != value or abs(value) == math.inf
    return (t is int or t is bool) and dt.kind in "iub"


def _array_out() -> dict[str, Any]:
    """``{"out": ...}`` where a ufunc's reduce takes it (numpy 2.3 and later): its 0-d
    result then comes as the array the kernel stores, not a scalar for
    :attr:`BinaryBackend.scalar_payload` to convert (about 0.2 µs); else nothing."""
    try:
        r = np.add.reduce(np.zeros(1, np.float32), (0,), out=...)
    except TypeError:
        return {}
    return {"out": ...} if type(r) is _nd else {}


_ARRAY_OUT = _array_out()


def _reduce_all(kind: str, dtype: Any) -> Callable[[np.ndarray, tuple[int, ...]], Any] | None:
    """The reduce kernel's own ufunc call for ``kind`` on a ``dtype`` payload, for the fast
    path's ``"rd_<kind>"`` form: called with the payload and the axes (a partial, no
    Python frame); sum and prod accumulate in their output dtype; the ufuncs' reduce
    (not np.all / np.any, which take no ``out=...``) gives a 0-d array (:data:`_ARRAY_OUT`).
    None where the kind refuses the dtype (the fast path never asks it then)."""
    fn = _REDUCERS.get(kind)
    if fn is None:
        return None
    out = _ARRAY_OUT if isinstance(getattr(fn, "__self__", None), np.ufunc) else {}
    if kind not in _ACCUMULATORS:
        return functools.partial(fn, keepdims=False, **out)
    try:
        acc = reduce_dtypes(kind, dtype)[1].numpy_dtype
    except DTypeError:
        return None
    return functools.partial(fn, keepdims=False, dtype=acc, **out)


def _upcast(a: np.ndarray) -> np.ndarray:
    # ml_dtypes' bfloat16 lacks some ufunc loops (and float16 math is slow): compute in
    # float32 and round once, which is what XLA and PyTorch do on CPU
    return a.astype(np.float32) if a.dtype.kind == BF16_KIND else a


# ---------------------------------------------------------------- floating-point warnings
# numerix emits no floating-point warnings (docs/decisions.md 16): inf - inf is nan,
# 1 / 0 is inf, silently, as on XLA and LibTorch. numpy's error state lives in a
# context variable; the kernels run in a context of the backend's own where that state
# is "ignore", set once, and the user's own numpy keeps its settings. The element-wise
# kernels call their payload function through Context.run (tens of ns; an np.errstate per
# call costs 0.8 us); the others are wrapped (a frame more, about 0.3 us).


def _index_view(a: np.ndarray, i: int) -> np.ndarray:
    """x[i] as the slice and reshape kernels give it, for the fast path (``ix``): a view,
    0-d for a 1-d x (``a[i]`` alone would be a numpy scalar)."""
    return a[i, ...]


def _kernel_context() -> Any:
    ctx = contextvars.Context()
    ctx.run(np.seterr, all="ignore")
    return ctx.run


_run_in_kernel_context = _kernel_context()
#: the context itself: compiled programs run in it too (program_context)
_KERNEL_CONTEXT: contextvars.Context = _run_in_kernel_context.__self__
_per_thread = _thread._local()  # threading.local, without importing threading


def _entered(e: RuntimeError) -> bool:
    return str(e).startswith("cannot enter context")


def _again(e: RuntimeError, fn: Any, *args: Any, **params: Any) -> Any:
    """``fn(*args, **params)`` after the kernel context refused to be entered (``e``)
    because it is in use: another thread, or a kernel calling a kernel, takes its
    thread's own. Any other error is re-raised."""
    if not _entered(e):
        raise e
    run = getattr(_per_thread, "run", None)
    if run is None:
        run = _per_thread.run = _kernel_context()
    try:
        return run(fn, *args, **params)
    except RuntimeError as again:
        if not _entered(again):
            raise
    return fn(*args, **params)  # inside this thread's context already


def _quiet(method: Any) -> Any:
    """``method`` run in the kernel context."""

    @functools.wraps(method)  # keeps the lowering declared by @lowers
    def kernel(self: Any, *args: Any, **params: Any) -> Any:
        try:
            return _run_in_kernel_context(method, self, *args, **params)
        except RuntimeError as e:
            return _again(e, method, self, *args, **params)

    return kernel


# ---------------------------------------------------------------- kernels and their lowerings
# Replayed programs run in program_context, the kernels' context (numpy's warnings off),
# so a lowering needs no errstate of its own.


def _reduce_lowering(p: Mapping[str, Any], ins: tuple[Any, ...], out: tuple[Any, ...]) -> Any:
    kind = p["kind"]
    if kind in ("max", "min"):
        return functools.partial(_REDUCERS[kind], axis=p["axes"], keepdims=p["keepdims"])
    fn = _ACCUMULATORS.get(kind)
    if fn is None:
        return None  # all, any: the kernel's own path
    if ins[0][1].name == "bfloat16":
        return None  # summed in float32: the kernel's own path
    return functools.partial(fn, axis=p["axes"], keepdims=p["keepdims"], dtype=out[1].numpy_dtype)


def _reshaper(shape: tuple[int, ...]) -> Any:
    return lambda a: a.reshape(shape)


def _transposer(axes: tuple[int, ...]) -> Any:
    return lambda a: a.transpose(axes)  # np.transpose adds a Python layer per call


def _mm_tn(a: np.ndarray, b: np.ndarray) -> Any:
    return a.T @ b


def _mm_nt(a: np.ndarray, b: np.ndarray) -> Any:
    return a @ b.T


def _mm_tt(a: np.ndarray, b: np.ndarray) -> Any:
    return a.T @ b.T


#: the product of two operands of at most 2 dimensions as ``@`` of (transposed) views,
#: by (x contracts its first of two axes, y contracts its last of two)
_MM_FORMS = {(False, False): _matmul, (True, False): _mm_tn, (False, True): _mm_nt,
             (True, True): _mm_tt}  # fmt: skip


def _matmul_form(
    nda: int, ndb: int, contract_x: Sequence[int], batch_x: Sequence[int],
    contract_y: Sequence[int],
) -> Any:  # fmt: skip
    """The dot of operands of ``nda`` and ``ndb`` dimensions as ``a @ b`` with either
    transposed (``x.T @ g``, ``g @ w.T``: a backward pass's products), for one contracted
    axis and no batch axis over vectors and matrices; None for the other dots. The
    kernel and the lowering both run it: BLAS reads a transposed view in place."""
    if batch_x or len(contract_x) != 1 or not (1 <= nda <= 2 and 1 <= ndb <= 2):
        return None
    return _MM_FORMS[(nda == 2 and contract_x[0] == 0, ndb == 2 and contract_y[0] == 1)]


def _dot_lowering(p: Mapping[str, Any], ins: tuple[Any, ...]) -> Any:
    """:func:`_matmul_form`'s function for the products it covers; the others take the
    kernel."""
    (sa, da), (sb, _) = ins
    if da.name in ("bfloat16", "bool"):
        return None
    return _matmul_form(len(sa), len(sb), p["contract_x"], p["batch_x"], p["contract_y"])


class BinaryBackend(
    ElementwiseKernels,
    WindowKernels,
    ConvKernels,
    SortKernels,
    BitsKernels,
    LinalgKernels,
    NnKernels,
    IndexingKernels,
    FftKernels,
    RandomKernels,
    SliceByIndexing,
    Backend,
):
    """Host memory, numpy kernels. ``numerix.tensor(x, backend="binary")``."""

    name = "binary"
    accepted_options = (
        Option(
            "device",
            "cpu",
            choices=("cpu",),
            fix="the binary backend holds host memory: for accelerators use the xla or "
            "torch backend",
        ),
    )
    spec_fields = ("device",)
    is_host = True
    bench_raw_name = "numpy"

    __slots__ = ()

    def bench_raw_matmul(self, x_np: np.ndarray, w_np: np.ndarray) -> Callable[[], Any]:
        return lambda: x_np @ w_np

    # ------------------------------------------------------------ host exchange
    def from_numpy(self, out: Tensor, array: np.ndarray) -> Tensor:
        out.data = array
        return out

    def to_numpy(self, x: Tensor) -> np.ndarray:
        return x.data

    def from_dlpack(self, out: Tensor, source: Any) -> Tensor | None:
        try:
            out.data = np.from_dlpack(source)
        except (TypeError, RuntimeError, BufferError, ValueError):
            return None
        return out

    def to_dlpack(self, x: Tensor, *args: Any, **kwargs: Any) -> Any:
        return x.data.__dlpack__(*args, **kwargs)

    def dlpack_device(self, x: Tensor) -> tuple[int, int]:
        return x.data.__dlpack_device__()

    # ------------------------------------------------------------ replayed programs
    def lower(
        self,
        op: str,
        params: Mapping[str, Any],
        inputs: tuple[tuple[tuple[int, ...], Any], ...],
        out: tuple[tuple[int, ...], Any],
    ) -> Any:
        fn = super().lower(op, params, inputs, out)
        if fn is None or out[0] != ():
            return fn
        # numpy gives scalars for 0-d results; a tensor's data is always an array
        dt = out[1].numpy_dtype
        return lambda *a: _asarray(fn(*a), dtype=dt)

    def program_context(self) -> Any:
        return _KERNEL_CONTEXT  # numpy's warnings off, as for the kernels

    # ------------------------------------------------------------ element-wise kernels
    #: the element-wise shortcuts' payloads (Backend.fast_kernel: the declaration's
    #: function for the dtype, run in program_context, the kernels' context)
    payload_type = _nd
    # numpy's ufuncs give a numpy scalar for 0-d operands: the 0-d array the kernel stores
    scalar_payload = _asarray

    @classmethod
    def elementwise_kernel(cls, spec: elementwise, prim: Primitive) -> Callable[..., Any]:
        # the payload function alone runs in the kernel context: no wrapper on the hot path
        memo = spec.memo
        kernel: Any
        if len(prim.inputs) == 1:

            def kernel(self: Any, out: Tensor, x: Tensor) -> Tensor:
                try:
                    fn = memo[x.dtype]
                except KeyError:
                    fn = spec(x.dtype)
                try:
                    return _fill(out, _run_in_kernel_context(fn, x.data))
                except RuntimeError as e:
                    return _fill(out, _again(e, fn, x.data))

        else:

            def kernel(self: Any, out: Tensor, x1: Tensor, x2: Tensor) -> Tensor:
                try:
                    fn = memo[x1.dtype]
                except KeyError:
                    fn = spec(x1.dtype)
                try:
                    return _fill(out, _run_in_kernel_context(fn, x1.data, x2.data))
                except RuntimeError as e:
                    return _fill(out, _again(e, fn, x1.data, x2.data))

        # replayed programs run in program_context already
        kernel.lowering = lambda params, ins, out: spec(ins[0][1])
        kernel.__name__ = kernel.__qualname__ = prim.name
        kernel.numerix_payload = (kernel, spec)
        kernel.quiet = True
        return kernel

    # ------------------------------------------------------------ the compiled fast path
    def fast_kernel(
        self, op: str, form: str, dtype: Any
    ) -> tuple[Callable[..., Any], type] | tuple[Callable[..., Any], type, Any] | None:
        if form in ("u", "tt", "ts", "st"):  # the element-wise declarations' (Backend's)
            return super().fast_kernel(op, form, dtype)
        # what the kernel runs, less its Python frames (the fast path enters the kernel
        # context; where it is in use, the kernel takes its thread's own). Only this class's
        # kernels: a subclass's own, even one that copied a kernel's attributes
        # (functools.wraps), keeps its kernel.
        if getattr(type(self), op, None) is not getattr(BinaryBackend, op, None):
            return None
        if form == "mm" and dtype.name != "bfloat16":  # dot's plain matrix product
            return _matmul, _nd, _KERNEL_CONTEXT
        if form == "rs":
            return _nd.reshape, _nd
        if form == "sl":
            return operator.getitem, _nd
        if form == "ix" and type(self).reshape is BinaryBackend.reshape:
            return _index_view, _nd
        if form.startswith("rd_") and dtype is not _NX_BF16:  # bfloat16 sums in float32
            fn = _reduce_all(form[3:], dtype)
            return None if fn is None else (fn, _nd, _KERNEL_CONTEXT)
        return None

    # ------------------------------------------------------------ creation
    def full(self, out: Tensor, *, value: Any) -> Tensor:
        dt = out.dtype.numpy_dtype
        if out.shape == () and _exact_scalar(value, dt):
            # a Python scalar operand's 0-d tensor (x * 1.0001): its cast cannot warn
            out.data = np.array(value, dtype=dt)
            return out
        return _full(self, out, value=value)

    def _full_any(self, out: Tensor, *, value: Any) -> Tensor:
        if out.shape == ():
            out.data = np.array(value, dtype=out.dtype.numpy_dtype)
        else:
            out.data = np.full(out.shape, value, dtype=out.dtype.numpy_dtype)
        return out

    def iota(self, out: Tensor, *, axis: int | None) -> Tensor:
        dt = out.dtype.numpy_dtype
        if axis is None:
            out.data = np.arange(out.size, dtype=dt).reshape(out.shape)
            return out
        n = out.shape[axis]
        view = [1] * len(out.shape)
        view[axis] = n
        out.data = np.broadcast_to(np.arange(n, dtype=dt).reshape(view), out.shape).copy()
        return out

    def eye(self, out: Tensor, *, k: int) -> Tensor:
        *batch, n, m = out.shape
        e = np.eye(n, m, k=k, dtype=out.dtype.numpy_dtype)
        out.data = np.broadcast_to(e, out.shape).copy() if batch else e
        return out

    def arange(self, out: Tensor, *, start: Any, step: Any) -> Tensor:
        n = out.shape[0]
        r = np.arange(start, start + n * step, step, dtype=out.dtype.numpy_dtype)[:n]
        out.data = r
        return out

    def linspace(self, out: Tensor, *, start: Any, stop: Any, endpoint: bool) -> Tensor:
        dt = out.dtype.numpy_dtype
        r = np.linspace(start, stop, out.shape[0], endpoint=endpoint)
        if out.dtype.kind in "iu":
            r = np.floor(r)
        out.data = r.astype(dt)
        return out

    # ------------------------------------------------------------ element-wise
    def as_type(self, out: Tensor, x: Tensor) -> Tensor:
        a = x.data
        dt = out.dtype.numpy_dtype
        if out.dtype.kind in "iu" and x.dtype.kind == "f":
            # numpy leaves out-of-range float->int casts undefined (and warns); NaN
            # becomes 0 and other values saturate, as XLA does. The range is checked
            # against float64 powers of two: iinfo.max itself may not be a float of the
            # source dtype (int32's max rounds up to 2**31 in float32, out of range)
            info = np.iinfo(dt)
            lo, hi = np.float64(info.min), np.float64(2.0 ** (info.bits - (info.min < 0)))
            f = np.trunc(_upcast(a))
            over, under = f >= hi, f < lo
            r = np.where(over | under | np.isnan(f), 0, f).astype(dt)
            return _fill(out, np.where(over, info.max, np.where(under, info.min, r)))
        if out.dtype.kind == "b":
            return _fill(out, a != 0)
        out.data = a.astype(dt)
        return out

    def select(self, out: Tensor, pred: Tensor, on_true: Tensor, on_false: Tensor) -> Tensor:
        r = np.where(pred.data, on_true.data, on_false.data)
        if r.shape != out.shape:
            r = np.broadcast_to(r, out.shape).copy()
        return _fill(out, r)

    # ------------------------------------------------------------ reductions
    @lowers(lambda p, ins, out: _reduce_lowering(p, ins, out))
    def reduce(
        self, out: Tensor, x: Tensor, *, kind: str, axes: tuple[int, ...], keepdims: bool
    ) -> Tensor:
        # the ufunc alone runs in the kernel context (a float16 sum may overflow), as in
        # the element-wise kernels: no wrapper around the whole kernel on the hot path
        a = x.data
        fn = _ACCUMULATORS.get(kind)
        bf16 = out.dtype is _NX_BF16
        if fn is None:  # max, min, all, any: the result is in out.dtype
            fn, kw = _REDUCERS[kind], {"axis": axes, "keepdims": keepdims}
        elif bf16:  # summed in float32, rounded once
            a, kw = a.astype(np.float32), {"axis": axes, "keepdims": keepdims}
        else:
            kw = {"axis": axes, "keepdims": keepdims, "dtype": out.dtype.numpy_dtype}
        try:
            r = _run_in_kernel_context(fn, a, **kw)
        except RuntimeError as e:
            r = _again(e, fn, a, **kw)
        if bf16:
            r = r.astype(numpy_bfloat16())
        out.data = r if type(r) is _nd else _asarray(r, dtype=out.dtype.numpy_dtype)
        return out

    def argreduce(
        self, out: Tensor, x: Tensor, *, kind: str, axis: int | None, keepdims: bool
    ) -> Tensor:
        fn = np.argmax if kind == "max" else np.argmin
        r = fn(_upcast(x.data), axis=axis, keepdims=keepdims)
        return _fill(out, np.asarray(r, dtype=np.int64))

    # ------------------------------------------------------------ linalg
    @lowers(lambda p, ins, out: _dot_lowering(p, ins))
    def dot(self, out: Tensor, x: Tensor, y: Tensor, *, contract_x: tuple[int, ...],
            batch_x: tuple[int, ...], contract_y: tuple[int, ...],
            batch_y: tuple[int, ...]) -> Tensor:  # fmt: skip
        a, b = x.data, y.data
        form = _matmul_form(a.ndim, b.ndim, contract_x, batch_x, contract_y)
        if form is not None and a.dtype.kind != BF16_KIND:
            # a product of vectors and matrices: only its ufunc in the kernel context
            try:
                return _fill(out, _run_in_kernel_context(form, a, b))
            except RuntimeError as e:
                return _fill(out, _again(e, form, a, b))
        return _dot(self, out, x, y, contract_x=contract_x, batch_x=batch_x,
                    contract_y=contract_y, batch_y=batch_y)  # fmt: skip

    def _dot_any(self, out: Tensor, x: Tensor, y: Tensor, *, contract_x: tuple[int, ...],
                 batch_x: tuple[int, ...], contract_y: tuple[int, ...],
                 batch_y: tuple[int, ...]) -> Tensor:  # fmt: skip
        a, b = x.data, y.data
        bf16 = a.dtype.kind == BF16_KIND
        if bf16:
            a, b = a.astype(np.float32), b.astype(np.float32)
        if (
            not batch_x
            and len(contract_x) == 1
            and a.ndim <= 2
            and b.ndim <= 2
            and (contract_x[0] == a.ndim - 1 and contract_y[0] == 0)
        ):
            r = a @ b if a.ndim and b.ndim else np.dot(a, b)
        elif not batch_x:
            r = np.tensordot(a, b, axes=(contract_x, contract_y))
        else:
            r = _batched_dot(a, b, contract_x, batch_x, contract_y, batch_y)
        if bf16:
            r = r.astype(numpy_bfloat16())
        elif a.dtype.kind == "b":  # pragma: no cover - the core refuses bool products
            r = r.astype(bool)
        return _fill(out, r)

    # ------------------------------------------------------------ shape
    @lowers(lambda p, ins, out: _reshaper(out[0]))
    def reshape(self, out: Tensor, x: Tensor) -> Tensor:
        out.data = x.data.reshape(out.shape)
        return out

    @lowers(lambda p, ins, out: _transposer(p["axes"]))
    def transpose(self, out: Tensor, x: Tensor, *, axes: tuple[int, ...]) -> Tensor:
        out.data = x.data.transpose(axes)
        return out

    def broadcast(self, out: Tensor, x: Tensor, *, axes: tuple[int, ...]) -> Tensor:
        shape = [1] * len(out.shape)
        for i, a in enumerate(axes):
            shape[a] = x.shape[i]
        out.data = np.broadcast_to(x.data.reshape(shape), out.shape)
        return out

    def concatenate(self, out: Tensor, *xs: Tensor, axis: int) -> Tensor:
        out.data = np.concatenate([x.data for x in xs], axis=axis)
        return out

    def slice(self, out: Tensor, x: Tensor, *, start: tuple[int, ...], stop: tuple[int, ...],
              strides: tuple[int, ...]) -> Tensor:  # fmt: skip
        out.data = x.data[_slices(start, stop, strides)]
        return out

    def reverse(self, out: Tensor, x: Tensor, *, axes: tuple[int, ...]) -> Tensor:
        out.data = np.flip(x.data, axis=axes)
        return out

    def pad(self, out: Tensor, x: Tensor, pad_value: Tensor, *,
            config: tuple[tuple[int, int, int], ...]) -> Tensor:  # fmt: skip
        full, place, crop = pad_plan(x.shape, config)
        r = np.full(full, pad_value.data, dtype=out.dtype.numpy_dtype)
        r[place] = x.data
        out.data = r[crop]
        return out

    # dynamic_slice and put_slice: SliceByIndexing, over these two
    @staticmethod
    def _read_starts(starts: tuple[Tensor, ...]) -> list[int]:
        return [int(s.data) for s in starts]

    @staticmethod
    def _copy(data: np.ndarray) -> np.ndarray:
        return data.copy()

    # ------------------------------------------------------------ indexing
    def gather(self, out: Tensor, x: Tensor, indices: Tensor, *, axes: tuple[int, ...]) -> Tensor:
        idx = indices.data
        if axes == (0,):  # x[idx]: the index's one column, rows taken (faster than x[i])
            a, i = x.data, idx[..., 0]
            return _fill(out, a.take(i, axis=0) if a.ndim > 1 else a[i])
        a = (
            np.moveaxis(x.data, list(axes), list(range(len(axes))))
            if axes != tuple(range(len(axes)))
            else x.data
        )
        r = a[tuple(idx[..., i] for i in range(len(axes)))]
        return _fill(out, r)

    def indexed_add(self, out: Tensor, x: Tensor, indices: Tensor, updates: Tensor, *,
                    axes: tuple[int, ...]) -> Tensor:  # fmt: skip
        k = len(axes)
        a, u = x.data, updates.data
        low = a.dtype.kind == "f" and a.dtype.itemsize == 2
        if low:  # float16 / bfloat16: sum in float32, round once
            a, u = a.astype(np.float32), u.astype(np.float32)
        else:
            a = a.copy()
        v = np.moveaxis(a, list(axes), list(range(k)))
        np.add.at(v, tuple(indices.data[:, i] for i in range(k)), u)
        return _fill(out, a.astype(out.dtype.numpy_dtype, copy=False))

    def indexed_put(self, out: Tensor, x: Tensor, indices: Tensor, updates: Tensor, *,
                    axes: tuple[int, ...]) -> Tensor:  # fmt: skip
        k = len(axes)
        a = x.data.copy()
        v = np.moveaxis(a, list(axes), list(range(k)))
        idx = indices.data
        if idx.shape[0] > 1:
            # numpy leaves the winner of repeated indices unspecified: keep the last of each
            flat = np.ravel_multi_index(tuple(idx[:, i] for i in range(k)), v.shape[:k])
            _, first_rev = np.unique(flat[::-1], return_index=True)
            keep = np.sort(idx.shape[0] - 1 - first_rev)
            idx, u = idx[keep], updates.data[keep]
        else:
            u = updates.data
        v[tuple(idx[:, i] for i in range(k))] = u
        out.data = a
        return out


# the kernels that only move, view or gather elements raise no floating-point warning: they
# run without the kernel context; full, dot and reduce enter it themselves where they need it
_full = _quiet(BinaryBackend._full_any)
_dot = _quiet(BinaryBackend._dot_any)
for _name in ("slice", "reshape", "transpose", "broadcast", "concatenate", "reverse", "full",
              "dot", "reduce", "gather"):  # fmt: skip
    getattr(BinaryBackend, _name).quiet = True

# every primitive and block runs in the kernel context (the element-wise kernels enter it
# themselves); a subclass's own override does not
for _name in [*REGISTRY.names(), *(n for n in dir(BinaryBackend) if n.startswith("block_"))]:
    _method = getattr(BinaryBackend, _name, None)
    if callable(_method) and not getattr(_method, "quiet", False):
        setattr(BinaryBackend, _name, _quiet(_method))


def _batched_dot(a: np.ndarray, b: np.ndarray, cx: tuple[int, ...], bx: tuple[int, ...],
                 cy: tuple[int, ...], by: tuple[int, ...]) -> np.ndarray:  # fmt: skip
    """The dot with batch axes as one ``np.matmul`` of stacks of matrices: x laid out as
    (batch, free, contracted), y as (batch, contracted, free), each group of axes merged
    into one. numpy's einsum, without a path, loops where matmul calls its batched kernel
    (f32[64][64][64] @ f32[64][64][64]: 2.4 ms against 0.3)."""
    fx = [i for i in range(a.ndim) if i not in cx and i not in bx]
    fy = [i for i in range(b.ndim) if i not in cy and i not in by]
    batch = [a.shape[i] for i in bx]
    free_x, free_y = [a.shape[i] for i in fx], [b.shape[j] for j in fy]
    k = math.prod(a.shape[i] for i in cx)
    at = a.transpose([*bx, *fx, *cx]).reshape(*batch, math.prod(free_x), k)
    bt = b.transpose([*by, *cy, *fy]).reshape(*batch, k, math.prod(free_y))
    return np.matmul(at, bt).reshape(*batch, *free_x, *free_y)
