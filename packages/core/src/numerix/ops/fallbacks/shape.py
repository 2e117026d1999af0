"""Fallbacks of the shape, indexing, dot and argreduce primitives (see
:mod:`numerix.ops.fallbacks`).

Moving elements is reading them by index: where the positions depend only on shapes
(transpose, slice, reverse, concatenate, pad) they are computed on the host with numpy,
brought in with ``from_numpy`` and read with one ``gather`` from the input laid out flat
(``reshape``), which copies each element's bits, -0.0 and NaN payloads included.
Positions that depend on tensors (the starts of ``dynamic_slice`` and ``put_slice``, the
indices of the scatters) are computed with integer tensor arithmetic. Nothing here uses
sort, cumulative, window, conv or fft, whose fallbacks build on these.
"""

from __future__ import annotations

import builtins
import math
from typing import Any

import numpy as np

from numerix import dtypes
from numerix._tensor import Tensor
from numerix.backend import Backend
from numerix.dtypes import DType
from numerix.ops._core import from_numpy
from numerix.primitives import creation as creation_p
from numerix.primitives import elementwise as elementwise_p
from numerix.primitives import fallback_rule
from numerix.primitives import indexing as indexing_p
from numerix.primitives import reduction as reduction_p
from numerix.primitives import shape as shape_p

_py_slice = builtins.slice  # this module's ``slice`` is the fallback
_gather = indexing_p.gather
_reshape = shape_p.reshape
_transpose = shape_p.transpose
_select = elementwise_p.select
_equal = elementwise_p.equal
_less = elementwise_p.less
_add = elementwise_p.add
_subtract = elementwise_p.subtract
_multiply = elementwise_p.multiply
_and = elementwise_p.bitwise_and
_or = elementwise_p.bitwise_or
_as_type = elementwise_p.as_type
_reduce = reduction_p.reduce


# ---------------------------------------------------------------- helpers


def _index_dtype(backend: Backend) -> DType:
    """int64, the dtype of gather's indices, unless the backend holds no int64 tensors
    (then int32: a backend without int64 holds no tensor of 2**31 elements either)."""
    claimed = type(backend).supported_dtypes
    return dtypes.int64 if claimed is None or dtypes.int64 in claimed else dtypes.int32


def _host(backend: Backend, a: np.ndarray, dtype: DType) -> Tensor:
    """A host array as a tensor of ``dtype`` on ``backend`` (a C-ordered copy of its own)."""
    return from_numpy(np.array(a, dtype=dtype.numpy_dtype, order="C"), backend=backend)


def _value(dtype: DType, v: Any) -> Any:
    """``v`` as the Python scalar ``full`` takes for ``dtype``."""
    if dtype.kind == "b":
        return bool(v)
    if dtype.kind in "iu":
        return int(v)
    if dtype.kind == "f":
        return float(v)
    return complex(v)


def _full(backend: Backend, v: Any, dtype: DType, shape: tuple[int, ...] = ()) -> Tensor:
    return creation_p.full.bind(backend=backend, value=_value(dtype, v), shape=shape, dtype=dtype)


def _empty(out: Tensor) -> Tensor:
    """``out``'s shape and dtype with no elements: nothing to read."""
    return _full(out.backend, 0, out.dtype, out.shape)


def _cast(x: Tensor, dtype: DType) -> Tensor:
    return x if x.dtype is dtype else _as_type.bind(x, dtype=dtype)


def _flat(x: Tensor) -> Tensor:
    return x if x.ndim == 1 else _reshape.bind(x, shape=(x.size,))


def _take_flat(out: Tensor, x: Tensor, lin: np.ndarray) -> Tensor:
    """The elements of ``x`` at the flat (C-order) positions ``lin`` (a host array of
    out's shape): one gather from ``x`` laid out flat."""
    if lin.size == 0:
        return _empty(out)
    idx = _host(out.backend, lin.reshape(lin.shape + (1,)), _index_dtype(out.backend))
    return _gather.bind(_flat(x), idx, axes=(0,))


def _positions(shape: tuple[int, ...]) -> np.ndarray:
    """The flat position of each element of an array of ``shape``."""
    return np.arange(math.prod(shape), dtype=np.int64).reshape(shape)


def _strides(shape: tuple[int, ...]) -> list[int]:
    """The C-order strides of ``shape``, in elements."""
    out, s = [], 1
    for d in reversed(shape):
        out.append(s)
        s *= d
    return out[::-1]


