"""Fallbacks of the sort family (see :mod:`numerix.ops.fallbacks`): ``sort`` and
``argsort`` as a bitonic sorting network, ``cumulative`` as a log-step scan.

Every one works on the lanes of ``x`` along ``axis`` laid out as the rows of an
``(n, m)`` tensor (one ``gather`` over ``axis`` and a ``reshape``), and puts the result
back with one ``gather`` of full coordinates built on the host. Only required
primitives are bound: ``from_numpy``, ``gather``, ``reshape``, ``select``, ``equal``,
``less``, ``bitwise_and``, ``bitwise_or``, ``as_type``, ``add``, ``multiply``, and
``real``/``imag`` for complex keys.
"""

from __future__ import annotations

import numpy as np

from numerix._tensor import Tensor
from numerix.ops.fallbacks._common import (
    and_,
    cast,
    compute_dtype,
    const,
    nan_mask,
    not_,
    or_,
    zeros_like,
)
from numerix.primitives import elementwise as ep
from numerix.primitives import fallback_rule
from numerix.primitives import indexing as ip
from numerix.primitives import shape as sp

# ---------------------------------------------------------------- helpers


def take_rows(t: Tensor, rows: Tensor) -> Tensor:
    """``t[rows[:, 0]]``: a gather over axis 0 (``rows`` int64 of shape ``(k, 1)``)."""
    return ip.gather.bind(t, rows, axes=(0,))


def lanes(out: Tensor, x: Tensor, axis: int, size: int, reverse: bool = False) -> Tensor:
    """The lanes of ``x`` along ``axis`` as the columns of a ``(size, m)`` tensor: row
    ``p`` holds element ``min(p, n - 1)`` of each lane (from the end if ``reverse``), so
    rows past ``n`` repeat the last one (a sorting network's padding)."""
    n = x.shape[axis]
    m = x.size // n
    p = np.minimum(np.arange(size, dtype=np.int64), n - 1)
    if reverse:
        p = (n - 1) - p
    g = ip.gather.bind(x, const(out, p[:, None]), axes=(axis,))  # (size, *other axes)
    return sp.reshape.bind(g, shape=(size, m))


def unlanes(
    out: Tensor, r: Tensor, shape: tuple[int, ...], axis: int, reverse: bool = False
) -> Tensor:
    """The inverse of :func:`lanes` for the first ``shape[axis]`` rows of ``r``: element
    ``s`` of the result is ``r[s[axis], flat index of s's other coordinates]``."""
    n = shape[axis]
    coords = np.indices(shape, dtype=np.int64)
    p = coords[axis]
    if reverse:
        p = (n - 1) - p
    rest = [c for i, c in enumerate(coords) if i != axis]
    rest_shape = tuple(d for i, d in enumerate(shape) if i != axis)
    q = np.ravel_multi_index(rest, rest_shape) if rest else np.zeros(shape, np.int64)
    grid = np.stack([p, np.asarray(q, np.int64)], axis=-1)
    return ip.gather.bind(r, const(out, grid), axes=(0, 1))


# ---------------------------------------------------------------- sort, argsort


def _keys(out: Tensor, v: Tensor) -> list[tuple[Tensor, bool]]:
    """The components of the sort key of ``v``, most significant first, each with whether
    it is a float (ordered NaN last, all NaN equal): the value itself for real dtypes;
    for complex numpy's extended order, ``(real is NaN, imag is NaN, real, imag)``."""
    if v.dtype.kind == "c":
        re, im = ep.real.bind(v), ep.imag.bind(v)
        return [(nan_mask(re), False), (nan_mask(im), False), (re, True), (im, True)]
    return [(v, v.dtype.kind == "f")]


def _before_same(
    out: Tensor, a: list[tuple[Tensor, bool]], b: list[tuple[Tensor, bool]]
) -> tuple[Tensor, Tensor, Tensor]:
    """``(a < b, b < a, a == b)`` in the total order of the keys (lexicographic over the
    components; a float component puts NaN last and holds every NaN equal)."""
    lt_ab: Tensor | None = None
    lt_ba: Tensor | None = None
    same: Tensor | None = None
    for (ka, is_float), (kb, _) in reversed(list(zip(a, b))):
        lt, gt, eq = ep.less.bind(ka, kb), ep.less.bind(kb, ka), ep.equal.bind(ka, kb)
        if is_float:
            na, nb = nan_mask(ka), nan_mask(kb)
            lt = or_(lt, and_(nb, not_(na)))
            gt = or_(gt, and_(na, not_(nb)))
            eq = or_(eq, and_(na, nb))
        if lt_ab is None or lt_ba is None or same is None:
            lt_ab, lt_ba, same = lt, gt, eq
        else:  # this component decides, or the less significant ones on a tie
            lt_ab = or_(lt, and_(eq, lt_ab))
            lt_ba = or_(gt, and_(eq, lt_ba))
            same = and_(eq, same)
    assert lt_ab is not None and lt_ba is not None and same is not None
    return lt_ab, lt_ba, same


