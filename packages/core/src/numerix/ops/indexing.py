"""numpy-style indexing: ints, slices with steps, None, ``...``, integer and boolean tensors.

Basic indices become one ``slice`` (plus ``reverse`` for negative steps) and a reshape;
integer-tensor (advanced) indices become one ``gather``, with numpy's placement rule:
the broadcast index dimensions replace the indexed axes when the advanced indices are
adjacent, and go first otherwise.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from numerix import dtypes as D
from numerix._shapes import broadcast_shapes
from numerix._tensor import Tensor
from numerix.errors import IndexingError, ShapeError
from numerix.ops._core import as_tensor, bind, cast, check_concrete, new_out
from numerix.primitives import indexing as PI
from numerix.primitives import shape as PS

__all__ = ["getitem", "take"]


_GAP = object()  # where an ellipsis stood for no axis


def _is_int(k: Any) -> bool:
    return isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_))


def getitem(x: Tensor, key: Any) -> Tensor:
    """``x[key]`` with numpy semantics."""
    if not isinstance(key, tuple):
        key = (key,)
    items: list[Any] = []
    for k in key:
        if isinstance(k, (list, np.ndarray)):
            from_list = isinstance(k, list)
            k = as_tensor(k, "getitem", x.backend)
            if from_list and k.size == 0:  # numpy reads [] as an (empty) integer index
                k = cast(k, D.int64)
        if type(k) is Tensor and k.dtype is D.bool_:
            if k.ndim == 0:
                raise IndexingError("getitem: a 0-d bool index is not supported; use numerix.where")
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
    if any(type(k) is Tensor and k.dtype is D.bool_ for k in items):
        expanded: list[Any] = []
        ax = 0
        for k in items:
            if type(k) is Tensor and k.dtype is D.bool_:
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
            if len(r) == 0:
                lo, hi, st, back = 0, 0, 1, False
            elif r.step > 0:
                lo, hi, st, back = r.start, r[-1] + 1, r.step, False
            else:
                lo, hi, st, back = r[-1], r.start + 1, -r.step, True
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
        y = bind(PS.slice, new_out(shape, x.dtype, x.backend), x,
                 start=tuple(starts), stop=tuple(stops), strides=tuple(strides))  # fmt: skip
    if rev:
        y = bind(PS.reverse, new_out(y.shape, y.dtype, y.backend), y, axes=tuple(rev))
    from numerix.ops.shape import reshape, transpose

    if not advanced:
        out_shape = []
        for e in entries:
            if e[0] == "new":
                out_shape.append(1)
            elif e[0] == "slice":
                out_shape.append(y.shape[e[1]])
        return reshape(y, tuple(out_shape))
    return _advanced(y, entries, reshape, transpose, x)


def _advanced(
    y: Tensor, entries: list[tuple[Any, ...]], reshape: Any, transpose: Any, x: Tensor
) -> Tensor:
    adv = [e for e in entries if e[0] == "adv"]
    idx: list[Tensor] = []
    for e in adv:
        k = e[2]
        dim = y.shape[e[1]]
        if isinstance(k, int):
            t = as_tensor(k, "getitem", y.backend)
        else:
            t = _checked_index(k, dim, e[1], y, x)
        idx.append(cast(t, D.int64))
    try:
        bshape = broadcast_shapes("getitem", *(t.shape for t in idx))
    except ShapeError:  # numpy raises IndexError here: so does numerix
        raise IndexingError(
            "getitem: the index arrays' shapes "
            + " and ".join(str(t.shape) for t in idx)
            + " cannot be broadcast together (a bool mask counts as one index per dimension, "
            "of its number of true elements)"
        ) from None
    from numerix.ops.shape import broadcast_to, stack

    idx = [broadcast_to(t, bshape) for t in idx]
    indices = stack(idx, axis=-1)
    adv_axes = [e[1] for e in adv]
    rest = [a for a in range(y.ndim) if a not in adv_axes]
    yt = transpose(y, adv_axes + rest)
    gshape = bshape + tuple(yt.shape[len(adv_axes) :])
    r = bind(PI.gather, new_out(gshape, y.dtype, y.backend), yt, indices,
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


def _checked_index(k: Tensor, dim: int, axis: int, y: Tensor, x: Tensor) -> Tensor:
    # k indexes axis `axis` of y, the basic-sliced x; errors name x, the tensor indexed
    if k.backend is not y.backend:
        from numerix.ops._core import on_backend

        k = on_backend(k, y.backend)
    check_concrete(k, "getitem")
    host = k.backend.to_numpy(k)
    if host.size:
        lo, hi = int(host.min()), int(host.max())
        if lo < -dim or hi >= dim:
            bad = lo if lo < -dim else hi
            raise IndexingError(
                f"getitem: index {bad} is out of bounds for axis {axis} with size {dim} "
                f"({x.describe()})"
            )
        if lo < 0:
            from numerix.ops.elementwise import add, where

            k = cast(k, D.int64)
            k = where(k < 0, add(k, dim), k)
    return k


def _mask_ndim(k: Any) -> int:
    """The number of axes index ``k`` consumes: a bool mask one per dimension, others 1."""
    return k.ndim if type(k) is Tensor and k.dtype is D.bool_ else 1


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
    from numerix._shapes import normalize_axis
    from numerix.ops.shape import reshape

    t = as_tensor(x, "take")
    if axis is None:
        t = reshape(t, (-1,))
        axis = 0
    ax = normalize_axis("take", axis, t.ndim, t.shape)
    i = as_tensor(indices, "take", t.backend)
    if i.dtype.kind not in "iu":
        raise IndexingError(f"take: indices must be integers, got {i.describe()}")
    key = (slice(None),) * ax + (i,)
    return getitem(t, key)
