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

import numpy as np

from numerix import dtypes
from numerix._tensor import Tensor
from numerix.dtypes import DType
from numerix.ops.fallbacks._common import (
    and_,
    broadcast_to,
    cast,
    compute_dtype,
    const,
    filled,
    flat,
    index_dtype,
    or_,
    reshaped,
    transposed,
    zeros_like,
)
from numerix.primitives import elementwise as ep
from numerix.primitives import fallback_rule
from numerix.primitives import indexing as ip
from numerix.primitives import reduction as rp
from numerix.primitives import shape as sp

_py_slice = builtins.slice  # this module's ``slice`` is the fallback

# ---------------------------------------------------------------- helpers


def _take_flat(out: Tensor, x: Tensor, lin: np.ndarray) -> Tensor:
    """The elements of ``x`` at the flat (C-order) positions ``lin`` (a host array of
    out's shape): one gather from ``x`` laid out flat."""
    if lin.size == 0:
        return zeros_like(out)
    idx = const(out.backend, lin.reshape(lin.shape + (1,)), index_dtype(out.backend))
    return ip.gather.bind(flat(x), idx, axes=(0,))


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
    zero, top = filled(b, 0, start.dtype), filled(b, hi, start.dtype)
    s = ep.select.bind(ep.less.bind(start, zero), zero, start)
    s = ep.select.bind(ep.less.bind(top, s), top, s)
    return cast(s, dtype)


# ---------------------------------------------------------------- shape


@fallback_rule("transpose")
def transpose(out: Tensor, x: Tensor, *, axes: tuple[int, ...]) -> Tensor:
    """A gather of x's flat positions permuted on the host; a reshape where only axes of
    length 1 move (the order of the elements is unchanged). Uses gather, reshape."""
    moved = [a for a in axes if x.shape[a] != 1]
    if moved == sorted(moved):
        return reshaped(x, out.shape)
    return _take_flat(out, x, _positions(x.shape).transpose(axes))


@fallback_rule("broadcast")
def broadcast(out: Tensor, x: Tensor, *, axes: tuple[int, ...], shape: tuple[int, ...]) -> Tensor:
    """x reshaped to line its axes up with out's, then widened by ``select``, which
    broadcasts its operands: a True mask spanning the widened axes chooses x's own
    values, bits unchanged. Uses reshape, select, full."""
    lined = [1] * out.ndim
    for i, a in enumerate(axes):
        lined[a] = x.shape[i]
    xr = reshaped(x, tuple(lined))
    if tuple(lined) == out.shape:
        return xr
    mask_shape = tuple(o if d == 1 else 1 for o, d in zip(out.shape, lined))
    mask = filled(out.backend, True, dtypes.bool_, mask_shape)
    return ep.select.bind(mask, xr, xr)


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
        return zeros_like(out)
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
            result = ep.select.bind(const(out.backend, owns, dtypes.bool_), g, result)
    assert result is not None
    return result


@fallback_rule("pad")
def pad(
    out: Tensor, x: Tensor, pad_value: Tensor, *, config: tuple[tuple[int, int, int], ...]
) -> Tensor:
    """XLA Pad as a gather: each position of out is, on the host, either an element of x
    (past the low edge, on the interior grid) or pad_value; the gathered elements and
    pad_value are chosen by ``select``. Uses gather, reshape, select."""
    if out.size == 0:
        return zeros_like(out)
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
        return broadcast_to(pad_value, out.shape)
    g = _take_flat(out, x, lin)
    if ok_all.all():
        return g
    return ep.select.bind(const(out.backend, ok_all, dtypes.bool_), g, pad_value)


