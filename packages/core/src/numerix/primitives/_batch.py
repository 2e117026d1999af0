"""The shared batching rules and their helpers (:func:`numerix.vmap`).

A rule sees its inputs with the batch as axis 0 where ``batched`` says so (see
:func:`numerix.primitives._registry.batch_rule`). Families share one rule each: the
element-wise primitives align ranks and broadcast as they already do; the primitives
that act on trailing axes and take leading ones as a stack (fft, the linear-algebra
blocks) run once on the whole batch (:func:`leading`); the ones with axis parameters
shift them by one (:func:`shifted`). :func:`loop` runs a primitive once per example,
for the few cases with no batched form.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from numerix._tensor import Tensor

__all__ = ["size", "lift", "lift_all", "shifted", "to_front", "elementwise", "leading", "loop"]


def size(args: Sequence[Any], batched: Sequence[bool]) -> int:
    """The batch size: axis 0 of any batched input."""
    for a, b in zip(args, batched):
        if b:
            return int(a.shape[0])
    raise AssertionError("a batching rule called with no batched input")


def lift(ops: Any, x: Tensor, is_batched: bool, n: int) -> Tensor:
    """``x`` with the batch as axis 0: a batched input as it is, an unbatched one
    broadcast to ``(n, *x.shape)`` (a view where the backend has them)."""
    if is_batched:
        return x
    return ops.broadcast_to(x, (n, *x.shape))


def lift_all(ops: Any, args: Sequence[Any], batched: Sequence[bool]) -> list[Any]:
    """Every input with the batch as axis 0."""
    n = size(args, batched)
    return [lift(ops, a, b, n) for a, b in zip(args, batched)]


def shifted(axes: Sequence[int]) -> tuple[int, ...]:
    """Axes of an example as axes of the batch (one more: the batch is axis 0)."""
    return tuple(a + 1 for a in axes)


def to_front(ops: Any, t: Tensor, axis: int) -> Tensor:
    """``t`` with its ``axis`` moved to axis 0 (no op when it is there)."""
    if axis == 0:
        return t
    return ops.moveaxis(t, axis, 0)


def elementwise(ops: Any, call: Callable[..., Any], args: Sequence[Any], batched: Sequence[bool],
                **params: Any) -> Any:  # fmt: skip
    """The rule of the element-wise primitives (which broadcast as numpy does): each
    batched input gets size-1 axes after its batch axis up to the rank of the widest
    example, so that the batch lines up with the output's axis 0; unbatched inputs
    broadcast from the right as they did."""
    rank = max(a.ndim - 1 if b else a.ndim for a, b in zip(args, batched))
    ins = []
    for a, b in zip(args, batched):
        if b and a.ndim - 1 < rank:
            a = ops.reshape(a, (a.shape[0],) + (1,) * (rank - a.ndim + 1) + a.shape[1:])
        ins.append(a)
    return call(*ins, **params)


def leading(ops: Any, call: Callable[..., Any], args: Sequence[Any], batched: Sequence[bool],
            **params: Any) -> Any:  # fmt: skip
    """The rule of a primitive or block that acts on trailing axes and takes any leading
    ones as a stack (fft, cholesky, solve, svd, ...): every input lifted to the batch,
    one call."""
    return call(*lift_all(ops, args, batched), **params)


def loop(ops: Any, call: Callable[..., Any], args: Sequence[Any], batched: Sequence[bool],
         **params: Any) -> Any:  # fmt: skip
    """Run ``call`` once per example and stack the results along a new axis 0 (a tuple
    of stacks for several outputs): the form of a primitive with no batched one."""
    n = size(args, batched)
    if n == 0:  # no example to run: one of zeros gives the shapes, broadcast to none
        one = call(*[ops.zeros(a.shape[1:], dtype=a.dtype, backend=a.backend) if b else a
                     for a, b in zip(args, batched)], **params)  # fmt: skip
        outs = one if isinstance(one, tuple) else (one,)
        empty = tuple(ops.broadcast_to(o, (0, *o.shape)) for o in outs)
        return empty if isinstance(one, tuple) else empty[0]
    results = []
    for i in range(n):
        results.append(call(*[a[i] if b else a for a, b in zip(args, batched)], **params))
    if isinstance(results[0], tuple):
        return tuple(ops.stack([r[j] for r in results]) for j in range(len(results[0])))
    return ops.stack(results)
