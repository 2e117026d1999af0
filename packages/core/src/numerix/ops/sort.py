"""Sorting, top_k and cumulative ops.

Order: ascending is numpy's (NaN last; complex lexicographic on (real, imag)),
descending is exactly its reverse (NaN first: NaN counts as the largest value, as
in ``jax.numpy.sort(..., descending=True)`` and ``torch.sort``), and both are
stable. See :mod:`numerix.primitives.sort`.
"""

from __future__ import annotations

import operator
from typing import Any

from numerix import dtypes
from numerix._dispatch import block_out
from numerix._shapes import normalize_axis
from numerix._tensor import Tensor
from numerix.errors import DTypeError, ShapeError
from numerix.ops._core import as_tensor, cast, run_block
from numerix.ops.creation import full, iota
from numerix.ops.shape import concatenate, reshape
from numerix.primitives import indexing as indexing_primitives
from numerix.primitives import shape as shape_primitives
from numerix.primitives import sort as sort_primitives

__all__ = [
    "sort", "argsort", "top_k",
    "cumulative_sum", "cumulative_prod", "cumulative_max", "cumulative_min", "cumsum", "cumprod",
]  # fmt: skip


# ---------------------------------------------------------------- sort, argsort, top_k


def sort(x: Any, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Tensor:
    """A sorted copy of ``x`` along ``axis`` (array API ``sort``).

    The sort is always stable (``stable=False`` is accepted, as the standard allows).
    Ascending puts NaN last, as numpy; ``descending=True`` is the reverse order, NaN
    first (as ``jax.numpy.sort`` and ``torch.sort``: NaN is the largest value); equal
    elements keep their original order either way. Complex numbers sort
    lexicographically on (real, imag), as numpy; bool sorts False before True.

    :param x: a tensor of at least one dimension, of any dtype.
    :param axis: the axis to sort along (negative counts from the end).
    :param descending: largest first.
    :param stable: accepted for the array API; every numerix sort is stable.
    :raises ShapeError: for a 0-d tensor or an axis out of range.

    >>> import numerix as nx
    >>> nx.sort(nx.tensor([3.0, float("nan"), 1.0, 2.0])).tolist()
    [1.0, 2.0, 3.0, nan]
    >>> nx.sort(nx.tensor([3.0, float("nan"), 1.0, 2.0]), descending=True).tolist()
    [nan, 3.0, 2.0, 1.0]
    >>> nx.sort(nx.tensor(1.0))
    Traceback (most recent call last):
    ...
    numerix.errors.AxisError: sort: axis -1 is out of range for a 0-d tensor, which has no axes
    """
    t = as_tensor(x, "sort")
    ax = normalize_axis("sort", axis, t.ndim, t.shape)
    return sort_primitives.sort.bind(t, axis=ax, descending=bool(descending))


def argsort(x: Any, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Tensor:
    """The int64 indices that sort ``x`` along ``axis`` (array API ``argsort``).

    Stable, in :func:`sort`'s order: among equal elements the lower index comes first,
    ascending or descending (so ``descending=True`` is *not* ``flip(argsort(x))``).

    :param x: a tensor of at least one dimension, of any dtype.
    :param axis: the axis to sort along (negative counts from the end).
    :param descending: indices of the largest first (NaN first).
    :param stable: accepted for the array API; every numerix sort is stable.
    :raises ShapeError: for a 0-d tensor or an axis out of range.

    >>> import numerix as nx
    >>> nx.argsort(nx.tensor([2, 1, 2, 1])).tolist()
    [1, 3, 0, 2]
    >>> nx.argsort(nx.tensor([2, 1, 2, 1]), descending=True).tolist()
    [0, 2, 1, 3]
    >>> nx.argsort(nx.tensor([[1, 2]]), axis=2)
    Traceback (most recent call last):
    ...
    numerix.errors.AxisError: argsort: axis 2 is out of range for a tensor of shape (1, 2); valid axes are -2..1
    """
    t = as_tensor(x, "argsort")
    ax = normalize_axis("argsort", axis, t.ndim, t.shape)
    return sort_primitives.argsort.bind(t, axis=ax, descending=bool(descending))


def top_k(x: Any, k: int, *, axis: int = -1) -> tuple[Tensor, Tensor]:
    """The ``k`` largest elements along ``axis`` and their int64 indices (``Nx.top_k``,
    ``jax.lax.top_k``, ``torch.topk``), largest first.

    Ties put the lower index first; NaN counts as the largest value. The result is
    the first ``k`` entries of ``sort(x, axis=axis, descending=True)`` and of the
    matching :func:`argsort`. A backend may compute it natively (block ``top_k``).

    :param x: a tensor of at least one dimension, of any dtype.
    :param k: how many to take, ``0 <= k <= x.shape[axis]``.
    :param axis: the axis to select along (negative counts from the end).
    :returns: ``(values, indices)``, both of ``x``'s shape with ``k`` on ``axis``.
    :raises ShapeError: for ``k`` out of range, a 0-d tensor or an axis out of range.

    >>> import numerix as nx
    >>> values, indices = nx.top_k(nx.tensor([1, 5, 3, 5]), 2)
    >>> values.tolist(), indices.tolist()
    ([5, 5], [1, 3])
    >>> nx.top_k(nx.tensor([1, 2]), 3)
    Traceback (most recent call last):
    ...
    numerix.errors.ShapeError: top_k: k=3 is out of range for axis 0 of s64[2] binary(cpu); k must be in 0..2
    """
    t = as_tensor(x, "top_k")
    ax = normalize_axis("top_k", axis, t.ndim, t.shape)
    try:
        if isinstance(k, bool):
            raise TypeError
        kk = operator.index(k)
    except TypeError:
        raise ShapeError(f"top_k: k must be an int, got {k!r}") from None
    n = t.shape[ax]
    if not 0 <= kk <= n:
        raise ShapeError(
            f"top_k: k={kk} is out of range for axis {ax} of {t.describe()}; k must be in 0..{n}"
        )
    return run_block(
        sort_primitives.top_k,
        block_out(sort_primitives.top_k, t, k=kk, axis=ax),
        _top_k_fallback,
        t,
        k=kk,
        axis=ax,
    )


def _top_k_fallback(t: Tensor, *, k: int, axis: int) -> tuple[Tensor, Tensor]:
    idx = sort_primitives.argsort.bind(t, axis=axis, descending=True)
    if k != t.shape[axis]:
        stop = t.shape[:axis] + (k,) + t.shape[axis + 1 :]
        idx = shape_primitives.slice.bind(
            idx, start=(0,) * t.ndim, stop=stop, strides=(1,) * t.ndim
        )
    # take_along_axis as one gather: full coordinates, iota on every other axis
    coords = [
        reshape(idx if j == axis else iota(idx.shape, axis=j, backend=t.backend), idx.shape + (1,))
        for j in range(t.ndim)
    ]
    indices = coords[0] if t.ndim == 1 else concatenate(coords, axis=-1)
    values = indexing_primitives.gather.bind(t, indices, axes=tuple(range(t.ndim)))
    return values, idx


# ---------------------------------------------------------------- cumulative


def _cumulative(
    kind: str,
    x: Any,
    axis: int | None,
    reverse: bool,
    dtype: Any,
    include_initial: bool,
    *,
    flatten: bool = False,
    op: str | None = None,
) -> Tensor:
    op = op or f"cumulative_{kind}"
    t = as_tensor(x, op)
    if axis is None:
        if flatten:
            t = reshape(t, (-1,))
        elif t.ndim != 1:
            raise ShapeError(
                f"{op}: axis=None needs a 1-d tensor, got {t.describe()}; give axis= (or "
                f"reshape to 1-d first)"
            )
        axis = 0
    ax = normalize_axis(op, axis, t.ndim, t.shape)
    try:
        if kind in sort_primitives.ACCUMULATING:
            odt = sort_primitives.accumulation_dtype(t.dtype)
        else:
            odt = sort_primitives.cumulative_dtype_rule(
                t.dtype, kind=kind, axis=ax, reverse=reverse
            )
    except DTypeError as e:
        raise DTypeError(
            f"{str(e).replace(f'cumulative_{kind}', op, 1)}; got {t.describe()}"
        ) from None
    if dtype is not None:
        odt = dtypes.as_dtype(dtype, op)
        if odt.kind == "b":
            raise DTypeError(f"{op}: dtype must be numeric, got bool (for {t.describe()})")
        if t.dtype.kind == "c" and odt.kind != "c":
            raise DTypeError(
                f"{op}: accumulating complex {t.describe()} in {odt} would drop the imaginary "
                f"part; take numerix.real(x) first"
            )
    t = cast(t, odt)
    r = sort_primitives.cumulative.bind(t, kind=kind, axis=ax, reverse=bool(reverse))
    if not include_initial:
        return r
    one = t.shape[:ax] + (1,) + t.shape[ax + 1 :]
    ident = full(one, 0 if kind == "sum" else 1, odt, backend=t.backend)
    return concatenate([r, ident] if reverse else [ident, r], axis=ax)


def cumulative_sum(
    x: Any,
    /,
    *,
    axis: int | None = None,
    dtype: Any = None,
    include_initial: bool = False,
    reverse: bool = False,
) -> Tensor:
    """The running sum along ``axis`` (array API ``cumulative_sum``, plus ``reverse``
    as ``jax.lax.cumsum``).

    Integers accumulate as :func:`numerix.sum` does (bool and signed in int64,
    unsigned in uint64) unless ``dtype`` is given; integers wrap around.

    :param x: a tensor of at least one dimension.
    :param axis: the axis to accumulate along; may be None only for a 1-d tensor.
    :param dtype: the dtype to accumulate and return in (numeric).
    :param include_initial: prepend the identity 0, so the axis grows by one
        (with ``reverse``, the identity is appended: ``out[i] = sum(x[i:])``).
    :param reverse: accumulate from the end of the axis.
    :raises ShapeError: for axis=None on a tensor that is not 1-d.

    >>> import numerix as nx
    >>> nx.cumulative_sum(nx.tensor([1, 2, 3]), include_initial=True).tolist()
    [0, 1, 3, 6]
    >>> nx.cumulative_sum(nx.tensor([1, 2, 3]), reverse=True).tolist()
    [6, 5, 3]
    >>> nx.cumulative_sum(nx.tensor([[1, 2]]))
    Traceback (most recent call last):
    ...
    numerix.errors.ShapeError: cumulative_sum: axis=None needs a 1-d tensor, got s64[1][2] binary(cpu); give axis= (or reshape to 1-d first)
    """
    return _cumulative("sum", x, axis, reverse, dtype, include_initial)


def cumulative_prod(
    x: Any,
    /,
    *,
    axis: int | None = None,
    dtype: Any = None,
    include_initial: bool = False,
    reverse: bool = False,
) -> Tensor:
    """The running product along ``axis`` (array API ``cumulative_prod``, plus ``reverse``).

    Dtypes and parameters as :func:`cumulative_sum`; the identity of
    ``include_initial`` is 1.

    >>> import numerix as nx
    >>> nx.cumulative_prod(nx.tensor([1, 2, 3, 4])).tolist()
    [1, 2, 6, 24]
    >>> nx.cumulative_prod(nx.tensor([1, 2]), dtype=nx.bool_)
    Traceback (most recent call last):
    ...
    numerix.errors.DTypeError: cumulative_prod: dtype must be numeric, got bool (for s64[2] binary(cpu))
    """
    return _cumulative("prod", x, axis, reverse, dtype, include_initial)


def cumulative_max(x: Any, /, *, axis: int | None = None, reverse: bool = False) -> Tensor:
    """The running maximum along ``axis`` (``jax.lax.cummax``, ``Nx.cumulative_max``).

    Keeps ``x``'s dtype; NaN propagates to every later element; complex is refused.

    :param x: a tensor of at least one dimension, real or bool.
    :param axis: the axis to accumulate along; may be None only for a 1-d tensor.
    :param reverse: accumulate from the end of the axis.
    :raises DTypeError: for complex input.

    >>> import numerix as nx
    >>> nx.cumulative_max(nx.tensor([1, 3, 2, 5])).tolist()
    [1, 3, 3, 5]
    >>> nx.cumulative_max(nx.tensor([1j]))
    Traceback (most recent call last):
    ...
    numerix.errors.DTypeError: cumulative_max: complex numbers have no order; got c64[1] binary(cpu)
    """
    return _cumulative("max", x, axis, reverse, None, False)


def cumulative_min(x: Any, /, *, axis: int | None = None, reverse: bool = False) -> Tensor:
    """The running minimum along ``axis`` (``jax.lax.cummin``, ``Nx.cumulative_min``).

    Keeps ``x``'s dtype; NaN propagates to every later element; complex is refused.

    >>> import numerix as nx
    >>> nx.cumulative_min(nx.tensor([3, 1, 2]), reverse=True).tolist()
    [1, 1, 2]
    >>> nx.cumulative_min(nx.tensor([1j]))
    Traceback (most recent call last):
    ...
    numerix.errors.DTypeError: cumulative_min: complex numbers have no order; got c64[1] binary(cpu)
    """
    return _cumulative("min", x, axis, reverse, None, False)


def cumsum(x: Any, /, axis: int | None = None, dtype: Any = None) -> Tensor:
    """numpy's ``cumsum``: as :func:`cumulative_sum`, but ``axis=None`` sums the
    flattened tensor (so a 0-d tensor gives shape ``(1,)``).

    >>> import numerix as nx
    >>> nx.cumsum(nx.tensor([[1, 2], [3, 4]])).tolist()
    [1, 3, 6, 10]
    >>> nx.cumsum(nx.tensor([1, 2]), axis=1)
    Traceback (most recent call last):
    ...
    numerix.errors.AxisError: cumsum: axis 1 is out of range for a tensor of shape (2,); valid axes are -1..0
    """
    return _cumulative("sum", x, axis, False, dtype, False, flatten=True, op="cumsum")


def cumprod(x: Any, /, axis: int | None = None, dtype: Any = None) -> Tensor:
    """numpy's ``cumprod``: as :func:`cumulative_prod`, but ``axis=None`` multiplies the
    flattened tensor.

    >>> import numerix as nx
    >>> nx.cumprod(nx.tensor([[1, 2], [3, 4]]), axis=1).tolist()
    [[1, 2], [3, 12]]
    >>> nx.cumprod(nx.tensor([1j]), dtype=nx.float32)
    Traceback (most recent call last):
    ...
    numerix.errors.DTypeError: cumprod: accumulating complex c64[1] binary(cpu) in float32 would drop the imaginary part; take numerix.real(x) first
    """
    return _cumulative("prod", x, axis, False, dtype, False, flatten=True, op="cumprod")