def _clamped_start(start: Tensor, hi: int, dtype: DType) -> Tensor:
    """``min(max(start, 0), hi)`` (XLA's rule, :func:`numerix.backend.clamp_starts`) of a
    0-d integer tensor, in ``dtype``: clamped in its own dtype first, so no value wraps."""
    b = start.backend
    zero, top = _full(b, 0, start.dtype), _full(b, hi, start.dtype)
    s = _select.bind(_less.bind(start, zero), zero, start)
    s = _select.bind(_less.bind(top, s), top, s)
    return _cast(s, dtype)


def _accumulation(dtype: DType) -> DType:
    """Where binary sums and multiplies ``dtype``: float16 and bfloat16 in float32 (the
    products of two such values are exact there), rounded once at the end."""
    return dtypes.float32 if dtype.kind == "f" and dtype.bits == 16 else dtype


# ---------------------------------------------------------------- shape


@fallback_rule("transpose")
def transpose(out: Tensor, x: Tensor, *, axes: tuple[int, ...]) -> Tensor:
    """A gather of x's flat positions permuted on the host; a reshape where only axes of
    length 1 move (the order of the elements is unchanged). Uses gather, reshape."""
    moved = [a for a in axes if x.shape[a] != 1]
    if moved == sorted(moved):
        return x if out.shape == x.shape else _reshape.bind(x, shape=out.shape)
    return _take_flat(out, x, _positions(x.shape).transpose(axes))


@fallback_rule("broadcast")
def broadcast(out: Tensor, x: Tensor, *, axes: tuple[int, ...], shape: tuple[int, ...]) -> Tensor:
    """x reshaped to line its axes up with out's, then widened by ``select``, which
    broadcasts its operands: a True mask spanning the widened axes chooses x's own
    values, bits unchanged. Uses reshape, select, full."""
    lined = [1] * out.ndim
    for i, a in enumerate(axes):
        lined[a] = x.shape[i]
    xr = x if tuple(lined) == x.shape else _reshape.bind(x, shape=tuple(lined))
    if tuple(lined) == out.shape:
        return xr
    mask_shape = tuple(o if d == 1 else 1 for o, d in zip(out.shape, lined))
    mask = _full(out.backend, True, dtypes.bool_, mask_shape)
    return _select.bind(mask, xr, xr)


@fallback_rule("slice")
def slice(
    out: Tensor, x: Tensor, *, start: tuple[int, ...], stop: tuple[int, ...],
    strides: tuple[int, ...],
) -> Tensor:  # fmt: skip
    """A gather of the sliced flat positions. Uses gather, reshape."""
    if out.shape == x.shape:
        return x
    key = tuple(map(_py_slice, start, stop, strides))
    return _take_flat(out, x, _positions(x.shape)[key])


@fallback_rule("reverse")
def reverse(out: Tensor, x: Tensor, *, axes: tuple[int, ...]) -> Tensor:
    """A gather of the flat positions reversed on the host (axes of length 0 or 1 left as
    they are). Uses gather, reshape."""
    axes = tuple(a for a in axes if x.shape[a] > 1)
    if not axes:
        return x
    return _take_flat(out, x, np.flip(_positions(x.shape), axes))


@fallback_rule("concatenate")
def concatenate(out: Tensor, *xs: Tensor, axis: int) -> Tensor:
    """Each non-empty input gathered over all of out (its positions along ``axis``
    clamped into its own extent), then chosen by ``select`` where it owns the positions.
    Uses gather, reshape, select."""
    parts, at = [], 0
    for x in xs:
        n = x.shape[axis]
        if n:
            parts.append((at, x))
        at += n
    if out.size == 0:
        return _empty(out)
    if len(parts) == 1:
        return parts[0][1]
    length = out.shape[axis]
    pos = np.arange(length, dtype=np.int64)
    view = [1] * out.ndim
    view[axis] = length
    result: Tensor | None = None
    for lo, x in parts:
        n = x.shape[axis]
        lin = np.take(_positions(x.shape), np.clip(pos - lo, 0, n - 1), axis=axis)
        g = _take_flat(out, x, lin)
        if result is None:
            result = g
        else:
            owns = ((pos >= lo) & (pos < lo + n)).reshape(view)
            result = _select.bind(_host(out.backend, owns, dtypes.bool_), g, result)
    assert result is not None
    return result


