"""``einsum``: Einstein summation, written once from the core's ops (diagonal, sum,
transpose, broadcast_to and dot_general), so it runs on every backend and under jit."""

from __future__ import annotations

from typing import Any

from numerix import dtypes
from numerix._tensor import Tensor
from numerix.errors import ArgumentError, DTypeError, ShapeError
from numerix.ops._core import cast, unify
from numerix.ops.composites import diagonal
from numerix.ops.linalg import _dot_general
from numerix.ops.reduction import sum as _sum
from numerix.ops.shape import broadcast_to, moveaxis, transpose

__all__ = ["einsum"]

_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")

# a label: a letter, or ("...", k) for the k-th axis of the broadcast ellipsis from the right
Label = Any


def einsum(subscripts: str, /, *operands: Any) -> Tensor:
    """Einstein summation over the operands' axes, as ``numpy.einsum``.

    ``subscripts`` names each operand's axes with letters, separated by commas, and the
    output's after ``->`` (without it: the letters used once, in alphabetical order).
    A letter repeated in one operand takes the diagonal; letters absent from the
    output are summed; ``...`` stands for the remaining axes, which broadcast as numpy
    broadcasts. The result has the operands' promoted dtype (integers stay their
    width, as in numpy). Follows numpy's ``einsum`` (Nx has no einsum); the work is
    done by ``dot_general`` products contracted left to right.

    >>> import numerix as nx
    >>> a = nx.tensor([[1, 2], [3, 4]])
    >>> nx.einsum("ij,jk->ik", a, a).tolist()
    [[7, 10], [15, 22]]
    >>> nx.einsum("ii", a).tolist()
    5
    >>> nx.einsum("ij,jk", a)
    Traceback (most recent call last):
    numerix.errors.ArgumentError: einsum: 'ij,jk' names 2 operands, got 1; ...
    """
    if not isinstance(subscripts, str):
        raise ArgumentError(
            f"einsum: subscripts must be a string such as 'ij,jk->ik', got {subscripts!r}"
        )
    terms, out_term = _parse(subscripts, len(operands))
    _, xs = unify("einsum", *operands)
    dtype = xs[0].dtype
    for x in xs[1:]:
        dtype = dtypes.promote_types(dtype, x.dtype, "einsum")
    xs = [cast(x, dtype) for x in xs]
    labelled = [_labels(subscripts, t, x, i) for i, (t, x) in enumerate(zip(terms, xs))]
    ell = max((sum(1 for lab in labs if isinstance(lab, tuple)) for labs in labelled), default=0)
    if out_term is None:
        once = sorted(c for c in set("".join(terms)) - {"."} if "".join(terms).count(c) == 1)
        out: list[Label] = [("...", k) for k in reversed(range(ell))] + once
    else:
        out = _output(subscripts, out_term, ell)
    sizes = _sizes(subscripts, xs, labelled)
    ops = [_diagonals(x, labs) for x, labs in zip(xs, labelled)]
    # every size-1 axis that broadcasts against a larger one is broadcast first
    ops = [_broadcast(x, labs, sizes) for x, labs in ops]
    x, labs = ops[0]
    x, labs = _sum_unused(x, labs, out, [o[1] for o in ops[1:]])
    for i, (y, ylabs) in enumerate(ops[1:], start=1):
        later = [o[1] for o in ops[i + 1 :]]
        y, ylabs = _sum_unused(y, ylabs, out + labs, later)
        x, labs = _contract(x, labs, y, ylabs, out, later)
    # what is left: labels not in the output are summed, the rest put in order
    x, labs = _sum_unused(x, labs, out, [])
    perm = [labs.index(lab) for lab in out]
    if perm != list(range(len(perm))):
        x = transpose(x, perm)
    return x


def _parse(subscripts: str, n: int) -> tuple[list[str], str | None]:
    s = subscripts.replace(" ", "")
    if s.count("->") > 1:
        raise ArgumentError(f"einsum: {subscripts!r} has more than one '->'")
    ins, arrow, out = s.partition("->")
    terms = ins.split(",")
    if len(terms) != n:
        raise ArgumentError(
            f"einsum: {subscripts!r} names {len(terms)} operand{'s' * (len(terms) != 1)}, "
            f"got {n}; give one comma-separated term per operand"
        )
    for term in [*terms, out]:
        bad = set(term.replace("...", "")) - _LETTERS
        if bad or term.count("...") > 1:
            what = f"character {sorted(bad)[0]!r}" if bad else "'...' twice in one term"
            raise ArgumentError(
                f"einsum: {subscripts!r} has {what}; terms are letters (a-z, A-Z) and at "
                f"most one '...'"
            )
    return terms, (out if arrow else None)


