"""The array API's set functions: ``unique_all``, ``unique_counts``, ``unique_inverse``,
``unique_values`` and ``isin``, composed of sort, comparisons and mask indexing.

The ``unique_*`` outputs' shapes depend on the values (how many are distinct): they run
eagerly, and a traced input is a :class:`~numerix.errors.TracingError`. As the standard
says, NaNs are distinct from each other (each one is a value of its own), and ``-0.0``
equals ``0.0``. The names are exported by the ``composites`` family.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from numerix import dtypes
from numerix._tensor import Tensor
from numerix.errors import TracingError
from numerix.ops._core import as_tensor, cast, is_concrete, unify
from numerix.ops.creation import full, iota
from numerix.ops.elementwise import equal, logical_not, not_equal, subtract
from numerix.ops.indexing import take
from numerix.ops.reduction import any as _any
from numerix.ops.shape import concatenate, expand_dims, reshape
from numerix.ops.sort import argsort, cumulative_sum


class UniqueAllResult(NamedTuple):
    """:func:`unique_all`'s result."""

    values: Tensor
    indices: Tensor
    inverse_indices: Tensor
    counts: Tensor


class UniqueCountsResult(NamedTuple):
    """:func:`unique_counts`'s result."""

    values: Tensor
    counts: Tensor


class UniqueInverseResult(NamedTuple):
    """:func:`unique_inverse`'s result."""

    values: Tensor
    inverse_indices: Tensor


def _groups(x: Any, op: str) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    """Of ``x`` flattened: the distinct values in ascending order (complex
    lexicographically, as :func:`numerix.sort`), the index of each one's
    first occurrence, each element's group (the index of its value in the first), the
    count of each group, all int64, and ``x`` as a tensor."""
    t = as_tensor(x, op)
    if not is_concrete(t):
        raise TracingError(
            f"{op}: {t.describe()} is traced inside numerix.jit/defn, and the output's shape "
            f"depends on its values (how many are distinct); call {op} outside the trace"
        )
    b = t.backend
    n = t.size
    flat = reshape(t, (n,))
    i64 = dtypes.int64
    if n == 0:
        none = full((0,), 0, dtype=i64, backend=b)
        return flat, none, none, none, t
    order = argsort(flat)  # stable: the first of equal values is its first occurrence
    s = take(flat, order)
    # NaN != NaN: each NaN starts a group of its own, as the standard says
    first = concatenate([full((1,), True, backend=b), not_equal(s[1:], s[:-1])])
    starts = iota((n,), backend=b)[first]
    values = s[first]
    indices = take(order, starts)
    group = subtract(cumulative_sum(cast(first, i64)), 1)  # in sorted order
    inverse = take(group, argsort(order))
    ends = concatenate([starts[1:], full((1,), n, dtype=i64, backend=b)])
    return values, indices, inverse, subtract(ends, starts), t


def unique_all(x: Any, /) -> UniqueAllResult:
    """The distinct values of ``x`` (flattened, ascending), the index of each one's first
    occurrence, the index into them of each element of ``x`` (in ``x``'s shape) and how
    often each occurs (array API ``unique_all``; eager only).

    >>> import numerix as nx
    >>> r = nx.unique_all(nx.tensor([3, 1, 3, 2]))
    >>> r.values.tolist(), r.indices.tolist(), r.inverse_indices.tolist(), r.counts.tolist()
    ([1, 2, 3], [1, 3, 0], [2, 0, 2, 1], [1, 1, 2])
    """
    values, indices, inverse, counts, t = _groups(x, "unique_all")
    return UniqueAllResult(values, indices, reshape(inverse, t.shape), counts)


def unique_counts(x: Any, /) -> UniqueCountsResult:
    """The distinct values of ``x`` (flattened, ascending) and how often each occurs
    (array API ``unique_counts``; eager only).

    >>> import numerix as nx
    >>> r = nx.unique_counts(nx.tensor([3, 1, 3]))
    >>> r.values.tolist(), r.counts.tolist()
    ([1, 3], [1, 2])
    """
    values, _, _, counts, _ = _groups(x, "unique_counts")
    return UniqueCountsResult(values, counts)


def unique_inverse(x: Any, /) -> UniqueInverseResult:
    """The distinct values of ``x`` (flattened, ascending) and the index into them of each
    element of ``x``, in ``x``'s shape (array API ``unique_inverse``; eager only).

    >>> import numerix as nx
    >>> r = nx.unique_inverse(nx.tensor([[3, 1], [3, 2]]))
    >>> r.values.tolist(), r.inverse_indices.tolist()
    ([1, 2, 3], [[2, 0], [2, 1]])
    """
    values, _, inverse, _, t = _groups(x, "unique_inverse")
    return UniqueInverseResult(values, reshape(inverse, t.shape))


def unique_values(x: Any, /) -> Tensor:
    """The distinct values of ``x`` (flattened, ascending) (array API ``unique_values``;
    eager only).

    >>> import numerix as nx
    >>> nx.unique_values(nx.tensor([3, 1, 3])).tolist()
    [1, 3]
    """
    return _groups(x, "unique_values")[0]


def isin(x1: Any, x2: Any, /, *, invert: bool = False) -> Tensor:
    """Whether each element of ``x1`` equals some element of ``x2`` -> bool of ``x1``'s
    shape (array API / numpy ``isin``; ``invert=True`` negates it). NaN is in nothing.
    Works traced: it compares every pair, so it costs ``x1.size * x2.size``.

    >>> import numerix as nx
    >>> nx.isin(nx.tensor([1, 2, 3]), nx.tensor([3, 1])).tolist()
    [True, False, True]
    """
    _, (a, b) = unify("isin", x1, x2)
    found = _any(equal(expand_dims(a, -1), reshape(b, (b.size,))), axis=-1)
    return logical_not(found) if invert else found