@fallback_rule("pad")
def pad(
    out: Tensor, x: Tensor, pad_value: Tensor, *, config: tuple[tuple[int, int, int], ...]
) -> Tensor:
    """XLA Pad as a gather: each position of out is, on the host, either an element of x
    (past the low edge, on the interior grid) or pad_value; the gathered elements and
    pad_value are chosen by ``select``. Uses gather, reshape, select, full."""
    if out.size == 0:
        return _empty(out)
    srcs, oks = [], []
    for d, o, (lo, _, interior) in zip(x.shape, out.shape, config):
        t = np.arange(o, dtype=np.int64) - lo  # the position among x's elements and gaps
        n = d + max(d - 1, 0) * interior
        ok = (t >= 0) & (t < n) & (t % (interior + 1) == 0)
        srcs.append(np.where(ok, t // (interior + 1), 0))
        oks.append(ok)
    ok_all = np.ones(out.shape, dtype=bool)
    lin = np.zeros(out.shape, dtype=np.int64)
    for a, (src, ok, stride) in enumerate(zip(srcs, oks, _strides(x.shape))):
        view = [1] * out.ndim
        view[a] = out.shape[a]
        ok_all &= ok.reshape(view)
        lin += src.reshape(view) * stride
    if not ok_all.any():  # nothing of x shows (or x is empty): pad_value everywhere
        return _select.bind(_full(out.backend, True, dtypes.bool_, out.shape), pad_value, pad_value)
    g = _take_flat(out, x, lin)
    if ok_all.all():
        return g
    return _select.bind(_host(out.backend, ok_all, dtypes.bool_), g, pad_value)


@fallback_rule("dynamic_slice")
def dynamic_slice(out: Tensor, x: Tensor, *starts: Tensor, sizes: tuple[int, ...]) -> Tensor:
    """The window's flat positions at the origin (host) plus the flat offset of the
    clamped starts (a 0-d integer tensor), gathered. Uses gather, reshape, select, less,
    multiply, add, as_type, full."""
    if out.size == 0:
        return _empty(out)
    b = out.backend
    idt = _index_dtype(b)
    offset: Tensor | None = None
    for s, d, n, stride in zip(starts, x.shape, sizes, _strides(x.shape)):
        if d == n:  # the only start in [0, d - n] is 0
            continue
        term = _multiply.bind(_clamped_start(s, d - n, idt), _full(b, stride, idt))
        offset = term if offset is None else _add.bind(offset, term)
    window = _positions(x.shape)[tuple(map(_py_slice, [0] * len(sizes), sizes))]
    idx = _host(b, window.reshape(window.shape + (1,)), idt)
    if offset is not None:
        idx = _add.bind(idx, offset)
    return _gather.bind(_flat(x), idx, axes=(0,))


@fallback_rule("put_slice")
def put_slice(out: Tensor, x: Tensor, update: Tensor, *starts: Tensor) -> Tensor:
    """Per axis, each position's offset from the clamped start (tensor arithmetic on a
    host ``arange``): inside the window on every axis, the element of update at those
    offsets (gathered), elsewhere x's own, chosen by ``select``. Uses gather, reshape,
    select, less, bitwise_and, subtract, multiply, add, as_type, full."""
    if update.size == 0:
        return x
    if update.shape == x.shape:  # every start clamps to 0
        return update
    b = out.backend
    idt = _index_dtype(b)
    zero, minus_one = _full(b, 0, idt), _full(b, -1, idt)
    inside: Tensor | None = None
    lin: Tensor | None = None
    for a, (s, d, n, stride) in enumerate(
        zip(starts, x.shape, update.shape, _strides(update.shape))
    ):
        view = [1] * x.ndim
        view[a] = d
        r = _host(b, np.arange(d, dtype=np.int64).reshape(view), idt)
        if n != d:
            r = _subtract.bind(r, _clamped_start(s, d - n, idt))
            ok = _and.bind(_less.bind(r, _full(b, n, idt)), _less.bind(minus_one, r))
            inside = ok if inside is None else _and.bind(inside, ok)
            r = _select.bind(ok, r, zero)
        term = r if stride == 1 else _multiply.bind(r, _full(b, stride, idt))
        lin = term if lin is None else _add.bind(lin, term)
    assert inside is not None and lin is not None
    idx = _reshape.bind(lin, shape=x.shape + (1,))
    return _select.bind(inside, _gather.bind(_flat(update), idx, axes=(0,)), x)


# ---------------------------------------------------------------- indexing


class _Scatter:
    """x laid out as (the indexed axes, merged; the other axes, merged), the flat target
    of each row of indices, and the one-hot (rows, targets) of where each row lands."""

    def __init__(self, x: Tensor, indices: Tensor, axes: tuple[int, ...]) -> None:
        b = x.backend
        rest = [a for a in range(x.ndim) if a not in axes]
        self.perm = (*axes, *rest)
        self.lined = tuple(x.shape[a] for a in self.perm)
        self.m = math.prod(x.shape[a] for a in axes)
        self.r = math.prod(x.shape[a] for a in rest)
        self.n = indices.shape[0]
        xt = x if self.perm == tuple(range(x.ndim)) else _transpose.bind(x, axes=self.perm)
        self.x2 = _reshape.bind(xt, shape=(self.m, self.r))
        idt = indices.dtype
        strides = _host(b, np.array(_strides(tuple(x.shape[a] for a in axes))), idt)
        target = _reduce.bind(
            _multiply.bind(indices, strides), kind="sum", axes=(1,), keepdims=True
        )  # (n, 1): exact, each below m
        slots = _host(b, np.arange(self.m, dtype=np.int64).reshape(1, self.m), idt)
        self.hit = _equal.bind(target, slots)  # (n, m)

    def back(self, r2: Tensor) -> Tensor:
        """A result laid out as x2 in x's own layout."""
        r = _reshape.bind(r2, shape=self.lined)
        if self.perm == tuple(range(len(self.perm))):
            return r
        inverse = [0] * len(self.perm)
        for i, a in enumerate(self.perm):
            inverse[a] = i
        return _transpose.bind(r, axes=tuple(inverse))


@fallback_rule("indexed_add")
def indexed_add(
    out: Tensor, x: Tensor, indices: Tensor, updates: Tensor, *, axes: tuple[int, ...]
) -> Tensor:
    """A one-hot scatter: each target's updates chosen by ``select`` (not multiplied, so
    inf and NaN stay what they are; elsewhere -0.0, the sum's identity) and summed over
    the rows, then added to x where anything lands (x's own elements elsewhere, -0.0
    kept). Sums in x's dtype (integers wrap around exactly), float16 and bfloat16 in
    float32 rounded once, as binary does; bool ors. The order of the floating sum differs
    from a sequential one by rounding only. Uses equal, select, reduce, multiply, add,
    bitwise_and/or, as_type, reshape, transpose, full."""
    if x.size == 0 or indices.shape[0] == 0:
        return x
    b = out.backend
    sc = _Scatter(x, indices, axes)
    hit3 = _reshape.bind(sc.hit, shape=(sc.n, sc.m, 1))
    u = _reshape.bind(updates, shape=(sc.n, 1, sc.r))
    if x.dtype.kind == "b":
        landed = _reduce.bind(_and.bind(hit3, u), kind="any", axes=(0,), keepdims=False)
        return sc.back(_or.bind(sc.x2, landed))
    cd = _accumulation(x.dtype)
    identity = -0.0 if cd.kind == "f" else complex(-0.0, -0.0) if cd.kind == "c" else 0
    chosen = _select.bind(hit3, _cast(u, cd), _full(b, identity, cd))
    total = _reduce.bind(chosen, kind="sum", axes=(0,), keepdims=False)  # (m, r)
    summed = _cast(_add.bind(_cast(sc.x2, cd), total), x.dtype)
    anyhit = _reduce.bind(sc.hit, kind="any", axes=(0,), keepdims=False)
    anyhit = _reshape.bind(anyhit, shape=(sc.m, 1))
    return sc.back(_select.bind(anyhit, summed, sc.x2))


@fallback_rule("indexed_put")
def indexed_put(
    out: Tensor, x: Tensor, indices: Tensor, updates: Tensor, *, axes: tuple[int, ...]
) -> Tensor:
    """A one-hot scatter: each target's writer is the largest row landing on it (a reduce
    max over the rows' numbers, -1 where none lands), its update gathered and chosen by
    ``select`` over x's own element. Exact: values are only moved. Uses equal, select,
    reduce, less, gather, multiply, reshape, transpose, full."""
    if x.size == 0 or indices.shape[0] == 0:
        return x
    b = out.backend
    idt = _index_dtype(b)
    sc = _Scatter(x, indices, axes)
    rows = _host(b, np.arange(sc.n, dtype=np.int64).reshape(sc.n, 1), idt)
    minus_one = _full(b, -1, idt)
    writer = _reduce.bind(
        _select.bind(sc.hit, rows, minus_one), kind="max", axes=(0,), keepdims=False
    )  # (m,)
    wrote = _less.bind(minus_one, writer)
    writer = _select.bind(wrote, writer, _full(b, 0, idt))
    u = _reshape.bind(updates, shape=(sc.n, sc.r))
    g = _gather.bind(u, _reshape.bind(writer, shape=(sc.m, 1)), axes=(0,))  # (m, r)
    wrote = _reshape.bind(wrote, shape=(sc.m, 1))
    return sc.back(_select.bind(wrote, g, sc.x2))


# ---------------------------------------------------------------- dot, argreduce


@fallback_rule("dot")
def dot(
    out: Tensor, x: Tensor, y: Tensor, *, contract_x: tuple[int, ...], batch_x: tuple[int, ...],
    contract_y: tuple[int, ...], batch_y: tuple[int, ...],
) -> Tensor:  # fmt: skip
    """x laid out as (batch, free, 1, contracted) and y as (batch, 1, free, contracted),
    multiplied (broadcasting) and summed over the contracted axis: integers wrap around
    as binary's do (both are exact modulo 2**bits), float16 and bfloat16 multiply and sum
    in float32 and round once (as binary's), the other floating and complex dtypes round
    as binary's up to the order of the sum. Uses transpose, reshape, multiply, reduce,
    as_type (bool: bitwise_and and reduce any)."""
    if out.size == 0:
        return _empty(out)
    free_x = [a for a in range(x.ndim) if a not in contract_x and a not in batch_x]
    free_y = [a for a in range(y.ndim) if a not in contract_y and a not in batch_y]
    nb = math.prod(x.shape[a] for a in batch_x)
    nc = math.prod(x.shape[a] for a in contract_x)
    nx = math.prod(x.shape[a] for a in free_x)
    ny = math.prod(y.shape[a] for a in free_y)

    def lay(t: Tensor, perm: tuple[int, ...], shape: tuple[int, ...]) -> Tensor:
        if perm != tuple(range(t.ndim)):
            t = _transpose.bind(t, axes=perm)
        return _reshape.bind(t, shape=shape)

    xl = lay(x, (*batch_x, *free_x, *contract_x), (nb, nx, 1, nc))
    yl = lay(y, (*batch_y, *free_y, *contract_y), (nb, 1, ny, nc))
    if x.dtype.kind == "b":
        r = _reduce.bind(_and.bind(xl, yl), kind="any", axes=(3,), keepdims=False)
    else:
        cd = _accumulation(x.dtype)
        p = _multiply.bind(_cast(xl, cd), _cast(yl, cd))
        r = _cast(_reduce.bind(p, kind="sum", axes=(3,), keepdims=False), out.dtype)
    return _reshape.bind(r, shape=out.shape)


@fallback_rule("argreduce")
def argreduce(out: Tensor, x: Tensor, *, kind: str, axis: int | None, keepdims: bool) -> Tensor:
    """The first position along the axis holding the extreme (reduce max or min, which
    propagates NaN; NaN positions count as holding it, numpy's order): positions chosen
    by ``select`` (the axis's length elsewhere) and their reduce min. Exact. Uses reduce,
    equal, select, reshape, as_type (bool compares as uint8)."""
    b = out.backend
    xr = x
    if axis is None:
        xr, axis = _flat(x), 0
    if xr.dtype.kind == "b":
        xr = _cast(xr, dtypes.uint8)
    extreme = _reduce.bind(xr, kind=kind, axes=(axis,), keepdims=True)
    hit = _equal.bind(xr, extreme)
    if xr.dtype.kind == "f":  # NaN: only where the extreme is NaN too
        hit = _select.bind(_equal.bind(xr, xr), hit, _full(b, True, dtypes.bool_))
    n = xr.shape[axis]
    view = [1] * xr.ndim
    view[axis] = n
    pos = _host(b, np.arange(n, dtype=np.int64).reshape(view), dtypes.int64)
    first = _select.bind(hit, pos, _full(b, n, dtypes.int64))
    r = _reduce.bind(first, kind="min", axes=(axis,), keepdims=keepdims)
    return r if r.shape == out.shape else _reshape.bind(r, shape=out.shape)
