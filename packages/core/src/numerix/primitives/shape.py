"""Shape primitives: reshape, transpose, broadcast, concatenate, slice, reverse, pad,
dynamic_slice, put_slice."""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Any

from numerix import dtypes
from numerix._shapes import check_size
from numerix.primitives import _batch
from numerix.primitives._registry import REGISTRY, batch_rule, vjp_rule

if TYPE_CHECKING:
    from numerix._tensor import Tensor

_py_slice = builtins.slice  # this module's ``slice`` is the primitive

#: What a derivative rule returns: one cotangent (or None) per input.
Cotangents = tuple["Tensor | None", ...]


def same_dtype_rule(x: dtypes.DType, *rest: dtypes.DType, **params: object) -> dtypes.DType:
    """The dtype of the first input: shape primitives move elements, never convert them."""
    return x


def reshape_shape_rule(x: tuple[int, ...], *, shape: tuple[int, ...]) -> tuple[int, ...]:
    return shape


reshape = REGISTRY.declare(
    "reshape", "shape", inputs=("x",), out_params=("shape",),
    shape_rule=reshape_shape_rule, dtype_rule=same_dtype_rule,
    doc="the same elements in C order, in out.shape (sizes equal)",
)  # fmt: skip


def transpose_shape_rule(x: tuple[int, ...], *, axes: tuple[int, ...]) -> tuple[int, ...]:
    return tuple([x[a] for a in axes])


transpose = REGISTRY.declare(
    "transpose", "shape", inputs=("x",), params=("axes",),
    shape_rule=transpose_shape_rule, dtype_rule=same_dtype_rule,
    doc="out axis i is x axis axes[i] (a permutation)",
)  # fmt: skip


def broadcast_shape_rule(
    x: tuple[int, ...], *, axes: tuple[int, ...], shape: tuple[int, ...]
) -> tuple[int, ...]:
    return shape


broadcast = REGISTRY.declare(
    "broadcast", "shape", inputs=("x",), params=("axes",), out_params=("shape",),
    shape_rule=broadcast_shape_rule, dtype_rule=same_dtype_rule,
    doc="x axis i maps to out axis axes[i] (increasing); x's dimensions are equal to out's or 1",
)  # fmt: skip


def concatenate_shape_rule(*xs: tuple[int, ...], axis: int) -> tuple[int, ...]:
    first = xs[0]
    out = first[:axis] + (sum(x[axis] for x in xs),) + first[axis + 1 :]
    if 0 in out:  # empty inputs of valid shapes join to one whose extents may not be
        check_size("concatenate", out)
    return out


concatenate = REGISTRY.declare(
    "concatenate", "shape", inputs=("*xs",), params=("axis",),
    shape_rule=concatenate_shape_rule, dtype_rule=same_dtype_rule,
    doc="join along an existing axis; inputs share out.dtype and all other dimensions",
)  # fmt: skip