@fallback_rule("dynamic_slice")
def dynamic_slice(out: Tensor, x: Tensor, *starts: Tensor, sizes: tuple[int, ...]) -> Tensor:
    """The window's flat positions at the origin (host) plus the flat offset of the
    clamped starts (a 0-d integer tensor), gathered. Uses gather, reshape, select, less,
    multiply, add, as_type, full."""
    if out.size == 0:
        return zeros_like(out)
    b = out.backend
    idt = index_dtype(b)
    offset: Tensor | None = None
    for s, d, n, stride in zip(starts, x.shape, sizes, _strides(x.shape)):
        if d == n:  # the only start in [0, d - n] is 0
            continue
        term = ep.multiply.bind(_clamped_start(s, d - n, idt), filled(b, stride, idt))
        offset = term if offset is None else ep.add.bind(offset, term)
    window = _positions(x.shape)[tuple(map(_py_slice, [0] * len(sizes), sizes))]
    idx = const(b, window.reshape(window.shape + (1,)), idt)
    if offset is not None:
        idx = ep.add.bind(idx, offset)
    return ip.gather.bind(flat(x), idx, axes=(0,))


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
    idt = index_dtype(b)
    zero, minus_one = filled(b, 0, idt), filled(b, -1, idt)
    inside: Tensor | None = None
    lin: Tensor | None = None
    for a, (s, d, n, stride) in enumerate(
        zip(starts, x.shape, update.shape, _strides(update.shape))
    ):
        view = [1] * x.ndim
        view[a] = d
        r = const(b, np.arange(d, dtype=np.int64).reshape(view), idt)
        if n != d:
            r = ep.subtract.bind(r, _clamped_start(s, d - n, idt))
            ok = and_(ep.less.bind(r, filled(b, n, idt)), ep.less.bind(minus_one, r))
            inside = ok if inside is None else and_(inside, ok)
            r = ep.select.bind(ok, r, zero)
        term = r if stride == 1 else ep.multiply.bind(r, filled(b, stride, idt))
        lin = term if lin is None else ep.add.bind(lin, term)
    assert inside is not None and lin is not None
    idx = sp.reshape.bind(lin, shape=x.shape + (1,))
    return ep.select.bind(inside, ip.gather.bind(flat(update), idx, axes=(0,)), x)


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
        xt = transposed(x, self.perm)
        self.x2 = sp.reshape.bind(xt, shape=(self.m, self.r))
        idt = indices.dtype
        strides = const(b, np.array(_strides(tuple(x.shape[a] for a in axes))), idt)
        target = rp.reduce.bind(
            ep.multiply.bind(indices, strides), kind="sum", axes=(1,), keepdims=True
        )  # (n, 1): exact, each below m
        slots = const(b, np.arange(self.m, dtype=np.int64).reshape(1, self.m), idt)
        self.hit = ep.equal.bind(target, slots)  # (n, m)

    def back(self, r2: Tensor) -> Tensor:
        """A result laid out as x2 in x's own layout."""
        r = sp.reshape.bind(r2, shape=self.lined)
        inverse = [0] * len(self.perm)
        for i, a in enumerate(self.perm):
            inverse[a] = i
        return transposed(r, tuple(inverse))


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
    hit3 = sp.reshape.bind(sc.hit, shape=(sc.n, sc.m, 1))
    u = sp.reshape.bind(updates, shape=(sc.n, 1, sc.r))
    if x.dtype.kind == "b":
        landed = rp.reduce.bind(and_(hit3, u), kind="any", axes=(0,), keepdims=False)
        return sc.back(or_(sc.x2, landed))
    cd = compute_dtype(x.dtype)
    identity = -0.0 if cd.kind == "f" else complex(-0.0, -0.0) if cd.kind == "c" else 0
    chosen = ep.select.bind(hit3, cast(u, cd), filled(b, identity, cd))
    total = rp.reduce.bind(chosen, kind="sum", axes=(0,), keepdims=False)  # (m, r)
    summed = cast(ep.add.bind(cast(sc.x2, cd), total), x.dtype)
    anyhit = rp.reduce.bind(sc.hit, kind="any", axes=(0,), keepdims=False)
    anyhit = sp.reshape.bind(anyhit, shape=(sc.m, 1))
    return sc.back(ep.select.bind(anyhit, summed, sc.x2))


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
    idt = index_dtype(b)
    sc = _Scatter(x, indices, axes)
    rows = const(b, np.arange(sc.n, dtype=np.int64).reshape(sc.n, 1), idt)
    minus_one = filled(b, -1, idt)
    writer = rp.reduce.bind(
        ep.select.bind(sc.hit, rows, minus_one), kind="max", axes=(0,), keepdims=False
    )  # (m,)
    wrote = ep.less.bind(minus_one, writer)
    writer = ep.select.bind(wrote, writer, filled(b, 0, idt))
    u = sp.reshape.bind(updates, shape=(sc.n, sc.r))
    g = ip.gather.bind(u, sp.reshape.bind(writer, shape=(sc.m, 1)), axes=(0,))  # (m, r)
    wrote = sp.reshape.bind(wrote, shape=(sc.m, 1))
    return sc.back(ep.select.bind(wrote, g, sc.x2))


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
        return zeros_like(out)
    free_x = [a for a in range(x.ndim) if a not in contract_x and a not in batch_x]
    free_y = [a for a in range(y.ndim) if a not in contract_y and a not in batch_y]
    nb = math.prod(x.shape[a] for a in batch_x)
    nc = math.prod(x.shape[a] for a in contract_x)
    nx = math.prod(x.shape[a] for a in free_x)
    ny = math.prod(y.shape[a] for a in free_y)

    def lay(t: Tensor, perm: tuple[int, ...], shape: tuple[int, ...]) -> Tensor:
        return reshaped(transposed(t, perm), shape)

    xl = lay(x, (*batch_x, *free_x, *contract_x), (nb, nx, 1, nc))
    yl = lay(y, (*batch_y, *free_y, *contract_y), (nb, 1, ny, nc))
    if x.dtype.kind == "b":
        r = rp.reduce.bind(and_(xl, yl), kind="any", axes=(3,), keepdims=False)
    else:
        cd = compute_dtype(x.dtype)
        p = ep.multiply.bind(cast(xl, cd), cast(yl, cd))
        r = cast(rp.reduce.bind(p, kind="sum", axes=(3,), keepdims=False), out.dtype)
    return sp.reshape.bind(r, shape=out.shape)


@fallback_rule("argreduce")
def argreduce(out: Tensor, x: Tensor, *, kind: str, axis: int | None, keepdims: bool) -> Tensor:
    """The first position along the axis holding the extreme (reduce max or min, which
    propagates NaN; NaN positions count as holding it, numpy's order): positions chosen
    by ``select`` (the axis's length elsewhere) and their reduce min. Exact. Uses reduce,
    equal, select, reshape, as_type (bool compares as uint8)."""
    b = out.backend
    xr = x
    if axis is None:
        xr, axis = flat(x), 0
    if xr.dtype.kind == "b":
        xr = cast(xr, dtypes.uint8)
    extreme = rp.reduce.bind(xr, kind=kind, axes=(axis,), keepdims=True)
    hit = ep.equal.bind(xr, extreme)
    if xr.dtype.kind == "f":  # NaN: only where the extreme is NaN too
        hit = ep.select.bind(ep.equal.bind(xr, xr), hit, filled(b, True, dtypes.bool_))
    n = xr.shape[axis]
    view = [1] * xr.ndim
    view[axis] = n
    pos = const(b, np.arange(n, dtype=np.int64).reshape(view), dtypes.int64)
    first = ep.select.bind(hit, pos, filled(b, n, dtypes.int64))
    r = rp.reduce.bind(first, kind="min", axes=(axis,), keepdims=keepdims)
    return reshaped(r, out.shape)
