"""Shape ops: reshape, transpose, broadcast_to, expand_dims, squeeze, concatenate, stack, flip."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from numerix import dtypes as D
from numerix._shapes import broadcast_shapes, normalize_axes, normalize_axis, size_of
from numerix._tensor import Tensor
from numerix.errors import ShapeError
from numerix.ops._core import as_tensor, bind, cast, new_out, unify
from numerix.primitives import shape as P

__all__ = [
    "reshape", "transpose", "permute_dims", "matrix_transpose", "broadcast_to",
    "broadcast_arrays", "expand_dims", "squeeze", "concatenate", "concat", "stack", "flip",
    "ravel",
]  # fmt: skip


def reshape(x: Any, /, shape: Any) -> Tensor:
    """The same elements in C order with a new shape; one dimension may be -1 (inferred).

    >>> import numerix as nx
    >>> nx.reshape(nx.arange(6), (2, -1)).shape
    (2, 3)
    """
    t = as_tensor(x, "reshape")
    if isinstance(shape, int) and not isinstance(shape, bool):
        shape = (shape,)
    if not isinstance(shape, (tuple, list)) or not all(
        isinstance(d, int) and not isinstance(d, bool) for d in shape
    ):
        raise ShapeError(f"reshape: shape must be an int or a tuple of ints, got {shape!r}")
    shape = tuple(shape)
    if shape.count(-1) > 1:
        raise ShapeError(f"reshape: only one dimension can be -1, got {shape}")
    if any(d < -1 for d in shape):
        raise ShapeError(f"reshape: negative dimension in {shape}")
    if -1 in shape:
        known = size_of(tuple(d for d in shape if d != -1))
        if known == 0 or t.size % known:
            raise ShapeError(
                f"reshape: cannot reshape {t.describe()} ({t.size} elements) to {shape}: the "
                f"-1 dimension has no whole size"
            )
        shape = tuple(t.size // known if d == -1 else d for d in shape)
    if size_of(shape) != t.size:
        raise ShapeError(
            f"reshape: cannot reshape {t.describe()} ({t.size} elements) to {shape} "
            f"({size_of(shape)} elements); the sizes must match"
        )
    if shape == t.shape:
        return t
    return bind(P.reshape, new_out(shape, t.dtype, t.backend), t)


def ravel(x: Any, /) -> Tensor:
    """The elements as a 1-d tensor, C order."""
    return reshape(x, (-1,))


def transpose(x: Any, /, axes: Sequence[int] | None = None) -> Tensor:
    """Permute the axes (reverse them when ``axes`` is None), as numpy ``transpose``."""
    t = as_tensor(x, "transpose")
    if axes is None:
        perm = tuple(range(t.ndim - 1, -1, -1))
    else:
        if not isinstance(axes, (tuple, list)):
            raise ShapeError(f"transpose: axes must be a tuple of ints, got {axes!r}")
        perm = tuple(normalize_axis("transpose", a, t.ndim, t.shape) for a in axes)
        if sorted(perm) != list(range(t.ndim)):
            raise ShapeError(
                f"transpose: axes {tuple(axes)} are not a permutation of the {t.ndim} axes of "
                f"{t.describe()}"
            )
    if perm == tuple(range(t.ndim)):
        return t
    shape = tuple(t.shape[a] for a in perm)
    return bind(P.transpose, new_out(shape, t.dtype, t.backend), t, axes=perm)


def permute_dims(x: Any, /, axes: Sequence[int]) -> Tensor:
    """Array API ``permute_dims``: :func:`transpose` with explicit axes."""
    return transpose(x, tuple(axes))


def matrix_transpose(x: Any, /) -> Tensor:
    """Swap the last two axes (array API ``matrix_transpose``)."""
    t = as_tensor(x, "matrix_transpose")
    if t.ndim < 2:
        raise ShapeError(f"matrix_transpose: needs at least 2 dimensions, got {t.describe()}")
    perm = list(range(t.ndim))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return transpose(t, perm)


def matrix_transpose_T(x: Tensor) -> Tensor:
    if x.ndim != 2:
        raise ShapeError(
            f"T: .T is defined for 2-d tensors, got {x.describe()}; use .mT or transpose(axes)"
        )
    return transpose(x)


def broadcast_to(x: Any, /, shape: Any) -> Tensor:
    """Broadcast ``x`` to ``shape`` by numpy's rules (array API ``broadcast_to``)."""
    t = as_tensor(x, "broadcast_to")
    from numerix._shapes import check_shape

    s = check_shape("broadcast_to", shape)
    if len(s) < t.ndim or broadcast_shapes("broadcast_to", t.shape, s) != s:
        raise ShapeError(f"broadcast_to: cannot broadcast {t.describe()} to shape {s}")
    if s == t.shape:
        return t
    axes = tuple(range(len(s) - t.ndim, len(s)))
    return bind(P.broadcast, new_out(s, t.dtype, t.backend), t, axes=axes)


