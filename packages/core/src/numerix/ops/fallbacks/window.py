"""Fallbacks of the window family (see :mod:`numerix.ops.fallbacks`): every window's
elements by one ``gather`` of a static index grid built on the host (the padding's
positions replaced by the kind's identity with ``select``), reduced with ``reduce``;
the window scatters by the transpose of that grid. Only required primitives are
bound: ``from_numpy``, ``gather``, ``reshape``, ``select``, ``equal``, ``bitwise_and``,
``bitwise_or``, ``reduce``, ``add`` and ``as_type``.
"""

from __future__ import annotations

import numpy as np

from numerix._tensor import Tensor
from numerix.dtypes import reduction_identity
from numerix.ops.fallbacks._common import (
    and_,
    broadcast_to,
    cast,
    compute_dtype,
    const,
    flat,
    nan_mask,
    or_,
    zeros_like,
)
from numerix.primitives import elementwise as ep
from numerix.primitives import fallback_rule
from numerix.primitives import indexing as ip
from numerix.primitives import reduction as rp
from numerix.primitives import shape as sp

Pairs = tuple[tuple[int, int], ...]


def _grid(
    shape: tuple[int, ...], out_shape: tuple[int, ...], dims: tuple[int, ...],
    strides: tuple[int, ...], padding: Pairs, dilations: tuple[int, ...],
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """``(flat, valid)``, both ``out_shape + (window size,)``: the flat index into ``x``
    of element ``w`` (row-major in the window) of each window (0 where it falls in the
    padding), and whether it falls in ``x``."""
    d = len(shape)
    full = out_shape + dims
    flat = np.zeros(full, np.int64)
    valid = np.ones(full, bool)
    step = 1
    for i in reversed(range(d)):
        view = [1] * (2 * d)
        view[i], view[d + i] = out_shape[i], dims[i]
        o = np.arange(out_shape[i], dtype=np.int64)[:, None]
        w = np.arange(dims[i], dtype=np.int64)[None, :]
        at = (o * strides[i] + w * dilations[i] - padding[i][0]).reshape(view)
        inside = (at >= 0) & (at < shape[i])
        valid = valid & inside
        flat = flat + np.where(inside, at, 0) * step
        step *= shape[i]
    k = int(np.prod(dims, dtype=np.int64))
    return flat.reshape(out_shape + (k,)), valid.reshape(out_shape + (k,))


def _elements(out: Tensor, x: Tensor, lin: np.ndarray) -> Tensor:
    """``x``'s elements at the flat indices ``lin`` (one gather), of ``lin``'s shape."""
    return ip.gather.bind(flat(x), const(out, lin[..., None]), axes=(0,))


@fallback_rule("window_reduce")
def window_reduce(
    out: Tensor, x: Tensor, *, kind: str, window_dimensions: tuple[int, ...],
    strides: tuple[int, ...], padding: Pairs, window_dilations: tuple[int, ...],
) -> Tensor:  # fmt: skip
    """``reduce`` of kind over the last axis of the windows' elements, the padding's
    positions holding the kind's identity, as binary pads. Max and min pick values
    (exact, NaN propagating); integer sums and products wrap as binary's; float sums
    round in ``reduce``'s order, not binary's. float16 and bfloat16 sums and products
    run in float32 and round once, as binary does (their max and min too, exact either
    way)."""
    if out.size == 0:
        return zeros_like(out)
    cdt = compute_dtype(x.dtype)
    identity = const(out, reduction_identity(kind, cdt), cdt)
    if x.size == 0:  # every window is padding alone
        r = broadcast_to(identity, out.shape)
    else:
        flat, valid = _grid(x.shape, out.shape, window_dimensions, strides, padding,
                            window_dilations)  # fmt: skip
        y = cast(x, cdt)
        v = _elements(out, y, flat)
        if not valid.all():
            v = ep.select.bind(const(out, valid), v, identity)
        r = rp.reduce.bind(v, kind=kind, axes=(x.ndim,), keepdims=False)
    return cast(r, out.dtype)


def _gather_back(
    shape: tuple[int, ...], out_shape: tuple[int, ...], dims: tuple[int, ...],
    strides: tuple[int, ...], padding: Pairs,
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """The transpose of :func:`_grid` (dilation 1): ``(flat, valid)``, both ``shape +
    (window size,)``: for each element of ``x`` and each window position ``w``, the flat
    index into ``out_shape + (window size,)`` of the window that holds the element at
    ``w``, and whether there is one."""
    d = len(shape)
    full = shape + dims
    flat = np.zeros(full, np.int64)
    valid = np.ones(full, bool)
    k = int(np.prod(dims, dtype=np.int64))
    step, wstep = k, 1
    for i in reversed(range(d)):
        view = [1] * (2 * d)
        view[i], view[d + i] = shape[i], dims[i]
        j = np.arange(shape[i], dtype=np.int64)[:, None]
        w = np.arange(dims[i], dtype=np.int64)[None, :]
        num = j + padding[i][0] - w
        o = num // strides[i]
        has = (num % strides[i] == 0) & (o >= 0) & (o < out_shape[i])
        valid = valid & has.reshape(view)
        flat = flat + (np.where(has, o, 0) * step + w * wstep).reshape(view)
        step *= out_shape[i]
        wstep *= dims[i]
    return flat.reshape(shape + (k,)), valid.reshape(shape + (k,))


@fallback_rule("window_scatter")
def window_scatter(
    out: Tensor, x: Tensor, source: Tensor, init_value: Tensor, *, kind: str,
    window_dimensions: tuple[int, ...], strides: tuple[int, ...], padding: Pairs,
) -> Tensor:  # fmt: skip
    """Each window's first extreme element of ``x`` (``reduce`` max or min over its
    in-bounds elements, NaN propagating, then the first position equal to it, NaN
    matching NaN; padding never chosen), and each element of ``x`` the sum of the source
    values of the windows that chose it (gathers of the transposed grid), added to
    ``init_value``.

    The sum is binary's, bit for bit: each element starts from ``init_value`` and adds,
    one window position at a time, the source values of the windows in the order of the
    windows (a loop over the window's positions, not the elements), with -0.0, the
    additive identity, where a window chose elsewhere. Integers wrap. float16 and
    bfloat16 sources run in float32 and round once, as binary does."""
    if out.size == 0:
        return zeros_like(out)
    sdt = out.dtype
    cdt = compute_dtype(sdt)
    init = cast(init_value, cdt)
    base = broadcast_to(init, out.shape)
    if source.size == 0:
        return cast(base, sdt)
    src = cast(source, cdt)
    # the elements of each window, the padding holding a value that never wins
    d = x.ndim
    flat, valid = _grid(x.shape, source.shape, window_dimensions, strides, padding, (1,) * d)
    k = flat.shape[-1]
    xs = cast(x, compute_dtype(x.dtype))
    v = _elements(out, xs, flat)
    all_valid = bool(valid.all())
    fill = const(out, reduction_identity(kind, xs.dtype), xs.dtype)
    keyed = v if all_valid else ep.select.bind(const(out, valid), v, fill)
    best = rp.reduce.bind(keyed, kind=kind, axes=(d,), keepdims=True)
    hit = ep.equal.bind(v, best)
    if xs.dtype.kind == "f":
        hit = or_(hit, and_(nan_mask(v), nan_mask(best)))
    if not all_valid:
        hit = and_(hit, const(out, valid))
    # the first hit: the least window position among the hits (k where there is none)
    positions = const(out, np.arange(k, dtype=np.int64))
    first = rp.reduce.bind(
        ep.select.bind(hit, positions, const(out, np.int64(k))), kind="min", axes=(d,),
        keepdims=True,
    )  # fmt: skip
    chosen = ep.equal.bind(positions, first)
    # -0.0 (both parts for complex): x + zero is x bit for bit
    zero = const(out, {"f": -0.0, "c": complex(-0.0, -0.0)}.get(cdt.kind, 0), cdt)
    parts = ep.select.bind(chosen, sp.reshape.bind(src, shape=source.shape + (1,)), zero)
    parts = sp.reshape.bind(parts, shape=(parts.size,))
    back, held = _gather_back(x.shape, source.shape, window_dimensions, strides, padding)
    # an element's window position w + 1 lies in an earlier window than position w: adding
    # the positions from the last to the first adds in the windows' order, as binary
    r = base
    for w in reversed(range(k)):
        g = ip.gather.bind(parts, const(out, back[..., w, None]), axes=(0,))
        if not held[..., w].all():
            g = ep.select.bind(const(out, held[..., w]), g, zero)
        r = ep.add.bind(r, g)
    return cast(r, sdt)
