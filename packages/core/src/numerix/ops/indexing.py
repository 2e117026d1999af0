"""numpy-style indexing: ints, slices with steps, None, ``...``, integer and boolean tensors;
take, take_along_axis and repeat; dynamic_slice and put_slice; scatter (indexed_add, indexed_put).

Basic indices become one ``slice`` (plus ``reverse`` for negative steps) and a reshape;
integer-tensor (advanced) indices become one ``gather``, with numpy's placement rule:
the broadcast index dimensions replace the indexed axes when the advanced indices are
adjacent, and go first otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from numerix import dtypes
from numerix._meeting import DEALLOCATED, meeting_backend
from numerix._shapes import broadcast_shapes, check_shape, normalize_axis
from numerix._tensor import Tensor
from numerix.errors import DTypeError, IndexingError, ShapeError
from numerix.ops._core import (
    as_tensor,
    bind,
    cast,
    check_concrete,
    is_concrete,
    keep_plan,
    new_out,
    on_backend,
    run_block,
    scalar,
)
from numerix.ops._fast import Plan, method_op
from numerix.ops.creation import arange, full, tensor
from numerix.ops.elementwise import (
    add,
    astype,
    clip,
    equal,
    maximum,
    minimum,
    multiply,
    negative,
    where,
)
from numerix.ops.shape import (
    _int_seq,
    broadcast_to,
    concatenate,
    expand_dims,
    fit_to,
    reshape,
    stack,
    transpose,
)
from numerix.ops.sort import argsort
from numerix.primitives import indexing as indexing_primitives
from numerix.primitives import shape as shape_primitives
from numerix.primitives._registry import fallback_rule
from numerix.primitives.creation import iota

__all__ = [
    "getitem", "take", "take_along_axis", "dynamic_slice", "put_slice", "indexed_add",
    "indexed_put", "repeat", "setitem", "IndexUpdates",
]  # fmt: skip


_GAP = object()  # where an ellipsis stood for no axis


def _is_int(k: Any) -> bool:
    return isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_))


# basic keys (Python ints, and slices of Python ints or None, with a positive step or
# selecting nothing) skip the general machinery: their plan, the slice primitive's
# parameters and the output shape, is computed once per (shape, key) and kept here
_BASIC: dict[tuple[Any, ...], tuple[Any, ...] | None] = {}
_take_shape = indexing_primitives.take_shape_rule  # the take block's
_int = int
_new = Tensor.__new__
_SMALL_INDEX = 64  # index tensors up to this size are bounds-checked as a Python list


def _basic_key(key: Any) -> tuple[Any, ...] | None:
    """``key`` as a hashable tuple (an int per int, a 3-tuple per slice) when it is a
    basic key the fast path serves, else None."""
    items = key if type(key) is tuple else (key,)
    out = []
    for k in items:
        t = type(k)
        if t is _int:
            out.append(k)
        elif t is slice:
            a, b, c = k.start, k.stop, k.step
            if not (
                (a is None or type(a) is _int)
                and (b is None or type(b) is _int)
                and (c is None or type(c) is _int)
            ):
                return None
            out.append((a, b, c))
        else:
            return None
    return tuple(out)


def _slice_bounds(r: range) -> tuple[int, int, int, bool]:
    """The slice kernel's start, stop and (positive) stride for the indices ``r`` of one
    axis, and whether they are taken in reverse: (0, 0, 1) for none, step 1 for one (a
    step of 2**63 or more, which numpy clamps, selects one element as step 1 does)."""
    n = len(r)
    if n == 0:
        return 0, 0, 1, False
    if n == 1:
        return r.start, r.start + 1, 1, False
    if r.step > 0:
        return r.start, r[-1] + 1, r.step, False
    return r[-1], r.start + 1, -r.step, True


def _int_bounds(dim: int) -> tuple[int, int, int]:
    """The Python ints that index an axis of ``dim`` elements, ``lo <= k < hi``, and what a
    negative one is shifted by to count from the start."""
    return -dim, dim, dim


def _basic_plan(shape: tuple[int, ...], items: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """(the slice's start, stop and strides or None, the sliced shape, the output shape)
    of a basic key, or None when the general path must take it (its errors, negative
    steps)."""
    if len(items) > len(shape):
        return None
    starts, stops, strides, sliced, out_shape = [], [], [], [], []
    for ax, dim in enumerate(shape):
        k = items[ax] if ax < len(items) else (None, None, None)
        if type(k) is _int:
            lo, hi, shift = _int_bounds(dim)
            if not lo <= k < hi:
                return None
            i = k + shift if k < 0 else k
            starts.append(i)
            stops.append(i + 1)
            strides.append(1)
            sliced.append(1)
            continue
        if k[2] == 0:
            return None
        r = range(*slice(*k).indices(dim))
        lo, hi, st, back = _slice_bounds(r)
        if back:
            return None
        starts.append(lo)
        stops.append(hi)
        strides.append(st)
        sliced.append(len(r))
        out_shape.append(len(r))
    params = None
    if tuple(sliced) != shape or any(s != 1 for s in strides):
        params = (tuple(starts), tuple(stops), tuple(strides))
    return params, tuple(sliced), tuple(out_shape)


def _fast_plan(form: str, x: Tensor, key: Any) -> Plan | None:
    """The plan of ``x[key]`` for the compiled fast path (:mod:`numerix.ops._fast`), from
    :func:`getitem`'s own (kept in the same table): for a slice (``sl``), x itself, or the
    slice kernel's parameters and the slice it amounts to on axis 0 (its bounds and step
    as the plan clamped them), which a backend's shortcut takes; for an int (``ix``), one
    plan for every row of x's shape, whatever ``key`` is: the output's shape and
    ``(lo, hi, shift)``, the ints that index axis 0 and what a negative one is shifted by
    (the shortcut alone takes the row). None where the Python op takes the key."""
    if form == "ix":
        # row 0's plan is every row's but for the row itself; no row 0, no row at all
        plan = _cached_plan(x.shape, (0,))
        if plan is None:
            return None
        return plan[2], None, None, _int_bounds(x.shape[0])
    hkey = _basic_key(key)
    if hkey is None:
        return None
    plan = _cached_plan(x.shape, hkey)
    if plan is None:
        return None
    params, sliced, _ = plan
    if params is None:
        return None, None, None, None
    start, stop, strides = params
    return sliced, _SLICE_KW, params, slice(start[0], stop[0], strides[0])


def _cached_plan(shape: tuple[int, ...], hkey: tuple[Any, ...]) -> tuple[Any, ...] | None:
    ck = (shape, hkey)
    try:
        return _BASIC[ck]
    except KeyError:
        return keep_plan(_BASIC, ck, _basic_plan(shape, hkey))


_SLICE_KW = ("start", "stop", "strides")


def getitem(x: Tensor, key: Any, *, op: str = "getitem") -> Tensor:
    """``x[key]`` with numpy semantics; ``op`` names the operation in the errors of
    integer index tensors (``take`` indexes through here)."""
    # the fast paths call the kernels themselves, with the output their plan inferred
    tk = type(key)
    hkey = (key,) if tk is _int else None if tk is Tensor else _basic_key(key)
    if hkey is not None:
        ck = (x.shape, hkey)
        try:
            plan = _BASIC[ck]
        except KeyError:
            plan = keep_plan(_BASIC, ck, _basic_plan(x.shape, hkey))
        if plan is not None:
            params, sliced, out_shape = plan
            backend = x.backend
            dtype = x.dtype
            y = x
            if params is not None:
                out = _new(Tensor)
                out.shape, out.dtype, out.backend, out.data = sliced, dtype, backend, None
                y = backend.slice(out, x, start=params[0], stop=params[1], strides=params[2])
            if out_shape != sliced:
                out = _new(Tensor)
                out.shape, out.dtype, out.backend, out.data = out_shape, dtype, backend, None
                y = backend.reshape(out, y)
            return y
    elif (
        tk is Tensor
        and key.dtype.kind in "iu"
        and key.backend is x.backend
        and x.shape
        and x.backend is not DEALLOCATED
        and not x.backend.is_tracing
    ):
        # one integer tensor indexing axis 0 (x[idx]): the index checked as the general
        # path checks it, then the take block, its output by the block's shape rule
        backend = x.backend
        dim = x.shape[0]
        ki = key
        host = backend.to_numpy(key)
        n = host.size
        if n:
            if n <= _SMALL_INDEX and host.ndim == 1:  # _extremes, without its call
                values = host.tolist()
                lo, hi = min(values), max(values)
            else:
                lo, hi = _extremes(host)
            if lo < 0 or hi >= dim:  # refused, or negative entries wrapped
                ki = _checked_index(key, dim, 0, x, x, op)
        if ki.dtype is not dtypes.int64:
            ki = cast(ki, dtypes.int64)
        out = new_out(_take_shape(x.shape, ki.shape), x.dtype, backend)
        impl = getattr(type(backend), "block_take", None)
        if impl is None:
            return take_fallback(x, ki)
        return impl(backend, out, x, ki)
    elif tk is Tensor and key.dtype.kind in "iu" and x.shape:
        # x[idx] inside a trace, or with the index on another backend: the general path's
        # meeting and index check (a traced index is wrapped and clamped), then the block
        return _take_rows(x, key, op)
    if not isinstance(key, tuple):
        key = (key,)
    items: list[Any] = []
    for k in key:
        if isinstance(k, (list, np.ndarray)):
            from_list = isinstance(k, list)
            k = as_tensor(k, "getitem", x.backend)
            if from_list and k.size == 0:  # numpy reads [] as an (empty) integer index
                k = cast(k, dtypes.int64)
        if type(k) is Tensor and k.dtype is dtypes.bool_:
            items.append(k)  # a mask; it becomes integer indices once its axes are known
            continue
        if type(k) is Tensor and k.dtype.kind not in "iu":
            raise IndexingError(
                f"getitem: index tensors must be integer or bool, got {k.describe()}; cast with "
                f"astype(numerix.int64)"
            )
        if isinstance(k, (bool, np.bool_)):
            raise IndexingError("getitem: a Python bool is not a valid index; use a bool tensor")
        if not (
            k is None or k is Ellipsis or isinstance(k, slice) or _is_int(k) or type(k) is Tensor
        ):
            raise IndexingError(
                f"getitem: invalid index {k!r} of type {type(k).__name__}; use ints, slices, None, "
                f"..., or integer/bool tensors"
            )
        items.append(k)
    n_ell = sum(1 for k in items if k is Ellipsis)
    if n_ell > 1:
        raise IndexingError("getitem: an index can only have a single ellipsis ('...')")
    consumed = sum(_mask_ndim(k) for k in items if k is not None and k is not Ellipsis)
    if consumed > x.ndim:
        raise IndexingError(
            f"getitem: too many indices for {x.describe()}: {x.ndim} dimension(s), {consumed} "
            f"indexed"
        )
    if n_ell:
        i = next(j for j, k in enumerate(items) if k is Ellipsis)  # `in` would compare tensors
        # an ellipsis standing for no axis still separates advanced indices, as in numpy
        fill: list[Any] = [slice(None)] * (x.ndim - consumed)
        items[i : i + 1] = fill or [_GAP]
    else:
        items.extend([slice(None)] * (x.ndim - consumed))
    if any(type(k) is Tensor and k.dtype is dtypes.bool_ and k.ndim == 0 for k in items):
        x, items = _scalar_masks(x, items)
    if any(type(k) is Tensor and k.dtype is dtypes.bool_ for k in items):
        expanded: list[Any] = []
        ax = 0
        for k in items:
            if type(k) is Tensor and k.dtype is dtypes.bool_:
                expanded.extend(_mask_to_indices(x, k, ax))
            else:
                expanded.append(k)
            ax += 0 if k is None or k is _GAP else _mask_ndim(k)
        items = expanded
    advanced = any(type(k) is Tensor for k in items)

    # one entry per item: ("slice", axis) | ("int", axis) | ("adv", axis, tensor) | ("new",)
    # | ("gap",) for an ellipsis that stood for no axis
    starts, stops, strides, rev = [], [], [], []
    entries: list[tuple[Any, ...]] = []
    ax = 0
    for k in items:
        if k is None:
            entries.append(("new",))
            continue
        if k is _GAP:
            entries.append(("gap",))
            continue
        dim = x.shape[ax]
        if isinstance(k, slice):
            for part in (k.start, k.stop, k.step):
                if (
                    part is not None
                    and not _is_int(part)
                    and not (type(part) is Tensor and part.ndim == 0)
                ):
                    raise IndexingError(f"getitem: slice bounds must be ints, got {k!r}")
            if k.step is not None and int(k.step) == 0:
                raise IndexingError("getitem: slice step cannot be zero")
            r = range(*slice(
                None if k.start is None else int(k.start), None if k.stop is None else int(k.stop),
                None if k.step is None else int(k.step)).indices(dim))  # fmt: skip
            lo, hi, st, back = _slice_bounds(r)
            starts.append(lo)
            stops.append(hi)
            strides.append(st)
            if back:
                rev.append(ax)
            entries.append(("slice", ax))
        elif _is_int(k):
            i = int(k)
            if not -dim <= i < dim:
                raise IndexingError(
                    f"getitem: index {i} is out of bounds for axis {ax} with size {dim} "
                    f"({x.describe()})"
                )
            i += dim if i < 0 else 0
            if advanced:
                starts.append(0)
                stops.append(dim)
                strides.append(1)
                entries.append(("adv", ax, i))
            else:
                starts.append(i)
                stops.append(i + 1)
                strides.append(1)
                entries.append(("int", ax))
        else:
            starts.append(0)
            stops.append(dim)
            strides.append(1)
            entries.append(("adv", ax, k))
        ax += 1

    y = x
    if tuple(starts) != (0,) * x.ndim or tuple(stops) != x.shape or any(s != 1 for s in strides):
        shape = tuple(len(range(a, b, s)) for a, b, s in zip(starts, stops, strides))
        y = bind(shape_primitives.slice, new_out(shape, x.dtype, x.backend), x,
                 start=tuple(starts), stop=tuple(stops), strides=tuple(strides))  # fmt: skip
    if rev:
        y = bind(shape_primitives.reverse, new_out(y.shape, y.dtype, y.backend), y, axes=tuple(rev))

    if not advanced:
        out_shape = []
        for e in entries:
            if e[0] == "new":
                out_shape.append(1)
            elif e[0] == "slice":
                out_shape.append(y.shape[e[1]])
        return reshape(y, tuple(out_shape))
    return _advanced(y, entries, reshape, transpose, x, op)


def _advanced(
    y: Tensor, entries: list[tuple[Any, ...]], reshape: Any, transpose: Any, x: Tensor, op: str
) -> Tensor:
    adv = [e for e in entries if e[0] == "adv"]
    # a traced index into a concrete tensor (jit over the index of a captured tensor):
    # the tensor joins the index's trace, by the one meeting rule
    index_tensors = [e[2] for e in adv if type(e[2]) is Tensor]
    meet = meeting_backend(op, [y, *index_tensors])
    if meet is not None and meet is not y.backend and meet.is_tracing:
        y = on_backend(y, meet)
    idx: list[Tensor] = []
    for e in adv:
        k = e[2]
        dim = y.shape[e[1]]
        if isinstance(k, int):
            t = as_tensor(k, "getitem", y.backend)
        else:
            t = _checked_index(k, dim, e[1], y, x, op)
        idx.append(cast(t, dtypes.int64))
    try:
        bshape = broadcast_shapes("getitem", *(t.shape for t in idx))
    except ShapeError:  # numpy raises IndexError here: so does numerix
        raise IndexingError(
            "getitem: the index arrays' shapes "
            + " and ".join(str(t.shape) for t in idx)
            + " cannot be broadcast together (a bool mask counts as one index per dimension, "
            "of its number of true elements)"
        ) from None

    idx = [broadcast_to(t, bshape) for t in idx]
    indices = stack(idx, axis=-1)
    adv_axes = [e[1] for e in adv]
    rest = [a for a in range(y.ndim) if a not in adv_axes]
    yt = transpose(y, adv_axes + rest)
    gshape = bshape + tuple(yt.shape[len(adv_axes) :])
    r = bind(indexing_primitives.gather, new_out(gshape, y.dtype, y.backend), yt, indices,
             axes=tuple(range(len(adv_axes))))  # fmt: skip
    # label result dims, then place them as numpy does
    nb = len(bshape)
    positions = [i for i, e in enumerate(entries) if e[0] == "adv"]
    adjacent = positions == list(range(positions[0], positions[-1] + 1))
    n_new = sum(1 for e in entries if e[0] == "new")
    r = reshape(r, r.shape + (1,) * n_new)
    order: list[int] = []
    slice_i, new_i = nb, nb + len(rest)
    if not adjacent:
        order.extend(range(nb))
    for i, e in enumerate(entries):
        if e[0] == "slice":
            order.append(slice_i)
            slice_i += 1
        elif e[0] == "new":
            order.append(new_i)
            new_i += 1
        elif adjacent and i == positions[0]:
            order.extend(range(nb))
    return transpose(r, order)


def _take_rows(x: Tensor, key: Tensor, op: str) -> Tensor:
    """``x[key]`` for one integer tensor ``key`` along axis 0, by the take block: the two
    meet as the general path's operands do (a traced one joins the trace), the index is
    checked (a traced one wrapped and clamped), then cast to int64."""
    y = x
    meet = meeting_backend(op, [x, key])
    if meet is not None and meet is not x.backend and meet.is_tracing:
        y = on_backend(x, meet)
    k = cast(_checked_index(key, y.shape[0], 0, y, x, op), dtypes.int64)
    out = new_out(_take_shape(y.shape, k.shape), y.dtype, y.backend)
    return run_block(indexing_primitives.take_block, out, take_fallback, y, k)


@fallback_rule("take")
def take_fallback(x: Tensor, indices: Tensor) -> Tensor:
    """The take block's core version: the index as gather's indices (a last axis of 1),
    then one gather along axis 0."""
    rows = reshape(indices, indices.shape + (1,))
    return indexing_primitives.gather.bind(x, rows, axes=(0,))


def _extremes(host: np.ndarray) -> tuple[int, int]:
    """The least and the greatest entry of a non-empty integer array."""
    if host.size <= _SMALL_INDEX:  # two numpy reductions cost more than the list
        values = (host if host.ndim == 1 else host.ravel()).tolist()
        return min(values), max(values)
    return int(host.min()), int(host.max())


def _checked_index(k: Tensor, dim: int, axis: int, y: Tensor, x: Tensor, op: str) -> Tensor:
    # k indexes axis `axis` of y, the basic-sliced x; errors name x, the tensor indexed.
    # A concrete index is bounds-checked here; a traced one (inside jit) cannot be read,
    # so its negative entries are wrapped and the rest clamped into range (XLA's gather
    # rule), the same on every backend.

    concrete = is_concrete(k)
    if not concrete and dim == 0 and k.size:
        raise IndexingError(f"{op}: axis {axis} of {x.describe()} is empty: no index is in range")
    if concrete:
        host = k.backend.to_numpy(k)
        if host.size:
            lo, hi = _extremes(host)
            if lo < -dim or hi >= dim:
                bad = lo if lo < -dim else hi
                raise IndexingError(
                    f"{op}: index {bad} is out of bounds for axis {axis} with size {dim} "
                    f"({x.describe()})"
                )
            if lo >= 0:
                return k if k.backend is y.backend else on_backend(k, y.backend)
    if k.backend is not y.backend:
        k = on_backend(k, y.backend)
    k = cast(k, dtypes.int64)
    k = where(k < 0, add(k, dim), k)
    return k if concrete else clip(k, 0, dim - 1)


def _mask_ndim(k: Any) -> int:
    """The number of axes index ``k`` consumes: a bool mask one per dimension, others 1."""
    return k.ndim if type(k) is Tensor and k.dtype is dtypes.bool_ else 1


def _scalar_masks(x: Tensor, items: list[Any]) -> tuple[Tensor, list[Any]]:
    """``x`` and ``items`` with each 0-d bool index made a new axis of ``x`` of size 1,
    indexed by ``[0]`` when the bool is true and by ``[]`` when false (numpy's reading:
    ``x[True]`` has shape ``(1, *x.shape)``, ``x[False]`` ``(0, *x.shape)``)."""
    shape = list(x.shape)
    out: list[Any] = []
    ax = 0  # the axis of the new x the next item indexes
    for k in items:
        if type(k) is Tensor and k.dtype is dtypes.bool_ and k.ndim == 0:
            check_concrete(k, "getitem with a 0-d bool index (data-dependent shape)")
            shape.insert(ax, 1)
            n = 1 if bool(k.backend.to_numpy(k)) else 0
            out.append(as_tensor(np.zeros(n, dtype=np.int64), "getitem", x.backend))
            ax += 1
        else:
            out.append(k)
            ax += 0 if k is None or k is _GAP else _mask_ndim(k)
    return reshape(x, tuple(shape)), out


def _mask_to_indices(x: Tensor, mask: Tensor, at: int) -> list[Tensor]:
    check_concrete(mask, "getitem with a bool mask (data-dependent shape)")
    m = mask.backend.to_numpy(mask)
    if m.ndim == 0:
        raise IndexingError("getitem: a 0-d bool index is not supported; use numerix.where")
    want = x.shape[at : at + m.ndim]
    if tuple(m.shape) != tuple(want):
        raise IndexingError(
            f"getitem: bool index of shape {m.shape} does not match the indexed dimensions "
            f"{tuple(want)} of {x.describe()}"
        )
    return [as_tensor(np.ascontiguousarray(i, dtype=np.int64), "getitem", x.backend)
            for i in np.nonzero(m)]  # fmt: skip


def take(x: Any, indices: Any, /, *, axis: int | None = None) -> Tensor:
    """Elements of ``x`` at ``indices`` along ``axis`` (array API ``take``); ``axis=None``
    indexes the flattened tensor."""

    t = as_tensor(x, "take")
    if axis is None:
        t = reshape(t, (-1,))
        axis = 0
    ax = normalize_axis("take", axis, t.ndim, t.shape)
    i = as_tensor(indices, "take", t.backend)
    if i.dtype.kind not in "iu":
        raise IndexingError(f"take: indices must be integers, got {i.describe()}")
    if ax == 0:  # the take block, by x[idx]'s path
        return getitem(t, i, op="take")
    key = (slice(None),) * ax + (i,)
    return getitem(t, key, op="take")


def _in_range(op: str, k: Tensor, axes: Sequence[int], what: Tensor) -> Tensor:
    """Integer indices ``k`` into ``axes`` of ``what``, as int64 in ``[0, dim)``: the last
    axis of ``k`` runs over ``axes`` (with one axis, every element indexes it). Negative
    indices count from the end, as in numpy. Out-of-range indices raise IndexingError
    when ``k`` has values (eagerly); traced indices cannot be read: after wrapping the
    negative ones, they are clamped into range (XLA's rule), the same on every backend."""

    if k.dtype.kind not in "iu":
        raise IndexingError(
            f"{op}: indices must be integers, got {k.describe()}; cast with astype(numerix.int64)"
        )
    k = cast(k, dtypes.int64) if k.dtype is not dtypes.uint64 else k
    dims = [what.shape[a] for a in axes]
    bound = np.asarray(dims, dtype=np.int64)
    if is_concrete(k):
        host = k.backend.to_numpy(k)
        if host.size:
            h = host.reshape(-1, len(dims)) if len(dims) > 1 else host.reshape(-1, 1)
            bad = (h < -bound) | (h >= bound)
            if bad.any():
                row, col = np.argwhere(bad)[0]
                raise IndexingError(
                    f"{op}: index {int(h[row, col])} is out of bounds for axis {axes[col]} "
                    f"with size {dims[col]} ({what.describe()})"
                )
            if k.dtype is dtypes.uint64:
                k = cast(k, dtypes.int64)
            if not (h < 0).any():
                return k
    if 0 in dims and k.size and not is_concrete(k):
        raise IndexingError(
            f"{op}: {what.describe()} is empty along axis {axes[dims.index(0)]}: no index is "
            f"in range"
        )
    if k.dtype is dtypes.uint64:  # traced: values beyond int64 are out of range anyway
        k = cast(k, dtypes.int64)
    b = as_tensor(bound if len(dims) > 1 else bound[0], op, k.backend)
    k = where(k < 0, add(k, b), k)
    if not is_concrete(k):
        k = clip(k, 0, as_tensor(bound - 1 if len(dims) > 1 else bound[0] - 1, op, k.backend))
    return k


def take_along_axis(x: Any, indices: Any, /, *, axis: int = -1) -> Tensor:
    """Pick values along ``axis`` at per-position ``indices`` (array API ``take_along_axis``).

    Follows numpy and the array API: ``indices`` has ``x``'s number of dimensions;
    along ``axis`` it may have any length, the other dimensions broadcast with ``x``'s.
    Negative indices count from the end; out-of-range ones raise IndexingError.

    >>> import numerix as nx
    >>> x = nx.tensor([[10, 30, 20], [60, 40, 50]])
    >>> nx.take_along_axis(x, nx.tensor([[0], [1]]), axis=1).tolist()
    [[10], [40]]

    An index past the end raises::

        nx.take_along_axis(x, nx.tensor([[3], [0]]), axis=1)  # IndexingError: ... index 3 ...
    """

    t = as_tensor(x, "take_along_axis")
    i = as_tensor(indices, "take_along_axis", t.backend)
    if t.ndim == 0:
        raise ShapeError(f"take_along_axis: needs at least 1 dimension, got {t.describe()}")
    if i.ndim != t.ndim:
        raise ShapeError(
            f"take_along_axis: indices {i.describe()} must have as many dimensions as "
            f"x {t.describe()}"
        )
    ax = normalize_axis("take_along_axis", axis, t.ndim, t.shape)
    xs = t.shape[:ax] + (1,) + t.shape[ax + 1 :]
    js = i.shape[:ax] + (1,) + i.shape[ax + 1 :]
    try:
        b = broadcast_shapes("take_along_axis", xs, js)
    except ShapeError:
        raise ShapeError(
            f"take_along_axis: indices {i.describe()} and x {t.describe()} must broadcast in "
            f"every dimension but axis {ax}"
        ) from None
    out_shape = b[:ax] + (i.shape[ax],) + b[ax + 1 :]
    i = _in_range("take_along_axis", i, (ax,), t)
    if i.backend is not t.backend:
        i = on_backend(i, t.backend)

    t = broadcast_to(t, b[:ax] + (t.shape[ax],) + b[ax + 1 :])
    cols = [
        broadcast_to(i, out_shape)
        if a == ax
        else bind(iota, new_out(out_shape, dtypes.int64, t.backend), axis=a)
        for a in range(t.ndim)
    ]
    full = stack(cols, axis=-1)
    return bind(indexing_primitives.gather, new_out(out_shape, t.dtype, t.backend), t, full,
                axes=tuple(range(t.ndim)))  # fmt: skip


# ---------------------------------------------------------------- dynamic slices


def _starts(op: str, t: Tensor, start_indices: Any, sizes: tuple[int, ...]) -> list[Any]:
    """One start per axis: Python ints clamped here, 0-d tensors as int64 (the backend
    clamps those)."""

    starts = start_indices
    if type(starts) is Tensor or isinstance(starts, np.ndarray):
        arr = as_tensor(starts, op, t.backend)
        if arr.ndim != 1:
            raise IndexingError(
                f"{op}: start_indices must be a sequence or a 1-d tensor, got {arr.describe()}"
            )
        starts = [arr[j] for j in range(arr.shape[0])]
    if not isinstance(starts, (tuple, list)):
        raise IndexingError(
            f"{op}: start_indices must be a sequence of ints or 0-d integer tensors, one per "
            f"axis, got {start_indices!r}"
        )
    if len(starts) != t.ndim:
        raise IndexingError(
            f"{op}: {len(starts)} start indices for {t.describe()}; give one per axis"
        )
    out: list[Any] = []
    for a, (s, n) in enumerate(zip(starts, sizes)):
        hi = t.shape[a] - n
        if _is_int(s):
            out.append(min(max(int(s), 0), hi))
            continue
        if isinstance(s, np.ndarray):
            s = as_tensor(s, op, t.backend)
        if type(s) is not Tensor or s.ndim or s.dtype.kind not in "iu":
            shown = s.describe() if type(s) is Tensor else repr(s)
            raise IndexingError(
                f"{op}: start index {a} must be an int or a 0-d integer tensor, got {shown}"
            )
        if s.backend is not t.backend:
            s = on_backend(s, t.backend)
        if s.dtype is dtypes.uint64:  # values past int64 would wrap negative: clamp them first
            s = minimum(s, hi)
        out.append(cast(s, dtypes.int64))
    return out


def _as_start_tensors(starts: list[Any], t: Tensor) -> list[Tensor]:

    return [s if type(s) is Tensor else scalar(s, dtypes.int64, t.backend) for s in starts]


def dynamic_slice(x: Any, /, start_indices: Any, sizes: Sequence[int]) -> Tensor:
    """The block of shape ``sizes`` starting at ``start_indices``, starts clamped in bounds.

    Follows ``Nx.slice`` with tensor starts and XLA's DynamicSlice (``lax.dynamic_slice``):
    ``start_indices`` holds one int or 0-d integer tensor per axis (or is a 1-d integer
    tensor); each start is clamped to ``[0, dim - size]`` so the block always lies in
    ``x``: a start past the end reads the last ``size`` elements. Note: negative starts
    clamp to 0; they do not count from the end.

    >>> import numerix as nx
    >>> x = nx.arange(6)
    >>> nx.dynamic_slice(x, [nx.tensor(1)], [3]).tolist()
    [1, 2, 3]
    >>> nx.dynamic_slice(x, [5], [3]).tolist()
    [3, 4, 5]

    A size larger than the axis raises::

        nx.dynamic_slice(x, [0], [7])  # ShapeError: dynamic_slice: size 7 ...
    """

    t = as_tensor(x, "dynamic_slice")
    sz = check_shape("dynamic_slice", sizes)
    if len(sz) != t.ndim:
        raise ShapeError(f"dynamic_slice: {len(sz)} sizes for {t.describe()}; give one per axis")
    for a, (n, d) in enumerate(zip(sz, t.shape)):
        if n > d:
            raise ShapeError(f"dynamic_slice: size {n} is larger than axis {a} of {t.describe()}")
    starts = _starts("dynamic_slice", t, start_indices, sz)
    if all(type(s) is int for s in starts):
        if sz == t.shape:
            return t
        return bind(shape_primitives.slice, new_out(sz, t.dtype, t.backend), t, start=tuple(starts),
                    stop=tuple(s + n for s, n in zip(starts, sz)), strides=(1,) * t.ndim)  # fmt: skip
    return bind(shape_primitives.dynamic_slice, new_out(sz, t.dtype, t.backend), t,
                *_as_start_tensors(starts, t), sizes=sz)  # fmt: skip


def put_slice(x: Any, /, start_indices: Any, update: Any) -> Tensor:
    """A copy of ``x`` with ``update`` written at ``start_indices``, starts clamped in bounds.

    Follows ``Nx.put_slice`` and XLA's DynamicUpdateSlice (``lax.dynamic_update_slice``):
    ``update`` has ``x``'s number of dimensions, each no larger than ``x``'s; each start
    (an int or 0-d integer tensor) is clamped to ``[0, dim - update dim]``, so the whole
    update is always written. The result keeps ``x``'s dtype: ``update`` must cast to
    it without loss (Python values must be exact in it).

    >>> import numerix as nx
    >>> nx.put_slice(nx.zeros(5, dtype=nx.int32), [4], [7, 8]).tolist()
    [0, 0, 0, 7, 8]

    An update that would lose values raises::

        nx.put_slice(nx.zeros(3, dtype=nx.int32), [0], nx.tensor([0.5]))  # DTypeError
    """

    t = as_tensor(x, "put_slice")
    u = fit_to("put_slice", "update", update, t)
    if u.ndim != t.ndim or any(a > b for a, b in zip(u.shape, t.shape)):
        raise ShapeError(
            f"put_slice: update {u.describe()} must have the dimensions of {t.describe()}, "
            f"each no larger"
        )
    starts = _starts("put_slice", t, start_indices, u.shape)
    return bind(shape_primitives.put_slice, new_out(t.shape, t.dtype, t.backend), t, u,
                *_as_start_tensors(starts, t))  # fmt: skip


# ---------------------------------------------------------------- scatter


def _scatter(op: str, prim: Any, x: Any, indices: Any, updates: Any, axes: Any) -> Tensor:

    t = as_tensor(x, op)
    if prim is indexing_primitives.indexed_add and t.dtype is dtypes.bool_:
        raise DTypeError(
            f"{op}: cannot add to {t.describe()}; bool has no addition (use indexed_put, or "
            f"cast with astype)"
        )
    i = as_tensor(indices, op, t.backend)
    if i.backend is not t.backend:
        i = on_backend(i, t.backend)
    if i.ndim != 2 or i.shape[1] == 0:
        raise ShapeError(
            f"{op}: indices must be 2-d, (n, number of indexed axes), got {i.describe()}"
        )
    k = i.shape[1]
    if axes is None:
        if k > t.ndim:
            raise ShapeError(
                f"{op}: indices {i.describe()} index {k} axes but {t.describe()} has {t.ndim}"
            )
        ax = tuple(range(k))
    else:
        if not isinstance(axes, (tuple, list)):
            raise ShapeError(f"{op}: axes must be a sequence of ints, got {axes!r}")
        ax = tuple(normalize_axis(op, a, t.ndim, t.shape) for a in axes)
        if len(set(ax)) != len(ax):
            raise ShapeError(f"{op}: repeated axis in {tuple(axes)}")
        if len(ax) != k:
            raise ShapeError(
                f"{op}: indices {i.describe()} have {k} columns but axes {tuple(axes)} name "
                f"{len(ax)} axes; give one column per axis"
            )
    i = _in_range(op, i, ax, t)
    want = (i.shape[0],) + tuple(d for a, d in enumerate(t.shape) if a not in ax)
    u = fit_to(op, "updates", updates, t)
    if u.shape != want:
        try:
            ok = broadcast_shapes(op, u.shape, want) == want
        except ShapeError:
            ok = False
        if not ok:
            raise ShapeError(
                f"{op}: updates {u.describe()} must have shape {want} (one row per index, then "
                f"the dimensions of {t.describe()} not in axes {ax}) or broadcast to it"
            )
        u = broadcast_to(u, want)
    return bind(prim, new_out(t.shape, t.dtype, t.backend), t, i, u, axes=ax)


def indexed_add(
    x: Any, /, indices: Any, updates: Any, *, axes: Sequence[int] | None = None
) -> Tensor:
    """A copy of ``x`` with ``updates`` added at ``indices``; duplicate indices add up.

    Follows ``Nx.indexed_add`` (XLA's scatter-add; numpy's ``np.add.at``): ``indices``
    has shape ``(n, k)``, row ``i`` indexing the ``k`` axes ``axes`` (default: the first
    ``k``); ``updates`` has shape ``(n,)`` + the dimensions of ``x`` not in ``axes``
    (or broadcasts to it). Negative indices count from the end; out-of-range ones
    raise IndexingError. The result keeps ``x``'s dtype; ``updates`` must cast to it
    without loss. Integers wrap on overflow; float16 and bfloat16 sum in float32.

    >>> import numerix as nx
    >>> nx.indexed_add(nx.zeros(3, dtype=nx.int32), nx.tensor([[0], [2], [0]]), [1, 2, 3]).tolist()
    [4, 0, 2]

    An index past the end raises::

        nx.indexed_add(nx.zeros(3), nx.tensor([[3]]), [1.0])  # IndexingError: ... index 3 ...
    """
    return _scatter("indexed_add", indexing_primitives.indexed_add, x, indices, updates, axes)


def indexed_put(
    x: Any, /, indices: Any, updates: Any, *, axes: Sequence[int] | None = None
) -> Tensor:
    """A copy of ``x`` with ``updates`` written at ``indices``; of duplicates the last wins.

    Follows ``Nx.indexed_put`` (XLA's scatter), with :func:`indexed_add`'s arguments.
    Note: where an index repeats, the update of the last row holding it is the one
    written, on every backend (XLA leaves the choice unspecified; numerix fixes it).

    >>> import numerix as nx
    >>> nx.indexed_put(nx.zeros(3, dtype=nx.int32), nx.tensor([[0], [2], [0]]), [1, 2, 3]).tolist()
    [3, 0, 2]

    Updates of the wrong shape raise::

        nx.indexed_put(nx.zeros((2, 2)), nx.tensor([[0]]), [1.0])  # ShapeError: ... (1, 2)
    """
    return _scatter("indexed_put", indexing_primitives.indexed_put, x, indices, updates, axes)


# ---------------------------------------------------------------- setitem (x[key] = value)


def setitem(x: Any, key: Any, value: Any, /) -> Tensor:
    """A copy of ``x`` with ``x[key]`` replaced by ``value``: what ``x[key] = value`` makes
    ``x`` hold (JAX's ``x.at[key].set(value)``).

    ``key`` is any index :func:`getitem` takes (ints, slices, ``None``, ellipsis, integer
    and bool arrays); ``value`` broadcasts to the shape of ``x[key]`` and is cast to
    ``x``'s dtype, as numpy's assignment casts. Where an advanced index repeats a
    position, the last value written wins. One scatter (``indexed_put``) of the flat
    positions ``x[key]`` selects.

    >>> import numerix as nx
    >>> nx.setitem(nx.zeros((2, 3), dtype=nx.int32), (slice(None), 1), 7).tolist()
    [[0, 7, 0], [0, 7, 0]]
    """
    t, flat, rows, v = _positions("setitem", x, key, value)
    return reshape(indexed_put(flat, rows, v), t.shape)


def _positions(op: str, x: Any, key: Any, value: Any) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """``x`` as a tensor, flattened, the flat positions ``x[key]`` selects as scatter rows
    ``(m, 1)``, and ``value`` cast to ``x``'s dtype (as numpy's assignment casts) and
    broadcast to ``x[key]``, flattened to ``(m,)``."""
    t = as_tensor(x, op)
    index = dtypes.int64 if t.size >= 2**31 else dtypes.int32
    positions = getitem(
        reshape(arange(t.size, dtype=index, backend=t.backend), t.shape), key, op=op
    )
    if not isinstance(value, Tensor):  # host values: numpy's cast to x's dtype
        with np.errstate(all="ignore"):
            host = np.asarray(value).astype(t.dtype.numpy_dtype)
        value = tensor(host, backend=t.backend)
    v = value
    if v.backend is not t.backend:
        v = on_backend(v, t.backend)
    if v.dtype is not t.dtype:
        v = astype(v, t.dtype)
    try:
        v = broadcast_to(v, positions.shape)
    except ShapeError:
        raise ShapeError(
            f"{op}: value {v.describe()} cannot be broadcast to the shape {positions.shape} of "
            f"{t.describe()}[{key!r}]"
        ) from None
    m = positions.size
    return t, reshape(t, (t.size,)), reshape(positions, (m, 1)), reshape(v, (m,))


def _combine_at(op: str, x: Any, key: Any, value: Any, combine: Any, pre: Any = None) -> Tensor:
    """``x`` with each position ``x[key]`` selects combined with its values, every value
    of a repeated position included (in order): the positions sorted, a segmented
    inclusive scan (log2(m) steps of ``combine``) leaves each position's total on its
    last entry, which one last-wins scatter writes."""
    t, flat, rows, v = _positions(op, x, key, value)
    if pre is not None:
        v = pre(v)
    m = v.shape[0]
    p = reshape(rows, (m,))
    order = argsort(p)  # stable: the values of one position keep their order
    ps, vs = take(p, order), take(v, order)
    k = 1
    while k < m:
        same = concatenate([full((k,), False, backend=t.backend), equal(ps[k:], ps[:-k])])
        earlier = concatenate([vs[:k], vs[:-k]])
        vs = where(same, combine(earlier, vs), vs)
        k *= 2
    new = combine(take(flat, ps), vs)
    return reshape(indexed_put(flat, reshape(ps, (m, 1)), new), t.shape)


class IndexUpdates:
    """``x.at``: JAX's functional updates, ``x.at[key].set(v)`` and friends. Each returns a
    new tensor; ``x`` keeps its values."""

    __slots__ = ("x",)

    def __init__(self, x: Tensor) -> None:
        self.x = x

    def __getitem__(self, key: Any) -> IndexUpdate:
        return IndexUpdate(self.x, key)

    def __repr__(self) -> str:
        return f"<{self.x.describe()}.at>"


class IndexUpdate:
    """``x.at[key]``: the positions ``x[key]`` selects (any key :func:`getitem` takes), and
    what to do there. ``value`` broadcasts to ``x[key]`` and is cast to ``x``'s dtype; a
    position an advanced index repeats receives every value of its own (``add`` sums
    them, ``multiply`` multiplies, ``min``/``max`` reduce; ``set`` keeps the last)."""

    __slots__ = ("key", "x")

    def __init__(self, x: Tensor, key: Any) -> None:
        self.x = x
        self.key = key

    def get(self) -> Tensor:
        """``x[key]``."""
        return getitem(self.x, self.key)

    def set(self, value: Any) -> Tensor:
        """``x`` with ``x[key]`` replaced by ``value`` (:func:`setitem`).

        >>> import numerix as nx
        >>> nx.zeros(4).at[1:3].set(5.0).tolist()
        [0.0, 5.0, 5.0, 0.0]
        """
        return setitem(self.x, self.key, value)

    def add(self, value: Any) -> Tensor:
        """``x`` with ``value`` added at ``x[key]``; repeated positions add every value (a
        scatter-add, ``indexed_add``).

        >>> import numerix as nx
        >>> nx.zeros(3).at[nx.tensor([0, 0, 2])].add(1.0).tolist()
        [2.0, 0.0, 1.0]
        """
        t, flat, rows, v = _positions("at[].add", self.x, self.key, value)
        return reshape(indexed_add(flat, rows, v), t.shape)

    def subtract(self, value: Any) -> Tensor:
        """``x`` with ``value`` subtracted at ``x[key]``; repeated positions subtract each."""
        t, flat, rows, v = _positions("at[].subtract", self.x, self.key, value)
        return reshape(indexed_add(flat, rows, negative(v)), t.shape)

    def multiply(self, value: Any) -> Tensor:
        """``x`` with ``x[key]`` multiplied by ``value``; repeated positions multiply by
        each value.

        >>> import numerix as nx
        >>> nx.ones(3).at[nx.tensor([1, 1])].multiply(3.0).tolist()
        [1.0, 9.0, 1.0]
        """
        return _combine_at("at[].multiply", self.x, self.key, value, multiply)

    mul = multiply

    def divide(self, value: Any) -> Tensor:
        """``x`` with ``x[key]`` divided by ``value`` (JAX's: a multiply by its reciprocal,
        so repeated positions divide by each value)."""
        t = as_tensor(self.x, "at[].divide")
        if t.dtype.kind not in "fc":
            raise DTypeError(
                f"at[].divide: {t.describe()} is not floating; divide a float tensor "
                f"(x.astype(numerix.float32)) or use floor_divide outside .at"
            )
        return _combine_at("at[].divide", t, self.key, value, multiply, lambda v: 1 / v)

    def min(self, value: Any) -> Tensor:
        """``x`` with ``x[key]`` replaced by its minimum with ``value`` (every value of a
        repeated position; NaN propagates, as :func:`numerix.minimum`)."""
        return _combine_at("at[].min", self.x, self.key, value, minimum)

    def max(self, value: Any) -> Tensor:
        """``x`` with ``x[key]`` replaced by its maximum with ``value`` (every value of a
        repeated position; NaN propagates, as :func:`numerix.maximum`).

        >>> import numerix as nx
        >>> nx.zeros(3).at[nx.tensor([0, 0])].max(nx.tensor([2.0, 5.0])).tolist()
        [5.0, 0.0, 0.0]
        """
        return _combine_at("at[].max", self.x, self.key, value, maximum)

    def __repr__(self) -> str:
        return f"<{self.x.describe()}.at[{self.key!r}]>"


# ---------------------------------------------------------------- repeat (a take along an axis)


def repeat(x: Any, repeats: Any, /, *, axis: int | None = None) -> Tensor:
    """Repeat each element ``repeats`` times along ``axis`` (flattened when None).

    Follows the array API ``repeat``: ``repeats`` is an int or one int per element
    along ``axis``, as Python ints or an integer tensor; a tensor's values decide the
    output shape, so it is read eagerly (inside a trace it is an error).

    >>> import numerix as nx
    >>> nx.repeat(nx.tensor([1, 2]), [1, 3]).tolist()
    [1, 2, 2, 2]

    Counts that don't match the axis raise::

        nx.repeat(nx.tensor([1, 2]), [1, 2, 3])  # ShapeError: repeat: repeats has 3 ...
    """
    t = as_tensor(x, "repeat")
    if type(repeats) is Tensor or isinstance(repeats, np.ndarray):
        rt = as_tensor(repeats, "repeat", t.backend)
        if rt.dtype.kind not in "iu" or rt.ndim > 1:
            raise ShapeError(
                f"repeat: repeats must be an integer tensor of 0 or 1 dimension, got "
                f"{rt.describe()}"
            )
        # its values decide the output shape: read them, eagerly only
        check_concrete(rt, "repeat with tensor repeats (data-dependent shape)")
        repeats = rt.tolist()
    r = _int_seq(repeats)
    if r is None:
        raise ShapeError(f"repeat: repeats must be an int or a sequence of ints, got {repeats!r}")
    if any(i < 0 for i in r):
        raise ShapeError(f"repeat: repeats must be >= 0, got {repeats!r}")
    if axis is None:
        t = reshape(t, (-1,))
        axis = 0
    ax = normalize_axis("repeat", axis, t.ndim, t.shape)
    d = t.shape[ax]
    if isinstance(repeats, (int, np.integer)) or len(r) == 1:
        n = r[0]
        y = broadcast_to(expand_dims(t, ax + 1), t.shape[: ax + 1] + (n,) + t.shape[ax + 1 :])
        return reshape(y, t.shape[:ax] + (d * n,) + t.shape[ax + 1 :])
    if len(r) != d:
        raise ShapeError(
            f"repeat: repeats has {len(r)} counts but axis {ax} of {t.describe()} has {d} "
            f"elements; give one count per element or a single int"
        )
    idx = np.repeat(np.arange(d, dtype=np.int64), r)
    return take(t, as_tensor(idx, "repeat", t.backend), axis=ax)


method_op("getitem", shape_primitives.slice, _fast_plan)
