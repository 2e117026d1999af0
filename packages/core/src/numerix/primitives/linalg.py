"""dot: contraction with batch axes, as Nx's and XLA's dot_general."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from numerix.dtypes import DType
from numerix.errors import DTypeError
from numerix.primitives import _batch
from numerix.primitives._registry import REGISTRY, batch_rule, vjp_rule

if TYPE_CHECKING:
    from numerix._tensor import Tensor

#: What a derivative rule returns: one cotangent (or None) per input.
Cotangents = tuple["Tensor | None", ...]


def dot_shape_rule(
    x: tuple[int, ...], y: tuple[int, ...], *, contract_x: tuple[int, ...], batch_x: tuple[int, ...],
    contract_y: tuple[int, ...], batch_y: tuple[int, ...],
) -> tuple[int, ...]:  # fmt: skip
    batch = tuple(x[a] for a in batch_x)
    free_x = tuple(d for i, d in enumerate(x) if i not in contract_x and i not in batch_x)
    free_y = tuple(d for i, d in enumerate(y) if i not in contract_y and i not in batch_y)
    return batch + free_x + free_y


def dot_dtype_rule(x: DType, y: DType, **params: object) -> DType:
    if x is not y:  # pragma: no cover - the core promotes first
        raise DTypeError(f"dot: inputs must share a dtype, got {x} and {y}")
    return x


dot = REGISTRY.declare(
    "dot", "linalg", inputs=("x", "y"),
    params=("contract_x", "batch_x", "contract_y", "batch_y"),
    shape_rule=dot_shape_rule, dtype_rule=dot_dtype_rule,
    doc="sum of products over the contracting axes; output axes are batch, free axes of x, "
        "free axes of y; inputs share out.dtype",
)  # fmt: skip


# ---------------------------------------------------------------- derivative rules


def _dot_transpose(
    ops: Any, cotangent: Tensor, x: Tensor, y: Tensor, contract_x: tuple[int, ...],
    batch_x: tuple[int, ...], contract_y: tuple[int, ...], batch_y: tuple[int, ...],
    y_first: bool,
) -> Tensor:  # fmt: skip
    """The cotangent of ``x`` in ``dot(x, y)`` (of ``y`` when ``y_first``: out's free axes
    of ``y`` come first): contract the cotangent with ``y`` over y's free axes and batch
    over the batch axes, then put the axes back in x's order.

    When x's contracting axes come before its free axes (``w`` in ``dot(x, w)``), the
    cotangent is the dot with the operands swapped, ``dot(y, cotangent)``, whose axes are
    already in x's order: no transpose after it, and a contiguous result (a transposed
    view would make every element-wise op that reads it, an optimizer's update, walk it
    across its strides)."""
    nb = len(batch_x)
    free_x = [i for i in range(x.ndim) if i not in contract_x and i not in batch_x]
    free_y = [i for i in range(y.ndim) if i not in contract_y and i not in batch_y]
    start = nb if y_first else nb + len(free_x)
    ct_free_y = tuple(range(start, start + len(free_y)))
    batch_ct = tuple(range(nb))
    # either product's axes: batch, then x's free axes and y's contracting axes (in
    # increasing order), in the order of the operands
    rank = {a: k for k, a in enumerate(sorted(contract_y))}
    perm = [0] * x.ndim
    swapped = [0] * x.ndim
    for k, a in enumerate(batch_x):
        perm[a] = swapped[a] = k
    for j, a in enumerate(free_x):
        perm[a] = nb + j
        swapped[a] = nb + len(contract_x) + j
    for a, b in zip(contract_x, contract_y):
        perm[a] = nb + len(free_x) + rank[b]
        swapped[a] = nb + rank[b]
    if perm != sorted(perm) and swapped == sorted(swapped):
        return ops.dot_general(y, cotangent, (tuple(free_y), ct_free_y), (batch_y, batch_ct))
    g = ops.dot_general(cotangent, y, (ct_free_y, tuple(free_y)), (batch_ct, batch_y))
    return g if perm == sorted(perm) else ops.transpose(g, tuple(perm))


@vjp_rule("dot")
def dot_vjp(
    ops: Any, cotangent: Tensor, out: Tensor, x: Tensor, y: Tensor, *,
    contract_x: tuple[int, ...], batch_x: tuple[int, ...],
    contract_y: tuple[int, ...], batch_y: tuple[int, ...],
) -> Cotangents:  # fmt: skip
    return (
        _dot_transpose(ops, cotangent, x, y, contract_x, batch_x, contract_y, batch_y, False),
        _dot_transpose(ops, cotangent, y, x, contract_y, batch_y, contract_x, batch_x, True),
    )


# ---------------------------------------------------------------- batching rule


@batch_rule("dot")
def dot_batch(
    ops: Any, call: Any, args: list[Tensor], batched: list[bool], *,
    contract_x: tuple[int, ...], batch_x: tuple[int, ...],
    contract_y: tuple[int, ...], batch_y: tuple[int, ...],
) -> Tensor:  # fmt: skip
    # out's axes are dot's batch axes, x's free axes, y's free axes: the batch is one more
    # batch axis when both carry it, else a free axis of the one that does, moved to 0
    x, y = args
    bx, by = batched
    s = _batch.shifted
    if bx and by:
        return call(x, y, contract_x=s(contract_x), batch_x=(0, *s(batch_x)),
                    contract_y=s(contract_y), batch_y=(0, *s(batch_y)))  # fmt: skip
    if bx:
        out = call(x, y, contract_x=s(contract_x), batch_x=s(batch_x), contract_y=contract_y,
                   batch_y=batch_y)  # fmt: skip
        return _batch.to_front(ops, out, len(batch_x))
    out = call(x, y, contract_x=contract_x, batch_x=batch_x, contract_y=s(contract_y),
               batch_y=s(batch_y))  # fmt: skip
    return _batch.to_front(ops, out, x.ndim - len(contract_x))