def slice_shape_rule(
    x: tuple[int, ...], *, start: tuple[int, ...], stop: tuple[int, ...], strides: tuple[int, ...]
) -> tuple[int, ...]:
    # ceil((stop - start) / stride) elements per axis
    return tuple([-((a - b) // s) for a, b, s in zip(start, stop, strides)])


slice = REGISTRY.declare(
    "slice", "shape", inputs=("x",), params=("start", "stop", "strides"),
    shape_rule=slice_shape_rule, dtype_rule=same_dtype_rule,
    doc="x[start:stop:strides] per axis, with 0 <= start <= stop <= dim and strides >= 1",
)  # fmt: skip


def reverse_shape_rule(x: tuple[int, ...], *, axes: tuple[int, ...]) -> tuple[int, ...]:
    return x


reverse = REGISTRY.declare(
    "reverse", "shape", inputs=("x",), params=("axes",),
    shape_rule=reverse_shape_rule, dtype_rule=same_dtype_rule,
    doc="reverse the order of elements along each of axes",
)  # fmt: skip


def pad_shape_rule(
    x: tuple[int, ...], pad_value: tuple[int, ...], *, config: tuple[tuple[int, int, int], ...]
) -> tuple[int, ...]:
    return tuple(lo + hi + d + max(d - 1, 0) * interior for d, (lo, hi, interior) in zip(x, config))


def pad_dtype_rule(x: dtypes.DType, pad_value: dtypes.DType, **params: object) -> dtypes.DType:
    return x


pad = REGISTRY.declare(
    "pad", "shape", inputs=("x", "pad_value"), params=("config",),
    shape_rule=pad_shape_rule, dtype_rule=pad_dtype_rule,
    doc="XLA Pad: per axis (low, high, interior); interior >= 0 puts pad_value (0-d, x's dtype) "
        "between elements, then low/high pad (>= 0) or crop (< 0) the ends; out dims >= 0",
)  # fmt: skip


def dynamic_slice_shape_rule(
    x: tuple[int, ...], *starts: tuple[int, ...], sizes: tuple[int, ...]
) -> tuple[int, ...]:
    return sizes


def dynamic_slice_dtype_rule(
    x: dtypes.DType, *starts: dtypes.DType, **params: object
) -> dtypes.DType:
    return x


dynamic_slice = REGISTRY.declare(
    "dynamic_slice", "shape", inputs=("x", "*starts"), params=("sizes",),
    shape_rule=dynamic_slice_shape_rule, dtype_rule=dynamic_slice_dtype_rule,
    doc="XLA DynamicSlice: starts are 0-d int64 tensors, one per axis, of any value; the backend "
        "clamps each to [0, dim - size] (0 <= size <= dim), then takes x[start:start+size]",
)  # fmt: skip


def put_slice_shape_rule(
    x: tuple[int, ...], update: tuple[int, ...], *starts: tuple[int, ...]
) -> tuple[int, ...]:
    return x


def put_slice_dtype_rule(
    x: dtypes.DType, update: dtypes.DType, *starts: dtypes.DType
) -> dtypes.DType:
    return x


put_slice = REGISTRY.declare(
    "put_slice", "shape", inputs=("x", "update", "*starts"),
    shape_rule=put_slice_shape_rule, dtype_rule=put_slice_dtype_rule,
    doc="XLA DynamicUpdateSlice: a copy of x with update (x's dtype and ndim, dims <= x's) "
        "written at starts (0-d int64 tensors, clamped by the backend to [0, dim - update dim])",
)  # fmt: skip


# ---------------------------------------------------------------- derivative rules


@vjp_rule("reshape")
def reshape_vjp(ops: Any, cotangent: Tensor, out: Tensor, x: Tensor) -> Cotangents:
    return (ops.reshape(cotangent, x.shape),)


@vjp_rule("transpose")
def transpose_vjp(
    ops: Any, cotangent: Tensor, out: Tensor, x: Tensor, *, axes: tuple[int, ...]
) -> Cotangents:
    inverse = [0] * len(axes)
    for i, a in enumerate(axes):
        inverse[a] = i
    return (ops.transpose(cotangent, tuple(inverse)),)


@vjp_rule("broadcast")
def broadcast_vjp(
    ops: Any, cotangent: Tensor, out: Tensor, x: Tensor, *, axes: tuple[int, ...]
) -> Cotangents:
    # sum over the new axes and over the axes x had as 1 that out widened
    kept = set(axes)
    summed = tuple(i for i in range(out.ndim) if i not in kept) + tuple(
        a for a, d in zip(axes, x.shape) if d == 1 and out.shape[a] != 1
    )
    if summed:
        cotangent = ops.sum(cotangent, axis=tuple(sorted(summed)), keepdims=True)
    return (ops.reshape(cotangent, x.shape),)


@vjp_rule("reverse")
def reverse_vjp(
    ops: Any, cotangent: Tensor, out: Tensor, x: Tensor, *, axes: tuple[int, ...]
) -> Cotangents:
    return (ops.flip(cotangent, axis=axes) if axes else cotangent,)


@vjp_rule("concatenate")
def concatenate_vjp(ops: Any, cotangent: Tensor, out: Tensor, *xs: Tensor, axis: int) -> Cotangents:
    pieces = []
    lo = 0
    for x in xs:
        key = [_py_slice(None)] * out.ndim
        key[axis] = _py_slice(lo, lo + x.shape[axis])
        pieces.append(cotangent[tuple(key)])
        lo += x.shape[axis]
    return tuple(pieces)


@vjp_rule("slice")
def slice_vjp(
    ops: Any, cotangent: Tensor, out: Tensor, x: Tensor, *,
    start: tuple[int, ...], stop: tuple[int, ...], strides: tuple[int, ...],
) -> Cotangents:  # fmt: skip
    # zeros around and between the taken elements: a pad of the cotangent
    config = []
    for d, n, a, s in zip(x.shape, out.shape, start, strides):
        if n == 0:
            config.append((0, d, 0))
        else:
            config.append((a, d - a - (n - 1) * s - 1, s - 1))
    return (ops.pad_general(cotangent, config),)


@vjp_rule("pad")
def pad_vjp(
    ops: Any, cotangent: Tensor, out: Tensor, x: Tensor, pad_value: Tensor, *,
    config: tuple[tuple[int, int, int], ...],
) -> Cotangents:  # fmt: skip
    # undo low/high (a crop becomes zeros), then take every (interior + 1)-th element
    unpadded = ops.pad_general(cotangent, [(-lo, -hi, 0) for lo, hi, _ in config])
    key = tuple(_py_slice(None, None, interior + 1) for _, _, interior in config)
    gx = unpadded[key] if any(interior for _, _, interior in config) else unpadded
    g_value = ops.sum(cotangent) - ops.sum(gx)
    return (gx, g_value)


@vjp_rule("dynamic_slice")
def dynamic_slice_vjp(
    ops: Any, cotangent: Tensor, out: Tensor, x: Tensor, *starts: Tensor, sizes: tuple[int, ...]
) -> Cotangents:
    # the backend clamps starts the same way in both directions
    return (ops.put_slice(ops.zeros_like(x), list(starts), cotangent),) + (None,) * len(starts)


@vjp_rule("put_slice")
def put_slice_vjp(
    ops: Any, cotangent: Tensor, out: Tensor, x: Tensor, update: Tensor, *starts: Tensor
) -> Cotangents:
    gx = ops.put_slice(cotangent, list(starts), ops.zeros_like(update))
    g_update = ops.dynamic_slice(cotangent, list(starts), update.shape)
    return (gx, g_update) + (None,) * len(starts)


# ---------------------------------------------------------------- batching rules
# The batch is axis 0 of every batched input: each rule shifts the per-example axes by
# one and adds the batch's own (untouched) entry.


@batch_rule("reshape")
def reshape_batch(
    ops: Any, call: Any, args: list[Tensor], batched: list[bool], *, shape: tuple[int, ...]
) -> Tensor:
    x = args[0]
    return call(x, shape=(x.shape[0], *shape))


@batch_rule("transpose")
def transpose_batch(
    ops: Any, call: Any, args: list[Tensor], batched: list[bool], *, axes: tuple[int, ...]
) -> Tensor:
    return call(args[0], axes=(0, *_batch.shifted(axes)))


@batch_rule("broadcast")
def broadcast_batch(
    ops: Any, call: Any, args: list[Tensor], batched: list[bool], *, axes: tuple[int, ...],
    shape: tuple[int, ...],
) -> Tensor:  # fmt: skip
    x = args[0]
    return call(x, axes=(0, *_batch.shifted(axes)), shape=(x.shape[0], *shape))


@batch_rule("concatenate")
def concatenate_batch(
    ops: Any, call: Any, args: list[Tensor], batched: list[bool], *, axis: int
) -> Tensor:
    return call(*_batch.lift_all(ops, args, batched), axis=axis + 1)


@batch_rule("slice")
def slice_batch(
    ops: Any, call: Any, args: list[Tensor], batched: list[bool], *, start: tuple[int, ...],
    stop: tuple[int, ...], strides: tuple[int, ...],
) -> Tensor:  # fmt: skip
    x = args[0]
    return call(x, start=(0, *start), stop=(x.shape[0], *stop), strides=(1, *strides))


@batch_rule("reverse")
def reverse_batch(
    ops: Any, call: Any, args: list[Tensor], batched: list[bool], *, axes: tuple[int, ...]
) -> Tensor:
    return call(args[0], axes=_batch.shifted(axes))


@batch_rule("pad")
def pad_batch(
    ops: Any, call: Any, args: list[Tensor], batched: list[bool], *,
    config: tuple[tuple[int, int, int], ...],
) -> Tensor:  # fmt: skip
    x, value = args
    n = _batch.size(args, batched)
    x = _batch.lift(ops, x, batched[0], n)
    cfg = ((0, 0, 0), *config)
    if not batched[1]:
        return call(x, value, config=cfg)
    # a pad value per example: pad with zeros, then put each example's value where a
    # padded mask says the padding went
    zero = ops.full((), 0, dtype=x.dtype, backend=x.backend)
    padded = call(x, zero, config=cfg)
    ones = ops.full(x.shape, True, backend=x.backend)
    inside = call(ones, ops.full((), False, backend=x.backend), config=cfg)
    v = ops.reshape(value, (n,) + (1,) * (padded.ndim - 1))
    return ops.where(inside, padded, v)


def _slice_indices(
    ops: Any, starts: list[Tensor], batched: list[bool], dims: tuple[int, ...],
    sizes: tuple[int, ...], n: int, backend: Any,
) -> Tensor:  # fmt: skip
    """The gather indices ``(n, *sizes, 1 + len(sizes))`` of a slice of ``sizes`` at
    per-example ``starts`` (clamped to ``[0, dim - size]`` as dynamic_slice clamps them),
    led by the example's own index."""
    k = len(sizes)
    cols = []
    lead = ops.reshape(ops.iota((n,), backend=backend), (n,) + (1,) * k)
    cols.append(ops.broadcast_to(lead, (n, *sizes)))
    for d, (s, b) in enumerate(zip(starts, batched)):
        s = _batch.lift(ops, s, b, n)
        s = ops.clip(s, 0, dims[d] - sizes[d])
        step = ops.reshape(
            ops.iota((sizes[d],), backend=backend),
            (1,) * (d + 1) + (sizes[d],) + (1,) * (k - d - 1),
        )
        cols.append(ops.broadcast_to(ops.reshape(s, (n,) + (1,) * k) + step, (n, *sizes)))
    return ops.stack(cols, axis=-1)


@batch_rule("dynamic_slice")
def dynamic_slice_batch(
    ops: Any, call: Any, args: list[Tensor], batched: list[bool], *, sizes: tuple[int, ...]
) -> Tensor:
    x, *starts = args
    n = _batch.size(args, batched)
    x = _batch.lift(ops, x, batched[0], n)
    if not any(batched[1:]):
        zero = ops.full((), 0, dtype=starts[0].dtype, backend=starts[0].backend)
        return call(x, zero, *starts, sizes=(n, *sizes))
    # a start per example: a gather of each example's slice
    idx = _slice_indices(ops, starts, batched[1:], x.shape[1:], sizes, n, x.backend)
    return REGISTRY["gather"].bind(x, idx, axes=tuple(range(x.ndim)))


@batch_rule("put_slice")
def put_slice_batch(ops: Any, call: Any, args: list[Tensor], batched: list[bool]) -> Tensor:
    x, update, *starts = args
    n = _batch.size(args, batched)
    x = _batch.lift(ops, x, batched[0], n)
    update = _batch.lift(ops, update, batched[1], n)
    if not any(batched[2:]):
        zero = ops.full((), 0, dtype=starts[0].dtype, backend=starts[0].backend)
        return call(x, update, zero, *starts)
    # a start per example: a scatter of each example's update
    sizes = update.shape[1:]
    idx = _slice_indices(ops, starts, batched[2:], x.shape[1:], sizes, n, x.backend)
    count = idx.size // x.ndim
    rows = ops.reshape(idx, (count, x.ndim))
    values = ops.reshape(update, (count,))
    return REGISTRY["indexed_put"].bind(x, rows, values, axes=tuple(range(x.ndim)))
