"""Products: dot, matmul, tensordot, outer, vecdot, on the ``dot`` primitive, and cross."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from numerix import dtypes
from numerix._meeting import DEALLOCATED
from numerix._shapes import _CHECK_MEMORY_FROM, broadcast_shapes, check_size, normalize_axis
from numerix._tensor import Tensor
from numerix.errors import AxisError, DTypeError, ShapeError
from numerix.ops._core import (
    _PY_SCALARS,
    as_tensor,
    bind,
    cast,
    check_scalar_fits,
    keep_plan,
    new_out,
    scalar,
    unify,
)
from numerix.ops._fast import MATRIX, Plan, fast_op
from numerix.ops.elementwise import conj
from numerix.ops.reduction import sum as _sum
from numerix.ops.shape import broadcast_arrays, broadcast_to, moveaxis, reshape, stack
from numerix.primitives import linalg as linalg_primitives

__all__ = ["dot", "matmul", "tensordot", "outer", "vecdot", "dot_general", "cross"]


# contract_x of the product of a 1-d or 2-d x: its last axis
_LAST_AXIS = (None, (0,), (1,))


def _plain_product(op: str, x1: Any, x2: Any) -> Tensor | None:
    """The product of two tensors of one (non-bool) dtype on one backend, each 1-d or
    2-d, whose contracted sizes match: ``dot`` and ``matmul`` agree there (``x1``'s last
    axis with ``x2``'s first), so it calls the backend's ``dot`` at once, without the
    general path's promotion, axis normalisation and rules; None for anything else, which
    the general path checks (and refuses with its own errors)."""
    if type(x1) is Tensor and type(x2) is Tensor:
        s1, s2 = x1.shape, x2.shape
        n1, n2 = len(s1), len(s2)
        b = x1.backend
        d = x1.dtype
        if (
            0 < n1 <= 2
            and 0 < n2 <= 2
            and x2.backend is b
            and x2.dtype is d
            and d.kind != "b"
            and s1[-1] == s2[0]
            and b is not DEALLOCATED
        ):
            shape = s1[:-1] + s2[1:]
            # an outer product can outgrow both operands (a (n, 0) operand has no elements)
            if (s1[0] if n1 == 2 else 1) * (s2[1] if n2 == 2 else 1) > _CHECK_MEMORY_FROM:
                check_size(op, shape)
            return b.dot(new_out(shape, d, b), x1, x2, contract_x=_LAST_AXIS[n1], batch_x=(),
                         contract_y=(0,), batch_y=())  # fmt: skip
    return None


def _operands(op: str, a: Any, b: Any) -> tuple[Tensor, Tensor]:
    wa, wb = type(a) in _PY_SCALARS, type(b) in _PY_SCALARS
    if wa != wb:
        # a Python scalar is weak, as in the element-wise ops: the tensor's dtype wins
        t = as_tensor(b if wa else a, op)
        s = a if wa else b
        d = dtypes.weak_promote(t.dtype, s)
        check_scalar_fits(op, s, d)
        x, y = (scalar(s, d, t.backend), t) if wa else (t, scalar(s, d, t.backend))
    else:
        _, (x, y) = unify(op, a, b)
        d = dtypes.promote_types(x.dtype, y.dtype, op)
    if d.kind == "b":
        raise DTypeError(
            f"{op}: bool tensors have no product ({x.describe()}, {y.describe()}); cast them with "
            f"astype(numerix.int64) or astype(numerix.float32)"
        )
    return cast(x, d), cast(y, d)


def dot_general(
    x: Any,
    y: Any,
    contract: tuple[Sequence[int], Sequence[int]],
    batch: tuple[Sequence[int], Sequence[int]] = ((), ()),
) -> Tensor:
    """Contract axes ``contract[0]`` of ``x`` with ``contract[1]`` of ``y``, batching over
    ``batch`` (Nx ``dot/6``, XLA ``DotGeneral``). Output axes: batch, free of x, free of y."""
    return _dot_general("dot_general", x, y, contract, batch)


def _dot_general(
    op: str,
    x: Any,
    y: Any,
    contract: tuple[Sequence[int], Sequence[int]],
    batch: tuple[Sequence[int], Sequence[int]] = ((), ()),
) -> Tensor:
    # dot_general's checks, with errors naming the public op that called it
    x, y = _operands(op, x, y)
    cx = tuple(normalize_axis(op, a, x.ndim, x.shape) for a in contract[0])
    cy = tuple(normalize_axis(op, a, y.ndim, y.shape) for a in contract[1])
    bx = tuple(normalize_axis(op, a, x.ndim, x.shape) for a in batch[0])
    by = tuple(normalize_axis(op, a, y.ndim, y.shape) for a in batch[1])
    if len(cx) != len(cy) or len(bx) != len(by):
        raise ShapeError(f"{op}: contracting/batch axes must pair up, got {contract} and {batch}")
    if len(set(cx + bx)) != len(cx + bx) or len(set(cy + by)) != len(cy + by):
        raise ShapeError(f"{op}: an axis is listed twice in {contract} / {batch}")
    for a, b in zip(cx, cy):
        if x.shape[a] != y.shape[b]:
            raise ShapeError(
                f"{op}: cannot contract axis {a} of {x.describe()} with axis {b} of "
                f"{y.describe()}: sizes {x.shape[a]} and {y.shape[b]} differ"
            )
    for a, b in zip(bx, by):
        if x.shape[a] != y.shape[b]:
            raise ShapeError(
                f"{op}: batch axis {a} of {x.describe()} and axis {b} of {y.describe()} differ"
            )
    shape = linalg_primitives.dot_shape_rule(
        x.shape, y.shape, contract_x=cx, batch_x=bx, contract_y=cy, batch_y=by
    )
    check_size(op, shape)  # an outer product can outgrow both operands
    return bind(linalg_primitives.dot, new_out(shape, x.dtype, x.backend), x, y,
                contract_x=cx, batch_x=bx, contract_y=cy, batch_y=by)  # fmt: skip


def dot(a: Any, b: Any, /) -> Tensor:
    """numpy ``dot``: scalars multiply; 1-d·1-d is the inner product; otherwise the last
    axis of ``a`` contracts with the second-to-last of ``b`` (the last, if ``b`` is 1-d).

    >>> import numerix as nx
    >>> nx.dot(nx.tensor([[1, 2], [3, 4]]), nx.tensor([1, 1])).tolist()
    [3, 7]

    Mismatched sizes raise::

        nx.dot(nx.ones((2, 3)), nx.ones((2, 3)))  # ShapeError: dot: shapes ... are not aligned
    """
    r = _plain_product("dot", a, b)
    if r is not None:
        return r
    x, y = _operands("dot", a, b)
    if x.ndim == 0 or y.ndim == 0:
        return x * y
    cy = 0 if y.ndim == 1 else y.ndim - 2
    _check_contract("dot", x, x.ndim - 1, y, cy)
    return _dot_general("dot", x, y, ((x.ndim - 1,), (cy,)))


def _check_contract(op: str, x: Tensor, ax: int, y: Tensor, ay: int) -> None:
    if x.shape[ax] != y.shape[ay]:
        raise ShapeError(
            f"{op}: shapes {x.shape} and {y.shape} are not aligned: {x.describe()} axis {ax} "
            f"(size {x.shape[ax]}) must equal {y.describe()} axis {ay} (size {y.shape[ay]})"
        )


#: matmul of two matrices is the backend's dot over these axes (matmul's first case, and
#: the plan the compiled fast path keeps)
_MATRIX_AXES = {"contract_x": (1,), "batch_x": (), "contract_y": (0,), "batch_y": ()}
_MATRIX_KW = tuple(_MATRIX_AXES), tuple(_MATRIX_AXES.values())


def _fast_plan(form: str, x: Tensor, y: Tensor) -> Plan | None:
    """The plan of ``matmul`` of two matrices for the compiled fast path
    (:mod:`numerix.ops._fast`), as matmul's first case calls dot: the product's shape and
    dot's axes; None where the inner sizes differ (matmul's error) or the product is
    large enough that matmul checks memory first, call by call."""
    (m, k1), (k2, n) = x.shape, y.shape
    if k1 != k2 or m * n > _CHECK_MEMORY_FROM:
        return None
    return (m, n), *_MATRIX_KW, None


@fast_op(linalg_primitives.dot, MATRIX, plan=_fast_plan)
def matmul(x1: Any, x2: Any, /) -> Tensor:
    """Matrix product with broadcast batch axes (array API ``matmul``, the ``@`` operator).
    1-d operands are treated as a row / column vector and the added axis removed."""
    if type(x1) is Tensor and type(x2) is Tensor:
        # two matrices: _plain_product's case written inline, a call less on the @ operator
        s1, s2 = x1.shape, x2.shape
        b = x1.backend
        d = x1.dtype
        if (
            len(s1) == 2
            and len(s2) == 2
            and x2.backend is b
            and x2.dtype is d
            and d.kind != "b"
            and s1[1] == s2[0]
            and b is not DEALLOCATED
        ):
            m, n = s1[0], s2[1]
            if m * n > _CHECK_MEMORY_FROM:
                check_size("matmul", (m, n))
            return b.dot(new_out((m, n), d, b), x1, x2, **_MATRIX_AXES)
        plan = _MATMULS.get((s1, s2, d)) if len(s1) > 2 or len(s2) > 2 else None
        if plan is not None and x2.backend is b and x2.dtype is d and b is not DEALLOCATED:
            return _batched_matmul(plan, x1, x2)
    r = _plain_product("matmul", x1, x2)  # a vector
    if r is not None:
        return r
    x, y = _operands("matmul", x1, x2)
    if x.ndim == 0 or y.ndim == 0:
        raise ShapeError(
            f"matmul: operands must be at least 1-d, got {x.describe()} and {y.describe()}; use "
            f"multiply for scalars"
        )
    xv, yv = x.ndim == 1, y.ndim == 1
    _check_contract("matmul", x, x.ndim - 1, y, 0 if yv else y.ndim - 2)
    keep = (
        type(x1) is Tensor
        and type(x2) is Tensor
        and x1.dtype is x2.dtype
        and x1.backend is x2.backend
    )
    if (x.ndim > 2 and y.ndim <= 2) or (xv and y.ndim > 2):
        # one side has no batch axes: one contraction (x's last axis with y's first, or
        # a vector x with y's second-to-last) gives matmul's axes, with nothing broadcast
        # (a weight matrix is not copied once per batch element) and no reshape
        cx, cy = (x.ndim - 1,), (0 if y.ndim <= 2 else y.ndim - 2,)
        r = _dot_general("matmul", x, y, (cx, cy))
        if keep:
            plan = (None, (), None, (), cx, (), cy, r.shape)
            keep_plan(_MATMULS, (x1.shape, x2.shape, x1.dtype), plan)
        return r
    if xv:
        x = reshape(x, (1, x.shape[0]))
    if yv:
        y = reshape(y, (y.shape[0], 1))
    batch = broadcast_shapes("matmul", x.shape[:-2], y.shape[:-2])
    if x.shape[:-2] != batch:
        x = broadcast_to(x, batch + x.shape[-2:])
    if y.shape[:-2] != batch:
        y = broadcast_to(y, batch + y.shape[-2:])
    nb = len(batch)
    r = _dot_general("matmul", x, y, ((nb + 1,), (nb,)), (tuple(range(nb)), tuple(range(nb))))
    if keep and not xv and not yv and nb:
        # what the checks passed and the rules gave, for the next call on these shapes
        keep_plan(_MATMULS, (x1.shape, x2.shape, x1.dtype), _matmul_plan(x1.shape, x2.shape, r))
    if xv and yv:
        return reshape(r, batch)
    if xv:
        return reshape(r, batch + (r.shape[-1],))
    if yv:
        return reshape(r, batch + (r.shape[-2],))
    return r


# matmul's eager plans (decision 34) for two tensors of one dtype on one backend, one of
# more than two axes, per (x1's shape, x2's shape, dtype): the shape each operand is
# broadcast to with broadcast's axes (None where it is kept as it is), dot's parameters
# and out's shape, as the general path's checks and dot's rules gave them on the first
# call. Tensor shapes hold Python ints only; a call the checks refuse (sizes that do not
# pair up, bool, mixed dtypes or backends) keeps nothing.
_MATMULS: dict[tuple[Any, ...], tuple[Any, ...]] = {}


def _matmul_plan(s1: tuple[int, ...], s2: tuple[int, ...], r: Tensor) -> tuple[Any, ...]:
    batch = r.shape[:-2]
    n = len(batch)
    tx = None if s1[:-2] == batch else batch + s1[-2:]
    ty = None if s2[:-2] == batch else batch + s2[-2:]
    ax = tuple(range(n + 2 - len(s1), n + 2))
    ay = tuple(range(n + 2 - len(s2), n + 2))
    axes = tuple(range(n))
    return tx, ax, ty, ay, (n + 1,), axes, (n,), r.shape


def _batched_matmul(plan: tuple[Any, ...], x: Tensor, y: Tensor) -> Tensor:
    # the general path's broadcast and dot calls as Primitive.bind makes them, with the
    # shapes its rules gave kept in the plan
    tx, ax, ty, ay, cx, batch, cy, shape = plan
    b, d = x.backend, x.dtype
    if tx is not None:
        x = b.broadcast(new_out(tx, d, b), x, axes=ax)
    if ty is not None:
        y = b.broadcast(new_out(ty, d, b), y, axes=ay)
    return b.dot(new_out(shape, d, b), x, y, contract_x=cx, batch_x=batch, contract_y=cy,
                 batch_y=batch)  # fmt: skip


def tensordot(
    x1: Any, x2: Any, /, *, axes: int | tuple[Sequence[int], Sequence[int]] = 2
) -> Tensor:
    """Contract the last ``axes`` axes of ``x1`` with the first of ``x2``, or the explicit
    pairs ``(axes_x1, axes_x2)`` (array API ``tensordot``)."""
    x, y = _operands("tensordot", x1, x2)
    if isinstance(axes, int) and not isinstance(axes, bool):
        if axes < 0 or axes > x.ndim or axes > y.ndim:
            raise ShapeError(
                f"tensordot: axes={axes} out of range for {x.describe()}, {y.describe()}"
            )
        ax = tuple(range(x.ndim - axes, x.ndim))
        ay = tuple(range(axes))
    else:
        try:
            a0, a1 = axes  # type: ignore[misc]
        except (TypeError, ValueError):
            raise ShapeError(
                f"tensordot: axes must be an int or a pair of sequences, got {axes!r}"
            ) from None
        ax = (a0,) if isinstance(a0, int) else tuple(a0)
        ay = (a1,) if isinstance(a1, int) else tuple(a1)
    return _dot_general("tensordot", x, y, (ax, ay))


def outer(x1: Any, x2: Any, /) -> Tensor:
    """Outer product of two 1-d tensors (array API ``outer``): ``r[i, j] = x1[i] * x2[j]``,
    each element one multiplication (signed zeros as ``multiply``'s, which a contraction
    through a BLAS product would turn to +0)."""
    x, y = _operands("outer", x1, x2)
    if x.ndim != 1 or y.ndim != 1:
        raise ShapeError(f"outer: takes 1-d tensors, got {x.describe()} and {y.describe()}")
    check_size("outer", (x.shape[0], y.shape[0]))  # it can outgrow both operands
    return reshape(x, (x.shape[0], 1)) * reshape(y, (1, y.shape[0]))


def _vector_axis(op: str, x: Tensor, y: Tensor, axis: Any, size: int | None) -> int:
    """The axis of ``x`` and ``y`` holding their vectors, counted from the end (as the
    array API), checked to have one size in both before broadcasting (and ``size``)."""
    n = min(x.ndim, y.ndim)
    if isinstance(axis, bool) or not isinstance(axis, int) or not -n <= axis < n or n == 0:
        raise (AxisError if n and isinstance(axis, int) else ShapeError)(
            f"{op}: axis={axis!r} is out of range for {x.describe()} and {y.describe()}; it must "
            f"be an int in [-{n}, -1] (counted from the last axis)"
            if n
            else f"{op}: needs tensors of at least 1 dimension, got {x.describe()} and {y.describe()}"
        )
    a = axis - n if axis >= 0 else axis
    if x.shape[a] != y.shape[a]:
        raise ShapeError(
            f"{op}: the vectors' axis {a} has size {x.shape[a]} in {x.describe()} and "
            f"{y.shape[a]} in {y.describe()}; they must be equal (that axis does not broadcast)"
        )
    if size is not None and x.shape[a] != size:
        raise ShapeError(
            f"{op}: the vectors' axis {a} must have size {size}, got {x.describe()} and "
            f"{y.describe()}"
        )
    return a


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1) -> Tensor:
    """The dot product of the vectors along ``axis``, batched with broadcasting over the
    other axes (array API ``vecdot``, ``numpy.vecdot``): ``sum(conj(x1) * x2, axis)``.

    The result keeps the promoted dtype of the operands (integers do not widen); bool is
    refused. ``axis`` counts from the end (a non-negative ``axis`` is counted from the
    end of the shorter operand's shape, as the array API), and that axis must have one
    size in both operands: it does not broadcast.

    >>> import numerix as nx
    >>> nx.vecdot(nx.tensor([[1, 2], [3, 4]]), nx.tensor([1, 1])).tolist()
    [3, 7]
    >>> nx.vecdot(nx.ones((2, 3)), nx.ones((2, 1)))
    Traceback (most recent call last):
    ...
    numerix.errors.ShapeError: vecdot: the vectors' axis -1 has size 3 in f32[2][3] binary(cpu) and 1 in f32[2][1] binary(cpu); they must be equal (that axis does not broadcast)
    """
    x, y = _operands("vecdot", x1, x2)
    a = _vector_axis("vecdot", x, y, axis, None)
    if x.dtype.kind == "c":
        x = conj(x)
    xb, yb = broadcast_arrays(x, y)
    return _sum(xb * yb, axis=a, dtype=x.dtype)


def cross(x1: Any, x2: Any, /, *, axis: int = -1) -> Tensor:
    """The cross product of 3-element vectors along ``axis``, batched with broadcasting
    over the other axes (array API ``linalg.cross``, ``numpy.cross``).

    The result has the operands' promoted dtype and their broadcast shape; bool is
    refused. ``axis`` counts as in :func:`vecdot`, and must have size 3 in both operands
    (numpy also takes 2-element vectors; the array API does not).

    >>> import numerix as nx
    >>> nx.cross(nx.tensor([1, 0, 0]), nx.tensor([0, 1, 0])).tolist()
    [0, 0, 1]
    >>> nx.cross(nx.ones(2), nx.ones(2))
    Traceback (most recent call last):
    ...
    numerix.errors.ShapeError: cross: the vectors' axis -1 must have size 3, got f32[2] binary(cpu) and f32[2] binary(cpu)
    """
    x, y = _operands("cross", x1, x2)
    a = _vector_axis("cross", x, y, axis, 3)
    x, y = broadcast_arrays(x, y)
    if a != -1:
        x, y = moveaxis(x, a, -1), moveaxis(y, a, -1)
    x0, x1_, x2_ = x[..., 0], x[..., 1], x[..., 2]
    y0, y1, y2 = y[..., 0], y[..., 1], y[..., 2]
    r = stack([x1_ * y2 - x2_ * y1, x2_ * y0 - x0 * y2, x0 * y1 - x1_ * y0], axis=-1)
    return moveaxis(r, -1, a) if a != -1 else r