def broadcast_arrays(*arrays: Any) -> list[Tensor]:
    """Broadcast tensors against each other (array API ``broadcast_arrays``)."""
    _, ts = unify("broadcast_arrays", *arrays)
    s = broadcast_shapes("broadcast_arrays", *(t.shape for t in ts))
    return [broadcast_to(t, s) for t in ts]


def expand_dims(x: Any, /, axis: int | Sequence[int] = 0) -> Tensor:
    """Insert size-1 axes at ``axis`` (positions in the result)."""
    t = as_tensor(x, "expand_dims")
    axs = (axis,) if isinstance(axis, int) else tuple(axis)
    n = t.ndim + len(axs)
    pos = normalize_axes("expand_dims", axs, n)
    dims = iter(t.shape)
    shape = tuple(1 if i in pos else next(dims) for i in range(n))
    return reshape(t, shape)


def squeeze(x: Any, /, axis: int | Sequence[int] | None = None) -> Tensor:
    """Remove size-1 axes (all of them when ``axis`` is None)."""
    t = as_tensor(x, "squeeze")
    if axis is None:
        axes = tuple(i for i, d in enumerate(t.shape) if d == 1)
    else:
        axes = normalize_axes("squeeze", axis, t.ndim, t.shape)
        for a in axes:
            if t.shape[a] != 1:
                raise ShapeError(
                    f"squeeze: axis {a} of {t.describe()} has size {t.shape[a]}, not 1"
                )
    return reshape(t, tuple(d for i, d in enumerate(t.shape) if i not in axes))


def concatenate(arrays: Sequence[Any], /, axis: int | None = 0) -> Tensor:
    """Join tensors along an existing axis (``axis=None`` flattens them first); dtypes promote.

    >>> import numerix as nx
    >>> nx.concatenate([nx.tensor([1, 2]), nx.tensor([3])]).tolist()
    [1, 2, 3]
    """
    if not isinstance(arrays, (list, tuple)) or not arrays:
        raise ShapeError("concatenate: expects a non-empty list or tuple of tensors")
    backend, ts = unify("concatenate", *arrays)
    if axis is None:
        ts = [reshape(t, (-1,)) for t in ts]
        axis = 0
    nd = ts[0].ndim
    if nd == 0:
        raise ShapeError("concatenate: cannot concatenate 0-d tensors; use stack")
    for t in ts[1:]:
        if t.ndim != nd:
            raise ShapeError(
                "concatenate: tensors must have the same number of dimensions, got "
                + ", ".join(t.describe() for t in ts)
            )
    ax = normalize_axis("concatenate", axis, nd, ts[0].shape)
    for t in ts[1:]:
        if any(a != b for i, (a, b) in enumerate(zip(t.shape, ts[0].shape)) if i != ax):
            raise ShapeError(
                f"concatenate: shapes must match except on axis {ax}, got "
                + ", ".join(str(t.shape) for t in ts)
            )
    d = ts[0].dtype
    for t in ts[1:]:
        d = D.promote_types(d, t.dtype, "concatenate")
    ts = [cast(t, d) for t in ts]
    if len(ts) == 1:
        return ts[0]
    shape = list(ts[0].shape)
    shape[ax] = sum(t.shape[ax] for t in ts)
    return bind(P.concatenate, new_out(tuple(shape), d, backend), *ts, axis=ax)


concat = concatenate


def stack(arrays: Sequence[Any], /, axis: int = 0) -> Tensor:
    """Join tensors of one shape along a new axis."""
    if not isinstance(arrays, (list, tuple)) or not arrays:
        raise ShapeError("stack: expects a non-empty list or tuple of tensors")
    _, ts = unify("stack", *arrays)
    s = ts[0].shape
    for t in ts[1:]:
        if t.shape != s:
            raise ShapeError(
                "stack: tensors must have the same shape, got "
                + ", ".join(str(t.shape) for t in ts)
            )
    ax = normalize_axis("stack", axis, len(s) + 1)
    return concatenate([expand_dims(t, ax) for t in ts], axis=ax)


def flip(x: Any, /, axis: int | Sequence[int] | None = None) -> Tensor:
    """Reverse the order of elements along ``axis`` (all axes when None)."""
    t = as_tensor(x, "flip")
    axes = normalize_axes("flip", axis, t.ndim, t.shape)
    if not axes:
        return t
    return bind(P.reverse, new_out(t.shape, t.dtype, t.backend), t, axes=axes)