def _labels(subscripts: str, term: str, x: Tensor, i: int) -> list[Label]:
    head, dots, tail = term.partition("...")
    named = len(head) + len(tail)
    if (x.ndim != named) if not dots else (x.ndim < named):
        raise ShapeError(
            f"einsum: term {term!r} of {subscripts!r} names {named} axes"
            f"{' and ...' if dots else ''}, but operand {i} is {x.describe()}"
        )
    k = x.ndim - named
    return [*head, *(("...", j) for j in reversed(range(k))), *tail]


def _output(subscripts: str, term: str, ell: int) -> list[Label]:
    inputs = subscripts.partition("->")[0]
    for c in term.replace("...", ""):
        if term.count(c) > 1:
            raise ArgumentError(f"einsum: output {term!r} of {subscripts!r} repeats {c!r}")
        if c not in inputs:
            raise ArgumentError(
                f"einsum: output {term!r} of {subscripts!r} has {c!r}, which no operand names"
            )
    head, dots, tail = term.partition("...")
    if not dots and ell:
        # numpy sums the ellipsis axes an explicit output leaves out only when they
        # are absent; they must be named
        raise ArgumentError(
            f"einsum: {subscripts!r}: the operands' '...' axes need a '...' in the output"
        )
    return [*head, *(("...", j) for j in reversed(range(ell))), *tail]


def _sizes(subscripts: str, xs: list[Tensor], labelled: list[list[Label]]) -> dict[Label, int]:
    sizes: dict[Label, int] = {}
    for x, labs in zip(xs, labelled):
        for lab, n in zip(labs, x.shape):
            m = sizes.get(lab)
            if m is None or m == 1:
                sizes[lab] = n
            elif n not in (1, m):
                name = "..." if isinstance(lab, tuple) else repr(lab)
                raise ShapeError(
                    f"einsum: {subscripts!r}: axis {name} has size {m} in one operand and "
                    f"{n} in {x.describe()}; sizes must agree (or be 1 to broadcast)"
                )
    return sizes


def _diagonals(x: Tensor, labs: list[Label]) -> tuple[Tensor, list[Label]]:
    """A label repeated in one operand takes the diagonal of those axes."""
    labs = list(labs)
    while True:
        dup = next((lab for lab in labs if labs.count(lab) > 1), None)
        if dup is None:
            return x, labs
        i = labs.index(dup)
        j = labs.index(dup, i + 1)  # of one size: _sizes checked
        x = diagonal(moveaxis(x, (i, j), (-2, -1)))
        labs = [lab for k, lab in enumerate(labs) if k not in (i, j)] + [dup]


def _broadcast(x: Tensor, labs: list[Label], sizes: dict[Label, int]) -> tuple[Tensor, list[Label]]:
    shape = tuple(sizes[lab] for lab in labs)
    return (x if shape == x.shape else broadcast_to(x, shape)), labs


def _sum_unused(
    x: Tensor, labs: list[Label], keep: list[Label], later: list[list[Label]]
) -> tuple[Tensor, list[Label]]:
    """Sum the axes no other operand and no output needs."""
    axes = [i for i, lab in enumerate(labs) if lab not in keep and not any(lab in o for o in later)]
    if not axes:
        return x, labs
    # integers sum in the default width and wrap back to theirs, as numpy's einsum wraps
    s = cast(_sum(x, axis=tuple(axes)), x.dtype)
    return s, [lab for i, lab in enumerate(labs) if i not in axes]


def _contract(
    x: Tensor,
    xl: list[Label],
    y: Tensor,
    yl: list[Label],
    out: list[Label],
    later: list[list[Label]],
) -> tuple[Tensor, list[Label]]:
    shared = [lab for lab in xl if lab in yl]
    needed = set(out).union(*later)
    batch = [lab for lab in shared if lab in needed]
    contract = [lab for lab in shared if lab not in needed]
    if x.dtype.kind == "b":
        raise DTypeError(
            f"einsum: bool operands have no product ({x.describe()}, {y.describe()}); cast "
            f"them with astype(numerix.int64) or astype(numerix.float32)"
        )
    r = _dot_general(
        "einsum",
        x,
        y,
        ([xl.index(lab) for lab in contract], [yl.index(lab) for lab in contract]),
        ([xl.index(lab) for lab in batch], [yl.index(lab) for lab in batch]),
    )
    labs = (
        batch + [lab for lab in xl if lab not in shared] + [lab for lab in yl if lab not in shared]
    )
    return r, labs