def _bitonic(out: Tensor, x: Tensor, axis: int, descending: bool) -> tuple[Tensor, Tensor]:
    """The sorted values and their original indices, each ``(n, m)``.

    A bitonic network over the lanes padded to ``N``, a power of two: each of its
    ``log2(N) (log2(N) + 1) / 2`` stages gathers every element's partner and keeps the
    one the stage wants first. Elements are compared as (key, original index): a strict
    total order, so the network's result is the unique stable order (ties keep the lower
    index first, NaN last ascending and first descending, -0.0 and 0.0 equal). Padding
    rows carry indices ``>= n`` and compare by index alone, so they end up last."""
    n = x.shape[axis]
    size = 1 << max(n - 1, 0).bit_length()
    v = lanes(out, x, axis, size)
    idx = const(out, np.broadcast_to(np.arange(size, dtype=np.int64)[:, None], v.shape))
    last = const(out, np.int64(n - 1))
    i = np.arange(size, dtype=np.int64)
    k = 2
    while k <= size:
        j = k // 2
        while j >= 1:
            partner = i ^ j
            rows = const(out, partner[:, None])
            # element i keeps the one that comes first when it is the lower of its pair in
            # an ascending block, or the higher in a descending one
            first = const(out, (((i & k) == 0) == (i < partner))[:, None])
            pv, pidx = take_rows(v, rows), take_rows(idx, rows)
            lt, gt, same = _before_same(out, _keys(out, v), _keys(out, pv))
            by_index = ep.less.bind(idx, pidx)
            ahead = or_(gt if descending else lt, and_(same, by_index))
            if size > n:  # padding against anything: by index alone
                pad = or_(ep.less.bind(last, idx), ep.less.bind(last, pidx))
                ahead = ep.select.bind(pad, by_index, ahead)
            keep = ep.equal.bind(ahead, first)
            v = ep.select.bind(keep, v, pv)
            idx = ep.select.bind(keep, idx, pidx)
            j //= 2
        k *= 2
    if size > n:
        rows = const(out, np.arange(n, dtype=np.int64)[:, None])
        v, idx = take_rows(v, rows), take_rows(idx, rows)
    return v, idx


@fallback_rule("sort")
def sort(out: Tensor, x: Tensor, *, axis: int, descending: bool) -> Tensor:
    """The values of :func:`_bitonic`'s network put back along ``axis``: the network
    moves values and never computes with them, so the result is exact (NaN payloads and
    the sign of zero kept)."""
    if out.size == 0:
        return zeros_like(out)
    v, _ = _bitonic(out, x, axis, descending)
    return unlanes(out, v, x.shape, axis)


@fallback_rule("argsort")
def argsort(out: Tensor, x: Tensor, *, axis: int, descending: bool) -> Tensor:
    """The original indices of :func:`_bitonic`'s network put back along ``axis``."""
    if out.size == 0:
        return zeros_like(out)
    _, idx = _bitonic(out, x, axis, descending)
    return unlanes(out, idx, x.shape, axis)


# ---------------------------------------------------------------- cumulative


def _combine(out: Tensor, kind: str, a: Tensor, b: Tensor) -> Tensor:
    """``a`` (the earlier run) combined with ``b`` (the later one) as numpy's ufunc
    ``kind`` does: max and min keep a NaN (the earlier one) and, on a tie, ``b``
    (numpy's ``maximum`` returns its second operand unless the first is larger or NaN)."""
    if kind == "sum":
        return ep.add.bind(a, b)
    if kind == "prod":
        return ep.multiply.bind(a, b)
    wins = ep.less.bind(b, a) if kind == "max" else ep.less.bind(a, b)
    if a.dtype.kind == "f":
        wins = or_(wins, nan_mask(a))
    return ep.select.bind(wins, a, b)


@fallback_rule("cumulative")
def cumulative(out: Tensor, x: Tensor, *, kind: str, axis: int, reverse: bool) -> Tensor:
    """A Hillis-Steele scan: ``log2(n)`` steps, each combining every running value with
    the one ``2**k`` before it (a gather of rows and a select).

    Integer sums and products wrap exactly as numpy's; max and min pick values, so they
    are exact (NaN and ties as numpy's ufuncs, see :func:`_combine`). Float sums and
    products associate as a tree rather than left to right: they differ from numpy's
    sequential order by rounding only. float16 and bfloat16 sums and products run in
    float32 and round each result once, as binary does."""
    if out.size == 0:
        return zeros_like(out)
    n = x.shape[axis]
    y = cast(x, compute_dtype(x.dtype)) if kind in ("sum", "prod") else x
    r = lanes(out, y, axis, n, reverse)
    p = np.arange(n, dtype=np.int64)
    step = 1
    while step < n:
        earlier = take_rows(r, const(out, np.maximum(p - step, 0)[:, None]))
        r = ep.select.bind(const(out, (p >= step)[:, None]), _combine(out, kind, earlier, r), r)
        step *= 2
    res = unlanes(out, r, x.shape, axis, reverse)
    return cast(res, out.dtype)
