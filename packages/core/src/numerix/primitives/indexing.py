"""Indexing primitives: gather, and scatter as indexed_add / indexed_put; the take block."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from numerix import dtypes
from numerix.primitives import _batch
from numerix.primitives._registry import REGISTRY, batch_rule, declare_block, vjp_rule

if TYPE_CHECKING:
    from numerix._tensor import Tensor

#: What a derivative rule returns: one cotangent (or None) per input.
Cotangents = tuple["Tensor | None", ...]


def gather_shape_rule(
    x: tuple[int, ...], indices: tuple[int, ...], *, axes: tuple[int, ...]
) -> tuple[int, ...]:
    return indices[:-1] + tuple(d for a, d in enumerate(x) if a not in axes)


def gather_dtype_rule(x: dtypes.DType, indices: dtypes.DType, **params: object) -> dtypes.DType:
    return x


gather = REGISTRY.declare(
    "gather", "indexing", inputs=("x", "indices"), params=("axes",),
    shape_rule=gather_shape_rule, dtype_rule=gather_dtype_rule,
    doc="indices has a last dimension of len(axes) (int64, in range); out has shape "
        "indices.shape[:-1] + the dimensions of x not in axes, in order (Nx semantics)",
)  # fmt: skip


def indexed_shape_rule(
    x: tuple[int, ...], indices: tuple[int, ...], updates: tuple[int, ...], *, axes: tuple[int, ...]
) -> tuple[int, ...]:
    return x


def indexed_dtype_rule(
    x: dtypes.DType, indices: dtypes.DType, updates: dtypes.DType, **params: object
) -> dtypes.DType:
    return x


indexed_add = REGISTRY.declare(
    "indexed_add", "indexing", inputs=("x", "indices", "updates"), params=("axes",),
    shape_rule=indexed_shape_rule, dtype_rule=indexed_dtype_rule,
    doc="scatter-add (Nx): a copy of x with updates[i] added at x[indices[i]] over axes; indices "
        "(n, len(axes)) int64 in range, updates (n,) + x's other dims in x's dtype; duplicates sum",
)  # fmt: skip
indexed_put = REGISTRY.declare(
    "indexed_put", "indexing", inputs=("x", "indices", "updates"), params=("axes",),
    shape_rule=indexed_shape_rule, dtype_rule=indexed_dtype_rule,
    doc="scatter (Nx): as indexed_add but writing updates[i]; of duplicate indices the last "
        "(largest i) wins, deterministically",
)  # fmt: skip


def take_shape_rule(x: tuple[int, ...], indices: tuple[int, ...]) -> tuple[int, ...]:
    return indices + x[1:]


def take_dtype_rule(x: dtypes.DType, indices: dtypes.DType) -> dtypes.DType:
    return x


#: x[idx] and take(x, idx, axis=0) as a block: a backend takes the rows in one native call
#: (``ndarray.take``, ``index_select``, one jitted gather) where the core's version
#: reshapes the index to gather's (n, 1) first
take_block = declare_block(
    "take", "indexing", inputs=("x", "indices"),
    shape_rule=take_shape_rule, dtype_rule=take_dtype_rule,
    doc="rows of x along axis 0 (numpy's take with axis=0): indices int64 of any shape, "
        "every entry in [0, x.shape[0]) (the core wraps negative ones and refuses the rest); "
        "out has shape indices.shape + x.shape[1:]",
)  # fmt: skip


# ---------------------------------------------------------------- derivative rules


def _gather(ops: Any, x: Tensor, indices: Tensor, axes: tuple[int, ...]) -> Tensor:
    # gather with the public ops: the indexed axes first, then one index tensor per axis
    rest = [a for a in range(x.ndim) if a not in axes]
    perm = [*axes, *rest]
    xt = x if perm == list(range(x.ndim)) else ops.transpose(x, perm)
    return xt[tuple(indices[..., j] for j in range(len(axes)))]


@vjp_rule("gather")
def gather_vjp(
    ops: Any, cotangent: Tensor, out: Tensor, x: Tensor, indices: Tensor, *,
    axes: tuple[int, ...],
) -> Cotangents:  # fmt: skip
    # each gathered element sends its cotangent back to where it came from; repeats add
    rest = tuple(d for a, d in enumerate(x.shape) if a not in axes)
    n = _prod(indices.shape[:-1])
    rows = ops.reshape(indices, (n, len(axes)))
    updates = ops.reshape(cotangent, (n, *rest))
    return (ops.indexed_add(ops.zeros_like(x), rows, updates, axes=axes), None)


@vjp_rule("take")
def take_vjp(ops: Any, cotangent: Tensor, out: Tensor, x: Tensor, indices: Tensor) -> Cotangents:
    # gather's rule along axis 0: each row's cotangent added back where it was taken from
    n = _prod(indices.shape)
    rows = ops.reshape(indices, (n, 1))
    updates = ops.reshape(cotangent, (n, *x.shape[1:]))
    return (ops.indexed_add(ops.zeros_like(x), rows, updates, axes=(0,)), None)


@vjp_rule("indexed_add")
def indexed_add_vjp(
    ops: Any, cotangent: Tensor, out: Tensor, x: Tensor, indices: Tensor, updates: Tensor, *,
    axes: tuple[int, ...],
) -> Cotangents:  # fmt: skip
    return (cotangent, None, _gather(ops, cotangent, indices, axes))


@vjp_rule("indexed_put")
def indexed_put_vjp(
    ops: Any, cotangent: Tensor, out: Tensor, x: Tensor, indices: Tensor, updates: Tensor, *,
    axes: tuple[int, ...],
) -> Cotangents:  # fmt: skip
    # x keeps its cotangent where nothing was written; of the rows writing one place only
    # the last (the one whose value out holds) gets its cotangent: scatter each row's
    # number and gather back which one won
    gx = ops.indexed_put(cotangent, indices, ops.zeros_like(updates), axes=axes)
    n, k = indices.shape
    ids = ops.arange(n, dtype=dtypes.int64, backend=x.backend)
    slots = ops.full(tuple(x.shape[a] for a in axes), -1, dtype=dtypes.int64, backend=x.backend)
    winner = ops.indexed_put(slots, indices, ids)
    won = _gather(ops, winner, indices, tuple(range(k))) == ids
    gu = _gather(ops, cotangent, indices, axes)
    won = ops.reshape(won, (n,) + (1,) * (gu.ndim - 1))
    return (gx, None, ops.where(won, gu, ops.zeros_like(gu)))


def _prod(dims: tuple[int, ...]) -> int:
    p = 1
    for d in dims:
        p *= d
    return p


# ---------------------------------------------------------------- batching rules


def _with_example(ops: Any, indices: Tensor, n: int) -> Tensor:
    """Batched ``indices`` ``(n, ..., k)`` with each example's own index as a first
    column: ``(n, ..., k + 1)``, for the batched tensor's axis 0."""
    lead = ops.reshape(ops.iota((n,), dtype=indices.dtype, backend=indices.backend),
                       (n,) + (1,) * (indices.ndim - 1))  # fmt: skip
    lead = ops.broadcast_to(lead, indices.shape[:-1] + (1,))
    return ops.concatenate([lead, indices], axis=-1)


@batch_rule("gather")
def gather_batch(
    ops: Any, call: Any, args: list[Tensor], batched: list[bool], *, axes: tuple[int, ...]
) -> Tensor:
    x, indices = args
    bx, bi = batched
    if not bx:  # indices' leading axes lead the output: the batch is its axis 0
        return call(x, indices, axes=axes)
    if not bi:  # x's batch is its first axis not gathered: after indices' leading axes
        out = call(x, indices, axes=_batch.shifted(axes))
        return _batch.to_front(ops, out, indices.ndim - 1)
    n = x.shape[0]
    return call(x, _with_example(ops, indices, n), axes=(0, *_batch.shifted(axes)))


@batch_rule("indexed_add", "indexed_put")
def indexed_batch(
    ops: Any, call: Any, args: list[Tensor], batched: list[bool], *, axes: tuple[int, ...]
) -> Tensor:
    x, indices, updates = args
    n = _batch.size(args, batched)
    x = _batch.lift(ops, x, batched[0], n)
    if not batched[1]:
        # the same rows in every example: updates carry the batch as their first axis
        # after the row axis (x's first axis not indexed)
        u = ops.moveaxis(updates, 0, 1) if batched[2] else ops.broadcast_to(
            ops.expand_dims(updates, 1), (updates.shape[0], n, *updates.shape[1:])
        )  # fmt: skip
        return call(x, indices, u, axes=_batch.shifted(axes))
    # rows per example: one scatter of every example's rows, each led by its example
    updates = _batch.lift(ops, updates, batched[2], n)
    rows = _with_example(ops, indices, n)
    m = indices.shape[1]
    rows = ops.reshape(rows, (n * m, rows.shape[-1]))
    u = ops.reshape(updates, (n * m, *updates.shape[2:]))
    return call(x, rows, u, axes=(0, *_batch.shifted(axes)))


@batch_rule("take")
def take_batch(ops: Any, call: Any, args: list[Tensor], batched: list[bool]) -> Tensor:
    x, indices = args
    bx, bi = batched
    if not bx:  # the indices' axes lead the output
        return call(x, indices)
    n, rows = x.shape[0], x.shape[1]
    if not bi:  # rows of every example: take along axis 1, the batch first again
        out = call(ops.moveaxis(x, 0, 1), indices)
        return _batch.to_front(ops, out, indices.ndim)
    # every example's rows, numbered through the flattened batch
    flat = ops.reshape(x, (n * rows, *x.shape[2:]))
    offset = ops.reshape(ops.iota((n,), dtype=indices.dtype, backend=indices.backend) * rows,
                         (n,) + (1,) * (indices.ndim - 1))  # fmt: skip
    return call(flat, indices + offset)
